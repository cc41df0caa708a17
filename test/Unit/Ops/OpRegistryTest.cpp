//===- OpRegistryTest.cpp - unit tests of the op registry -----------------===//

#include "cleave/Ops/OpRegistry.h"
#include "lib/Ops/OpTables.h"

#include "gtest/gtest.h"

using namespace cleave::ops;

namespace {

TEST(OpRegistryTest, KnowsTensorFlowSignatures) {
  const OpSpec *add = lookupOp("AddV2");
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->inputs.size(), 2u);
  ASSERT_EQ(add->outputs.size(), 1u);
  EXPECT_EQ(add->outputs[0].name, "z");
  EXPECT_EQ(add->outputs[0].typeAttr, "T");

  const OpSpec *sw = lookupOp("Switch");
  ASSERT_NE(sw, nullptr);
  ASSERT_EQ(sw->outputs.size(), 2u);
  EXPECT_EQ(sw->outputs[0].name, "output_false");
  EXPECT_EQ(sw->outputs[1].name, "output_true");
  EXPECT_EQ(sw->inputs[1].fixedType, 10); // pred: bool

  const OpSpec *split = lookupOp("Split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->outputs[0].numberAttr, "num_split");

  const OpSpec *call = lookupOp("PartitionedCall");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->outputs[0].typeListAttr, "Tout");

  const OpSpec *conv = lookupOp("Conv2D");
  ASSERT_NE(conv, nullptr);
  const AttrSpec *format = conv->findAttr("data_format");
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->defaultValue, "'NHWC'");
}

TEST(OpRegistryTest, StatefulnessFollowsTensorFlow) {
  EXPECT_TRUE(lookupOp("VariableV2")->isStateful);
  EXPECT_TRUE(lookupOp("ReadVariableOp")->isStateful); // resource argument
  EXPECT_FALSE(lookupOp("Assign")->isStateful);        // protected by Ref
  EXPECT_TRUE(lookupOp("Assign")->mayHaveSideEffects());
  EXPECT_FALSE(lookupOp("AddV2")->mayHaveSideEffects());
  EXPECT_TRUE(lookupOp("Assign")->inputs[0].isRef);
}

TEST(OpRegistryTest, UnknownOpsAreNotRegistered) {
  EXPECT_EQ(lookupOp("NotARealOp"), nullptr);
  auto ops = getRegisteredOps();
  EXPECT_GT(ops.size(), 200u);
  for (size_t i = 1; i < ops.size(); ++i)
    EXPECT_LT(ops[i - 1]->name, ops[i]->name);
}

TEST(OpRegistryTest, MalformedSpecsAreRejectedWithTheOpName) {
  detail::OpTableEntry bad{"Broken", {"x T"}, {"y: T"}, {"T: type"}, false};
  auto spec = detail::parseOpTableEntry(bad);
  ASSERT_FALSE(static_cast<bool>(spec));
  std::string message = llvm::toString(spec.takeError());
  EXPECT_NE(message.find("Broken"), std::string::npos) << message;

  detail::OpTableEntry undeclared{"Undeclared", {"x: U"}, {}, {}, false};
  auto spec2 = detail::parseOpTableEntry(undeclared);
  ASSERT_FALSE(static_cast<bool>(spec2));
  llvm::consumeError(spec2.takeError());
}

} // namespace

namespace {
TEST(OpRegistryTest, KnowsWhatTheDeviceCompiles) {
  for (const char *op : {"MatMul", "Conv2D", "ReadVariableOp",
                         "ResourceApplyAdam", "While", "TPUReplicatedInput",
                         "InfeedDequeueTuple", "TensorArrayV3",
                         "StatelessRandomUniformV2"}) {
    ASSERT_NE(lookupOp(op), nullptr) << op;
    EXPECT_TRUE(lookupOp(op)->isDeviceCompilable) << op;
  }
  for (const char *op : {"PrintV2", "StringFormat", "AsString",
                         "ScalarSummary", "VariableV2", "Assign", "_Recv",
                         "TPUCompilationResult", "MapDataset",
                         "HashTableV2"}) {
    ASSERT_NE(lookupOp(op), nullptr) << op;
    EXPECT_FALSE(lookupOp(op)->isDeviceCompilable) << op;
  }
}
} // namespace
