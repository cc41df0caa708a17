//===- CheckNumerics.h - what CheckNumerics reports -------------*- C++ -*-===//
//
// CheckNumerics and CheckNumericsV2 fail on a tensor holding infinities or
// NaN with TensorFlow's message, "<message> : Tensor had <what> values";
// the reference kernels and the CPU lowering build <what> here from the
// kinds of values found.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_CHECKNUMERICS_H
#define CLEAVE_OPS_CHECKNUMERICS_H

#include <string>
#include <vector>

namespace cleave::ops {

/// The kinds of non-finite values, as bits.
enum NonFiniteKind : unsigned {
  kNegativeInfinity = 1,
  kPositiveInfinity = 2,
  kNotANumber = 4
};

/// What a check that found `kinds` (a nonzero set of NonFiniteKind bits)
/// says the tensor had: V1 "Inf", "NaN" or "Inf and NaN"; V2 tells the
/// infinities apart: "-Inf", "+Inf", "NaN", two joined by "and", three as
/// "-Inf, +Inf, and NaN".
inline std::string describeNonFinite(unsigned kinds, bool isV2) {
  std::vector<std::string> found;
  if (isV2) {
    if (kinds & kNegativeInfinity)
      found.push_back("-Inf");
    if (kinds & kPositiveInfinity)
      found.push_back("+Inf");
  } else if (kinds & (kNegativeInfinity | kPositiveInfinity)) {
    found.push_back("Inf");
  }
  if (kinds & kNotANumber)
    found.push_back("NaN");
  if (found.size() == 3)
    return found[0] + ", " + found[1] + ", and " + found[2];
  if (found.size() == 2)
    return found[0] + " and " + found[1];
  return found.empty() ? "" : found[0];
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_CHECKNUMERICS_H
