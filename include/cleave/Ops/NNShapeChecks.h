//===- NNShapeChecks.h - nn ops' run-time shape checks ----------*- C++ -*-===//
//
// Checks the reference kernels and the CPU lowering both make on static
// shapes, with TensorFlow's messages (which give the shapes).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_NNSHAPECHECKS_H
#define CLEAVE_OPS_NNSHAPECHECKS_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace cleave::ops {

/// SparseSoftmaxCrossEntropyWithLogits: logits [batch, classes] and labels
/// [batch]; the error TensorFlow's kernel gives, or empty.
inline std::string checkSparseCrossEntropyShapes(llvm::ArrayRef<int64_t> logits,
                                                 llvm::ArrayRef<int64_t> labels) {
  if (logits.size() != 2)
    return "logits must be 2-D, but got shape " + shapeString(logits);
  if (labels.size() != 1)
    return "labels must be 1-D, but got shape " + shapeString(labels);
  if (logits[0] != labels[0])
    return "logits and labels must have the same first dimension, got "
           "logits shape " +
           shapeString(logits) + " and labels shape " + shapeString(labels);
  return "";
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_NNSHAPECHECKS_H
