//===- ReplicasTest.cpp - replicated graphs, interpreted and compiled -----===//
//
// Each case runs three ways: on the interpreter's dataflow executor, as a
// host program stepped through by the runtime, and as a host program
// compiled through LLVM. The kernels are the interpreter's in all three:
// what differs is the orchestration (threads, lanes, channels, merging the
// replicas' variables).
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/InitAll.h"
#include "cleave/Executor/HostProgram.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Runtime/HostProgramCompiler.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

#include <chrono>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

/// Two replicas increment a mirrored variable on the device; the host
/// prints each replica's input after the increment (PrintV2 fails on a
/// vector).
constexpr const char *kStep = R"pb(
  node { name: "v" op: "VarHandleOp"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { } } }
         attr { key: "shared_name" value { s: "v" } } }
  node { name: "zero" op: "Const"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }
  node { name: "init" op: "AssignVariableOp" input: "v" input: "zero"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "x0" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "x1" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "in" op: "TPUReplicatedInput" input: "x0" input: "x1"
         attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "m" op: "TPUReplicateMetadata"
         attr { key: "_tpu_replicate" value { s: "c" } }
         attr { key: "num_replicas" value { i: 2 } } }
  node { name: "one" op: "Const"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "read" op: "ReadVariableOp" input: "v"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "next" op: "AddV2" input: "read" input: "one"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "assign" op: "AssignVariableOp" input: "v" input: "next"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "sq" op: "Square" input: "in"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "fmt" op: "AsString" input: "sq"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } }
         attr { key: "_xla_outside_compilation" value { s: "0" } } }
  node { name: "print" op: "PrintV2" input: "fmt" input: "^assign"
         attr { key: "_tpu_replicate" value { s: "c" } }
         attr { key: "_xla_outside_compilation" value { s: "0" } } }
  node { name: "done" op: "Identity" input: "next" input: "^print"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "_tpu_replicate" value { s: "c" } } }
  node { name: "out" op: "TPUReplicatedOutput" input: "done"
         attr { key: "num_replicas" value { i: 2 } }
         attr { key: "T" value { type: DT_FLOAT } } }
)pb";

enum class Orchestration { Executor, Stepped, Compiled };

const char *getName(Orchestration orchestration) {
  switch (orchestration) {
  case Orchestration::Executor:
    return "Executor";
  case Orchestration::Stepped:
    return "Stepped";
  case Orchestration::Compiled:
    return "Compiled";
  }
  return "";
}

/// Names the orchestration in test listings (ctest's "GetParam() = ...").
void PrintTo(Orchestration orchestration, std::ostream *os) {
  *os << getName(orchestration);
}

class ReplicasTest : public ::testing::TestWithParam<Orchestration> {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    tensorflow::GraphDef graph;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kStep, &graph));
    module = importGraphDef(graph, &ctx);
    ASSERT_TRUE(module);
    PassManager pm(&ctx);
    pm.addPass(graph::createGraphClusterFormationPass());
    pm.addPass(graph::createGraphExtractOutsideCompilationPass());
    ASSERT_TRUE(succeeded(pm.run(*module)));
  }

  /// An interpreter that runs the module the way the test's parameter
  /// says.
  std::unique_ptr<Executor> makeInterpreter() {
    auto interpreter = std::make_unique<Executor>(*module);
    interpreter->setHostPrograms(GetParam() != Orchestration::Executor,
                                 GetParam() == Orchestration::Compiled
                                     ? &compiler
                                     : nullptr);
    return interpreter;
  }

  /// Fails unless the last run ran as this test's parameter says.
  void expectOrchestration(Executor &interpreter) {
    std::string reason;
    const HostProgram *program = interpreter.getLastHostProgram(reason);
    EXPECT_EQ(program != nullptr, GetParam() != Orchestration::Executor);
    if (GetParam() == Orchestration::Compiled)
      EXPECT_EQ(reason, "");
  }

  static Tensor scalar(float value) {
    Tensor t(kFloat, {});
    t.data<float>()[0] = value;
    return t;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  runtime::LLVMHostProgramCompiler compiler{&ctx};
};

TEST_P(ReplicasTest, EachReplicaRunsAndReadsItsOwnInput) {
  std::unique_ptr<Executor> owner = makeInterpreter();
  Executor &interpreter = *owner;
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  auto results = interpreter.run({{"x0", scalar(2)}, {"x1", scalar(3)}},
                                 {"out:0", "out:1"}, {});
  ASSERT_TRUE(succeeded(results));
  expectOrchestration(interpreter);
  EXPECT_EQ((*results)[0].getAsDouble(0), 1);
  EXPECT_EQ((*results)[1].getAsDouble(0), 1);
  EXPECT_EQ(interpreter.getState().variables["v"].getAsDouble(0), 1);
}

TEST_P(ReplicasTest, AFailedStepLeavesTheVariablesOfTheLastGoodOne) {
  std::vector<std::string> errors;
  ScopedDiagnosticHandler collect(&ctx, [&](Diagnostic &d) {
    errors.push_back(d.str());
    return success();
  });
  std::unique_ptr<Executor> owner = makeInterpreter();
  Executor &interpreter = *owner;
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  ASSERT_TRUE(succeeded(interpreter.run(
      {{"x0", scalar(2)}, {"x1", scalar(3)}}, {"out:0"}, {})));
  // Replica 1 increments, then its host print fails on a vector.
  Tensor vector(kFloat, {2});
  auto failedRun =
      interpreter.run({{"x0", scalar(2)}, {"x1", vector}}, {"out:0"}, {});
  EXPECT_TRUE(failed(failedRun));
  expectOrchestration(interpreter);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "Node 'print': Input is expected to be scalar, but "
                       "got [2]");
  EXPECT_EQ(errors[1], "replica 1 of cluster 'c' failed (see the error "
                       "above); the other replicas were cancelled");
  EXPECT_EQ(interpreter.getState().variables["v"].getAsDouble(0), 1);
  // The next step runs from there.
  auto results = interpreter.run({{"x0", scalar(2)}, {"x1", scalar(3)}},
                                 {"out:1"}, {});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0].getAsDouble(0), 2);
}

TEST_P(ReplicasTest, AKnownDeadlockFailsAtOnceNamingTheChannel) {
  std::vector<std::string> errors;
  ScopedDiagnosticHandler collect(&ctx, [&](Diagnostic &d) {
    errors.push_back(d.str());
    return success();
  });
  // The host never answers: its receive reads another key.
  module->walk([](graph::NodeOp node) {
    if (node.getOpType() == "_XlaRecvAtHostV2") {
      NamedAttrList attrs(node.getAttrs());
      attrs.set("key", StringAttr::get(node.getContext(), "elsewhere"));
      node.setAttrsAttr(attrs.getDictionary(node.getContext()));
    }
  });
  std::unique_ptr<Executor> owner = makeInterpreter();
  Executor &interpreter = *owner;
  // Nothing of the run sends on 'elsewhere': the receive fails before the
  // timeout could end it.
  interpreter.setChannelTimeout(60);
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failed(interpreter.run({{"x0", scalar(2)}, {"x1", scalar(3)}},
                                     {"out:0"}, {})));
  // Far within the timeout, with room for a loaded machine.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count(),
            5.0);
  expectOrchestration(interpreter);
  // The host's receive fails; the device, waiting on the host's answer
  // (which has a sender), is cancelled.
  ASSERT_GE(errors.size(), 2u);
  EXPECT_NE(errors[0].find("nothing can arrive on channel 'elsewhere' for "
                           "replica "),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find(": no node of this run sends on it, so the "
                           "receive would wait forever"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors.back().find(" of cluster 'c' failed"), std::string::npos)
      << errors.back();
}

/// The step's host program: the replicate region in the graph's sequence;
/// in each replica, the device cluster and a lane for the host nodes that
/// wait on it (started before the cluster, joined after); one compiled
/// function per sequence.
TEST_P(ReplicasTest, TheStepsHostProgram) {
  std::unique_ptr<Executor> owner = makeInterpreter();
  Executor &interpreter = *owner;
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  ASSERT_TRUE(succeeded(interpreter.run(
      {{"x0", scalar(2)}, {"x1", scalar(3)}}, {"out:0", "out:1"}, {})));
  std::string reason;
  const HostProgram *program = interpreter.getLastHostProgram(reason);
  if (GetParam() == Orchestration::Executor) {
    EXPECT_FALSE(program);
    EXPECT_EQ(reason, "host programs are off");
    return;
  }
  ASSERT_TRUE(program);
  EXPECT_TRUE(program->threadedLanes);
  ASSERT_EQ(program->feedSlots.size(), 2u);
  // The graph: the variable's handle, then the replicate region; its
  // results are the fetches.
  SCOPED_TRACE(program->describe());
  const HostSequence &graph = program->sequences[program->scopes[0].main];
  ASSERT_EQ(graph.steps.size(), 2u);
  EXPECT_EQ(cast<graph::NodeOp>(graph.steps[0].unit).getName(), "v");
  EXPECT_EQ(graph.steps[1].kind, HostStep::Kind::Replicate);
  EXPECT_EQ(program->scopes[0].results.size(), 2u);
  // A replica: the lane, the cluster, the join.
  const HostScope &replica = program->scopes[graph.steps[1].target];
  // Each replica reads its own input, x0 or x1.
  bool perReplicaImport = llvm::any_of(
      replica.imports,
      [](const HostScope::Import &i) { return i.outer.size() == 2; });
  EXPECT_TRUE(perReplicaImport);
  std::vector<HostStep::Kind> kinds;
  int32_t lane = -1;
  for (const HostStep &step : program->sequences[replica.main].steps) {
    kinds.push_back(step.kind);
    if (step.kind == HostStep::Kind::StartLane)
      lane = step.target;
  }
  EXPECT_EQ(kinds.back(), HostStep::Kind::JoinLanes);
  auto position = [&](HostStep::Kind kind) {
    return std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
  };
  EXPECT_LT(position(HostStep::Kind::StartLane),
            position(HostStep::Kind::Cluster));
  ASSERT_GE(lane, 0);
  std::vector<std::string> laneNodes;
  for (const HostStep &step : program->sequences[lane].steps)
    laneNodes.push_back(
        cast<graph::NodeOp>(step.unit).getName().str());
  // The receive first, then the host nodes, then the send back.
  ASSERT_FALSE(laneNodes.empty());
  EXPECT_NE(laneNodes.front().find("recv"), std::string::npos)
      << laneNodes.front();
  EXPECT_TRUE(llvm::is_contained(laneNodes, "fmt"));
  EXPECT_TRUE(llvm::is_contained(laneNodes, "print"));

  // The LLVM code: a function per sequence, a call per step.
  OwningOpRef<ModuleOp> code = runtime::buildHostProgramModule(*program, &ctx);
  for (auto [i, sequence] : llvm::enumerate(program->sequences)) {
    auto func = code->lookupSymbol<LLVM::LLVMFuncOp>(
        runtime::getHostSequenceName(i));
    ASSERT_TRUE(func);
    size_t calls = 0;
    func.walk([&](LLVM::CallOp) { ++calls; });
    EXPECT_EQ(calls, sequence.steps.size());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Orchestrations, ReplicasTest,
    ::testing::Values(Orchestration::Executor, Orchestration::Stepped,
                      Orchestration::Compiled),
    [](const ::testing::TestParamInfo<Orchestration> &info) {
      return getName(info.param);
    });

} // namespace
