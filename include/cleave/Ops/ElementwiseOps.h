//===- ElementwiseOps.h - what elementwise ops compute ----------*- C++ -*-===//
//
// The one-input, classifying and reducing ops the reference kernels and the
// CPU lowering both compute, named once: each layer instantiates its
// kernel or lowering template per value, so a new member is added here and
// handled in both.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_ELEMENTWISEOPS_H
#define CLEAVE_OPS_ELEMENTWISEOPS_H

namespace cleave::ops {

/// One input, one output of the same shape.
enum class UnaryOp {
  Neg, Square, Sqrt, Rsqrt, Exp, Log, Log1p, Abs, Sign, Sigmoid, Tanh,
  Reciprocal, Floor, Relu, Relu6, Elu, LogicalNot, Identity, Ceil, Rint,
  Round, Expm1, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
  Acosh, Atanh, Softplus, Softsign, Erfc, Lgamma, Digamma
};

/// A bool per element of a float tensor.
enum class ClassifyOp { IsNan, IsInf, IsFinite };

/// Reductions over constant axes (keep_dims).
enum class ReduceOp { Sum, Mean, Prod, Max, Min };

} // namespace cleave::ops

#endif // CLEAVE_OPS_ELEMENTWISEOPS_H
