//===- Checkpointing.h - variables to and from checkpoints ------*- C++ -*-===//
//
// Which variables of a graph a checkpoint holds and under which names, as
// TensorFlow's Saver decides (the tensor_names of the graph's SaveV2 nodes,
// or the variables' node names when the graph has no saver), and restoring
// and saving the values of a run's variables (interp::State) in TensorFlow's
// V2 checkpoint format.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_CHECKPOINTING_H
#define CLEAVE_RUNTIME_CHECKPOINTING_H

#include "cleave/Executor/Executor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::runtime {

/// One variable (or one partition of a partitioned variable) as a
/// checkpoint holds it.
struct CheckpointedVariable {
  /// The name the run's State keys it by (getVariableName: shared_name or
  /// node name).
  std::string variable;
  /// The variable's node, for messages.
  std::string node;
  /// The checkpoint key (Saver's tensor name).
  std::string key;
  /// TensorFlow DataType and declared shape (nullopt when not fully known).
  int32_t dtype = 0;
  std::optional<std::vector<int64_t>> shape;
  /// For a partition: TensorFlow's "<full shape> <slice>" spec (e.g.
  /// "10 4 0,5:-"); empty for a whole variable.
  std::string shapeAndSlice;
};

/// A variable node as a checkpoint holds it whole, under its node name.
CheckpointedVariable describeVariable(graph::NodeOp node);

/// The variables a checkpoint of `module`'s graph holds: the inputs of its
/// SaveV2 nodes with their tensor names and slices; without SaveV2 nodes,
/// every variable under its node name (tf.compat.v1.train.Saver's default).
/// Errors name the node that cannot be resolved.
llvm::Expected<std::vector<CheckpointedVariable>>
listCheckpointedVariables(mlir::ModuleOp module);

/// Every variable node of the graph (VariableV2, Variable, VarHandleOp),
/// with its dtype and declared shape, in graph order; `key` is its node
/// name. For graph-opt --list-variables.
std::vector<CheckpointedVariable> listVariables(mlir::ModuleOp module);

/// The checkpoint prefix `path` names: `path` itself, or for a directory
/// the latest checkpoint its `checkpoint` state file records.
llvm::Expected<std::string> resolveCheckpointPrefix(llvm::StringRef path);

/// Restores every variable of `variables` from checkpoint `prefix` into
/// `state`. All values are read and checked (present, dtype, shape) before
/// any is stored, so a failed restore leaves `state` unchanged.
llvm::Error restoreVariables(llvm::ArrayRef<CheckpointedVariable> variables,
                             llvm::StringRef prefix, interp::State &state);

/// Saves the values of `variables` in `state` as checkpoint `prefix`
/// (written to temporary files and renamed into place). Every variable
/// must have a value.
llvm::Error saveVariables(llvm::ArrayRef<CheckpointedVariable> variables,
                          const interp::State &state, llvm::StringRef prefix);

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_CHECKPOINTING_H
