//===- SegmentChecks.h - sorted segment ids ---------------------*- C++ -*-===//
//
// The checks SegmentSum and friends make on their data and sorted segment
// ids, with TensorFlow's messages; the reference kernels and the CPU
// lowering (where the ids are compile-time constants) both make them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_SEGMENTCHECKS_H
#define CLEAVE_OPS_SEGMENTCHECKS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace cleave::ops {

/// Checks `ids` (of shape `idsShape`) against data of shape `data` and sets
/// `segments` (the last id + 1). Returns TensorFlow's message, or "".
inline std::string checkSortedSegments(llvm::ArrayRef<int64_t> data,
                                       llvm::ArrayRef<int64_t> idsShape,
                                       llvm::ArrayRef<int64_t> ids,
                                       int64_t &segments) {
  if (data.empty())
    return "input must be at least rank 1";
  if (idsShape.size() != 1)
    return "segment_ids should be a vector.";
  if (int64_t(ids.size()) != data[0])
    return "segment_ids should be the same size as dimension 0 of input.";
  segments = ids.empty() ? 0 : ids.back() + 1;
  if (segments < 0)
    return "segment ids must be >= 0";
  for (size_t i = 1; i < ids.size(); ++i)
    if (ids[i] < ids[i - 1])
      return "segment ids are not increasing";
  if (!ids.empty() && ids.front() < 0)
    return "Segment id " + std::to_string(ids.front()) + " out of range [0, " +
           std::to_string(segments) +
           "), possibly because 'segment_ids' input is not sorted.";
  return "";
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_SEGMENTCHECKS_H
