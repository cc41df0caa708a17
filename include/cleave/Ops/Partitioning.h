//===- Partitioning.h - the parts of a model-parallel value -----*- C++ -*-===//
//
// How TPUPartitionedInput/Output[V2] tile a value over the cores of a
// replica, shared by their shape functions and the interpreter's kernels so
// that both read the attrs the same way.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_PARTITIONING_H
#define CLEAVE_OPS_PARTITIONING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace cleave::ops {

/// How many parts a value of rank `rank` has along each dim: V2 names them
/// all (`partition_dims`; empty: every core holds the whole value), V1
/// splits one dim (`partition_dim`; -1: the whole value) into `numCores`
/// parts. Empty means the whole value.
inline llvm::SmallVector<int64_t>
getPartitionGrid(std::optional<llvm::ArrayRef<int64_t>> partitionDims,
                 int64_t partitionDim, int64_t rank, int64_t numCores) {
  if (partitionDims)
    return llvm::SmallVector<int64_t>(*partitionDims);
  if (partitionDim < 0 || partitionDim >= rank)
    return {};
  llvm::SmallVector<int64_t> grid(rank, 1);
  grid[partitionDim] = numCores;
  return grid;
}

/// The number of parts of `grid`.
inline int64_t countParts(llvm::ArrayRef<int64_t> grid) {
  int64_t parts = 1;
  for (int64_t n : grid)
    parts *= n;
  return parts;
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_PARTITIONING_H
