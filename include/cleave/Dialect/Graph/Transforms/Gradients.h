//===- Gradients.h - tf.gradients() over the graph dialect ------*- C++ -*-===//
//
// The machinery behind graph-gradient, for passes that differentiate as one
// of their steps (graph-minimize).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTS_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTS_H

#include "cleave/Dialect/Graph/IR/Graph.h"

#include <optional>
#include <string>

namespace cleave::graph {

/// A gradient TensorFlow keeps as an IndexedSlices (a gather's): the rows
/// `values` of a tensor of shape `denseShape` at `indices`, repeated
/// indices adding up.
struct IndexedSlices {
  mlir::Value values, indices, denseShape;
};

/// tf.gradients()'s keyword arguments.
struct GradientOptions {
  std::string aggregationMethod = "add_n"; ///< add_n, tree or accumulate_n
  bool gateGradients = false;
  bool colocateGradientsWithOps = false;
  std::string unconnectedGradients = "none"; ///< none or zero
  std::string scopeName = "gradients";
  /// Results that are IndexedSlices stay so (as an optimizer's
  /// compute_gradients returns them): their values are the result and
  /// `sparse` has the slices. Otherwise they are made dense, as
  /// tf.gradients() returns them to graph-gradient's result identities.
  bool keepSparseResults = false;
};

/// Adds the gradients of `ys` (seeded with `gradYs`, default ones) with
/// respect to `xs` to `graph`, holding `stopGradients` constant, and returns
/// one gradient per x (null when none reaches it). With
/// `keepSparseResults`, `sparse` gets one entry per x: the slices of a
/// sparse gradient, else none. Diagnostics are emitted on the offending
/// node.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
addGradients(GraphOp graph, llvm::ArrayRef<mlir::Value> ys,
             llvm::ArrayRef<mlir::Value> xs, llvm::ArrayRef<mlir::Value> gradYs,
             llvm::ArrayRef<mlir::Value> stopGradients,
             const GradientOptions &options,
             llvm::SmallVectorImpl<std::optional<IndexedSlices>> *sparse =
                 nullptr);

/// The name of the function computing the gradient of calls of `function`:
/// its GradientDef in the library, or one generated (`<function>_grad`) and
/// registered there. `user` is the node diagnostics point at.
mlir::FailureOr<std::string> getOrCreateGradientFunction(NodeOp user,
                                                         FuncOp function);

/// An error in a pass's options: the command line's, with no place in the
/// graph's source (tools say it without quoting the file's first line).
inline mlir::InFlightDiagnostic emitOptionError(mlir::Operation *op) {
  return mlir::emitError(mlir::UnknownLoc::get(op->getContext()));
}

/// Finds nodes and tensors ("node" or "node:port") of the top-level graph
/// by name, for passes whose options name them; errors name the pass and
/// the option.
class TensorNameResolver {
public:
  TensorNameResolver(GraphOp graph, llvm::StringRef pass);
  NodeOp lookupNode(llvm::StringRef name) const { return byName.lookup(name); }
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  resolve(llvm::ArrayRef<std::string> texts, llvm::StringRef option) const;

private:
  mutable GraphOp graph; ///< Op handles' accessors are not const.
  std::string pass;
  llvm::DenseMap<llvm::StringRef, NodeOp> byName;
};

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTS_H
