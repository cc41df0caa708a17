//===- OpSemanticsTest.cpp - kernels and shape functions, op by op --------===//
//
// A table of small graphs, at least one per op of the supported set, whose
// outputs were worked out by hand from TensorFlow's documented semantics.
// Each case is imported, shape-inferred with graph-infer-shapes and run by
// the reference interpreter. The fetched values must match, and since every
// input is a constant of static shape, the inferred type of every fetched
// tensor must be exactly its static shape.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/ShapeInference.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"
#include "cleave/tf/types.pb.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

using Dims = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Hand-written tensors
//===----------------------------------------------------------------------===//

/// A tensor written by hand: a Const's value, a feed or an expected output.
/// Numbers, and bools as 0 and 1, are doubles; strings are bytes.
struct Literal {
  int32_t dtype = 0;
  Dims shape;
  std::vector<double> values;
  std::vector<std::string> strings;
};

/// Literals of one dtype: `f32({2, 2}, {1, 2, 3, 4})`, `f32(2.5)` for a
/// scalar, `f32.vec({1, 2})` for a vector.
struct LiteralsOf {
  int32_t dtype;
  Literal operator()(Dims shape, std::vector<double> values) const {
    return {dtype, std::move(shape), std::move(values), {}};
  }
  Literal operator()(double scalar) const { return (*this)({}, {scalar}); }
  Literal vec(std::vector<double> values) const {
    Dims shape{int64_t(values.size())};
    return (*this)(std::move(shape), std::move(values));
  }
};

constexpr LiteralsOf f32{kFloat}, f64{kDouble}, i32{kInt32}, i64{kInt64},
    u8{kUInt8}, u16{kUInt16}, u64{kUInt64}, boolean{kBool};

/// An int32 vector of indices, sizes or shapes.
Literal int32Vector(const Dims &values) {
  return i32.vec(std::vector<double>(values.begin(), values.end()));
}

Literal str(Dims shape, std::vector<std::string> values) {
  return {kString, std::move(shape), {}, std::move(values)};
}
Literal str(std::string scalar) { return str({}, {std::move(scalar)}); }

int64_t numElements(const Dims &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t numValues(const Literal &literal) {
  return literal.dtype == kString ? literal.strings.size()
                                  : literal.values.size();
}

Tensor toTensor(const Literal &literal) {
  Tensor tensor(literal.dtype, literal.shape);
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    if (literal.dtype == kString)
      tensor.strings()[i] = literal.strings[i];
    else
      tensor.setFromDouble(i, literal.values[i]);
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// GraphDef text
//===----------------------------------------------------------------------===//

std::string dtypeEnum(int32_t dtype) {
  return tensorflow::DataType_Name(tensorflow::DataType(dtype));
}

std::string octalEscape(unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\%03o", unsigned(c));
  return buffer;
}

/// A protobuf text-format string literal.
std::string protoString(llvm::StringRef bytes) {
  std::string text = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\')
      text += {'\\', char(c)};
    else if (llvm::isPrint(c))
      text += char(c);
    else
      text += octalEscape(c);
  }
  return text + "\"";
}

/// Enough digits to round-trip; also "inf", "-inf" and "nan", which the
/// text format accepts.
std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

const char *valueField(int32_t dtype) {
  switch (dtype) {
  case kFloat:
    return "float_val";
  case kDouble:
    return "double_val";
  case kInt64:
    return "int64_val";
  case kUInt32:
    return "uint32_val";
  case kUInt64:
    return "uint64_val";
  case kBool:
    return "bool_val";
  case kString:
    return "string_val";
  default:
    return "int_val";
  }
}

std::string shapeProto(const Dims &dims) {
  std::string text = "{";
  for (int64_t d : dims)
    text += " dim { size: " + std::to_string(d) + " }";
  return text + " }";
}

std::string tensorProto(const Literal &literal) {
  std::string text = "tensor { dtype: " + dtypeEnum(literal.dtype) +
                     " tensor_shape " + shapeProto(literal.shape);
  std::string field = valueField(literal.dtype);
  for (const std::string &s : literal.strings)
    text += " " + field + ": " + protoString(s);
  bool isFloat = literal.dtype == kFloat || literal.dtype == kDouble;
  bool isUnsigned = literal.dtype == kUInt8 || literal.dtype == kUInt16 ||
                    literal.dtype == kUInt32 || literal.dtype == kUInt64;
  for (double v : literal.values) {
    // Integers as integers: the text format takes no exponents there.
    std::string value = literal.dtype == kBool ? (v ? "true" : "false")
                        : isFloat              ? number(v)
                        : isUnsigned           ? std::to_string(uint64_t(v))
                                               : std::to_string(int64_t(v));
    text += " " + field + ": " + value;
  }
  return text + " }";
}

// Node attrs, as `attr { key: ... value { ... } }` entries.
std::string attr(llvm::StringRef key, llvm::StringRef value) {
  return ("attr { key: " + protoString(key) + " value { " + value + " } }")
      .str();
}
std::string typeAttr(llvm::StringRef key, int32_t dtype) {
  return attr(key, "type: " + dtypeEnum(dtype));
}
std::string T(int32_t dtype) { return typeAttr("T", dtype); }
std::string intAttr(llvm::StringRef key, int64_t value) {
  return attr(key, "i: " + std::to_string(value));
}
std::string floatAttr(llvm::StringRef key, double value) {
  return attr(key, "f: " + number(value));
}
std::string boolAttr(llvm::StringRef key, bool value) {
  return attr(key, value ? "b: true" : "b: false");
}
std::string strAttr(llvm::StringRef key, llvm::StringRef value) {
  return attr(key, "s: " + protoString(value));
}
std::string intsAttr(llvm::StringRef key, const Dims &values) {
  std::string list = "list {";
  for (int64_t v : values)
    list += " i: " + std::to_string(v);
  return attr(key, list + " }");
}
std::string typesAttr(llvm::StringRef key, const std::vector<int32_t> &dtypes) {
  std::string list = "list {";
  for (int32_t dtype : dtypes)
    list += " type: " + dtypeEnum(dtype);
  return attr(key, list + " }");
}
std::string shapeAttr(llvm::StringRef key, const Dims &dims) {
  return attr(key, "shape " + shapeProto(dims));
}
std::string shapesAttr(llvm::StringRef key, const std::vector<Dims> &shapes) {
  std::string list = "list {";
  for (const Dims &dims : shapes)
    list += " shape " + shapeProto(dims);
  return attr(key, list + " }");
}
std::string funcAttr(llvm::StringRef key, llvm::StringRef function) {
  return attr(key, "func { name: " + protoString(function) + " }");
}

/// The fields of a NodeDef (inside `node { }` or a function's `node_def { }`).
std::string nodeFields(llvm::StringRef name, llvm::StringRef op,
                       const std::vector<std::string> &inputs,
                       const std::vector<std::string> &attrs) {
  std::string text = "name: " + protoString(name) + " op: " + protoString(op);
  for (const std::string &input : inputs)
    text += " input: " + protoString(input);
  for (const std::string &a : attrs)
    text += " " + a;
  return text;
}

std::string constFields(llvm::StringRef name, const Literal &value,
                        const std::vector<std::string> &controlInputs = {}) {
  return nodeFields(
      name, "Const", controlInputs,
      {typeAttr("dtype", value.dtype), attr("value", tensorProto(value))});
}

struct Arg {
  std::string name;
  int32_t dtype;
};

/// A library function; `body` holds nodeFields() texts, `returns` maps
/// output args to "node:out_arg:index" tensors.
std::string
functionDef(llvm::StringRef name, const std::vector<Arg> &inputs,
            const std::vector<Arg> &outputs,
            const std::vector<std::string> &body,
            const std::vector<std::pair<std::string, std::string>> &returns) {
  std::string text = "function { signature { name: " + protoString(name);
  for (const Arg &arg : inputs)
    text += " input_arg { name: " + protoString(arg.name) +
            " type: " + dtypeEnum(arg.dtype) + " }";
  for (const Arg &arg : outputs)
    text += " output_arg { name: " + protoString(arg.name) +
            " type: " + dtypeEnum(arg.dtype) + " }";
  text += " }";
  for (const std::string &node : body)
    text += " node_def { " + node + " }";
  for (const auto &[output, tensor] : returns)
    text += " ret { key: " + protoString(output) +
            " value: " + protoString(tensor) + " }";
  return text + " }\n";
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

struct Expectation {
  enum Kind {
    Values,      ///< dtype, shape and values
    ShapeOnly,   ///< the shape (all that shapeOnly() cases check)
    UnitInterval ///< dtype, shape and every value in [0, 1)
  };
  std::string fetch;
  Literal value;
  Kind kind;
};

/// What a second run of the same fetches must give.
enum class Rerun { NotChecked, SameValues, NewValues };

/// One graph, how to run it, and what it must produce. Built fluently:
/// nodes first, then the checks.
struct OpCase {
  explicit OpCase(std::string name) : name(std::move(name)) {}

  OpCase &node(const std::string &nodeName, const std::string &op,
               const std::vector<std::string> &inputs = {},
               const std::vector<std::string> &attrs = {}) {
    nodes += "node { " + nodeFields(nodeName, op, inputs, attrs) + " }\n";
    opTypes.insert(op);
    return *this;
  }
  OpCase &constant(const std::string &nodeName, const Literal &value,
                   const std::vector<std::string> &controlInputs = {}) {
    nodes += "node { " + constFields(nodeName, value, controlInputs) + " }\n";
    opTypes.insert("Const");
    constants.push_back(value);
    return *this;
  }
  /// A resource variable `name` with nodes `name/init` (to run first) and
  /// `name/read`.
  OpCase &resourceVariable(const std::string &varName, const Literal &initial) {
    int32_t dtype = initial.dtype;
    return node(varName, "VarHandleOp", {},
                {typeAttr("dtype", dtype), shapeAttr("shape", initial.shape),
                 strAttr("shared_name", varName)})
        .constant(varName + "/initial", initial)
        .node(varName + "/init", "AssignVariableOp",
              {varName, varName + "/initial"}, {typeAttr("dtype", dtype)})
        .node(varName + "/read", "ReadVariableOp", {varName},
              {typeAttr("dtype", dtype)});
  }
  OpCase &functions(const std::vector<std::string> &functionDefs) {
    for (const std::string &f : functionDefs)
      library += f;
    return *this;
  }

  OpCase &feed(const std::string &tensor, const Literal &value) {
    feeds.emplace_back(tensor, value);
    return *this;
  }
  /// A target run on its own, before the checked run; in order.
  OpCase &runFirst(const std::string &target) {
    setupTargets.push_back(target);
    return *this;
  }
  /// A target run together with the fetches.
  OpCase &target(const std::string &nodeName) {
    targets.push_back(nodeName);
    return *this;
  }

  OpCase &expect(const std::string &fetch, const Literal &value) {
    expected.push_back({fetch, value, Expectation::Values});
    return *this;
  }
  OpCase &expectShape(const std::string &fetch, const Dims &shape) {
    expected.push_back({fetch, {0, shape, {}, {}}, Expectation::ShapeOnly});
    return *this;
  }
  OpCase &expectUniform(const std::string &fetch, int32_t dtype,
                        const Dims &shape) {
    expected.push_back(
        {fetch, {dtype, shape, {}, {}}, Expectation::UnitInterval});
    return *this;
  }
  OpCase &expectStderr(const std::string &text) {
    expectedStderr = text;
    return *this;
  }
  /// Only shape inference is checked: the ops cannot run on the host.
  OpCase &shapeOnly() {
    onlyShapes = true;
    return *this;
  }
  /// The inferred shapes need only be compatible with the outputs, because
  /// TensorFlow's own shape function cannot know them; `why` says why.
  OpCase &partialShapes(const std::string &why) {
    partialShapeReason = why;
    return *this;
  }
  OpCase &rerun(Rerun policy) {
    rerunPolicy = policy;
    return *this;
  }

  std::string graphText() const {
    return nodes + (library.empty() ? "" : "library {\n" + library + "}\n");
  }

  std::string name;
  std::string nodes, library;
  std::set<std::string> opTypes;
  std::vector<Literal> constants;
  std::vector<std::pair<std::string, Literal>> feeds;
  std::vector<std::string> setupTargets, targets;
  std::vector<Expectation> expected;
  std::string expectedStderr;
  bool onlyShapes = false;
  std::string partialShapeReason;
  Rerun rerunPolicy = Rerun::NotChecked;
};

void PrintTo(const OpCase &opCase, std::ostream *os) { *os << opCase.name; }

/// The common case: node "y" of `op` applied to constants x0, x1, ...
OpCase single(const std::string &name, const std::string &op,
              const std::vector<Literal> &inputs,
              const std::vector<std::string> &attrs, const Literal &expected) {
  OpCase c(name);
  std::vector<std::string> inputNames;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    inputNames.push_back("x" + std::to_string(i));
    c.constant(inputNames.back(), input);
  }
  return c.node("y", op, inputNames, attrs).expect("y", expected);
}

// Library functions shared by the functional control flow cases.

std::string twiceFn() {
  return functionDef(
      "Twice", {{"x", kFloat}}, {{"y", kFloat}},
      {constFields("two", f32(2)),
       nodeFields("mul", "Mul", {"x", "two:output:0"}, {T(kFloat)})},
      {{"y", "mul:z:0"}});
}

std::string negateFn() {
  return functionDef("Negate", {{"x", kFloat}}, {{"y", kFloat}},
                     {nodeFields("neg", "Neg", {"x"}, {T(kFloat)})},
                     {{"y", "neg:y:0"}});
}

/// A while condition: i < 3.
std::string belowThreeFn() {
  return functionDef(
      "BelowThree", {{"i", kInt32}, {"x", kFloat}}, {{"continue", kBool}},
      {constFields("three", i32(3)),
       nodeFields("less", "Less", {"i", "three:output:0"}, {T(kInt32)})},
      {{"continue", "less:z:0"}});
}

/// A while body: (i + 1, x * 2).
std::string stepFn() {
  return functionDef(
      "Step", {{"i", kInt32}, {"x", kFloat}},
      {{"next_i", kInt32}, {"next_x", kFloat}},
      {constFields("one", i32(1)),
       nodeFields("inc", "AddV2", {"i", "one:output:0"}, {T(kInt32)}),
       constFields("two", f32(2)),
       nodeFields("mul", "Mul", {"x", "two:output:0"}, {T(kFloat)})},
      {{"next_i", "inc:z:0"}, {"next_x", "mul:z:0"}});
}

std::vector<OpCase> arrayCases() {
  const Literal m23 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Literal m33 = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Literal ints34 = i32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto stridedSlice = [](const std::string &name, const Literal &input,
                         const Dims &begin, const Dims &end,
                         const Dims &strides, std::vector<std::string> masks,
                         const Literal &out) {
    masks.insert(masks.begin(), {T(input.dtype), typeAttr("Index", kInt32)});
    return single(
        name, "StridedSlice",
        {input, int32Vector(begin), int32Vector(end), int32Vector(strides)},
        masks, out);
  };
  return {
      OpCase("ConstDtypes")
          .constant("f", f32({2, 2}, {1, 2, 3, 4}))
          .constant("l", i64(-5))
          .constant("b", boolean.vec({true, false, true}))
          .constant("s", str({2}, {"a", "bc"}))
          .expect("f", f32({2, 2}, {1, 2, 3, 4}))
          .expect("l", i64(-5))
          .expect("b", boolean.vec({true, false, true}))
          .expect("s", str({2}, {"a", "bc"})),
      OpCase("Placeholder")
          .node("x", "Placeholder", {},
                {typeAttr("dtype", kFloat), shapeAttr("shape", {2})})
          .node("y", "Neg", {"x"}, {T(kFloat)})
          .feed("x", f32.vec({1, -2}))
          .expect("x", f32.vec({1, -2}))
          .expect("y", f32.vec({-1, 2})),
      single("PlaceholderWithDefault", "PlaceholderWithDefault",
             {i32.vec({1, 2})},
             {typeAttr("dtype", kInt32), shapeAttr("shape", {2})},
             i32.vec({1, 2})),
      single("IdentityString", "Identity", {str({2}, {"a", "b"})}, {T(kString)},
             str({2}, {"a", "b"})),
      OpCase("IdentityN")
          .constant("a", f32.vec({1, 2}))
          .constant("b", i32(7))
          .node("n", "IdentityN", {"a", "b"},
                {typesAttr("T", {kFloat, kInt32})})
          .expect("n:0", f32.vec({1, 2}))
          .expect("n:1", i32(7)),
      // A NoOp only orders: y runs after it and is unchanged.
      OpCase("NoOp")
          .constant("c", f32(1))
          .node("noop", "NoOp")
          .node("y", "Identity", {"c", "^noop"}, {T(kFloat)})
          .expect("y", f32(1)),
      single("StopGradient", "StopGradient", {f32.vec({1, 2})}, {T(kFloat)},
             f32.vec({1, 2})),
      OpCase("Shape")
          .constant("m", m23)
          .constant("s", f32(1))
          .node("shape", "Shape", {"m"}, {T(kFloat)})
          .node("shape64", "Shape", {"m"},
                {T(kFloat), typeAttr("out_type", kInt64)})
          .node("scalarShape", "Shape", {"s"}, {T(kFloat)})
          .expect("shape", i32.vec({2, 3}))
          .expect("shape64", i64.vec({2, 3}))
          .expect("scalarShape", i32({0}, {})),
      single("Size", "Size", {m23}, {T(kFloat)}, i32(6)),
      single("Rank", "Rank", {m23}, {T(kFloat)}, i32(2)),
      single("ReshapeInferredDim", "Reshape", {m23, i32.vec({3, -1})},
             {T(kFloat)}, f32({3, 2}, {1, 2, 3, 4, 5, 6})),
      single("ReshapeToScalar", "Reshape", {f32({1, 1}, {5}), i32({0}, {})},
             {T(kFloat)}, f32(5)),
      OpCase("Squeeze")
          .constant("x", f32({1, 2, 1}, {1, 2}))
          .node("all", "Squeeze", {"x"}, {T(kFloat)})
          .node("first", "Squeeze", {"x"},
                {T(kFloat), intsAttr("squeeze_dims", {0})})
          .node("last", "Squeeze", {"x"},
                {T(kFloat), intsAttr("squeeze_dims", {-1})})
          .expect("all", f32.vec({1, 2}))
          .expect("first", f32({2, 1}, {1, 2}))
          .expect("last", f32({1, 2}, {1, 2})),
      OpCase("ExpandDims")
          .constant("x", f32.vec({1, 2}))
          .constant("front", i32(0))
          .constant("back", i32(-1))
          .node("row", "ExpandDims", {"x", "front"}, {T(kFloat)})
          .node("column", "ExpandDims", {"x", "back"}, {T(kFloat)})
          .expect("row", f32({1, 2}, {1, 2}))
          .expect("column", f32({2, 1}, {1, 2})),
      single("Transpose2D", "Transpose", {m23, i32.vec({1, 0})}, {T(kFloat)},
             f32({3, 2}, {1, 4, 2, 5, 3, 6})),
      // y[a][b][c] = x[c][a][b].
      single("Transpose3D", "Transpose",
             {f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i32.vec({1, 2, 0})},
             {T(kFloat)}, f32({2, 2, 2}, {0, 4, 1, 5, 2, 6, 3, 7})),
      single("ConcatV2", "ConcatV2",
             {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {5, 6}), i32(1)},
             {T(kFloat), intAttr("N", 2)}, f32({2, 3}, {1, 2, 5, 3, 4, 6})),
      single("ConcatV2NegativeAxis", "ConcatV2",
             {f32({2, 2}, {1, 2, 3, 4}), f32({1, 2}, {7, 8}), i32(-2)},
             {T(kFloat), intAttr("N", 2)}, f32({3, 2}, {1, 2, 3, 4, 7, 8})),
      OpCase("Split")
          .constant("axis", i32(1))
          .constant("x", f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}))
          .node("split", "Split", {"axis", "x"},
                {T(kFloat), intAttr("num_split", 2)})
          .expect("split:0", f32({2, 2}, {1, 2, 5, 6}))
          .expect("split:1", f32({2, 2}, {3, 4, 7, 8})),
      // A size of -1 takes what the others leave.
      OpCase("SplitV")
          .constant("x", f32.vec({1, 2, 3, 4, 5, 6}))
          .constant("sizes", i32.vec({1, -1, 2}))
          .constant("axis", i32(0))
          .node("split", "SplitV", {"x", "sizes", "axis"},
                {T(kFloat), typeAttr("Tlen", kInt32), intAttr("num_split", 3)})
          .expect("split:0", f32.vec({1}))
          .expect("split:1", f32.vec({2, 3, 4}))
          .expect("split:2", f32.vec({5, 6})),
      OpCase("SplitVNegativeAxis")
          .constant("x", m23)
          .constant("sizes", i32.vec({-1, 1}))
          .constant("axis", i32(-1))
          .node("split", "SplitV", {"x", "sizes", "axis"},
                {T(kFloat), typeAttr("Tlen", kInt32), intAttr("num_split", 2)})
          .expect("split:0", f32({2, 2}, {1, 2, 4, 5}))
          .expect("split:1", f32({2, 1}, {3, 6})),
      single("Slice", "Slice", {m33, i32.vec({1, 0}), i32.vec({2, -1})},
             {T(kFloat), typeAttr("Index", kInt32)},
             f32({2, 3}, {4, 5, 6, 7, 8, 9})),
      // x[1:8:3]
      stridedSlice("StridedSliceStride",
                   i32.vec({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), {1}, {8}, {3}, {},
                   i32.vec({1, 4, 7})),
      // x[::-2]: masked begin and end start from the last element.
      stridedSlice("StridedSliceReverse", i32.vec({0, 1, 2, 3, 4}), {0}, {0},
                   {-2}, {intAttr("begin_mask", 1), intAttr("end_mask", 1)},
                   i32.vec({4, 2, 0})),
      // x[-1]
      stridedSlice("StridedSliceShrinkAxis", ints34, {-1}, {0}, {1},
                   {intAttr("shrink_axis_mask", 1)}, i32.vec({8, 9, 10, 11})),
      // x[tf.newaxis, 1:3]
      stridedSlice("StridedSliceNewAxis", ints34, {0, 1}, {0, 3}, {1, 1},
                   {intAttr("new_axis_mask", 1)},
                   i32({1, 2, 4}, {4, 5, 6, 7, 8, 9, 10, 11})),
      // x[..., 1]
      stridedSlice(
          "StridedSliceEllipsis",
          i32({2, 3, 4}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                          12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}),
          {0, 1}, {0, 2}, {1, 1},
          {intAttr("ellipsis_mask", 1), intAttr("shrink_axis_mask", 2)},
          i32({2, 3}, {1, 5, 9, 13, 17, 21})),
      // x[1:, :2]
      stridedSlice("StridedSliceBeginEndMasks", ints34, {1, 0}, {0, 2}, {1, 1},
                   {intAttr("end_mask", 1)}, i32({2, 2}, {4, 5, 8, 9})),
      OpCase("Pack")
          .constant("a", f32.vec({1, 2}))
          .constant("b", f32.vec({3, 4}))
          .node("rows", "Pack", {"a", "b"}, {T(kFloat), intAttr("N", 2)})
          .node("columns", "Pack", {"a", "b"},
                {T(kFloat), intAttr("N", 2), intAttr("axis", -1)})
          .expect("rows", f32({2, 2}, {1, 2, 3, 4}))
          .expect("columns", f32({2, 2}, {1, 3, 2, 4})),
      // Strings move through the data-movement kernels as numbers do.
      OpCase("StringsThroughDataMovement")
          .constant("a", str({2}, {"a", "b"}))
          .constant("b", str({1}, {"c"}))
          .constant("c", str({2}, {"c", "d"}))
          .constant("axis", i32(0))
          .constant("cond", boolean.vec({true, false}))
          .constant("paddings", i32({1, 2}, {1, 0}))
          .node("packed", "Pack", {"a", "c"},
                {T(kString), intAttr("N", 2), intAttr("axis", 1)})
          .node("joined", "ConcatV2", {"a", "b", "axis"},
                {T(kString), intAttr("N", 2)})
          .node("chosen", "SelectV2", {"cond", "a", "c"}, {T(kString)})
          .node("padded", "Pad", {"a", "paddings"}, {T(kString)})
          .expect("packed", str({2, 2}, {"a", "c", "b", "d"}))
          .expect("joined", str({3}, {"a", "b", "c"}))
          .expect("chosen", str({2}, {"a", "d"}))
          .expect("padded", str({3}, {"", "a", "b"})),
      OpCase("Unpack")
          .constant("x", m23)
          .node("rows", "Unpack", {"x"}, {T(kFloat), intAttr("num", 2)})
          .node("columns", "Unpack", {"x"},
                {T(kFloat), intAttr("num", 3), intAttr("axis", 1)})
          .expect("rows:0", f32.vec({1, 2, 3}))
          .expect("rows:1", f32.vec({4, 5, 6}))
          .expect("columns:0", f32.vec({1, 4}))
          .expect("columns:1", f32.vec({2, 5}))
          .expect("columns:2", f32.vec({3, 6})),
      single("Fill", "Fill", {i32.vec({2, 3}), f32(7.5)}, {T(kFloat)},
             f32({2, 3}, {7.5, 7.5, 7.5, 7.5, 7.5, 7.5})),
      single("ZerosLike", "ZerosLike", {i32.vec({3, -4})}, {T(kInt32)},
             i32.vec({0, 0})),
      single("OnesLike", "OnesLike", {f32({2, 2}, {5, 6, 7, 8})}, {T(kFloat)},
             f32({2, 2}, {1, 1, 1, 1})),
      single("Tile", "Tile", {f32({2, 2}, {1, 2, 3, 4}), i32.vec({1, 2})},
             {T(kFloat)}, f32({2, 4}, {1, 2, 1, 2, 3, 4, 3, 4})),
      // One row before, two columns after.
      single("Pad", "Pad",
             {f32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {1, 0, 0, 2})},
             {T(kFloat)}, f32({3, 4}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0})),
      single("GatherV2", "GatherV2",
             {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32.vec({2, 0}), i32(0)},
             {typeAttr("Tparams", kFloat), typeAttr("Tindices", kInt32),
              typeAttr("Taxis", kInt32)},
             f32({2, 2}, {5, 6, 1, 2})),
      // params[:, indices] with 2-D indices: shape [2] + [1, 2].
      single("GatherV2Axis1", "GatherV2", {m23, i32({1, 2}, {2, 0}), i32(1)},
             {typeAttr("Tparams", kFloat), typeAttr("Tindices", kInt32),
              typeAttr("Taxis", kInt32)},
             f32({2, 1, 2}, {3, 1, 6, 4})),
      // An index outside [0, depth) gives a row of off values.
      OpCase("OneHot")
          .constant("indices", i32.vec({0, 2, -1}))
          .constant("depth", i32(3))
          .constant("on", f32(5))
          .constant("off", f32(-1))
          .node("last", "OneHot", {"indices", "depth", "on", "off"},
                {T(kFloat), typeAttr("TI", kInt32)})
          .node("first", "OneHot", {"indices", "depth", "on", "off"},
                {T(kFloat), typeAttr("TI", kInt32), intAttr("axis", 0)})
          .expect("last", f32({3, 3}, {5, -1, -1, -1, -1, 5, -1, -1, -1}))
          .expect("first", f32({3, 3}, {5, -1, -1, -1, -1, -1, -1, 5, -1})),
      // Float to int truncates towards zero; nonzero is true.
      OpCase("Cast")
          .constant("f", f32.vec({1.7, -1.7, 0}))
          .constant("i", i32.vec({0, 2, -1}))
          .constant("b", boolean.vec({true, false}))
          .node("toInt", "Cast", {"f"},
                {typeAttr("SrcT", kFloat), typeAttr("DstT", kInt32)})
          .node("toBool", "Cast", {"i"},
                {typeAttr("SrcT", kInt32), typeAttr("DstT", kBool)})
          .node("fromBool", "Cast", {"b"},
                {typeAttr("SrcT", kBool), typeAttr("DstT", kFloat)})
          .expect("toInt", i32.vec({1, -1, 0}))
          .expect("toBool", boolean.vec({false, true, true}))
          .expect("fromBool", f32.vec({1, 0})),
      single("Range", "Range", {i32(2), i32(11), i32(3)},
             {typeAttr("Tidx", kInt32)}, i32.vec({2, 5, 8})),
      single("RangeNegativeDelta", "Range", {i32(5), i32(0), i32(-2)},
             {typeAttr("Tidx", kInt32)}, i32.vec({5, 3, 1})),
      single("RangeFloat", "Range", {f32(0), f32(1), f32(0.25)},
             {typeAttr("Tidx", kFloat)}, f32.vec({0, 0.25, 0.5, 0.75})),
      // Each element is the previous one plus delta, in float: past 2^24
      // adding 1 rounds back (start + i * delta would give 2^24 + 2, + 4).
      // One diagonal below the main one, none above; a negative count
      // keeps the whole triangle, of each matrix of a batch.
      single("MatrixBandPart", "MatrixBandPart",
             {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i64(1), i64(0)},
             {T(kFloat)}, f32({3, 3}, {1, 0, 0, 4, 5, 0, 0, 8, 9})),
      single("MatrixBandPartBatch", "MatrixBandPart",
             {i32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), i32(-1),
              i32(1)},
             {T(kInt32), typeAttr("Tindex", kInt32)},
             i32({2, 2, 3}, {1, 2, 0, 4, 5, 6, 7, 8, 0, 10, 11, 12})),
      // Index tuples of depth 2 pick elements, of depth 1 rows; ScatterNd
      // puts them back, summing where a tuple repeats.
      single("GatherNd", "GatherNd",
             {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i32({3, 2}, {1, 2, 0, 0, 1, 0})},
             {typeAttr("Tparams", kFloat), typeAttr("Tindices", kInt32)},
             f32.vec({6, 1, 4})),
      single("GatherNdRows", "GatherNd",
             {i64({2, 2}, {1, 2, 3, 4}), i64({3, 1}, {1, 0, 1})},
             {typeAttr("Tparams", kInt64), typeAttr("Tindices", kInt64)},
             i64({3, 2}, {3, 4, 1, 2, 3, 4})),
      single("ScatterNd", "ScatterNd",
             {i32({3, 1}, {1, 0, 1}), f32({3, 2}, {1, 2, 3, 4, 5, 6}),
              i32.vec({2, 2})},
             {T(kFloat), typeAttr("Tindices", kInt32)},
             f32({2, 2}, {3, 4, 6, 8})),
      // The TensorScatter ops start from the tensor: Update keeps the last
      // of a repeated tuple, Add sums, Sub subtracts, Min and Max compare.
      single("TensorScatterUpdate", "TensorScatterUpdate",
             {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32({3, 1}, {2, 0, 2}),
              f32({3, 2}, {10, 20, 30, 40, 50, 60})},
             {T(kFloat), typeAttr("Tindices", kInt32)},
             f32({3, 2}, {30, 40, 3, 4, 50, 60})),
      single("TensorScatterAdd", "TensorScatterAdd",
             {i32.vec({1, 2, 3, 4}), i64({3, 1}, {3, 0, 3}),
              i32.vec({10, 20, 30})},
             {T(kInt32), typeAttr("Tindices", kInt64)},
             i32.vec({21, 2, 3, 44})),
      single("TensorScatterSub", "TensorScatterSub",
             {f64({2, 2}, {1, 2, 3, 4}), i32({1, 2}, {1, 0}), f64.vec({5})},
             {T(kDouble), typeAttr("Tindices", kInt32)},
             f64({2, 2}, {1, 2, -2, 4})),
      single("TensorScatterMin", "TensorScatterMin",
             {f32.vec({1, 5, 3}), i32({3, 1}, {1, 1, 2}), f32.vec({4, 7, NAN})},
             {T(kFloat), typeAttr("Tindices", kInt32)}, f32.vec({1, 4, 3})),
      single("TensorScatterMax", "TensorScatterMax",
             {i32.vec({1, 5, 3}), i32({2, 1}, {0, 2}), i32.vec({4, 2})},
             {T(kInt32), typeAttr("Tindices", kInt32)}, i32.vec({4, 5, 3})),
      // Sorted segments: rows with equal ids reduce into one; id 1 has no
      // rows and gets the identity (0 for Mean, the lowest for Max).
      single("SegmentSum", "SegmentSum",
             {f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), i32.vec({0, 0, 2, 2})},
             {T(kFloat), typeAttr("Tindices", kInt32)},
             f32({3, 2}, {4, 6, 0, 0, 12, 14})),
      single("SegmentMean", "SegmentMean",
             {f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), i64.vec({0, 0, 2, 2})},
             {T(kFloat), typeAttr("Tindices", kInt64)},
             f32({3, 2}, {2, 3, 0, 0, 6, 7})),
      single("SegmentMeanInt", "SegmentMean",
             {i32.vec({1, 2, -7}), i32.vec({0, 0, 1})},
             {T(kInt32), typeAttr("Tindices", kInt32)}, i32.vec({1, -7})),
      single("SegmentProd", "SegmentProd",
             {i32.vec({2, 3, 4, 5}), i32.vec({0, 1, 1, 3})},
             {T(kInt32), typeAttr("Tindices", kInt32)}, i32.vec({2, 12, 1, 5})),
      single("SegmentMax", "SegmentMax",
             {f32.vec({2, 3, 4}), i32.vec({1, 1, 1})},
             {T(kFloat), typeAttr("Tindices", kInt32)},
             f32.vec({std::numeric_limits<float>::lowest(), 4})),
      single("SegmentMin", "SegmentMin",
             {i32.vec({2, -3, 4}), i64.vec({0, 0, 2})},
             {T(kInt32), typeAttr("Tindices", kInt64)},
             i32.vec({-3, std::numeric_limits<int32_t>::max(), 4})),
      // Einsum: a product, the implicit output, batches broadcast by an
      // ellipsis, a trace, an outer product.
      single("EinsumMatMul", "Einsum",
             {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 0, 0, 1, 1, 1})},
             {T(kFloat), intAttr("N", 2), strAttr("equation", "ij,jk->ik")},
             f32({2, 2}, {4, 5, 10, 11})),
      single("EinsumImplicit", "Einsum",
             {i32({2, 3}, {1, 2, 3, 4, 5, 6}), i32({3, 2}, {1, 0, 0, 1, 1, 1})},
             {T(kInt32), intAttr("N", 2), strAttr("equation", "ba,ac")},
             i32({2, 2}, {4, 5, 10, 11})),
      single(
          "EinsumEllipsis", "Einsum",
          {f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({3, 2, 1}, {1, 1, 2, 2, 3, 3})},
          {T(kFloat), intAttr("N", 2),
           strAttr("equation", "...ij,...jk->...ik")},
          f32({2, 3, 1, 1}, {3, 6, 9, 7, 14, 21})),
      single("EinsumTrace", "Einsum",
             {f64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
             {T(kDouble), intAttr("N", 1), strAttr("equation", "ii")}, f64(15)),
      single("EinsumOuter", "Einsum", {f32.vec({1, 2}), f32.vec({3, 4, 5})},
             {T(kFloat), intAttr("N", 2), strAttr("equation", "i,j->ji")},
             f32({3, 2}, {3, 6, 4, 8, 5, 10})),
      // 3-D: a 2x2x2 cube, SAME padding after; the pools in NCDHW too.
      single("Conv3D", "Conv3D",
             {f32({1, 2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8}),
              f32({2, 2, 2, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1})},
             {T(kFloat), intsAttr("strides", {1, 1, 1, 1, 1}),
              strAttr("padding", "SAME")},
             f32({1, 2, 2, 2, 1}, {36, 20, 22, 12, 26, 14, 15, 8})),
      single("MaxPool3DNCDHW", "MaxPool3D",
             {f32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
             {T(kFloat), intsAttr("ksize", {1, 1, 2, 2, 1}),
              intsAttr("strides", {1, 1, 1, 1, 1}), strAttr("padding", "VALID"),
              strAttr("data_format", "NCDHW")},
             f32({1, 1, 1, 1, 2}, {7, 8})),
      single("AvgPool3D", "AvgPool3D",
             {f32({1, 2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8})},
             {T(kFloat), intsAttr("ksize", {1, 2, 2, 2, 1}),
              intsAttr("strides", {1, 1, 1, 1, 1}), strAttr("padding", "SAME")},
             f32({1, 2, 2, 2, 1}, {4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8})),
      // LRN: sums of squares over channels c-1..c+1: 5, 14, 13.
      single("LRN", "LRN", {f32({1, 1, 1, 3}, {1, 2, 3})},
             {T(kFloat), intAttr("depth_radius", 1)},
             f32({1, 1, 1, 3}, {1 / std::sqrt(6.0), 2 / std::sqrt(15.0),
                                3 / std::sqrt(14.0)})),
      // Resizing [[1, 2], [3, 4]] to 3x3: TensorFlow's published values.
      single("ResizeBilinear", "ResizeBilinear",
             {f32({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})}, {T(kFloat)},
             f32({1, 3, 3, 1},
                 {1, 5.0 / 3, 2, 7.0 / 3, 3, 10.0 / 3, 3, 11.0 / 3, 4})),
      single("ResizeBilinearAligned", "ResizeBilinear",
             {i32({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})},
             {T(kInt32), boolAttr("align_corners", true)},
             f32({1, 3, 3, 1}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4})),
      single("ResizeBilinearHalfPixel", "ResizeBilinear",
             {f64({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})},
             {T(kDouble), boolAttr("half_pixel_centers", true)},
             f32({1, 3, 3, 1}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4})),
      single("ResizeNearestNeighbor", "ResizeNearestNeighbor",
             {i32({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})}, {T(kInt32)},
             i32({1, 3, 3, 1}, {1, 1, 2, 1, 1, 2, 3, 3, 4})),
      single("ResizeNearestNeighborHalfPixel", "ResizeNearestNeighbor",
             {f32({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})},
             {T(kFloat), boolAttr("half_pixel_centers", true)},
             f32({1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4})),
      single("ResizeNearestNeighborAligned", "ResizeNearestNeighbor",
             {f32({1, 2, 2, 1}, {1, 2, 3, 4}), i32.vec({3, 3})},
             {T(kFloat), boolAttr("align_corners", true)},
             f32({1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4})),
      // The gradients of ones: what each input pixel was read with.
      single("ResizeNearestNeighborGrad", "ResizeNearestNeighborGrad",
             {f32({1, 3, 3, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}), i32.vec({2, 2})},
             {T(kFloat)}, f32({1, 2, 2, 1}, {4, 2, 2, 1})),
      single("ResizeBilinearGrad", "ResizeBilinearGrad",
             {f32({1, 3, 3, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
              f32({1, 2, 2, 1}, {0, 0, 0, 0})},
             {T(kFloat)},
             f32({1, 2, 2, 1}, {16.0 / 9, 20.0 / 9, 20.0 / 9, 25.0 / 9})),
      // TensorLists: rows in and out, items set into a reserved list (the
      // unset ones zeros), pushed and popped, length and element shape.
      OpCase("TensorListRows")
          .constant("t", f32({3, 2}, {1, 2, 3, 4, 5, 6}))
          .constant("shape", i32.vec({2}))
          .constant("one", i32(1))
          .node("list", "TensorListFromTensor", {"t", "shape"},
                {typeAttr("element_dtype", kFloat),
                 typeAttr("shape_type", kInt32)})
          .node("item", "TensorListGetItem", {"list", "one", "shape"},
                {typeAttr("element_dtype", kFloat)})
          .node("length", "TensorListLength", {"list"}, {})
          .node("stacked", "TensorListStack", {"list", "shape"},
                {typeAttr("element_dtype", kFloat)})
          .expect("item", f32.vec({3, 4}))
          .expect("length", i32(3))
          .expect("stacked", f32({3, 2}, {1, 2, 3, 4, 5, 6}))
          .partialShapes("TensorFlow's shape function knows the count of "
                         "stacked items only from num_elements"),
      OpCase("TensorListReserveSetStack")
          .constant("shape", i32.vec({2}))
          .constant("three", i32(3))
          .constant("index", i32(1))
          .constant("x", f32.vec({7, 8}))
          .node("list", "TensorListReserve", {"shape", "three"},
                {typeAttr("element_dtype", kFloat),
                 typeAttr("shape_type", kInt32)})
          .node("set", "TensorListSetItem", {"list", "index", "x"},
                {typeAttr("element_dtype", kFloat)})
          .node("stacked", "TensorListStack", {"set", "shape"},
                {typeAttr("element_dtype", kFloat), intAttr("num_elements", 3)})
          .node("element_shape", "TensorListElementShape", {"set"},
                {typeAttr("shape_type", kInt64)})
          .expect("stacked", f32({3, 2}, {0, 0, 7, 8, 0, 0}))
          .expect("element_shape", i64.vec({2}))
          .partialShapes("the element shape is a list's data"),
      OpCase("TensorListPushPop")
          .constant("unknown", i32(-1))
          .constant("max", i32(-1))
          .constant("a", i32.vec({1, 2}))
          .constant("b", i32.vec({3, 4}))
          .node("empty", "EmptyTensorList", {"unknown", "max"},
                {typeAttr("element_dtype", kInt32),
                 typeAttr("shape_type", kInt32)})
          .node("one", "TensorListPushBack", {"empty", "a"},
                {typeAttr("element_dtype", kInt32)})
          .node("two", "TensorListPushBack", {"one", "b"},
                {typeAttr("element_dtype", kInt32)})
          .node("popped", "TensorListPopBack", {"two", "unknown"},
                {typeAttr("element_dtype", kInt32)})
          .node("left", "TensorListLength", {"popped"}, {})
          .node("shape", "TensorListElementShape", {"popped"},
                {typeAttr("shape_type", kInt32)})
          .expect("popped:1", i32.vec({3, 4}))
          .expect("left", i32(1))
          .expect("shape", i32(-1))
          .partialShapes("an item's shape is data when the list's is "
                         "unknown"),
      // TopKV2: descending, equal values in index order; NaN first.
      OpCase("TopKV2")
          .constant("x", f32({2, 4}, {1, 3, 3, 2, NAN, -1, 5, -1}))
          .constant("k", i32(3))
          .node("top", "TopKV2", {"x", "k"}, {T(kFloat)})
          .expect("top:0", f32({2, 3}, {3, 3, 2, NAN, 5, -1}))
          .expect("top:1", i32({2, 3}, {1, 2, 3, 0, 2, 1})),
      OpCase("TopKV2Int64Indices")
          .constant("x", i64.vec({4, -7, 9}))
          .constant("k", i64(1))
          .node("top", "TopKV2", {"x", "k"},
                {T(kInt64), typeAttr("Tk", kInt64),
                 typeAttr("index_type", kInt64)})
          .expect("top:0", i64.vec({9}))
          .expect("top:1", i64.vec({2})),
      // InTopKV2: ties count as in; out-of-range or non-finite targets not.
      single("InTopKV2", "InTopKV2",
             {f32({4, 3}, {0.1, 0.5, 0.5, 0.9, 0.1, 0.2, 1, INFINITY, 0, 0.3,
                           0.3, 0.3}),
              i32.vec({2, 2, 1, 5}), i32(1)},
             {T(kInt32)}, boolean.vec({true, false, false, false})),
      // Unique: first-appearance order; 0.0 and -0.0 are one value.
      OpCase("Unique")
          .constant("x", f32.vec({2, 1, 2, 0, -0.0, 1}))
          .node("u", "Unique", {"x"}, {T(kFloat)})
          .expect("u:0", f32.vec({2, 1, 0}))
          .expect("u:1", i32.vec({0, 1, 0, 2, 2, 1}))
          .partialShapes("how many values are distinct is data: TensorFlow "
                         "infers [?]"),
      OpCase("UniqueStrings")
          .constant("x", str({4}, {"b", "a", "b", "c"}))
          .node("u", "Unique", {"x"}, {T(kString), typeAttr("out_idx", kInt64)})
          .expect("u:0", str({3}, {"b", "a", "c"}))
          .expect("u:1", i64.vec({0, 1, 0, 2}))
          .partialShapes("how many values are distinct is data"),
      // Bitcast: the bytes, little-endian; 1.0f is 0x3f800000.
      single("BitcastSmaller", "Bitcast", {f32.vec({1, -2})},
             {T(kFloat), typeAttr("type", kUInt16)},
             u16({2, 2}, {0, 0x3f80, 0, 0xc000})),
      single("BitcastLarger", "Bitcast",
             {u8({2, 4}, {0, 0, 128, 63, 1, 0, 0, 0})},
             {T(kUInt8), typeAttr("type", kInt32)}, i32.vec({0x3f800000, 1})),
      single("BitcastSame", "Bitcast", {i32.vec({0x40490fdb})},
             {T(kInt32), typeAttr("type", kFloat)}, f32.vec({3.14159274f})),
      // Bincount: weights summed per value below size; none: counts.
      single("Bincount", "Bincount",
             {i32.vec({1, 3, 1, 7, 0}), i32(4), f32.vec({0.5, 2, 1, 9, 3})},
             {T(kFloat)}, f32.vec({3, 1.5, 0, 2})),
      single("BincountCounts", "Bincount",
             {i32({2, 2}, {2, 2, 0, 2}), i32(3), i64.vec({})}, {T(kInt64)},
             i64.vec({1, 0, 3})),
      single("CheckNumericsV2", "CheckNumericsV2", {f64.vec({1, -2.5})},
             {T(kDouble), attr("message", "s: \"m\"")}, f64.vec({1, -2.5})),
      single("ClipByValue", "ClipByValue",
             {f32.vec({-2, 0.5, 3}), f32(0), f32(1)}, {T(kFloat)},
             f32.vec({0, 0.5, 1})),
      single("ClipByValueTensorBounds", "ClipByValue",
             {i32.vec({-2, 5, 3}), i32.vec({-1, 0, 4}), i32.vec({0, 2, 9})},
             {T(kInt32)}, i32.vec({-1, 2, 4})),
      // 0 where y is 0, even for an infinite or NaN x.
      single("MulNoNan", "MulNoNan",
             {f32.vec({INFINITY, 2, NAN}), f32.vec({0, 3, 0})}, {T(kFloat)},
             f32.vec({0, 6, 0})),
      single("All", "All", {boolean({2, 3}, {1, 0, 1, 1, 1, 1}), i32.vec({1})},
             {}, boolean.vec({0, 1})),
      single("AnyKeepDims", "Any",
             {boolean({2, 3}, {0, 0, 0, 0, 1, 0}), i32.vec({1})},
             {boolAttr("keep_dims", true)}, boolean({2, 1}, {0, 1})),
      single("AllEmpty", "All", {boolean({0}, {}), i32.vec({0})}, {},
             boolean(1)),
      single("LeakyRelu", "LeakyRelu", {f32.vec({-2, 0, 3})}, {T(kFloat)},
             f32.vec({-0.4f, 0, 3})),
      single("LeakyReluGrad", "LeakyReluGrad",
             {f64.vec({1, 1, 1}), f64.vec({-1, 0, 2})},
             {T(kDouble), floatAttr("alpha", 0.5)}, f64.vec({0.5, 0.5, 1})),
      single("L2Loss", "L2Loss", {f32({2, 2}, {1, -2, 3, 0.5})}, {T(kFloat)},
             f32(7.125)),
      single("LinSpace", "LinSpace", {f32(0), f32(1), i32(5)}, {T(kFloat)},
             f32.vec({0, 0.25, 0.5, 0.75, 1})),
      single("LinSpaceOne", "LinSpace", {f64(10), f64(20), i64(1)},
             {T(kDouble), typeAttr("Tidx", kInt64)}, f64.vec({10})),
      single("RangeFloatAccumulates", "Range",
             {f32(16777216), f32(16777220), f32(1)}, {typeAttr("Tidx", kFloat)},
             f32.vec({16777216, 16777216, 16777216, 16777216})),
      // A vector condition picks whole rows; a matrix one picks elements.
      OpCase("Select")
          .constant("rowPicks", boolean.vec({true, false}))
          .constant("picks", boolean({2, 2}, {true, false, false, true}))
          .constant("t", f32({2, 2}, {1, 2, 3, 4}))
          .constant("e", f32({2, 2}, {5, 6, 7, 8}))
          .node("rows", "Select", {"rowPicks", "t", "e"}, {T(kFloat)})
          .node("elements", "Select", {"picks", "t", "e"}, {T(kFloat)})
          .expect("rows", f32({2, 2}, {1, 2, 7, 8}))
          .expect("elements", f32({2, 2}, {1, 6, 7, 4})),
      single("SelectV2Broadcast", "SelectV2",
             {boolean({2, 1}, {true, false}), f32({1, 3}, {1, 2, 3}), f32(0)},
             {T(kFloat)}, f32({2, 3}, {1, 2, 3, 0, 0, 0})),
      single("WhereMatrix", "Where",
             {boolean({2, 3}, {false, true, false, true, false, true})},
             {T(kBool)}, i64({3, 2}, {0, 1, 1, 0, 1, 2}))
          .partialShapes("the number of true elements is data: TensorFlow "
                         "infers [?, rank]"),
      OpCase("BroadcastTo")
          .constant("row", f32.vec({1, 2, 3}))
          .constant("column", f32({2, 1}, {1, 2}))
          .constant("shape", i32.vec({2, 3}))
          .node("rows", "BroadcastTo", {"row", "shape"}, {T(kFloat)})
          .node("columns", "BroadcastTo", {"column", "shape"}, {T(kFloat)})
          .expect("rows", f32({2, 3}, {1, 2, 3, 1, 2, 3}))
          .expect("columns", f32({2, 3}, {1, 1, 1, 2, 2, 2})),
  };
}

/// BroadcastGradientArgs(s0, s1): the axes along which each shape was
/// stretched when broadcast against the other, to reduce gradients over.
OpCase gradientArgs(const std::string &name, Dims s0, Dims s1, Dims r0,
                    Dims r1) {
  return single(name, "BroadcastGradientArgs",
                {int32Vector(s0), int32Vector(s1)}, {T(kInt32)},
                int32Vector(r0))
      .expect("y:1", int32Vector(r1))
      .partialShapes("the indices are data: TensorFlow infers vectors of "
                     "unknown length");
}

std::vector<OpCase> gradientArgsCases() {
  return {
      // [2,1,3] and [4,1] broadcast to [2,4,3]: s0 was stretched along 1,
      // s1 along 0 (a missing dimension) and 2.
      gradientArgs("BroadcastGradientArgs", {2, 1, 3}, {4, 1}, {1}, {0, 2}),
      // A dimension that is 1 in both is reduced for both.
      gradientArgs("BroadcastGradientArgsOnes", {1, 2, 1, 3}, {1, 4, 1}, {0, 2},
                   {0, 1, 3}),
  };
}

std::vector<OpCase> mathCases() {
  const Literal m23 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Row maxima at columns 1 and 2, column minima at rows 0, 1, 0.
  const Literal mixed = f32({2, 3}, {1, 5, 3, 4, 2, 6});
  const Literal oneTwoThree = f32.vec({1, 2, 3});
  const Literal &a = m23;
  const Literal aT = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  const Literal b = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Literal bT = f32({2, 3}, {1, 3, 5, 2, 4, 6});
  // a x b for every way of storing a and b.
  const Literal ab = f32({2, 2}, {22, 28, 49, 64});
  const double inf = std::numeric_limits<double>::infinity();
  return {
      single("Add", "Add", {f32({2, 2}, {1, 2, 3, 4}), f32.vec({10, 20})},
             {T(kFloat)}, f32({2, 2}, {11, 22, 13, 24})),
      single("AddV2", "AddV2", {i32.vec({1, 2, 3}), i32(10)}, {T(kInt32)},
             i32.vec({11, 12, 13})),
      single("AddN", "AddN",
             {f32.vec({1, 2}), f32.vec({3, 4}), f32.vec({5, 6})},
             {T(kFloat), intAttr("N", 3)}, f32.vec({9, 12})),
      single("Sub", "Sub", {f32.vec({1, 2}), f32({2, 1}, {10, 20})},
             {T(kFloat)}, f32({2, 2}, {-9, -8, -19, -18})),
      single("Mul", "Mul", {f64.vec({1.5, 2}), f64.vec({2, -3})}, {T(kDouble)},
             f64.vec({3, -6})),
      single("RealDiv", "RealDiv", {f32.vec({1, -3, 1}), f32.vec({4, 2, 0})},
             {T(kFloat)}, f32.vec({0.25, -1.5, inf})),
      single("DivNoNan", "DivNoNan", {f32.vec({1, 2, 0}), f32.vec({2, 0, 0})},
             {T(kFloat)}, f32.vec({0.5, 0, 0})),
      single("FloorDiv", "FloorDiv",
             {i32.vec({-7, 7, 7, -7}), i32.vec({2, 2, -2, -2})}, {T(kInt32)},
             i32.vec({-4, 3, -4, 3})),
      single("FloorDivFloat", "FloorDiv", {f32.vec({-7.5, 7.5}), f32(2)},
             {T(kFloat)}, f32.vec({-4, 3})),
      // Towards zero, where FloorDiv rounds down; the remainder keeps the
      // dividend's sign (C's), where FloorMod's keeps the divisor's.
      single("TruncateDiv", "TruncateDiv",
             {i32.vec({-7, 7, 7, -7}), i32.vec({2, 2, -2, -2})}, {T(kInt32)},
             i32.vec({-3, 3, -3, 3})),
      single("TruncateDivFloat", "TruncateDiv", {f32.vec({-7.5, 7.5}), f32(2)},
             {T(kFloat)}, f32.vec({-3, 3})),
      single("TruncateMod", "TruncateMod",
             {i64.vec({-7, 7, 7, -7}), i64.vec({2, 2, -2, -2})}, {T(kInt64)},
             i64.vec({-1, 1, 1, -1})),
      single("ModFloat", "Mod",
             {f64.vec({-7.5, 7.5, 7.5}), f64.vec({2, -2, 2})}, {T(kDouble)},
             f64.vec({-1.5, 1.5, 1.5})),
      single("Maximum", "Maximum", {f32.vec({1, 5, 3}), f32.vec({4, 2, 3})},
             {T(kFloat)}, f32.vec({4, 5, 3})),
      single("Minimum", "Minimum", {i32.vec({1, 5, 3}), i32(2)}, {T(kInt32)},
             i32.vec({1, 2, 2})),
      single("Neg", "Neg", {f32.vec({1, -2, 0})}, {T(kFloat)},
             f32.vec({-1, 2, 0})),
      single("Square", "Square", {f32.vec({-3, 0.5})}, {T(kFloat)},
             f32.vec({9, 0.25})),
      single("SquareInt", "Square", {i32.vec({-3, 4})}, {T(kInt32)},
             i32.vec({9, 16})),
      single("Sqrt", "Sqrt", {f32.vec({4, 2.25, 0})}, {T(kFloat)},
             f32.vec({2, 1.5, 0})),
      single("Rsqrt", "Rsqrt", {f32.vec({4, 0.25})}, {T(kFloat)},
             f32.vec({0.5, 2})),
      single("Exp", "Exp", {f32.vec({0, 1, -1})}, {T(kFloat)},
             f32.vec({1, std::exp(1.0), std::exp(-1.0)})),
      single("Log", "Log", {f32.vec({1, std::exp(1.0), 0.5, 0})}, {T(kFloat)},
             f32.vec({0, 1, -std::log(2.0), -inf})),
      single("Log1p", "Log1p", {f32.vec({0, std::exp(1.0) - 1, -0.5})},
             {T(kFloat)}, f32.vec({0, 1, -std::log(2.0)})),
      // Trigonometric and hyperbolic functions at points with known values.
      single("Sin", "Sin", {f32.vec({0, M_PI / 6, -M_PI / 2})}, {T(kFloat)},
             f32.vec({0, 0.5, -1})),
      single("Cos", "Cos", {f32.vec({0, M_PI / 3, M_PI})}, {T(kFloat)},
             f32.vec({1, 0.5, -1})),
      single("Tan", "Tan", {f64.vec({0, M_PI / 4, -M_PI / 4})}, {T(kDouble)},
             f64.vec({0, 1, -1})),
      single("Asin", "Asin", {f32.vec({0, 0.5, -1, 2})}, {T(kFloat)},
             f32.vec({0, M_PI / 6, -M_PI / 2, NAN})),
      single("Acos", "Acos", {f32.vec({1, 0.5, -1})}, {T(kFloat)},
             f32.vec({0, M_PI / 3, M_PI})),
      single("Atan", "Atan", {f32.vec({0, 1, -inf})}, {T(kFloat)},
             f32.vec({0, M_PI / 4, -M_PI / 2})),
      single("Sinh", "Sinh", {f32.vec({0, std::log(2.0)})}, {T(kFloat)},
             f32.vec({0, 0.75})),
      single("Cosh", "Cosh", {f32.vec({0, std::log(2.0)})}, {T(kFloat)},
             f32.vec({1, 1.25})),
      single("Asinh", "Asinh", {f32.vec({0, 0.75})}, {T(kFloat)},
             f32.vec({0, std::log(2.0)})),
      single("Acosh", "Acosh", {f32.vec({1, 1.25, 0.5})}, {T(kFloat)},
             f32.vec({0, std::log(2.0), NAN})),
      single("Atanh", "Atanh", {f32.vec({0, 0.6, 1})}, {T(kFloat)},
             f32.vec({0, std::log(2.0), inf})),
      single("Erf", "Erf", {f64.vec({0, 0.5, -inf})}, {T(kDouble)},
             f64.vec({0, 0.5204998778130465, -1})),
      // Erfc keeps its digits where 1 - erf(x) rounds to 0.
      single("Erfc", "Erfc", {f64.vec({0, 2, 10, -inf})}, {T(kDouble)},
             f64.vec({1, 0.004677734981047266, 2.088487583762545e-45, 2})),
      single("Lgamma", "Lgamma", {f64.vec({1, 0.5, -0.5, 10, 0})}, {T(kDouble)},
             f64.vec({0, 0.5723649429247001, 1.2655121234846454,
                      12.801827480081469, inf})),
      // Digamma: -gamma at 1, NaN at the poles, reflected below 0.
      single("Digamma", "Digamma", {f64.vec({1, 0.5, 20, -0.5, 0, -3})},
             {T(kDouble)},
             f64.vec({-0.5772156649015329, -1.9635100260214235,
                      2.9705239922421490, 0.03648997397857652, NAN, NAN})),
      single("DigammaFloat", "Digamma", {f32.vec({1, 0.25})}, {T(kFloat)},
             f32.vec({-0.5772156649015329, -4.2274535005910857})),
      // Zeta(s, q): zeta(2) = pi^2/6, shifted by q; NaN below s = 1.
      single("Zeta", "Zeta",
             {f64.vec({2, 2, 3, 1, 0.5}), f64.vec({1, 2, 1, 1, 1})},
             {T(kDouble)},
             f64.vec({1.6449340668482264, 0.6449340668482264,
                      1.2020569031595942, inf, NAN})),
      // Polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x); n integral.
      single("Polygamma", "Polygamma",
             {f64.vec({0, 1, 2, 1.5}), f64.vec({1, 1, 1, 1})}, {T(kDouble)},
             f64.vec({-0.5772156649015329, 1.6449340668482264,
                      -2.4041138063191885, NAN})),
      single("Expm1", "Expm1", {f32.vec({0, std::log(2.0), -inf})}, {T(kFloat)},
             f32.vec({0, 1, -1})),
      // Rounding: Round and Rint take halves to the even neighbour.
      single("Ceil", "Ceil", {f32.vec({-1.5, 2.1, 3})}, {T(kFloat)},
             f32.vec({-1, 3, 3})),
      single("Round", "Round", {f32.vec({0.5, 1.5, 2.5, -0.5, -1.7})},
             {T(kFloat)}, f32.vec({0, 2, 2, -0.0, -2})),
      single("RoundInt", "Round", {i32.vec({-3, 7})}, {T(kInt32)},
             i32.vec({-3, 7})),
      single("Rint", "Rint", {f64.vec({0.5, 1.5, 2.5, -2.5})}, {T(kDouble)},
             f64.vec({0, 2, 2, -2})),
      single("Atan2", "Atan2",
             {f32.vec({1, 1, -1, 0}), f32.vec({1, -1, 0, -1})}, {T(kFloat)},
             f32.vec({M_PI / 4, 3 * M_PI / 4, -M_PI / 2, M_PI})),
      single("ReverseV2", "ReverseV2",
             {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i32.vec({-1})}, {T(kFloat)},
             f32({2, 3}, {3, 2, 1, 6, 5, 4})),
      single("ReverseV2Both", "ReverseV2",
             {i32({2, 2}, {1, 2, 3, 4}), i64.vec({1, 0})},
             {T(kInt32), typeAttr("Tidx", kInt64)}, i32({2, 2}, {4, 3, 2, 1})),
      single("CheckNumerics", "CheckNumerics", {f32.vec({1, -2.5, 0})},
             {T(kFloat), attr("message", "s: \"m\"")}, f32.vec({1, -2.5, 0})),
      single("IsNan", "IsNan", {f32.vec({1, inf, NAN, -inf})}, {T(kFloat)},
             boolean.vec({false, false, true, false})),
      single("IsInf", "IsInf", {f32.vec({1, inf, NAN, -inf})}, {T(kFloat)},
             boolean.vec({false, true, false, true})),
      single("IsFinite", "IsFinite", {f64.vec({1, inf, NAN, -inf})},
             {T(kDouble)}, boolean.vec({true, false, false, false})),
      single("Abs", "Abs", {f32.vec({-1.5, 2})}, {T(kFloat)},
             f32.vec({1.5, 2})),
      single("AbsInt", "Abs", {i32.vec({-3, 0, 4})}, {T(kInt32)},
             i32.vec({3, 0, 4})),
      single("Sign", "Sign", {f32.vec({-2.5, 0, 3})}, {T(kFloat)},
             f32.vec({-1, 0, 1})),
      single("SignInt", "Sign", {i32.vec({-7, 0, 9})}, {T(kInt32)},
             i32.vec({-1, 0, 1})),
      single("Pow", "Pow", {f32.vec({2, 4, 9}), f32.vec({3, 0.5, -0.5})},
             {T(kFloat)}, f32.vec({8, 2, 1.0 / 3})),
      single("PowInt", "Pow", {i32.vec({2, 3, -2}), i32.vec({3, 2, 3})},
             {T(kInt32)}, i32.vec({8, 9, -8})),
      single("Equal", "Equal", {oneTwoThree, f32.vec({1, 0, 3})}, {T(kFloat)},
             boolean.vec({true, false, true})),
      single("EqualBool", "Equal", {boolean.vec({true, false}), boolean(true)},
             {T(kBool)}, boolean.vec({true, false})),
      single("NotEqual", "NotEqual", {oneTwoThree, f32.vec({1, 0, 3})},
             {T(kFloat)}, boolean.vec({false, true, false})),
      single("Less", "Less", {oneTwoThree, f32(2)}, {T(kFloat)},
             boolean.vec({true, false, false})),
      single("Greater", "Greater", {oneTwoThree, f32(2)}, {T(kFloat)},
             boolean.vec({false, false, true})),
      single("LessEqual", "LessEqual", {oneTwoThree, f32(2)}, {T(kFloat)},
             boolean.vec({true, true, false})),
      single("GreaterEqual", "GreaterEqual", {oneTwoThree, f32(2)}, {T(kFloat)},
             boolean.vec({false, true, true})),
      single("LogicalAnd", "LogicalAnd",
             {boolean.vec({true, true, false, false}),
              boolean.vec({true, false, true, false})},
             {}, boolean.vec({true, false, false, false})),
      single("LogicalOr", "LogicalOr",
             {boolean.vec({true, true, false, false}),
              boolean.vec({true, false, true, false})},
             {}, boolean.vec({true, true, true, false})),
      single("LogicalNot", "LogicalNot", {boolean.vec({true, false})}, {},
             boolean.vec({false, true})),

      single("SumAxis1", "Sum", {m23, i32.vec({1})}, {T(kFloat)},
             f32.vec({6, 15})),
      single("SumKeepDims", "Sum", {m23, i32.vec({0})},
             {T(kFloat), boolAttr("keep_dims", true)}, f32({1, 3}, {5, 7, 9})),
      single("SumAllAxes", "Sum", {m23, i32.vec({0, -1})}, {T(kFloat)},
             f32(21)),
      // No axes: nothing is reduced.
      single("SumNoAxes", "Sum", {m23, i32({0}, {})}, {T(kFloat)}, m23),
      single("Mean", "Mean", {m23, i32.vec({0})}, {T(kFloat)},
             f32.vec({2.5, 3.5, 4.5})),
      // Integer means divide as integers: 7 / 3.
      single("MeanInt", "Mean", {i32.vec({1, 2, 4}), i32.vec({0})}, {T(kInt32)},
             i32(2)),
      single("MaxKeepDims", "Max", {mixed, i32.vec({1})},
             {T(kFloat), boolAttr("keep_dims", true)}, f32({2, 1}, {5, 6})),
      single("Min", "Min", {mixed, i32.vec({0})}, {T(kFloat)},
             f32.vec({1, 2, 3})),
      single("Prod", "Prod", {m23, i32.vec({1})}, {T(kFloat)},
             f32.vec({6, 120})),
      single("CumsumAxis1", "Cumsum", {m23, i32(1)}, {T(kFloat)},
             f32({2, 3}, {1, 3, 6, 4, 9, 15})),
      single(
          "CumsumExclusiveReverse", "Cumsum", {m23, i32(0)},
          {T(kFloat), boolAttr("exclusive", true), boolAttr("reverse", true)},
          f32({2, 3}, {4, 5, 6, 0, 0, 0})),
      single("Cumprod", "Cumprod", {m23, i32(-1)}, {T(kFloat)},
             f32({2, 3}, {1, 2, 6, 4, 20, 120})),
      single("CumprodExclusive", "Cumprod", {m23, i32(1)},
             {T(kFloat), boolAttr("exclusive", true)},
             f32({2, 3}, {1, 1, 2, 1, 4, 20})),
      single("ArgMax", "ArgMax", {mixed, i32(1)}, {T(kFloat)}, i64.vec({1, 2})),
      single("ArgMin", "ArgMin", {mixed, i32(0)}, {T(kFloat)},
             i64.vec({0, 1, 0})),
      // Ties go to the smallest index.
      single("ArgMaxTieInt32", "ArgMax", {f32.vec({3, 1, 3}), i32(0)},
             {T(kFloat), typeAttr("output_type", kInt32)}, i32(0)),

      single("MatMul", "MatMul", {a, b}, {T(kFloat)}, ab),
      single("MatMulTransposeA", "MatMul", {aT, b},
             {T(kFloat), boolAttr("transpose_a", true)}, ab),
      single("MatMulTransposeB", "MatMul", {a, bT},
             {T(kFloat), boolAttr("transpose_b", true)}, ab),
      single("MatMulTransposeBoth", "MatMul", {aT, bT},
             {T(kFloat), boolAttr("transpose_a", true),
              boolAttr("transpose_b", true)},
             ab),
      // A batch of [I, [[1,2],[3,4]]] times one matrix.
      single(
          "BatchMatMulV2", "BatchMatMulV2",
          {f32({2, 2, 2}, {1, 0, 0, 1, 1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8})},
          {T(kFloat)}, f32({2, 2, 2}, {5, 6, 7, 8, 19, 22, 43, 50})),
      // Batch dims [2, 1] and [3] broadcast to [2, 3]: every row of x
      // times every column of y.
      single(
          "BatchMatMulV2BroadcastBoth", "BatchMatMulV2",
          {f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({3, 2, 1}, {1, 1, 1, 0, 0, 1})},
          {T(kFloat)}, f32({2, 3, 1, 1}, {3, 1, 2, 7, 3, 4})),
      single("BatchMatMulV2AdjY", "BatchMatMulV2",
             {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8})},
             {T(kFloat), boolAttr("adj_y", true)},
             f32({2, 2}, {17, 23, 39, 53})),
  };
}

std::vector<OpCase> nnCases() {
  // Softmax rows: exp gives [1, 2, 5] / 8 and [1, 1, 1] / 3.
  const Literal logits =
      f32({2, 3}, {0, std::log(2.0), std::log(5.0), 1, 1, 1});
  const double third = 1.0 / 3;
  const Literal image3x3 = f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Literal image4x4 = f32(
      {1, 4, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  const Literal diagonalFilter = f32({2, 2, 1, 1}, {1, 0, 0, 1});
  const Literal filter1234 = f32({2, 2, 1, 1}, {1, 2, 3, 4});
  const Literal dy1234 = f32({1, 2, 2, 1}, {1, 2, 3, 4});
  auto window = [](Dims ksize, Dims strides, const std::string &padding) {
    return std::vector<std::string>{T(kFloat), intsAttr("ksize", ksize),
                                    intsAttr("strides", strides),
                                    strAttr("padding", padding)};
  };
  const auto valid2x2 = window({1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  // SAME, 3x3 windows, stride 2 on 3x3: one row and column of padding on
  // each side, every window sees 2x2 real inputs.
  const auto same3x3 = window({1, 3, 3, 1}, {1, 2, 2, 1}, "SAME");
  auto conv = [](Dims strides, const std::string &padding) {
    return std::vector<std::string>{T(kFloat), intsAttr("strides", strides),
                                    strAttr("padding", padding)};
  };
  // x is NHWC [2,1,1,2]: channel 0 holds {1, 3}, channel 1 {2, 6}.
  const Literal bnInput = f32({2, 1, 1, 2}, {1, 2, 3, 6});
  auto batchNorm = [](bool training) {
    return std::vector<std::string>{
        T(kFloat), typeAttr("U", kFloat), floatAttr("epsilon", 0.001),
        strAttr("data_format", "NHWC"), boolAttr("is_training", training)};
  };
  return {
      single("Relu", "Relu", {f32.vec({-1, 0, 2.5})}, {T(kFloat)},
             f32.vec({0, 0, 2.5})),
      single("Relu6", "Relu6", {f32.vec({-1, 3, 7})}, {T(kFloat)},
             f32.vec({0, 3, 6})),
      single("Elu", "Elu", {f32.vec({-1, 0, 2})}, {T(kFloat)},
             f32.vec({std::exp(-1.0) - 1, 0, 2})),
      // Softplus is x past 13.94 and exp(x) below -13.94 (float), as
      // TensorFlow's kernel.
      single("Softplus", "Softplus",
             {f32.vec({0, std::log(3.0), -std::log(3.0), 20, -20})},
             {T(kFloat)},
             f32.vec({std::log(2.0), std::log(4.0), std::log(4.0 / 3), 20,
                      std::exp(-20.0)})),
      single("Softsign", "Softsign", {f32.vec({0, 1, -3})}, {T(kFloat)},
             f32.vec({0, 0.5, -0.75})),
      single("SoftplusGrad", "SoftplusGrad",
             {f32.vec({1, 2}), f32.vec({0, std::log(3.0)})}, {T(kFloat)},
             f32.vec({0.5, 1.5})),
      single("SoftsignGrad", "SoftsignGrad",
             {f32.vec({1, 4}), f32.vec({0, -1})}, {T(kFloat)},
             f32.vec({1, 1})),
      single("Sigmoid", "Sigmoid",
             {f32.vec({0, std::log(3.0), -std::log(3.0)})}, {T(kFloat)},
             f32.vec({0.5, 0.75, 0.25})),
      single("Tanh", "Tanh",
             {f32.vec({0, std::log(3.0) / 2, -std::log(3.0) / 2})}, {T(kFloat)},
             f32.vec({0, 0.5, -0.5})),
      single("Softmax", "Softmax", {logits}, {T(kFloat)},
             f32({2, 3}, {0.125, 0.25, 0.625, third, third, third})),
      single("LogSoftmax", "LogSoftmax", {logits}, {T(kFloat)},
             f32({2, 3}, {std::log(0.125), std::log(0.25), std::log(0.625),
                          std::log(third), std::log(third), std::log(third)})),
      single("BiasAdd", "BiasAdd",
             {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32.vec({10, 20, 30})},
             {T(kFloat)}, f32({2, 3}, {11, 22, 33, 14, 25, 36})),
      single("BiasAddNCHW", "BiasAdd",
             {f32({1, 2, 2}, {1, 2, 3, 4}), f32.vec({10, 20})},
             {T(kFloat), strAttr("data_format", "NCHW")},
             f32({1, 2, 2}, {11, 12, 23, 24})),
      single("BiasAddGrad", "BiasAddGrad", {f32({2, 3}, {1, 2, 3, 4, 5, 6})},
             {T(kFloat)}, f32.vec({5, 7, 9})),
      single("BiasAddGradNCHW", "BiasAddGrad", {f32({1, 2, 2}, {1, 2, 3, 4})},
             {T(kFloat), strAttr("data_format", "NCHW")}, f32.vec({3, 7})),

      // y[i][j] = x[i][j] + x[i+1][j+1].
      single("Conv2DValid", "Conv2D", {image3x3, diagonalFilter},
             conv({1, 1, 1, 1}, "VALID"), f32({1, 2, 2, 1}, {6, 8, 12, 14})),
      // Output 2x2; the one row and column of padding go after the input.
      single("Conv2DSameStride2", "Conv2D", {image3x3, diagonalFilter},
             conv({1, 2, 2, 1}, "SAME"), f32({1, 2, 2, 1}, {6, 3, 7, 9})),
      // 1x1 filter from 2 channels to 2: [1, 2] x [[1, 2], [3, 4]].
      single("Conv2DChannels", "Conv2D",
             {f32({1, 1, 1, 2}, {1, 2}), f32({1, 1, 2, 2}, {1, 2, 3, 4})},
             conv({1, 1, 1, 1}, "VALID"), f32({1, 1, 1, 2}, {7, 10})),
      single("MaxPoolValid", "MaxPool", {image4x4}, valid2x2,
             f32({1, 2, 2, 1}, {6, 8, 14, 16})),
      single("MaxPoolSame", "MaxPool", {image3x3}, same3x3,
             f32({1, 2, 2, 1}, {5, 6, 8, 9})),
      single("AvgPoolValid", "AvgPool", {image4x4}, valid2x2,
             f32({1, 2, 2, 1}, {3.5, 5.5, 11.5, 13.5})),
      // Padding does not count in the average.
      single("AvgPoolSame", "AvgPool", {image3x3}, same3x3,
             f32({1, 2, 2, 1}, {3, 4, 6, 7})),

      // Row 0: a one-hot label; row 1: a soft one.
      OpCase("SoftmaxCrossEntropyWithLogits")
          .constant("logits", logits)
          .constant("labels", f32({2, 3}, {0, 0, 1, 0.5, 0.5, 0}))
          .node("xent", "SoftmaxCrossEntropyWithLogits", {"logits", "labels"},
                {T(kFloat)})
          .expect("xent:0", f32.vec({-std::log(0.625), std::log(3.0)}))
          .expect("xent:1", f32({2, 3}, {0.125, 0.25, -0.375, third - 0.5,
                                         third - 0.5, third})),
      OpCase("SparseSoftmaxCrossEntropyWithLogits")
          .constant("logits", logits)
          .constant("labels", i32.vec({2, 0}))
          .node("xent", "SparseSoftmaxCrossEntropyWithLogits",
                {"logits", "labels"}, {T(kFloat), typeAttr("Tlabels", kInt32)})
          .expect("xent:0", f32.vec({-std::log(0.625), std::log(3.0)}))
          .expect("xent:1",
                  f32({2, 3}, {0.125, 0.25, -0.375, third - 1, third, third})),

      // Training normalizes with the batch's biased variance ({1, 4}) and
      // reports the unbiased one ({2, 8}, n = 2). Like tf.nn's
      // fused_batch_norm, it passes empty mean and variance.
      OpCase("FusedBatchNormV3Training")
          .constant("x", bnInput)
          .constant("scale", f32.vec({1, 2}))
          .constant("offset", f32.vec({0, 1}))
          .constant("empty", f32({0}, {}))
          .node("bn", "FusedBatchNormV3",
                {"x", "scale", "offset", "empty", "empty"},
                batchNorm(/*training=*/true))
          .expect("bn:0", f32({2, 1, 1, 2},
                              {-1 / std::sqrt(1.001), 1 - 4 / std::sqrt(4.001),
                               1 / std::sqrt(1.001), 1 + 4 / std::sqrt(4.001)}))
          .expect("bn:1", f32.vec({2, 4}))
          .expect("bn:2", f32.vec({2, 8})),
      // Variance + epsilon = {0.25, 4}: y = 4 (x - 1) + 1 and (x - 2) / 2 - 1.
      OpCase("FusedBatchNormV3Inference")
          .constant("x", bnInput)
          .constant("scale", f32.vec({2, 1}))
          .constant("offset", f32.vec({1, -1}))
          .constant("mean", f32.vec({1, 2}))
          .constant("variance", f32.vec({0.249, 3.999}))
          .node("bn", "FusedBatchNormV3",
                {"x", "scale", "offset", "mean", "variance"},
                batchNorm(/*training=*/false))
          .expect("bn:0", f32({2, 1, 1, 2}, {1, -1, 9, 1})),

      // Gradients. ReluGrad passes where features > 0 (not at 0).
      single("ReluGrad", "ReluGrad",
             {f32.vec({1, 2, 3, 4}), f32.vec({-1, 0, 0.5, 2})}, {T(kFloat)},
             f32.vec({0, 0, 3, 4})),
      // dy * y * (1 - y)
      single("SigmoidGrad", "SigmoidGrad",
             {f32.vec({0.5, 0.25}), f32.vec({2, 4})}, {T(kFloat)},
             f32.vec({0.5, 0.75})),
      // dy * (1 - y^2)
      single("TanhGrad", "TanhGrad", {f32.vec({0.5, -0.5}), f32.vec({2, 1})},
             {T(kFloat)}, f32.vec({1.5, 0.75})),
      // y = rsqrt(x): dy * -y^3 / 2
      single("RsqrtGrad", "RsqrtGrad", {f32.vec({0.5, 2}), f32.vec({8, 1})},
             {T(kFloat)}, f32.vec({-0.5, -4})),
      // y = sqrt(x): dy / (2 y)
      single("SqrtGrad", "SqrtGrad", {f32.vec({2, 0.25}), f32.vec({4, 1})},
             {T(kFloat)}, f32.vec({1, 2})),
      // dx[i][j] = sum of dy[p][q] * w[i-p][j-q]; sums to 10 * 10.
      single("Conv2DBackpropInputValid", "Conv2DBackpropInput",
             {i32.vec({1, 3, 3, 1}), filter1234, dy1234},
             conv({1, 1, 1, 1}, "VALID"),
             f32({1, 3, 3, 1}, {1, 4, 4, 6, 20, 16, 9, 24, 16})),
      // Stride 2: each input cell is seen by one output, through w[i%2][j%2].
      single("Conv2DBackpropInputSameStride2", "Conv2DBackpropInput",
             {i32.vec({1, 3, 3, 1}), filter1234, dy1234},
             conv({1, 2, 2, 1}, "SAME"),
             f32({1, 3, 3, 1}, {1, 2, 2, 3, 4, 6, 3, 6, 4})),
      // dw[i][j] = sum of dy[p][q] * x[p+i][q+j].
      single("Conv2DBackpropFilter", "Conv2DBackpropFilter",
             {image3x3, i32.vec({2, 2, 1, 1}), dy1234},
             conv({1, 1, 1, 1}, "VALID"), f32({2, 2, 1, 1}, {37, 47, 67, 77})),
      // Window maxima 9, 8, 7, 5 sit at (0,1), (1,3), (2,0), (3,2).
      single(
          "MaxPoolGrad", "MaxPoolGrad",
          {f32({1, 4, 4, 1}, {1, 9, 2, 3, 4, 5, 6, 8, 7, 0, 1, 2, 3, 6, 5, 4}),
           f32({1, 2, 2, 1}, {9, 8, 7, 5}), dy1234},
          valid2x2,
          f32({1, 4, 4, 1}, {0, 1, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 4, 0})),
      // Four overlapping windows share the centre maximum: gradients add.
      single("MaxPoolGradOverlapping", "MaxPoolGrad",
             {f32({1, 3, 3, 1}, {1, 2, 3, 4, 9, 5, 6, 7, 8}),
              f32({1, 2, 2, 1}, {9, 9, 9, 9}), dy1234},
             window({1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"),
             f32({1, 3, 3, 1}, {0, 0, 0, 0, 10, 0, 0, 0, 0})),
      single(
          "AvgPoolGradValid", "AvgPoolGrad",
          {i32.vec({1, 4, 4, 1}), f32({1, 2, 2, 1}, {4, 8, 12, 16})}, valid2x2,
          f32({1, 4, 4, 1}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4})),
      // Each window spreads its gradient over its 4 real inputs.
      single("AvgPoolGradSame", "AvgPoolGrad",
             {i32.vec({1, 3, 3, 1}), f32({1, 2, 2, 1}, {4, 8, 12, 16})},
             same3x3, f32({1, 3, 3, 1}, {1, 3, 2, 4, 10, 6, 3, 7, 4})),
  };
}

std::vector<OpCase> randomCases() {
  return {
      // Successive runs draw new numbers.
      OpCase("RandomUniform")
          .constant("shape", i32.vec({2, 3}))
          .node("r", "RandomUniform", {"shape"},
                {typeAttr("dtype", kFloat), T(kInt32), intAttr("seed", 1),
                 intAttr("seed2", 2)})
          .expectUniform("r", kFloat, {2, 3})
          .rerun(Rerun::NewValues),
      // Same key, counter and algorithm (1, Philox): same numbers.
      OpCase("StatelessRandomUniformV2")
          .constant("shape", i32.vec({2, 3}))
          .constant("key", u64.vec({7}))
          .constant("counter", u64.vec({0, 0}))
          .constant("alg", i32(1))
          .node("r", "StatelessRandomUniformV2",
                {"shape", "key", "counter", "alg"},
                {typeAttr("dtype", kFloat), typeAttr("Tshape", kInt32)})
          .expectUniform("r", kFloat, {2, 3})
          .rerun(Rerun::SameValues),
  };
}

/// Integer arithmetic wraps (two's complement) as TensorFlow's kernels do,
/// at the limits of every integer dtype: signed types around -2^(b-1) (its
/// halves sum to it, it is its own negation and absolute value, divided by
/// -1 it stays), unsigned types around 2^b.
std::vector<OpCase> wrapCases() {
  std::vector<OpCase> cases;
  struct IntType {
    int32_t dtype;
    int bits;
    bool isSigned;
  };
  for (IntType t : {IntType{kInt8, 8, true}, IntType{kUInt8, 8, false},
                    IntType{kInt16, 16, true}, IntType{kUInt16, 16, false},
                    IntType{kInt32, 32, true}, IntType{kUInt32, 32, false},
                    IntType{kInt64, 64, true}, IntType{kUInt64, 64, false}}) {
    LiteralsOf of{t.dtype};
    std::string name = "Wrap" + dtypeName(t.dtype);
    // Signed: half = 2^(b-2), two halves make the minimum; unsigned:
    // half = 2^(b-1), two make 0.
    double half = std::ldexp(1.0, t.bits - (t.isSigned ? 2 : 1));
    double wrapped = t.isSigned ? -2 * half : 0;
    cases.push_back(single(name + "Add", "AddV2", {of(half), of(half)},
                           {T(t.dtype)}, of(wrapped)));
    cases.push_back(single(name + "Mul", "Mul", {of(half), of(2)}, {T(t.dtype)},
                           of(wrapped)));
    cases.push_back(single(name + "Square", "Square",
                           {of(std::ldexp(1.0, t.bits / 2))}, {T(t.dtype)},
                           of(0)));
    cases.push_back(single(name + "Sum", "Sum", {of.vec({half, half}), i32(0)},
                           {T(t.dtype)}, of(wrapped)));
    cases.push_back(single(name + "Cumprod", "Cumprod",
                           {of.vec({half, 2, 2}), i32(0)}, {T(t.dtype)},
                           of.vec({half, wrapped, 0})));
    cases.push_back(OpCase(name + "UnsortedSegmentSum")
                        .constant("data", of.vec({half, half}))
                        .constant("ids", i32.vec({0, 0}))
                        .constant("n", i32(1))
                        .node("y", "UnsortedSegmentSum", {"data", "ids", "n"},
                              {T(t.dtype), typeAttr("Tindices", kInt32),
                               typeAttr("Tnumsegments", kInt32)})
                        .expect("y", of.vec({wrapped})));
    if (!t.isSigned) {
      cases.push_back(single(name + "Sub", "Sub", {of(0), of(half)},
                             {T(t.dtype)}, of(half)));
      continue;
    }
    double min = wrapped;
    cases.push_back(
        single(name + "Sub", "Sub", {of(0), of(min)}, {T(t.dtype)}, of(min)));
    cases.push_back(
        single(name + "Neg", "Neg", {of(min)}, {T(t.dtype)}, of(min)));
    cases.push_back(
        single(name + "Abs", "Abs", {of(min)}, {T(t.dtype)}, of(min)));
    cases.push_back(
        single(name + "Div", "Div", {of(min), of(-1)}, {T(t.dtype)}, of(min)));
    cases.push_back(single(name + "FloorDiv", "FloorDiv", {of(min), of(-1)},
                           {T(t.dtype)}, of(min)));
    cases.push_back(single(name + "FloorMod", "FloorMod", {of(min), of(-1)},
                           {T(t.dtype)}, of(0)));
  }
  return cases;
}

/// A ref variable "v" of [2] floats, assigned [1, 2] by "init".
OpCase refVariable(const std::string &name) {
  return OpCase(name)
      .node("v", "VariableV2", {},
            {typeAttr("dtype", kFloat), shapeAttr("shape", {2})})
      .constant("initial", f32.vec({1, 2}))
      .node("init", "Assign", {"v", "initial"}, {T(kFloat)});
}

/// A ref variable "v" of [[1, 2], [3, 4], [5, 6]] ("init" assigns it) and
/// the rows 2, 0, 2 of a scatter ("indices", "updates").
OpCase rows(const std::string &name) {
  return OpCase(name)
      .node("v", "VariableV2", {},
            {typeAttr("dtype", kFloat), shapeAttr("shape", {3, 2})})
      .constant("initial", f32({3, 2}, {1, 2, 3, 4, 5, 6}))
      .node("init", "Assign", {"v", "initial"}, {T(kFloat)})
      .constant("indices", i32.vec({2, 0, 2}))
      .constant("updates", f32({3, 2}, {1, 1, 10, 10, 2, 2}));
}

/// The same as a resource variable.
OpCase resourceRows(const std::string &name) {
  return OpCase(name)
      .resourceVariable("v", f32({3, 2}, {1, 2, 3, 4, 5, 6}))
      .constant("indices", i32.vec({2, 0, 2}))
      .constant("updates", f32({3, 2}, {1, 1, 10, 10, 2, 2}));
}

std::vector<OpCase> stateCases() {
  // accum = 0.9 * [0.5, 0] + [1, -2] = [1.45, -2].
  auto momentum = [](const std::string &name, bool nesterov,
                     const Literal &var) {
    return OpCase(name)
        .resourceVariable("var", f32.vec({1, 2}))
        .resourceVariable("accum", f32.vec({0.5, 0}))
        .constant("lr", f32(0.1))
        .constant("grad", f32.vec({1, -2}))
        .constant("momentum", f32(0.9))
        .node("apply", "ResourceApplyMomentum",
              {"var", "accum", "lr", "grad", "momentum"},
              {T(kFloat), boolAttr("use_nesterov", nesterov)})
        .runFirst("var/init")
        .runFirst("accum/init")
        .runFirst("apply")
        .expect("var/read", var)
        .expect("accum/read", f32.vec({1.45, -2}));
  };

  return {
      refVariable("VariableV2").runFirst("init").expect("v", f32.vec({1, 2})),
      refVariable("Assign").expect("init", f32.vec({1, 2})),
      refVariable("AssignAdd")
          .constant("delta", f32.vec({10, 20}))
          .node("inc", "AssignAdd", {"v", "delta"}, {T(kFloat)})
          .runFirst("init")
          .expect("inc", f32.vec({11, 22})),
      // v - alpha * delta
      refVariable("ApplyGradientDescent")
          .constant("alpha", f32(0.5))
          .constant("delta", f32.vec({2, -4}))
          .node("step", "ApplyGradientDescent", {"v", "alpha", "delta"},
                {T(kFloat)})
          .runFirst("init")
          .expect("step", f32.vec({0, 4})),
      OpCase("ReadVariableOp")
          .resourceVariable("v", f32.vec({1, 2}))
          .runFirst("v/init")
          .expect("v/read", f32.vec({1, 2})),
      OpCase("AssignAddSubVariableOp")
          .resourceVariable("v", f32.vec({1, 2}))
          .constant("ten", f32.vec({10, 20}))
          .constant("one", f32.vec({1, 1}))
          .node("add", "AssignAddVariableOp", {"v", "ten"},
                {typeAttr("dtype", kFloat)})
          .node("sub", "AssignSubVariableOp", {"v", "one"},
                {typeAttr("dtype", kFloat)})
          .runFirst("v/init")
          .runFirst("add")
          .runFirst("sub")
          .expect("v/read", f32.vec({10, 21})),
      OpCase("ResourceApplyGradientDescent")
          .resourceVariable("v", f32.vec({1, 2}))
          .constant("alpha", f32(0.5))
          .constant("delta", f32.vec({2, -4}))
          .node("step", "ResourceApplyGradientDescent", {"v", "alpha", "delta"},
                {T(kFloat)})
          .runFirst("v/init")
          .runFirst("step")
          .expect("v/read", f32.vec({0, 4})),
      // Rows 2, 0 and 2 again of [[1, 2], [3, 4], [5, 6]]: repeated rows
      // add up.
      rows("ScatterAdd")
          .node("scatter", "ScatterAdd", {"v", "indices", "updates"},
                {T(kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("init")
          .expect("scatter", f32({3, 2}, {11, 12, 3, 4, 8, 9})),
      rows("ScatterSub")
          .node("scatter", "ScatterSub", {"v", "indices", "updates"},
                {T(kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("init")
          .expect("scatter", f32({3, 2}, {-9, -8, 3, 4, 2, 3})),
      resourceRows("ResourceScatterAdd")
          .node("scatter", "ResourceScatterAdd", {"v", "indices", "updates"},
                {typeAttr("dtype", kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("v/init")
          .runFirst("scatter")
          .expect("v/read", f32({3, 2}, {11, 12, 3, 4, 8, 9})),
      resourceRows("ResourceScatterSub")
          .node("scatter", "ResourceScatterSub", {"v", "indices", "updates"},
                {typeAttr("dtype", kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("v/init")
          .runFirst("scatter")
          .expect("v/read", f32({3, 2}, {-9, -8, 3, 4, 2, 3})),
      // Row 1 of var [[1, 2], [3, 4]] with accum 0.5: accum = 0.9 * 0.5 +
      // g, var -= 0.1 * accum; row 0 untouched.
      OpCase("SparseApplyMomentum")
          .node("var", "VariableV2", {},
                {typeAttr("dtype", kFloat), shapeAttr("shape", {2, 2})})
          .node("accum", "VariableV2", {},
                {typeAttr("dtype", kFloat), shapeAttr("shape", {2, 2})})
          .constant("var0", f32({2, 2}, {1, 2, 3, 4}))
          .constant("accum0", f32({2, 2}, {0.5, 0.5, 0.5, 0.5}))
          .node("var/init", "Assign", {"var", "var0"}, {T(kFloat)})
          .node("accum/init", "Assign", {"accum", "accum0"}, {T(kFloat)})
          .constant("lr", f32(0.1))
          .constant("grad", f32({1, 2}, {1, -2}))
          .constant("indices", i32.vec({1}))
          .constant("momentum", f32(0.9))
          .node("apply", "SparseApplyMomentum",
                {"var", "accum", "lr", "grad", "indices", "momentum"},
                {T(kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("var/init")
          .runFirst("accum/init")
          .expect("apply", f32({2, 2}, {1, 2, 3 - 0.1 * 1.45,
                                        4 - 0.1 * (0.45 - 2)})),
      OpCase("ResourceSparseApplyMomentum")
          .resourceVariable("var", f32({2, 2}, {1, 2, 3, 4}))
          .resourceVariable("accum", f32({2, 2}, {0.5, 0.5, 0.5, 0.5}))
          .constant("lr", f32(0.1))
          .constant("grad", f32({1, 2}, {1, -2}))
          .constant("indices", i32.vec({1}))
          .constant("momentum", f32(0.9))
          .node("apply", "ResourceSparseApplyMomentum",
                {"var", "accum", "lr", "grad", "indices", "momentum"},
                {T(kFloat), typeAttr("Tindices", kInt32)})
          .runFirst("var/init")
          .runFirst("accum/init")
          .runFirst("apply")
          .expect("var/read",
                  f32({2, 2}, {1, 2, 3 - 0.1 * 1.45, 4 - 0.1 * (0.45 - 2)}))
          .expect("accum/read", f32({2, 2}, {0.5, 0.5, 1.45, 0.45 - 2})),
      // var -= lr * accum.
      momentum("ResourceApplyMomentum", /*nesterov=*/false,
               f32.vec({1 - 0.1 * 1.45, 2 + 0.1 * 2})),
      // var -= lr * grad + lr * momentum * accum.
      momentum("ResourceApplyMomentumNesterov", /*nesterov=*/true,
               f32.vec({1 - 0.1 - 0.1 * 0.9 * 1.45, 2 + 0.2 + 0.1 * 0.9 * 2})),
      // One Adam step from m = v = 0 with bias-corrected powers moves each
      // weight by lr against its gradient's sign: m = 0.1 g, v = 0.001 g^2,
      // lr_t = lr * sqrt(1 - 0.999) / (1 - 0.9), and lr_t * m / sqrt(v) = lr.
      OpCase("ResourceApplyAdam")
          .resourceVariable("var", f32.vec({1, 2}))
          .resourceVariable("m", f32.vec({0, 0}))
          .resourceVariable("v", f32.vec({0, 0}))
          .constant("beta1_power", f32(0.9))
          .constant("beta2_power", f32(0.999))
          .constant("lr", f32(0.1))
          .constant("beta1", f32(0.9))
          .constant("beta2", f32(0.999))
          .constant("epsilon", f32(1e-8))
          .constant("grad", f32.vec({0.5, -1}))
          .node("apply", "ResourceApplyAdam",
                {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1",
                 "beta2", "epsilon", "grad"},
                {T(kFloat)})
          .runFirst("var/init")
          .runFirst("m/init")
          .runFirst("v/init")
          .runFirst("apply")
          .expect("var/read", f32.vec({0.9, 2.1}))
          .expect("m/read", f32.vec({0.05, -0.1}))
          .expect("v/read", f32.vec({0.00025, 0.001})),
  };
}

/// A v1 conditional: out = pred ? x * 10 : -x, with x = 3.
OpCase v1Cond(const std::string &name, bool pred) {
  return OpCase(name)
      .constant("x", f32(3))
      .constant("pred", boolean(pred))
      .constant("ten", f32(10))
      .node("switch", "Switch", {"x", "pred"}, {T(kFloat)})
      .node("then", "Mul", {"switch:1", "ten"}, {T(kFloat)})
      .node("else", "Neg", {"switch:0"}, {T(kFloat)})
      .node("out", "Merge", {"else", "then"}, {T(kFloat), intAttr("N", 2)})
      .expect("out", f32(pred ? 30 : -3))
      .expect("out:1", i32(pred ? 1 : 0))
      .expect(pred ? "switch:1" : "switch:0", f32(3));
}

/// tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2), [0, x]) as
/// TensorFlow 1.x builds it, with n = 5 and x = [1, 3].
OpCase v1WhileLoop() {
  const std::string frame = strAttr("frame_name", "while/while_context");
  return OpCase("V1WhileLoop")
      .constant("n", i32(5))
      .constant("x", f32.vec({1, 3}))
      .constant("zero", i32(0))
      .node("while/Enter", "Enter", {"zero"}, {T(kInt32), frame})
      .node("while/Enter_1", "Enter", {"x"}, {T(kFloat), frame})
      .node("while/Merge", "Merge", {"while/Enter", "while/NextIteration"},
            {T(kInt32), intAttr("N", 2)})
      .node("while/Merge_1", "Merge",
            {"while/Enter_1", "while/NextIteration_1"},
            {T(kFloat), intAttr("N", 2)})
      .node("while/Less/Enter", "Enter", {"n"},
            {T(kInt32), frame, boolAttr("is_constant", true)})
      .node("while/Less", "Less", {"while/Merge", "while/Less/Enter"},
            {T(kInt32)})
      .node("while/LoopCond", "LoopCond", {"while/Less"})
      .node("while/Switch", "Switch", {"while/Merge", "while/LoopCond"},
            {T(kInt32)})
      .node("while/Switch_1", "Switch", {"while/Merge_1", "while/LoopCond"},
            {T(kFloat)})
      .node("while/Identity", "Identity", {"while/Switch:1"}, {T(kInt32)})
      .node("while/Identity_1", "Identity", {"while/Switch_1:1"}, {T(kFloat)})
      .constant("while/add/y", i32(1), {"^while/Identity"})
      .node("while/add", "AddV2", {"while/Identity", "while/add/y"},
            {T(kInt32)})
      .constant("while/mul/y", f32(2), {"^while/Identity"})
      .node("while/mul", "Mul", {"while/Identity_1", "while/mul/y"},
            {T(kFloat)})
      .node("while/NextIteration", "NextIteration", {"while/add"}, {T(kInt32)})
      .node("while/NextIteration_1", "NextIteration", {"while/mul"},
            {T(kFloat)})
      .node("while/Exit", "Exit", {"while/Switch"}, {T(kInt32)})
      .node("while/Exit_1", "Exit", {"while/Switch_1"}, {T(kFloat)})
      .expect("while/Exit", i32(5))
      .expect("while/Exit_1", f32.vec({32, 96}))
      .partialShapes("the Merges' NextIteration inputs depend on the Merges, "
                     "and TensorFlow's MergeShape is unknown while an input "
                     "is: so is everything the loop computes");
}

std::vector<OpCase> controlFlowCases() {
  const std::vector<std::string> library = {twiceFn(), negateFn(),
                                            belowThreeFn(), stepFn()};
  auto ifAttrs = [](int32_t condType) {
    return std::vector<std::string>{
        typeAttr("Tcond", condType),       typesAttr("Tin", {kFloat}),
        typesAttr("Tout", {kFloat}),       funcAttr("then_branch", "Twice"),
        funcAttr("else_branch", "Negate"), shapesAttr("output_shapes", {{2}})};
  };
  const std::vector<std::string> whileAttrs = {typesAttr("T", {kInt32, kFloat}),
                                               funcAttr("cond", "BelowThree"),
                                               funcAttr("body", "Step")};
  auto callAttrs = [](const std::string &function) {
    return std::vector<std::string>{typesAttr("Tin", {kFloat}),
                                    typesAttr("Tout", {kFloat}),
                                    funcAttr("f", function)};
  };
  return {
      v1Cond("SwitchMergeTrue", true),
      v1Cond("SwitchMergeFalse", false),
      v1WhileLoop(),
      // The loop ops' shape functions on their own, outside a loop.
      OpCase("LoopOpShapes")
          .constant("x", f32({2, 3}, {1, 2, 3, 4, 5, 6}))
          .constant("pred", boolean(true))
          .node("enter", "Enter", {"x"},
                {T(kFloat), strAttr("frame_name", "frame")})
          .node("exit", "Exit", {"enter"}, {T(kFloat)})
          .node("next", "NextIteration", {"x"}, {T(kFloat)})
          .node("cond", "LoopCond", {"pred"})
          .expectShape("enter", {2, 3})
          .expectShape("exit", {2, 3})
          .expectShape("next", {2, 3})
          .expectShape("cond", {})
          .shapeOnly(),
      OpCase("If")
          .functions(library)
          .constant("pred", boolean(true))
          .constant("x", f32.vec({1, 2}))
          .node("if", "If", {"pred", "x"}, ifAttrs(kBool))
          .expect("if", f32.vec({2, 4})),
      // A non-boolean scalar condition is true when nonzero.
      OpCase("StatelessIfIntCondition")
          .functions(library)
          .constant("pred", i32(0))
          .constant("x", f32.vec({1, 2}))
          .node("if", "StatelessIf", {"pred", "x"}, ifAttrs(kInt32))
          .expect("if", f32.vec({-1, -2})),
      // (0, x) -> (3, 8 x)
      OpCase("While")
          .functions(library)
          .constant("i", i32(0))
          .constant("x", f32.vec({1, 3}))
          .node("loop", "While", {"i", "x"}, whileAttrs)
          .expect("loop:0", i32(3))
          .expect("loop:1", f32.vec({8, 24})),
      // (1, x) -> (3, 4 x)
      OpCase("StatelessWhile")
          .functions(library)
          .constant("i", i32(1))
          .constant("x", f32.vec({1, 1}))
          .node("loop", "StatelessWhile", {"i", "x"}, whileAttrs)
          .expect("loop:0", i32(3))
          .expect("loop:1", f32.vec({4, 4})),
      OpCase("PartitionedCall")
          .functions(library)
          .constant("x", f32.vec({1, 2}))
          .node("call", "PartitionedCall", {"x"}, callAttrs("Twice"))
          .expect("call", f32.vec({2, 4})),
      OpCase("StatefulPartitionedCall")
          .functions(library)
          .constant("x", f32.vec({1, 2}))
          .node("call", "StatefulPartitionedCall", {"x"}, callAttrs("Negate"))
          .expect("call", f32.vec({-1, -2})),
      // A node whose op is a library function calls it.
      OpCase("FunctionCallByName")
          .functions(library)
          .constant("x", f32.vec({1, 2}))
          .node("call", "Twice", {"x"})
          .expect("call", f32.vec({2, 4})),
  };
}

std::vector<OpCase> hostCases() {
  using namespace std::string_literals;
  return {
      // Print forwards its input and logs the message, then each data
      // tensor's values in brackets.
      OpCase("Print")
          .constant("x", f32.vec({1, 2}))
          .node(
              "print", "Print", {"x", "x"},
              {T(kFloat), typesAttr("U", {kFloat}), strAttr("message", "x: ")})
          .expect("print", f32.vec({1, 2}))
          .expectStderr("x: [1 2]"),
      OpCase("PrintV2")
          .constant("x", i32.vec({1, 2, 3}))
          .node("format", "StringFormat", {"x"},
                {typesAttr("T", {kInt32}), strAttr("template", "x = %s")})
          .node("print", "PrintV2", {"format"},
                {strAttr("output_stream", "stderr")})
          .target("print")
          .expect("format", str("x = [1 2 3]"))
          .expectStderr("x = [1 2 3]\n"),
      OpCase("StringFormat")
          .constant("i", i32.vec({1, 2, 3}))
          .constant("f", f32(2.5))
          .node("format", "StringFormat", {"i", "f"},
                {typesAttr("T", {kInt32, kFloat}),
                 strAttr("template", "a=%s b=%s")})
          .expect("format", str("a=[1 2 3] b=2.5")),
      // summarize = 2 keeps two elements at each end.
      single("StringFormatSummarize", "StringFormat",
             {i32.vec({1, 2, 3, 4, 5})},
             {typesAttr("T", {kInt32}), intAttr("summarize", 2)},
             str("[1 2 ... 4 5]")),
      // Scalars repeat against the vector; the separator goes between.
      OpCase("StringJoin")
          .constant("names", str({2}, {"w", "b"}))
          .constant("prefix", str("dense"))
          .node("joined", "StringJoin", {"prefix", "names"},
                {intAttr("N", 2), strAttr("separator", "/")})
          .node("none", "StringJoin", {}, {intAttr("N", 0)})
          .expect("joined", str({2}, {"dense/w", "dense/b"}))
          .expect("none", str("")),
      // The names a sharded saver gives its parts.
      OpCase("ShardedFilename")
          .constant("base", str("/tmp/model"))
          .constant("shard", i32(3))
          .constant("shards", i32(12))
          .node("name", "ShardedFilename", {"base", "shard", "shards"})
          .node("spec", "ShardedFilespec", {"base", "shards"})
          .expect("name", str("/tmp/model-00003-of-00012"))
          .expect("spec", str("/tmp/model-\?\?\?\?\?-of-00012")),
      // printf conversions: %d, %.3f, %f, %g, %e, %04d.
      OpCase("AsString")
          .constant("ints", i32.vec({3, -7}))
          .constant("floats", f32.vec({1.5, 2.75}))
          .constant("big", f32(1500))
          .constant("seven", i32(7))
          .constant("bools", boolean.vec({true, false}))
          .node("int", "AsString", {"ints"}, {T(kInt32)})
          .node("precision", "AsString", {"floats"},
                {T(kFloat), intAttr("precision", 3)})
          .node("default", "AsString", {"floats"}, {T(kFloat)})
          .node("shortest", "AsString", {"floats"},
                {T(kFloat), boolAttr("shortest", true)})
          .node("scientific", "AsString", {"big"},
                {T(kFloat), boolAttr("scientific", true)})
          .node("padded", "AsString", {"seven"},
                {T(kInt32), intAttr("width", 4), strAttr("fill", "0")})
          .node("bool", "AsString", {"bools"}, {T(kBool)})
          .expect("int", str({2}, {"3", "-7"}))
          .expect("precision", str({2}, {"1.500", "2.750"}))
          .expect("default", str({2}, {"1.500000", "2.750000"}))
          .expect("shortest", str({2}, {"1.5", "2.75"}))
          .expect("scientific", str("1.500000e+03"))
          .expect("padded", str("0007"))
          .expect("bool", str({2}, {"true", "false"})),
      // A serialized Summary { value { tag: "loss" simple_value: 2.5 } }:
      // field 1 (length 11) holding field 1 "loss" and fixed32 field 2.
      single("ScalarSummary", "ScalarSummary", {str("loss"), f32(2.5)},
             {T(kFloat)},
             str("\x0a\x0b"
                 "\x0a\x04loss"
                 "\x15\x00\x00\x20\x40"s)),
  };
}

std::vector<OpCase> tpuCases() {
  return {
      OpCase("TPUReplication")
          .constant("a", f32({2, 3}, {1, 2, 3, 4, 5, 6}))
          .constant("b", f32({2, 3}, {6, 5, 4, 3, 2, 1}))
          .node("meta", "TPUReplicateMetadata", {},
                {intAttr("num_replicas", 2)})
          .node("in", "TPUReplicatedInput", {"a", "b"},
                {T(kFloat), intAttr("N", 2)})
          .node("out", "TPUReplicatedOutput", {"in"},
                {T(kFloat), intAttr("num_replicas", 2)})
          .expectShape("in", {2, 3})
          .expectShape("out:0", {2, 3})
          .expectShape("out:1", {2, 3})
          .shapeOnly(),
      OpCase("InfeedOutfeed")
          .node("infeed", "InfeedDequeueTuple", {},
                {typesAttr("dtypes", {kFloat, kInt32}),
                 shapesAttr("shapes", {{2, 3}, {}})})
          .node("outfeed", "OutfeedEnqueueTuple", {"infeed:0", "infeed:1"},
                {typesAttr("dtypes", {kFloat, kInt32})})
          .expectShape("infeed:0", {2, 3})
          .expectShape("infeed:1", {})
          .shapeOnly(),
  };
}

const std::vector<OpCase> &allCases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all;
    for (auto family :
         {arrayCases, gradientArgsCases, mathCases, wrapCases, nnCases,
          randomCases, stateCases, controlFlowCases, hostCases, tpuCases}) {
      std::vector<OpCase> some = family();
      all.insert(all.end(), some.begin(), some.end());
    }
    return all;
  }();
  return cases;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// Matches each element of float dtypes to this relative (and absolute,
/// near zero) error; the expected values are rounded to about 10 digits.
constexpr double kTolerance = 1e-5;

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// The type graph-infer-shapes gave the tensor `fetch` ("node" or
/// "node:port"), or null when there is no such tensor.
Type inferredType(ModuleOp module, StringRef fetch) {
  StringRef nodeName = fetch;
  unsigned port = 0;
  auto [head, tail] = fetch.rsplit(':');
  if (!tail.empty() && !tail.getAsInteger(10, port))
    nodeName = head;
  else
    port = 0;
  for (auto graphOp : module.getOps<graph::GraphOp>())
    for (auto node : graphOp.getBody().getOps<graph::NodeOp>())
      if (node.getName() == nodeName && port < node.getOutputs().size())
        return node.getOutputs()[port].getType();
  return {};
}

void expectInferredShape(ModuleOp module, const Expectation &expected,
                         bool exact) {
  Type type = inferredType(module, expected.fetch);
  ASSERT_TRUE(type) << "no tensor '" << expected.fetch << "' in the graph";
  ArrayRef<int64_t> shape = expected.value.shape;
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (exact) {
    EXPECT_TRUE(ranked && ranked.getShape() == shape)
        << "'" << expected.fetch << "' was inferred as " << typeString(type)
        << ", expected the static shape " << shapeString(shape);
    return;
  }
  bool compatible =
      !ranked ||
      (ranked.getRank() == int64_t(shape.size()) &&
       llvm::all_of(llvm::zip(ranked.getShape(), shape), [](auto dims) {
         auto [inferred, actual] = dims;
         return ShapedType::isDynamic(inferred) || inferred == actual;
       }));
  EXPECT_TRUE(compatible) << "'" << expected.fetch << "' was inferred as "
                          << typeString(type) << ", which does not admit "
                          << shapeString(shape);
}

bool isFloating(int32_t dtype) { return dtype == kFloat || dtype == kDouble; }

void expectTensor(const Tensor &actual, const Expectation &expected) {
  const Literal &want = expected.value;
  SCOPED_TRACE("fetch '" + expected.fetch + "' = " + actual.toString());
  ASSERT_EQ(actual.shape(), want.shape);
  if (expected.kind == Expectation::ShapeOnly)
    return;
  ASSERT_EQ(dtypeName(actual.dtype()), dtypeName(want.dtype));
  if (expected.kind == Expectation::UnitInterval) {
    for (int64_t i = 0; i < actual.numElements(); ++i) {
      double v = actual.getAsDouble(i);
      EXPECT_TRUE(v >= 0 && v < 1) << "element " << i << " = " << v;
    }
    return;
  }
  if (want.dtype == kString) {
    EXPECT_EQ(actual.strings(), want.strings);
    return;
  }
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double w = want.values[i];
    if (!isFloating(want.dtype)) {
      // As the element's bits: uint64 values above INT64_MAX included.
      int64_t expectedBits = w >= 0x1p63 ? int64_t(uint64_t(w)) : int64_t(w);
      EXPECT_EQ(actual.getAsInt(i), expectedBits) << "element " << i;
      continue;
    }
    double v = actual.getAsDouble(i);
    bool close = v == w || (std::isnan(v) && std::isnan(w)) ||
                 std::abs(v - w) <= kTolerance * (1 + std::abs(w));
    EXPECT_TRUE(close) << "element " << i << " = " << v << ", expected " << w;
  }
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.byteSize() == b.byteSize() &&
         std::memcmp(a.raw(), b.raw(), a.byteSize()) == 0;
}

class OpSemanticsTest : public testing::TestWithParam<OpCase> {};

TEST_P(OpSemanticsTest, MatchesTensorFlow) {
  const OpCase &c = GetParam();
  for (const Literal &literal : c.constants)
    ASSERT_EQ(numValues(literal), numElements(literal.shape))
        << "a constant of this case has the wrong number of values";
  for (const Expectation &e : c.expected)
    if (e.kind == Expectation::Values)
      ASSERT_EQ(numValues(e.value), numElements(e.value.shape))
          << "the expected value of '" << e.fetch
          << "' has the wrong number of values";

  MLIRContext context(MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  ScopedDiagnosticHandler collect(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  tensorflow::GraphDef graphDef;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(c.graphText(), &graphDef))
      << c.graphText();
  OwningOpRef<ModuleOp> module = importGraphDef(graphDef, &context);
  ASSERT_TRUE(module) << diagnostics;

  PassManager pm(&context);
  pm.addPass(graph::createGraphInferShapesPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << "graph-infer-shapes failed:\n"
                                          << diagnostics;
  for (const Expectation &e : c.expected)
    expectInferredShape(*module, e, c.partialShapeReason.empty());
  if (c.onlyShapes)
    return;

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto &[tensor, value] : c.feeds)
    feeds.emplace_back(tensor, toTensor(value));
  std::vector<std::string> fetches;
  for (const Expectation &e : c.expected)
    fetches.push_back(e.fetch);

  Executor interpreter(*module);
  for (const std::string &target : c.setupTargets)
    ASSERT_TRUE(succeeded(interpreter.run(feeds, {}, {target})))
        << "running '" << target << "' failed:\n"
        << diagnostics;
  bool checkStderr = !c.expectedStderr.empty();
  if (checkStderr)
    testing::internal::CaptureStderr();
  auto results = interpreter.run(feeds, fetches, c.targets);
  std::string logged =
      checkStderr ? testing::internal::GetCapturedStderr() : "";
  ASSERT_TRUE(succeeded(results)) << "the run failed:\n" << diagnostics;
  for (auto [actual, expected] : llvm::zip(*results, c.expected))
    expectTensor(actual, expected);
  if (checkStderr)
    EXPECT_NE(logged.find(c.expectedStderr), std::string::npos)
        << "standard error was:\n"
        << logged;

  if (c.rerunPolicy == Rerun::NotChecked)
    return;
  auto again = interpreter.run(feeds, fetches, c.targets);
  ASSERT_TRUE(succeeded(again)) << "the second run failed:\n" << diagnostics;
  for (auto [first, second, expected] : llvm::zip(*results, *again, c.expected))
    EXPECT_EQ(sameBytes(first, second), c.rerunPolicy == Rerun::SameValues)
        << "'" << expected.fetch << "': " << first.toString() << " then "
        << second.toString();
}

INSTANTIATE_TEST_SUITE_P(OpSemantics, OpSemanticsTest,
                         testing::ValuesIn(allCases()),
                         [](const testing::TestParamInfo<OpCase> &info) {
                           return info.param.name;
                         });

//===----------------------------------------------------------------------===//
// Coverage
//===----------------------------------------------------------------------===//

/// The ops the interpreter and graph-infer-shapes must support.
const char *const kSupportedOps[] = {
    // Array.
    "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN",
    "NoOp", "StopGradient", "Shape", "Size", "Rank", "Reshape", "Squeeze",
    "ExpandDims", "Transpose", "ConcatV2", "Split", "SplitV", "Slice",
    "StridedSlice", "Pack", "Unpack", "Fill", "ZerosLike", "OnesLike", "Tile",
    "Pad", "GatherV2", "OneHot", "Cast", "Range", "Select", "SelectV2", "Where",
    "ReverseV2", "CheckNumerics",
    // Math.
    "Add", "AddV2", "AddN", "Sub", "Mul", "RealDiv", "DivNoNan", "FloorDiv",
    "Maximum", "Minimum", "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log",
    "Log1p", "Expm1", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
    "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Ceil", "Round", "Rint", "IsNan",
    "IsInf", "IsFinite", "Atan2", "Abs", "Sign", "Pow", "Equal", "NotEqual",
    "Less", "Greater", "LessEqual", "GreaterEqual", "LogicalAnd", "LogicalOr",
    "LogicalNot", "Sum", "Mean", "Max", "Min", "Prod", "Cumsum", "Cumprod",
    "ArgMax", "ArgMin", "MatMul", "BatchMatMulV2", "BroadcastTo",
    "BroadcastGradientArgs",
    // NN and random.
    "Relu", "Relu6", "Elu", "Softplus", "Softsign", "Sigmoid", "Tanh",
    "Softmax", "LogSoftmax", "BiasAdd", "Conv2D", "MaxPool", "AvgPool",
    "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
    "FusedBatchNormV3", "RandomUniform", "StatelessRandomUniformV2",
    // State.
    "VariableV2", "Assign", "AssignAdd", "VarHandleOp", "ReadVariableOp",
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "ApplyGradientDescent", "ResourceApplyGradientDescent",
    "ResourceApplyMomentum", "ResourceApplyAdam", "ScatterAdd", "ScatterSub",
    "ResourceScatterAdd", "ResourceScatterSub", "SparseApplyMomentum",
    "ResourceSparseApplyMomentum",
    // Control flow.
    "Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "If",
    "StatelessIf", "While", "StatelessWhile", "PartitionedCall",
    "StatefulPartitionedCall",
    // Host.
    "Print", "PrintV2", "StringFormat", "StringJoin", "AsString",
    "ScalarSummary",
    // Checkpoint file names (SaveV2 and RestoreV2 write and read files:
    // test/Interpreter/io-ops.pbtxt runs them).
    "ShardedFilename", "ShardedFilespec",
    // TPU: shape functions only.
    "TPUReplicatedInput", "TPUReplicatedOutput", "TPUReplicateMetadata",
    "InfeedDequeueTuple", "OutfeedEnqueueTuple",
    // Gradients.
    "ReluGrad", "SigmoidGrad", "TanhGrad", "BiasAddGrad", "Conv2DBackpropInput",
    "Conv2DBackpropFilter", "MaxPoolGrad", "AvgPoolGrad", "RsqrtGrad",
    "SqrtGrad"};

/// Ops that only need a shape function: they cannot run on the host.
const std::set<std::string> kShapeOnlyOps = {
    "TPUReplicatedInput", "TPUReplicatedOutput", "TPUReplicateMetadata",
    "InfeedDequeueTuple", "OutfeedEnqueueTuple"};

TEST(OpSemanticsCoverage, EverySupportedOpHasAShapeFunctionAndACase) {
  std::set<std::string> run, shapeChecked;
  for (const OpCase &c : allCases()) {
    shapeChecked.insert(c.opTypes.begin(), c.opTypes.end());
    if (!c.onlyShapes)
      run.insert(c.opTypes.begin(), c.opTypes.end());
  }
  for (const char *op : kSupportedOps) {
    SCOPED_TRACE(op);
    EXPECT_NE(ops::lookupOp(op), nullptr) << "not registered";
    EXPECT_NE(ops::lookupShapeFn(op), nullptr) << "no shape function";
    if (kShapeOnlyOps.count(op))
      EXPECT_TRUE(shapeChecked.count(op)) << "no shape-inference case";
    else
      EXPECT_TRUE(run.count(op)) << "no case runs it";
  }
}

TEST(OpSemanticsCoverage, CaseNamesAreUnique) {
  std::set<std::string> names;
  for (const OpCase &c : allCases())
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
}

} // namespace
