//===- CompiledOpsTest.cpp - compiled ops against the reference interpreter
//===//
//
// Every op with a CPU lowering runs compiled (CPUClusterRunner) and
// interpreted (Executor::call) on the same random inputs, and the two
// must agree: same dtypes and shapes, integers and bools exactly, floats to
// float32 precision, and an error from the interpreter must be an error in
// compiled code too. Cases come from the registry: a generic generator
// drives the ops that only take tensors of their type attrs (every allowed
// dtype, NumPy broadcasting, scalars, zero-sized shapes, edge values), and
// a table covers the ops that need particular attrs or value inputs. A new
// lowered op without a case that runs makes CompiledOpsCoverage fail.
//
// Inputs deliberately avoided, where compiled code legitimately differs
// from the reference kernels (it behaves as XLA does instead of failing):
//   - integer division (and remainder) by zero;
//   - out-of-range gather indices and sparse labels;
//   - NaN inputs (comparisons, Max/Min and ArgMax treat them differently);
//   - float-to-integer casts of values the target cannot hold.
// Integer arithmetic wraps on both sides (INT_MIN / -1 is INT_MIN), so the
// edge values include each integer type's extremes.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/InitAll.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/StridedSlice.h"
#include "cleave/Runtime/CPUClusterRunner.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <map>
#include <random>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

using Dims = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

/// One input of the node under test: a function argument, or (when
/// `variable` is set) a VariableV2 or VarHandleOp node naming a variable.
struct Input {
  Tensor value;
  std::string variable;
};

/// One node to run. Attrs are written as REGISTER_OP writes defaults
/// ("true", "DT_INT32", "'SAME'", "[1, 2]"), so a case needs no context.
struct Case {
  std::string op;
  std::vector<Input> inputs;
  std::vector<std::pair<std::string, std::string>> attrs;
  /// Variables before the call; both runs start from these.
  std::map<std::string, Tensor> variables;
  /// Const's `value`.
  std::optional<Tensor> value;
  /// Whether the module holds kFunctions, for the ops that call them.
  bool withFunctions = false;
};

/// The value pools inputs are drawn from.
struct Domain {
  /// When lo < hi: uniform in [lo, hi] (rounded for integers), no edge
  /// values beyond the bounds.
  double lo = 0, hi = 0;
  /// Excludes 0: divisors of integer divisions.
  bool nonZero = false;
};

constexpr int32_t kAllDTypes[] = {kFloat, kDouble, kInt32,  kInt64,
                                  kInt8,  kInt16,  kUInt8,  kUInt16,
                                  kUInt32, kUInt64, kBool};

bool isFloat(int32_t dtype) { return dtype == kFloat || dtype == kDouble; }

/// Edge values of each dtype, mixed into random ones: the extremes
/// included, where TensorFlow's integer arithmetic wraps (two's
/// complement; the largest 64-bit values a double holds exactly).
std::vector<double> edgeValues(int32_t dtype) {
  switch (dtype) {
  case kFloat:
  case kDouble:
    return {0.0, -0.0, 1, -1, 0.5, -2.5, 6, 1e4, -1e4, 1e-30};
  case kInt8: return {0, 1, -1, 127, -128};
  case kUInt8: return {0, 1, 255};
  case kInt16: return {0, 1, -1, 32767, -32768};
  case kUInt16:
    return {0, 1, 40000, 65535};
  case kInt32:
    return {0, 1, -1, 30000, 2147483647, -2147483648.0};
  case kInt64:
    return {0, 1, -1, 3e9, 9223372036854774784.0, -9223372036854775808.0};
  case kUInt32:
    return {0, 1, 4e9, 4294967295.0};
  case kUInt64:
    return {0, 1, 1e19, 18446744073709549568.0};
  default: return {0, 1};
  }
}

/// The range plain random values of a dtype come from.
std::pair<double, double> randomRange(int32_t dtype) {
  switch (dtype) {
  case kInt8: return {-128, 127};
  case kUInt8: return {0, 255};
  case kInt16: return {-1000, 1000};
  case kUInt16: case kUInt32: case kUInt64: return {0, 1000};
  case kInt32: case kInt64: return {-1000, 1000};
  default: return {-10, 10};
  }
}

std::mt19937_64 &rng() {
  static std::mt19937_64 engine(20240611);
  return engine;
}

/// The cases by op. Each access of an op's list reseeds the random stream
/// from the op's name and how many cases it has, so an op's inputs do not
/// depend on the cases of other ops (a new case elsewhere changes no
/// one else's data).
class CaseTable : public std::map<std::string, std::vector<Case>> {
public:
  std::vector<Case> &operator[](const std::string &op) {
    std::vector<Case> &cases = std::map<std::string, std::vector<Case>>::
        operator[](op);
    rng().seed(std::hash<std::string>()(op) * 31 + cases.size());
    return cases;
  }
};

double drawValue(int32_t dtype, const Domain &domain) {
  std::uniform_real_distribution<double> unit(0, 1);
  if (dtype == kBool)
    return unit(rng()) < 0.5;
  bool isUnsigned = dtype == kUInt8 || dtype == kUInt16 || dtype == kUInt32 ||
                    dtype == kUInt64;
  double v;
  if (domain.lo < domain.hi) {
    // Unsigned types start at 0 (a negative double converts undefined).
    double lo = isUnsigned ? std::max(domain.lo, 0.0) : domain.lo;
    v = lo + unit(rng()) * (domain.hi - lo);
  } else if (unit(rng()) < 0.4) {
    std::vector<double> edges = edgeValues(dtype);
    v = edges[size_t(unit(rng()) * edges.size()) % edges.size()];
  } else {
    auto [lo, hi] = randomRange(dtype);
    v = lo + unit(rng()) * (hi - lo);
  }
  if (!isFloat(dtype))
    v = std::round(v);
  if (domain.nonZero && v == 0)
    return drawValue(dtype, domain);
  return v;
}

Tensor randomTensor(int32_t dtype, Dims shape, Domain domain = {}) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i) {
    t.setFromDouble(i, drawValue(dtype, domain));
  }
  return t;
}

Tensor literal(int32_t dtype, Dims shape, std::vector<double> values) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, values[i]);
  return t;
}

Tensor vec(int32_t dtype, std::vector<double> values) {
  Dims shape{int64_t(values.size())};
  return literal(dtype, shape, std::move(values));
}
Tensor i32s(std::vector<double> values) { return vec(kInt32, values); }
Tensor scalar(int32_t dtype, double value) { return literal(dtype, {}, {value}); }

Input arg(Tensor t) { return {std::move(t), ""}; }
Input var(std::string name) { return {Tensor(), std::move(name)}; }

/// Floats drawn from a moderate range: products and sums of many of them
/// (contractions, reductions) stay within float32's relative tolerance.
Tensor moderate(int32_t dtype, Dims shape) {
  return randomTensor(dtype, std::move(shape), {-4, 4});
}

std::string dtypeEnum(int32_t dtype) {
  return "DT_" + StringRef(dtypeName(dtype)).upper();
}

std::string dimsText(const Dims &dims) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// The generic generator
//===----------------------------------------------------------------------===//

/// Input shape sets for `n` inputs: equal shapes, NumPy broadcasting
/// (trailing vector, scalar, [3,1] with [1,4]), scalars, zero-sized.
std::vector<std::vector<Dims>> shapeSets(unsigned n) {
  if (n == 0)
    return {{}};
  auto first = [n](Dims head, Dims rest) {
    std::vector<Dims> shapes(n, rest);
    shapes[0] = std::move(head);
    return shapes;
  };
  if (n == 1)
    return {{{3, 4}}, {{}}, {{0, 4}}, {{2, 3, 2}}};
  return {first({3, 4}, {3, 4}), first({3, 4}, {4}), first({}, {3, 4}),
          first({3, 1}, {1, 4}), first({}, {}), first({0, 4}, {0, 4})};
}

/// Per-op value domains of the generic cases, by input index.
Domain genericDomain(StringRef op, unsigned input, int32_t dtype) {
  bool isInt = !isFloat(dtype) && dtype != kBool;
  // Integer division by zero fails in the kernels and gives -1 compiled.
  if (isInt && input == 1 &&
      (op == "Div" || op == "RealDiv" || op == "FloorDiv" || op == "FloorMod" ||
       op == "TruncateDiv" || op == "TruncateMod" || op == "Mod"))
    return {0, 0, /*nonZero=*/true};
  if (isInt && op == "Reciprocal")
    return {0, 0, /*nonZero=*/true};
  // Integer powers are exact and wrap (3^40 overflows every width): the
  // reference kernel refuses negative exponents.
  if (isInt && op == "Pow")
    return input == 0 ? Domain{-3, 3} : Domain{0, 40};
  // Zeta(s, q) is real for s > 1 and q > 0.
  if (op == "Zeta")
    return input == 0 ? Domain{1, 8} : Domain{0.05, 6};
  return {};
}

/// Cases for an op whose inputs are all tensors of its type attrs (or of
/// fixed types): each allowed dtype the lowering may support, each shape
/// set. The first dtype gets every shape set, the others two of them.
std::vector<Case> genericCases(const ops::OpSpec &spec) {
  std::vector<Case> cases;
  const ops::AttrSpec *typeAttr = nullptr;
  unsigned numInputs = 0;
  // A list argument (N * T, or a type list) gets two inputs.
  auto countOf = [](const ops::ArgSpec &input) {
    return input.numberAttr.empty() && input.typeListAttr.empty() ? 1u : 2u;
  };
  // Functions to call and variables to update need the table.
  for (const ops::AttrSpec &attr : spec.attrs)
    if (StringRef(attr.type).contains("func"))
      return cases;
  for (const ops::ArgSpec &input : spec.inputs) {
    if (input.isRef || input.fixedType == kResource)
      return cases;
    if (!input.typeAttr.empty() && !typeAttr)
      typeAttr = spec.findAttr(input.typeAttr);
    if (!input.typeListAttr.empty() && !typeAttr)
      typeAttr = spec.findAttr(input.typeListAttr);
    numInputs += countOf(input);
  }
  std::vector<int32_t> dtypes;
  for (int32_t dtype : kAllDTypes)
    if (!typeAttr || typeAttr->allowedTypes.empty() ||
        llvm::is_contained(typeAttr->allowedTypes, dtype))
      dtypes.push_back(dtype);
  if (!typeAttr)
    dtypes = {kFloat};
  std::vector<std::vector<Dims>> sets = shapeSets(numInputs);
  for (auto [k, dtype] : llvm::enumerate(dtypes)) {
    std::vector<size_t> chosen;
    for (size_t s = 0; s < sets.size(); ++s)
      if (k == 0 || s == 0 || s == 1 + k % (sets.size() - 1))
        chosen.push_back(s);
    for (size_t s : chosen) {
      Case c;
      c.op = spec.name;
      unsigned i = 0;
      for (const ops::ArgSpec &input : spec.inputs) {
        int32_t argType = input.fixedType ? input.fixedType : int32_t(dtype);
        for (unsigned j = 0; j < countOf(input); ++j, ++i)
          c.inputs.push_back(arg(randomTensor(
              argType, sets[s][i], genericDomain(spec.name, i, argType))));
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

//===----------------------------------------------------------------------===//
// The table of ops the generic generator cannot drive
//===----------------------------------------------------------------------===//

using Attrs = std::vector<std::pair<std::string, std::string>>;

Case node(std::string op, std::vector<Input> inputs, Attrs attrs = {}) {
  Case c;
  c.op = std::move(op);
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  return c;
}

/// `c` with variables set before the call.
Case withVariables(Case c, std::map<std::string, Tensor> variables) {
  c.variables = std::move(variables);
  return c;
}

void addMathCases(CaseTable &table) {
  // Cast: float sources stay within the target's range (the conversion is
  // undefined otherwise); integers wrap as two's complement.
  struct CastPair { int32_t from, to; Domain domain; };
  for (auto [from, to, domain] : std::vector<CastPair>{
           {kFloat, kInt32, {-100, 100}}, {kFloat, kDouble, {}},
           {kDouble, kFloat, {}}, {kInt32, kFloat, {}},
           {kInt64, kInt32, {-3e9, 3e9}}, {kInt32, kInt8, {-1000, 1000}},
           {kUInt8, kInt32, {}}, {kInt8, kUInt8, {}}, {kBool, kFloat, {}},
           {kFloat, kBool, {}}, {kInt32, kBool, {}}, {kFloat, kUInt8, {0, 200}},
           {kUInt32, kDouble, {}}, {kInt64, kDouble, {}}, {kBool, kInt32, {}},
           {kDouble, kInt64, {-1e6, 1e6}}, {kInt16, kUInt16, {}},
           {kUInt16, kInt64, {}}, {kUInt64, kFloat, {}},
           {kUInt64, kDouble, {}}})
    table["Cast"].push_back(node("Cast", {arg(randomTensor(from, {3, 4}, domain))},
                                 {{"DstT", dtypeEnum(to)}}));
  table["Cast"].push_back(node("Cast", {arg(randomTensor(kFloat, {0, 2}))},
                               {{"DstT", "DT_INT64"}}));

  for (int32_t dtype : {kFloat, kInt32, kBool}) {
    table["Select"].push_back(node(
        "Select", {arg(randomTensor(kBool, {3, 4})),
                   arg(randomTensor(dtype, {3, 4})),
                   arg(randomTensor(dtype, {3, 4}))}));
    table["SelectV2"].push_back(node(
        "SelectV2", {arg(randomTensor(kBool, {4})),
                     arg(randomTensor(dtype, {3, 1})),
                     arg(randomTensor(dtype, {}))}));
  }
  // A vector condition picks rows; a scalar one everything.
  table["Select"].push_back(node("Select", {arg(randomTensor(kBool, {3})),
                                            arg(randomTensor(kFloat, {3, 4})),
                                            arg(randomTensor(kFloat, {3, 4}))}));
  table["Select"].push_back(node("Select", {arg(scalar(kBool, 1)),
                                            arg(randomTensor(kInt64, {2, 2})),
                                            arg(randomTensor(kInt64, {2, 2}))}));
  table["SelectV2"].push_back(node(
      "SelectV2", {arg(randomTensor(kBool, {0, 1})),
                   arg(randomTensor(kDouble, {0, 4})),
                   arg(randomTensor(kDouble, {4}))}));
  table["SelectV2"].push_back(node(
      "SelectV2", {arg(randomTensor(kBool, {2})),
                   arg(randomTensor(kFloat, {3})),
                   arg(randomTensor(kFloat, {2}))})); // incompatible

  // All and Any: and / or over axes, keep_dims, an empty reduction, a
  // bad axis.
  for (const char *op : {"All", "Any"}) {
    auto &cases = table[op];
    cases.push_back(
        node(op, {arg(randomTensor(kBool, {3, 4})), arg(i32s({1}))}));
    cases.push_back(
        node(op, {arg(randomTensor(kBool, {2, 3, 2})), arg(i32s({0, -1}))},
             {{"keep_dims", "true"}}));
    cases.push_back(
        node(op, {arg(randomTensor(kBool, {0, 4})), arg(i32s({0}))}));
    cases.push_back(node(op, {arg(randomTensor(kBool, {3})), arg(i32s({1}))}));
  }
  // Reductions: axes lists, negative and repeated axes, keep_dims, empty
  // reductions. Products stay small so integers do not overflow.
  for (const char *op : {"Sum", "Mean", "Prod", "Max", "Min"}) {
    bool product = StringRef(op) == "Prod";
    auto input = [&](int32_t dtype, Dims shape) {
      return product || isFloat(dtype)
                 ? randomTensor(dtype, std::move(shape), {-3, 3})
                 : randomTensor(dtype, std::move(shape));
    };
    auto &cases = table[op];
    cases.push_back(node(op, {arg(input(kFloat, {3, 4})), arg(i32s({1}))}));
    cases.push_back(node(op, {arg(input(kFloat, {3, 4})), arg(i32s({0}))},
                         {{"keep_dims", "true"}}));
    cases.push_back(node(op, {arg(input(kDouble, {3, 4})), arg(i32s({0, -1}))}));
    cases.push_back(node(op, {arg(input(kInt32, {2, 3, 2})), arg(i32s({0, 2}))},
                         {{"keep_dims", "true"}}));
    cases.push_back(node(op, {arg(input(kInt64, {3, 4})),
                              arg(vec(kInt64, {-1, 1}))}));
    cases.push_back(node(op, {arg(input(kUInt8, {3, 4})), arg(i32s({}))}));
    cases.push_back(node(op, {arg(input(kInt8, {5})), arg(scalar(kInt32, 0))}));
    cases.push_back(node(op, {arg(input(kFloat, {0, 4})), arg(i32s({0}))}));
    cases.push_back(node(op, {arg(input(kFloat, {})), arg(i32s({}))}));
    cases.push_back(node(op, {arg(input(kFloat, {3})), arg(i32s({1}))}));
  }

  // ArgMax/ArgMin: small integers give ties (the first index wins); an
  // empty reduction axis is an error, as in TensorFlow.
  for (const char *op : {"ArgMax", "ArgMin"}) {
    auto &cases = table[op];
    cases.push_back(node(op, {arg(randomTensor(kFloat, {3, 4})),
                              arg(scalar(kInt32, 1))}));
    cases.push_back(node(op, {arg(randomTensor(kFloat, {3, 4})),
                              arg(scalar(kInt32, 0))},
                         {{"output_type", "DT_INT32"}}));
    cases.push_back(node(op, {arg(randomTensor(kInt32, {2, 3, 2}, {-2, 2})),
                              arg(scalar(kInt64, -2))}));
    cases.push_back(node(op, {arg(randomTensor(kUInt8, {6})),
                              arg(scalar(kInt32, 0))}));
    cases.push_back(node(op, {arg(randomTensor(kDouble, {0, 3})),
                              arg(scalar(kInt32, 1))}));
    cases.push_back(node(op, {arg(randomTensor(kFloat, {3})),
                              arg(scalar(kInt32, 1))})); // out of range
    cases.push_back(node(op, {arg(randomTensor(kFloat, {2, 0})),
                              arg(scalar(kInt32, 1))})); // empty axis
  }

  auto &matMul = table["MatMul"];
  for (auto [ta, tb] : std::vector<std::pair<bool, bool>>{
           {false, false}, {true, false}, {false, true}, {true, true}}) {
    Dims a = ta ? Dims{3, 2} : Dims{2, 3}, b = tb ? Dims{4, 3} : Dims{3, 4};
    matMul.push_back(node("MatMul", {arg(moderate(kFloat, a)), arg(moderate(kFloat, b))},
                          {{"transpose_a", ta ? "true" : "false"},
                           {"transpose_b", tb ? "true" : "false"}}));
  }
  matMul.push_back(node("MatMul", {arg(randomTensor(kInt32, {2, 3}, {-50, 50})),
                                   arg(randomTensor(kInt32, {3, 2}, {-50, 50}))}));
  matMul.push_back(node("MatMul", {arg(moderate(kDouble, {1, 5})),
                                   arg(moderate(kDouble, {5, 1}))}));
  matMul.push_back(node("MatMul", {arg(moderate(kFloat, {2, 0})),
                                   arg(moderate(kFloat, {0, 3}))}));
  matMul.push_back(node("MatMul", {arg(moderate(kFloat, {2, 3})),
                                   arg(moderate(kFloat, {2, 3}))})); // k differs

  auto &batch = table["BatchMatMulV2"];
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kFloat, {2, 2, 3})),
                                         arg(moderate(kFloat, {2, 3, 4}))}));
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kFloat, {2, 1, 2, 3})),
                                         arg(moderate(kFloat, {3, 3, 4}))}));
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kFloat, {2, 3, 2})),
                                         arg(moderate(kFloat, {3, 4}))},
                       {{"adj_x", "true"}}));
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kDouble, {1, 2, 3})),
                                         arg(moderate(kDouble, {2, 4, 3}))},
                       {{"adj_y", "true"}}));
  batch.push_back(node("BatchMatMulV2",
                       {arg(randomTensor(kInt32, {2, 3, 2}, {-20, 20})),
                        arg(randomTensor(kInt32, {2, 2, 3}, {-20, 20}))},
                       {{"adj_x", "true"}, {"adj_y", "true"}}));
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kFloat, {0, 2, 3})),
                                         arg(moderate(kFloat, {3, 4}))}));
  batch.push_back(node("BatchMatMulV2", {arg(moderate(kFloat, {2, 2, 3})),
                                         arg(moderate(kFloat, {3, 3, 4}))}));
}

/// StridedSlice and its gradient over a [4,5,6] input: positive and
/// negative strides, masks (begin, end, ellipsis, new and shrunk axes),
/// an empty slice, and an int64 spec.
void addScanCases(CaseTable &table) {
  // Cumsum and Cumprod: inner and outer axes, negative axes, exclusive and
  // reverse, integers, and an empty axis.
  for (const char *op : {"Cumsum", "Cumprod"}) {
    for (const char *exclusive : {"false", "true"})
      for (const char *reverse : {"false", "true"})
        table[op].push_back(node(op,
                                 {arg(moderate(kFloat, {3, 4})),
                                  arg(scalar(kInt32, 1))},
                                 {{"exclusive", exclusive},
                                  {"reverse", reverse}}));
    // Small integers: a product of random int32 overflows, which is
    // undefined in the reference kernel's C++.
    table[op].push_back(node(op, {arg(randomTensor(kInt32, {4, 2}, {-9, 9})),
                                  arg(scalar(kInt64, 0))}));
    table[op].push_back(node(op, {arg(moderate(kDouble, {2, 3, 2})),
                                  arg(scalar(kInt32, -2))},
                             {{"reverse", "true"}}));
    table[op].push_back(
        node(op, {arg(moderate(kFloat, {2, 0})), arg(scalar(kInt32, 1))}));
  }
}

void addStridedSliceCases(CaseTable &table) {
  struct Spec {
    std::vector<double> begin, end, strides;
    std::vector<std::pair<std::string, std::string>> masks;
  };
  std::vector<Spec> specs = {
      {{1, 0, 2}, {3, 5, 6}, {1, 2, 3}, {}},
      {{3, 4, 5}, {0, 0, 0}, {-1, -2, -3}, {}},
      {{-1, 0, 0}, {0, 0, 0}, {-1, 1, 1}, {{"end_mask", "7"}}},
      {{0, 1}, {0, 2}, {1, 1}, {{"begin_mask", "1"}, {"end_mask", "1"},
                                {"shrink_axis_mask", "2"}}},
      {{1, 0, 0}, {2, 0, 0}, {1, 1, 1},
       {{"ellipsis_mask", "2"}, {"new_axis_mask", "4"},
        {"shrink_axis_mask", "1"}}},
      {{2, 0, 0}, {2, 5, 6}, {1, 1, 1}, {}},
  };
  Tensor input = randomTensor(kFloat, {4, 5, 6});
  for (const Spec &spec : specs) {
    auto attrs = spec.masks;
    attrs.push_back({"Index", "DT_INT32"});
    table["StridedSlice"].push_back(
        node("StridedSlice",
             {arg(input), arg(i32s(spec.begin)), arg(i32s(spec.end)),
              arg(i32s(spec.strides))},
             attrs));
    // The gradient of the same slice: dy of the slice's shape.
    Case slice = table["StridedSlice"].back();
    cleave::ops::StridedSlicePlan plan;
    cleave::ops::StridedSliceMasks masks;
    for (auto [name, value] : spec.masks) {
      int64_t bits = std::stoll(value);
      (name == "begin_mask"      ? masks.begin
       : name == "end_mask"      ? masks.end
       : name == "ellipsis_mask" ? masks.ellipsis
       : name == "new_axis_mask" ? masks.newAxis
                                 : masks.shrinkAxis) = bits;
    }
    auto ints = [](const std::vector<double> &values) {
      return std::vector<int64_t>(values.begin(), values.end());
    };
    std::vector<int64_t> begin = ints(spec.begin), end = ints(spec.end),
                         strides = ints(spec.strides);
    if (!cleave::ops::planStridedSlice({4, 5, 6}, begin, end, strides, masks,
                                       plan)
             .empty())
      continue;
    std::vector<int64_t> dyShape(plan.outputShape.begin(),
                                 plan.outputShape.end());
    table["StridedSliceGrad"].push_back(
        node("StridedSliceGrad",
             {arg(i32s({4, 5, 6})), arg(i32s(spec.begin)), arg(i32s(spec.end)),
              arg(i32s(spec.strides)), arg(randomTensor(kFloat, dyShape))},
             attrs));
  }
}

void addArrayCases(CaseTable &table) {
  addStridedSliceCases(table);
  // CheckNumerics: finite values pass; an Inf, a NaN or both are the
  // node's error, compiled as interpreted.
  const double inf = std::numeric_limits<double>::infinity();
  for (Tensor value :
       {randomTensor(kFloat, {2, 3}), randomTensor(kDouble, {}),
        vec(kFloat, {1, inf, 2}), vec(kDouble, {NAN, 1}),
        vec(kFloat, {-inf, NAN}), randomTensor(kFloat, {0, 2})})
    table["CheckNumerics"].push_back(
        node("CheckNumerics", {arg(value)}, {{"message", "'checked'"}}));
  for (Tensor value : {randomTensor(kFloat, {2, 3}), scalar(kInt32, 7),
                       randomTensor(kBool, {3}), randomTensor(kInt64, {0})}) {
    Case c = node("Const", {}, {{"dtype", dtypeEnum(value.dtype())}});
    c.value = value;
    table["Const"].push_back(std::move(c));
  }
  table["PlaceholderWithDefault"].push_back(node(
      "PlaceholderWithDefault", {arg(randomTensor(kFloat, {2, 3}))},
      {{"shape", "[2, 3]"}}));
  table["BroadcastGradientArgs"].push_back(node(
      "BroadcastGradientArgs", {arg(i32s({3, 4})), arg(i32s({4}))}));
  table["BroadcastGradientArgs"].push_back(node(
      "BroadcastGradientArgs",
      {arg(vec(kInt64, {2, 1, 3})), arg(vec(kInt64, {1, 5, 1}))}));
  table["Range"].push_back(
      node("Range", {arg(scalar(kInt32, 0)), arg(scalar(kInt32, 10)),
                     arg(scalar(kInt32, 3))}));
  table["Range"].push_back(
      node("Range", {arg(scalar(kFloat, 0.5)), arg(scalar(kFloat, 3)),
                     arg(scalar(kFloat, 0.75))}));
  table["Range"].push_back(
      node("Range", {arg(scalar(kFloat, 16777216)),
                     arg(scalar(kFloat, 16777220)), arg(scalar(kFloat, 1))}));
  // GatherNd: tuples of depth 2 and 1, ints, none. (A tuple out of range
  // is the kernel's error where compiled code clamps, as XLA: no case.)
  table["GatherNd"].push_back(node(
      "GatherNd", {arg(randomTensor(kFloat, {3, 4, 2})),
                   arg(literal(kInt32, {2, 2, 2}, {2, 3, 0, 1, 1, 0, 2, 2}))}));
  table["GatherNd"].push_back(node("GatherNd",
                                   {arg(randomTensor(kInt64, {3, 4})),
                                    arg(literal(kInt64, {4, 1}, {2, 0, 2, 1}))},
                                   {{"Tindices", "DT_INT64"}}));
  table["GatherNd"].push_back(
      node("GatherNd", {arg(randomTensor(kDouble, {2, 3})),
                        arg(literal(kInt32, {1, 0}, {}))}));
  // ScatterNd: duplicates sum, rows and elements, an index past the shape
  // (an error both ways).
  table["ScatterNd"].push_back(node(
      "ScatterNd", {arg(literal(kInt32, {4, 1}, {2, 0, 2, 3})),
                    arg(randomTensor(kFloat, {4, 3})), arg(i32s({5, 3}))}));
  table["ScatterNd"].push_back(
      node("ScatterNd",
           {arg(literal(kInt64, {3, 2}, {0, 1, 2, 2, 0, 1})),
            arg(randomTensor(kInt32, {3})), arg(vec(kInt64, {3, 3}))},
           {{"T", "DT_INT32"}, {"Tindices", "DT_INT64"}}));
  table["ScatterNd"].push_back(node(
      "ScatterNd", {arg(literal(kInt32, {2, 1}, {1, 4})),
                    arg(randomTensor(kFloat, {2, 2})), arg(i32s({3, 2}))}));
  // Einsum: matrix products with and without the output given, batches
  // broadcast by an ellipsis, a diagonal read and written, a reduction, an
  // outer product, integers; mismatched labels (an error both ways).
  struct EinsumCase {
    const char *equation;
    std::vector<Dims> shapes;
    int32_t dtype;
  };
  for (const EinsumCase &e : std::vector<EinsumCase>{
           {"ij,jk->ik", {{3, 4}, {4, 5}}, kFloat},
           {"ij,jk", {{2, 3}, {3, 2}}, kDouble},
           {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 4}}, kFloat},
           {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, kFloat},
           {"ii->i", {{4, 4}}, kFloat},
           {"ij->", {{3, 5}}, kDouble},
           {"i,j->ij", {{3}, {4}}, kInt32},
           {"ij->ji", {{2, 3}}, kInt64},
           {"ij,jk->ik", {{2, 3}, {4, 2}}, kFloat},
           // A label the output repeats writes a diagonal (the gradient of
           // a diagonal's read).
           {"i->ii", {{3}}, kFloat},
           {"ij->iji", {{2, 3}}, kInt32},
           {"...i->...ii", {{2, 3}}, kDouble}}) {
    std::vector<Input> inputs;
    for (const Dims &shape : e.shapes)
      inputs.push_back(arg(isFloat(e.dtype) ? moderate(e.dtype, shape)
                                            : randomTensor(e.dtype, shape)));
    table["Einsum"].push_back(
        node("Einsum", inputs,
             {{"equation", "'" + std::string(e.equation) + "'"},
              {"N", std::to_string(e.shapes.size())},
              {"T", e.dtype == kFloat    ? "DT_FLOAT"
                    : e.dtype == kDouble ? "DT_DOUBLE"
                    : e.dtype == kInt32  ? "DT_INT32"
                                         : "DT_INT64"}}));
  }
  // LRN and LRNGrad: radii past the channels and within, the attrs.
  table["LRN"].push_back(node("LRN", {arg(moderate(kFloat, {2, 3, 3, 7}))},
                              {{"depth_radius", "2"},
                               {"alpha", "0.5"},
                               {"beta", "0.75"},
                               {"bias", "2.0"}}));
  table["LRN"].push_back(node("LRN", {arg(moderate(kFloat, {1, 2, 2, 3}))},
                              {{"depth_radius", "5"}}));
  {
    Tensor x = moderate(kFloat, {2, 2, 3, 6});
    table["LRNGrad"].push_back(
        node("LRNGrad",
             {arg(moderate(kFloat, {2, 2, 3, 6})), arg(x),
              arg(moderate(kFloat, {2, 2, 3, 6}))},
             {{"depth_radius", "1"}, {"alpha", "0.25"}}));
  }
  // The resize ops: every coordinate map, up and down, ints and floats;
  // align_corners with half_pixel_centers (an error both ways).
  for (auto [align, halfPixel] :
       {std::pair{"false", "false"}, std::pair{"true", "false"},
        std::pair{"false", "true"}, std::pair{"true", "true"}}) {
    Attrs attrs = {{"align_corners", align}, {"half_pixel_centers", halfPixel}};
    table["ResizeBilinear"].push_back(node(
        "ResizeBilinear",
        {arg(randomTensor(kFloat, {2, 3, 5, 2})), arg(i32s({7, 4}))}, attrs));
    table["ResizeNearestNeighbor"].push_back(
        node("ResizeNearestNeighbor",
             {arg(randomTensor(kInt32, {1, 4, 3, 3})), arg(i32s({2, 7}))}, [&] {
               Attrs withType = attrs;
               withType.push_back({"T", "DT_INT32"});
               return withType;
             }()));
    table["ResizeBilinearGrad"].push_back(
        node("ResizeBilinearGrad",
             {arg(randomTensor(kFloat, {2, 6, 3, 2})),
              arg(randomTensor(kDouble, {2, 4, 5, 2}))},
             [&] {
               Attrs withType = attrs;
               withType.push_back({"T", "DT_DOUBLE"});
               return withType;
             }()));
    table["ResizeNearestNeighborGrad"].push_back(node(
        "ResizeNearestNeighborGrad",
        {arg(randomTensor(kFloat, {1, 5, 2, 3})), arg(i32s({3, 4}))}, attrs));
  }
  table["ResizeBilinear"].push_back(
      node("ResizeBilinear",
           {arg(randomTensor(kUInt8, {1, 6, 6, 1})), arg(i32s({2, 3}))},
           {{"T", "DT_UINT8"}}));
  // TopKV2: k a constant (the shape); ties (integers), several dtypes and
  // index types, k = 0, a k past the row (an error both ways).
  table["TopKV2"].push_back(node(
      "TopKV2", {arg(randomTensor(kFloat, {3, 7})), arg(scalar(kInt32, 3))}));
  table["TopKV2"].push_back(node(
      "TopKV2", {arg(randomTensor(kInt8, {2, 2, 9})), arg(scalar(kInt64, 5))},
      {{"T", "DT_INT8"}, {"Tk", "DT_INT64"}, {"index_type", "DT_INT64"}}));
  table["TopKV2"].push_back(node(
      "TopKV2", {arg(randomTensor(kDouble, {6})), arg(scalar(kInt32, 0))}));
  table["TopKV2"].push_back(node(
      "TopKV2",
      {arg(literal(kInt32, {1, 5}, {2, 7, 2, 7, 2})), arg(scalar(kInt16, 4))},
      {{"T", "DT_INT32"}, {"Tk", "DT_INT16"}, {"index_type", "DT_INT16"}}));
  table["TopKV2"].push_back(node(
      "TopKV2", {arg(randomTensor(kFloat, {2, 3})), arg(scalar(kInt32, 4))}));
  // InTopKV2: k computed, ties, targets out of range, an infinite score.
  const double infinity = std::numeric_limits<double>::infinity();
  table["InTopKV2"].push_back(
      node("InTopKV2", {arg(randomTensor(kFloat, {5, 4})),
                        arg(i32s({0, 3, 1, 2, 3})), arg(scalar(kInt32, 2))}));
  table["InTopKV2"].push_back(
      node("InTopKV2",
           {arg(literal(kFloat, {3, 3}, {1, 1, 1, 0, infinity, 2, 5, 4, 3})),
            arg(vec(kInt64, {1, 1, -1})), arg(scalar(kInt64, 1))},
           {{"T", "DT_INT64"}}));
  // Bitcast: same size, to a smaller type, to a larger one, a mismatched
  // last dimension (an error both ways).
  table["Bitcast"].push_back(node("Bitcast",
                                  {arg(randomTensor(kFloat, {2, 3}))},
                                  {{"T", "DT_FLOAT"}, {"type", "DT_INT32"}}));
  table["Bitcast"].push_back(node("Bitcast", {arg(randomTensor(kDouble, {3}))},
                                  {{"T", "DT_DOUBLE"}, {"type", "DT_UINT16"}}));
  table["Bitcast"].push_back(node("Bitcast", {arg(randomTensor(kInt8, {3, 4}))},
                                  {{"T", "DT_INT8"}, {"type", "DT_FLOAT"}}));
  table["Bitcast"].push_back(node("Bitcast",
                                  {arg(randomTensor(kUInt16, {2, 4}))},
                                  {{"T", "DT_UINT16"}, {"type", "DT_INT64"}}));
  table["Bitcast"].push_back(node("Bitcast", {arg(randomTensor(kUInt8, {3}))},
                                  {{"T", "DT_UINT8"}, {"type", "DT_INT16"}}));
  // Bincount: size a constant, weights or counts, values past size left
  // out, a negative value (an error both ways).
  table["Bincount"].push_back(
      node("Bincount", {arg(i32s({0, 4, 2, 2, 9, 1})), arg(scalar(kInt32, 5)),
                        arg(randomTensor(kFloat, {6}))}));
  table["Bincount"].push_back(
      node("Bincount",
           {arg(literal(kInt32, {2, 2}, {3, 3, 0, 3})), arg(scalar(kInt32, 4)),
            arg(vec(kInt64, {}))},
           {{"T", "DT_INT64"}}));
  table["Bincount"].push_back(node(
      "Bincount",
      {arg(i32s({1, -1})), arg(scalar(kInt32, 3)), arg(vec(kDouble, {1, 2}))},
      {{"T", "DT_DOUBLE"}}));
  // CheckNumericsV2: as CheckNumerics, the infinities told apart.
  for (Tensor value :
       {randomTensor(kFloat, {2, 3}), vec(kDouble, {1, infinity}),
        vec(kFloat, {-infinity, NAN, infinity})})
    table["CheckNumericsV2"].push_back(
        node("CheckNumericsV2", {arg(value)}, {{"message", "'checked'"}}));
  // The sorted-segment ops: ids a constant (the output's shape), with an
  // empty segment; int32 and uint8 (wrapping) too; ids not sorted (an error
  // both ways).
  for (const char *op : {"SegmentSum", "SegmentMean", "SegmentProd",
                         "SegmentMax", "SegmentMin"}) {
    table[op].push_back(node(op, {arg(randomTensor(kFloat, {6, 3})),
                                  arg(i32s({0, 0, 1, 3, 3, 3}))}));
    table[op].push_back(
        node(op, {arg(randomTensor(kInt32, {4})), arg(i32s({1, 1, 2, 2}))}));
    table[op].push_back(node(
        op, {arg(randomTensor(kUInt8, {3, 2})), arg(vec(kInt64, {0, 2, 2}))},
        {{"T", "DT_UINT8"}, {"Tindices", "DT_INT64"}}));
    table[op].push_back(
        node(op, {arg(randomTensor(kDouble, {3})), arg(i32s({1, 0, 2}))}));
  }
  // The TensorScatter ops: element and row tuples, repeated ones, ints and
  // bools (Update only), a tuple out of range (an error both ways).
  for (const char *op :
       {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
        "TensorScatterMin", "TensorScatterMax"}) {
    table[op].push_back(node(op, {arg(randomTensor(kFloat, {5, 3})),
                                  arg(literal(kInt32, {4, 1}, {2, 0, 2, 4})),
                                  arg(randomTensor(kFloat, {4, 3}))}));
    table[op].push_back(node(op,
                             {arg(randomTensor(kInt32, {3, 3})),
                              arg(literal(kInt64, {3, 2}, {0, 1, 2, 2, 0, 1})),
                              arg(randomTensor(kInt32, {3}))},
                             {{"T", "DT_INT32"}, {"Tindices", "DT_INT64"}}));
    table[op].push_back(node(op, {arg(randomTensor(kFloat, {3, 2})),
                                  arg(literal(kInt32, {2, 1}, {1, 3})),
                                  arg(randomTensor(kFloat, {2, 2}))}));
  }
  table["TensorScatterUpdate"].push_back(
      node("TensorScatterUpdate",
           {arg(randomTensor(kBool, {4})), arg(literal(kInt32, {2, 1}, {3, 0})),
            arg(randomTensor(kBool, {2}))},
           {{"T", "DT_BOOL"}}));
  // MatrixBandPart: bounds computed or known, a batch, ints and bools, a
  // bound past the rows (an error).
  table["MatrixBandPart"].push_back(
      node("MatrixBandPart", {arg(randomTensor(kFloat, {2, 3, 4})),
                              arg(scalar(kInt64, 1)), arg(scalar(kInt64, 2))}));
  table["MatrixBandPart"].push_back(
      node("MatrixBandPart",
           {arg(randomTensor(kInt32, {4, 4})), arg(scalar(kInt32, -1)),
            arg(scalar(kInt32, 0))},
           {{"Tindex", "DT_INT32"}}));
  table["MatrixBandPart"].push_back(node(
      "MatrixBandPart", {arg(randomTensor(kBool, {3, 2})),
                         arg(scalar(kInt64, 0)), arg(scalar(kInt64, -1))}));
  table["MatrixBandPart"].push_back(
      node("MatrixBandPart", {arg(randomTensor(kFloat, {3, 3})),
                              arg(scalar(kInt64, 5)), arg(scalar(kInt64, 0))}));
  // Polygamma: integral orders (others are NaN), broadcast over x.
  for (int32_t dtype : {kFloat, kDouble})
    table["Polygamma"].push_back(
        node("Polygamma",
             {arg(literal(dtype, {4, 1}, {0, 1, 2, 3})),
              arg(randomTensor(dtype, {4, 5}, {-3, 6}))},
             {{"T", dtype == kFloat ? "DT_FLOAT" : "DT_DOUBLE"}}));
  // LinSpace: num is the shape (a constant); start and stop are computed.
  for (auto [dtype, num] : {std::pair{"DT_FLOAT", 7}, std::pair{"DT_DOUBLE", 1},
                            std::pair{"DT_FLOAT", 0}})
    table["LinSpace"].push_back(node(
        "LinSpace",
        {arg(randomTensor(std::string(dtype) == "DT_FLOAT" ? kFloat : kDouble,
                          {})),
         arg(randomTensor(std::string(dtype) == "DT_FLOAT" ? kFloat : kDouble,
                          {})),
         arg(scalar(kInt32, num))},
        {{"T", dtype}}));

  auto reshape = [&](Dims from, std::vector<double> to, int32_t dtype = kFloat) {
    table["Reshape"].push_back(node(
        "Reshape", {arg(randomTensor(dtype, from)), arg(i32s(to))}));
  };
  reshape({3, 4}, {4, 3});
  reshape({3, 4}, {-1});
  reshape({2, 6}, {2, -1, 3}, kInt8);
  reshape({}, {1, 1}, kBool);
  reshape({0, 4}, {4, 0});
  reshape({3, 4}, {5}); // wrong size
  table["Reshape"].push_back(node(
      "Reshape", {arg(randomTensor(kDouble, {6})), arg(vec(kInt64, {3, 2}))}));

  for (auto [shape, dim] : std::vector<std::pair<Dims, int>>{
           {{3, 4}, 0}, {{3, 4}, -1}, {{3, 4}, 2}, {{}, 0}, {{3, 4}, 5}})
    table["ExpandDims"].push_back(node(
        "ExpandDims", {arg(randomTensor(kFloat, shape)), arg(scalar(kInt32, dim))}));
  for (auto [shape, dims] : std::vector<std::pair<Dims, std::string>>{
           {{1, 3, 1, 4}, "[]"}, {{1, 3, 1, 4}, "[0]"}, {{1, 3, 1, 4}, "[-2]"},
           {{1, 3, 1, 4}, "[1]"}, {{1}, "[]"}})
    table["Squeeze"].push_back(node(
        "Squeeze", {arg(randomTensor(kInt32, shape))}, {{"squeeze_dims", dims}}));

  table["Fill"].push_back(node("Fill", {arg(i32s({2, 3})), arg(scalar(kFloat, -2.5))}));
  table["Fill"].push_back(node("Fill", {arg(vec(kInt64, {0, 3})), arg(scalar(kInt32, 4))}));
  table["Fill"].push_back(node("Fill", {arg(i32s({})), arg(scalar(kBool, 1))}));
  table["Fill"].push_back(node("Fill", {arg(i32s({2})), arg(i32s({1, 2}))}));

  auto transpose = [&](Dims shape, std::vector<double> perm) {
    table["Transpose"].push_back(node(
        "Transpose", {arg(randomTensor(kFloat, shape)), arg(i32s(perm))}));
  };
  transpose({2, 3, 4}, {2, 0, 1});
  transpose({3, 4}, {1, 0});
  transpose({2, 3}, {0, 1});
  transpose({0, 3}, {1, 0});
  transpose({2, 3}, {0, 0}); // not a permutation
  table["Transpose"].push_back(node(
      "Transpose", {arg(randomTensor(kUInt16, {2, 1, 3})),
                    arg(vec(kInt64, {1, 2, 0}))}));

  auto reverse = [&](int32_t dtype, Dims shape, std::vector<double> axes,
                     int32_t axisType = kInt32) {
    table["ReverseV2"].push_back(
        node("ReverseV2", {arg(randomTensor(dtype, shape)),
                           arg(vec(axisType, axes))}));
  };
  reverse(kFloat, {2, 3, 4}, {0, 2});
  reverse(kInt32, {5}, {-1}, kInt64);
  reverse(kBool, {2, 2}, {1});
  reverse(kDouble, {2, 3}, {});
  reverse(kFloat, {0, 3}, {1});
  reverse(kFloat, {2, 3}, {2});     // out of range
  reverse(kFloat, {2, 3}, {1, -1}); // twice

  auto &concat = table["ConcatV2"];
  concat.push_back(node("ConcatV2", {arg(randomTensor(kFloat, {2, 3})),
                                     arg(randomTensor(kFloat, {2, 2})),
                                     arg(scalar(kInt32, 1))}));
  concat.push_back(node("ConcatV2", {arg(randomTensor(kInt32, {1, 3})),
                                     arg(randomTensor(kInt32, {2, 3})),
                                     arg(randomTensor(kInt32, {0, 3})),
                                     arg(scalar(kInt64, 0))}));
  concat.push_back(node("ConcatV2", {arg(randomTensor(kBool, {2, 2})),
                                     arg(randomTensor(kBool, {2, 1})),
                                     arg(scalar(kInt32, -1))}));
  concat.push_back(node("ConcatV2", {arg(randomTensor(kFloat, {2, 3})),
                                     arg(randomTensor(kFloat, {3, 2})),
                                     arg(scalar(kInt32, 0))})); // mismatch

  for (int axis : {0, 1, -1})
    table["Pack"].push_back(node("Pack",
                                 {arg(randomTensor(kFloat, {2, 3})),
                                  arg(randomTensor(kFloat, {2, 3})),
                                  arg(randomTensor(kFloat, {2, 3}))},
                                 {{"axis", std::to_string(axis)}}));
  table["Pack"].push_back(node("Pack", {arg(scalar(kInt32, 1)), arg(scalar(kInt32, 2))}));
  table["Pack"].push_back(node("Pack", {arg(randomTensor(kInt64, {0, 2}))}));

  for (auto [shape, axis, num] : std::vector<std::tuple<Dims, int, int>>{
           {{3, 2}, 0, 3}, {{3, 2}, 1, 2}, {{2, 3, 4}, -1, 4}, {{2, 0}, 0, 2}})
    table["Unpack"].push_back(node("Unpack", {arg(randomTensor(kFloat, shape))},
                                   {{"axis", std::to_string(axis)},
                                    {"num", std::to_string(num)}}));

  for (auto [axis, n] : std::vector<std::pair<int, int>>{{1, 2}, {0, 3}, {-1, 4}, {0, 1}})
    table["Split"].push_back(node("Split", {arg(scalar(kInt32, axis)),
                                            arg(randomTensor(kFloat, {3, 4}))},
                                  {{"num_split", std::to_string(n)}}));
  table["Split"].push_back(node("Split", {arg(scalar(kInt32, 1)),
                                          arg(randomTensor(kFloat, {3, 4}))},
                                {{"num_split", "3"}})); // does not divide
  // Many outputs: the lowered values' table grows while the lowering still
  // reads its input (it once read freed memory there).
  table["Split"].push_back(node("Split", {arg(scalar(kInt32, 0)),
                                          arg(randomTensor(kFloat, {96, 2}))},
                                {{"num_split", "96"}}));
  table["Unpack"].push_back(node("Unpack", {arg(randomTensor(kFloat, {2, 96}))},
                                 {{"axis", "1"}, {"num", "96"}}));
  for (auto [sizes, axis] : std::vector<std::pair<std::vector<double>, int>>{
           {{1, 3}, 1}, {{1, -1, 1}, 0}, {{0, 4}, 1}})
    table["SplitV"].push_back(node(
        "SplitV", {arg(randomTensor(kInt32, {3, 4})), arg(i32s(sizes)),
                   arg(scalar(kInt32, axis))},
        {{"num_split", std::to_string(sizes.size())}}));

  auto slice = [&](std::vector<double> begin, std::vector<double> size) {
    table["Slice"].push_back(node("Slice", {arg(randomTensor(kFloat, {3, 4})),
                                            arg(i32s(begin)), arg(i32s(size))}));
  };
  slice({1, 0}, {2, -1});
  slice({0, 1}, {3, 2});
  slice({1, 1}, {0, 2});
  slice({2, 0}, {2, 1}); // out of bounds
  table["Slice"].push_back(node("Slice", {arg(randomTensor(kInt8, {4})),
                                          arg(vec(kInt64, {1})),
                                          arg(vec(kInt64, {2}))}));

  for (auto [shape, multiples] : std::vector<std::pair<Dims, std::vector<double>>>{
           {{2, 3}, {2, 1}}, {{2, 3}, {1, 2}}, {{2, 3}, {2, 2}}, {{3}, {0}},
           {{}, {}}, {{0, 2}, {3, 1}}})
    table["Tile"].push_back(node("Tile", {arg(randomTensor(kFloat, shape)),
                                          arg(i32s(multiples))}));
  for (auto [shape, to] : std::vector<std::pair<Dims, std::vector<double>>>{
           {{3}, {2, 3}}, {{}, {2, 3}}, {{2, 1}, {2, 3}}, {{3, 1}, {2, 3, 4}},
           {{1}, {0}}, {{2}, {3}}})
    table["BroadcastTo"].push_back(node(
        "BroadcastTo", {arg(randomTensor(kInt32, shape)), arg(i32s(to))}));

  auto pad = [&](int32_t dtype, Dims shape, Dims paddings) {
    Dims paddingShape{int64_t(shape.size()), 2};
    table["Pad"].push_back(node(
        "Pad", {arg(randomTensor(dtype, shape)),
                arg(literal(kInt32, paddingShape,
                            std::vector<double>(paddings.begin(), paddings.end())))}));
  };
  pad(kFloat, {2, 3}, {1, 0, 0, 2});
  pad(kInt32, {2, 3}, {0, 0, 0, 0});
  pad(kFloat, {0, 3}, {1, 1, 0, 0});
  pad(kFloat, {}, {});
  pad(kFloat, {2}, {-1, 0}); // negative

  // GatherV2: indices in range only (compiled code clamps as XLA does,
  // where the reference kernel fails).
  auto gather = [&](Dims params, Tensor indices, int axis) {
    table["GatherV2"].push_back(node(
        "GatherV2", {arg(randomTensor(kFloat, params)), arg(std::move(indices)),
                     arg(scalar(kInt32, axis))}));
  };
  gather({5, 3}, i32s({4, 0, 4}), 0);
  gather({5, 3}, literal(kInt32, {2, 2}, {2, 0, 1, 1}), 1);
  gather({5, 3}, scalar(kInt64, 3), 0);
  gather({2, 3, 4}, vec(kInt64, {3, 1}), -1);
  gather({5, 3}, i32s({}), 0);

  // UnsortedSegmentSum: repeated ids sum, negative ids drop their row,
  // segments nobody names stay 0 (ids past num_segments are an error:
  // Runtime/compiled-errors.test).
  auto segmentSum = [&](Tensor data, Tensor ids, Tensor segments) {
    table["UnsortedSegmentSum"].push_back(node(
        "UnsortedSegmentSum",
        {arg(std::move(data)), arg(std::move(ids)), arg(std::move(segments))}));
  };
  segmentSum(randomTensor(kFloat, {6, 3}), i32s({2, 0, 2, -1, 3, 2}),
             scalar(kInt32, 5));
  segmentSum(moderate(kDouble, {2, 3, 2}),
             literal(kInt64, {2, 3}, {1, 1, 0, -4, 1, 0}), scalar(kInt64, 2));
  segmentSum(randomTensor(kInt32, {4}), i32s({0, 0, 1, 0}), scalar(kInt32, 3));
  segmentSum(randomTensor(kFloat, {0, 4}), i32s({}), scalar(kInt32, 2));
  segmentSum(randomTensor(kFloat, {3, 0}), i32s({1, 0, 1}), scalar(kInt32, 2));

  auto oneHot = [&](Tensor indices, int depth, int32_t dtype, int axis) {
    table["OneHot"].push_back(node(
        "OneHot", {arg(std::move(indices)), arg(scalar(kInt32, depth)),
                   arg(scalar(dtype, 5)), arg(scalar(dtype, -1))},
        {{"axis", std::to_string(axis)}}));
  };
  // Indices out of [0, depth) give rows of off_value in both.
  oneHot(i32s({0, 3, 1, -1, 7}), 4, kFloat, -1);
  oneHot(i32s({2, 0}), 3, kInt32, 0);
  oneHot(literal(kInt64, {2, 2}, {0, 2, 1, 1}), 3, kDouble, 1);
  oneHot(i32s({}), 3, kFloat, -1);
}

void addNNCases(CaseTable &table) {
  for (auto [shape, format, dtype] : std::vector<std::tuple<Dims, const char *, int32_t>>{
           {{2, 3}, "NHWC", kFloat}, {{2, 2, 2, 3}, "NHWC", kFloat},
           {{2, 3, 2, 2}, "NCHW", kDouble}, {{0, 3}, "NHWC", kFloat}}) {
    int64_t c = std::string(format) == "NCHW" ? shape[1] : shape.back();
    std::string formatText = std::string("'") + format + "'";
    table["BiasAdd"].push_back(node("BiasAdd", {arg(randomTensor(dtype, shape)),
                                                arg(randomTensor(dtype, {c}))},
                                    {{"data_format", formatText}}));
    table["BiasAddGrad"].push_back(node("BiasAddGrad",
                                        {arg(moderate(dtype, shape))},
                                        {{"data_format", formatText}}));
  }
  table["BiasAdd"].push_back(node("BiasAdd", {arg(randomTensor(kFloat, {2, 3})),
                                              arg(randomTensor(kFloat, {2}))}));

  // Sparse labels in range only (compiled code gives NaN rows, as
  // TensorFlow's GPU kernel, where the reference kernel fails).
  auto &sparse = table["SparseSoftmaxCrossEntropyWithLogits"];
  sparse.push_back(node("SparseSoftmaxCrossEntropyWithLogits",
                        {arg(randomTensor(kFloat, {3, 4})), arg(i32s({0, 3, 2}))}));
  sparse.push_back(node("SparseSoftmaxCrossEntropyWithLogits",
                        {arg(randomTensor(kDouble, {2, 5})),
                         arg(vec(kInt64, {4, 4}))}));
  sparse.push_back(node("SparseSoftmaxCrossEntropyWithLogits",
                        {arg(randomTensor(kFloat, {0, 4})), arg(i32s({}))}));
  auto &dense = table["SoftmaxCrossEntropyWithLogits"];
  Domain probabilities{0, 1};
  dense.push_back(node("SoftmaxCrossEntropyWithLogits",
                       {arg(randomTensor(kFloat, {3, 4})),
                        arg(randomTensor(kFloat, {3, 4}, probabilities))}));
  dense.push_back(node("SoftmaxCrossEntropyWithLogits",
                       {arg(randomTensor(kDouble, {1, 4})),
                        arg(randomTensor(kDouble, {3, 4}, probabilities))}));
  dense.push_back(node("SoftmaxCrossEntropyWithLogits",
                       {arg(randomTensor(kFloat, {3, 4})),
                        arg(randomTensor(kFloat, {4}, probabilities))}));

  // Batch normalization, NHWC and NCHW, training (batch statistics; the
  // running ones empty, or blended in by exponential_avg_factor) and
  // inference (given statistics), and its gradient for both.
  Domain positive{0.25, 2};
  for (const char *format : {"'NHWC'", "'NCHW'"}) {
    bool nchw = StringRef(format) == "'NCHW'";
    Dims x = nchw ? Dims{2, 3, 4, 5} : Dims{2, 4, 5, 3};
    for (const char *training : {"true", "false"}) {
      Attrs attrs = {{"data_format", format}, {"is_training", training},
                     {"epsilon", "0.001"}};
      Tensor mean = moderate(kFloat, {3});
      Tensor variance = randomTensor(kFloat, {3}, positive);
      bool batchStatistics = StringRef(training) == "true";
      table["FusedBatchNormV3"].push_back(node(
          "FusedBatchNormV3",
          {arg(moderate(kFloat, x)), arg(moderate(kFloat, {3})),
           arg(moderate(kFloat, {3})),
           arg(batchStatistics ? vec(kFloat, {}) : mean),
           arg(batchStatistics ? vec(kFloat, {}) : variance)},
          attrs));
      table["FusedBatchNormGradV3"].push_back(node(
          "FusedBatchNormGradV3",
          {arg(moderate(kFloat, x)), arg(moderate(kFloat, x)),
           arg(moderate(kFloat, {3})), arg(mean), arg(variance),
           arg(vec(kFloat, {}))},
          attrs));
    }
  }
  table["FusedBatchNormV3"].push_back(node(
      "FusedBatchNormV3",
      {arg(moderate(kDouble, {3, 2, 2, 4})), arg(moderate(kDouble, {4})),
       arg(moderate(kDouble, {4})), arg(moderate(kDouble, {4})),
       arg(randomTensor(kDouble, {4}, positive))},
      {{"exponential_avg_factor", "0.25"}}));
  // One element per channel (no Bessel correction), and an empty batch.
  table["FusedBatchNormV3"].push_back(node(
      "FusedBatchNormV3",
      {arg(moderate(kFloat, {1, 1, 1, 2})), arg(moderate(kFloat, {2})),
       arg(moderate(kFloat, {2})), arg(vec(kFloat, {})),
       arg(vec(kFloat, {}))}));
  table["FusedBatchNormV3"].push_back(node(
      "FusedBatchNormV3",
      {arg(moderate(kFloat, {0, 2, 2, 2})), arg(moderate(kFloat, {2})),
       arg(moderate(kFloat, {2})), arg(vec(kFloat, {})),
       arg(vec(kFloat, {}))}));

  // Convolution and pooling, NHWC.
  struct Conv { Dims input, filter; const char *strides, *dilations, *padding; };
  for (const Conv &conv : std::vector<Conv>{
           {{1, 5, 5, 2}, {3, 3, 2, 3}, "[1, 1, 1, 1]", "[1, 1, 1, 1]", "'SAME'"},
           {{2, 5, 6, 2}, {3, 2, 2, 1}, "[1, 2, 2, 1]", "[1, 1, 1, 1]", "'VALID'"},
           {{1, 6, 6, 1}, {2, 2, 1, 2}, "[1, 1, 2, 1]", "[1, 2, 2, 1]", "'SAME'"}}) {
    Attrs attrs = {{"strides", conv.strides}, {"dilations", conv.dilations},
                   {"padding", conv.padding}};
    table["Conv2D"].push_back(node("Conv2D", {arg(moderate(kFloat, conv.input)),
                                              arg(moderate(kFloat, conv.filter))},
                                   attrs));
    // The output shape, from the forward op's geometry.
    auto outSize = [&](int64_t in, int64_t k, int64_t stride, int64_t dilation) {
      int64_t effective = (k - 1) * dilation + 1;
      return StringRef(conv.padding) == "'SAME'"
                 ? (in + stride - 1) / stride
                 : (in - effective + stride) / stride;
    };
    int64_t sh = conv.strides == StringRef("[1, 2, 2, 1]") ? 2 : 1;
    int64_t sw = conv.strides == StringRef("[1, 1, 1, 1]") ? 1 : 2;
    int64_t dil = conv.dilations == StringRef("[1, 2, 2, 1]") ? 2 : 1;
    Dims out = {conv.input[0], outSize(conv.input[1], conv.filter[0], sh, dil),
                outSize(conv.input[2], conv.filter[1], sw, dil), conv.filter[3]};
    auto dims = [](const Dims &d) {
      return i32s(std::vector<double>(d.begin(), d.end()));
    };
    table["Conv2DBackpropInput"].push_back(node(
        "Conv2DBackpropInput", {arg(dims(conv.input)), arg(moderate(kFloat, conv.filter)),
                                arg(moderate(kFloat, out))},
        attrs));
    table["Conv2DBackpropFilter"].push_back(node(
        "Conv2DBackpropFilter", {arg(moderate(kFloat, conv.input)), arg(dims(conv.filter)),
                                 arg(moderate(kFloat, out))},
        attrs));
  }
  table["Conv2D"].push_back(node("Conv2D", {arg(moderate(kDouble, {1, 3, 3, 2})),
                                            arg(moderate(kDouble, {1, 1, 2, 2}))},
                                 {{"strides", "[1, 1, 1, 1]"}, {"padding", "'VALID'"}}));

  // NCHW and EXPLICIT padding: the convolution, its backprops, the pools
  // and their gradients (shapes in the data format's order).
  {
    auto dims = [](const Dims &d) {
      return i32s(std::vector<double>(d.begin(), d.end()));
    };
    Attrs nchw = {{"strides", "[1, 1, 2, 1]"},
                  {"padding", "'SAME'"},
                  {"data_format", "'NCHW'"}};
    Dims input = {2, 3, 5, 6}, filter = {3, 2, 3, 4}, out = {2, 4, 5, 3};
    table["Conv2D"].push_back(node(
        "Conv2D", {arg(moderate(kFloat, input)), arg(moderate(kFloat, filter))},
        nchw));
    table["Conv2DBackpropInput"].push_back(
        node("Conv2DBackpropInput",
             {arg(dims(input)), arg(moderate(kFloat, filter)),
              arg(moderate(kFloat, out))},
             nchw));
    table["Conv2DBackpropFilter"].push_back(
        node("Conv2DBackpropFilter",
             {arg(moderate(kFloat, input)), arg(dims(filter)),
              arg(moderate(kFloat, out))},
             nchw));
    // EXPLICIT: (1, 2) rows and (0, 3) columns, NHWC and NCHW.
    Attrs explicitNHWC = {{"strides", "[1, 2, 1, 1]"},
                          {"padding", "'EXPLICIT'"},
                          {"explicit_paddings", "[0, 0, 1, 2, 0, 3, 0, 0]"}};
    Dims xInput = {1, 5, 4, 2}, xFilter = {3, 3, 2, 2}, xOut = {1, 3, 5, 2};
    table["Conv2D"].push_back(
        node("Conv2D",
             {arg(moderate(kFloat, xInput)), arg(moderate(kFloat, xFilter))},
             explicitNHWC));
    table["Conv2DBackpropInput"].push_back(
        node("Conv2DBackpropInput",
             {arg(dims(xInput)), arg(moderate(kFloat, xFilter)),
              arg(moderate(kFloat, xOut))},
             explicitNHWC));
    table["Conv2DBackpropFilter"].push_back(
        node("Conv2DBackpropFilter",
             {arg(moderate(kFloat, xInput)), arg(dims(xFilter)),
              arg(moderate(kFloat, xOut))},
             explicitNHWC));
    Attrs explicitNCHW = {{"strides", "[1, 1, 1, 2]"},
                          {"padding", "'EXPLICIT'"},
                          {"explicit_paddings", "[0, 0, 0, 0, 2, 1, 1, 1]"},
                          {"data_format", "'NCHW'"}};
    table["Conv2D"].push_back(node("Conv2D",
                                   {arg(moderate(kFloat, {1, 2, 4, 5})),
                                    arg(moderate(kFloat, {2, 2, 2, 3}))},
                                   explicitNCHW));
    Attrs poolNCHW = {{"ksize", "[1, 1, 3, 2]"},
                      {"strides", "[1, 1, 2, 2]"},
                      {"padding", "'SAME'"},
                      {"data_format", "'NCHW'"}};
    Dims poolIn = {2, 3, 5, 4}, poolOut = {2, 3, 3, 2};
    table["MaxPool"].push_back(
        node("MaxPool", {arg(randomTensor(kFloat, poolIn))}, poolNCHW));
    table["AvgPool"].push_back(
        node("AvgPool", {arg(moderate(kFloat, poolIn))}, poolNCHW));
    table["MaxPoolGrad"].push_back(node(
        "MaxPoolGrad",
        {arg(randomTensor(kFloat, poolIn, {-100, 100})),
         arg(randomTensor(kFloat, poolOut)), arg(moderate(kFloat, poolOut))},
        poolNCHW));
    table["AvgPoolGrad"].push_back(
        node("AvgPoolGrad", {arg(dims(poolIn)), arg(moderate(kFloat, poolOut))},
             poolNCHW));
    Attrs poolExplicit = {{"ksize", "[1, 2, 2, 1]"},
                          {"strides", "[1, 2, 2, 1]"},
                          {"padding", "'EXPLICIT'"},
                          {"explicit_paddings", "[0, 0, 1, 0, 1, 1, 0, 0]"}};
    table["MaxPool"].push_back(node(
        "MaxPool", {arg(randomTensor(kFloat, {1, 4, 3, 2}))}, poolExplicit));
    table["MaxPoolGrad"].push_back(
        node("MaxPoolGrad",
             {arg(randomTensor(kFloat, {1, 4, 3, 2}, {-100, 100})),
              arg(randomTensor(kFloat, {1, 2, 2, 2})),
              arg(moderate(kFloat, {1, 2, 2, 2}))},
             poolExplicit));
  }

  // 3-D: SAME and VALID, strides (one that does not divide its input) and
  // dilations, the forward ops and their gradients (NCDHW has no
  // lowering: the reference kernels run it).
  table["Conv3D"].push_back(
      node("Conv3D",
           {arg(moderate(kFloat, {1, 4, 5, 3, 2})),
            arg(moderate(kFloat, {2, 3, 2, 2, 3}))},
           {{"strides", "[1, 1, 2, 1, 1]"}, {"padding", "'SAME'"}}));
  table["Conv3D"].push_back(node("Conv3D",
                                 {arg(moderate(kDouble, {2, 5, 4, 4, 1})),
                                  arg(moderate(kDouble, {2, 2, 2, 1, 2}))},
                                 {{"strides", "[1, 2, 1, 1, 1]"},
                                  {"padding", "'VALID'"},
                                  {"dilations", "[1, 1, 2, 1, 1]"}}));
  for (const char *op : {"MaxPool3D", "AvgPool3D"}) {
    table[op].push_back(node(op, {arg(moderate(kFloat, {2, 5, 4, 3, 2}))},
                             {{"ksize", "[1, 3, 2, 2, 1]"},
                              {"strides", "[1, 2, 2, 1, 1]"},
                              {"padding", "'SAME'"}}));
    table[op].push_back(node(op, {arg(moderate(kFloat, {1, 4, 4, 4, 1}))},
                             {{"ksize", "[1, 2, 2, 2, 1]"},
                              {"strides", "[1, 2, 2, 2, 1]"},
                              {"padding", "'VALID'"}}));
  }
  {
    // TensorFlow's GetWindowedOutputSize, per spatial dimension.
    auto windowOut = [](int64_t in, int64_t k, int64_t stride, int64_t dilation,
                        bool same) -> int64_t {
      int64_t effective = (k - 1) * dilation + 1;
      if (same)
        return (in + stride - 1) / stride;
      return in < effective ? 0 : (in - effective + stride) / stride;
    };
    auto dims = [](const Dims &d) {
      return i32s(std::vector<double>(d.begin(), d.end()));
    };
    // Both backprops of a forward Conv3D on `input` with `filter`.
    auto addConv = [&](int32_t dtype, Dims input, Dims filter, Dims strides,
                       Dims dilations, bool same) {
      Attrs attrs = {{"strides", dimsText(strides)},
                     {"dilations", dimsText(dilations)},
                     {"padding", same ? "'SAME'" : "'VALID'"}};
      Dims out = {input[0], 0, 0, 0, filter[4]};
      for (int d = 0; d < 3; ++d)
        out[1 + d] = windowOut(input[1 + d], filter[d], strides[1 + d],
                               dilations[1 + d], same);
      table["Conv3DBackpropInputV2"].push_back(
          node("Conv3DBackpropInputV2",
               {arg(dims(input)), arg(moderate(dtype, filter)),
                arg(moderate(dtype, out))},
               attrs));
      table["Conv3DBackpropFilterV2"].push_back(
          node("Conv3DBackpropFilterV2",
               {arg(moderate(dtype, input)), arg(dims(filter)),
                arg(moderate(dtype, out))},
               attrs));
    };
    // Stride 2 over 5 rows (no divisor), batch 2, 2 -> 3 channels.
    addConv(kFloat, {2, 4, 5, 3, 2}, {2, 3, 2, 2, 3}, {1, 1, 2, 1, 1},
            {1, 1, 1, 1, 1}, true);
    // VALID, stride 2 in depth, dilated rows.
    addConv(kFloat, {1, 5, 4, 4, 2}, {2, 2, 2, 2, 2}, {1, 2, 1, 1, 1},
            {1, 1, 2, 1, 1}, false);
    // VALID, stride 3 over 4 columns: the last two columns unread.
    addConv(kFloat, {2, 5, 5, 4, 2}, {3, 2, 2, 2, 2}, {1, 2, 2, 3, 1},
            {1, 1, 1, 1, 1}, false);
    // SAME with a dilation: padding on both sides of each dimension.
    addConv(kFloat, {1, 4, 6, 5, 2}, {2, 2, 3, 2, 1}, {1, 1, 1, 2, 1},
            {1, 2, 1, 1, 1}, true);
    // Every dimension strided, double.
    addConv(kDouble, {1, 3, 4, 5, 1}, {2, 2, 2, 1, 2}, {1, 2, 2, 2, 1},
            {1, 1, 1, 1, 1}, true);
    // A 1x1x1 window, stride 2: most input elements get nothing.
    addConv(kFloat, {2, 3, 3, 3, 3}, {1, 1, 1, 3, 2}, {1, 2, 2, 2, 1},
            {1, 1, 1, 1, 1}, false);
    // input_sizes as int64 (Tshape).
    table["Conv3DBackpropInputV2"].push_back(
        node("Conv3DBackpropInputV2",
             {arg(vec(kInt64, {1, 3, 3, 3, 1})),
              arg(moderate(kFloat, {2, 2, 2, 1, 2})),
              arg(moderate(kFloat, {1, 2, 2, 2, 2}))},
             {{"strides", "[1, 2, 2, 2, 1]"}, {"padding", "'SAME'"}}));

    // The gradients of a forward pool on `input`.
    auto addPool = [&](Dims input, Dims ksize, Dims strides, bool same) {
      Attrs attrs = {{"ksize", dimsText(ksize)},
                     {"strides", dimsText(strides)},
                     {"padding", same ? "'SAME'" : "'VALID'"}};
      Dims out = {input[0], 0, 0, 0, input[4]};
      for (int d = 0; d < 3; ++d)
        out[1 + d] =
            windowOut(input[1 + d], ksize[1 + d], strides[1 + d], 1, same);
      // orig_output is what MaxPool3D computed on orig_input only in
      // spirit: both sides find the maxima again from orig_input.
      table["MaxPool3DGrad"].push_back(
          node("MaxPool3DGrad",
               {arg(randomTensor(kFloat, input, {-100, 100})),
                arg(randomTensor(kFloat, out)), arg(moderate(kFloat, out))},
               attrs));
      // Ties: values from {-1, 0, 1}, so most windows hold their maximum
      // more than once and only the first in the kernel's scan order
      // (depth, height, width) takes the gradient.
      Tensor ties = randomTensor(kFloat, input, {-1.5, 1.5});
      for (int64_t i = 0; i < ties.numElements(); ++i)
        ties.setFromDouble(i, std::round(ties.getAsDouble(i)));
      table["MaxPool3DGrad"].push_back(
          node("MaxPool3DGrad",
               {arg(ties), arg(randomTensor(kFloat, out)),
                arg(moderate(kFloat, out))},
               attrs));
      table["AvgPool3DGrad"].push_back(
          node("AvgPool3DGrad", {arg(dims(input)), arg(moderate(kFloat, out))},
               attrs));
    };
    // SAME, stride 2 over 5 planes: the last windows hang over the edge
    // (fewer real elements).
    addPool({2, 5, 4, 3, 2}, {1, 3, 2, 2, 1}, {1, 2, 2, 1, 1}, true);
    // VALID, windows side by side.
    addPool({1, 4, 4, 4, 1}, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, false);
    // SAME, stride 1: every element in several windows.
    addPool({1, 3, 4, 3, 2}, {1, 2, 3, 2, 1}, {1, 1, 1, 1, 1}, true);
    // VALID, strides 2 and 3 that do not divide 5 and 6, the stride 3 past
    // the window (elements no window covers).
    addPool({2, 5, 6, 4, 1}, {1, 2, 2, 2, 1}, {1, 2, 3, 1, 1}, false);
    // All equal: each window's first real element takes its gradient.
    table["MaxPool3DGrad"].push_back(
        node("MaxPool3DGrad",
             {arg(literal(kFloat, {1, 3, 3, 2, 1}, std::vector<double>(18, 2))),
              arg(randomTensor(kFloat, {1, 2, 2, 1, 1})),
              arg(moderate(kFloat, {1, 2, 2, 1, 1}))},
             {{"ksize", "[1, 2, 2, 2, 1]"},
              {"strides", "[1, 1, 1, 1, 1]"},
              {"padding", "'VALID'"}}));
    table["AvgPool3DGrad"].push_back(node(
        "AvgPool3DGrad",
        {arg(dims({1, 3, 3, 2, 2})), arg(moderate(kDouble, {1, 2, 2, 1, 2}))},
        {{"ksize", "[1, 2, 2, 2, 1]"},
         {"strides", "[1, 2, 2, 2, 1]"},
         {"padding", "'SAME'"}}));
  }

  struct Pool { Dims input; const char *ksize, *strides, *padding; Dims out; };
  for (const Pool &pool : std::vector<Pool>{
           {{1, 4, 4, 2}, "[1, 2, 2, 1]", "[1, 2, 2, 1]", "'VALID'", {1, 2, 2, 2}},
           {{2, 5, 5, 1}, "[1, 3, 3, 1]", "[1, 2, 2, 1]", "'SAME'", {2, 3, 3, 1}},
           {{1, 3, 4, 1}, "[1, 2, 1, 1]", "[1, 1, 1, 1]", "'VALID'", {1, 2, 4, 1}}}) {
    Attrs attrs = {{"ksize", pool.ksize}, {"strides", pool.strides},
                   {"padding", pool.padding}};
    // MaxPool compares: edge values and all. AvgPool sums: with 1e4 and
    // -1e4 in one window, float32's sum loses the small values the
    // reference kernel's double keeps, so its inputs are moderate.
    table["MaxPool"].push_back(
        node("MaxPool", {arg(randomTensor(kFloat, pool.input))}, attrs));
    table["AvgPool"].push_back(
        node("AvgPool", {arg(moderate(kFloat, pool.input))}, attrs));
    // orig_output is what MaxPool computed on orig_input only in spirit:
    // both sides find the maxima again from orig_input.
    table["MaxPoolGrad"].push_back(node(
        "MaxPoolGrad", {arg(randomTensor(kFloat, pool.input, {-100, 100})),
                        arg(randomTensor(kFloat, pool.out)),
                        arg(moderate(kFloat, pool.out))},
        attrs));
    table["AvgPoolGrad"].push_back(node(
        "AvgPoolGrad",
        {arg(i32s(std::vector<double>(pool.input.begin(), pool.input.end()))),
         arg(moderate(kFloat, pool.out))},
        attrs));
  }
}

void addStateCases(CaseTable &table) {
  Tensor v = randomTensor(kFloat, {2, 3});
  auto variable = [&](const char *op) {
    return withVariables(node(op, {}, {{"dtype", "DT_FLOAT"},
                                       {"shape", "[2, 3]"},
                                       {"shared_name", "'v'"}}),
                         {{"v", v}});
  };
  table["VariableV2"].push_back(variable("VariableV2"));
  table["Variable"].push_back(variable("Variable"));
  table["VarHandleOp"].push_back(variable("VarHandleOp"));
  table["ReadVariableOp"].push_back(withVariables(
      node("ReadVariableOp", {var("v")}, {{"dtype", "DT_INT64"}}),
      {{"v", randomTensor(kInt64, {4})}}));

  for (bool resource : {false, true}) {
    std::string assign = resource ? "AssignVariableOp" : "Assign";
    table[assign].push_back(withVariables(
        node(assign, {var("v"), arg(randomTensor(kFloat, {2, 3}))}), {{"v", v}}));
    table[assign].push_back(withVariables(
        node(assign, {var("v"), arg(randomTensor(kInt32, {}))}),
        {{"v", scalar(kInt32, 3)}}));
    // A new variable, and (without shape validation) a new shape.
    table[assign].push_back(
        node(assign, {var("w"), arg(randomTensor(kDouble, {3}))}));
    table[assign].push_back(withVariables(
        node(assign, {var("v"), arg(randomTensor(kFloat, {4}))},
             resource ? Attrs{} : Attrs{{"validate_shape", "false"}}),
        {{"v", v}}));
    for (const char *update : {"Add", "Sub"}) {
      std::string op = "Assign" + std::string(update) +
                       (resource ? "VariableOp" : "");
      for (int32_t dtype : {kFloat, kDouble, kInt32, kInt64})
        table[op].push_back(withVariables(
            node(op, {var("v"), arg(randomTensor(dtype, {2, 3}))}),
            {{"v", randomTensor(dtype, {2, 3})}}));
      table[op].push_back(node(op, {var("u"), arg(randomTensor(kFloat, {2}))}));
    }

    std::string prefix = resource ? "Resource" : "";
    for (int32_t dtype : {kFloat, kDouble}) {
      std::map<std::string, Tensor> slots = {
          {"var", randomTensor(dtype, {2, 3})},
          {"accum", randomTensor(dtype, {2, 3})},
          {"m", randomTensor(dtype, {2, 3})},
          {"v", randomTensor(dtype, {2, 3}, {0, 4})}};
      Tensor grad = randomTensor(dtype, {2, 3});
      table[prefix + "ApplyGradientDescent"].push_back(withVariables(
          node(prefix + "ApplyGradientDescent",
               {var("var"), arg(scalar(dtype, 0.1)), arg(grad)}),
          slots));
      for (const char *nesterov : {"false", "true"}) {
        table[prefix + "ApplyMomentum"].push_back(withVariables(
            node(prefix + "ApplyMomentum",
                 {var("var"), var("accum"), arg(scalar(dtype, 0.1)), arg(grad),
                  arg(scalar(dtype, 0.9))},
                 {{"use_nesterov", nesterov}}),
            slots));
        table[prefix + "ApplyAdam"].push_back(withVariables(
            node(prefix + "ApplyAdam",
                 {var("var"), var("m"), var("v"), arg(scalar(dtype, 0.81)),
                  arg(scalar(dtype, 0.998)), arg(scalar(dtype, 0.01)),
                  arg(scalar(dtype, 0.9)), arg(scalar(dtype, 0.999)),
                  arg(scalar(dtype, 1e-7)), arg(grad)},
                 {{"use_nesterov", nesterov}}),
            slots));
      }
    }
    // An update whose shape is not the variable's.
    table[prefix + "ApplyGradientDescent"].push_back(withVariables(
        node(prefix + "ApplyGradientDescent",
             {var("var"), arg(scalar(kFloat, 0.1)), arg(randomTensor(kFloat, {3}))}),
        {{"var", v}}));
  }
}

/// Functions the control-flow and call ops run: add, sub and mul of two
/// floats; and a loop of (i: int32, x: float) that doubles x while i < 3.
constexpr const char *kFunctions = R"pb(
  library {
    function {
      signature { name: "add" input_arg { name: "a" type: DT_FLOAT }
                  input_arg { name: "b" type: DT_FLOAT }
                  output_arg { name: "z" type: DT_FLOAT } }
      node_def { name: "r" op: "AddV2" input: "a" input: "b"
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "z" value: "r:z:0" }
    }
    function {
      signature { name: "sub" input_arg { name: "a" type: DT_FLOAT }
                  input_arg { name: "b" type: DT_FLOAT }
                  output_arg { name: "z" type: DT_FLOAT } }
      node_def { name: "r" op: "Sub" input: "a" input: "b"
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "z" value: "r:z:0" }
    }
    function {
      signature { name: "mul" input_arg { name: "a" type: DT_FLOAT }
                  input_arg { name: "b" type: DT_FLOAT }
                  output_arg { name: "z" type: DT_FLOAT } }
      node_def { name: "r" op: "Mul" input: "a" input: "b"
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "z" value: "r:z:0" }
    }
    function {
      signature { name: "below3" input_arg { name: "i" type: DT_INT32 }
                  input_arg { name: "x" type: DT_FLOAT }
                  output_arg { name: "c" type: DT_BOOL } }
      node_def { name: "three" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 3 } } } }
      node_def { name: "less" op: "Less" input: "i" input: "three:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "c" value: "less:z:0" }
    }
    function {
      signature { name: "double" input_arg { name: "i" type: DT_INT32 }
                  input_arg { name: "x" type: DT_FLOAT }
                  output_arg { name: "i2" type: DT_INT32 }
                  output_arg { name: "x2" type: DT_FLOAT } }
      node_def { name: "one" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 1 } } } }
      node_def { name: "inc" op: "AddV2" input: "i" input: "one:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      node_def { name: "dbl" op: "AddV2" input: "x" input: "x"
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "i2" value: "inc:z:0" }
      ret { key: "x2" value: "dbl:z:0" }
    }
    function {
      signature { name: "lists_fixed" input_arg { name: "x" type: DT_FLOAT }
                  input_arg { name: "i" type: DT_INT32 }
                  output_arg { name: "stacked" type: DT_FLOAT }
                  output_arg { name: "item" type: DT_FLOAT }
                  output_arg { name: "length" type: DT_INT32 }
                  output_arg { name: "shape" type: DT_INT32 } }
      node_def { name: "row_shape" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { dim { size: 1 } } int_val: 2 } } } }
      node_def { name: "three" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 3 } } } }
      node_def { name: "zero" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 0 } } } }
      node_def { name: "rows" op: "TensorListFromTensor"
                 input: "x" input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } }
                 attr { key: "shape_type" value { type: DT_INT32 } } }
      node_def { name: "first" op: "TensorListGetItem"
                 input: "rows:output_handle:0" input: "zero:output:0"
                 input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "reserved" op: "TensorListReserve"
                 input: "row_shape:output:0" input: "three:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } }
                 attr { key: "shape_type" value { type: DT_INT32 } } }
      node_def { name: "set" op: "TensorListSetItem"
                 input: "reserved:handle:0" input: "i"
                 input: "first:item:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "read" op: "TensorListGetItem"
                 input: "set:output_handle:0" input: "i"
                 input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "stack" op: "TensorListStack"
                 input: "set:output_handle:0" input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } }
                 attr { key: "num_elements" value { i: 3 } } }
      node_def { name: "len" op: "TensorListLength"
                 input: "set:output_handle:0" }
      node_def { name: "eshape" op: "TensorListElementShape"
                 input: "set:output_handle:0"
                 attr { key: "shape_type" value { type: DT_INT32 } } }
      ret { key: "stacked" value: "stack:tensor:0" }
      ret { key: "item" value: "read:item:0" }
      ret { key: "length" value: "len:length:0" }
      ret { key: "shape" value: "eshape:element_shape:0" }
    }
    function {
      signature { name: "lists_growing" input_arg { name: "x" type: DT_FLOAT }
                  input_arg { name: "i" type: DT_INT32 }
                  output_arg { name: "popped" type: DT_FLOAT }
                  output_arg { name: "length" type: DT_INT32 } }
      node_def { name: "row_shape" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { dim { size: 1 } } int_val: 2 } } } }
      node_def { name: "bound" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 4 } } } }
      node_def { name: "rows" op: "TensorListFromTensor"
                 input: "x" input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } }
                 attr { key: "shape_type" value { type: DT_INT32 } } }
      node_def { name: "row" op: "TensorListGetItem"
                 input: "rows:output_handle:0" input: "i"
                 input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "zero" op: "Const"
                 attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32
                        tensor_shape { } int_val: 0 } } } }
      node_def { name: "first" op: "TensorListGetItem"
                 input: "rows:output_handle:0" input: "zero:output:0"
                 input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "empty" op: "EmptyTensorList"
                 input: "row_shape:output:0" input: "bound:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } }
                 attr { key: "shape_type" value { type: DT_INT32 } } }
      node_def { name: "push1" op: "TensorListPushBack"
                 input: "empty:handle:0" input: "row:item:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "push2" op: "TensorListPushBack"
                 input: "push1:output_handle:0" input: "first:item:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "pop" op: "TensorListPopBack"
                 input: "push2:output_handle:0" input: "row_shape:output:0"
                 attr { key: "element_dtype" value { type: DT_FLOAT } } }
      node_def { name: "len" op: "TensorListLength"
                 input: "pop:output_handle:0" }
      ret { key: "popped" value: "pop:tensor:0" }
      ret { key: "length" value: "len:length:0" }
    }
  }
)pb";

void addControlFlowCases(CaseTable &table) {
  auto add = [&](Case c) {
    c.withFunctions = true;
    table[c.op].push_back(std::move(c));
  };
  Tensor a = randomTensor(kFloat, {2, 3}), b = randomTensor(kFloat, {2, 3});
  for (const char *op : {"If", "StatelessIf"})
    for (Tensor cond : {scalar(kBool, 1), scalar(kBool, 0), scalar(kInt32, 0),
                        scalar(kInt32, -2)})
      add(node(op, {arg(cond), arg(a), arg(b)},
               {{"then_branch", "add"}, {"else_branch", "sub"},
                {"Tout", "[DT_FLOAT]"}}));
  // An index out of range runs the last branch, as TensorFlow's default.
  for (const char *op : {"Case", "StatelessCase"})
    for (int index : {0, 1, 2, 7, -1})
      add(node(op, {arg(scalar(kInt32, index)), arg(a), arg(b)},
               {{"branches", "[add, sub, mul]"}, {"Tout", "[DT_FLOAT]"}}));
  for (const char *op : {"While", "StatelessWhile"})
    for (int start : {0, 2, 5})
      add(node(op, {arg(scalar(kInt32, start)), arg(randomTensor(kFloat, {2}))},
               {{"cond", "below3"}, {"body", "double"}}));
  for (auto [op, f] : std::vector<std::pair<const char *, const char *>>{
           {"PartitionedCall", "add"}, {"StatefulPartitionedCall", "mul"}})
    add(node(op, {arg(a), arg(b)}, {{"f", f}, {"Tout", "[DT_FLOAT]"}}));
  // Host transfers that only send run alone (nobody receives); one that
  // waits for the host needs a host: see kRunWithAHost.
  add(node("XlaSendToHost", {arg(a)},
           {{"Tinput", "DT_FLOAT"}, {"key", "'to_host'"}}));
  add(node("_XlaHostComputeMlir", {arg(a), arg(scalar(kInt32, 3))},
           {{"Tinputs", "[DT_FLOAT, DT_INT32]"},
            {"Toutputs", "[]"},
            {"send_key", "'host_compute_channel_0_args'"},
            {"recv_key", "''"}}));
}

/// The TensorList ops, which take or give lists, run inside functions
/// (compiled lists are buffers that never leave compiled code): each op's
/// cases call a function that uses it, with indices in range and out of
/// it (both sides fail alike).
void addListCases(CaseTable &table) {
  auto call = [](const char *f, Tensor x, int index, const char *tout) {
    Case c = node("PartitionedCall", {arg(x), arg(scalar(kInt32, index))},
                  {{"f", f}, {"Tout", tout}});
    c.withFunctions = true;
    return c;
  };
  Tensor rows = randomTensor(kFloat, {4, 2});
  for (const char *op :
       {"TensorListReserve", "TensorListFromTensor", "TensorListGetItem",
        "TensorListSetItem", "TensorListStack", "TensorListLength",
        "TensorListElementShape"})
    for (int index : {0, 2, 3})
      table[op].push_back(call("lists_fixed", rows, index,
                               "[DT_FLOAT, DT_FLOAT, DT_INT32, DT_INT32]"));
  for (const char *op :
       {"EmptyTensorList", "TensorListPushBack", "TensorListPopBack"})
    for (int index : {0, 3, -1})
      table[op].push_back(
          call("lists_growing", rows, index, "[DT_FLOAT, DT_INT32]"));
}

/// TensorFlow's random ops: both sides run the generator of
/// cleave/Support/Philox.h, so they agree bit for bit, and a stateful node
/// leaves its place in its stream ("node:random_state") where both agree.
void addRandomCases(CaseTable &table) {
  Tensor drawnBefore(kUInt64, {});
  drawnBefore.data<uint64_t>()[0] = 1000;
  for (const char *op :
       {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"})
    for (const char *dtype : {"DT_FLOAT", "DT_DOUBLE"}) {
      Attrs attrs = {
          {"dtype", dtype}, {"T", "DT_INT32"}, {"seed", "1"}, {"seed2", "2"}};
      table[op].push_back(node(op, {arg(i32s({3, 5}))}, attrs));
      // Enough groups to be split among threads, an odd count, none.
      table[op].push_back(node(op, {arg(i32s({256, 161}))}, attrs));
      table[op].push_back(node(op, {arg(vec(kInt64, {0, 3}))},
                               {{"dtype", dtype}, {"T", "DT_INT64"}}));
      // Unseeded, and moved on by earlier runs.
      table[op].push_back(withVariables(
          node(op, {arg(i32s({7}))}, {{"dtype", dtype}, {"T", "DT_INT32"}}),
          {{"node:random_state", drawnBefore}}));
    }
  for (const char *dtype : {"DT_INT32", "DT_INT64"}) {
    int32_t t = std::string(dtype) == "DT_INT32" ? kInt32 : kInt64;
    Attrs attrs = {
        {"Tout", dtype}, {"T", "DT_INT32"}, {"seed", "3"}, {"seed2", "4"}};
    table["RandomUniformInt"].push_back(node(
        "RandomUniformInt",
        {arg(i32s({4, 9})), arg(scalar(t, -100)), arg(scalar(t, 250))}, attrs));
    table["RandomUniformInt"].push_back(
        node("RandomUniformInt",
             {arg(i32s({4})), arg(scalar(t, 5)), arg(scalar(t, 5))}, attrs));
  }

  Tensor seed = vec(kInt64, {7, -3});
  Tensor key = vec(kUInt64, {12345});
  Tensor counter = vec(kUInt64, {3, 4});
  for (const char *v1 : {"StatelessRandomUniform", "StatelessRandomNormal",
                         "StatelessTruncatedNormal"}) {
    table[v1].push_back(node(v1, {arg(i32s({6, 5})), arg(seed)},
                             {{"dtype", "DT_DOUBLE"}, {"Tseed", "DT_INT64"}}));
    table[v1].push_back(node(v1, {arg(i32s({100, 50})), arg(i32s({1, 2}))},
                             {{"dtype", "DT_FLOAT"}, {"Tseed", "DT_INT32"}}));
    table[v1].push_back(node(v1, {arg(i32s({3})), arg(i32s({1, 2, 3}))},
                             {{"Tseed", "DT_INT32"}}));
    std::string v2 = std::string(v1) + "V2";
    table[v2].push_back(node(
        v2, {arg(i32s({6, 5})), arg(key), arg(counter), arg(scalar(kInt32, 1))},
        {{"dtype", "DT_FLOAT"}}));
    table[v2].push_back(node(
        v2,
        {arg(i32s({100, 50})), arg(key), arg(counter), arg(scalar(kInt32, 3))},
        {{"dtype", "DT_DOUBLE"}}));
    table[v2].push_back(node(
        v2, {arg(i32s({2})), arg(key), arg(counter), arg(scalar(kInt32, 2))}));
  }
  table["StatelessRandomUniformInt"].push_back(
      node("StatelessRandomUniformInt",
           {arg(i32s({5, 4})), arg(seed), arg(scalar(kInt64, -7)),
            arg(scalar(kInt64, 1))},
           {{"dtype", "DT_INT64"}, {"Tseed", "DT_INT64"}}));
  table["StatelessRandomUniformInt"].push_back(
      node("StatelessRandomUniformInt",
           {arg(i32s({5})), arg(seed), arg(scalar(kInt32, 3)),
            arg(scalar(kInt32, 2))},
           {{"dtype", "DT_INT32"}, {"Tseed", "DT_INT64"}}));
  for (int32_t t : {kInt32, kInt64, kUInt32, kUInt64})
    table["StatelessRandomUniformIntV2"].push_back(
        node("StatelessRandomUniformIntV2",
             {arg(i32s({5, 7})), arg(key), arg(counter), arg(scalar(kInt32, 1)),
              arg(scalar(t, 2)), arg(scalar(t, 90))},
             {{"dtype", "DT_" + StringRef(dtypeName(t)).upper()}}));
  for (const char *op :
       {"StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"}) {
    table[op].push_back(node(op, {arg(seed)}, {{"Tseed", "DT_INT64"}}));
    table[op].push_back(
        node(op, {arg(i32s({-1, 9}))}, {{"Tseed", "DT_INT32"}}));
  }
  table["StatelessRandomGetAlg"].push_back(node("StatelessRandomGetAlg", {}));
}

/// Lowered ops that only run with a host side answering them: lit tests
/// run them compiled and interpreted (test/Runtime/replicated-run.test;
/// the infeed: test/Estimator, whose device steps dequeue it compiled).
constexpr const char *kRunWithAHost[] = {"XlaRecvFromHost", "InfeedDequeue",
                                         "InfeedDequeueTuple"};

/// Every case, by op: the table's where it has some, else the generic
/// generator's. Built once, so the random values are the same in every
/// test.
const std::map<std::string, std::vector<Case>> &allCases() {
  static const auto *cases = [] {
    auto *table = new CaseTable();
    addMathCases(*table);
    addArrayCases(*table);
    addNNCases(*table);
    addStateCases(*table);
    addControlFlowCases(*table);
    addScanCases(*table);
    addRandomCases(*table);
    addListCases(*table);
    for (StringRef op : conversion::getCPULoweredOps())
      if (!table->count(op.str()) && !llvm::is_contained(kRunWithAHost, op))
        if (const ops::OpSpec *spec = ops::lookupOp(op)) {
          // Reseeded before the cases draw their inputs.
          std::vector<Case> &cases = (*table)[op.str()];
          cases = genericCases(*spec);
        }
    return table;
  }();
  return *cases;
}

//===----------------------------------------------------------------------===//
// Running a case
//===----------------------------------------------------------------------===//

/// An attr of `spec` from its REGISTER_OP text.
FailureOr<NamedAttribute> makeAttr(MLIRContext *ctx, StringRef op,
                                   StringRef name, StringRef text) {
  const ops::OpSpec *spec = ops::lookupOp(op);
  const ops::AttrSpec *attrSpec = spec ? spec->findAttr(name) : nullptr;
  if (!attrSpec)
    return failure();
  // Functions by name: "f", or "[f, g]" for a list.
  auto function = [&](StringRef callee) -> Attribute {
    return graph::FuncAttr::get(ctx, FlatSymbolRefAttr::get(ctx, callee.trim()),
                                DictionaryAttr::get(ctx));
  };
  if (attrSpec->type == "func")
    return NamedAttribute(StringAttr::get(ctx, name), function(text));
  if (attrSpec->type == "list(func)") {
    SmallVector<StringRef> names;
    text.trim("[]").split(names, ',');
    SmallVector<Attribute> functions;
    for (StringRef callee : names)
      functions.push_back(function(callee));
    return NamedAttribute(StringAttr::get(ctx, name),
                          ArrayAttr::get(ctx, functions));
  }
  ops::AttrSpec withValue = *attrSpec;
  withValue.defaultValue = text.str();
  Attribute attr = getDefaultAttr(withValue, ctx);
  if (!attr)
    return failure();
  return NamedAttribute(StringAttr::get(ctx, name), attr);
}

Attribute tensorAttr(MLIRContext *ctx, const Tensor &value) {
  Type element = graph::dataTypeToType(ctx, value.dtype());
  auto type = RankedTensorType::get(value.shape(), element);
  DenseElementsAttr dense;
  if (value.dtype() == kBool)
    dense = DenseElementsAttr::get(
        type, ArrayRef<bool>(value.data<bool>(), value.numElements()));
  else
    dense = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(value.raw(), value.byteSize()));
  return graph::TensorAttr::get(
      ctx, element, graph::ShapeAttr::get(ctx, value.shape(), false, {}), dense,
      graph::TensorAttr::kTensorContent, {});
}

/// What one run produced.
struct Outcome {
  bool ok = false;
  std::vector<Tensor> results;
  std::map<std::string, Tensor> variables;
  std::string diagnostics;
};

/// The module for a case: `graph.func @f` over the case's tensor inputs
/// whose body is the node (its variable inputs as VariableV2 or VarHandleOp
/// nodes), returning every data output (a resource output read).
class CaseModule {
public:
  CaseModule(const Case &c) : c(c) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadDialect<graph::GraphDialect>();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return success();
        });
    if (c.withFunctions) {
      tensorflow::GraphDef library;
      if (google::protobuf::TextFormat::ParseFromString(kFunctions, &library))
        module = importGraphDef(library, &context);
    } else {
      module = ModuleOp::create(UnknownLoc::get(&context));
    }
    if (module)
      build();
  }

  FailureOr<graph::FuncOp> func = failure();
  std::vector<Tensor> args;
  std::string diagnostics;
  MLIRContext context{MLIRContext::Threading::DISABLED};
  OwningOpRef<ModuleOp> module;

  Outcome run(bool compiled, const cpu::CPUPipelineOptions &options = {}) {
    diagnostics.clear();
    State state;
    for (const auto &[name, value] : c.variables)
      state.variables[name] = value;
    Outcome outcome;
    FailureOr<std::vector<Tensor>> results = failure();
    if (compiled) {
      // Strict: a case that does not compile must fail, not fall back to
      // the interpreter.
      runtime::CPUClusterRunner runner;
      runner.setStrict(true);
      runner.setPipelineOptions(options);
      Executor interpreter(*module);
      interpreter.getState() = state;
      auto compiledResults = runner.call(interpreter, *func, *func, args);
      if (succeeded(compiledResults) && *compiledResults)
        results = std::move(**compiledResults);
      state = interpreter.getState();
    } else {
      Executor interpreter(*module);
      interpreter.getState() = state;
      results = interpreter.call(func->getSymName(), args, DictionaryAttr(),
                                 *func);
      state = interpreter.getState();
    }
    outcome.ok = succeeded(results);
    if (outcome.ok)
      outcome.results = *results;
    for (const auto &entry : state.variables)
      outcome.variables[entry.getKey().str()] = entry.getValue();
    outcome.diagnostics = diagnostics;
    return outcome;
  }

private:
  void build() {
    MLIRContext *ctx = &context;
    const ops::OpSpec *spec = ops::lookupOp(c.op);
    Location loc = UnknownLoc::get(ctx);
    SmallVector<Type> argTypes;
    for (const Input &in : c.inputs)
      if (in.variable.empty()) {
        argTypes.push_back(graph::getTensorType(
            graph::dataTypeToType(ctx, in.value.dtype())));
        args.push_back(in.value);
      }
    // The dtype and shape of a variable the case does not set: those of
    // the value assigned to it.
    Tensor unset(kFloat, {});
    for (const Input &in : c.inputs)
      if (in.variable.empty()) {
        unset = in.value;
        break;
      }
    func = graph::buildLibraryFunction(
        *module, "f", argTypes,
        [&](OpBuilder &b, ArrayRef<Value> fargs) -> FailureOr<SmallVector<Value>> {
          std::string error;
          auto create = [&](StringRef op, StringRef name, ValueRange inputs,
                            const Attrs &attrs, Attribute value = {})
              -> FailureOr<graph::NodeOp> {
            SmallVector<NamedAttribute> named;
            for (const auto &[attrName, text] : attrs) {
              FailureOr<NamedAttribute> attr = makeAttr(ctx, op, attrName, text);
              if (failed(attr))
                return emitError(loc) << "bad attr " << attrName << " = " << text,
                       failure();
              named.push_back(*attr);
            }
            if (value)
              named.push_back(NamedAttribute(StringAttr::get(ctx, "value"), value));
            FailureOr<graph::NodeOp> n = createRegisteredNode(
                b, loc, op, name, inputs, {}, named, "", error);
            if (failed(n))
              emitError(loc) << error;
            return n;
          };
          SmallVector<Value> inputs;
          unsigned next = 0;
          for (auto [i, in] : llvm::enumerate(c.inputs)) {
            if (in.variable.empty()) {
              inputs.push_back(fargs[next++]);
              continue;
            }
            auto it = c.variables.find(in.variable);
            Tensor initial = it != c.variables.end() ? it->second : unset;
            // Variable ops take no list arguments: inputs are the spec's.
            bool resource = i < spec->inputs.size() &&
                            spec->inputs[i].fixedType == kResource;
            FailureOr<graph::NodeOp> v = create(
                resource ? "VarHandleOp" : "VariableV2", in.variable + "_node",
                {}, {{"dtype", dtypeEnum(initial.dtype())},
                     {"shape", dimsText(initial.shape())},
                     {"shared_name", "'" + in.variable + "'"}});
            if (failed(v))
              return failure();
            inputs.push_back(v->getOutputs()[0]);
          }
          FailureOr<graph::NodeOp> n =
              create(c.op, "node", inputs, c.attrs,
                     c.value ? tensorAttr(ctx, *c.value) : Attribute());
          if (failed(n))
            return failure();
          SmallVector<Value> results;
          for (Value out : n->getOutputs()) {
            Type element = cast<TensorType>(out.getType()).getElementType();
            if (graph::typeToDataType(element) != kResource) {
              results.push_back(out);
              continue;
            }
            FailureOr<graph::NodeOp> read =
                create("ReadVariableOp", "read", {out},
                       {{"dtype", dtypeEnum(c.variables.begin()->second.dtype())}});
            if (failed(read))
              return failure();
            results.push_back(read->getOutputs()[0]);
          }
          return results;
        },
        loc);
  }

  const Case &c;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
};

std::string describe(const Case &c) {
  std::string text = c.op;
  for (const auto &[name, value] : c.attrs)
    text += " " + name + "=" + value;
  for (const Input &in : c.inputs)
    text += "\n  input: " +
            (in.variable.empty() ? in.value.toString() : "variable " + in.variable);
  for (const auto &[name, value] : c.variables)
    text += "\n  variable " + name + ": " + value.toString();
  return text;
}

/// Float32 results: the interpreter often computes in double and rounds
/// once; compiled code computes in float32. `magnitude` is the sum of the
/// terms' magnitudes where the element is a sum (a contraction whose terms
/// may cancel: its rounding error scales with them, not with the result),
/// else 0.
bool closeEnough(double expected, double actual, int32_t dtype,
                 double magnitude = 0) {
  if (std::isnan(expected) || std::isnan(actual))
    return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual))
    return expected == actual;
  double rtol = dtype == kFloat ? 1e-5 : 1e-10;
  double atol = dtype == kFloat ? 1e-6 : 1e-12;
  return std::fabs(expected - actual) <=
         atol + rtol * std::max({std::fabs(expected), std::fabs(actual),
                                 std::fabs(magnitude)});
}

/// Ops whose results are sums of products of their float inputs: run on
/// the inputs' absolute values, they give each element's sum of term
/// magnitudes, which bounds its rounding error.
constexpr const char *kContractions[] = {"MatMul",
                                         "BatchMatMul",
                                         "BatchMatMulV2",
                                         "BatchMatMulV3",
                                         "Conv2D",
                                         "Conv2DBackpropInput",
                                         "Conv2DBackpropFilter",
                                         "DepthwiseConv2dNative",
                                         "Sum",
                                         "Mean",
                                         "BiasAddGrad",
                                         "Cumsum",
                                         "AvgPool",
                                         "AvgPoolGrad",
                                         "Conv3DBackpropInputV2",
                                         "Conv3DBackpropFilterV2",
                                         "AvgPool3DGrad",
                                         "UnsortedSegmentSum",
                                         "L2Loss",
                                         "AddN",
                                         "Einsum",
                                         "SegmentSum",
                                         "SegmentMean",
                                         "TensorScatterAdd",
                                         "LRN",
                                         "LRNGrad",
                                         "ResizeBilinearGrad"};

/// The case with every float input and variable replaced by its absolute
/// value.
Case withMagnitudes(Case c) {
  auto makeAbsolute = [](Tensor &t) {
    if (!t.isValid() || !isFloat(t.dtype()))
      return;
    Tensor copy(t.dtype(), t.shape());
    for (int64_t i = 0; i < t.numElements(); ++i)
      copy.setFromDouble(i, std::fabs(t.getAsDouble(i)));
    t = copy;
  };
  for (Input &in : c.inputs)
    makeAbsolute(in.value);
  for (auto &[name, value] : c.variables)
    makeAbsolute(value);
  return c;
}

/// An empty string when `actual` matches `expected`, else what differs;
/// `magnitudes`, where valid, holds each element's sum of term magnitudes.
std::string compareTensors(const Tensor &expected, const Tensor &actual,
                           const Tensor &magnitudes = Tensor()) {
  if (!expected.isValid() || !actual.isValid())
    return expected.isValid() == actual.isValid() ? "" : "one is invalid";
  if (expected.dtype() != actual.dtype())
    return "dtype " + dtypeName(actual.dtype()) + ", expected " +
           dtypeName(expected.dtype());
  if (expected.shape() != actual.shape())
    return "shape " + shapeString(actual.shape()) + ", expected " +
           shapeString(expected.shape());
  std::string report;
  int mismatches = 0;
  int32_t dtype = expected.dtype();
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    bool same;
    if (isFloat(dtype))
      same = closeEnough(expected.getAsDouble(i), actual.getAsDouble(i), dtype,
                         magnitudes.isValid() &&
                                 magnitudes.shape() == expected.shape()
                             ? magnitudes.getAsDouble(i)
                             : 0);
    else
      same = expected.getAsInt(i) == actual.getAsInt(i);
    if (!same && mismatches++ < 4)
      report += "\n    element " + std::to_string(i) + ": " +
                std::to_string(actual.getAsDouble(i)) + ", expected " +
                std::to_string(expected.getAsDouble(i));
  }
  if (!mismatches)
    return "";
  return std::to_string(mismatches) + " element(s) differ:" + report +
         "\n    compiled: " + actual.toString() +
         "\n    expected: " + expected.toString();
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

/// Runs one case both ways and compares.
void checkCase(const Case &c, const cpu::CPUPipelineOptions &options = {}) {
  CaseModule m(c);
  ASSERT_TRUE(succeeded(m.func)) << m.diagnostics;
  Outcome expected = m.run(/*compiled=*/false);
  Outcome actual = m.run(/*compiled=*/true, options);
  if (!expected.ok) {
    // Error cases are meant: compiled code must fail as well.
    EXPECT_FALSE(actual.ok) << "the interpreter failed:\n"
                            << expected.diagnostics
                            << "but compiled code ran";
    return;
  }
  ASSERT_TRUE(actual.ok) << "compiled code failed:\n" << actual.diagnostics;
  ASSERT_EQ(actual.results.size(), expected.results.size());
  std::vector<Tensor> magnitudes(expected.results.size());
  if (llvm::is_contained(kContractions, c.op)) {
    Case absoluteCase = withMagnitudes(c);
    CaseModule absolute(absoluteCase);
    Outcome bound = absolute.run(/*compiled=*/false);
    if (bound.ok && bound.results.size() == magnitudes.size())
      magnitudes = bound.results;
  }
  for (size_t i = 0; i < expected.results.size(); ++i) {
    std::string difference =
        compareTensors(expected.results[i], actual.results[i], magnitudes[i]);
    EXPECT_TRUE(difference.empty()) << "output " << i << ": " << difference;
  }
  for (const auto &[name, value] : expected.variables) {
    auto it = actual.variables.find(name);
    ASSERT_TRUE(it != actual.variables.end()) << "variable " << name;
    std::string difference = compareTensors(value, it->second);
    EXPECT_TRUE(difference.empty()) << "variable " << name << ": " << difference;
  }
  EXPECT_EQ(actual.variables.size(), expected.variables.size());
}

std::vector<std::string> opsWithCases() {
  std::vector<std::string> ops;
  for (const auto &entry : allCases())
    ops.push_back(entry.first);
  return ops;
}

/// One test per op (one process each under ctest), over all its cases.
class CompiledOpsTest : public ::testing::TestWithParam<std::string> {};

/// Every case of `op`, compiled with `options`.
void checkCases(const std::string &op,
                const cpu::CPUPipelineOptions &options = {}) {
  for (auto [i, c] : llvm::enumerate(allCases().at(op))) {
    SCOPED_TRACE("case " + std::to_string(i) + ": " + describe(c));
    checkCase(c, options);
  }
}

TEST_P(CompiledOpsTest, MatchesInterpreter) { checkCases(GetParam()); }

/// The same with every loop nest that can run on several threads doing so
/// (OpenMP), however small: the cases are far below the pipeline's size
/// threshold.
TEST_P(CompiledOpsTest, MatchesInterpreterOnThreads) {
  cpu::CPUPipelineOptions everyLoopParallel;
  everyLoopParallel.parallelMinIterations = 1;
  checkCases(GetParam(), everyLoopParallel);
}

INSTANTIATE_TEST_SUITE_P(
    CompiledOps, CompiledOpsTest, ::testing::ValuesIn(opsWithCases()),
    [](const ::testing::TestParamInfo<std::string> &info) {
      return info.param;
    });

/// A new lowered op must come with a case the interpreter runs: the
/// generic generator covers ops of tensors alone, the table the rest.
TEST(CompiledOpsCoverage, EveryLoweredOpHasACaseThatRuns) {
  const auto &cases = allCases();
  for (StringRef op : conversion::getCPULoweredOps()) {
    if (llvm::is_contained(kRunWithAHost, op))
      continue;
    auto it = cases.find(op.str());
    bool runs = false;
    if (it != cases.end())
      for (const Case &c : it->second) {
        CaseModule m(c);
        if (succeeded(m.func) && m.run(/*compiled=*/false).ok) {
          runs = true;
          break;
        }
      }
    EXPECT_TRUE(runs) << "op '" << op.str()
                      << "' lowers to the CPU but no case of CompiledOpsTest "
                         "runs it on the interpreter: add one to the table";
  }
}

} // namespace
