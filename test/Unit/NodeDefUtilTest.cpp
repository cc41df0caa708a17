//===- NodeDefUtilTest.cpp - attr defaults and validation -----------------===//

#include "cleave/Translate/GraphDef.h"
#include "cleave/Translate/NodeDefUtil.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;

namespace {

TEST(NodeDefUtilTest, EveryRegistryDefaultBecomesAnAttr) {
  MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  int defaults = 0;
  for (const ops::OpSpec *op : ops::getRegisteredOps())
    for (const ops::AttrSpec &attr : op->attrs) {
      if (attr.defaultValue.empty())
        continue;
      ++defaults;
      EXPECT_TRUE(getDefaultAttr(attr, &ctx))
          << op->name << "." << attr.name << " = " << attr.defaultValue;
    }
  EXPECT_GT(defaults, 200);
}

TEST(NodeDefUtilTest, DefaultsHaveTheImportedForm) {
  MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  const ops::OpSpec *conv = ops::lookupOp("Conv2D");
  Attribute dilations = getDefaultAttr(*conv->findAttr("dilations"), &ctx);
  auto list = dyn_cast_or_null<ArrayAttr>(dilations);
  ASSERT_TRUE(list);
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(cast<IntegerAttr>(list[0]).getInt(), 1);
  auto format =
      dyn_cast_or_null<StringAttr>(getDefaultAttr(*conv->findAttr("data_format"), &ctx));
  ASSERT_TRUE(format);
  EXPECT_EQ(format.getValue(), "NHWC");
  auto shape = dyn_cast_or_null<graph::ShapeAttr>(getDefaultAttr(
      *ops::lookupOp("Placeholder")->findAttr("shape"), &ctx));
  ASSERT_TRUE(shape);
  EXPECT_TRUE(shape.getUnknownRank());
}

/// Imports `text` and validates its last node; returns the error message.
std::string validate(const std::string &text) {
  tensorflow::GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx);
  if (!module)
    return "import failed: " + message;
  graph::NodeOp last;
  module->walk([&](graph::NodeOp node) { last = node; });
  if (succeeded(validateNodeDef(last)) && message.empty())
    message = "ok";
  return message;
}

TEST(NodeDefUtilTest, ValidationUsesTensorFlowMessages) {
  const std::string input = R"pb(node { name: "x" op: "Placeholder"
                                   attr { key: "dtype" value { type: DT_FLOAT } } })pb";
  EXPECT_EQ(validate(input + R"pb(
                      node { name: "r" op: "Relu" input: "x"
                             attr { key: "T" value { type: DT_FLOAT } } })pb"),
            "ok");
  EXPECT_EQ(validate(R"pb(node { name: "s" op: "Softmax"
                              attr { key: "T" value { type: DT_INT32 } } })pb"),
            "Node 's': Value for attr 'T' of int32 is not in the list of "
            "allowed values: half, bfloat16, float, double");
  // (A missing or mistyped type attr already fails at import: the node's
  // result types depend on it.)
  EXPECT_EQ(validate(R"pb(node { name: "c" op: "Conv2D"
                              attr { key: "T" value { type: DT_FLOAT } }
                              attr { key: "padding" value { s: "SAME" } } })pb"),
            "Node 'c': NodeDef missing attr 'strides' from Op<name=Conv2D>");
  EXPECT_EQ(validate(R"pb(node { name: "c" op: "Conv2D"
                              attr { key: "T" value { type: DT_FLOAT } }
                              attr { key: "strides" value { list { i: [1, 1, 1, 1] } } }
                              attr { key: "padding" value { i: 3 } } })pb"),
            "Node 'c': AttrValue had value with type 'int' when 'string' "
            "expected for attr 'padding'");
  EXPECT_EQ(validate(R"pb(node { name: "p" op: "MaxPool"
                              attr { key: "T" value { type: DT_FLOAT } }
                              attr { key: "ksize" value { list { i: [1, 2, 2, 1] } } }
                              attr { key: "strides" value { list { i: [1, 2, 2, 1] } } }
                              attr { key: "padding" value { s: "FULL" } } })pb"),
            "Node 'p': Value for attr 'padding' of \"FULL\" is not in the "
            "list of allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"");
  EXPECT_EQ(validate(R"pb(node { name: "p" op: "MaxPool"
                              attr { key: "T" value { type: DT_FLOAT } }
                              attr { key: "ksize" value { list { i: [1, 2] } } }
                              attr { key: "strides" value { list { i: [1, 2, 2, 1] } } }
                              attr { key: "padding" value { s: "SAME" } } })pb"),
            "Node 'p': Length for attr 'ksize' of 2 must be at least minimum 4");
  // Inputs are counted against the signature, after the attrs.
  EXPECT_EQ(validate(input + R"pb(
                      node { name: "m" op: "Minimum" input: "x"
                             attr { key: "T" value { type: DT_FLOAT } } })pb"),
            "Node 'm': NodeDef expected inputs 'float, float' do not match 1 "
            "inputs specified; Op<name=Minimum>");
  EXPECT_EQ(validate(input + R"pb(
                      node { name: "n" op: "AddN" input: ["x", "x", "x"]
                             attr { key: "N" value { i: 2 } }
                             attr { key: "T" value { type: DT_FLOAT } } })pb"),
            "Node 'n': NodeDef expected inputs 'float, float' do not match 3 "
            "inputs specified; Op<name=AddN>");
  EXPECT_EQ(validate(input + R"pb(
                      node { name: "i" op: "IdentityN" input: ["x", "x"]
                             attr { key: "T" value { list { type: [DT_FLOAT, DT_INT32, DT_FLOAT] } } } })pb"),
            "Node 'i': NodeDef expected inputs 'float, int32, float' do not "
            "match 2 inputs specified; Op<name=IdentityN>");
  EXPECT_EQ(validate(R"pb(node { name: "v" op: "VariableV2"
                              attr { key: "dtype" value { type: DT_FLOAT } }
                              attr { key: "shape" value { shape {} } } }
                          node { name: "a" op: "Assign" input: "v"
                                 attr { key: "T" value { type: DT_FLOAT } } })pb"),
            "Node 'a': NodeDef expected inputs 'float_ref, float' do not match "
            "1 inputs specified; Op<name=Assign>");
  // Unknown ops are opaque and always valid.
  EXPECT_EQ(validate(R"pb(node { name: "x" op: "MyCustomOp" })pb"), "ok");
}

TEST(NodeDefUtilTest, AddDefaultsFillsStrippedAttrs) {
  tensorflow::GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(node { name: "c" op: "Conv2D"
                  attr { key: "T" value { type: DT_FLOAT } }
                  attr { key: "strides" value { list { i: [1, 1, 1, 1] } } }
                  attr { key: "padding" value { s: "SAME" } } })pb",
      &graph));
  MLIRContext ctx;
  GraphDefImportOptions options;
  options.addDefaultAttrs = true;
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx, "", options);
  ASSERT_TRUE(module);
  graph::NodeOp conv;
  module->walk([&](graph::NodeOp node) { conv = node; });
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv.getTFString("data_format"), "NHWC");
  EXPECT_EQ(conv.getTFBool("use_cudnn_on_gpu"), true);
  EXPECT_EQ(conv.getTFIntList("dilations")->size(), 4u);
}

} // namespace
