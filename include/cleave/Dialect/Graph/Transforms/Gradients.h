//===- Gradients.h - tf.gradients() over the graph dialect ------*- C++ -*-===//
//
// The machinery behind graph-gradient, for passes that differentiate as one
// of their steps (graph-minimize).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTS_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTS_H

#include "cleave/Dialect/Graph/IR/Graph.h"

#include <string>

namespace cleave::graph {

/// tf.gradients()'s keyword arguments.
struct GradientOptions {
  std::string aggregationMethod = "add_n"; ///< add_n, tree or accumulate_n
  bool gateGradients = false;
  bool colocateGradientsWithOps = false;
  std::string unconnectedGradients = "none"; ///< none or zero
  std::string scopeName = "gradients";
};

/// Adds the gradients of `ys` (seeded with `gradYs`, default ones) with
/// respect to `xs` to `graph`, holding `stopGradients` constant, and returns
/// one gradient per x (null when none reaches it). Diagnostics are emitted
/// on the offending node.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
addGradients(GraphOp graph, llvm::ArrayRef<mlir::Value> ys,
             llvm::ArrayRef<mlir::Value> xs, llvm::ArrayRef<mlir::Value> gradYs,
             llvm::ArrayRef<mlir::Value> stopGradients,
             const GradientOptions &options);

/// The name of the function computing the gradient of calls of `function`:
/// its GradientDef in the library, or one generated (`<function>_grad`) and
/// registered there. `user` is the node diagnostics point at.
mlir::FailureOr<std::string> getOrCreateGradientFunction(NodeOp user,
                                                         FuncOp function);

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
