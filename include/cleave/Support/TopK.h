//===- TopK.h - the k largest entries of each row ---------------*- C++ -*-===//
//
// TopKV2's selection, shared by the reference kernel and compiled code (the
// kernel library's cleave_cpu_topk), so both pick the same indices: the k
// largest values of each row in descending order, equal values in the
// order of their indices (TensorFlow's documented tie order). NaN counts
// as larger than every number (TensorFlow's comparison is no order where
// NaN is involved; this one is). No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_TOPK_H
#define CLEAVE_SUPPORT_TOPK_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

namespace cleave {

/// Whether a comes before b in TopK's order: larger first (NaN first of
/// all), then the lower index.
template <typename T> bool topKBefore(const T *row, int64_t a, int64_t b) {
  T x = row[a], y = row[b];
  if constexpr (std::is_floating_point_v<T>) {
    bool xNan = std::isnan(x), yNan = std::isnan(y);
    if (xNan || yNan)
      return xNan && (!yNan || a < b);
  }
  return x > y || (x == y && a < b);
}

/// The k largest of each of `rows` rows of n: values and their indices
/// (as Index) into `values` and `indices`, rows of k.
template <typename T, typename Index>
void topK(const T *input, int64_t rows, int64_t n, int64_t k, T *values,
          Index *indices) {
  std::vector<int64_t> order(n);
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = input + r * n;
    std::iota(order.begin(), order.end(), 0);
    auto before = [row](int64_t a, int64_t b) { return topKBefore(row, a, b); };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t j = 0; j < k; ++j) {
      values[r * k + j] = row[order[j]];
      indices[r * k + j] = Index(order[j]);
    }
  }
}

} // namespace cleave

#endif // CLEAVE_SUPPORT_TOPK_H
