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
#include <string>
#include <vector>

namespace cleave {

/// An element shape as the list ops take it: -1 for an unknown dimension,
/// nullopt for an unknown rank.
using ElementShape = std::optional<std::vector<int64_t>>;

struct TensorList {
  int32_t elementDType = 0;
  /// The shape every item has; -1 for an unknown dimension; nullopt for an
  /// unknown rank.
  ElementShape elementShape;
  /// The items; an invalid Tensor is one not set yet (TensorListReserve).
  std::vector<Tensor> items;
  /// How many items TensorListPushBack may make (EmptyTensorList's
  /// max_num_elements); -1: no bound.
  int64_t maxElements = -1;
};

/// An element shape as TensorFlow's list messages print it.
inline std::string elementShapeString(const ElementShape &shape) {
  return shape ? shapeString(*shape) : std::string("<unknown>");
}

/// TensorListElementShape's value: the dimensions (-1 where unknown) as
/// `dtype`, or a -1 scalar for an unknown rank.
inline Tensor elementShapeTensor(int32_t dtype, const ElementShape &shape) {
  Tensor out(dtype, shape ? std::vector<int64_t>{int64_t(shape->size())}
                          : std::vector<int64_t>{});
  if (!shape)
    out.setFromDouble(0, -1);
  else
    for (size_t i = 0; i < shape->size(); ++i)
      out.setFromDouble(i, double((*shape)[i]));
  return out;
}

} // namespace cleave

#endif // CLEAVE_TENSOR_TENSORLIST_H
