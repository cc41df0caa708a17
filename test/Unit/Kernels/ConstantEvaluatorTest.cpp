//===- ConstantEvaluatorTest.cpp - compile-time evaluation of nodes -------===//
//
// The constant evaluator must compute what the executor computes for the
// nodes it accepts, functions included, and refuse the nodes whose
// functions hold state or recurse.
//
//===----------------------------------------------------------------------===//

#include "cleave/Kernels/ConstantEvaluator.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/MLIRContext.h"

#include "google/protobuf/text_format.h"
#include <gtest/gtest.h>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

constexpr const char *kGraph = R"pb(
  library {
    function {
      signature { name: "double"
                  input_arg { name: "x" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "add" op: "AddV2" input: "x" input: "x"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "y" value: "add:z:0" }
    }
    function {
      signature { name: "below_ten"
                  input_arg { name: "x" type: DT_INT32 }
                  output_arg { name: "c" type: DT_BOOL } }
      node_def { name: "ten" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 10 } } } }
      node_def { name: "lt" op: "Less" input: "x" input: "ten:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "c" value: "lt:z:0" }
    }
    function {
      signature { name: "noisy"
                  input_arg { name: "x" type: DT_INT32 }
                  output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "r" op: "RandomUniform" input: "x"
                 attr { key: "T" value { type: DT_INT32 } }
                 attr { key: "dtype" value { type: DT_FLOAT } } }
      ret { key: "y" value: "r:output:0" }
    }
    function {
      signature { name: "forever"
                  input_arg { name: "x" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "again" op: "forever" input: "x" }
      ret { key: "y" value: "again:y:0" }
    }
  }
  node { name: "three" op: "Const"
         attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
  node { name: "shape" op: "Const"
         attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }
  node { name: "loop" op: "StatelessWhile" input: "three"
         attr { key: "T" value { list { type: DT_INT32 } } }
         attr { key: "cond" value { func { name: "below_ten" } } }
         attr { key: "body" value { func { name: "double" } } } }
  node { name: "call" op: "PartitionedCall" input: "three"
         attr { key: "Tin" value { list { type: DT_INT32 } } }
         attr { key: "Tout" value { list { type: DT_INT32 } } }
         attr { key: "f" value { func { name: "double" } } } }
  node { name: "random" op: "PartitionedCall" input: "shape"
         attr { key: "Tin" value { list { type: DT_INT32 } } }
         attr { key: "Tout" value { list { type: DT_FLOAT } } }
         attr { key: "f" value { func { name: "noisy" } } } }
  node { name: "recursive" op: "PartitionedCall" input: "three"
         attr { key: "Tin" value { list { type: DT_INT32 } } }
         attr { key: "Tout" value { list { type: DT_INT32 } } }
         attr { key: "f" value { func { name: "forever" } } } }
  node { name: "feed" op: "Placeholder"
         attr { key: "dtype" value { type: DT_INT32 } } }
)pb";

class ConstantEvaluatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    tensorflow::GraphDef graph;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kGraph, &graph));
    module = importGraphDef(graph, &ctx);
    ASSERT_TRUE(module);
  }

  graph::NodeOp node(StringRef name) {
    graph::NodeOp found;
    module->walk([&](graph::NodeOp n) {
      if (n.getName() == name && !n->getParentOfType<graph::FuncOp>())
        found = n;
    });
    return found;
  }

  Tensor scalar(int32_t value) {
    Tensor t(kInt32, {});
    t.data<int32_t>()[0] = value;
    return t;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ConstantEvaluatorTest, FunctionsComputeWhatTheExecutorComputes) {
  ConstantEvaluator evaluator(*module, /*maxIterations=*/100);
  Executor executor(*module);
  FailureOr<std::vector<Tensor>> expected =
      executor.run({}, {"loop", "call"}, {});
  ASSERT_TRUE(succeeded(expected));
  int i = 0;
  for (StringRef name : {"loop", "call"}) {
    ASSERT_TRUE(evaluator.canEvaluate(node(name))) << name.str();
    FailureOr<std::vector<Tensor>> outputs =
        evaluator.evaluate(node(name), {scalar(3)});
    ASSERT_TRUE(succeeded(outputs)) << name.str();
    ASSERT_EQ(outputs->size(), 1u);
    EXPECT_EQ((*outputs)[0].toString(), (*expected)[i++].toString());
  }
  EXPECT_EQ((*expected)[0].data<int32_t>()[0], 12);
  EXPECT_EQ((*expected)[1].data<int32_t>()[0], 6);
}

TEST_F(ConstantEvaluatorTest, RefusesStateRecursionAndFeeds) {
  ConstantEvaluator evaluator(*module, /*maxIterations=*/100);
  EXPECT_FALSE(evaluator.canEvaluate(node("random")));
  EXPECT_FALSE(evaluator.canEvaluate(node("recursive")));
  EXPECT_FALSE(evaluator.canEvaluate(node("feed")));
  EXPECT_TRUE(evaluator.canEvaluate(node("three")));
}

TEST_F(ConstantEvaluatorTest, LoopsStopAtTheIterationLimit) {
  ConstantEvaluator evaluator(*module, /*maxIterations=*/1);
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(evaluator.evaluate(node("loop"), {scalar(3)})));
  EXPECT_NE(message.find("1 iterations"), std::string::npos) << message;
}

TEST_F(ConstantEvaluatorTest, IllTypedInputsAreErrorsNotBadReads) {
  ConstantEvaluator evaluator(*module, /*maxIterations=*/100);
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  Tensor wrong(kFloat, {});
  EXPECT_TRUE(failed(evaluator.evaluate(node("call"), {wrong})));
  EXPECT_NE(message.find("incompatible with expected int32"), std::string::npos)
      << message;
}

} // namespace
