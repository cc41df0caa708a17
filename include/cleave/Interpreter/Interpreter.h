//===- Interpreter.h - reference interpreter for graphs ---------*- C++ -*-===//
//
// Runs the top-level graph of a graph-dialect module on the CPU with
// TensorFlow's semantics, simply and obviously rather than fast: it is the
// oracle compiled code is checked against. Variables persist across runs.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INTERPRETER_INTERPRETER_H
#define CLEAVE_INTERPRETER_INTERPRETER_H

#include "cleave/Ops/OpRegistry.h"
#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cleave::runtime {
class ExecutionLock;
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
};

/// Whether the interpreter has a kernel for `opType` (calls by function
/// name aside).
bool hasKernel(llvm::StringRef opType);
/// The family of the file that holds `opType`'s kernel (Merge and Switch,
/// the executor's own, are ControlFlow); none when it has no kernel.
std::optional<ops::OpFamily> lookupKernelFamily(llvm::StringRef opType);

struct HostProgram;
class HostProgramCompiler;
class Interpreter;

/// Runs calls of functions that auto-clustering encapsulated
/// (`_XlaCompiledKernel = true` on the call node) with compiled code
/// instead of interpreting their bodies. Without a handler such calls are
/// interpreted, which gives the same results.
class CompiledCallHandler {
public:
  virtual ~CompiledCallHandler() = default;
  /// Runs `function` (a graph.func) for `caller` on `args`, reading and
  /// updating the variables of `interpreter.getState()`. Errors are
  /// emitted on the caller or the function's nodes. Returns nullopt,
  /// having changed nothing, when it leaves this call to the interpreter
  /// (the function does not compile for these arguments). The native code
  /// itself may run through `interpreter.runUnlocked`.
  virtual mlir::FailureOr<std::optional<std::vector<Tensor>>>
  call(Interpreter &interpreter, mlir::Operation *caller,
       mlir::Operation *function, llvm::ArrayRef<Tensor> args) = 0;
};

class Interpreter {
public:
  explicit Interpreter(mlir::ModuleOp module);
  ~Interpreter();

  /// Runs the nodes that `fetches` ("node" or "node:port") and `targets`
  /// (node names, run for effect) need, with `feeds` replacing tensors.
  /// Errors are emitted as diagnostics on the nodes.
  mlir::FailureOr<std::vector<Tensor>>
  run(const std::vector<std::pair<std::string, Tensor>> &feeds,
      llvm::ArrayRef<std::string> fetches,
      llvm::ArrayRef<std::string> targets);

  /// Calls `function` of the module's library on `args` (its data
  /// arguments, in order), as a function call node would: the nodes its
  /// results and control outputs need run, and so do its stateful nodes.
  /// `bindings` gives the values of the body's attr placeholders; errors
  /// are reported on `caller`.
  mlir::FailureOr<std::vector<Tensor>> call(llvm::StringRef function,
                                            llvm::ArrayRef<Tensor> args,
                                            mlir::DictionaryAttr bindings,
                                            mlir::Operation *caller);

  /// Runs the reference kernel of one node (a graph.node) on `inputs`,
  /// its data inputs, outside any run: what constant folding needs.
  mlir::FailureOr<std::vector<Tensor>> evaluate(mlir::Operation *node,
                                                std::vector<Tensor> inputs);

  /// The variables kernels read and write: the run's, or, inside a
  /// replica, that replica's copy (see runReplicas).
  State &getState();

  void setCompiledCallHandler(CompiledCallHandler *handler) {
    compiledCalls = handler;
  }
  CompiledCallHandler *getCompiledCallHandler() const { return compiledCalls; }

  /// A loop (v1 frames or While) that runs this many iterations is an error:
  /// a loop that never ends must not hang the oracle.
  void setMaxIterations(int64_t limit) { maxIterations = limit; }
  int64_t getMaxIterations() const { return maxIterations; }

  /// Whether kernels may touch the file system (the saver's SaveV2,
  /// RestoreV2 and MergeV2Checkpoints); fuzzers running arbitrary graphs
  /// turn it off, and those kernels then fail.
  void setFileAccess(bool allowed) { fileAccess = allowed; }
  bool hasFileAccess() const { return fileAccess; }

  /// A host transfer or collective that waits longer than this many
  /// seconds fails, naming its channel and replica: a deadlocked program
  /// must not hang the oracle.
  void setChannelTimeout(double seconds) { channelTimeout = seconds; }

  /// Replicas, clusters and nodes that wait on the device run on threads
  /// of their own, one kernel at a time under this lock; they meet on the
  /// rendezvous's channels.
  runtime::ExecutionLock &getExecutionLock() { return *executionLock; }
  runtime::Rendezvous &getRendezvous() { return *rendezvous; }
  /// Moves what `previous`'s infeed and outfeed queues hold behind what
  /// this interpreter's hold. Device queues outlive a run, as variables do:
  /// graph-run's init run may enqueue what its steps dequeue.
  void takeDeviceQueuesFrom(Interpreter &previous);
  /// Whether `node` waits on another part of the run: a receive from a
  /// channel or queue (host receives and outfeed dequeues, and device-side
  /// receives and infeed dequeues outside clusters), or a call of a
  /// function holding one. Such nodes run on threads of their own, so that
  /// the senders they wait for can run.
  bool waitsOnChannel(mlir::Operation *node);
  /// Runs `work` without the execution lock, so that the kernels of other
  /// replicas run meanwhile: `work` must touch neither the interpreter nor
  /// its state (compiled device code on buffers of its own).
  void runUnlocked(llvm::function_ref<void()> work);
  /// How many replicas run side by side now (0 outside a replicate).
  unsigned getReplicasRunning();

  /// Runs graphs without v1 control flow as host programs (see
  /// HostProgram.h: a fixed order, no dataflow executor) instead of on the
  /// executor; `compiler`, when given, compiles them to native code. A
  /// program is built (and compiled) once per kind of run.
  void setHostPrograms(bool enabled, HostProgramCompiler *compiler = nullptr);
  /// For the last run: its host program, or null with `reason` saying why
  /// it ran on the executor.
  const HostProgram *getLastHostProgram(std::string &reason) const;

private:
  mlir::ModuleOp module;
  State state;
  int64_t maxIterations = 1000000;
  unsigned callDepth = 0;
  CompiledCallHandler *compiledCalls = nullptr;
  double channelTimeout = 300;
  bool fileAccess = true;
  std::unique_ptr<runtime::ExecutionLock> executionLock;
  std::unique_ptr<runtime::Rendezvous> rendezvous;
  llvm::DenseMap<mlir::Operation *, bool> functionsWaiting;
  bool hostProgramsEnabled = false;
  HostProgramCompiler *hostProgramCompiler = nullptr;
  struct HostPrograms;
  std::unique_ptr<HostPrograms> hostPrograms;
};

} // namespace cleave::interp

#endif // CLEAVE_INTERPRETER_INTERPRETER_H
