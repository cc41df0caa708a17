//===- ShapeRefinement.h - function results for given arguments -*- C++ -*-===//
//
// graph-infer-shapes refines the types of a graph in place. This asks it a
// question instead: what would a function return for arguments of given
// types? A copy of the body is inferred, as TensorFlow instantiates a
// function per call site, and the function is left as it was.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_SHAPEREFINEMENT_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_SHAPEREFINEMENT_H

#include "cleave/Dialect/Graph/IR/Graph.h"

#include <optional>

namespace cleave::graph {

/// The types `func` returns (data results only) when called with arguments
/// of `argTypes` (one per tensor argument, in order; fewer leave the rest
/// as declared).
/// std::nullopt when a node's shape function rejects them. Inference is
/// quiet: no diagnostics.
std::optional<llvm::SmallVector<mlir::Type>>
inferFunctionResultTypes(FuncOp func, mlir::TypeRange argTypes);

/// What graph-infer-shapes does to the top-level graph: refines the result
/// types of its nodes to a fixed point. Passes that change shapes (a batch
/// split across towers) call it after widening the types they invalidated.
mlir::LogicalResult inferGraphShapes(GraphOp graph);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_SHAPEREFINEMENT_H
