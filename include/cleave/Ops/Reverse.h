//===- Reverse.h - ReverseV2's axes -----------------------------*- C++ -*-===//
//
// The dimensions ReverseV2 reverses, checked as TensorFlow's kernel checks
// them; shared by the interpreter's kernel and the CPU lowering so that
// both accept the same axes with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_REVERSE_H
#define CLEAVE_OPS_REVERSE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave::ops {

/// Sets `reversed[d]` for each dimension d of a rank-`rank` tensor that
/// `axes` names (a negative axis counts from the end). Returns TensorFlow's
/// message for an axis out of range or named twice, or "".
inline std::string reversedDimensions(llvm::ArrayRef<int64_t> axes,
                                      int64_t rank,
                                      std::vector<bool> &reversed) {
  reversed.assign(rank, false);
  for (auto [i, a] : llvm::enumerate(axes)) {
    int64_t canonical = a < 0 ? a + rank : a;
    if (canonical < 0 || canonical >= rank)
      return "'axis'[" + std::to_string(i) + "] = " + std::to_string(a) +
             " is out of valid range [" + std::to_string(-rank) + ", " +
             std::to_string(rank - 1) + "]";
    if (reversed[canonical])
      return "axis " + std::to_string(canonical) + " specified more than once.";
    reversed[canonical] = true;
  }
  return "";
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_REVERSE_H
