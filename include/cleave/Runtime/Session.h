//===- Session.h - running a graph, as TensorFlow's Session -----*- C++ -*-===//
//
// The embedding API: a graph (GraphDef, MetaGraphDef, SavedModel or MLIR)
// opened once and run many times with feeds, fetches and targets, on the
// reference interpreter or with its compilable clusters compiled for the
// host CPU; variables live in the session across runs and go to and from
// TensorFlow checkpoints. graph-run is a command line over this class.
//
//   auto session = runtime::Session::open("model_dir", context, {});
//   auto sig = (*session)->bindSignature("serving_default", {"x"}, {});
//   auto out = (*session)->run({{sig->feeds[0], x}}, sig->fetches, {});
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_SESSION_H
#define CLEAVE_RUNTIME_SESSION_H

#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace cleave {
struct GraphDefImportOptions;
} // namespace cleave

namespace cleave::runtime {

class CrossProcessReduce;

struct SessionOptions {
  enum class Backend {
    /// The reference interpreter runs every node.
    Interpreter,
    /// Compilable nodes form clusters compiled for the host CPU; the rest
    /// is interpreted.
    CPU,
  };
  Backend backend = Backend::CPU;

  /// With the CPU backend, how the orchestration around compiled code runs
  /// (graphs with v1 control flow always use the dataflow executor).
  enum class HostPrograms {
    /// A fixed order of runtime calls, compiled through LLVM.
    Compiled,
    /// The same order, stepped through by the runtime.
    Stepped,
    /// The interpreter's dataflow executor.
    Executor,
  };
  HostPrograms hostPrograms = HostPrograms::Compiled;

  /// The virtual CPU devices, /device:CPU:0 ... /device:CPU:<devices-1>
  /// (0: one per core). A node placed on a CPU device beyond them is an
  /// error; other device types are soft-placed on CPU 0. The compiled
  /// clusters of several devices run side by side.
  int64_t devices = 0;
  /// With the CPU backend, TensorFlow v1 control flow (Switch/Merge
  /// conditionals, Enter/Exit loops) is made functional before clustering
  /// (graph-functionalize-loops, then -conds), as TensorFlow's XLA path
  /// does, so that it compiles; the interpreter backend runs the graph as
  /// written.
  bool functionalizeControlFlow = true;
  /// A computation replicated once (num_replicas = 1) is formed into its
  /// replicate and host functions, and compiled, as one replicated several
  /// times is; by default it runs interpreted as the graph has it (a
  /// single-replica computation whose gradients have outside-compiled
  /// parts deadlocks when formed: docs/Replication.md).
  bool formSingleReplica = false;
  /// A loop that runs this many iterations fails.
  int64_t maxIterations = 1000000;
  /// Seconds a host transfer or collective of a replicated graph waits
  /// before it fails.
  double channelTimeoutSeconds = 300;
  /// Other processes whose replicas a cross-replica sum over every replica
  /// also sums over (synchronous training across processes; null: none).
  CrossProcessReduce *crossProcess = nullptr;
  /// With the CPU backend, a needed node whose op has no CPU lowering, or
  /// a cluster that does not compile, is an error instead of interpreted.
  bool strictCompile = false;

  /// Where to say which nodes each kind of run compiles and why the others
  /// are interpreted, and which clusters fall back (null: nowhere).
  llvm::raw_ostream *clusterNotes = nullptr;
  /// Where to say what a compilation that took more than a second compiled
  /// (null: nowhere), after notePrefix.
  llvm::raw_ostream *slowCompileNotes = nullptr;
  double slowCompileSeconds = 1;
  /// Where to print each compiled cluster as linalg on tensors.
  llvm::raw_ostream *linalgDump = nullptr;
  /// Where to print each kind of run's host program and its code.
  llvm::raw_ostream *hostProgramDump = nullptr;
  /// Prefixes each line the session writes to the streams above (a tool's
  /// "graph-run: ").
  std::string notePrefix;
};

/// An error already reported through the MLIR context's diagnostics (a
/// node that failed): callers print nothing more for it.
class ReportedError : public llvm::ErrorInfo<ReportedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
};

/// Writes `error` to `os` as "<prefix><message>" lines, except a
/// ReportedError, which the diagnostics have shown already.
void logError(llvm::Error error, llvm::raw_ostream &os,
              llvm::StringRef prefix = "");

/// bindSignature's error for a key the signature does not have.
class SignatureKeyError : public llvm::ErrorInfo<SignatureKeyError> {
public:
  static char ID;
  SignatureKeyError(bool isInput, std::string key, std::string message)
      : isInput(isInput), key(std::move(key)), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  /// An input key (else an output key).
  bool isInput;
  std::string key, message;
};

/// The tensors behind a SignatureDef's keys.
struct SignatureBinding {
  /// Tensor names ("node:port") of the requested input keys, in order.
  std::vector<std::string> feeds;
  /// Output keys (all of the signature's when none were requested) and
  /// their tensor names, in order.
  std::vector<std::string> fetchKeys, fetches;
  /// The signature's input keys that were not requested, sorted, with
  /// their tensor names.
  std::vector<std::pair<std::string, std::string>> missingInputs;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Session {
public:
  /// Reads the graph at `path` as the tools do (see loadGraphFile) and
  /// makes a session of it. Parse and import errors go to the context's
  /// diagnostic handler (a file that cannot be read, to stderr) and come
  /// back as a ReportedError.
  static llvm::Expected<std::unique_ptr<Session>>
  open(llvm::StringRef path, mlir::MLIRContext &context,
       const SessionOptions &options);
  static llvm::Expected<std::unique_ptr<Session>>
  open(llvm::StringRef path, mlir::MLIRContext &context,
       const SessionOptions &options,
       const GraphDefImportOptions &importOptions);

  /// A session of an imported graph; `path` is where it was read from
  /// (a SavedModel's variables and assets are found from it). A replicated
  /// computation is formed into its replicate and host functions here.
  static llvm::Expected<std::unique_ptr<Session>>
  create(mlir::OwningOpRef<mlir::ModuleOp> module, llvm::StringRef path,
         const SessionOptions &options);

  ~Session();

  mlir::ModuleOp getModule() const;
  /// Whether the graph runs a computation on more than one replica.
  bool isReplicated() const;

  /// Runs what `fetches` ("node" or "node:port") and `targets` (nodes run
  /// for effect) need, with `feeds` replacing tensors, and returns the
  /// fetched tensors. Each distinct set of feeds, fetches and targets is
  /// prepared (clustered and compiled) once and reused, as TensorFlow's
  /// executor cache; variables and device queues carry from run to run.
  /// Node errors are reported on the node (a ReportedError).
  llvm::Expected<std::vector<Tensor>> run(const NamedTensors &feeds,
                                          llvm::ArrayRef<std::string> fetches,
                                          llvm::ArrayRef<std::string> targets);

  /// The dtype of the tensor a feed named `tensorName` replaces (float
  /// when the graph does not say).
  int32_t getFeedDType(llvm::StringRef tensorName) const;

  /// The tensors behind signature `key`'s input keys `inputKeys` and
  /// output keys `outputKeys` (all outputs when empty). A key the
  /// signature lacks is a SignatureKeyError listing the keys there are
  /// (output keys are checked first).
  llvm::Expected<SignatureBinding>
  bindSignature(llvm::StringRef key, llvm::ArrayRef<std::string> inputKeys,
                llvm::ArrayRef<std::string> outputKeys) const;

  /// The variable nodes a checkpoint of the graph holds: the inputs of its
  /// SaveV2 nodes, else every variable (Saver's default). Errors name the
  /// node that cannot be resolved.
  llvm::Expected<std::vector<std::string>> getCheckpointedVariables();

  /// Restores the variables the graph's saver saves from a checkpoint
  /// prefix, or the latest checkpoint of a directory.
  llvm::Error restore(llvm::StringRef prefixOrDirectory);
  /// Restores the variable nodes `nodesAndKeys` name, each from the
  /// tensor its key names in checkpoint `prefix` (a directory: its latest
  /// checkpoint), as init_from_checkpoint and warm starts do. All are
  /// checked before any is stored.
  llvm::Error
  restoreMapped(llvm::StringRef prefixOrDirectory,
                llvm::ArrayRef<std::pair<std::string, std::string>>
                    nodesAndKeys);
  /// The value variable node `node` holds now; an error for a node that
  /// is not a variable of the graph or has no value yet.
  llvm::Expected<Tensor> readVariable(llvm::StringRef node);
  /// Assigns `value` to variable node `node`, as an assign op would: its
  /// dtype must be the variable's, and its shape the one the variable
  /// holds (when it holds one).
  llvm::Error writeVariable(llvm::StringRef node, Tensor value);
  /// For a graph read from a SavedModel, what TensorFlow's loader does
  /// after building it: restore the SavedModel's own variables (unless
  /// `restoreVariables` is false) and run its main op with its assets.
  /// Nothing for other graphs.
  llvm::Error loadSavedModel(bool restoreVariables = true);
  /// The checkpoint prefix of the SavedModel's own variables; empty for a
  /// graph read from elsewhere or a SavedModel without variables.
  std::string getSavedModelVariables() const;

  /// Saves the variables the graph's saver saves as checkpoint `prefix`
  /// and records it in its directory's `checkpoint` state file, keeping
  /// the newest `maxToKeep` (0: all); with `relativePaths`, by its name
  /// relative to the directory (Saver's save_relative_paths).
  llvm::Error save(llvm::StringRef prefix, unsigned maxToKeep,
                   bool relativePaths = false);
  /// Writes the variables the graph's saver saves as checkpoint `prefix`
  /// alone, recorded nowhere (a SavedModel's variables/variables).
  llvm::Error writeVariables(llvm::StringRef prefix);
  /// The saver's max_to_keep, else 5, as TensorFlow's Saver.
  unsigned getDefaultMaxToKeep() const;

  struct CompileStatistics {
    unsigned compilations = 0;
    double compileSeconds = 0;
  };
  CompileStatistics getCompileStatistics() const;

private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_SESSION_H
