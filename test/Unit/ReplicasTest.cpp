//===- ReplicasTest.cpp - replicated graphs in the reference interpreter --===//

#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/InitAll.h"
#include "cleave/Interpreter/Interpreter.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

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

class ReplicasTest : public ::testing::Test {
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

  static Tensor scalar(float value) {
    Tensor t(kFloat, {});
    t.data<float>()[0] = value;
    return t;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ReplicasTest, EachReplicaRunsAndReadsItsOwnInput) {
  Interpreter interpreter(*module);
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  auto results = interpreter.run({{"x0", scalar(2)}, {"x1", scalar(3)}},
                                 {"out:0", "out:1"}, {});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0].getAsDouble(0), 1);
  EXPECT_EQ((*results)[1].getAsDouble(0), 1);
  EXPECT_EQ(interpreter.getState().variables["v"].getAsDouble(0), 1);
}

TEST_F(ReplicasTest, AFailedStepLeavesTheVariablesOfTheLastGoodOne) {
  std::vector<std::string> errors;
  ScopedDiagnosticHandler collect(&ctx, [&](Diagnostic &d) {
    errors.push_back(d.str());
    return success();
  });
  Interpreter interpreter(*module);
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  ASSERT_TRUE(succeeded(interpreter.run(
      {{"x0", scalar(2)}, {"x1", scalar(3)}}, {"out:0"}, {})));
  // Replica 1 increments, then its host print fails on a vector.
  Tensor vector(kFloat, {2});
  auto failedRun =
      interpreter.run({{"x0", scalar(2)}, {"x1", vector}}, {"out:0"}, {});
  EXPECT_TRUE(failed(failedRun));
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

TEST_F(ReplicasTest, ADeadlockTimesOutNamingTheChannel) {
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
  Interpreter interpreter(*module);
  interpreter.setChannelTimeout(0.2);
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  EXPECT_TRUE(failed(interpreter.run({{"x0", scalar(2)}, {"x1", scalar(3)}},
                                     {"out:0"}, {})));
  // Whichever side waits first times out: the host on 'elsewhere', or the
  // device on its answer.
  ASSERT_GE(errors.size(), 2u);
  EXPECT_NE(errors[0].find("nothing arrived on channel '"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("' for replica "), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("within 0.2 s (see --channel-timeout): the other "
                           "side never sent it"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors.back().find(" of cluster 'c' failed"), std::string::npos)
      << errors.back();
}

} // namespace
