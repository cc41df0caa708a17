//===- Executor.h - runs graphs as TensorFlow's executor does ---*- C++ -*-===//
//
// Runs the top-level graph of a graph-dialect module on the CPU with
// TensorFlow's semantics, node by node with the reference kernels. Alone
// it is the reference interpreter, the oracle compiled code is checked
// against; the runtime (cleave/Runtime/Session.h) gives it compiled
// clusters and host programs. Variables persist across runs.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_EXECUTOR_EXECUTOR_H
#define CLEAVE_EXECUTOR_EXECUTOR_H

#include "cleave/Kernels/KernelHost.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <atomic>
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

struct HostProgram;
class HostProgramCompiler;
class Executor;

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
  call(Executor &interpreter, mlir::Operation *caller,
       mlir::Operation *function, llvm::ArrayRef<Tensor> args) = 0;
};

class Executor : public KernelHost {
public:
  explicit Executor(mlir::ModuleOp module);
  ~Executor() override;

  /// Runs the nodes that `fetches` ("node" or "node:port") and `targets`
  /// (node names, run for effect) need, with `feeds` replacing tensors.
  /// Errors are emitted as diagnostics on the nodes.
  mlir::FailureOr<std::vector<Tensor>>
  run(const std::vector<std::pair<std::string, Tensor>> &feeds,
      llvm::ArrayRef<std::string> fetches, llvm::ArrayRef<std::string> targets);

  /// Calls `function` of the module's library on `args` (its data
  /// arguments, in order), as a function call node would: the nodes its
  /// results and control outputs need run, and so do its stateful nodes.
  /// `bindings` gives the values of the body's attr placeholders; errors
  /// are reported on `caller`.
  mlir::FailureOr<std::vector<Tensor>> call(llvm::StringRef function,
                                            llvm::ArrayRef<Tensor> args,
                                            mlir::DictionaryAttr bindings,
                                            mlir::Operation *caller) override;

  /// Through the CompiledCallHandler, when there is one.
  mlir::FailureOr<std::optional<std::vector<Tensor>>>
  callCompiled(mlir::Operation *caller, mlir::Operation *function,
               llvm::ArrayRef<Tensor> args) override;

  /// The variables kernels read and write: the run's, or, inside a
  /// replica, that replica's copy (see runReplicas).
  State &getState() override;

  void setCompiledCallHandler(CompiledCallHandler *handler) {
    compiledCalls = handler;
  }

  /// A loop (v1 frames or While) that runs this many iterations is an error:
  /// a loop that never ends must not hang the oracle.
  void setMaxIterations(int64_t limit) { maxIterations = limit; }
  int64_t getMaxIterations() const override { return maxIterations; }

  /// Whether kernels may touch the file system (the saver's SaveV2,
  /// RestoreV2 and MergeV2Checkpoints); fuzzers running arbitrary graphs
  /// turn it off, and those kernels then fail.
  void setFileAccess(bool allowed) { fileAccess = allowed; }
  bool hasFileAccess() const override { return fileAccess; }

  /// A host transfer or collective that waits longer than this many
  /// seconds fails, naming its channel and replica: a deadlocked program
  /// must not hang the oracle.
  void setChannelTimeout(double seconds) { channelTimeout = seconds; }

  /// Replicas, clusters and nodes that wait on the device run on threads
  /// of their own, one kernel at a time under this lock; they meet on the
  /// rendezvous's channels.
  runtime::ExecutionLock &getExecutionLock() { return *executionLock; }
  runtime::Rendezvous &getRendezvous() override { return *rendezvous; }
  /// Moves what `previous`'s infeed and outfeed queues hold behind what
  /// this interpreter's hold. Device queues outlive a run, as variables do:
  /// graph-run's init run may enqueue what its steps dequeue.
  void takeDeviceQueuesFrom(Executor &previous);
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
  /// How many devices' compiled clusters the current run runs side by side
  /// (1 when its compiled code is on one device): each gets its share of
  /// the cores.
  unsigned getParallelDevices() const { return parallelDevices; }
  void setParallelDevices(unsigned n) { parallelDevices = std::max(1u, n); }

  /// Runs graphs without v1 control flow as host programs (see
  /// HostProgram.h: a fixed order, no dataflow executor) instead of on the
  /// executor; `compiler`, when given, compiles them to native code. A
  /// program is built (and compiled) once per kind of run.
  void setHostPrograms(bool enabled, HostProgramCompiler *compiler = nullptr);
  /// For the last run: its host program, or null with `reason` saying why
  /// it ran on the executor.
  const HostProgram *getLastHostProgram(std::string &reason) const;

  /// The virtual CPU devices (graph-towers' /device:CPU:<k>) whose
  /// compiled clusters `units` call: each device's run on a thread of its
  /// own, so that towers on several devices run in parallel.
  static unsigned countCompiledDevices(llvm::ArrayRef<mlir::Operation *> units);

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
  std::atomic<unsigned> parallelDevices{1};
  bool hostProgramsEnabled = false;
  HostProgramCompiler *hostProgramCompiler = nullptr;
  struct HostPrograms;
  std::unique_ptr<HostPrograms> hostPrograms;
};

} // namespace cleave::interp

#endif // CLEAVE_EXECUTOR_EXECUTOR_H
