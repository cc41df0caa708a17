//===- MathOps.cpp - math op signatures -----------------------------------===//
//
// Ops from TensorFlow's math_ops.cc: element-wise arithmetic, comparisons,
// reductions, matrix products, casts and the unary gradient helpers.
//
//===----------------------------------------------------------------------===//

#include "OpTables.h"

using namespace cleave::ops::detail;

namespace {
// The type lists behind math_ops.cc's UNARY/BINARY macros.
constexpr const char *kUnaryT =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64, "
    "complex64, complex128}";
constexpr const char *kUnaryRealT = "T: {bfloat16, half, float, double}";
constexpr const char *kUnaryComplexT =
    "T: {bfloat16, half, float, double, complex64, complex128}";
constexpr const char *kBinaryMoreT =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
constexpr const char *kMinMaxT =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
    "uint32, int64, uint64}";
constexpr const char *kReductionIndicesT = "Tidx: {int32, int64} = DT_INT32";

OpTableEntry unary(const char *name, const char *typeAttr) {
  return {name, {"x: T"}, {"y: T"}, {typeAttr}};
}

OpTableEntry binary(const char *name, const char *typeAttr) {
  return {name, {"x: T", "y: T"}, {"z: T"}, {typeAttr}};
}

OpTableEntry comparison(const char *name) {
  return {name, {"x: T", "y: T"}, {"z: bool"}, {"T: realnumbertype"}};
}

OpTableEntry equality(const char *name) {
  return {name,
          {"x: T", "y: T"},
          {"z: bool"},
          {"T: type", "incompatible_shape_error: bool = true"}};
}

OpTableEntry reduction(const char *name, const char *typeAttr) {
  return {name,
          {"input: T", "reduction_indices: Tidx"},
          {"output: T"},
          {"keep_dims: bool = false", typeAttr, kReductionIndicesT}};
}

// SigmoidGrad and friends: gradient of y = f(x) given y and dy.
OpTableEntry unaryGrad(const char *name) {
  return {name, {"y: T", "dy: T"}, {"z: T"}, {kUnaryComplexT}};
}
} // namespace

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
      {"ClipByValue",
       {"t: T", "clip_value_min: T", "clip_value_max: T"},
       {"output: T"},
       {"T: numbertype"}},

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
      {"Range",
       {"start: Tidx", "limit: Tidx", "delta: Tidx"},
       {"output: Tidx"},
       {"Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, "
        "uint16, uint32} = DT_INT32"}},
  };
}
