//===- NodeDefUtilTest.cpp - attr defaults and validation -----------------===//

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Translate/GraphDef.h"
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

/// A registry default as TensorFlow's text-format AttrValue spells it, the
/// way a producer writes the attr explicitly in a NodeDef.
std::string defaultAsAttrValueText(const ops::AttrSpec &attr) {
  std::string type = attr.type, text = attr.defaultValue;
  auto listField = [](const std::string &kind) -> std::string {
    if (kind == "int")
      return "i";
    if (kind == "float")
      return "f";
    if (kind == "bool")
      return "b";
    if (kind == "type")
      return "type";
    if (kind == "string")
      return "s";
    if (kind == "shape")
      return "shape";
    return "";
  };
  if (type.rfind("list(", 0) == 0) {
    std::string kind = type.substr(5, type.size() - 6);
    std::string inner = text.substr(1, text.size() - 2);
    if (inner.find_first_not_of(' ') == std::string::npos)
      return "list { }";
    return "list { " + listField(kind) + ": [" + inner + "] }";
  }
  if (type == "shape") {
    if (text[0] == '{')
      return "shape " + text;
    std::string dims, inner = text.substr(1, text.size() - 2);
    for (size_t at = 0; at < inner.size();) {
      size_t comma = inner.find(',', at);
      std::string dim = inner.substr(at, comma - at);
      dims += "dim { size: " + dim + " } ";
      at = comma == std::string::npos ? inner.size() : comma + 1;
    }
    return "shape { " + dims + "}";
  }
  return listField(type) + ": " + text;
}

TEST(NodeDefUtilTest, EveryDefaultIsWhatTheImporterMakesOfItWrittenOut) {
  MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  int compared = 0;
  for (const ops::OpSpec *op : ops::getRegisteredOps())
    for (const ops::AttrSpec &attr : op->attrs) {
      if (attr.defaultValue.empty() || attr.type == "func" ||
          attr.type == "tensor")
        continue;
      // An op the registry does not know keeps its attrs as written.
      std::string text = "node { name: 'n' op: 'CleaveUnregisteredOp' attr "
                         "{ key: 'a' value { " +
                         defaultAsAttrValueText(attr) + " } } }";
      tensorflow::GraphDef graphDef;
      ASSERT_TRUE(
          google::protobuf::TextFormat::ParseFromString(text, &graphDef))
          << text;
      OwningOpRef<ModuleOp> module = importGraphDef(graphDef, &ctx);
      ASSERT_TRUE(module) << text;
      graph::NodeOp node;
      module->walk([&](graph::NodeOp n) { node = n; });
      ASSERT_TRUE(node);
      EXPECT_EQ(getDefaultAttr(attr, &ctx), node.getTFAttr("a"))
          << op->name << "." << attr.name << " = " << attr.defaultValue;
      ++compared;
    }
  EXPECT_GT(compared, 200);
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
