//===- StridedSlice.h - StridedSlice index arithmetic -----------*- C++ -*-===//
//
// TensorFlow's ValidateStridedSliceOp, shared by the StridedSlice shape
// function and the interpreter's StridedSlice/StridedSliceGrad kernels so
// that both read the masks the same way.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_STRIDEDSLICE_H
#define CLEAVE_OPS_STRIDEDSLICE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace cleave::ops {

struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, newAxis = 0, shrinkAxis = 0;
};

/// The slice in terms of the input's dimensions.
struct StridedSlicePlan {
  /// Per input dimension: the first index, the stride and the number of
  /// elements taken (-1 when the dimension is unknown).
  llvm::SmallVector<int64_t, 4> begin, strides, sizes;
  /// The output shape: `sizes` with shrunk dimensions removed and new axes
  /// inserted (-1 for unknown dims). It has as many elements as `sizes`.
  llvm::SmallVector<int64_t, 4> outputShape;
};

/// Plans `input[begin:end:strides]` for an input of known rank (dims may be
/// -1). Returns TensorFlow's message for an invalid spec, or "".
std::string planStridedSlice(llvm::ArrayRef<int64_t> inputShape,
                             llvm::ArrayRef<int64_t> begin,
                             llvm::ArrayRef<int64_t> end,
                             llvm::ArrayRef<int64_t> strides,
                             const StridedSliceMasks &masks,
                             StridedSlicePlan &plan);

} // namespace cleave::ops

#endif // CLEAVE_OPS_STRIDEDSLICE_H
