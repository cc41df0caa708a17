//===- MathOps.cpp - math op signatures -----------------------------------===//
//
// Ops from TensorFlow's math_ops.cc: element-wise arithmetic, comparisons,
// reductions, matrix products, casts and the unary gradient helpers.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

#include "cleave/Ops/Einsum.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace cleave::ops;
using namespace cleave::ops::detail;

// The type lists behind math_ops.cc's UNARY/BINARY macros.
static constexpr const char *kUnaryT =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64, "
    "complex64, complex128}";
static constexpr const char *kUnaryRealT = "T: {bfloat16, half, float, double}";
static constexpr const char *kUnaryComplexT =
    "T: {bfloat16, half, float, double, complex64, complex128}";
static constexpr const char *kBinaryMoreT =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
static constexpr const char *kMinMaxT =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
    "uint32, int64, uint64}";
static constexpr const char *kReductionIndicesT =
    "Tidx: {int32, int64} = DT_INT32";

static OpTableEntry unary(const char *name, const char *typeAttr) {
  return {name, {"x: T"}, {"y: T"}, {typeAttr}};
}

static OpTableEntry binary(const char *name, const char *typeAttr) {
  return {name, {"x: T", "y: T"}, {"z: T"}, {typeAttr}};
}

static OpTableEntry comparison(const char *name) {
  return {name, {"x: T", "y: T"}, {"z: bool"}, {"T: realnumbertype"}};
}

static OpTableEntry equality(const char *name) {
  return {name,
          {"x: T", "y: T"},
          {"z: bool"},
          {"T: type", "incompatible_shape_error: bool = true"}};
}

static OpTableEntry reduction(const char *name, const char *typeAttr) {
  return {name,
          {"input: T", "reduction_indices: Tidx"},
          {"output: T"},
          {"keep_dims: bool = false", typeAttr, kReductionIndicesT}};
}

// SigmoidGrad and friends: gradient of y = f(x) given y and dy.
static OpTableEntry unaryGrad(const char *name) {
  return {name, {"y: T", "dy: T"}, {"z: T"}, {kUnaryComplexT}};
}

OpTable cleave::ops::detail::getMathOps() {
  return {
      // Binary arithmetic.
      {"AddN",
       {"inputs: N * T"},
       {"sum: T"},
       {"N: int >= 1", "T: {numbertype, variant}"}},
      binary("Add", "T: {bfloat16, half, float, double, uint8, int8, int16, "
                    "int32, int64, complex64, complex128, string}"),
      binary("AddV2", "T: {bfloat16, half, float, double, uint8, uint16, "
                      "uint32, uint64, int8, int16, int32, int64, "
                      "complex64, complex128}"),
      binary("Sub", kBinaryMoreT),
      binary("Mul", kBinaryMoreT),
      binary("Div", kBinaryMoreT),
      binary("RealDiv", kBinaryMoreT),
      binary("FloorDiv", kBinaryMoreT),
      binary("DivNoNan",
             "T: {half, float, bfloat16, double, complex64, complex128}"),
      binary("MulNoNan",
             "T: {bfloat16, half, float, double, complex64, complex128}"),
      binary("FloorMod", "T: {int8, int16, int32, int64, uint8, uint16, "
                         "uint32, uint64, bfloat16, half, float, double}"),
      binary("TruncateDiv", kBinaryMoreT),
      binary("TruncateMod", "T: {int32, int64, bfloat16, half, float, double}"),
      binary("Mod", "T: {int32, int64, half, bfloat16, float, double}"),
      binary("Maximum", kMinMaxT),
      binary("Minimum", kMinMaxT),
      binary("SquaredDifference", "T: {bfloat16, half, float, double, int32, "
                                  "int64, complex64, complex128}"),
      binary("Pow", "T: {bfloat16, float, half, double, int8, int16, int32, "
                    "int64, complex64, complex128}"),

      // Unary arithmetic.
      unary("Neg", kUnaryT),
      unary("Square", "T: {bfloat16, half, float, double, int8, int16, "
                      "int32, int64, uint8, uint16, uint32, uint64, "
                      "complex64, complex128}"),
      unary("Abs", "T: {bfloat16, half, float, double, int8, int16, int32, "
                   "int64}"),
      unary("Sign", kUnaryT),
      unary("Sqrt", kUnaryComplexT),
      unary("Rsqrt", kUnaryComplexT),
      unary("Reciprocal", kUnaryT),
      unary("Exp", kUnaryComplexT),
      unary("Log", kUnaryComplexT),
      unary("Log1p", kUnaryComplexT),
      unary("Sigmoid", kUnaryComplexT),
      unary("Tanh", kUnaryComplexT),
      unary("Floor", kUnaryRealT),
      unary("Ceil", kUnaryRealT),
      unary("Rint", kUnaryRealT),
      unary("Round", kUnaryT),
      unary("Expm1", kUnaryComplexT),
      unary("Erf", kUnaryRealT),
      unary("Erfc", kUnaryRealT),
      unary("Lgamma", kUnaryRealT),
      unary("Digamma", kUnaryRealT),
      {"Zeta", {"x: T", "q: T"}, {"z: T"}, {"T: {float, double}"}},
      {"Polygamma", {"a: T", "x: T"}, {"z: T"}, {"T: {float, double}"}},
      // Trigonometric and hyperbolic.
      unary("Sin", kUnaryComplexT),
      unary("Cos", kUnaryComplexT),
      unary("Tan", kUnaryT),
      unary("Asin", kUnaryT),
      unary("Acos", kUnaryT),
      unary("Atan", kUnaryT),
      unary("Sinh", kUnaryComplexT),
      unary("Cosh", kUnaryComplexT),
      unary("Asinh", kUnaryComplexT),
      unary("Acosh", kUnaryComplexT),
      unary("Atanh", kUnaryComplexT),
      {"Atan2", {"y: T", "x: T"}, {"z: T"}, {kUnaryRealT}},
      // Classification.
      {"IsNan", {"x: T"}, {"y: bool"}, {kUnaryRealT}},
      {"IsInf", {"x: T"}, {"y: bool"}, {kUnaryRealT}},
      {"IsFinite", {"x: T"}, {"y: bool"}, {kUnaryRealT}},
      {"ClipByValue",
       {"t: T", "clip_value_min: T", "clip_value_max: T"},
       {"output: T"},
       {"T: numbertype"}},

      // Scans.
      {"Cumsum",
       {"x: T", "axis: Tidx"},
       {"out: T"},
       {"exclusive: bool = false", "reverse: bool = false", "T: numbertype",
        kReductionIndicesT}},
      {"Cumprod",
       {"x: T", "axis: Tidx"},
       {"out: T"},
       {"exclusive: bool = false", "reverse: bool = false", "T: numbertype",
        kReductionIndicesT}},
      // Gradient helpers.
      unaryGrad("SigmoidGrad"),
      unaryGrad("TanhGrad"),
      unaryGrad("RsqrtGrad"),
      unaryGrad("SqrtGrad"),
      unaryGrad("ReciprocalGrad"),

      // Comparisons and logic.
      comparison("Less"),
      comparison("LessEqual"),
      comparison("Greater"),
      comparison("GreaterEqual"),
      equality("Equal"),
      equality("NotEqual"),
      {"LogicalAnd", {"x: bool", "y: bool"}, {"z: bool"}, {}},
      {"LogicalOr", {"x: bool", "y: bool"}, {"z: bool"}, {}},
      {"LogicalNot", {"x: bool"}, {"y: bool"}, {}},
      {"Select",
       {"condition: bool", "t: T", "e: T"},
       {"output: T"},
       {"T: type"}},
      {"SelectV2",
       {"condition: bool", "t: T", "e: T"},
       {"output: T"},
       {"T: type"}},

      // Reductions.
      reduction("Sum", "T: numbertype"),
      reduction("Mean", "T: numbertype"),
      reduction("Prod", "T: numbertype"),
      reduction("Max", "T: {realnumbertype, quantizedtype}"),
      reduction("Min", "T: {realnumbertype, quantizedtype}"),
      {"All",
       {"input: bool", "reduction_indices: Tidx"},
       {"output: bool"},
       {"keep_dims: bool = false", kReductionIndicesT}},
      {"Any",
       {"input: bool", "reduction_indices: Tidx"},
       {"output: bool"},
       {"keep_dims: bool = false", kReductionIndicesT}},
      {"ArgMax",
       {"input: T", "dimension: Tidx"},
       {"output: output_type"},
       {"T: {numbertype, bool}", "Tidx: {int16, int32, int64} = DT_INT32",
        "output_type: {int16, uint16, int32, int64} = DT_INT64"}},
      {"ArgMin",
       {"input: T", "dimension: Tidx"},
       {"output: output_type"},
       {"T: {numbertype, bool}", "Tidx: {int16, int32, int64} = DT_INT32",
        "output_type: {int16, uint16, int32, int64} = DT_INT64"}},

      // Matrix products.
      {"MatMul",
       {"a: T", "b: T"},
       {"product: T"},
       {"transpose_a: bool = false", "transpose_b: bool = false",
        "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, "
        "uint32, uint64, complex64, complex128}",
        "grad_a: bool = false", "grad_b: bool = false"}},
      {"BatchMatMulV2",
       {"x: T", "y: T"},
       {"output: T"},
       {"T: {bfloat16, half, float, double, int16, int32, int64, uint8, "
        "uint16, uint32, uint64, complex64, complex128}",
        "adj_x: bool = false", "adj_y: bool = false", "grad_x: bool = false",
        "grad_y: bool = false"}},

      // Conversions and sequences.
      {"Cast",
       {"x: SrcT"},
       {"y: DstT"},
       {"SrcT: type", "DstT: type", "Truncate: bool = false"}},
      {"LinSpace",
       {"start: T", "stop: T", "num: Tidx"},
       {"output: T"},
       {"T: {bfloat16, half, float, double}",
        "Tidx: {int32, int64} = DT_INT32"}},
      {"Range",
       {"start: Tidx", "limit: Tidx", "delta: Tidx"},
       {"output: Tidx"},
       {"Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, "
        "uint16, uint32} = DT_INT32"}},
      {"SegmentSum",
       {"data: T", "segment_ids: Tindices"},
       {"output: T"},
       {"T: numbertype", "Tindices: {int32, int64}"}},
      {"SegmentMean",
       {"data: T", "segment_ids: Tindices"},
       {"output: T"},
       {"T: numbertype", "Tindices: {int32, int64}"}},
      {"SegmentProd",
       {"data: T", "segment_ids: Tindices"},
       {"output: T"},
       {"T: numbertype", "Tindices: {int32, int64}"}},
      {"SegmentMax",
       {"data: T", "segment_ids: Tindices"},
       {"output: T"},
       {"T: realnumbertype", "Tindices: {int32, int64}"}},
      {"SegmentMin",
       {"data: T", "segment_ids: Tindices"},
       {"output: T"},
       {"T: realnumbertype", "Tindices: {int32, int64}"}},
      {"Einsum",
       {"inputs: N * T"},
       {"output: T"},
       {"equation: string", "N: int >= 1", "T: type"}},
      {"Bincount",
       {"arr: int32", "size: int32", "weights: T"},
       {"bins: T"},
       {"T: {int32, int64, float, double}"}},
      {"UnsortedSegmentSum",
       {"data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"},
       {"output: T"},
       {"T: numbertype", "Tindices: {int16, int32, int64}",
        "Tnumsegments: {int32, int64} = DT_INT32"}},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// AddN: every input has the output's shape.
static std::string addNShape(InferenceContext &ctx) {
  Shape out = Shape::unknown();
  std::string error;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    auto merged = mergeShapes(out, ctx.getInputShape(i), error);
    if (!merged)
      return error;
    out = *merged;
  }
  ctx.setOutput(0, out);
  return "";
}

/// MatMul: [m, k] x [k, n] -> [m, n], with transposes.
static std::string matMulShape(InferenceContext &ctx) {
  Shape a = ctx.getInputShape(0), b = ctx.getInputShape(1);
  if (a.hasRank() && a.rank() != 2)
    return "Shape must be rank 2 but is rank " + std::to_string(a.rank());
  if (b.hasRank() && b.rank() != 2)
    return "Shape must be rank 2 but is rank " + std::to_string(b.rank());
  bool ta = ctx.getBoolAttr("transpose_a").value_or(false);
  bool tb = ctx.getBoolAttr("transpose_b").value_or(false);
  auto dim = [](const Shape &s, int64_t i) {
    return s.hasRank() ? s.dims[i] : Shape::kUnknown;
  };
  int64_t m = dim(a, ta ? 1 : 0), ka = dim(a, ta ? 0 : 1);
  int64_t kb = dim(b, tb ? 1 : 0), n = dim(b, tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb)
    return "Dimensions must be equal, but are " + std::to_string(ka) + " and " +
           std::to_string(kb);
  ctx.setOutput(0, Shape::of({m, n}));
  return "";
}

/// BatchMatMulV2: broadcast batch dims, then [m, k] x [k, n] with adjoints.
static std::string batchMatMulShape(InferenceContext &ctx) {
  Shape a = ctx.getInputShape(0), b = ctx.getInputShape(1);
  for (const Shape &s : {a, b})
    if (s.hasRank() && s.rank() < 2)
      return "Shape must be at least rank 2 but is rank " +
             std::to_string(s.rank());
  if (!a.hasRank() || !b.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  bool adjA = ctx.getBoolAttr("adj_x").value_or(false);
  bool adjB = ctx.getBoolAttr("adj_y").value_or(false);
  int64_t ra = a.rank(), rb = b.rank();
  int64_t m = a.dims[ra - (adjA ? 1 : 2)], ka = a.dims[ra - (adjA ? 2 : 1)];
  int64_t kb = b.dims[rb - (adjB ? 1 : 2)], n = b.dims[rb - (adjB ? 2 : 1)];
  if (ka >= 0 && kb >= 0 && ka != kb)
    return "Dimensions must be equal, but are " + std::to_string(ka) + " and " +
           std::to_string(kb);
  std::string error;
  auto batch =
      broadcastShapes(Shape::of(llvm::ArrayRef(a.dims).drop_back(2)),
                      Shape::of(llvm::ArrayRef(b.dims).drop_back(2)), error);
  if (!batch)
    return error;
  batch->dims.push_back(m);
  batch->dims.push_back(n);
  ctx.setOutput(0, *batch);
  return "";
}

/// ArgMax/ArgMin: the input without the reduced axis.
static std::string argReduceShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto axis = ctx.getConstantInput(1);
  if (!in.hasRank() || !axis || axis->size() != 1) {
    ctx.setOutput(0, in.hasRank() && in.rank() > 0
                         ? Shape::ofRank(in.rank() - 1)
                         : Shape::unknown());
    return "";
  }
  int64_t a = (*axis)[0];
  if (a < -in.rank() || a >= in.rank())
    return "Expected dimension in the range [" + std::to_string(-in.rank()) +
           ", " + std::to_string(in.rank()) + "), but got " + std::to_string(a);
  if (a < 0)
    a += in.rank();
  Shape out = in;
  out.dims.erase(out.dims.begin() + a);
  ctx.setOutput(0, out);
  return "";
}

/// SelectV2: broadcast of condition, then and else.
static std::string selectV2Shape(InferenceContext &ctx) {
  std::string error;
  auto te = broadcastShapes(ctx.getInputShape(1), ctx.getInputShape(2), error);
  if (!te)
    return error;
  auto out = broadcastShapes(ctx.getInputShape(0), *te, error);
  if (!out)
    return error;
  ctx.setOutput(0, *out);
  return "";
}

/// Select: then and else have one shape; the condition matches it or is
/// a vector over its first dimension.
static std::string selectShape(InferenceContext &ctx) {
  std::string error;
  auto out = mergeShapes(ctx.getInputShape(1), ctx.getInputShape(2), error);
  if (!out)
    return error;
  ctx.setOutput(0, *out);
  return "";
}

/// Range: a vector whose length follows from constant bounds.
static std::string rangeShape(InferenceContext &ctx) {
  auto start = ctx.getConstantScalar(0), limit = ctx.getConstantScalar(1),
       delta = ctx.getConstantScalar(2);
  if (start && limit && delta) {
    double s = *start, l = *limit, d = *delta;
    // As StrCat prints numbers: 1, not 1.000000.
    auto text = [](double v) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%g", v);
      return std::string(buffer);
    };
    if (d == 0)
      return "Requires delta != 0: " + text(d);
    if (d > 0 && s > l)
      return "Requires start <= limit when delta > 0: " + text(s) + "/" +
             text(l);
    if (d < 0 && s < l)
      return "Requires start >= limit when delta < 0: " + text(s) + "/" +
             text(l);
    // The length as TensorFlow's RangeSize<T> computes it, in the type:
    // integers exactly, float32 in float (its rounding can add an element).
    int32_t type = ctx.getTypeAttr("Tidx").value_or(3 /*int32*/);
    int64_t size;
    if (type == 1 /*float*/) {
      float fs = float(s), fl = float(l), fd = float(d);
      size = int64_t(std::ceil(std::fabs((fl - fs) / fd)));
    } else if (type == 2 /*double*/) {
      size = int64_t(std::ceil(std::fabs((l - s) / d)));
    } else {
      int64_t is = int64_t(s), il = int64_t(l), id = int64_t(d);
      int64_t span = il > is ? il - is : is - il, step = id > 0 ? id : -id;
      size = (span + step - 1) / step;
    }
    ctx.setOutput(0, Shape::of({size}));
    return "";
  }
  ctx.setOutput(0, Shape::ofRank(1));
  return "";
}

/// LinSpace: [num] for scalar start, stop and num.
static std::string linSpaceShape(InferenceContext &ctx) {
  for (unsigned i = 0; i < 3; ++i) {
    Shape s = ctx.getInputShape(i);
    if (s.hasRank() && s.rank() != 0)
      return "Shape must be rank 0 but is rank " + std::to_string(s.rank());
  }
  if (auto num = ctx.getConstantInput(2); num && num->size() == 1) {
    if ((*num)[0] <= 0)
      return "Requires num > 0: " + std::to_string((*num)[0]);
    ctx.setOutput(0, Shape::of({(*num)[0]}));
    return "";
  }
  ctx.setOutput(0, Shape::ofRank(1));
  return "";
}

/// [num_segments] + data.shape[rank(segment_ids):].
std::string unsortedSegmentSumShape(InferenceContext &ctx) {
  Shape data = ctx.getInputShape(0), ids = ctx.getInputShape(1);
  if (!data.hasRank() || !ids.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  if (ids.rank() > data.rank())
    return "Shape must be at least rank " + std::to_string(ids.rank()) +
           " but is rank " + std::to_string(data.rank());
  auto n = ctx.getConstantInput(2);
  Shape out = Shape::of({n && n->size() == 1 ? (*n)[0] : Shape::kUnknown});
  out.dims.append(data.dims.begin() + ids.rank(), data.dims.end());
  ctx.setOutput(0, out);
  return "";
}

/// SegmentSum and friends: [segments] + data.shape[1:], the segments one
/// past the last (sorted) id where the ids are constant.
static std::string segmentReductionShape(InferenceContext &ctx) {
  Shape data = ctx.getInputShape(0), ids = ctx.getInputShape(1);
  if (data.hasRank() && data.rank() < 1)
    return "Shape must be at least rank 1 but is rank 0";
  if (ids.hasRank() && ids.rank() != 1)
    return "Shape must be rank 1 but is rank " + std::to_string(ids.rank());
  if (data.hasRank() && ids.hasRank() && data.dims[0] != Shape::kUnknown &&
      ids.dims[0] != Shape::kUnknown && data.dims[0] != ids.dims[0])
    return "Dimensions must be equal, but are " + std::to_string(data.dims[0]) +
           " and " + std::to_string(ids.dims[0]);
  if (!data.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t segments = Shape::kUnknown;
  if (auto values = ctx.getConstantInput(1))
    segments = values->empty() ? 0 : std::max<int64_t>(values->back() + 1, 0);
  Shape out = Shape::of({segments});
  out.dims.append(data.dims.begin() + 1, data.dims.end());
  ctx.setOutput(0, out);
  return "";
}

/// Einsum: the output's labels' sizes (cleave/Ops/Einsum.h).
static std::string einsumShape(InferenceContext &ctx) {
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    Shape shape = ctx.getInputShape(i);
    if (!shape.hasRank()) {
      ctx.setOutput(0, Shape::unknown());
      return "";
    }
    shapes.emplace_back(shape.dims.begin(), shape.dims.end());
  }
  EinsumPlan plan;
  if (std::string error =
          planEinsum(ctx.getStringAttr("equation").value_or(""), shapes, plan);
      !error.empty())
    return error;
  ctx.setOutput(0, Shape::of(plan.outputShape()));
  return "";
}

/// Bincount: [size], size a scalar.
static std::string bincountShape(InferenceContext &ctx) {
  Shape size = ctx.getInputShape(1);
  if (size.hasRank() && size.rank() != 0)
    return "Shape must be rank 0 but is rank " + std::to_string(size.rank());
  int64_t bins = Shape::kUnknown;
  if (auto value = ctx.getConstantInput(1)) {
    if (value->size() == 1) {
      bins = (*value)[0];
      if (bins < 0)
        return "size (" + std::to_string(bins) + ") must be non-negative";
    }
  }
  ctx.setOutput(0, Shape::of({bins}));
  return "";
}

detail::ShapeFnTable cleave::ops::detail::getMathShapeFns() {
  ShapeFnTable table = {
      {"AddN", addNShape},
      {"MatMul", matMulShape},
      {"BatchMatMulV2", batchMatMulShape},
      {"ArgMax", argReduceShape},
      {"ArgMin", argReduceShape},
      {"Select", selectShape},
      {"SelectV2", selectV2Shape},
      {"Range", rangeShape},
      {"LinSpace", linSpaceShape},
      {"UnsortedSegmentSum", unsortedSegmentSumShape},
      {"Bincount", bincountShape},
      {"Einsum", einsumShape},
      {"SegmentSum", segmentReductionShape},
      {"SegmentMean", segmentReductionShape},
      {"SegmentProd", segmentReductionShape},
      {"SegmentMax", segmentReductionShape},
      {"SegmentMin", segmentReductionShape},
      {"Cast", shapes::unchanged},
      {"ClipByValue", shapes::unchanged},
  };
  for (const char *op :
       {"Add",        "AddV2",        "Sub",         "Mul",
        "Div",        "RealDiv",      "FloorDiv",    "DivNoNan",
        "MulNoNan",   "FloorMod",     "TruncateDiv", "TruncateMod",
        "Mod",        "Maximum",      "Minimum",     "SquaredDifference",
        "Pow",        "Atan2",        "Less",        "LessEqual",
        "Greater",    "GreaterEqual", "Equal",       "NotEqual",
        "LogicalAnd", "LogicalOr",    "Zeta",        "Polygamma"})
    table.push_back({op, shapes::broadcastBinary});
  for (const char *op : {"Neg",
                         "Square",
                         "Abs",
                         "Sign",
                         "Sqrt",
                         "Rsqrt",
                         "Reciprocal",
                         "Exp",
                         "Log",
                         "Log1p",
                         "Sigmoid",
                         "Tanh",
                         "Floor",
                         "Ceil",
                         "Rint",
                         "Round",
                         "Expm1",
                         "Erf",
                         "Erfc",
                         "Lgamma",
                         "Digamma",
                         "Sin",
                         "Cos",
                         "Tan",
                         "Asin",
                         "Acos",
                         "Atan",
                         "Sinh",
                         "Cosh",
                         "Asinh",
                         "Acosh",
                         "Atanh",
                         "IsNan",
                         "IsInf",
                         "IsFinite",
                         "LogicalNot",
                         "SigmoidGrad",
                         "TanhGrad",
                         "RsqrtGrad",
                         "SqrtGrad",
                         "ReciprocalGrad",
                         "Cumsum",
                         "Cumprod"})
    table.push_back({op, shapes::unchanged});
  for (const char *op : {"Sum", "Mean", "Prod", "Max", "Min", "All", "Any"})
    table.push_back({op, shapes::reduction});
  return table;
}

//===----------------------------------------------------------------------===//
// Gradients (math_grad.py), in TensorFlow's node order and names
//===----------------------------------------------------------------------===//

namespace {
using grads::broadcastArgs;
using grads::sumToShape;
} // namespace

static std::string identityGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.getOutputGrad(0));
  return "";
}

static std::string addGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  auto b = broadcastArgs(ctx);
  ctx.setInputGrad(0, sumToShape(ctx, grad, b.rx, b.sx));
  ctx.setInputGrad(1, sumToShape(ctx, grad, b.ry, b.sy));
  return "";
}

static std::string subGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  auto b = broadcastArgs(ctx);
  ctx.setInputGrad(0, sumToShape(ctx, grad, b.rx, b.sx));
  GradTensor sum = ctx.op("Sum", {grad, b.ry},
                          {GradAttr::boolean("keep_dims", false)}, "Sum_1");
  ctx.setInputGrad(1, ctx.op("Reshape", {ctx.op("Neg", {sum}), b.sy}));
  return "";
}

/// Mul and MulNoNan: each partial is the product (by the same op) of the
/// gradient and the other operand, reduced to the operand's shape.
template <const char *Product>
static std::string productGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setInputGrad(0, sumToShape(ctx, ctx.op(Product, {grad, y}), b.rx, b.sx));
  ctx.setInputGrad(1, sumToShape(ctx, ctx.op(Product, {x, grad}), b.ry, b.sy));
  return "";
}
static constexpr char kMul[] = "Mul";
static constexpr char kMulNoNan[] = "MulNoNan";

static std::string realDivGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setInputGrad(0,
                   sumToShape(ctx, ctx.op("RealDiv", {grad, y}), b.rx, b.sx));
  GradTensor negX = ctx.op("Neg", {x});
  GradTensor quotient = ctx.op("RealDiv", {ctx.op("RealDiv", {negX, y}), y});
  ctx.setInputGrad(
      1,
      sumToShape(ctx, ctx.op("Mul", {grad, quotient}, {}, "mul"), b.ry, b.sy));
  return "";
}

static std::string divNoNanGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setInputGrad(0,
                   sumToShape(ctx, ctx.op("DivNoNan", {grad, y}), b.rx, b.sx));
  GradTensor quotient =
      ctx.op("DivNoNan",
             {ctx.op("DivNoNan", {ctx.op("Neg", {x}), y}, {}, "DivNoNan_1"), y},
             {}, "DivNoNan_2");
  ctx.setInputGrad(
      1,
      sumToShape(ctx, ctx.op("Mul", {grad, quotient}, {}, "mul"), b.ry, b.sy));
  return "";
}

/// FloorDiv is piecewise constant: TensorFlow's rule returns no gradients.
/// FloorDiv and TruncateDiv: piecewise constant, no gradient (TensorFlow's
/// rules return None for both inputs).
static std::string floorDivGrad(GradientContext &) { return ""; }

/// x mod y = x - floor(x / y) * y.
static std::string floorModGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  GradTensor floorXY = ctx.op("FloorDiv", {x, y});
  ctx.setInputGrad(0, sumToShape(ctx, grad, b.rx, b.sx));
  GradTensor negated =
      ctx.op("Mul", {grad, ctx.op("Neg", {floorXY})}, {}, "mul");
  ctx.setInputGrad(1, sumToShape(ctx, negated, b.ry, b.sy));
  return "";
}

static std::string negGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.op("Neg", {ctx.getOutputGrad(0)}));
  return "";
}

static std::string squareGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0);
  ctx.setControlDependencies({grad});
  GradTensor two = ctx.scalar(2.0, ctx.getDType(x));
  GradTensor twoX = ctx.op("Mul", {x, two});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ctx.op("Mul", {grad, twoX}));
  return "";
}

/// d/dx f(x) = <GradOp>(y, dy), with y = f(x): Sqrt, Rsqrt, Tanh, Sigmoid.
template <const char *GradOp>
static std::string outputGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.op(GradOp, {ctx.getOutput(0), ctx.getOutputGrad(0)}));
  return "";
}
static constexpr char kSqrtGrad[] = "SqrtGrad";
static constexpr char kRsqrtGrad[] = "RsqrtGrad";
static constexpr char kTanhGrad[] = "TanhGrad";
static constexpr char kSigmoidGrad[] = "SigmoidGrad";
static constexpr char kReciprocalGrad[] = "ReciprocalGrad";

// Second-order gradients: the rules of the <f>Grad(y, dy) helpers, whose
// gradients are taken under control_dependencies([grad]).

/// TanhGrad(y, dy) = dy * (1 - y^2).
static std::string tanhGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), b = ctx.getInput(1);
  ctx.setControlDependencies({grad});
  GradTensor scaled = ctx.op(
      "Mul", {grad, ctx.scalar(-2.0, ctx.getDType(grad), "mul/y")}, {}, "mul");
  GradTensor ga =
      ctx.op("Mul", {ctx.op("Mul", {scaled, b}, {}, "mul_1"), a}, {}, "mul_2");
  GradTensor gb = ctx.op("TanhGrad", {a, grad});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ga);
  ctx.setInputGrad(1, gb);
  return "";
}

/// SigmoidGrad(y, dy) = dy * y * (1 - y).
static std::string sigmoidGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), b = ctx.getInput(1);
  ctx.setControlDependencies({grad});
  GradTensor gb = ctx.op("Mul", {grad, b}, {}, "mul");
  GradTensor twice = ctx.op(
      "Mul", {ctx.scalar(2.0, ctx.getDType(grad), "mul_1/x"), gb}, {}, "mul_1");
  GradTensor ga =
      ctx.op("Sub", {gb, ctx.op("Mul", {twice, a}, {}, "mul_2")}, {}, "sub");
  GradTensor gdy = ctx.op("SigmoidGrad", {a, grad});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ga);
  ctx.setInputGrad(1, gdy);
  return "";
}

/// SqrtGrad(y, dy) = dy * 0.5 / y.
static std::string sqrtGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), z = ctx.getOutput(0);
  ctx.setControlDependencies({grad});
  GradTensor ga = ctx.op("RealDiv", {grad, a}, {}, "truediv");
  GradTensor gy = ctx.op("Mul", {ctx.op("Neg", {ga}), z}, {}, "mul");
  GradTensor gdy = ctx.op(
      "Mul", {ctx.scalar(0.5, ctx.getDType(grad), "mul_1/x"), ga}, {}, "mul_1");
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, gy);
  ctx.setInputGrad(1, gdy);
  return "";
}

/// RsqrtGrad(y, dy) = dy * -0.5 * y^3.
static std::string rsqrtGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), b = ctx.getInput(1);
  ctx.setControlDependencies({grad});
  GradTensor scaled = ctx.op(
      "Mul", {ctx.scalar(-1.5, ctx.getDType(grad), "mul/x"), grad}, {}, "mul");
  GradTensor ga = ctx.op(
      "Mul", {ctx.op("Mul", {scaled, b}, {}, "mul_1"), ctx.op("Square", {a})},
      {}, "mul_2");
  GradTensor gb = ctx.op("RsqrtGrad", {a, grad});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ga);
  ctx.setInputGrad(1, gb);
  return "";
}

/// ReciprocalGrad(y, dy) = -dy * y^2.
static std::string reciprocalGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), b = ctx.getInput(1);
  ctx.setControlDependencies({grad});
  GradTensor scaled = ctx.op(
      "Mul", {grad, ctx.scalar(-2.0, ctx.getDType(grad), "mul/y")}, {}, "mul");
  GradTensor ga =
      ctx.op("Mul", {ctx.op("Mul", {scaled, b}, {}, "mul_1"), a}, {}, "mul_2");
  GradTensor gb = ctx.op("ReciprocalGrad", {a, grad});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ga);
  ctx.setInputGrad(1, gb);
  return "";
}

static std::string expGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("Mul", {ctx.getOutputGrad(0), ctx.getOutput(0)}, {}, "mul"));
  return "";
}

static std::string logGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor inverse = ctx.op("Reciprocal", {ctx.getInput(0)});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ctx.op("Mul", {grad, inverse}, {}, "mul"));
  return "";
}

static std::string log1pGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0);
  ctx.setControlDependencies({grad});
  GradTensor onePlusX =
      ctx.op("AddV2", {ctx.scalar(1, ctx.getDType(x), "add/x"), x}, {}, "add");
  GradTensor inverse = ctx.op("Reciprocal", {onePlusX});
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, ctx.op("Mul", {grad, inverse}, {}, "mul"));
  return "";
}

static constexpr char kCos[] = "Cos", kSinh[] = "Sinh", kCosh[] = "Cosh",
                      kDigamma[] = "Digamma", kExp[] = "Exp";

/// grad * f(x), f computed once grad is there: Sin (cos), Sinh (cosh),
/// Cosh (sinh), Expm1 (exp).
template <const char *Op> static std::string timesGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor derivative = ctx.op(Op, {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("Mul", {grad, derivative}, {}, "mul"));
  ctx.setControlDependencies({});
  return "";
}

static std::string cosGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor negated = ctx.op("Neg", {grad});
  GradTensor sin = ctx.op("Sin", {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("Mul", {negated, sin}, {}, "mul"));
  ctx.setControlDependencies({});
  return "";
}

static std::string tanGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor secant = ctx.op("Reciprocal", {ctx.op("Cos", {ctx.getInput(0)})});
  GradTensor secant2 = ctx.op("Square", {secant});
  ctx.setInputGrad(0, ctx.op("Mul", {secant2, grad}, {}, "mul"));
  ctx.setControlDependencies({});
  return "";
}

namespace {
/// Asin, Acos (negated): grad / sqrt(1 - x^2). Atan: grad / (1 + x^2).
/// Atanh: grad / (1 - x^2).
enum class InverseTrig { Asin, Acos, Atan, Atanh };
} // namespace
template <InverseTrig Kind>
static std::string inverseTrigGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor x2 = ctx.op("Square", {ctx.getInput(0)});
  GradTensor one = ctx.scalar(1, ctx.getDType(grad));
  GradTensor den;
  if (Kind == InverseTrig::Atan)
    den = ctx.op("AddV2", {one, x2}, {}, "Add");
  else
    den = ctx.op("Sub", {one, x2});
  if (Kind == InverseTrig::Asin || Kind == InverseTrig::Acos)
    den = ctx.op("Sqrt", {den});
  GradTensor inverse = ctx.op("Reciprocal", {den});
  GradTensor result = Kind == InverseTrig::Acos
                          ? ctx.op("Mul", {ctx.op("Neg", {grad}), inverse},
                                   {}, "mul")
                          : ctx.op("Mul", {grad, inverse}, {}, "mul");
  ctx.setInputGrad(0, result);
  ctx.setControlDependencies({});
  return "";
}

/// Asinh: grad / cosh(y); Acosh: grad / sinh(y), y the output.
template <const char *Op>
static std::string inverseHyperbolicGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor den = ctx.op(Op, {ctx.getOutput(0)});
  ctx.setInputGrad(0, ctx.op("RealDiv", {grad, den}, {}, "truediv"));
  ctx.setControlDependencies({});
  return "";
}

/// grad * 2/sqrt(pi) * exp(-x^2).
static std::string erfGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor twoOverRootPi =
      ctx.scalar(2 / std::sqrt(M_PI), ctx.getDType(grad), "Const");
  ctx.setControlDependencies({grad});
  GradTensor scaled = ctx.op("Mul", {grad, twoOverRootPi}, {}, "mul");
  GradTensor gauss =
      ctx.op("Exp", {ctx.op("Neg", {ctx.op("Square", {ctx.getInput(0)})})});
  ctx.setInputGrad(0, ctx.op("Mul", {scaled, gauss}, {}, "mul_1"));
  ctx.setControlDependencies({});
  return "";
}

/// Erfc: -2/sqrt(pi) exp(-x^2) times the gradient, once it is there.
static std::string erfcGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setControlDependencies({grad});
  GradTensor minusTwoOverRootPi =
      ctx.scalar(-2 / std::sqrt(M_PI), ctx.getDType(grad), "Const");
  GradTensor scaled = ctx.op("Mul", {grad, minusTwoOverRootPi}, {}, "mul");
  GradTensor gauss =
      ctx.op("Exp", {ctx.op("Neg", {ctx.op("Square", {ctx.getInput(0)})})});
  ctx.setInputGrad(0, ctx.op("Mul", {scaled, gauss}, {}, "mul_1"));
  ctx.setControlDependencies({});
  return "";
}

/// Digamma: polygamma(1, x) times the gradient.
static std::string digammaGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), x = ctx.getInput(0);
  ctx.setControlDependencies({grad});
  GradTensor one = ctx.scalar(1, ctx.getDType(x), "Const");
  GradTensor trigamma = ctx.op("Polygamma", {one, x});
  ctx.setInputGrad(0, ctx.op("Mul", {grad, trigamma}, {}, "mul"));
  ctx.setControlDependencies({});
  return "";
}

/// Zeta(x, q) and Polygamma(n, x): no gradient for the order; for the
/// argument -x zeta(x + 1, q) and polygamma(n + 1, x), summed to its shape.
template <bool isZeta>
static std::string zetaOrPolygammaGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor order = ctx.getInput(0), argument = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setControlDependencies({grad});
  GradTensor next = ctx.op(
      "AddV2", {order, ctx.scalar(1, ctx.getDType(order), "add/y")}, {}, "add");
  GradTensor partial =
      isZeta
          ? ctx.op("Mul",
                   {ctx.op("Neg", {order}), ctx.op("Zeta", {next, argument})},
                   {}, "mul")
          : ctx.op("Polygamma", {next, argument});
  GradTensor product = ctx.op("Mul", {partial, grad}, {}, "mul_1");
  ctx.setControlDependencies({});
  ctx.setInputGrad(1, sumToShape(ctx, product, b.ry, b.sy));
  return "";
}

static std::string absGrad(GradientContext &ctx) {
  GradTensor sign = ctx.op("Sign", {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("Mul", {ctx.getOutputGrad(0), sign}, {}, "mul"));
  return "";
}

/// Maximum and Minimum: the gradient goes to the operand the selector
/// picked (ties to x), each reduced to its operand's shape.
template <const char *Selector>
static std::string maximumMinimumGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  GradTensor sx = ctx.op("Shape", {x});
  GradTensor sy = ctx.op("Shape", {y});
  GradTensor gradShape = ctx.op("Shape", {grad});
  GradTensor zero = ctx.scalar(0.0, ctx.getDType(grad), "zeros/Const");
  GradTensor zeros = ctx.op("Fill", {gradShape, zero}, {}, "zeros");
  GradTensor mask = ctx.op(Selector, {x, y});
  auto r = ctx.addNode("BroadcastGradientArgs", {sx, sy});
  GradTensor xGrad = ctx.op("Select", {mask, grad, zeros});
  GradTensor yGrad = ctx.op("Select", {mask, zeros, grad});
  ctx.setInputGrad(0, sumToShape(ctx, xGrad, r[0], sx));
  ctx.setInputGrad(1, sumToShape(ctx, yGrad, r[1], sy));
  return "";
}
/// ClipByValue: the gradient passes where t was inside the bounds; where t
/// was below min it goes to min, above max to max (each reduced to its
/// bound's shape), as TensorFlow's _clip_by_value_grad.
static std::string clipByValueGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1), z = ctx.getInput(2);
  GradTensor sx = ctx.op("Shape", {x});
  GradTensor sy = ctx.op("Shape", {y});
  GradTensor sz = ctx.op("Shape", {z});
  GradTensor gradShape = ctx.op("Shape", {grad});
  GradTensor zero = ctx.scalar(0.0, ctx.getDType(grad), "zeros/Const");
  GradTensor zeros = ctx.op("Fill", {gradShape, zero}, {}, "zeros");
  GradTensor below = ctx.op("Less", {x, y});
  GradTensor above = ctx.op("Greater", {x, z});
  auto ry = ctx.addNode("BroadcastGradientArgs", {sx, sy});
  auto rz = ctx.addNode("BroadcastGradientArgs", {sx, sz});
  GradTensor outside = ctx.op("LogicalOr", {below, above});
  ctx.setInputGrad(0, ctx.op("Select", {outside, zeros, grad}));
  ctx.setInputGrad(
      1, sumToShape(ctx, ctx.op("Select", {below, grad, zeros}), ry[1], sy));
  ctx.setInputGrad(
      2, sumToShape(ctx, ctx.op("Select", {above, grad, zeros}), rz[1], sz));
  return "";
}

static constexpr char kGreaterEqual[] = "GreaterEqual";
static constexpr char kLessEqual[] = "LessEqual";

static std::string matMulGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor a = ctx.getInput(0), b = ctx.getInput(1);
  bool ta = ctx.getBoolAttr("transpose_a").value_or(false);
  bool tb = ctx.getBoolAttr("transpose_b").value_or(false);
  auto matMul = [&](GradTensor l, GradTensor r, bool tl, bool tr) {
    return ctx.op("MatMul", {l, r},
                  {GradAttr::boolean("transpose_a", tl),
                   GradAttr::boolean("transpose_b", tr)});
  };
  GradTensor ga, gb;
  if (!ta && !tb) {
    ga = matMul(grad, b, false, true);
    gb = matMul(a, grad, true, false);
  } else if (!ta && tb) {
    ga = matMul(grad, b, false, false);
    gb = matMul(grad, a, true, false);
  } else if (ta && !tb) {
    ga = matMul(b, grad, false, true);
    gb = matMul(a, grad, false, false);
  } else {
    ga = matMul(b, grad, true, true);
    gb = matMul(grad, a, true, true);
  }
  ctx.setInputGrad(0, ga);
  ctx.setInputGrad(1, gb);
  return "";
}

/// The shape of a reduction's output with its reduced dims kept as 1:
/// Shape(x) * keep + reduced when the rank and axes are known, else the
/// shape of a keep_dims reduction of x. Sets `inputShape` to Shape(x).
static std::optional<GradTensor>
keptShape(GradientContext &ctx, GradTensor &inputShape, std::string &error) {
  GradTensor x = ctx.getInput(0), axesInput = ctx.getInput(1);
  Shape shape = ctx.getShape(x);
  auto axes = ctx.getConstantInts(axesInput);
  inputShape = ctx.op("Shape", {x});
  GradTensor kept;
  if (shape.hasRank() && axes) {
    int64_t rank = shape.rank();
    std::vector<int64_t> keep(rank, 1), reduced(rank, 0);
    for (int64_t axis : *axes) {
      if (axis < -rank || axis >= rank) {
        error = "Invalid reduction dimension " + std::to_string(axis) +
                " for input with " + std::to_string(rank) + " dimensions.";
        return std::nullopt;
      }
      int64_t d = axis < 0 ? axis + rank : axis;
      keep[d] = 0;
      reduced[d] = 1;
    }
    kept = ctx.op("AddV2", {ctx.op("Mul", {inputShape, ctx.intVector(keep)}),
                            ctx.intVector(reduced)});
  } else {
    GradTensor keptSum =
        ctx.op("Sum", {x, axesInput}, {GradAttr::boolean("keep_dims", true)});
    kept = ctx.op("Shape", {keptSum});
  }
  return kept;
}

/// The gradient of a reduction's output, broadcast back to the input:
/// BroadcastTo(Reshape(grad, kept), Shape(x)).
static std::optional<GradTensor> broadcastReducedGrad(GradientContext &ctx,
                                                      GradTensor &inputShape,
                                                      std::string &error) {
  std::optional<GradTensor> kept = keptShape(ctx, inputShape, error);
  if (!kept)
    return std::nullopt;
  GradTensor grad = ctx.op("Reshape", {ctx.getOutputGrad(0), *kept});
  return ctx.op("BroadcastTo", {grad, inputShape});
}

/// Max and Min: the gradient is shared by the elements equal to the
/// extremum.
static std::string minOrMaxGrad(GradientContext &ctx) {
  std::string error;
  GradTensor inputShape;
  std::optional<GradTensor> kept = keptShape(ctx, inputShape, error);
  if (!kept)
    return error;
  GradTensor y = ctx.getOutput(0), grad = ctx.getOutputGrad(0);
  if (!ctx.getBoolAttr("keep_dims").value_or(false)) {
    y = ctx.op("Reshape", {y, *kept});
    grad = ctx.op("Reshape", {grad, *kept}, {}, "Reshape_1");
  }
  GradTensor indicators =
      ctx.op("Cast", {ctx.op("Equal", {y, ctx.getInput(0)})},
             {GradAttr::dtype("DstT", ctx.getDType(grad)),
              GradAttr::boolean("Truncate", false)});
  GradTensor selected = ctx.op("Reshape",
                               {ctx.op("Sum", {indicators, ctx.getInput(1)},
                                       {GradAttr::boolean("keep_dims", false)}),
                                *kept},
                               {}, "Reshape_2");
  GradTensor share = ctx.op("RealDiv", {indicators, selected}, {}, "truediv");
  ctx.setInputGrad(0, ctx.op("Mul", {share, grad}, {}, "mul"));
  return "";
}

/// TensorFlow's path for a reduction over all dims of a known rank:
/// Tile(Reshape(grad, [1, ..., 1]), shape of x), the shape a constant when
/// static. Null when it does not apply.
static GradTensor reduceAllGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(0);
  Shape shape = ctx.getShape(x);
  auto axes = ctx.getConstantInts(ctx.getInput(1));
  if (!shape.hasRank() || !axes || int64_t(axes->size()) != shape.rank())
    return GradTensor();
  for (auto [i, axis] : llvm::enumerate(*axes))
    if (axis != int64_t(i))
      return GradTensor();
  std::vector<int64_t> ones(shape.rank(), 1);
  GradTensor grad = ctx.op(
      "Reshape", {ctx.getOutputGrad(0), ctx.intVector(ones, "Reshape/shape")});
  bool known = llvm::none_of(shape.dims, [](int64_t d) { return d < 0; });
  GradTensor inputShape = known ? ctx.intVector(std::vector<int64_t>(
                                      shape.dims.begin(), shape.dims.end()))
                                : ctx.op("Shape", {x});
  return ctx.op("Tile", {grad, inputShape});
}

static std::string sumGrad(GradientContext &ctx) {
  if (GradTensor grad = reduceAllGrad(ctx)) {
    ctx.setInputGrad(0, grad);
    return "";
  }
  std::string error;
  GradTensor inputShape;
  if (auto grad = broadcastReducedGrad(ctx, inputShape, error))
    ctx.setInputGrad(0, *grad);
  return error;
}

static std::string meanGrad(GradientContext &ctx) {
  GradTensor sum = reduceAllGrad(ctx);
  if (!sum) {
    std::string error;
    GradTensor inputShape;
    auto grad = broadcastReducedGrad(ctx, inputShape, error);
    if (!grad)
      return error;
    sum = *grad;
  }
  // Divide by the number of elements each output averaged: a constant
  // when both shapes are static.
  Shape in = ctx.getShape(ctx.getInput(0)),
        out = ctx.getShape(ctx.getOutput(0));
  // (A count past int64 is as good as unknown: the factor is then
  // computed at run time.)
  auto numElements = [](const Shape &s) -> std::optional<int64_t> {
    if (!s.hasRank())
      return std::nullopt;
    int64_t n = 1;
    for (int64_t d : s.dims)
      if (d < 0 || llvm::MulOverflow(n, d, n))
        return std::nullopt;
    return n;
  };
  GradTensor factor;
  if (auto inSize = numElements(in), outSize = numElements(out);
      inSize && outSize) {
    factor = ctx.scalar(double(*inSize / std::max<int64_t>(*outSize, 1)),
                        ctx.getDType(sum));
  } else {
    GradTensor inputShape = ctx.op("Shape", {ctx.getInput(0)});
    GradTensor outputShape = ctx.op("Shape", {ctx.getOutput(0)});
    GradTensor inputSize = ctx.op("Prod", {inputShape, ctx.intVector({0})});
    GradTensor outputSize = ctx.op("Prod", {outputShape, ctx.intVector({0})});
    GradTensor divisor = ctx.op(
        "Maximum", {outputSize, ctx.scalar(1, grads::kInt32, "Maximum/y")});
    factor = ctx.op("Cast",
                    {ctx.op("FloorDiv", {inputSize, divisor}, {}, "floordiv")},
                    {GradAttr::dtype("DstT", ctx.getDType(sum)),
                     GradAttr::boolean("Truncate", false)});
  }
  ctx.setInputGrad(0, ctx.op("RealDiv", {sum, factor}, {}, "truediv"));
  return "";
}

/// Prod: each element's gradient is the product of the others in its
/// reduction, as exclusive products from both ends (no division, so zeros
/// are fine): the reduced dims are moved first and flattened to a
/// [reduced, other] matrix scanned along its rows (TensorFlow's _ProdGrad,
/// with the permutations constant).
static std::string prodGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(0);
  Shape shape = ctx.getShape(x);
  auto axes = ctx.getConstantInts(ctx.getInput(1));
  if (!shape.hasRank() || !axes)
    return "the gradient of Prod needs a known rank and constant reduction "
           "axes (for now)";
  int64_t rank = shape.rank();
  std::vector<bool> isReduced(rank, false);
  std::vector<int64_t> reduced, other;
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return "Invalid reduction dimension " + std::to_string(axis) +
             " for input with " + std::to_string(rank) + " dimensions.";
    int64_t d = axis < 0 ? axis + rank : axis;
    if (!isReduced[d])
      reduced.push_back(d);
    isReduced[d] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!isReduced[d])
      other.push_back(d);
  std::vector<int64_t> perm(reduced), inverse(rank);
  perm.insert(perm.end(), other.begin(), other.end());
  for (int64_t i = 0; i < rank; ++i)
    inverse[perm[i]] = i;

  std::string error;
  GradTensor inputShape;
  std::optional<GradTensor> grad = broadcastReducedGrad(ctx, inputShape, error);
  if (!grad)
    return error;
  GradTensor axis0 = ctx.scalar(0, grads::kInt32, "GatherV2/axis");
  auto count = [&](const std::vector<int64_t> &dims, const char *name) {
    GradTensor sizes =
        ctx.op("GatherV2", {inputShape, ctx.intVector(dims), axis0});
    return ctx.op("Prod", {sizes, ctx.intVector({0})},
                  {GradAttr::boolean("keep_dims", false)}, name);
  };
  GradTensor reducedNum = count(reduced, "Prod");
  GradTensor otherNum = count(other, "Prod_1");
  GradTensor permuted = ctx.op(
      "Transpose", {x, ctx.intVector(perm, "transpose/perm")}, {}, "transpose");
  GradTensor permutedShape = ctx.op("Shape", {permuted}, {}, "Shape_1");
  GradTensor matrix =
      ctx.op("Reshape", {permuted, ctx.op("Pack", {reducedNum, otherNum},
                                          {GradAttr::integer("axis", 0)},
                                          "Reshape/shape")});
  GradTensor scanAxis = ctx.scalar(0, grads::kInt32, "Cumprod/axis");
  GradTensor left = ctx.op("Cumprod", {matrix, scanAxis},
                           {GradAttr::boolean("exclusive", true),
                            GradAttr::boolean("reverse", false)});
  GradTensor right = ctx.op("Cumprod", {matrix, scanAxis},
                            {GradAttr::boolean("exclusive", true),
                             GradAttr::boolean("reverse", true)},
                            "Cumprod_1");
  GradTensor others = ctx.op(
      "Reshape", {ctx.op("Mul", {left, right}, {}, "mul"), permutedShape}, {},
      "Reshape_1");
  GradTensor unpermuted =
      ctx.op("Transpose", {others, ctx.intVector(inverse, "transpose_1/perm")},
             {}, "transpose_1");
  ctx.setInputGrad(
      0, ctx.op("Reshape",
                {ctx.op("Mul", {*grad, unpermuted}, {}, "mul_1"), inputShape},
                {}, "Reshape_2"));
  return "";
}

/// The attrs of a scan, `reverse` flipped or not.
static std::vector<GradAttr> scanAttrs(GradientContext &ctx, bool flip) {
  return {GradAttr::boolean("exclusive",
                            ctx.getBoolAttr("exclusive").value_or(false)),
          GradAttr::boolean(
              "reverse", ctx.getBoolAttr("reverse").value_or(false) != flip)};
}

/// Cumsum: the gradient is the sum of the gradients of the outputs each
/// element reached: the scan the other way.
static std::string cumsumGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.op("Cumsum", {ctx.getOutputGrad(0), ctx.getInput(1)},
                             scanAttrs(ctx, true)));
  return "";
}

static std::string cumprodGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(0), axis = ctx.getInput(1);
  GradTensor prod = ctx.op("Cumprod", {x, axis}, scanAttrs(ctx, false));
  GradTensor out = ctx.op(
      "Cumsum", {ctx.op("Mul", {prod, ctx.getOutputGrad(0)}, {}, "mul"), axis},
      scanAttrs(ctx, true));
  ctx.setInputGrad(0, ctx.op("DivNoNan", {out, x}));
  return "";
}

static std::string castGrad(GradientContext &ctx) {
  // Only between floating types; integer inputs get no gradient.
  int32_t src = ctx.getDType(ctx.getInput(0));
  int32_t dst = ctx.getDType(ctx.getOutput(0));
  auto isFloat = [](int32_t t) {
    return t == grads::kFloat || t == grads::kDouble || t == 19 /*half*/ ||
           t == 14 /*bfloat16*/;
  };
  if (isFloat(src) && isFloat(dst))
    ctx.setInputGrad(0, ctx.op("Cast", {ctx.getOutputGrad(0)},
                               {GradAttr::dtype("DstT", src),
                                GradAttr::boolean("Truncate", false)}));
  return "";
}

static std::string batchMatMulGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  bool adjX = ctx.getBoolAttr("adj_x").value_or(false);
  bool adjY = ctx.getBoolAttr("adj_y").value_or(false);
  auto matMul = [&](GradTensor l, GradTensor r, bool al, bool ar) {
    return ctx.op(
        "BatchMatMulV2", {l, r},
        {GradAttr::boolean("adj_x", al), GradAttr::boolean("adj_y", ar)});
  };
  GradTensor gx, gy;
  if (!adjX && !adjY) {
    gx = matMul(grad, y, false, true);
    gy = matMul(x, grad, true, false);
  } else if (!adjX) {
    gx = matMul(grad, y, false, false);
    gy = matMul(grad, x, true, false);
  } else if (!adjY) {
    gx = matMul(y, grad, false, true);
    gy = matMul(x, grad, false, false);
  } else {
    gx = matMul(y, grad, true, true);
    gy = matMul(grad, x, true, true);
  }
  // Batch dims that broadcast are summed back, unless both are static and
  // equal.
  Shape sxStatic = ctx.getShape(x), syStatic = ctx.getShape(y);
  auto batchDims = [](const Shape &s) {
    return llvm::ArrayRef<int64_t>(s.dims).drop_back(2);
  };
  bool known = sxStatic.hasRank() && syStatic.hasRank() &&
               llvm::none_of(sxStatic.dims, [](int64_t d) { return d < 0; }) &&
               llvm::none_of(syStatic.dims, [](int64_t d) { return d < 0; });
  if (known && sxStatic.rank() >= 2 && syStatic.rank() >= 2 &&
      batchDims(sxStatic) == batchDims(syStatic)) {
    ctx.setInputGrad(0, gx);
    ctx.setInputGrad(1, gy);
    return "";
  }
  GradTensor sx = ctx.op("Shape", {x}), sy = ctx.op("Shape", {y});
  auto batchOf = [&](GradTensor shape) {
    // shape[:-2]
    return ctx.op(
        "StridedSlice",
        {shape, ctx.intVector({0}), ctx.intVector({-2}), ctx.intVector({1})},
        {GradAttr::integer("begin_mask", 1)});
  };
  auto r = ctx.addNode("BroadcastGradientArgs", {batchOf(sx), batchOf(sy)});
  if (r.size() != 2)
    return "";
  ctx.setInputGrad(0, sumToShape(ctx, gx, r[0], sx));
  ctx.setInputGrad(1, sumToShape(ctx, gy, r[1], sy));
  return "";
}

static std::string squaredDifferenceGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setControlDependencies({grad});
  GradTensor two = ctx.scalar(2.0, ctx.getDType(grad), "scalar");
  GradTensor scaled = ctx.op("Mul", {two, grad});
  GradTensor xGrad =
      ctx.op("Mul", {scaled, ctx.op("Sub", {x, y}, {}, "sub")}, {}, "mul");
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, sumToShape(ctx, xGrad, b.rx, b.sx));
  ctx.setInputGrad(1, ctx.op("Neg", {sumToShape(ctx, xGrad, b.ry, b.sy)}));
  return "";
}

/// atan2(y, x): (grad * x, grad * -y) / (x^2 + y^2), each summed to its
/// input's shape.
static std::string atan2Grad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor y = ctx.getInput(0), x = ctx.getInput(1);
  auto b = broadcastArgs(ctx);
  ctx.setControlDependencies({grad});
  GradTensor norm = ctx.op(
      "AddV2", {ctx.op("Square", {x}), ctx.op("Square", {y})}, {}, "add");
  GradTensor gradInv = ctx.op("RealDiv", {grad, norm}, {}, "truediv");
  GradTensor yGrad = ctx.op("Mul", {x, gradInv}, {}, "mul");
  GradTensor xGrad =
      ctx.op("Mul", {ctx.op("Neg", {y}), gradInv}, {}, "mul_1");
  ctx.setControlDependencies({});
  ctx.setInputGrad(0, sumToShape(ctx, yGrad, b.rx, b.sx));
  ctx.setInputGrad(1, sumToShape(ctx, xGrad, b.ry, b.sy));
  return "";
}

static std::string powGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), y = ctx.getInput(1), z = ctx.getOutput(0);
  int32_t dtype = ctx.getDType(x);
  auto b = broadcastArgs(ctx);
  GradTensor yMinusOne =
      ctx.op("Sub", {y, ctx.scalar(1, dtype, "sub/y")}, {}, "sub");
  GradTensor dzdx =
      ctx.op("Mul", {y, ctx.op("Pow", {x, yMinusOne})}, {}, "mul");
  ctx.setInputGrad(0, sumToShape(ctx, ctx.op("Mul", {grad, dzdx}), b.rx, b.sx));
  // log(x) where x > 0, else 0: no false singularity at x = 0.
  GradTensor mask = ctx.op("Greater", {x, ctx.scalar(0, dtype, "Greater/y")});
  GradTensor safeX =
      ctx.op("Select", {mask, x, ctx.op("OnesLike", {x}, {}, "ones_like")});
  GradTensor logX =
      ctx.op("Select", {mask, ctx.op("Log", {safeX}),
                        ctx.op("ZerosLike", {x}, {}, "zeros_like")});
  GradTensor gy =
      ctx.op("Mul", {ctx.op("Mul", {grad, z}, {}, "mul_1"), logX}, {}, "mul_2");
  ctx.setInputGrad(1, sumToShape(ctx, gy, b.ry, b.sy));
  return "";
}

/// Select(c, x, y): the gradient goes to the side the condition picked.
static std::string selectGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor c = ctx.getInput(0);
  GradTensor zeros = ctx.op("ZerosLike", {ctx.getInput(1)}, {}, "zeros_like");
  ctx.setInputGrad(1, ctx.op("Select", {c, grad, zeros}));
  ctx.setInputGrad(2, ctx.op("Select", {c, zeros, grad}));
  return "";
}

/// SelectV2(c, x, y) broadcasts: each side's gradient is reduced to its
/// shape.
static std::string selectV2Grad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor c = ctx.getInput(0);
  GradTensor zeros = ctx.scalar(0, ctx.getDType(grad), "zeros");
  GradTensor outputShape = ctx.op("Shape", {ctx.getOutput(0)}, {}, "Shape_1");
  for (unsigned side = 1; side <= 2; ++side) {
    GradTensor picked = side == 1 ? ctx.op("SelectV2", {c, grad, zeros})
                                  : ctx.op("SelectV2", {c, zeros, grad});
    GradTensor shape = ctx.op("Shape", {ctx.getInput(side)});
    auto r = ctx.addNode("BroadcastGradientArgs", {shape, outputShape});
    if (r.size() != 2)
      return "";
    GradTensor sum =
        ctx.op("Sum", {picked, r[0]}, {GradAttr::boolean("keep_dims", true)});
    ctx.setInputGrad(side, ctx.op("Reshape", {sum, shape}));
  }
  return "";
}

static std::string addNGrad(GradientContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    ctx.setInputGrad(i, ctx.getOutputGrad(0));
  return "";
}

/// Each data row's entry of a [segments, ...] tensor: GatherV2 on axis 0 by
/// the segment ids.
static GradTensor gatherBySegment(GradientContext &ctx, GradTensor values,
                                  const char *name = "GatherV2") {
  return ctx.op("GatherV2",
                {values, ctx.getInput(1),
                 ctx.scalar(0, grads::kInt32, std::string(name) + "/axis")},
                {}, name);
}

/// SegmentSum: each data row gets its segment's gradient.
static std::string segmentSumGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, gatherBySegment(ctx, ctx.getOutputGrad(0)));
  return "";
}

/// SegmentMean: the gradient divided by the segment's size (the segment
/// sum of ones), then gathered.
static std::string segmentMeanGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor counts = ctx.op(
      "SegmentSum", {ctx.op("OnesLike", {ctx.getInput(0)}), ctx.getInput(1)});
  ctx.setInputGrad(0, gatherBySegment(ctx, ctx.op("RealDiv", {grad, counts})));
  return "";
}

/// SegmentMax and SegmentMin: the gradient goes to the elements equal to
/// their segment's result, split evenly among ties
/// (_SegmentMinOrMaxGrad).
static std::string segmentMinOrMaxGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), data = ctx.getInput(0);
  GradTensor zeros = ctx.op("ZerosLike", {data}, {}, "zeros_like");
  GradTensor gatheredOutputs = gatherBySegment(ctx, ctx.getOutput(0));
  GradTensor isSelected = ctx.op("Equal", {data, gatheredOutputs});
  GradTensor numSelected =
      ctx.op("SegmentSum", {ctx.op("Cast", {isSelected},
                                   {GradAttr::dtype("DstT", ctx.getDType(grad)),
                                    GradAttr::boolean("Truncate", false)}),
                            ctx.getInput(1)});
  GradTensor weighted = ctx.op("RealDiv", {grad, numSelected});
  GradTensor gathered = gatherBySegment(ctx, weighted, "GatherV2_1");
  ctx.setInputGrad(0, ctx.op("SelectV2", {isSelected, gathered, zeros}));
  return "";
}

/// SegmentProd: the product of the others in the segment, without dividing
/// by zero: a segment with two zeros has no gradient, one with a single
/// zero gives it the product of the rest (_SegmentProdGrad).
static std::string segmentProdGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), data = ctx.getInput(0),
             ids = ctx.getInput(1);
  int32_t dtype = ctx.getDType(data);
  GradTensor isZero = ctx.op("Equal", {data, ctx.scalar(0, dtype, "Equal/y")});
  GradTensor numZeros =
      ctx.op("SegmentSum", {ctx.op("Cast", {isZero},
                                   {GradAttr::dtype("DstT", grads::kInt32),
                                    GradAttr::boolean("Truncate", false)}),
                            ids});
  GradTensor manyZeros =
      ctx.op("Greater", {numZeros, ctx.scalar(1, grads::kInt32, "Greater/y")});
  grad = ctx.op("SelectV2", {manyZeros, ctx.op("ZerosLike", {grad}), grad});
  GradTensor nonZeroData =
      ctx.op("SelectV2", {isZero, ctx.op("OnesLike", {data}), data});
  GradTensor nonZeroProd = ctx.op("SegmentProd", {nonZeroData, ids});
  GradTensor gatheredProd = gatherBySegment(ctx, ctx.getOutput(0));
  GradTensor gatheredNonZeroProd =
      gatherBySegment(ctx, nonZeroProd, "GatherV2_1");
  GradTensor prodDividedByElement =
      ctx.op("RealDiv", {gatheredProd, nonZeroData});
  GradTensor partial =
      ctx.op("SelectV2", {isZero, gatheredNonZeroProd, prodDividedByElement});
  GradTensor gatheredGrad = gatherBySegment(ctx, grad, "GatherV2_2");
  ctx.setInputGrad(0, ctx.op("Mul", {gatheredGrad, partial}));
  return "";
}

/// Einsum subscripts as an equation spells them ('.' stands for "...").
static std::string spellSubscripts(const std::string &subscripts) {
  std::string text;
  for (char c : subscripts)
    text += c == '.' ? std::string("...") : std::string(1, c);
  return text;
}

/// Shape(input)[axis] as a scalar (an axis below 0 counts from the end).
static GradTensor dimensionOf(GradientContext &ctx, GradTensor shape,
                              int64_t axis) {
  bool last = axis == -1;
  return ctx.op("StridedSlice",
                {shape, ctx.intVector({axis}),
                 ctx.intVector({last ? 0 : axis + 1}), ctx.intVector({1})},
                {GradAttr::integer("end_mask", last ? 1 : 0),
                 GradAttr::integer("shrink_axis_mask", 1)});
}

/// TensorFlow's _GetGradReduced: `g` (labels `left`) spread over the
/// labels `reduced` of the input (labels `mine`) that the forward op
/// summed, each as large as the input has it.
static GradTensor spreadOverReduced(GradientContext &ctx, GradTensor g,
                                    const std::string &left,
                                    const std::string &mine,
                                    const std::string &reduced,
                                    GradTensor input) {
  GradTensor inputShape = ctx.op("Shape", {input});
  size_t dot = mine.find('.');
  std::vector<GradTensor> dims;
  for (char c : reduced) {
    int64_t k = mine.find(c);
    // After an ellipsis, a label's axis counts from the end.
    int64_t axis = dot == std::string::npos || k < int64_t(dot)
                       ? k
                       : k - int64_t(mine.size());
    dims.push_back(dimensionOf(ctx, inputShape, axis));
  }
  GradTensor reducedDims = ctx.op("Pack", dims, {GradAttr::integer("axis", 0)});
  GradTensor gShape = ctx.op("Shape", {g});
  GradTensor axis0 = ctx.scalar(0, grads::kInt32);
  GradTensor ones = ctx.intVector(std::vector<int64_t>(reduced.size(), 1));
  GradTensor expanded =
      ctx.op("Reshape", {g, ctx.op("ConcatV2", {ones, gShape, axis0})});
  GradTensor spread =
      ctx.op("BroadcastTo",
             {expanded, ctx.op("ConcatV2", {reducedDims, gShape, axis0})});
  return ctx.op("Einsum", {spread},
                {GradAttr::string("equation", spellSubscripts(reduced + left) +
                                                  "->" + spellSubscripts(mine)),
                 GradAttr::integer("N", 1)});
}

/// Shape(input) between the letters before an ellipsis and those after it.
static GradTensor ellipsisShape(GradientContext &ctx, GradTensor input,
                                const std::string &subscripts) {
  size_t dot = subscripts.find('.');
  int64_t before = dot, after = subscripts.size() - dot - 1;
  return ctx.op("StridedSlice",
                {ctx.op("Shape", {input}), ctx.intVector({before}),
                 ctx.intVector({-after}), ctx.intVector({1})},
                {GradAttr::integer("end_mask", after == 0 ? 1 : 0)});
}

/// Einsum: TensorFlow's _EinsumGrad. Each input's gradient is the Einsum
/// of the output's gradient (and the other input) onto the input's labels,
/// but for those only the input has, which the forward op summed and
/// which come back by broadcasting. With an ellipsis in the output the
/// gradient has the broadcast batch dimensions, which are summed back to
/// each input's own (BroadcastGradientArgs). A label repeated within an
/// input (a diagonal) gets its gradient written on the diagonal (i->ii).
static std::string einsumGrad(GradientContext &ctx) {
  std::string equation = ctx.getStringAttr("equation").value_or("");
  std::vector<std::string> inputs;
  std::string output;
  if (std::string error = splitEinsum(equation, inputs, output); !error.empty())
    return error;
  unsigned n = inputs.size();
  bool batched = output.find('.') != std::string::npos;
  // An operand without an ellipsis has one of rank 0 (TensorFlow's rule).
  if (n == 2 && batched)
    for (std::string &in : inputs)
      if (in.find('.') == std::string::npos)
        in += '.';
  GradTensor grad = ctx.getOutputGrad(0);
  for (unsigned i = 0; i < n; ++i) {
    const std::string &mine = inputs[i];
    std::string other = n == 2 ? inputs[1 - i] : "";
    std::string left, reduced;
    // A repeated label stays repeated in `left` (the gradient einsum
    // writes its diagonal) and counts once in `reduced`.
    for (char c : mine) {
      bool kept = c == '.' || output.find(c) != std::string::npos ||
                  other.find(c) != std::string::npos;
      if (kept)
        left += c;
      else if (reduced.find(c) == std::string::npos)
        reduced += c;
    }
    std::vector<GradTensor> operands = {grad};
    if (n == 2)
      operands.push_back(ctx.getInput(1 - i));
    GradTensor g = ctx.op(
        "Einsum", operands,
        {GradAttr::string("equation",
                          spellSubscripts(output) +
                              (n == 2 ? "," + spellSubscripts(other) : "") +
                              "->" + spellSubscripts(left)),
         GradAttr::integer("N", n)});
    if (!reduced.empty())
      g = spreadOverReduced(ctx, g, left, mine, reduced, ctx.getInput(i));
    if (mine.find('.') != std::string::npos) {
      GradTensor inputShape = ctx.op("Shape", {ctx.getInput(i)});
      if (n == 2 && batched) {
        // The batch dimensions this input broadcast, summed back.
        GradTensor mineBatch = ellipsisShape(ctx, ctx.getInput(i), mine);
        GradTensor otherBatch = ellipsisShape(ctx, ctx.getInput(1 - i), other);
        GradTensor broadcast =
            ctx.addNode("BroadcastGradientArgs", {mineBatch, otherBatch})[0];
        GradTensor axes = ctx.op(
            "AddV2",
            {broadcast, ctx.scalar(double(mine.find('.')), grads::kInt32)});
        g = ctx.op("Sum", {g, axes}, {GradAttr::boolean("keep_dims", false)});
      }
      // Back to the input's shape: the dimensions of 1 an ellipsis the
      // output does not have stood for, or those just summed.
      g = ctx.op("Reshape", {g, inputShape});
    }
    ctx.setInputGrad(i, g);
  }
  return "";
}

/// UnsortedSegmentSum: each data row gets its segment's gradient, rows with
/// a negative segment id (dropped by the sum) zeros (_GatherDropNegatives).
static std::string unsortedSegmentSumGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), ids = ctx.getInput(1);
  GradTensor clipped = ctx.op("Maximum", {ids, ctx.op("ZerosLike", {ids})});
  GradTensor gathered =
      ctx.op("GatherV2",
             {grad, clipped, ctx.scalar(0, grads::kInt32, "GatherV2/axis")});
  GradTensor positive =
      ctx.op("GreaterEqual",
             {ids, ctx.scalar(0, ctx.getDType(ids), "GreaterEqual/y")});
  // The mask, with trailing 1s for the rows' dims.
  GradTensor extraDims =
      ctx.op("Sub", {ctx.op("Rank", {gathered}),
                     ctx.op("Rank", {positive}, {}, "Rank_1")});
  GradTensor ones =
      ctx.op("Fill",
             {ctx.op("Reshape", {extraDims, ctx.intVector({1}, "ones/shape")},
                     {}, "ones/Reshape"),
              ctx.scalar(1, grads::kInt32, "ones/Const")},
             {}, "ones");
  GradTensor maskShape = ctx.op("ConcatV2",
                                {ctx.op("Shape", {positive}), ones,
                                 ctx.scalar(0, grads::kInt32, "concat/axis")},
                                {}, "concat");
  GradTensor mask = ctx.op("Reshape", {positive, maskShape});
  ctx.setInputGrad(0, ctx.op("SelectV2", {mask, gathered,
                                          ctx.op("ZerosLike", {gathered}, {},
                                                 "zeros_like_1")}));
  return "";
}

detail::GradFnTable cleave::ops::detail::getMathGradFns() {
  return {
      {"AddV2", addGrad},
      {"UnsortedSegmentSum", unsortedSegmentSumGrad},
      {"Einsum", einsumGrad},
      {"SegmentSum", segmentSumGrad},
      {"SegmentMean", segmentMeanGrad},
      {"SegmentProd", segmentProdGrad},
      {"SegmentMax", segmentMinOrMaxGrad},
      {"SegmentMin", segmentMinOrMaxGrad},
      {"Add", addGrad},
      {"Sub", subGrad},
      {"Mul", productGrad<kMul>},
      {"RealDiv", realDivGrad},
      {"Div", realDivGrad},
      {"Neg", negGrad},
      {"Square", squareGrad},
      {"Sqrt", outputGrad<kSqrtGrad>},
      {"Rsqrt", outputGrad<kRsqrtGrad>},
      {"Tanh", outputGrad<kTanhGrad>},
      {"Sigmoid", outputGrad<kSigmoidGrad>},
      {"Reciprocal", outputGrad<kReciprocalGrad>},
      {"Exp", expGrad},
      {"Log", logGrad},
      {"Abs", absGrad},
      {"Maximum", maximumMinimumGrad<kGreaterEqual>},
      {"Minimum", maximumMinimumGrad<kLessEqual>},
      {"MatMul", matMulGrad},
      {"Sum", sumGrad},
      {"Mean", meanGrad},
      {"Cast", castGrad},
      {"AddN", addNGrad},
      {"Select", selectGrad},
      {"SelectV2", selectV2Grad},
      {"Max", minOrMaxGrad},
      {"Min", minOrMaxGrad},
      {"Log1p", log1pGrad},
      {"Expm1", timesGrad<kExp>},
      {"Erf", erfGrad},
      {"Erfc", erfcGrad},
      {"Lgamma", timesGrad<kDigamma>},
      {"Digamma", digammaGrad},
      {"Zeta", zetaOrPolygammaGrad<true>},
      {"Polygamma", zetaOrPolygammaGrad<false>},
      {"Sin", timesGrad<kCos>},
      {"Cos", cosGrad},
      {"Tan", tanGrad},
      {"Asin", inverseTrigGrad<InverseTrig::Asin>},
      {"Acos", inverseTrigGrad<InverseTrig::Acos>},
      {"Atan", inverseTrigGrad<InverseTrig::Atan>},
      {"Sinh", timesGrad<kCosh>},
      {"Cosh", timesGrad<kSinh>},
      {"Asinh", inverseHyperbolicGrad<kCosh>},
      {"Acosh", inverseHyperbolicGrad<kSinh>},
      {"Atanh", inverseTrigGrad<InverseTrig::Atanh>},
      {"BatchMatMulV2", batchMatMulGrad},
      {"SquaredDifference", squaredDifferenceGrad},
      {"Pow", powGrad},
      {"Atan2", atan2Grad},
      {"DivNoNan", divNoNanGrad},
      {"Prod", prodGrad},
      {"Cumsum", cumsumGrad},
      {"Cumprod", cumprodGrad},
      {"MulNoNan", productGrad<kMulNoNan>},
      {"ClipByValue", clipByValueGrad},
      {"FloorDiv", floorDivGrad},
      {"TruncateDiv", floorDivGrad},
      {"FloorMod", floorModGrad},
      {"TanhGrad", tanhGradGrad},
      {"SigmoidGrad", sigmoidGradGrad},
      {"SqrtGrad", sqrtGradGrad},
      {"RsqrtGrad", rsqrtGradGrad},
      {"ReciprocalGrad", reciprocalGradGrad},
  };
}
