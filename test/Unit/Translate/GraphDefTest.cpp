//===- GraphDefTest.cpp - unit tests of GraphDef import/export ------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;
namespace tf = tensorflow;

namespace {

tf::GraphDef parseText(const char *text) {
  tf::GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  return graph;
}

/// Imports, exports and checks the result equals the input message.
void expectRoundTrip(const tf::GraphDef &graph) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx);
  ASSERT_TRUE(module);
  tf::GraphDef out;
  ASSERT_TRUE(succeeded(exportGraphDef(*module, out)));
  google::protobuf::util::MessageDifferencer differ;
  std::string report;
  differ.ReportDifferencesToString(&report);
  EXPECT_TRUE(differ.Compare(graph, out)) << report;
}

TEST(DataTypeTest, EveryEnumValueMapsBackToItself) {
  MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  for (int dt = 0; dt <= 140; ++dt) {
    Type type = graph::dataTypeToType(&ctx, dt);
    ASSERT_TRUE(type) << dt;
    EXPECT_EQ(graph::typeToDataType(type), dt) << dt;
  }
  EXPECT_EQ(graph::typeToDataType(graph::dataTypeToType(&ctx, 7777)), 7777);
}

TEST(DataTypeTest, NamesFollowTensorFlow) {
  MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  EXPECT_EQ(graph::getDataTypeName(graph::dataTypeToType(&ctx, 1)), "float");
  EXPECT_EQ(graph::getDataTypeName(graph::dataTypeToType(&ctx, 101)),
            "float_ref");
  EXPECT_EQ(graph::getDataTypeName(graph::dataTypeToType(&ctx, 14)),
            "bfloat16");
}

TEST(FormatTest, DetectsByContent) {
  EXPECT_EQ(detectInputFormat("node {\n name: \"a\" }"),
            InputFormat::GraphDefText);
  EXPECT_EQ(detectInputFormat("# comment\n\nversions: { producer: 1 }"),
            InputFormat::GraphDefText);
  EXPECT_EQ(detectInputFormat("module {\n}"), InputFormat::MLIR);
  EXPECT_EQ(detectInputFormat("module attributes {x} {\n}"),
            InputFormat::MLIR);
  EXPECT_EQ(detectInputFormat("graph.graph {\n}"), InputFormat::MLIR);
  EXPECT_EQ(detectInputFormat("\"graph.graph\"() ({})"), InputFormat::MLIR);
  // A misspelt field is still a text GraphDef (so the error names it).
  EXPECT_EQ(detectInputFormat("nod { name: \"a\" }"),
            InputFormat::GraphDefText);
  EXPECT_EQ(detectInputFormat("#map = affine_map<(d0) -> (d0)>\nmodule {}"),
            InputFormat::MLIR);
  EXPECT_EQ(detectInputFormat(llvm::StringRef("\x0a\x05\x0a\x01x\x12\x00", 7)),
            InputFormat::GraphDefBinary);
}

TEST(RoundTripTest, TensorEncodings) {
  expectRoundTrip(parseText(R"pb(
    node {
      name: "splat" op: "Const"
      attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor {
        dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 7 } } }
    }
    node {
      name: "partial" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_FLOAT tensor_shape { dim { size: 4 } }
        float_val: 1 float_val: 2 } } }
    }
    node {
      name: "content" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
        tensor_content: "\000\000\200?\000\000\000@" } } }
    }
    node {
      name: "half" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_HALF tensor_shape { } half_val: 0x8000 } } }
    }
    node {
      name: "strings" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_STRING tensor_shape { dim { size: 3 } }
        tensor_content: "\001\000\002a\000b" } } }
    }
    node {
      name: "extra" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_INT64 tensor_shape { dim { size: 1 } }
        int64_val: 1 int64_val: 2 } } }
    }
    node {
      name: "mismatch" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
        tensor_content: "\000\000\200?" } } }
    }
    node {
      name: "resource" op: "TensorHolder"
      attr { key: "value" value { tensor {
        dtype: DT_RESOURCE tensor_shape { }
        resource_handle_val { name: "v" device: "/cpu:0" } } } }
    }
  )pb"));
}

TEST(RoundTripTest, AttrKinds) {
  expectRoundTrip(parseText(R"pb(
    node {
      name: "n" op: "Unknown" device: "/job:w/task:0/device:CPU:0"
      attr { key: "empty" value { } }
      attr { key: "empty_list" value { list { } } }
      attr { key: "s" value { s: "" } }
      attr { key: "i" value { i: 0 } }
      attr { key: "b" value { b: false } }
      attr { key: "f" value { f: -0.0 } }
      attr { key: "shape" value { shape { unknown_rank: true } } }
      attr { key: "named" value { shape { dim { size: -1 name: "batch" } } } }
      attr { key: "fn" value { func { name: "f" attr { key: "x" value { i: 1 } } } } }
      attr { key: "ph" value { placeholder: "T" } }
      attr { key: "mixed" value { list { s: "a" i: 1 type: DT_BFLOAT16 } } }
      attr { key: "newtype" value { type: 250 } }
      experimental_debug_info { original_node_names: "orig" }
      experimental_type { type_id: TFT_PRODUCT args { type_id: TFT_TENSOR } }
    }
    node { name: "m" op: "Unknown" input: "n:3" input: "n" input: "^n" }
    library { gradient { function_name: "f" gradient_func: "g" } }
    versions { producer: 1 min_consumer: 0 bad_consumers: 3 }
  )pb"));
}

TEST(RoundTripTest, FunctionsAndLoops) {
  expectRoundTrip(parseText(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "call" op: "f" input: "x" }
    node { name: "enter" op: "Enter" input: "x"
           attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "frame_name" value { s: "loop" } } }
    node { name: "merge" op: "Merge" input: "enter" input: "next"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "next" op: "NextIteration" input: "merge"
           attr { key: "T" value { type: DT_FLOAT } } }
    library {
      function {
        signature {
          name: "f"
          input_arg { name: "a" type: DT_FLOAT }
          output_arg { name: "out" type: DT_FLOAT }
          is_stateful: true
        }
        node_def { name: "neg" op: "Neg" input: "a"
                   attr { key: "T" value { type: DT_FLOAT } } }
        node_def { name: "opaque" op: "Mystery" input: "neg:y:0" input: "^a" }
        ret { key: "out" value: "opaque:z:0" }
        control_ret { key: "c" value: "neg" }
        arg_attr { key: 0 value { attr { key: "_user_specified_name" value { s: "a" } } } }
        resource_arg_unique_id { key: 0 value: 4 }
        attr { key: "_noinline" value { b: true } }
      }
    }
  )pb"));
}

TEST(ImportTest, RejectsDuplicateNames) {
  MLIRContext ctx;
  ScopedDiagnosticHandler silence(&ctx, [](Diagnostic &) { return success(); });
  auto graph = parseText(R"pb(node { name: "a" op: "NoOp" }
                               node { name: "a" op: "NoOp" })pb");
  EXPECT_FALSE(importGraphDef(graph, &ctx));
}

} // namespace
