//===- SpecialFunctions.h - TensorFlow's special functions ----*- C++ -*-===//
//
// Erfc, Lgamma, Digamma, Zeta and Polygamma as TensorFlow's kernels define
// them (Eigen's implementations, which follow Cephes): one double-precision
// implementation that the reference kernels and compiled code (through the
// kernel library's cleave_cpu_special) both call, so they give the same
// bits; float tensors are computed in double and rounded. No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_SPECIALFUNCTIONS_H
#define CLEAVE_SUPPORT_SPECIALFUNCTIONS_H

#include <cstdint>

namespace cleave::special {

/// Which function cleave_cpu_special computes (its first argument).
enum class Function : int64_t { Erfc, Lgamma, Digamma, Zeta, Polygamma };

/// The complementary error function 1 - erf(x), without the cancellation.
double erfc(double x);
/// log|Γ(x)| (thread-safe: the sign is not kept).
double lgamma(double x);
/// ψ(x) = Γ'(x)/Γ(x); NaN at the poles (0, -1, -2, ...), as Eigen's.
double digamma(double x);
/// The Hurwitz zeta function ζ(x, q) = Σ_k (k + q)^-x, for x > 1 (NaN for
/// x < 1, +inf at x = 1 and at the poles q = 0, -1, ...).
double zeta(double x, double q);
/// The n-th derivative of ψ at x, for integral n >= 0 (NaN otherwise).
double polygamma(double n, double x);

/// `function` of x (and y, its second argument where it has one).
double evaluate(Function function, double x, double y);

} // namespace cleave::special

#endif // CLEAVE_SUPPORT_SPECIALFUNCTIONS_H
