//===- GradientTest.cpp - gradient rules against finite differences -------===//
//
// Each case is a small float64 graph y = f(x0, x1, ...). graph-gradient adds
// the gradients of y with respect to the xs for a random cotangent r (as
// grad_ys), the reference interpreter evaluates them, and each element is
// compared with the central difference of sum(f(x) * r). Every gradient
// rule of the op registry has at least one case here.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/GradientColocation.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Ops/GradientRules.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <random>
#include <set>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

using Dims = std::vector<int64_t>;

/// Which values a case's inputs may take (the op's domain, away from kinks).
enum class Domain { Any, Positive, AwayFromZero, Spread, Inside, AboveOne };

struct Input {
  std::string name;
  Dims shape;
  Domain domain = Domain::Any;
};

struct GradCase {
  std::string name;
  std::vector<Input> inputs;
  /// NodeDefs computing "y" from the inputs (Placeholders added for them).
  std::string nodes;
  /// The tensor differentiated, when not "y".
  std::string y = "y";
  /// Skip graph-infer-shapes (rules must cope with unknown shapes).
  bool unknownShapes = false;
  /// float32 inputs, for ops TensorFlow defines for no wider type; the
  /// differences then use a larger step and tolerance.
  bool float32 = false;
};

/// How gtest names a case in failure messages (instead of its raw bytes).
void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

std::string placeholder(const Input &in, bool withShape, bool float32) {
  std::string text = "node { name: \"" + in.name +
                     "\" op: \"Placeholder\" attr { key: \"dtype\" value { "
                     "type: " +
                     (float32 ? "DT_FLOAT" : "DT_DOUBLE") + " } }";
  if (withShape) {
    text += " attr { key: \"shape\" value { shape {";
    for (int64_t d : in.shape)
      text += " dim { size: " + std::to_string(d) + " }";
    text += " } } }";
  }
  return text + " }\n";
}

std::string t64 = "attr { key: \"T\" value { type: DT_DOUBLE } }";

std::string unaryCase(const char *op) {
  return std::string("node { name: \"y\" op: \"") + op + "\" input: \"x0\" " +
         t64 + " }";
}
std::string binaryCase(const char *op) {
  return std::string("node { name: \"y\" op: \"") + op +
         "\" input: \"x0\" input: \"x1\" " + t64 + " }";
}
std::string intConst(const char *name, const Dims &values) {
  std::string text = std::string("node { name: \"") + name +
                     "\" op: \"Const\" attr { key: \"dtype\" value { type: "
                     "DT_INT32 } } attr { key: \"value\" value { tensor { "
                     "dtype: DT_INT32 tensor_shape { dim { size: " +
                     std::to_string(values.size()) + " } }";
  for (int64_t v : values)
    text += " int_val: " + std::to_string(v);
  return text + " } } } }\n";
}
std::string reduction(const char *op, const Dims &axes, bool keepDims) {
  return intConst("axes", axes) + "node { name: \"y\" op: \"" + op +
         "\" input: \"x0\" input: \"axes\" " + t64 +
         " attr { key: \"Tidx\" value { type: DT_INT32 } } attr { key: "
         "\"keep_dims\" value { b: " +
         (keepDims ? "true" : "false") + " } } }";
}
std::string matMul(bool ta, bool tb) {
  return std::string("node { name: \"y\" op: \"MatMul\" input: \"x0\" input: "
                     "\"x1\" ") +
         t64 +
         " attr { key: \"transpose_a\" value { b: " + (ta ? "true" : "false") +
         " } } attr { key: \"transpose_b\" value { "
         "b: " +
         (tb ? "true" : "false") + " } } }";
}

std::string conv2D(const char *padding, int stride) {
  std::string s = std::to_string(stride);
  return std::string("node { name: \"y\" op: \"Conv2D\" input: \"x0\" "
                     "input: \"x1\" ") +
         t64 + " attr { key: \"strides\" value { list { i: 1 i: " + s +
         " i: " + s + " i: 1 } } } attr { key: \"padding\" value { s: \"" +
         padding + "\" } } }";
}
std::string pool(const char *op, const char *padding) {
  return std::string("node { name: \"y\" op: \"") + op + "\" input: \"x0\" " +
         t64 +
         " attr { key: \"ksize\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
         "attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
         "attr { key: \"padding\" value { s: \"" +
         padding + "\" } } }";
}

/// A list of x's rows ("list"), with the row shape ("shape").
std::string listFromTensor(const char *x) {
  return intConst("shape", {2}) +
         "node { name: \"list\" op: "
         "\"TensorListFromTensor\" input: \"" +
         x +
         "\" input: \"shape\" attr { key: \"element_dtype\" value { type: "
         "DT_DOUBLE } } attr { key: \"shape_type\" value { type: DT_INT32 } "
         "} }\n";
}
/// A list op of float64 elements.
std::string listNode(const char *name, const char *op, const char *inputs) {
  return std::string("node { name: \"") + name + "\" op: \"" + op +
         "\" input: " + inputs +
         " attr { key: \"element_dtype\" value { type: DT_DOUBLE } } }\n";
}

/// A float64 vector constant.
std::string doubleConst(const char *name, std::vector<double> values) {
  std::string text = std::string("node { name: \"") + name +
                     "\" op: \"Const\" attr { key: \"dtype\" value { type: "
                     "DT_DOUBLE } } attr { key: \"value\" value { tensor { "
                     "dtype: DT_DOUBLE tensor_shape { dim { size: " +
                     std::to_string(values.size()) + " } }";
  for (double v : values)
    text += " double_val: " + std::to_string(v);
  return text + " } } } }\n";
}
std::string floatConst(const char *name, std::vector<double> values) {
  std::string text = std::string("node { name: \"") + name +
                     "\" op: \"Const\" attr { key: \"dtype\" value { type: "
                     "DT_FLOAT } } attr { key: \"value\" value { tensor { "
                     "dtype: DT_FLOAT tensor_shape { dim { size: " +
                     std::to_string(values.size()) + " } }";
  for (double v : values)
    text += " float_val: " + std::to_string(v);
  return text + " } } } }\n";
}
std::string fusedBatchNorm(bool training) {
  return floatConst("mean", training ? std::vector<double>{}
                                     : std::vector<double>{0.1, -0.2, 0.3}) +
         floatConst("variance", training ? std::vector<double>{}
                                         : std::vector<double>{0.5, 1.5, 2.0}) +
         "node { name: \"y\" op: \"FusedBatchNormV3\" input: \"x0\" "
         "input: \"x1\" input: \"x2\" input: \"mean\" input: "
         "\"variance\" attr { key: \"T\" value { type: DT_FLOAT } } attr { "
         "key: \"U\" value { type: DT_FLOAT } } attr { key: \"is_training\" "
         "value { b: " +
         (training ? "true" : "false") + " } } }";
}

/// A v1 conditional: Switch on a constant, Square if true, Tanh if false,
/// Merge.
std::string switchMerge(bool taken, const char *switchOp = "Switch") {
  return std::string("node { name: \"p\" op: \"Const\" attr { key: "
                     "\"dtype\" value { type: DT_BOOL } } attr { key: "
                     "\"value\" value { tensor { dtype: DT_BOOL tensor_shape "
                     "{ } bool_val: ") +
         (taken ? "true" : "false") +
         " } } } }\n"
         "node { name: \"sw\" op: \"" +
         switchOp + "\" input: \"x0\" input: \"p\" " + t64 +
         " }\n"
         "node { name: \"f\" op: \"Tanh\" input: \"sw\" " +
         t64 +
         " }\n"
         "node { name: \"t\" op: \"Square\" input: \"sw:1\" " +
         t64 +
         " }\n"
         "node { name: \"y\" op: \"Merge\" input: \"f\" input: \"t\" " +
         t64 + " attr { key: \"N\" value { i: 2 } } }";
}

/// While over (i, x, w): 3 iterations of x = tanh(x * w) + x, i = i + 1.
std::string whileCase() {
  return std::string(
             "node { name: \"i0\" op: \"Const\" attr { key: \"dtype\" "
             "value { type: DT_INT32 } } attr { key: \"value\" value { tensor "
             "{ dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
             "node { name: \"w\" op: \"While\" input: \"i0\" input: "
             "\"x0\" input: \"x1\" attr { key: \"T\" value { list { type: "
             "DT_INT32 type: DT_DOUBLE type: DT_DOUBLE } } } attr { key: "
             "\"cond\" value { func { name: \"below3\" } } } attr { key: "
             "\"body\" value { func { name: \"step\" } } } }\n"
             "node { name: \"y\" op: \"Identity\" input: \"w:1\" ") +
         t64 +
         " }\n"
         "library { function { signature { name: \"below3\" input_arg { "
         "name: \"i\" type: DT_INT32 } input_arg { name: \"x\" type: "
         "DT_DOUBLE } input_arg { name: \"v\" type: DT_DOUBLE } output_arg { "
         "name: \"c\" type: DT_BOOL } }\n"
         "node_def { name: \"three\" op: \"Const\" attr { key: \"dtype\" "
         "value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
         "dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }\n"
         "node_def { name: \"less\" op: \"Less\" input: \"i\" input: "
         "\"three:output:0\" attr { key: \"T\" value { type: DT_INT32 } } "
         "}\n"
         "ret { key: \"c\" value: \"less:z:0\" } }\n"
         "function { signature { name: \"step\" input_arg { name: \"i\" "
         "type: DT_INT32 } input_arg { name: \"x\" type: DT_DOUBLE } "
         "input_arg { name: \"v\" type: DT_DOUBLE } output_arg { name: "
         "\"i2\" type: DT_INT32 } output_arg { name: \"x2\" type: "
         "DT_DOUBLE } output_arg { name: \"v2\" type: DT_DOUBLE } }\n"
         "node_def { name: \"one\" op: \"Const\" attr { key: \"dtype\" "
         "value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
         "dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
         "node_def { name: \"next\" op: \"AddV2\" input: \"i\" input: "
         "\"one:output:0\" attr { key: \"T\" value { type: DT_INT32 } } }\n"
         "node_def { name: \"m\" op: \"Mul\" input: \"x\" input: \"v\" " +
         t64 +
         " }\n"
         "node_def { name: \"t\" op: \"Tanh\" input: \"m:z:0\" " +
         t64 +
         " }\n"
         "node_def { name: \"s\" op: \"AddV2\" input: \"t:y:0\" input: "
         "\"x\" " +
         t64 +
         " }\n"
         "ret { key: \"i2\" value: \"next:z:0\" } ret { key: \"x2\" "
         "value: \"s:z:0\" } ret { key: \"v2\" value: \"v\" } } }";
}

/// A v1 while loop as tf.while_loop writes it, in frame `<p>/while_context`:
/// variables i (int32, from 0) and x (from `x`), the invariant w (from `w`),
/// cond i < n, body (i + 1, `body(xIn, wIn)`), where `body` adds its nodes
/// and names the new x. The loop's results: `<p>/Exit` (i), `<p>/Exit_1`.
/// In an outer loop's body, i's initial 0 hangs on the outer `pivot`.
std::string v1Loop(const std::string &p, const std::string &x,
                   const std::string &w, int n,
                   const std::function<std::pair<std::string, std::string>(
                       const std::string &, const std::string &)> &body,
                   const std::string &pivot = "") {
  auto node = [](const std::string &name, const std::string &op,
                 std::vector<std::string> inputs, const std::string &attrs) {
    std::string text = "node { name: \"" + name + "\" op: \"" + op + "\"";
    for (const std::string &in : inputs)
      text += " input: \"" + in + "\"";
    return text + " " + attrs + " }\n";
  };
  std::string t32 = "attr { key: \"T\" value { type: DT_INT32 } }";
  auto enter = [&](const std::string &name, const std::string &in,
                   const std::string &t, bool constant) {
    return node(p + "/" + name, "Enter", {in},
                t + " attr { key: \"frame_name\" value { s: \"" + p +
                    "/while_context\" } } attr { key: \"is_constant\" value "
                    "{ b: " +
                    (constant ? "true" : "false") + " } }");
  };
  auto intConst = [&](const std::string &name, int v,
                      const std::string &control) {
    return node(p + "/" + name, "Const", {"^" + p + "/" + control},
                "attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: "
                "\"value\" value { tensor { dtype: DT_INT32 tensor_shape { } "
                "int_val: " +
                    std::to_string(v) + " } } }");
  };
  std::string merge2 = "attr { key: \"N\" value { i: 2 } } ";
  std::string text =
      node(p + "/zero", "Const",
           pivot.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"^" + pivot},
           "attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: "
           "\"value\" value { tensor { dtype: DT_INT32 tensor_shape { } "
           "int_val: 0 } } }") +
      enter("Enter", p + "/zero", t32, false) +
      enter("Enter_1", x, t64, false) + enter("Enter_2", w, t64, true) +
      node(p + "/Merge", "Merge", {p + "/Enter", p + "/NextIteration"},
           merge2 + t32) +
      node(p + "/Merge_1", "Merge", {p + "/Enter_1", p + "/NextIteration_1"},
           merge2 + t64) +
      intConst("Less/y", n, "Merge") +
      node(p + "/Less", "Less", {p + "/Merge", p + "/Less/y"}, t32) +
      node(p + "/LoopCond", "LoopCond", {p + "/Less"}, "") +
      node(p + "/Switch", "Switch", {p + "/Merge", p + "/LoopCond"}, t32) +
      node(p + "/Switch_1", "Switch", {p + "/Merge_1", p + "/LoopCond"}, t64) +
      node(p + "/Identity", "Identity", {p + "/Switch:1"}, t32) +
      node(p + "/Identity_1", "Identity", {p + "/Switch_1:1"}, t64) +
      intConst("add/y", 1, "Identity") +
      node(p + "/add", "AddV2", {p + "/Identity", p + "/add/y"}, t32);
  auto [bodyText, next] = body(p + "/Identity_1", p + "/Enter_2");
  return text + bodyText +
         node(p + "/NextIteration", "NextIteration", {p + "/add"}, t32) +
         node(p + "/NextIteration_1", "NextIteration", {next}, t64) +
         node(p + "/Exit", "Exit", {p + "/Switch"}, t32) +
         node(p + "/Exit_1", "Exit", {p + "/Switch_1"}, t64);
}

/// The body x = tanh(x * w) + x, its nodes in scope `p`.
std::function<std::pair<std::string, std::string>(const std::string &,
                                                  const std::string &)>
tanhStep(const std::string &p) {
  return [p](const std::string &x, const std::string &w) {
    return std::pair<std::string, std::string>{
        "node { name: \"" + p + "/mul\" op: \"Mul\" input: \"" + x +
            "\" input: \"" + w + "\" " + t64 + " }\n" + "node { name: \"" + p +
            "/Tanh\" op: \"Tanh\" input: \"" + p + "/mul\" " + t64 + " }\n" +
            "node { name: \"" + p + "/add_1\" op: \"AddV2\" input: \"" + p +
            "/Tanh\" input: \"" + x + "\" " + t64 + " }\n",
        p + "/add_1"};
  };
}

std::string ifCase(bool taken);

/// Case(1, x0, x1) over [x * y, tanh(x) + y]: the second branch.
std::string caseCase() {
  std::string text = ifCase(false);
  text = text.substr(text.find("library"));
  return "node { name: \"index\" op: \"Const\" attr { key: \"dtype\" "
         "value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
         "dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
         "node { name: \"y\" op: \"Case\" input: \"index\" input: \"x0\" "
         "input: \"x1\" attr { key: \"Tin\" value { list { type: DT_DOUBLE "
         "type: DT_DOUBLE } } } attr { key: \"Tout\" value { list { type: "
         "DT_DOUBLE } } } attr { key: \"branches\" value { list { func { "
         "name: \"mul\" } func { name: \"tanh_add\" } } } } }\n" +
         text;
}

/// If(cond, x0, x1) with then = x * y, else = tanh(x) + y.
std::string ifCase(bool taken) {
  return std::string("node { name: \"cond\" op: \"Const\" attr { key: "
                     "\"dtype\" value { type: DT_BOOL } } attr { key: "
                     "\"value\" value { tensor { dtype: DT_BOOL tensor_shape "
                     "{ } bool_val: ") +
         (taken ? "true" : "false") +
         " } } } }\n"
         "node { name: \"y\" op: \"If\" input: \"cond\" input: \"x0\" "
         "input: \"x1\" attr { key: \"Tcond\" value { type: DT_BOOL } } "
         "attr { key: \"Tin\" value { list { type: DT_DOUBLE type: DT_DOUBLE "
         "} } } attr { key: \"Tout\" value { list { type: DT_DOUBLE } } } "
         "attr { key: \"then_branch\" value { func { name: \"mul\" } } } "
         "attr { key: \"else_branch\" value { func { name: \"tanh_add\" } "
         "} } }\n"
         "library { function { signature { name: \"mul\" input_arg { name: "
         "\"x\" type: DT_DOUBLE } input_arg { name: \"y\" type: DT_DOUBLE } "
         "output_arg { name: \"z\" type: DT_DOUBLE } } node_def { name: "
         "\"m\" op: \"Mul\" input: \"x\" input: \"y\" " +
         t64 +
         " } ret { key: \"z\" value: \"m:z:0\" } }\n"
         "function { signature { name: \"tanh_add\" input_arg { name: \"x\" "
         "type: DT_DOUBLE } input_arg { name: \"y\" type: DT_DOUBLE } "
         "output_arg { name: \"z\" type: DT_DOUBLE } } node_def { name: "
         "\"t\" op: \"Tanh\" input: \"x\" " +
         t64 +
         " } node_def { name: \"s\" op: \"AddV2\" input: \"t:y:0\" input: "
         "\"y\" " +
         t64 + " } ret { key: \"z\" value: \"s:z:0\" } } }";
}

/// `name` = GatherV2(params, indices, axis 0), with its constants.
std::string gather(const char *name, const char *params, const Dims &indices,
                   int axisValue = 0) {
  std::string idx = std::string(name) + "_indices",
              axis = std::string(name) + "_axis";
  return intConst(idx.c_str(), indices) + "node { name: \"" + axis +
         "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } "
         "} attr { key: \"value\" value { tensor { dtype: DT_INT32 "
         "tensor_shape { } int_val: " +
         std::to_string(axisValue) +
         " } } } }\n"
         "node { name: \"" +
         name + "\" op: \"GatherV2\" input: \"" + params + "\" input: \"" +
         idx + "\" input: \"" + axis +
         "\" attr { key: \"Tparams\" value { type: DT_DOUBLE } } attr { key: "
         "\"Tindices\" value { type: DT_INT32 } } attr { key: \"Taxis\" "
         "value { type: DT_INT32 } } }\n";
}

std::vector<GradCase> cases() {
  using D = Domain;
  std::vector<GradCase> c = {
      {"AddV2Broadcast", {{"x0", {2, 3}}, {"x1", {3}}}, binaryCase("AddV2")},
      {"AddBroadcast", {{"x0", {2, 1}}, {"x1", {1, 3}}}, binaryCase("Add")},
      {"SubBroadcast", {{"x0", {2, 1}}, {"x1", {2, 3}}}, binaryCase("Sub")},
      {"MulBroadcast", {{"x0", {2, 3}}, {"x1", {2, 1}}}, binaryCase("Mul")},
      {"RealDiv",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("RealDiv")},
      {"Div", {{"x0", {3}}, {"x1", {}, D::AwayFromZero}}, binaryCase("Div")},
      {"Maximum", {{"x0", {2, 3}}, {"x1", {2, 3}}}, binaryCase("Maximum")},
      {"MinimumBroadcast",
       {{"x0", {2, 3}}, {"x1", {3}}},
       binaryCase("Minimum")},
      {"Neg", {{"x0", {2, 2}}}, unaryCase("Neg")},
      {"Square", {{"x0", {2, 2}}}, unaryCase("Square")},
      {"Sqrt", {{"x0", {3}, D::Positive}}, unaryCase("Sqrt")},
      {"Rsqrt", {{"x0", {3}, D::Positive}}, unaryCase("Rsqrt")},
      {"Reciprocal", {{"x0", {3}, D::AwayFromZero}}, unaryCase("Reciprocal")},
      {"Tanh", {{"x0", {2, 3}}}, unaryCase("Tanh")},
      {"Sigmoid", {{"x0", {2, 3}}}, unaryCase("Sigmoid")},
      {"Exp", {{"x0", {2, 3}}}, unaryCase("Exp")},
      {"Log", {{"x0", {2, 3}, D::Positive}}, unaryCase("Log")},
      {"Abs", {{"x0", {2, 3}, D::AwayFromZero}}, unaryCase("Abs")},
      {"Relu", {{"x0", {2, 3}, D::AwayFromZero}}, unaryCase("Relu")},
      {"Relu6", {{"x0", {2, 4}, D::Spread}}, unaryCase("Relu6")},
      {"LeakyRelu", {{"x0", {2, 4}, D::AwayFromZero}}, unaryCase("LeakyRelu")},
      {"LeakyReluGrad",
       {{"x0", {2, 4}}, {"x1", {2, 4}, D::AwayFromZero}},
       binaryCase("LeakyReluGrad")},
      {"Identity", {{"x0", {2}}}, unaryCase("Identity")},
      {"Snapshot", {{"x0", {2}}}, unaryCase("Snapshot")},
      {"MatMul", {{"x0", {2, 3}}, {"x1", {3, 4}}}, matMul(false, false)},
      {"MatMulTransposeA",
       {{"x0", {3, 2}}, {"x1", {3, 4}}},
       matMul(true, false)},
      {"MatMulTransposeB",
       {{"x0", {2, 3}}, {"x1", {4, 3}}},
       matMul(false, true)},
      {"MatMulTransposeBoth",
       {{"x0", {3, 2}}, {"x1", {4, 3}}},
       matMul(true, true)},
      {"SumAll", {{"x0", {2, 3}}}, reduction("Sum", {0, 1}, false)},
      {"SumKeepDims", {{"x0", {2, 3, 2}}}, reduction("Sum", {1}, true)},
      {"SumNegativeAxis", {{"x0", {2, 3}}}, reduction("Sum", {-1}, false)},
      {"MeanAxis0", {{"x0", {4, 3}}}, reduction("Mean", {0}, false)},
      {"MeanAll", {{"x0", {2, 3}}}, reduction("Mean", {0, 1}, true)},
      {"AddN",
       {{"x0", {2, 2}}, {"x1", {2, 2}}, {"x2", {2, 2}}},
       "node { name: \"y\" op: \"AddN\" input: \"x0\" input: \"x1\" input: "
       "\"x2\" attr { key: \"N\" value { i: 3 } } " +
           t64 + " }"},
      {"Cast",
       {{"x0", {3}}},
       "node { name: \"y\" op: \"Cast\" input: \"x0\" attr { key: \"SrcT\" "
       "value { type: DT_DOUBLE } } attr { key: \"DstT\" value { type: "
       "DT_DOUBLE } } }"},
      {"BiasAdd",
       {{"x0", {2, 3}}, {"x1", {3}}},
       "node { name: \"y\" op: \"BiasAdd\" input: \"x0\" input: \"x1\" " + t64 +
           " }"},
      {"Softmax", {{"x0", {2, 4}}}, unaryCase("Softmax")},
      {"LogSoftmax", {{"x0", {2, 4}}}, unaryCase("LogSoftmax")},
      // The kernel's backprop (softmax - labels) assumes each row of labels
      // sums to 1: labels are a softmax of the second input.
      {"SoftmaxCrossEntropyWithLogits",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       "node { name: \"labels\" op: \"Softmax\" input: \"x1\" " + t64 +
           " }\n"
           "node { name: \"y\" op: \"SoftmaxCrossEntropyWithLogits\" input: "
           "\"x0\" input: \"labels\" " +
           t64 + " }"},
      // Second order: the backprop output's gradient, alone and with the
      // loss's.
      {"SoftmaxCrossEntropyBackprop",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       "node { name: \"labels\" op: \"Softmax\" input: \"x1\" " + t64 +
           " }\n"
           "node { name: \"y\" op: \"SoftmaxCrossEntropyWithLogits\" input: "
           "\"x0\" input: \"labels\" " +
           t64 + " }",
       "y:1"},
      {"SoftmaxCrossEntropyBoth",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       "node { name: \"labels\" op: \"Softmax\" input: \"x1\" " + t64 +
           " }\n"
           "node { name: \"sce\" op: \"SoftmaxCrossEntropyWithLogits\" input: "
           "\"x0\" input: \"labels\" " +
           t64 +
           " }\n"
           "node { name: \"dim\" op: \"Const\" attr { key: \"dtype\" value { "
           "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: "
           "DT_INT32 tensor_shape { } int_val: -1 } } } }\n"
           "node { name: \"loss\" op: \"ExpandDims\" input: \"sce\" input: "
           "\"dim\" " +
           t64 +
           " }\n"
           "node { name: \"y\" op: \"AddV2\" input: \"loss\" input: "
           "\"sce:1\" " +
           t64 + " }"},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {{"x0", {3, 4}}},
       intConst("labels", {2, 0, 3}) +
           "node { name: \"y\" op: \"SparseSoftmaxCrossEntropyWithLogits\" "
           "input: \"x0\" input: \"labels\" " +
           t64 + " attr { key: \"Tlabels\" value { type: DT_INT32 } } }"},
      {"Reshape",
       {{"x0", {2, 3}}},
       intConst("shape", {3, 2}) +
           "node { name: \"y\" op: \"Reshape\" input: \"x0\" input: "
           "\"shape\" " +
           t64 + " attr { key: \"Tshape\" value { type: DT_INT32 } } }"},
      {"ExpandDims",
       {{"x0", {2, 3}}},
       "node { name: \"dim\" op: \"Const\" attr { key: \"dtype\" value { "
       "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: "
       "DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
       "node { name: \"y\" op: \"ExpandDims\" input: \"x0\" input: \"dim\" " +
           t64 + " attr { key: \"Tdim\" value { type: DT_INT32 } } }"},
      {"Squeeze",
       {{"x0", {2, 1, 3}}},
       "node { name: \"y\" op: \"Squeeze\" input: \"x0\" " + t64 + " }"},
      {"Transpose",
       {{"x0", {2, 3, 4}}},
       intConst("perm", {2, 0, 1}) +
           "node { name: \"y\" op: \"Transpose\" input: \"x0\" input: "
           "\"perm\" " +
           t64 + " attr { key: \"Tperm\" value { type: DT_INT32 } } }"},
      {"BroadcastTo",
       {{"x0", {3, 1}}},
       intConst("shape", {2, 3, 4}) +
           "node { name: \"y\" op: \"BroadcastTo\" input: \"x0\" input: "
           "\"shape\" " +
           t64 + " attr { key: \"Tidx\" value { type: DT_INT32 } } }"},
      {"Fill",
       {{"x0", {}}},
       intConst("dims", {2, 3}) +
           "node { name: \"y\" op: \"Fill\" input: \"dims\" input: "
           "\"x0\" " +
           t64 + " attr { key: \"index_type\" value { type: DT_INT32 } } }"},
      {"Conv2DSame",
       {{"x0", {1, 4, 4, 2}}, {"x1", {3, 3, 2, 3}}},
       conv2D("SAME", 1)},
      {"Conv2DValidStride2",
       {{"x0", {2, 5, 5, 1}}, {"x1", {2, 2, 1, 2}}},
       conv2D("VALID", 2)},
      // NCHW with EXPLICIT padding: the rules pass the layout and the
      // paddings on to the backprops.
      {"Conv2DNCHWExplicit",
       {{"x0", {1, 2, 4, 5}}, {"x1", {3, 2, 2, 3}}},
       "node { name: \"y\" op: \"Conv2D\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"strides\" value { list { i: 1 i: 1 i: 2 i: 1 } } } "
           "attr { key: \"padding\" value { s: \"EXPLICIT\" } } attr { key: "
           "\"explicit_paddings\" value { list { i: 0 i: 0 i: 0 i: 0 i: 1 i: "
           "2 i: 0 i: 1 } } } attr { key: \"data_format\" value { s: "
           "\"NCHW\" } } }"},
      {"AvgPoolNCHW",
       {{"x0", {1, 2, 5, 4}}},
       "node { name: \"y\" op: \"AvgPool\" input: \"x0\" " + t64 +
           " attr { key: \"ksize\" value { list { i: 1 i: 1 i: 3 i: 2 } } } "
           "attr { key: \"strides\" value { list { i: 1 i: 1 i: 2 i: 2 } } } "
           "attr { key: \"padding\" value { s: \"SAME\" } } attr { key: "
           "\"data_format\" value { s: \"NCHW\" } } }"},
      // 3-D, NDHWC and NCDHW: the rules' backprop ops run on the kernels.
      {"Conv3D",
       {{"x0", {1, 3, 4, 3, 2}}, {"x1", {2, 2, 2, 2, 2}}},
       "node { name: \"y\" op: \"Conv3D\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"strides\" value { list { i: 1 i: 1 i: 2 i: 1 i: "
           "1 } } } attr { key: \"padding\" value { s: \"SAME\" } } }"},
      {"Conv3DNCDHW",
       {{"x0", {1, 2, 3, 3, 4}}, {"x1", {2, 1, 2, 2, 1}}},
       "node { name: \"y\" op: \"Conv3D\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 i: "
           "2 } } } attr { key: \"padding\" value { s: \"VALID\" } } attr "
           "{ key: \"data_format\" value { s: \"NCDHW\" } } }"},
      // (float32 only: windows of two, values spread, so that the step of
      // the float differences moves no maximum)
      {"MaxPool3D",
       {{"x0", {1, 2, 4, 2, 2}, D::Spread}},
       "node { name: \"y\" op: \"MaxPool3D\" input: \"x0\" attr { key: "
       "\"T\" value { type: DT_FLOAT } } attr { key: \"ksize\" value { list "
       "{ i: 1 i: 1 i: 2 i: 1 i: 1 } } } attr { key: \"strides\" value { "
       "list { i: 1 i: 1 i: 2 i: 1 i: 1 } } } attr { key: \"padding\" value "
       "{ s: \"VALID\" } } }",
       "y",
       false,
       /*float32=*/true},
      {"AvgPool3D",
       {{"x0", {1, 3, 3, 2, 2}}},
       "node { name: \"y\" op: \"AvgPool3D\" input: \"x0\" " + t64 +
           " attr { key: \"ksize\" value { list { i: 1 i: 2 i: 2 i: 2 i: 1 } "
           "} } attr { key: \"strides\" value { list { i: 1 i: 2 i: 1 i: 1 "
           "i: 1 } } } attr { key: \"padding\" value { s: \"SAME\" } } }"},
      {"MaxPool", {{"x0", {1, 4, 4, 2}}}, pool("MaxPool", "VALID")},
      {"MaxPoolSame", {{"x0", {1, 3, 3, 1}}}, pool("MaxPool", "SAME")},
      {"AvgPool", {{"x0", {1, 4, 4, 2}}}, pool("AvgPool", "SAME")},
      {"Select",
       {{"x0", {2, 2}}, {"x1", {2, 2}}},
       "node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { "
       "type: DT_BOOL } } attr { key: \"value\" value { tensor { dtype: "
       "DT_BOOL tensor_shape { dim { size: 2 } dim { size: 2 } } bool_val: "
       "true bool_val: false bool_val: false bool_val: true } } } }\n"
       "node { name: \"y\" op: \"Select\" input: \"c\" input: \"x0\" "
       "input: \"x1\" " +
           t64 + " }"},
      {"StridedSlice",
       {{"x0", {4, 3}}},
       intConst("begin", {1, 0}) + intConst("end", {4, 3}) +
           intConst("strides", {2, 2}) +
           "node { name: \"y\" op: \"StridedSlice\" input: \"x0\" input: "
           "\"begin\" input: \"end\" input: \"strides\" " +
           t64 + " attr { key: \"Index\" value { type: DT_INT32 } } }"},
      {"Slice",
       {{"x0", {3, 4}}},
       intConst("begin", {1, 1}) + intConst("size", {2, 2}) +
           "node { name: \"y\" op: \"Slice\" input: \"x0\" input: "
           "\"begin\" input: \"size\" " +
           t64 + " attr { key: \"Index\" value { type: DT_INT32 } } }"},
      {"Pad",
       {{"x0", {2, 3}}},
       "node { name: \"paddings\" op: \"Const\" attr { key: \"dtype\" "
       "value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
       "dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } "
       "int_val: 1 int_val: 0 int_val: 2 int_val: 1 } } } }\n"
       "node { name: \"y\" op: \"Pad\" input: \"x0\" input: "
       "\"paddings\" " +
           t64 + " attr { key: \"Tpaddings\" value { type: DT_INT32 } } }"},
      {"ConcatV2",
       {{"x0", {2, 1}}, {"x1", {2, 3}}},
       "node { name: \"axis\" op: \"Const\" attr { key: \"dtype\" value "
       "{ type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: "
       "DT_INT32 tensor_shape { } int_val: -1 } } } }\n"
       "node { name: \"y\" op: \"ConcatV2\" input: \"x0\" input: \"x1\" "
       "input: \"axis\" attr { key: \"N\" value { i: 2 } } " +
           t64 + " attr { key: \"Tidx\" value { type: DT_INT32 } } }"},
      {"BatchMatMulV2",
       {{"x0", {2, 2, 3}}, {"x1", {2, 3, 2}}},
       binaryCase("BatchMatMulV2")},
      {"BatchMatMulV2Broadcast",
       {{"x0", {2, 1, 2, 3}}, {"x1", {3, 3, 2}}},
       binaryCase("BatchMatMulV2")},
      {"BatchMatMulV2Adjoint",
       {{"x0", {2, 3, 2}}, {"x1", {2, 2, 3}}},
       "node { name: \"y\" op: \"BatchMatMulV2\" input: \"x0\" input: "
       "\"x1\" " +
           t64 +
           " attr { key: \"adj_x\" value { b: true } } attr { key: "
           "\"adj_y\" value { b: true } } }"},
      {"SquaredDifference",
       {{"x0", {2, 3}}, {"x1", {3}}},
       binaryCase("SquaredDifference")},
      {"Pow", {{"x0", {2, 3}, D::Positive}, {"x1", {3}}}, binaryCase("Pow")},
      {"Atan2",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("Atan2")},
      {"Softplus", {{"x0", {2, 3}}}, unaryCase("Softplus")},
      {"ReverseV2",
       {{"x0", {2, 3}}},
       intConst("axis", {1}) +
           "node { name: \"y\" op: \"ReverseV2\" input: \"x0\" input: "
           "\"axis\" " +
           t64 + " }"},
      {"CheckNumerics",
       {{"x0", {2, 3}}},
       "node { name: \"y\" op: \"CheckNumerics\" input: \"x0\" " + t64 +
           " attr { key: \"message\" value { s: \"m\" } } }"},
      {"CheckNumericsV2",
       {{"x0", {2, 3}}},
       "node { name: \"y\" op: \"CheckNumericsV2\" input: \"x0\" " + t64 +
           " attr { key: \"message\" value { s: \"m\" } } }"},
      {"Softsign", {{"x0", {2, 3}, D::AwayFromZero}}, unaryCase("Softsign")},
      {"Tile",
       {{"x0", {2, 3}}},
       intConst("multiples", {2, 3}) +
           "node { name: \"y\" op: \"Tile\" input: \"x0\" input: "
           "\"multiples\" " +
           t64 + " attr { key: \"Tmultiples\" value { type: DT_INT32 } } }"},
      {"FusedBatchNormV3Training",
       {{"x0", {2, 2, 2, 3}}, {"x1", {3}, D::Positive}, {"x2", {3}}},
       fusedBatchNorm(true),
       "y",
       false,
       /*float32=*/true},
      {"FusedBatchNormV3Inference",
       {{"x0", {2, 2, 2, 3}}, {"x1", {3}, D::Positive}, {"x2", {3}}},
       fusedBatchNorm(false),
       "y",
       false,
       /*float32=*/true},
      // Calls: SymbolicGradient of a generated gradient function, through
      // a call op and a PartitionedCall, nested.
      {"FunctionCalls",
       {{"x0", {3}}, {"x1", {3}}},
       "node { name: \"c\" op: \"poly\" input: \"x0\" input: \"x1\" }\n"
       "node { name: \"y\" op: \"PartitionedCall\" input: \"c\" input: "
       "\"x0\" attr { key: \"Tin\" value { list { type: DT_DOUBLE type: "
       "DT_DOUBLE } } } attr { key: \"Tout\" value { list { type: DT_DOUBLE "
       "} } } attr { key: \"f\" value { func { name: \"poly\" } } } }\n"
       "library { function { signature { name: \"poly\" input_arg { name: "
       "\"x\" type: DT_DOUBLE } input_arg { name: \"y\" type: DT_DOUBLE } "
       "output_arg { name: \"z\" type: DT_DOUBLE } }\n"
       "node_def { name: \"m\" op: \"Mul\" input: \"x\" input: \"x\" " +
           t64 +
           " }\n"
           "node_def { name: \"t\" op: \"inner\" input: \"y\" }\n"
           "node_def { name: \"s\" op: \"AddV2\" input: \"m:z:0\" input: "
           "\"t:r:0\" " +
           t64 +
           " }\n"
           "ret { key: \"z\" value: \"s:z:0\" } }\n"
           "function { signature { name: \"inner\" input_arg { name: \"q\" "
           "type: DT_DOUBLE } output_arg { name: \"r\" type: DT_DOUBLE } }\n"
           "node_def { name: \"e\" op: \"Exp\" input: \"q\" " +
           t64 +
           " }\n"
           "ret { key: \"r\" value: \"e:y:0\" } } }"},
      {"SwitchMergeTrue", {{"x0", {3}}}, switchMerge(true)},
      {"SwitchMergeFalse", {{"x0", {3}}}, switchMerge(false)},
      {"While", {{"x0", {2}}, {"x1", {2}}}, whileCase()},
      {"DivNoNan",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("DivNoNan")},
      // Piecewise constant: no gradient, which differences confirm away
      // from the steps.
      {"FloorDiv",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("FloorDiv")},
      {"FloorMod",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("FloorMod")},
      {"TruncateDiv",
       {{"x0", {2, 3}}, {"x1", {3}, D::AwayFromZero}},
       binaryCase("TruncateDiv")},
      // Second-order rules: the gradient helpers as ops of their own.
      {"TanhGrad", {{"x0", {2, 3}}, {"x1", {2, 3}}}, binaryCase("TanhGrad")},
      {"SigmoidGrad",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       binaryCase("SigmoidGrad")},
      {"SqrtGrad",
       {{"x0", {3}, D::Positive}, {"x1", {3}}},
       binaryCase("SqrtGrad")},
      {"RsqrtGrad", {{"x0", {3}}, {"x1", {3}}}, binaryCase("RsqrtGrad")},
      {"ReciprocalGrad",
       {{"x0", {3}}, {"x1", {3}}},
       binaryCase("ReciprocalGrad")},
      {"ReluGrad",
       {{"x0", {2, 3}}, {"x1", {2, 3}, D::AwayFromZero}},
       binaryCase("ReluGrad")},
      {"Relu6Grad",
       {{"x0", {2, 4}}, {"x1", {2, 4}, D::Spread}},
       binaryCase("Relu6Grad")},
      {"EluGrad",
       {{"x0", {2, 3}}, {"x1", {2, 3}, D::AwayFromZero}},
       binaryCase("EluGrad")},
      {"BiasAddGrad",
       {{"x0", {2, 2, 3}}},
       "node { name: \"y\" op: \"BiasAddGrad\" input: \"x0\" " + t64 + " }"},
      {"BiasAddGradNCHW",
       {{"x0", {2, 3, 2, 2}}},
       "node { name: \"y\" op: \"BiasAddGrad\" input: \"x0\" " + t64 +
           " attr { key: \"data_format\" value { s: \"NCHW\" } } }"},
      {"Conv2DBackpropInput",
       {{"x0", {3, 3, 2, 3}}, {"x1", {1, 4, 4, 3}}},
       intConst("sizes", {1, 4, 4, 2}) +
           "node { name: \"y\" op: \"Conv2DBackpropInput\" input: \"sizes\" "
           "input: \"x0\" input: \"x1\" " +
           t64 +
           " attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } "
           "} attr { key: \"padding\" value { s: \"SAME\" } } }"},
      {"Conv2DBackpropFilter",
       {{"x0", {2, 5, 5, 1}}, {"x1", {2, 2, 2, 2}}},
       intConst("sizes", {2, 2, 1, 2}) +
           "node { name: \"y\" op: \"Conv2DBackpropFilter\" input: \"x0\" "
           "input: \"sizes\" input: \"x1\" " +
           t64 +
           " attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } "
           "} attr { key: \"padding\" value { s: \"VALID\" } } }"},
      {"AvgPoolGrad",
       {{"x0", {1, 2, 2, 2}}},
       intConst("shape", {1, 4, 4, 2}) +
           "node { name: \"y\" op: \"AvgPoolGrad\" input: \"shape\" input: "
           "\"x0\" " +
           t64 +
           " attr { key: \"ksize\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
           "attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
           "attr { key: \"padding\" value { s: \"SAME\" } } }"},
      {"StridedSliceGrad",
       {{"x0", {2, 2}}},
       intConst("shape", {4, 3}) + intConst("begin", {1, 0}) +
           intConst("end", {4, 3}) + intConst("strides", {2, 2}) +
           "node { name: \"y\" op: \"StridedSliceGrad\" input: \"shape\" "
           "input: \"begin\" input: \"end\" input: \"strides\" input: \"x0\" " +
           t64 + " attr { key: \"Index\" value { type: DT_INT32 } } }"},
      {"Pack",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       "node { name: \"y\" op: \"Pack\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"axis\" value "
           "{ i: 1 } } }"},
      // The middle slice is unused: its gradient is zeros.
      {"Unpack",
       {{"x0", {2, 3}}},
       "node { name: \"u\" op: \"Unpack\" input: \"x0\" " + t64 +
           " attr { key: \"num\" value { i: 3 } } attr { key: \"axis\" value "
           "{ i: 1 } } }\n"
           "node { name: \"y\" op: \"Mul\" input: \"u\" input: \"u:2\" " +
           t64 + " }"},
      {"IdentityN",
       {{"x0", {3}}, {"x1", {3}}},
       "node { name: \"i\" op: \"IdentityN\" input: \"x0\" input: \"x1\" "
       "attr { key: \"T\" value { list { type: DT_DOUBLE type: DT_DOUBLE } } "
       "} }\n"
       "node { name: \"y\" op: \"Mul\" input: \"i\" input: \"i:1\" " +
           t64 + " }"},
      // Segment -1 drops row 1; segment 1 is empty.
      {"UnsortedSegmentSum",
       {{"x0", {4, 2}}},
       intConst("ids", {0, -1, 2, 0}) +
           "node { name: \"n\" op: \"Const\" attr { key: \"dtype\" value { "
           "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: "
           "DT_INT32 tensor_shape { } int_val: 3 } } } }\n"
           "node { name: \"y\" op: \"UnsortedSegmentSum\" input: \"x0\" "
           "input: \"ids\" input: \"n\" " +
           t64 +
           " attr { key: \"Tindices\" value { type: DT_INT32 } } attr { key: "
           "\"Tnumsegments\" value { type: DT_INT32 } } }"},
      // Outside replicas a cross-replica sum is its own input's: the rule
      // (the sum of the gradients) is then the identity. Replicated, see
      // test/Runtime/replicated-run.test.
      {"CrossReplicaSum",
       {{"x0", {3}}},
       intConst("groups", {}) +
           "node { name: \"s\" op: \"CrossReplicaSum\" input: \"x0\" "
           "input: \"groups\" " +
           t64 +
           " }\n"
           "node { name: \"y\" op: \"Mul\" input: \"s\" input: \"x0\" " +
           t64 + " }"},
      {"Print",
       {{"x0", {3}}, {"x1", {2}}},
       "node { name: \"y\" op: \"Print\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"U\" value { list { type: DT_DOUBLE } } } attr { "
           "key: \"message\" value { s: \"GradientTest: \" } } }"},
      {"RefSwitch", {{"x0", {3}}}, switchMerge(true, "RefSwitch")},
      {"ProdAxis1", {{"x0", {2, 3}}}, reduction("Prod", {1}, false)},
      {"ProdKeepDims", {{"x0", {2, 3, 2}}}, reduction("Prod", {2, 0}, true)},
      // A zero factor: TensorFlow's rule divides by nothing.
      {"ProdWithZero",
       {{"x0", {2, 3}}},
       floatConst("mask", {1, 0, 1, 1, 1, 1}) +
           "node { name: \"shape\" op: \"Const\" attr { key: \"dtype\" value "
           "{ type: DT_INT32 } } attr { key: \"value\" value { tensor { "
           "dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 "
           "int_val: 3 } } } }\n"
           "node { name: \"m\" op: \"Reshape\" input: \"mask\" input: "
           "\"shape\" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
           "node { name: \"m64\" op: \"Cast\" input: \"m\" attr { key: "
           "\"SrcT\" value { type: DT_FLOAT } } attr { key: \"DstT\" value { "
           "type: DT_DOUBLE } } }\n"
           "node { name: \"masked\" op: \"Mul\" input: \"x0\" input: "
           "\"m64\" " +
           t64 + " }\n" + intConst("axes", {1}) +
           "node { name: \"y\" op: \"Prod\" input: \"masked\" input: "
           "\"axes\" " +
           t64 + " attr { key: \"Tidx\" value { type: DT_INT32 } } }"},
      // The bounds as a tensor of t's shape (below -0.5) and a scalar
      // (above 0.5), t on both sides of them.
      {"ClipByValue",
       {{"x0", {2, 3}, D::Spread},
        {"x1", {2, 3}, D::Positive},
        {"x2", {}, D::Positive}},
       "node { name: \"low\" op: \"Neg\" input: \"x1\" " + t64 +
           " }\n"
           "node { name: \"y\" op: \"ClipByValue\" input: \"x0\" input: "
           "\"low\" "
           "input: \"x2\" " +
           t64 + " }"},
      {"MulNoNan", {{"x0", {2, 3}}, {"x1", {3}}}, binaryCase("MulNoNan")},
      {"L2Loss", {{"x0", {2, 3}}}, unaryCase("L2Loss")},
      // GatherNd's gradient scatters back (a repeated tuple sums), and
      // ScatterNd's gathers.
      {"GatherNd",
       {{"x0", {3, 2, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 2 } } int_val: [2, 1, 0, 0, "
       "2, 1] } } } }\n"
       "node { name: \"y\" op: \"GatherNd\" input: \"x0\" input: \"i\" "
       "attr { key: \"Tparams\" value { type: DT_DOUBLE } } attr { key: "
       "\"Tindices\" value { type: DT_INT32 } } }"},
      {"ScatterNd",
       {{"x0", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 3] } "
       "} "
       "} }\n" +
           intConst("shape", {4, 2}) +
           "node { name: \"y\" op: \"ScatterNd\" input: \"i\" input: \"x0\" "
           "input: \"shape\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      // TensorLists: gradients flow through lists as lists (TensorFlow's
      // list_ops.py rules).
      {"TensorListStack",
       {{"x0", {3, 2}}},
       listFromTensor("x0") +
           listNode("y", "TensorListStack", "\"list\" input: \"shape\"")},
      {"TensorListGetItem",
       {{"x0", {3, 2}}},
       listFromTensor("x0") + intConst("one", {1}) +
           "node { name: \"index\" op: \"Squeeze\" input: \"one\" attr { "
           "key: \"T\" value { type: DT_INT32 } } }\n" +
           listNode("y", "TensorListGetItem",
                    "\"list\" input: \"index\" input: \"shape\"")},
      {"TensorListSetItem",
       {{"x0", {3, 2}}, {"x1", {2}}},
       listFromTensor("x0") + intConst("one", {1}) +
           "node { name: \"index\" op: \"Squeeze\" input: \"one\" attr { "
           "key: \"T\" value { type: DT_INT32 } } }\n" +
           listNode("set", "TensorListSetItem",
                    "\"list\" input: \"index\" input: \"x1\"") +
           listNode("y", "TensorListStack", "\"set\" input: \"shape\"")},
      {"TensorListPushPop",
       {{"x0", {3, 2}}, {"x1", {2}}},
       listFromTensor("x0") +
           listNode("pushed", "TensorListPushBack", "\"list\" input: \"x1\"") +
           listNode("popped", "TensorListPopBack",
                    "\"pushed\" input: \"shape\"") +
           listNode("popped_again", "TensorListPopBack",
                    "\"popped\" input: \"shape\"") +
           "node { name: \"y\" op: \"Mul\" input: \"popped:1\" input: "
           "\"popped_again:1\" " +
           t64 + " }"},
      // Einsum: products, a label summed in one input only, a dot product,
      // a transpose.
      {"EinsumMatMul",
       {{"x0", {2, 3}}, {"x1", {3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"ij,jk->ik\" } } }"},
      {"EinsumBatched",
       {{"x0", {2, 3, 4}}, {"x1", {2, 5, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"bij,bkj->bik\" } } }"},
      {"EinsumSummed",
       {{"x0", {3, 4}}, {"x1", {4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"ij,j->j\" } } }"},
      {"EinsumDot",
       {{"x0", {2, 3}}, {"x1", {2, 3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"ij,ij->\" } } }"},
      {"EinsumTranspose",
       {{"x0", {2, 3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"ij->ji\" } } }"},
      // Ellipses: batch dimensions alike, broadcast (1 against 3, and a
      // batch an operand lacks), an operand without one, summed labels
      // around one, one in the middle, and one of 1s the output drops.
      {"EinsumEllipsis",
       {{"x0", {2, 2, 3}}, {"x1", {2, 3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"...ij,...jk->...ik\" } } }"},
      {"EinsumEllipsisBroadcast",
       {{"x0", {1, 2, 3}}, {"x1", {3, 3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"...ij,...jk->...ik\" } } }"},
      {"EinsumEllipsisRanks",
       {{"x0", {2, 3}}, {"x1", {2, 3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"...ij,...jk->...ik\" } } }"},
      {"EinsumEllipsisOneOperand",
       {{"x0", {2, 2, 3}}, {"x1", {3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"...ij,jk->...ik\" } } }"},
      {"EinsumEllipsisSummed",
       {{"x0", {2, 3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"...ij->...i\" } } }"},
      {"EinsumEllipsisMiddle",
       {{"x0", {2, 3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"i...j->j...i\" } } }"},
      {"EinsumEllipsisDropped",
       {{"x0", {1, 2, 3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"...ij->ij\" } } }"},
      // Diagonals: read alone, summed (a trace), in a product, reduced
      // around, written (i->ii).
      {"EinsumDiagonal",
       {{"x0", {3, 3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"ii->i\" } } }"},
      {"EinsumTrace",
       {{"x0", {3, 3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"ii->\" } } }"},
      {"EinsumDiagonalProduct",
       {{"x0", {2, 2, 3}}, {"x1", {3, 4}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"iij,jk->ik\" } } }"},
      {"EinsumDiagonalSummed",
       {{"x0", {2, 3, 2}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"iji->j\" } } }"},
      {"EinsumInflate",
       {{"x0", {3}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" " + t64 +
           " attr { key: \"N\" value { i: 1 } } attr { key: \"equation\" "
           "value { s: \"i->ii\" } } }"},
      {"EinsumEllipsisSummedBoth",
       {{"x0", {2, 3, 4}}, {"x1", {4, 5}}},
       "node { name: \"y\" op: \"Einsum\" input: \"x0\" input: \"x1\" " + t64 +
           " attr { key: \"N\" value { i: 2 } } attr { key: \"equation\" "
           "value { s: \"b...j,jk->k...\" } } }"},
      // LRN (float only: a float graph), the resize ops (to a size that is not
      // a multiple, with each coordinate map).
      {"LRN",
       {{"x0", {1, 2, 2, 5}, D::Positive}},
       "node { name: \"y\" op: \"LRN\" input: \"x0\" attr { key: \"T\" value "
       "{ type: DT_FLOAT } } attr { key: \"depth_radius\" value { i: 2 } } "
       "attr { key: \"alpha\" value { f: 0.5 } } attr { key: \"beta\" value "
       "{ f: 0.75 } } }",
       "y",
       false,
       /*float32=*/true},
      {"ResizeBilinear",
       {{"x0", {2, 3, 4, 2}}},
       intConst("size", {5, 3}) +
           "node { name: \"y\" op: \"ResizeBilinear\" input: \"x0\" input: "
           "\"size\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: "
           "\"half_pixel_centers\" value { b: true } } }",
       "y",
       false,
       /*float32=*/true},
      {"ResizeNearestNeighbor",
       {{"x0", {1, 3, 4, 2}}},
       intConst("size", {5, 7}) +
           "node { name: \"y\" op: \"ResizeNearestNeighbor\" input: \"x0\" "
           "input: \"size\" " +
           t64 + " attr { key: \"align_corners\" value { b: true } } }"},
      // TopKV2: the gradient of the chosen values goes back to their places
      // (random values: no ties).
      {"TopKV2",
       {{"x0", {3, 5}}},
       intConst("k", {2}) +
           "node { name: \"kk\" op: \"Squeeze\" input: \"k\" attr { key: "
           "\"T\" value { type: DT_INT32 } } }\n"
           "node { name: \"y\" op: \"TopKV2\" input: \"x0\" input: \"kk\" " +
           t64 + " }"},
      // Sorted segments (segment 1 empty, but for Max and Min: their identity,
      // the lowest double, would swamp the sum the check differentiates);
      // Prod away from zero.
      {"SegmentSum",
       {{"x0", {5, 2}}},
       intConst("ids", {0, 0, 2, 3, 3}) +
           "node { name: \"y\" op: \"SegmentSum\" input: \"x0\" input: "
           "\"ids\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"SegmentMean",
       {{"x0", {5, 2}}},
       intConst("ids", {0, 0, 2, 3, 3}) +
           "node { name: \"y\" op: \"SegmentMean\" input: \"x0\" input: "
           "\"ids\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"SegmentProd",
       {{"x0", {5, 2}, D::AwayFromZero}},
       intConst("ids", {0, 0, 2, 3, 3}) +
           "node { name: \"y\" op: \"SegmentProd\" input: \"x0\" input: "
           "\"ids\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"SegmentMax",
       {{"x0", {5, 2}}},
       intConst("ids", {0, 0, 1, 2, 2}) +
           "node { name: \"y\" op: \"SegmentMax\" input: \"x0\" input: "
           "\"ids\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"SegmentMin",
       {{"x0", {5, 2}}},
       intConst("ids", {0, 0, 1, 2, 2}) +
           "node { name: \"y\" op: \"SegmentMin\" input: \"x0\" input: "
           "\"ids\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      // The TensorScatter ops: the tensor and the updates both get gradients
      // (random values: Min and Max have no ties).
      {"TensorScatterUpdate",
       {{"x0", {4, 2}}, {"x1", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 2] } "
       "} } }\n"
       "node { name: \"y\" op: \"TensorScatterUpdate\" input: \"x0\" input: "
       "\"i\" "
       "input: \"x1\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"TensorScatterAdd",
       {{"x0", {4, 2}}, {"x1", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 2] } "
       "} } }\n"
       "node { name: \"y\" op: \"TensorScatterAdd\" input: \"x0\" input: \"i\" "
       "input: \"x1\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"TensorScatterSub",
       {{"x0", {4, 2}}, {"x1", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 2] } "
       "} } }\n"
       "node { name: \"y\" op: \"TensorScatterSub\" input: \"x0\" input: \"i\" "
       "input: \"x1\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"TensorScatterMin",
       {{"x0", {4, 2}}, {"x1", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 2] } "
       "} } }\n"
       "node { name: \"y\" op: \"TensorScatterMin\" input: \"x0\" input: \"i\" "
       "input: \"x1\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      {"TensorScatterMax",
       {{"x0", {4, 2}}, {"x1", {3, 2}}},
       "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: "
       "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
       "tensor_shape { dim { size: 3 } dim { size: 1 } } int_val: [3, 0, 2] } "
       "} } }\n"
       "node { name: \"y\" op: \"TensorScatterMax\" input: \"x0\" input: \"i\" "
       "input: \"x1\" " +
           t64 + " attr { key: \"Tindices\" value { type: DT_INT32 } } }"},
      // num_lower 1, num_upper -1 (the whole upper triangle), as scalars.
      {"MatrixBandPart",
       {{"x0", {2, 3, 4}}},
       intConst("bounds", {1, -1}) + intConst("one", {1}) +
           intConst("zero", {0}) +
           "node { name: \"lower\" op: \"Slice\" input: \"bounds\" input: "
           "\"zero\" input: \"one\" attr { key: \"T\" value { type: DT_INT32 "
           "} } attr { key: \"Index\" value { type: DT_INT32 } } }\n"
           "node { name: \"upper\" op: \"Slice\" input: \"bounds\" input: "
           "\"one\" input: \"one\" attr { key: \"T\" value { type: DT_INT32 "
           "} } attr { key: \"Index\" value { type: DT_INT32 } } }\n"
           "node { name: \"l\" op: \"Squeeze\" input: \"lower\" attr { key: "
           "\"T\" value { type: DT_INT32 } } }\n"
           "node { name: \"u\" op: \"Squeeze\" input: \"upper\" attr { key: "
           "\"T\" value { type: DT_INT32 } } }\n"
           "node { name: \"y\" op: \"MatrixBandPart\" input: \"x0\" input: "
           "\"l\" input: \"u\" " +
           t64 + " attr { key: \"Tindex\" value { type: DT_INT32 } } }"},
      {"Cumsum",
       {{"x0", {2, 3}}},
       intConst("axis", {1}) +
           "node { name: \"a\" op: \"Squeeze\" input: \"axis\" attr { key: "
           "\"T\" value { type: DT_INT32 } } }\n"
           "node { name: \"y\" op: \"Cumsum\" input: \"x0\" input: \"a\" " +
           t64 + " attr { key: \"exclusive\" value { b: true } } }"},
      {"CumprodReverse",
       {{"x0", {3, 2}, D::AwayFromZero}},
       intConst("axis", {0}) +
           "node { name: \"a\" op: \"Squeeze\" input: \"axis\" attr { key: "
           "\"T\" value { type: DT_INT32 } } }\n"
           "node { name: \"y\" op: \"Cumprod\" input: \"x0\" input: \"a\" " +
           t64 + " attr { key: \"reverse\" value { b: true } } }"},
      // Along other axes: a dense gradient by UnsortedSegmentSum.
      {"GatherV2Axis1", {{"x0", {2, 4, 3}}}, gather("y", "x0", {3, 0, 3}, 1)},
      {"GatherV2AxisLast", {{"x0", {3, 2}}}, gather("y", "x0", {1, 1, 0}, -1)},
      // v1 loops: x0 reaches y through the loop and around it.
      {"V1While",
       {{"x0", {2}}, {"x1", {2}}},
       v1Loop("while", "x0", "x1", 3, tanhStep("while")) +
           "node { name: \"y\" op: \"Mul\" input: \"while/Exit_1\" "
           "input: \"x0\" " +
           t64 + " }"},
      // A v1 conditional in the body: tanh(x) where sum(x) > 0, else x * w.
      {"V1WhileWithCond",
       {{"x0", {2}}, {"x1", {2}}},
       v1Loop("while", "x0", "x1", 3,
              [](const std::string &x, const std::string &w) {
                auto pivoted = [](const char *name, const char *type,
                                  const std::string &value) {
                  return std::string("node { name: \"while/") + name +
                         "\" op: \"Const\" input: \"^while/Identity\" attr { "
                         "key: \"dtype\" value { type: " +
                         type +
                         " } } attr { key: \"value\" value { tensor { dtype: " +
                         type + " " + value + " } } } }\n";
                };
                return std::pair<std::string, std::string>{
                    pivoted("axes", "DT_INT32",
                            "tensor_shape { dim { size: 1 } } int_val: 0") +
                        pivoted("zero_d", "DT_DOUBLE",
                                "tensor_shape { } double_val: 0") +
                        "node { name: \"while/sum\" op: \"Sum\" input: \"" + x +
                        "\" input: \"while/axes\" " + t64 +
                        " attr { key: \"Tidx\" value { type: DT_INT32 } } }\n"
                        "node { name: \"while/p\" op: \"Greater\" input: "
                        "\"while/sum\" input: \"while/zero_d\" " +
                        t64 +
                        " }\n"
                        "node { name: \"while/sw\" op: \"Switch\" input: \"" +
                        x + "\" input: \"while/p\" " + t64 +
                        " }\n"
                        "node { name: \"while/t\" op: \"Tanh\" input: "
                        "\"while/sw:1\" " +
                        t64 +
                        " }\n"
                        // tf.cond switches the values a branch captures.
                        "node { name: \"while/sw_w\" op: \"Switch\" input: "
                        "\"" +
                        w + "\" input: \"while/p\" " + t64 +
                        " }\n"
                        "node { name: \"while/f\" op: \"Mul\" input: "
                        "\"while/sw\" input: \"while/sw_w\" " +
                        t64 +
                        " }\n"
                        "node { name: \"while/m\" op: \"Merge\" input: "
                        "\"while/f\" input: \"while/t\" " +
                        t64 + " attr { key: \"N\" value { i: 2 } } }\n",
                    "while/m"};
              }) +
           "node { name: \"y\" op: \"Identity\" input: \"while/Exit_1\" " +
           t64 + " }"},
      {"V1WhileNested",
       {{"x0", {2}}, {"x1", {2}}},
       v1Loop("while", "x0", "x1", 2,
              [](const std::string &x, const std::string &w) {
                return std::pair<std::string, std::string>{
                    v1Loop("while/inner", x, w, 2, tanhStep("while/inner"),
                           "while/Identity"),
                    "while/inner/Exit_1"};
              }) +
           "node { name: \"y\" op: \"Identity\" input: "
           "\"while/Exit_1\" " +
           t64 + " }"},
      {"Case", {{"x0", {3}}, {"x1", {3}}}, caseCase()},
      {"IfThen", {{"x0", {3}}, {"x1", {3}}}, ifCase(true)},
      {"IfElse", {{"x0", {3}}, {"x1", {3}}}, ifCase(false)},
      // Sparse gradients: GatherV2's IndexedSlices, summed where indices
      // repeat, concatenated with other slices or dense gradients.
      {"GatherV2", {{"x0", {4, 3}}}, gather("y", "x0", {2, 0, 2})},
      {"GatherV2Twice",
       {{"x0", {4, 2}}},
       gather("g1", "x0", {1, 3}) + gather("g2", "x0", {3, 3}) +
           "node { name: \"y\" op: \"Mul\" input: \"g1\" input: \"g2\" " + t64 +
           " }"},
      {"GatherV2AndDense",
       {{"x0", {3, 2}}},
       gather("g", "x0", {0, 2}) +
           "node { name: \"axis0\" op: \"Const\" attr { key: \"dtype\" "
           "value { type: DT_INT32 } } attr { key: \"value\" value { tensor "
           "{ dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
           "node { name: \"y\" op: \"ConcatV2\" input: \"g\" input: "
           "\"x0\" input: \"axis0\" attr { key: \"N\" value { i: 2 } } " +
           t64 + " attr { key: \"Tidx\" value { type: DT_INT32 } } }"},
      {"Log1p", {{"x0", {2, 3}, D::Positive}}, unaryCase("Log1p")},
      {"Expm1", {{"x0", {2, 3}}}, unaryCase("Expm1")},
      {"Erf", {{"x0", {2, 3}}}, unaryCase("Erf")},
      {"Erfc", {{"x0", {2, 3}}}, unaryCase("Erfc")},
      {"Lgamma", {{"x0", {2, 3}, D::Positive}}, unaryCase("Lgamma")},
      {"Digamma", {{"x0", {2, 3}, D::Positive}}, unaryCase("Digamma")},
      // The order has no gradient: a constant.
      {"Zeta",
       {{"x0", {2, 3}, D::Positive}},
       doubleConst("s", {2, 3.5, 5}) +
           "node { name: \"y\" op: \"Zeta\" input: \"s\" input: \"x0\" " + t64 +
           " }"},
      {"Polygamma",
       {{"x0", {2, 3}, D::Positive}},
       doubleConst("n", {0, 1, 2}) +
           "node { name: \"y\" op: \"Polygamma\" input: \"n\" input: "
           "\"x0\" " +
           t64 + " }"},
      {"Sin", {{"x0", {2, 3}}}, unaryCase("Sin")},
      {"Cos", {{"x0", {2, 3}}}, unaryCase("Cos")},
      {"Tan", {{"x0", {2, 3}}}, unaryCase("Tan")},
      {"Asin", {{"x0", {2, 3}, D::Inside}}, unaryCase("Asin")},
      {"Acos", {{"x0", {2, 3}, D::Inside}}, unaryCase("Acos")},
      {"Atan", {{"x0", {2, 3}}}, unaryCase("Atan")},
      {"Sinh", {{"x0", {2, 3}}}, unaryCase("Sinh")},
      {"Cosh", {{"x0", {2, 3}}}, unaryCase("Cosh")},
      {"Asinh", {{"x0", {2, 3}}}, unaryCase("Asinh")},
      {"Acosh", {{"x0", {2, 3}, D::AboveOne}}, unaryCase("Acosh")},
      {"Atanh", {{"x0", {2, 3}, D::Inside}}, unaryCase("Atanh")},
      {"Elu", {{"x0", {2, 3}, D::AwayFromZero}}, unaryCase("Elu")},
      {"MaxAxis1", {{"x0", {3, 4}}}, reduction("Max", {1}, false)},
      {"MinKeepDims", {{"x0", {3, 4}}}, reduction("Min", {0}, true)},
      {"SelectV2Broadcast",
       {{"x0", {2, 3}}, {"x1", {3}}},
       "node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { "
       "type: DT_BOOL } } attr { key: \"value\" value { tensor { dtype: "
       "DT_BOOL tensor_shape { dim { size: 2 } dim { size: 1 } } bool_val: "
       "true bool_val: false } } } }\n"
       "node { name: \"y\" op: \"SelectV2\" input: \"c\" input: \"x0\" "
       "input: \"x1\" " +
           t64 + " }"},
      {"Split",
       {{"x0", {2, 6}}},
       "node { name: \"dim\" op: \"Const\" attr { key: \"dtype\" value { "
       "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: "
       "DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
       "node { name: \"s\" op: \"Split\" input: \"dim\" input: \"x0\" " +
           t64 +
           " attr { key: \"num_split\" value { i: 3 } } }\n"
           "node { name: \"y\" op: \"Mul\" input: \"s\" input: \"s:2\" " +
           t64 + " }"},
      {"SplitV",
       {{"x0", {5, 2}}},
       intConst("sizes", {2, 3}) +
           "node { name: \"dim\" op: \"Const\" attr { key: \"dtype\" "
           "value { type: DT_INT32 } } attr { key: \"value\" value { tensor "
           "{ dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
           "node { name: \"s\" op: \"SplitV\" input: \"x0\" input: "
           "\"sizes\" input: \"dim\" " +
           t64 +
           " attr { key: \"num_split\" value { i: 2 } } attr { key: "
           "\"Tlen\" value { type: DT_INT32 } } }\n"
           "node { name: \"y\" op: \"Neg\" input: \"s:1\" " +
           t64 + " }"},
      // A chain with fan-out: the gradient of x0 is summed from two uses.
      {"FanOutMlp",
       {{"x0", {2, 3}}, {"x1", {3, 2}}, {"x2", {2}}},
       "node { name: \"mm\" op: \"MatMul\" input: \"x0\" input: \"x1\" " + t64 +
           " }\n"
           "node { name: \"h\" op: \"BiasAdd\" input: \"mm\" input: \"x2\" " +
           t64 +
           " }\n"
           "node { name: \"t\" op: \"Tanh\" input: \"h\" " +
           t64 +
           " }\n"
           "node { name: \"y\" op: \"Mul\" input: \"t\" input: \"h\" " +
           t64 + " }"},
      // Without shape inference: Sum's axes are constant but its rank is
      // unknown.
      {"SumUnknownRank",
       {{"x0", {2, 3}}},
       reduction("Sum", {1}, false),
       "y",
       /*unknownShapes=*/true},
  };
  return c;
}

double drawValue(std::mt19937 &rng, Domain domain) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  double v = unit(rng);
  switch (domain) {
  case Domain::Any:
    return v;
  case Domain::Positive:
    return 0.5 + std::abs(v);
  case Domain::AwayFromZero:
    return v < 0 ? v - 0.3 : v + 0.3;
  case Domain::Spread:
    // Relu6 kinks at 0 and 6: stay off both.
    return 4.0 * v + (std::abs(4.0 * v) < 0.3 ? 0.5 : 0.0) + 2.0;
  case Domain::Inside:
    // Asin, Acos, Atanh: well inside (-1, 1), where they are smooth.
    return 0.8 * v;
  case Domain::AboveOne:
    return 1.5 + std::abs(v);
  }
  return v;
}

Tensor makeTensor(const Dims &shape, const std::vector<double> &values,
                  int32_t dtype = kDouble) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(i, values[i]);
  return t;
}

class GradientRules : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradientRules, MatchFiniteDifferences) {
  const GradCase &c = GetParam();
  std::string text;
  for (const Input &in : c.inputs)
    text += placeholder(in, !c.unknownShapes, c.float32);
  text += c.nodes + "\n";
  // The cotangent, fed with y's shape.
  text += std::string("node { name: \"cotangent\" op: \"Placeholder\" "
                      "attr { key: \"dtype\" value { type: ") +
          (c.float32 ? "DT_FLOAT" : "DT_DOUBLE") + " } } }\n";
  int32_t dtype = c.float32 ? kFloat : kDouble;

  MLIRContext context(MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  ScopedDiagnosticHandler collect(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  tensorflow::GraphDef graphDef;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graphDef))
      << text;
  OwningOpRef<ModuleOp> module = importGraphDef(graphDef, &context);
  ASSERT_TRUE(module) << diagnostics;

  std::mt19937 rng(12345);
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::vector<double>> xValues;
  for (const Input &in : c.inputs) {
    int64_t n = 1;
    for (int64_t d : in.shape)
      n *= d;
    std::vector<double> values(n);
    for (double &v : values)
      v = drawValue(rng, in.domain);
    xValues.push_back(values);
    feeds.emplace_back(in.name, makeTensor(in.shape, values, dtype));
  }

  // The forward value, for y's shape and the finite differences.
  auto forward =
      [&](const std::vector<std::pair<std::string, Tensor>> &f) -> Tensor {
    Executor interpreter(*module);
    auto out = interpreter.run(f, {c.y}, {});
    EXPECT_TRUE(succeeded(out)) << diagnostics;
    return succeeded(out) ? (*out)[0] : Tensor();
  };
  Tensor y = forward(feeds);
  ASSERT_TRUE(y.isValid()) << diagnostics;
  std::vector<double> r(y.numElements());
  for (double &v : r)
    v = drawValue(rng, Domain::Any);
  feeds.emplace_back("cotangent", makeTensor(y.shape(), r, dtype));

  std::vector<std::string> xs, results;
  for (const Input &in : c.inputs) {
    xs.push_back(in.name);
    results.push_back("d_" + in.name);
  }
  std::vector<std::string> ys = {c.y}, gradYs = {"cotangent"};
  graph::GraphGradientPassOptions options;
  options.ys = ys;
  options.xs = xs;
  options.gradYs = gradYs;
  options.resultNames = results;
  // Inputs no gradient reaches get zeros, which the differences check too.
  options.unconnectedGradients = "zero";
  PassManager pm(&context);
  if (!c.unknownShapes)
    pm.addPass(graph::createGraphInferShapesPass());
  pm.addPass(graph::createGraphGradientPass(options));
  ASSERT_TRUE(succeeded(pm.run(*module))) << diagnostics;

  Executor interpreter(*module);
  auto grads = interpreter.run(feeds, results, {});
  ASSERT_TRUE(succeeded(grads)) << diagnostics;

  auto loss = [&](size_t which, size_t element, double delta) {
    std::vector<std::pair<std::string, Tensor>> f;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::vector<double> values = xValues[i];
      if (i == which)
        values[element] += delta;
      f.emplace_back(c.inputs[i].name,
                     makeTensor(c.inputs[i].shape, values, dtype));
    }
    Tensor out = forward(f);
    double sum = 0;
    for (int64_t k = 0; k < out.numElements(); ++k)
      sum += out.getAsDouble(k) * r[k];
    return sum;
  };
  double eps = c.float32 ? 1e-2 : 1e-6;
  double tolerance = c.float32 ? 2e-3 : 1e-6;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor &g = (*grads)[i];
    ASSERT_EQ(g.dtype(), dtype) << results[i];
    ASSERT_EQ(g.shape(), c.inputs[i].shape) << results[i];
    for (size_t e = 0; e < xValues[i].size(); ++e) {
      double numeric = (loss(i, e, eps) - loss(i, e, -eps)) / (2 * eps);
      EXPECT_NEAR(g.getAsDouble(e), numeric,
                  tolerance * (1 + std::abs(numeric)))
          << c.name << ": d y / d " << c.inputs[i].name << "[" << e << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, GradientRules, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GradCase> &info) {
                           return info.param.name;
                         });

/// Every op with a gradient rule has a finite-difference case.
TEST(GradientRules, EveryRuleHasACase) {
  std::set<std::string> covered;
  for (const GradCase &c : cases()) {
    tensorflow::GraphDef graphDef;
    std::string text = c.nodes;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graphDef));
    for (const auto &node : graphDef.node())
      covered.insert(node.op());
  }
  // PreventGradient's rule is its error (graph-gradient-invalid.pbtxt);
  // ReadVariableOp's needs resource variables (the PyTorch oracle updates
  // variables through it with graph-minimize).
  for (const std::string &op : ops::getOpsWithGradient())
    if (op != "PreventGradient" && op != "ReadVariableOp")
      EXPECT_TRUE(covered.count(op)) << op << " has no finite-difference case";
}

//===----------------------------------------------------------------------===//
// gradient_uid colocation (TPUReplicateContext.Enter/ExitGradientColocation)
//===----------------------------------------------------------------------===//

TEST(GradientColocation, ForwardOpGetsUidCluster) {
  graph::GradientColocation colocation;
  EXPECT_FALSE(colocation.enter("host_op", "0", "gradients/uid"));
  EXPECT_EQ(colocation.getOutsideCluster(), "0.gradients/uid");
  // Nested colocations inherit the open scope.
  EXPECT_FALSE(colocation.enter("other", "7", "gradients/uid"));
  EXPECT_EQ(colocation.getOutsideCluster(), "0.gradients/uid");
  EXPECT_FALSE(colocation.exit("other"));
  EXPECT_FALSE(colocation.exit("host_op"));
  EXPECT_FALSE(colocation.getOutsideCluster());
}

TEST(GradientColocation, SameUidKeepsClusterNewUidAppends) {
  graph::GradientColocation colocation;
  EXPECT_FALSE(colocation.enter("g", "0.gradients/uid", "gradients/uid"));
  EXPECT_EQ(colocation.getOutsideCluster(), "0.gradients/uid");
  EXPECT_FALSE(colocation.exit("g"));
  EXPECT_FALSE(colocation.enter("g", "0.gradients/uid", "gradients_1/uid"));
  EXPECT_EQ(colocation.getOutsideCluster(), "0.gradients/uid.gradients_1/uid");
  EXPECT_FALSE(colocation.exit("g"));
}

TEST(GradientColocation, Errors) {
  graph::GradientColocation colocation;
  EXPECT_EQ(colocation.enter("h", "0", graph::kUnsupportedGradientUid),
            "No gradient_uid calling gradient within outside_compilation");
  graph::GradientColocation nested;
  EXPECT_FALSE(nested.enter("a", "0", "gradients/uid"));
  nested.closeOutsideScope();
  EXPECT_EQ(nested.enter("b", "1", "gradients/uid"),
            "Cannot nest gradient colocation operations outside compilation");
  graph::GradientColocation order;
  EXPECT_FALSE(order.enter("a", "", "gradients/uid"));
  EXPECT_EQ(order.exit("b"),
            "Badly nested gradient colocation, expected a, got b");
  EXPECT_EQ(order.exit("c"), "Badly nested gradient colocation: empty stack "
                             "when popping Op c");
}

} // namespace
