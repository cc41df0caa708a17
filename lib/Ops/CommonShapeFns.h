//===- CommonShapeFns.h - shape functions shared by many ops ----*- C++ -*-===//
//
// Private to CleaveOps: the reusable shape functions (TensorFlow's
// common_shape_fns) that the family files attach to their ops.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_OPS_COMMONSHAPEFNS_H
#define CLEAVE_LIB_OPS_COMMONSHAPEFNS_H

#include "cleave/Ops/ShapeInference.h"

#include <utility>
#include <vector>

namespace cleave::ops::detail {

/// (op type, shape function) pairs, one table per family file.
using ShapeFnTable = std::vector<std::pair<llvm::StringRef, ShapeFn>>;

ShapeFnTable getArrayShapeFns();
ShapeFnTable getMathShapeFns();
ShapeFnTable getNNShapeFns();
ShapeFnTable getControlFlowShapeFns();
ShapeFnTable getStateShapeFns();
ShapeFnTable getFunctionalShapeFns();
ShapeFnTable getRandomShapeFns();
ShapeFnTable getHostShapeFns();
ShapeFnTable getTPUShapeFns();
ShapeFnTable getIOShapeFns();
ShapeFnTable getDataShapeFns();

namespace shapes {
/// Every output has the shape of input 0.
std::string unchanged(InferenceContext &ctx);
/// One output: NumPy broadcast of inputs 0 and 1.
std::string broadcastBinary(InferenceContext &ctx);
/// Every output is a scalar.
std::string scalar(InferenceContext &ctx);
/// No outputs to shape (NoOp, Assign*VariableOp...).
std::string none(InferenceContext &ctx);
/// Output 0 is the `shape` attr (Placeholder, VariableV2, VarHandleOp).
std::string fromShapeAttr(InferenceContext &ctx);
/// Reductions over constant axes with keep_dims (Sum, Mean, Max, ...).
std::string reduction(InferenceContext &ctx);
/// Output 0 has the shape given by the constant vector input `index` (or
/// that vector's length as its rank).
std::string fromShapeInput(InferenceContext &ctx, unsigned index);
template <unsigned index> std::string fromShapeInputAt(InferenceContext &ctx) {
  return fromShapeInput(ctx, index);
}
/// Each output i has the shape of list attr `name`[i] when the attr is
/// present and long enough (output_shapes, shapes).
std::string fromShapeListAttr(InferenceContext &ctx, llvm::StringRef name);
} // namespace shapes

} // namespace cleave::ops::detail

#endif // CLEAVE_LIB_OPS_COMMONSHAPEFNS_H
