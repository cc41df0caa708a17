//===- TensorList.h - the value of a DT_VARIANT TensorList ------*- C++ -*-===//
//
// TensorFlow 2's loops accumulate into TensorLists (list_ops.cc): a list of
// tensors of one element dtype, with an element shape that may be partly
// known, held by a DT_VARIANT scalar. Lists are values: the list ops build
// new lists (sharing the items' buffers) rather than changing their input.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TENSOR_TENSORLIST_H
#define CLEAVE_TENSOR_TENSORLIST_H

#include "cleave/Tensor/Tensor.h"

#include <optional>
#include <vector>

namespace cleave {

struct TensorList {
  int32_t elementDType = 0;
  /// The shape every item has; -1 for an unknown dimension; nullopt for an
  /// unknown rank.
  std::optional<std::vector<int64_t>> elementShape;
  /// The items; an invalid Tensor is one not set yet (TensorListReserve).
  std::vector<Tensor> items;
  /// How many items TensorListPushBack may make (EmptyTensorList's
  /// max_num_elements); -1: no bound.
  int64_t maxElements = -1;
};

} // namespace cleave

#endif // CLEAVE_TENSOR_TENSORLIST_H
