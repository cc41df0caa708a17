//===- KernelHost.h - what the reference kernels run in ---------*- C++ -*-===//
//
// The reference kernels compute one node's outputs from its input tensors
// and attrs, with TensorFlow's semantics. They are the oracle's core, and
// sit beneath the lowering, which folds constants with them. What a kernel
// needs beyond its inputs (variables, function calls, channels, limits)
// it asks of a KernelHost: the executor (cleave/Executor/Executor.h) for
// runs, the ConstantEvaluator for folding, as TensorFlow's kernels ask
// their OpKernelContext.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_KERNELHOST_H
#define CLEAVE_KERNELS_KERNELHOST_H

#include "cleave/Ops/OpRegistry.h"
#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <vector>

namespace cleave::graph {
class NodeOp;
} // namespace cleave::graph

namespace cleave::checkpoint {
class EventFileWriter;
} // namespace cleave::checkpoint

namespace cleave::runtime {
class Rendezvous;
} // namespace cleave::runtime

namespace cleave::interp {

/// A TensorArray: its elements (invalid tensors where not yet written).
struct TensorArray {
  int32_t dtype = 0;
  bool dynamicSize = false;
  std::vector<Tensor> elements;
};

/// Tensors a run reads and writes: variables by name (VariableV2 and
/// VarHandleOp share the namespace of their `shared_name`, or node name).
struct State {
  llvm::StringMap<Tensor> variables;
  /// How often each stateful node that needs to know has run: random ops
  /// draw new numbers each run, reproducibly; Print honours first_n.
  llvm::StringMap<uint64_t> nodeRuns;
  /// TensorArrays by handle: each run of a TensorArrayV3 node makes one.
  llvm::StringMap<TensorArray> tensorArrays;
  /// Summary writers by resource name (SummaryKernels.cpp).
  llvm::StringMap<std::shared_ptr<checkpoint::EventFileWriter>> summaryWriters;
};

/// What a kernel runs in.
class KernelHost {
public:
  virtual ~KernelHost();

  /// The variables kernels read and write.
  virtual State &getState() = 0;

  /// Calls `function` of the module's library on `args` (its data
  /// arguments, in order), as a function call node would. `bindings` gives
  /// the values of the body's attr placeholders; errors are reported on
  /// `caller`.
  virtual mlir::FailureOr<std::vector<Tensor>>
  call(llvm::StringRef function, llvm::ArrayRef<Tensor> args,
       mlir::DictionaryAttr bindings, mlir::Operation *caller) = 0;

  /// Runs a call of a function auto-clustering encapsulated
  /// (`_XlaCompiledKernel = true` on `caller`) with compiled code. Returns
  /// nullopt, having changed nothing, to leave the call to `call`.
  virtual mlir::FailureOr<std::optional<std::vector<Tensor>>>
  callCompiled(mlir::Operation *caller, mlir::Operation *function,
               llvm::ArrayRef<Tensor> args) {
    return std::optional<std::vector<Tensor>>();
  }

  /// Where host transfers, infeed and outfeed queues and collectives meet.
  virtual runtime::Rendezvous &getRendezvous() = 0;

  /// A loop (v1 frames or While) that runs this many iterations is an error.
  virtual int64_t getMaxIterations() const = 0;

  /// Whether kernels may touch the file system (SaveV2, RestoreV2,
  /// MergeV2Checkpoints).
  virtual bool hasFileAccess() const = 0;
};

/// Whether there is a reference kernel for `opType` (calls by function
/// name aside; Merge and Switch, which only an executor runs, count).
bool hasKernel(llvm::StringRef opType);
/// The family of the file that holds `opType`'s kernel (Merge and Switch
/// are ControlFlow); none when it has no kernel.
std::optional<ops::OpFamily> lookupKernelFamily(llvm::StringRef opType);

/// Runs `node`'s kernel (or, for a node whose op type names a library
/// function, the call) in `host`: the node's outputs, or failure with a
/// diagnostic on the node. A tensor too large for memory is the node's
/// error (TensorFlow's OOM message), not the end of the process.
mlir::FailureOr<std::vector<Tensor>> runKernel(KernelHost &host,
                                               graph::NodeOp node,
                                               std::vector<Tensor> inputs,
                                               mlir::DictionaryAttr bindings);

/// Fails with TensorFlow's error ("Op type not registered ...") when
/// `node`'s op is neither registered nor a library function.
mlir::LogicalResult checkOpIsKnown(graph::NodeOp node);

/// Whether `t` has a shape `type` admits: its rank, where ranked, and each
/// static dimension.
bool fitsShape(const Tensor &t, mlir::Type type);

/// The start of a call of `function` on `args` from `caller`, `depth`
/// calls deep: the function's body, with `bound` mapping each data argument
/// to its tensor. Fails with a diagnostic on `caller` when the function is
/// missing or uncallable, the calls nest too deep, or `args` do not match
/// the arguments in number or dtype.
mlir::FailureOr<mlir::Block *>
enterFunction(mlir::ModuleOp module, llvm::StringRef function,
              llvm::ArrayRef<Tensor> args, mlir::Operation *caller,
              unsigned depth, llvm::DenseMap<mlir::Value, Tensor> &bound);

/// The nodes validateNodeDef passed, each with the DataType its data
/// inputs must carry (getExpectedInputDTypes; 0: any).
using ValidatedNodes =
    llvm::DenseMap<mlir::Operation *, llvm::SmallVector<int32_t>>;

/// validateNodeDef, once per node: `validated` holds the nodes that
/// passed.
mlir::LogicalResult validateOnce(graph::NodeOp node, ValidatedNodes &validated);

/// Whether `node` may run on `inputs`, failing with a diagnostic when not:
/// it passes validateOnce, every input has the dtype its signature gives
/// (kernels read their inputs as that type: a float where a resource or
/// a string is expected must be an error, not a bad read), and no data
/// input is a ref variable nothing assigned yet (which only Assign and
/// IsVariableInitialized may take; TensorFlow's messages).
mlir::LogicalResult checkNodeCanRun(graph::NodeOp node,
                                    llvm::ArrayRef<Tensor> inputs,
                                    ValidatedNodes &validated);

} // namespace cleave::interp

#endif // CLEAVE_KERNELS_KERNELHOST_H
