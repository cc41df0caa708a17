//===- ConstantEvaluator.h - nodes computed at compile time -----*- C++ -*-===//
//
// Computes a node whose inputs are constants with its reference kernel, as
// the lowering folds constants. Functional control flow and calls
// (StatelessIf, StatelessWhile, PartitionedCall, SymbolicGradient) run
// their functions' bodies here too, node by node in dependency order: a
// function folds only when every node it holds could (no state, no v1
// control flow), so no executor is needed.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CONSTANTEVALUATOR_H
#define CLEAVE_KERNELS_CONSTANTEVALUATOR_H

#include "cleave/Kernels/KernelHost.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace cleave::runtime {
class ExecutionLock;
} // namespace cleave::runtime

namespace cleave::interp {

class ConstantEvaluator : public KernelHost {
public:
  /// Evaluates nodes of `module`; a loop that runs `maxIterations`
  /// iterations is an error, as it is in compiled code.
  ConstantEvaluator(mlir::ModuleOp module, int64_t maxIterations);
  ~ConstantEvaluator() override;

  /// Whether `node` may be computed at compile time: it has a kernel and no
  /// side effects, is neither a placeholder nor v1 control flow, and every
  /// library function it calls, directly or not, holds only such nodes.
  bool canEvaluate(graph::NodeOp node);

  /// `node`'s outputs for `inputs`, its data inputs, after the checks a run
  /// makes (attrs, input dtypes). The node must pass canEvaluate. Errors
  /// are diagnostics on the node, or on a node of a function it calls.
  mlir::FailureOr<std::vector<Tensor>> evaluate(graph::NodeOp node,
                                                std::vector<Tensor> inputs);

  State &getState() override { return state; }
  /// Runs the nodes `function`'s results need, in dependency order.
  mlir::FailureOr<std::vector<Tensor>> call(llvm::StringRef function,
                                            llvm::ArrayRef<Tensor> args,
                                            mlir::DictionaryAttr bindings,
                                            mlir::Operation *caller) override;
  runtime::Rendezvous &getRendezvous() override { return *rendezvous; }
  int64_t getMaxIterations() const override { return maxIterations; }
  bool hasFileAccess() const override { return false; }

private:
  bool canEvaluateFunction(llvm::StringRef name);
  bool callsOnlyEvaluableFunctions(mlir::Attribute attr);

  mlir::ModuleOp module;
  int64_t maxIterations;
  State state;
  std::unique_ptr<runtime::ExecutionLock> lock;
  std::unique_ptr<runtime::Rendezvous> rendezvous;
  ValidatedNodes validated;
  /// Per library function, whether it may run here (false while checked,
  /// so that recursion does not fold).
  llvm::StringMap<bool> evaluableFunctions;
  unsigned callDepth = 0;
};

} // namespace cleave::interp

#endif // CLEAVE_KERNELS_CONSTANTEVALUATOR_H
