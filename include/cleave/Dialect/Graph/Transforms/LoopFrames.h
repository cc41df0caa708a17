//===- LoopFrames.h - TensorFlow v1 while loops -----------------*- C++ -*-===//
//
// tf.while_loop in TensorFlow 1.x writes a loop as a frame of dataflow
// nodes (Enter, Merge, Switch, LoopCond, NextIteration, Exit) rather than a
// While node over functions. This finds those frames and builds their
// functional form (cond and body library functions over the loop's state),
// as TensorFlow's functionalize_control_flow does, for passes that handle
// While nodes only.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_LOOPFRAMES_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_LOOPFRAMES_H

#include "cleave/Dialect/Graph/IR/Graph.h"

#include <string>

namespace cleave::graph {

/// One loop variable: Enter -> Merge -> Switch -> Exit (Switch's false
/// output; absent when the loop's result is unused) and Switch's true
/// output -> body -> NextIteration -> Merge.
struct LoopVariable {
  NodeOp enter, merge, switchNode, exit, nextIteration;
};

/// A v1 while loop: the frame that its Enters open.
struct LoopFrame {
  std::string name; ///< the Enters' frame_name
  llvm::SmallVector<LoopVariable> variables;
  /// Constant Enters (is_constant): values the loop reads, never changes.
  llvm::SmallVector<NodeOp> invariants;
  NodeOp loopCond;
  /// Every node of the loop, those of loops nested in it included, in block
  /// order.
  llvm::SmallVector<NodeOp> members;

  /// The state of the functional form: the variables' initial values, then
  /// the invariants.
  llvm::SmallVector<mlir::Value> getInputs() const;
  /// The variables' Exits, for those that have one.
  llvm::SmallVector<NodeOp> getExits() const;
  /// Where diagnostics about the loop point: its first Exit, else its first
  /// Enter.
  NodeOp getAnchor() const;
};

/// The v1 loops at the top level of `block` (a graph's or a function's
/// body); loops nested in a loop's body are members of it. Diagnoses nodes
/// with inputs from two frames and frames that are not loops as
/// tf.while_loop builds them.
mlir::FailureOr<llvm::SmallVector<LoopFrame>>
findLoopFrames(mlir::Block &block);

/// A loop's functional form: While's `cond` (state -> bool) and `body`
/// (state -> state) in the module's library.
struct FunctionalLoop {
  FuncOp cond, body;
};

/// Builds `loop`'s cond and body functions (`_functionalize_cond`,
/// `_functionalize_body`, made unique), copying the loop's nodes into them.
/// Nested loops stay v1 loops inside the body. The loop itself is left as
/// it is.
mlir::FailureOr<FunctionalLoop> functionalizeLoop(const LoopFrame &loop,
                                                  mlir::ModuleOp module);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_LOOPFRAMES_H
