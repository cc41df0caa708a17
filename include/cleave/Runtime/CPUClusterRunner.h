//===- CPUClusterRunner.h - compiled clusters on the host CPU ---*- C++ -*-===//
//
// Runs the functions auto-clustering encapsulated with native code: each
// function is lowered (GraphToLinalg), compiled (CPU target) and cached per
// input signature: dtypes and shapes of the arguments, the values of the
// arguments that must be compile-time constants, the variables resource
// arguments name, and the shapes of the variables it reads. As XLA does,
// a new signature compiles anew; an unknown dimension never blocks
// compilation.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_CPUCLUSTERRUNNER_H
#define CLEAVE_RUNTIME_CPUCLUSTERRUNNER_H

#include "cleave/Executor/Executor.h"
#include "cleave/Target/CPU/CPUTarget.h"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace cleave::runtime {

class CPUClusterRunner : public interp::CompiledCallHandler {
public:
  CPUClusterRunner();
  ~CPUClusterRunner() override;

  /// Runs the call compiled. A cluster that does not compile for these
  /// arguments (an op or dtype without a lowering, shapes the lowering
  /// rejects) is left to the interpreter, unless strict.
  mlir::FailureOr<std::optional<std::vector<cleave::Tensor>>>
  call(interp::Executor &interpreter, mlir::Operation *caller,
       mlir::Operation *function, llvm::ArrayRef<cleave::Tensor> args) override;

  struct Statistics {
    unsigned compilations = 0;
    double compileSeconds = 0;
    uint64_t calls = 0;
  };
  const Statistics &getStatistics() const { return statistics; }

  /// Print the lowered (linalg) module of each compilation to `os`.
  void setDumpLinalg(llvm::raw_ostream *os) { dumpLinalg = os; }

  /// Compiled loops that run this many iterations fail, as the
  /// interpreter's do (set before the first call).
  void setMaxIterations(int64_t limit) { maxIterations = limit; }
  /// The CPU pipeline's choices (set before the first call).
  void setPipelineOptions(const cpu::CPUPipelineOptions &options) {
    pipelineOptions = options;
  }

  /// With `strict`, a cluster that does not compile is an error instead of
  /// being interpreted.
  void setStrict(bool isStrict) { strict = isStrict; }

  /// Whether other threads compute while compiled code runs (the replicas
  /// of a replicated graph): then no kernel thread spins between calls.
  void setSharesCores(bool shares) { sharesCores = shares; }

  /// Where to say which clusters are interpreted because they did not
  /// compile, and why (null: nowhere).
  void setNotes(llvm::raw_ostream *os) { notes = os; }
  /// Where to say what a compilation that took more than `seconds`
  /// compiled, each line after `prefix` (null: nowhere).
  void setSlowCompileNotes(llvm::raw_ostream *os, std::string prefix,
                           double seconds) {
    slowCompileNotes = os;
    notePrefix = std::move(prefix);
    slowCompileSeconds = seconds;
  }

private:
  struct Executable;
  struct FunctionCache;

  /// The variables of one state (the run's, or a replica's copy) that a
  /// compiled call reads and writes. Compiled code runs without the
  /// execution lock, between reading its variables and writing them back,
  /// so two calls that update one variable at once (the host sides of
  /// several replicas, say) would lose an update; as XLA's launch locks
  /// the resource variables of a cluster, a call holds its variables for
  /// its duration. Calls take all of theirs at once, so they never
  /// deadlock on each other.
  class VariableLocks {
  public:
    using Key = std::pair<const void *, std::string>;
    void acquire(const std::vector<Key> &keys);
    void release(const std::vector<Key> &keys);

  private:
    std::mutex mutex;
    std::condition_variable released;
    std::set<Key> held;
  };
  /// The compiled code for this call; null when it does not compile (and
  /// the runner is not strict).
  mlir::FailureOr<Executable *>
  getExecutable(mlir::Operation *caller, mlir::Operation *function,
                llvm::ArrayRef<cleave::Tensor> args, interp::State &state);

  /// By function (graph.func op): each run's graph has its own clusters.
  std::map<mlir::Operation *, std::unique_ptr<FunctionCache>> functions;
  VariableLocks variableLocks;
  Statistics statistics;
  llvm::raw_ostream *dumpLinalg = nullptr;
  int64_t maxIterations = 1000000;
  cpu::CPUPipelineOptions pipelineOptions;
  bool strict = false;
  bool sharesCores = false;
  llvm::raw_ostream *notes = nullptr;
  llvm::raw_ostream *slowCompileNotes = nullptr;
  std::string notePrefix;
  double slowCompileSeconds = 1;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_CPUCLUSTERRUNNER_H
