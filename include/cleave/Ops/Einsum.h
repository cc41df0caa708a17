//===- Einsum.h - what an Einsum equation computes --------------*- C++ -*-===//
//
// Einsum's equation, parsed and checked against the inputs' shapes as
// TensorFlow's EinsumShape and EinsumOp do: explicit or implicit output,
// ellipses broadcast as NumPy does, a repeated label within an input (its
// diagonal; a label repeated in the output writes one, zeros elsewhere).
// Every dimension becomes a label (an ellipsis' dimensions get labels of
// their own), so the result is out[output labels] = the sum over the other
// labels of the product of in_i[labels of i]. The shape
// function, the reference kernel and the CPU lowering (one linalg.generic)
// share it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_EINSUM_H
#define CLEAVE_OPS_EINSUM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave::ops {

struct EinsumPlan {
  /// The size of each label; -1 where no input gives it.
  std::vector<int64_t> labelSizes;
  /// Per input, per dimension: its label.
  std::vector<std::vector<int64_t>> inputLabels;
  /// Per input, per dimension: whether it is 1 and broadcast against a
  /// larger size of its label (read at index 0).
  std::vector<std::vector<bool>> broadcast;
  /// The output's labels, one per dimension (a label twice: a diagonal).
  std::vector<int64_t> outputLabels;
  /// The output's shape (-1 for sizes unknown).
  std::vector<int64_t> outputShape() const;
};

/// Parses `equation` for inputs of `shapes` (-1: an unknown size; a
/// shape's rank must be known). Returns TensorFlow's message, or "".
std::string planEinsum(llvm::StringRef equation,
                       llvm::ArrayRef<std::vector<int64_t>> shapes,
                       EinsumPlan &plan);

/// The equation's subscripts without shapes: per input and for the output,
/// its letters ('.' stands for an ellipsis). For gradient rules. Returns
/// the message for a malformed equation, or "".
std::string splitEinsum(llvm::StringRef equation,
                        std::vector<std::string> &inputs, std::string &output);

} // namespace cleave::ops

#endif // CLEAVE_OPS_EINSUM_H
