//===- Optimizers.h - Optimizer.apply_gradients() over the graph -*- C++ -*-===//
//
// What graph-minimize and graph-towers share: adding registered nodes under
// TensorFlow's names, and TensorFlow 1.x's apply_gradients() for
// GradientDescent, Momentum and Adam (slots, constants, one update per
// variable colocated with it, the train op).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_OPTIMIZERS_H
#define CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_OPTIMIZERS_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace cleave::graph {

bool isVariableNode(NodeOp node);
bool isResourceVariable(NodeOp variable);
/// The dtype of a variable's values (a VarHandleOp's `dtype`).
mlir::Type getVariableValueType(NodeOp variable);

/// A scalar tensor of `type` (float or integer) holding `value`, as a
/// Const's `value` attr.
TensorAttr getScalarTensor(mlir::Type type, double value);

/// Adds registered nodes at the end of a graph under unique names, as
/// TensorFlow's Python wrappers do; errors are reported at `loc`, prefixed
/// with the pass.
class NodeAdder {
public:
  NodeAdder(GraphOp graph, mlir::Location loc, llvm::StringRef pass);

  /// A node of `opType`; `colocate` gives it that node's device and
  /// colocation class. `name` is made unique unless `exactName`.
  mlir::FailureOr<NodeOp> add(llvm::StringRef opType, llvm::StringRef name,
                              mlir::ValueRange inputs,
                              mlir::ValueRange controls,
                              llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                              NodeOp colocate = {}, bool exactName = false);
  /// A scalar Const of `type`.
  mlir::FailureOr<NodeOp> addScalar(llvm::StringRef name, double value,
                                    mlir::Type type, NodeOp colocate = {},
                                    mlir::ValueRange controls = {});
  /// `name`, or `name_<k>` when taken.
  std::string unique(llvm::StringRef name) { return names->unique(name); }
  /// Learns the names nodes added by others (addGradients) took.
  void refreshNames();

  GraphOp getGraph() { return graph; }
  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return loc; }
  llvm::StringRef getPassName() const { return pass; }

private:
  GraphOp graph;
  mlir::OpBuilder builder;
  mlir::Location loc;
  std::string pass;
  std::optional<NameUniquer> names;
};

/// tf.compat.v1.train.create_global_step(): a resource variable of int64
/// `name`, zero-initialized by `initName` (created when missing); errors
/// are prefixed with `pass`.
mlir::FailureOr<NodeOp> createGlobalStep(GraphOp graph, mlir::Location loc,
                                         llvm::StringRef name,
                                         llvm::StringRef initName,
                                         llvm::StringRef pass);

/// The optimizer graph-minimize's and graph-towers' options describe.
struct OptimizerConfig {
  std::string kind = "sgd"; ///< sgd, momentum or adam
  double learningRate = 0.01;
  double momentum = 0.9;
  bool useNesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  /// tf.compat.v1.train.exponential_decay of the learning rate by the
  /// global step: learning_rate * decay_rate ^ (global_step / decay_steps),
  /// the exponent floored with `staircase` (decaySteps 0: a constant rate).
  int64_t decaySteps = 0;
  double decayRate = 1;
  bool staircase = false;

  /// "GradientDescent", "Momentum" or "Adam": its name scope.
  llvm::StringRef getName() const;
};

/// compute_gradients' error when no variable gets a gradient from `loss`.
mlir::InFlightDiagnostic emitNoGradients(GraphOp graph,
                                         llvm::ArrayRef<NodeOp> variables,
                                         mlir::Value loss);

/// An IndexedSlices with each row once: repeated indices' values summed
/// (`_deduplicate_indexed_slices`: Unique, UnsortedSegmentSum), under
/// `prefix`, colocated with `variable`.
mlir::FailureOr<IndexedSlices> sumRepeatedRows(NodeAdder &adder,
                                               llvm::StringRef prefix,
                                               NodeOp variable,
                                               const IndexedSlices &gradient);
/// The dense tensor of an IndexedSlices (UnsortedSegmentSum into its
/// shape's rows).
mlir::FailureOr<mlir::Value> densify(NodeAdder &adder, llvm::StringRef prefix,
                                     NodeOp variable,
                                     const IndexedSlices &gradient);

/// A variable and its gradient: dense, or the rows of an IndexedSlices
/// (`sparse`; `gradient` is then its values).
struct VariableGradient {
  NodeOp variable;
  mlir::Value gradient;
  std::optional<IndexedSlices> sparse;
};

/// Optimizer.apply_gradients(grads_and_vars, global_step): the slots (with
/// their initializers added to the node `initName`, created when missing),
/// the constants, one `<scope>/update_<var>/Apply*` per variable and the
/// train op, which it returns: a NoOp `<scope>` grouping the updates, or
/// with `globalStep` the AssignAdd `<scope>` incrementing it after them.
/// Sparse gradients update the rows they have, as TensorFlow's
/// _apply_sparse: SGD by ScatterSub (ResourceScatterAdd of -lr * values),
/// Momentum by SparseApplyMomentum after summing repeated rows (Unique,
/// UnsortedSegmentSum); Adam, whose sparse update equals the dense one of
/// the summed rows, densifies them.
mlir::FailureOr<NodeOp>
applyGradients(NodeAdder &adder, const OptimizerConfig &config,
               llvm::ArrayRef<VariableGradient> gradients, NodeOp globalStep,
               llvm::StringRef initName);

} // namespace cleave::graph

#endif // CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_OPTIMIZERS_H
