//===- StridedSlice.cpp - StridedSlice index arithmetic -------------------===//
//
// First the sparse spec (what the user wrote, with an ellipsis and new axes)
// is expanded to a dense spec with one entry per input dimension; then each
// dimension's begin and end are made canonical as TensorFlow does.
//
//===----------------------------------------------------------------------===//

#include "cleave/Ops/StridedSlice.h"

#include <algorithm>

using namespace cleave::ops;

static constexpr int64_t kNewAxis = -1, kShrinkAxis = -2;

namespace {
struct DenseSpec {
  llvm::SmallVector<int64_t, 4> begin, end, strides;
  int64_t beginMask = 0, endMask = 0, shrinkMask = 0;
  /// For each output dimension: the dense dimension it comes from, or
  /// kNewAxis / kShrinkAxis.
  llvm::SmallVector<int64_t, 4> finalShapeGather;
};
} // namespace

static bool bit(int64_t mask, int64_t i) { return i < 63 && (mask >> i) & 1; }

std::string cleave::ops::planStridedSlice(llvm::ArrayRef<int64_t> inputShape,
                                          llvm::ArrayRef<int64_t> begin,
                                          llvm::ArrayRef<int64_t> end,
                                          llvm::ArrayRef<int64_t> strides,
                                          const StridedSliceMasks &masks,
                                          StridedSlicePlan &plan) {
  if (begin.size() != end.size() || begin.size() != strides.size())
    return "Expected begin, end, and strides to be 1D equal size tensors, "
           "but got shapes [" +
           std::to_string(begin.size()) + "], [" + std::to_string(end.size()) +
           "], and [" + std::to_string(strides.size()) + "] instead.";
  if (masks.ellipsis & (masks.ellipsis - 1))
    return "Multiple ellipses in slice spec not allowed";

  // The sparse spec, with an implicit ellipsis at the end when none is given.
  int64_t sparseDims = begin.size(), ellipsisMask = masks.ellipsis;
  bool hasEllipsis = false;
  int64_t newAxesAfterEllipsis = 0;
  for (int64_t i = 0; i < sparseDims; ++i) {
    if (hasEllipsis && bit(masks.newAxis, i) && !bit(ellipsisMask, i))
      ++newAxesAfterEllipsis;
    hasEllipsis |= bit(ellipsisMask, i);
  }
  if (!hasEllipsis)
    ellipsisMask |= int64_t(1) << sparseDims++;

  int64_t rank = inputShape.size();
  DenseSpec dense;
  dense.begin.assign(rank, 0);
  dense.end.assign(rank, 0);
  dense.strides.assign(rank, 1);
  int64_t full = 0;
  for (int64_t i = 0; i < sparseDims; ++i) {
    if (bit(ellipsisMask, i)) {
      int64_t next =
          std::min(rank - (sparseDims - i) + 1 + newAxesAfterEllipsis, rank);
      for (; full < next; ++full) {
        dense.beginMask |= int64_t(1) << full;
        dense.endMask |= int64_t(1) << full;
        dense.finalShapeGather.push_back(full);
      }
    } else if (bit(masks.newAxis, i)) {
      dense.finalShapeGather.push_back(kNewAxis);
    } else {
      if (full == rank)
        return "Index out of range using input dim " + std::to_string(full) +
               "; input has only " + std::to_string(rank) + " dims";
      dense.begin[full] = begin[i];
      dense.end[full] = end[i];
      dense.strides[full] = strides[i];
      if (bit(masks.begin, i))
        dense.beginMask |= int64_t(1) << full;
      if (bit(masks.end, i))
        dense.endMask |= int64_t(1) << full;
      if (bit(masks.shrinkAxis, i)) {
        dense.finalShapeGather.push_back(kShrinkAxis);
        dense.shrinkMask |= int64_t(1) << full;
      } else {
        dense.finalShapeGather.push_back(full);
      }
      ++full;
    }
  }

  plan = StridedSlicePlan();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = inputShape[i], stride = dense.strides[i];
    bool shrink = bit(dense.shrinkMask, i);
    if (stride == 0)
      return "strides[" + std::to_string(i) + "] must be non-zero";
    if (shrink && stride <= 0)
      return "only stride 1 allowed on non-range indexing.";
    bool beginMasked = bit(dense.beginMask, i),
         endMasked = bit(dense.endMask, i);
    if (dim < 0) { // unknown: only a shrunk dimension has a known size
      plan.begin.push_back(0);
      plan.strides.push_back(stride);
      plan.sizes.push_back(shrink ? 1 : -1);
      continue;
    }
    // Valid ranges are [0, dim] forwards and [-1, dim - 1] backwards.
    int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool isEnd) {
      if (masked)
        return (stride > 0) != isEnd ? lo : hi;
      int64_t forward = x < 0 ? dim + x : x;
      return std::clamp(forward, lo, hi);
    };
    int64_t b, e;
    if (shrink) {
      b = dense.begin[i] < 0 ? dim + dense.begin[i] : dense.begin[i];
      if (b < 0 || b >= dim)
        return "slice index " + std::to_string(dense.begin[i]) +
               " of dimension " + std::to_string(i) + " out of bounds.";
      e = b + 1;
    } else {
      b = canonical(dense.begin[i], beginMasked, /*isEnd=*/false);
      e = canonical(dense.end[i], endMasked, /*isEnd=*/true);
    }
    int64_t interval = e - b, size;
    if (interval == 0 || (interval < 0) != (stride < 0))
      size = 0;
    else
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    plan.begin.push_back(b);
    plan.strides.push_back(stride);
    plan.sizes.push_back(size);
  }
  for (int64_t gather : dense.finalShapeGather) {
    if (gather >= 0)
      plan.outputShape.push_back(plan.sizes[gather]);
    else if (gather == kNewAxis)
      plan.outputShape.push_back(1);
  }
  return "";
}
