//===- NodeInferenceContext.h - a node for shape functions -----*- C++ -*-===//
//
// The registry's shape functions see a node through ops::InferenceContext.
// This base answers everything a node's attrs tell; what its inputs are
// (types in the IR for graph-infer-shapes, lowered values for the lowering)
// is left to the subclass.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_NODEINFERENCECONTEXT_H
#define CLEAVE_DIALECT_GRAPH_UTILS_NODEINFERENCECONTEXT_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Ops/ShapeInference.h"

namespace cleave::graph {

/// A shape attr as the shape functions see shapes.
ops::Shape toInferenceShape(ShapeAttr attr);
/// A tensor type's shape as the shape functions see shapes.
ops::Shape toInferenceShape(mlir::Type type);

class NodeInferenceContext : public ops::InferenceContext {
public:
  explicit NodeInferenceContext(NodeOp node)
      : InferenceContext(node.getOutputs().size()), node(node) {}

  std::optional<int64_t> getIntAttr(llvm::StringRef name) const override;
  std::optional<bool> getBoolAttr(llvm::StringRef name) const override;
  std::optional<double> getFloatAttr(llvm::StringRef name) const override;
  std::optional<int32_t> getTypeAttr(llvm::StringRef name) const override;
  std::optional<std::string> getStringAttr(llvm::StringRef name) const override;
  std::optional<llvm::SmallVector<int64_t>>
  getIntListAttr(llvm::StringRef name) const override;
  std::optional<ops::Shape> getShapeAttr(llvm::StringRef name) const override;
  std::optional<llvm::SmallVector<ops::Shape>>
  getShapeListAttr(llvm::StringRef name) const override;
  std::optional<ops::Shape>
  getTensorAttrShape(llvm::StringRef name) const override;

protected:
  // Op handles are values; their accessors are not const.
  mutable NodeOp node;
};

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_UTILS_NODEINFERENCECONTEXT_H
