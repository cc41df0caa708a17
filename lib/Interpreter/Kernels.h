//===- Kernels.h - reference kernels of the interpreter ---------*- C++ -*-===//
//
// Private to CleaveInterpreter. A kernel computes one node's outputs from
// its input tensors and attrs; each family file registers its kernels in a
// table, as lib/Ops does for signatures and shape functions.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_INTERPRETER_KERNELS_H
#define CLEAVE_LIB_INTERPRETER_KERNELS_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Interpreter/Interpreter.h"

#include <optional>
#include <utility>

namespace cleave::interp {

class KernelContext {
public:
  KernelContext(graph::NodeOp node, std::vector<Tensor> inputs, State &state)
      : node(node), inputs(std::move(inputs)), state(state),
        outputs(node.getOutputs().size()) {}

  graph::NodeOp node;
  std::vector<Tensor> inputs;
  State &state;
  std::vector<Tensor> outputs;

  /// An error on the node: "Node 'name': ...".
  mlir::InFlightDiagnostic error() {
    return node.emitError() << "Node '" << node.getName() << "': ";
  }

  /// The DataType of a `type` attr, or of the result element type.
  std::optional<int32_t> getType(llvm::StringRef name);
  std::optional<int64_t> getInt(llvm::StringRef name);
  std::optional<bool> getBool(llvm::StringRef name);
  std::optional<std::string> getString(llvm::StringRef name);
  std::optional<std::vector<int64_t>> getIntList(llvm::StringRef name);
  /// A `tensor` attr decoded to a host tensor.
  mlir::FailureOr<Tensor> getTensor(llvm::StringRef name);
};

using Kernel = mlir::LogicalResult (*)(KernelContext &ctx);
using KernelTable = std::vector<std::pair<llvm::StringRef, Kernel>>;

KernelTable getArrayKernels();
KernelTable getMathKernels();
KernelTable getNNKernels();
KernelTable getStateKernels();
KernelTable getRandomKernels();

/// The kernel of `opType`, or null.
Kernel lookupKernel(llvm::StringRef opType);

/// Elements of `t` as int64 (integer tensors), for shapes and axes.
std::vector<int64_t> toInts(const Tensor &t);

} // namespace cleave::interp

#endif // CLEAVE_LIB_INTERPRETER_KERNELS_H
