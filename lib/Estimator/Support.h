//===- Support.h - what the Estimator library's files share -----*- C++ -*-===//
//
// Lookups in a mode's graph (nodes, tensors, variables and their
// initializers) and the Python-style formatting of TensorFlow's messages
// and log lines.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_SUPPORT_H
#define CLEAVE_LIB_ESTIMATOR_SUPPORT_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cleave::estimator {

llvm::Error makeError(const llvm::Twine &message);

/// Calls `fn` on every node of the module's top-level graphs.
template <typename Fn> void walkNodes(mlir::ModuleOp module, Fn fn) {
  for (auto graphOp : module.getOps<graph::GraphOp>())
    graphOp.walk([&](graph::NodeOp node) { fn(node); });
}

/// The top-level node named `name`, or null.
graph::NodeOp findNode(mlir::ModuleOp module, llvm::StringRef name);
/// Whether the tensor ("node" or "node:port") exists.
bool hasTensor(mlir::ModuleOp module, llvm::StringRef tensor);
/// The dtype of the tensor, 0 when unknown.
int32_t getTensorDType(mlir::ModuleOp module, llvm::StringRef tensor);
/// The variable nodes of the graph, in order.
std::vector<graph::NodeOp> getVariables(mlir::ModuleOp module);

/// The module's variables the checkpoint at `prefix` holds under their own
/// names, but `except`, as Session::restoreMapped's (variable, key) pairs;
/// `missing` (when given) gets the other variables' names.
llvm::Expected<std::vector<std::pair<std::string, std::string>>>
mapVariablesByName(mlir::ModuleOp module, llvm::StringRef prefix,
                   llvm::StringRef except = "",
                   std::vector<std::string> *missing = nullptr);
/// The initializer of a variable: its `<name>/Assign`, else the first
/// Assign or AssignVariableOp of it (null: none).
graph::NodeOp getInitializer(graph::NodeOp variable);
/// The nodes `op`'s control inputs name (an init NoOp's initializers).
llvm::StringSet<> getControlInputNames(graph::NodeOp op);

/// The latest checkpoint the `checkpoint` state file in `modelDir`
/// records; empty when there is none (a fresh model directory).
llvm::Expected<std::string> findLatestCheckpoint(llvm::StringRef modelDir);
/// The global step a checkpoint prefix ("<dir>/model.ckpt-<step>") names.
std::optional<int64_t> getCheckpointStep(llvm::StringRef prefix);
/// `<modelDir>/model.ckpt-<step>`: the prefix Estimator saves a step as.
std::string getCheckpointPrefix(llvm::StringRef modelDir, int64_t step);

/// A Python list of strings as str() prints it: "['a', 'b']".
std::string pythonList(llvm::ArrayRef<std::string> items);
/// A value as TensorFlow's log lines print it (numpy's str()).
std::string formatValue(const Tensor &tensor);
double secondsSince(std::chrono::steady_clock::time_point start);

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_SUPPORT_H
