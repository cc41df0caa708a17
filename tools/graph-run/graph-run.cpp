//===- graph-run.cpp - run a graph with the reference interpreter ---------===//
//
//   graph-run model.pbtxt --feed x=[[1,2],[3,4]] --feed y=@y.npy
//             --fetch sum [--target train] [--init init] [--steps N]
//             [--output-dir DIR] [--restore PREFIX] [--save PREFIX]
//   graph-run saved_model_dir --signature serving_default --feed x=[1,2]
//
// Fetches are printed as "name = dtype [shape] values"; with --output-dir
// each is also written as DIR/<name>.npy ('/' and ':' become '_'). A run
// goes: --init nodes, restore (--restore, or a SavedModel's variables),
// the SavedModel's main op, then --steps steps, saving with --save.
//
//===----------------------------------------------------------------------===//

#include "cleave/InitAll.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Runtime/Session.h"
#include "cleave/Runtime/TensorLiteral.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolDiagnostics.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Target/CPU/KernelLibrary.h"
#include "cleave/Tensor/Npy.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cfloat>
#include <chrono>
#include <cmath>

using namespace mlir;
using namespace cleave;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("graph-run options");
static cl::opt<std::string>
    inputFilename(cl::Positional, cl::Required,
                  cl::desc("<graph: .pb, .pbtxt or .mlir>"),
                  cl::cat(runCategory));
static cl::list<std::string>
    feedOpts("feed",
             cl::desc("name=value: a literal ([[1,2],[3,4]], 3.5, "
                      "true) or @file.npy"),
             cl::cat(runCategory));
static cl::list<std::string> fetchOpts("fetch",
                                       cl::desc("tensor to print: node[:port]"),
                                       cl::cat(runCategory));
static cl::list<std::string> targetOpts("target",
                                        cl::desc("node to run for effect"),
                                        cl::cat(runCategory));
static cl::list<std::string>
    initOpts("init", cl::desc("node run once before the steps (e.g. init)"),
             cl::cat(runCategory));
static cl::opt<unsigned> steps("steps", cl::desc("times to run the step"),
                               cl::init(1), cl::cat(runCategory));
static cl::opt<int64_t>
    maxIterations("max-iterations",
                  cl::desc("fail when a loop runs this many iterations"),
                  cl::init(1000000), cl::cat(runCategory));
static cl::opt<int64_t> devices(
    "devices",
    cl::desc("virtual CPU devices /device:CPU:0 ... /device:CPU:<N-1> the "
             "graph's nodes may be placed on; their compiled clusters run "
             "side by side (default 0: one per core)"),
    cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<bool> functionalizeControlFlow(
    "functionalize-control-flow",
    cl::desc("with --backend=cpu: make TensorFlow v1 control flow "
             "functional before clustering, so that it compiles (default "
             "true; =false leaves it to the interpreter)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<double> channelTimeout(
    "channel-timeout",
    cl::desc("seconds a host transfer or collective of a replicated graph "
             "waits before it fails (a deadlock, or a replica that failed)"),
    cl::init(300), cl::cat(runCategory));
using Backend = runtime::SessionOptions::Backend;
static cl::opt<Backend> backend(
    "backend", cl::desc("how nodes run"),
    cl::values(clEnumValN(Backend::Interpreter, "interpreter",
                          "the reference interpreter runs every node"),
               clEnumValN(Backend::CPU, "cpu",
                          "compilable nodes form clusters compiled to native "
                          "code for the host CPU; the rest is interpreted")),
    cl::init(Backend::CPU), cl::cat(runCategory));
static cl::opt<bool> dumpClusters(
    "dump-clusters",
    cl::desc("with --backend=cpu: print which nodes each run compiles, and "
             "why the others are interpreted"),
    cl::init(false), cl::cat(runCategory));
using HostProgramMode = runtime::SessionOptions::HostPrograms;
static cl::opt<HostProgramMode> hostProgramMode(
    "host-program",
    cl::desc("with --backend=cpu: how the orchestration around compiled code "
             "runs (graphs with v1 control flow always use the executor)"),
    cl::values(clEnumValN(HostProgramMode::Compiled, "compiled",
                          "a fixed order of runtime calls, compiled through "
                          "LLVM"),
               clEnumValN(HostProgramMode::Stepped, "stepped",
                          "the same order, stepped through by the runtime"),
               clEnumValN(HostProgramMode::Executor, "executor",
                          "the interpreter's dataflow executor")),
    cl::init(HostProgramMode::Compiled), cl::cat(runCategory));
static cl::opt<bool> dumpHostProgram(
    "dump-host-program",
    cl::desc("with --backend=cpu: print each kind of run's host program (the "
             "order its nodes, clusters and replicas run in) and its LLVM "
             "dialect code, or why it runs on the dataflow executor"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<bool> strictCompile(
    "strict-compile",
    cl::desc("with --backend=cpu: a needed node whose op has no CPU lowering, "
             "or a cluster that does not compile, is an error"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<bool> dumpLinalg(
    "dump-linalg",
    cl::desc("with --backend=cpu: print each compiled cluster as linalg on "
             "tensors, before code generation"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<unsigned> logEvery(
    "log-every",
    cl::desc("print a progress line (step, steps per second, time left, the "
             "first scalar fetch) to stderr every N steps (on a terminal a "
             "line redrawn in place is the default)"),
    cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<double> slowCompileSeconds(
    "slow-compile-seconds",
    cl::desc("say what a compilation compiled when it took longer than this"),
    cl::init(1.0), cl::Hidden, cl::cat(runCategory));
static cl::opt<bool> timing(
    "timing",
    cl::desc("print the time of each step and, with --backend=cpu, of "
             "compilation, to stderr"),
    cl::init(false), cl::cat(runCategory));
/// --threads. libLLVM registers an undocumented `threads` option of its
/// own, so ours replaces it when main starts (a second option of the same
/// name at static initialisation is a fatal error).
static cl::opt<int> &registerThreadsOption() {
  auto &options = cl::getRegisteredOptions();
  if (auto it = options.find("threads"); it != options.end())
    it->second->removeArgument();
  static cl::opt<int> threads(
      "threads",
      cl::desc("with --backend=cpu: threads of the compiled code and its "
               "library kernels (default 0: every core)"),
      cl::init(0), cl::cat(runCategory));
  return threads;
}
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("write fetches as .npy here (created if missing)"),
              cl::cat(runCategory));

static cl::opt<std::string> signatureKey(
    "signature",
    cl::desc("feed and fetch by the keys of this SignatureDef of the "
             "MetaGraphDef (without --fetch: all its outputs)"),
    cl::cat(runCategory));
static cl::opt<std::string> restorePath(
    "restore",
    cl::desc("restore the variables from this checkpoint prefix, or the "
             "latest checkpoint of this directory (default for a "
             "SavedModel: its variables/variables)"),
    cl::cat(runCategory));
static cl::opt<std::string>
    savePrefix("save",
               cl::desc("save the variables as a checkpoint with this "
                        "prefix after the last step"),
               cl::cat(runCategory));
static cl::opt<unsigned> saveEvery(
    "save-every",
    cl::desc("with --save: also save every N steps, as PREFIX-<step>"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<int> keepCheckpoints(
    "keep-checkpoints",
    cl::desc("with --save: checkpoints kept in the directory's state file, "
             "older ones deleted (default: the saver's max_to_keep, else 5; "
             "0 keeps all)"),
    cl::init(-1), cl::cat(runCategory));

/// Step times (the first step, which compiles, counted apart when there
/// are more) and compilation time, for benchmarks.
static void printTiming(std::vector<double> seconds,
                        const runtime::Session::CompileStatistics &stats) {
  llvm::errs() << llvm::format("graph-run: timing: first step %.3f ms",
                               seconds.front() * 1e3);
  if (seconds.size() > 1) {
    seconds.erase(seconds.begin());
    llvm::sort(seconds);
    llvm::errs() << llvm::format(
        "; later steps median %.3f ms, min %.3f ms, max %.3f ms (%zu steps)",
        seconds[seconds.size() / 2] * 1e3, seconds.front() * 1e3,
        seconds.back() * 1e3, seconds.size());
  }
  if (backend == Backend::CPU)
    llvm::errs() << llvm::format("; compiled %u clusters in %.3f s",
                                 stats.compilations, stats.compileSeconds);
  llvm::errs() << "\n";
}

/// Prints "graph-run: <context><message>" unless the error was reported as
/// a diagnostic already; returns the tool's exit code.
static int fail(llvm::Error error, const llvm::Twine &context = "") {
  runtime::logError(std::move(error), llvm::errs(),
                    ("graph-run: " + context).str());
  return 1;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "graph-run: " << message << "\n";
  return 1;
}

/// The session the command line asks for; null (the error printed) when it
/// cannot be had.
static std::unique_ptr<runtime::Session> openSession(MLIRContext &context,
                                                     llvm::SourceMgr &sources) {
  runtime::SessionOptions options;
  options.backend = backend;
  options.hostPrograms = hostProgramMode;
  options.maxIterations = maxIterations;
  options.devices = devices;
  options.functionalizeControlFlow = functionalizeControlFlow;
  options.channelTimeoutSeconds = channelTimeout;
  options.strictCompile = strictCompile;
  options.clusterNotes = dumpClusters ? &llvm::errs() : nullptr;
  options.slowCompileNotes = &llvm::errs();
  options.slowCompileSeconds = slowCompileSeconds;
  options.linalgDump = dumpLinalg ? &llvm::errs() : nullptr;
  options.hostProgramDump = dumpHostProgram ? &llvm::errs() : nullptr;
  options.notePrefix = "graph-run: ";
  OwningOpRef<ModuleOp> module =
      loadGraphFile(inputFilename, &context, sources, "graph-run",
                    getGraphDefImportOptionsFromCL());
  if (!module)
    return nullptr;
  auto session =
      runtime::Session::create(std::move(module), inputFilename, options);
  if (!session)
    return fail(session.takeError()), nullptr;
  return std::move(*session);
}

/// Converts a fed .npy of NumPy's default float64 (int64) to a float32
/// (int32) placeholder's dtype, warning that it did; an error for a value
/// that does not fit, naming the feed and the value.
static std::optional<std::string> convertNumpyDefault(Tensor &tensor,
                                                      int32_t want,
                                                      StringRef key,
                                                      StringRef file) {
  bool narrowFloat = tensor.dtype() == kDouble && want == kFloat;
  bool narrowInt = tensor.dtype() == kInt64 && want == kInt32;
  if (!narrowFloat && !narrowInt)
    return std::nullopt;
  Tensor converted(want, tensor.shape());
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    if (narrowInt) {
      int64_t v = tensor.data<int64_t>()[i];
      if (v < INT32_MIN || v > INT32_MAX)
        return "--feed " + key.str() + ": " + file.str() + " holds int64 " +
               std::to_string(v) + " at element " + std::to_string(i) +
               ", which int32 cannot hold";
      converted.data<int32_t>()[i] = int32_t(v);
    } else {
      double v = tensor.data<double>()[i];
      // A finite value past float32's range would become an infinity.
      if (std::isfinite(v) && std::fabs(v) > double(FLT_MAX))
        return "--feed " + key.str() + ": " + file.str() + " holds float64 " +
               llvm::formatv("{0}", llvm::format("%g", v)).str() +
               " at element " + std::to_string(i) +
               ", which float32 cannot hold";
      converted.data<float>()[i] = float(v);
    }
  }
  llvm::errs() << "graph-run: warning: --feed " << key << ": " << file
               << (narrowFloat ? " holds float64 (NumPy's default); converted "
                                 "to the placeholder's float32\n"
                               : " holds int64 (NumPy's default); converted "
                                 "to the placeholder's int32\n");
  tensor = converted;
  return std::nullopt;
}

/// The step's feeds and fetches: --feed values as tensors under the names
/// they replace, and the fetches with the keys they print under (a
/// signature's keys, or the tensor names).
struct StepIO {
  runtime::NamedTensors feeds;
  std::vector<std::string> fetches, fetchKeys;
};

static std::optional<StepIO> readStepIO(const runtime::Session &session) {
  StepIO io;
  std::vector<std::string> feedKeys;
  // A second value for the same tensor would silently win, whether it is
  // named alike or as `x` and `x:0` (signature keys are names, not
  // tensors).
  llvm::StringMap<std::string> tensorsFed;
  for (const std::string &feed : feedOpts) {
    auto [key, value] = StringRef(feed).split('=');
    if (key.empty() || value.empty())
      return fail("--feed expects name=value, got '" + feed + "'"),
             std::nullopt;
    std::string tensor = key.str();
    if (signatureKey.empty() && !key.contains(':'))
      tensor += ":0";
    auto [it, isNew] = tensorsFed.try_emplace(tensor, key.str());
    if (!isNew)
      return fail("--feed " + key + " is given twice" +
                  (it->second == key
                       ? std::string()
                       : " (as '" + it->second + "' and '" + key.str() + "')")),
             std::nullopt;
    feedKeys.push_back(key.str());
  }
  io.fetchKeys.assign(fetchOpts.begin(), fetchOpts.end());
  io.fetches = io.fetchKeys;
  std::vector<std::string> feedNames = feedKeys;
  if (!signatureKey.empty()) {
    auto binding = session.bindSignature(signatureKey, feedKeys, io.fetchKeys);
    if (!binding) {
      llvm::handleAllErrors(
          binding.takeError(),
          [](const runtime::SignatureKeyError &e) {
            fail((e.isInput ? "--feed " : "--fetch ") + e.key + ": " +
                 e.message);
          },
          [](const llvm::ErrorInfoBase &e) { fail(e.message()); });
      return std::nullopt;
    }
    // A signature runs with all its inputs, as TensorFlow Serving's.
    if (!binding->missingInputs.empty()) {
      std::string keys;
      for (auto &[key, tensor] : binding->missingInputs)
        keys += (keys.empty() ? "" : ", ") + key + " (" + tensor + ")";
      return fail("--signature " + signatureKey + ": no value for its input" +
                  (binding->missingInputs.size() == 1 ? " " : "s ") + keys +
                  "; feed " +
                  (binding->missingInputs.size() == 1 ? "it" : "each") +
                  " with --feed KEY=VALUE"),
             std::nullopt;
    }
    feedNames = binding->feeds;
    io.fetchKeys = binding->fetchKeys;
    io.fetches = binding->fetches;
  }
  for (auto [feed, name] : llvm::zip(feedOpts, feedNames)) {
    auto [key, value] = StringRef(feed).split('=');
    llvm::Expected<Tensor> tensor = Tensor();
    if (value.consume_front("@")) {
      auto bytes = llvm::MemoryBuffer::getFile(value);
      if (!bytes)
        return fail("--feed " + key + ": cannot open '" + value +
                    "': " + bytes.getError().message()),
               std::nullopt;
      std::string error;
      if (!readNpy((*bytes)->getBuffer(), *tensor, error))
        return fail("--feed " + key + ": " + value + ": " + error),
               std::nullopt;
      // NumPy's default dtypes (float64, int64) meet float32 and int32
      // placeholders: converted as session.run converts, with a warning;
      // integers that do not fit stay an error.
      int32_t want = session.getFeedDType(name);
      if (std::optional<std::string> problem =
              convertNumpyDefault(*tensor, want, key, value))
        return fail(*problem), std::nullopt;
    } else {
      tensor = runtime::parseTensorLiteral(value, session.getFeedDType(name));
      if (!tensor)
        return fail(tensor.takeError(), "--feed " + key + ": "), std::nullopt;
    }
    io.feeds.emplace_back(name, std::move(*tensor));
  }
  return io;
}

namespace {
/// The progress of a run of many steps: on a terminal a line on stderr
/// redrawn in place (cleared before anything else is printed), else a
/// line every --log-every steps.
class Progress {
public:
  explicit Progress(unsigned total)
      : total(total), start(std::chrono::steady_clock::now()),
        live(total > 1 && !logEvery && llvm::errs().is_displayed()) {}

  /// Clears the live line, so that a line printed next starts clean.
  void clear() {
    if (live && drawn)
      llvm::errs() << "\r\033[K";
    drawn = false;
  }

  /// After step `done` (1-based): the line, if one is due.
  void stepDone(unsigned done, const StepIO &io,
                const std::vector<Tensor> &results) {
    auto now = std::chrono::steady_clock::now();
    bool due =
        logEvery ? done % logEvery == 0 || done == total
                 : live && (now - lastDrawn > std::chrono::milliseconds(100) ||
                            done == total);
    if (!due)
      return;
    lastDrawn = now;
    double seconds = std::chrono::duration<double>(now - start).count();
    double rate = seconds > 0 ? done / seconds : 0;
    std::string line =
        llvm::formatv("step {0}/{1}, {2:f1} steps/s", done, total, rate);
    if (rate > 0 && done < total)
      line += llvm::formatv(", {0:f1} s left", (total - done) / rate).str();
    for (auto [name, tensor] : llvm::zip(io.fetchKeys, results))
      if (tensor.rank() == 0 &&
          (isFloatDType(tensor.dtype()) || isIntegerDType(tensor.dtype()))) {
        std::string value;
        llvm::raw_string_ostream(value)
            << llvm::format("%g", tensor.getAsDouble(0));
        line += ", " + name + " = " + value;
        break;
      }
    if (live) {
      llvm::errs() << "\r\033[Kgraph-run: " << line;
      drawn = true;
      if (done == total)
        clear();
    } else {
      llvm::errs() << "graph-run: " << line << "\n";
    }
    llvm::errs().flush();
  }

private:
  unsigned total;
  std::chrono::steady_clock::time_point start, lastDrawn;
  bool live, drawn = false;
};
} // namespace

/// Prints a step's fetches, and writes them under --output-dir after the
/// last step; false when a file cannot be written.
static bool reportFetches(unsigned step, const StepIO &io,
                          const std::vector<Tensor> &results) {
  for (auto [name, tensor] : llvm::zip(io.fetchKeys, results)) {
    // Whole lines, flushed: with 2>&1 nothing on stderr (timing, errors,
    // Print ops) lands inside one.
    std::string line = steps > 1 ? "step " + std::to_string(step) + ": " : "";
    line += name + " = " + tensor.toString() + "\n";
    llvm::outs() << line;
    llvm::outs().flush();
    if (outputDir.empty() || step + 1 != steps)
      continue;
    if (!isNpyDType(tensor.dtype()))
      return fail("--output-dir: cannot write fetch '" + name + "' (" +
                  dtypeName(tensor.dtype()) +
                  ") as .npy: NumPy files hold numbers and bools; it is "
                  "printed above"),
             false;
    std::string fileName = name;
    for (char &c : fileName)
      if (c == '/' || c == ':')
        c = '_';
    llvm::SmallString<128> path(outputDir);
    llvm::sys::path::append(path, fileName + ".npy");
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message()), false;
    out << writeNpy(tensor);
  }
  return true;
}

/// Checks the options that need no graph; false (the error printed) when
/// one is wrong.
static bool checkOptions(int threads) {
  if (threads < 0)
    return fail("--threads must be 0 (every core) or more, not " +
                llvm::Twine(threads)),
           false;
  if (backend != Backend::CPU &&
      (hostProgramMode.getNumOccurrences() || dumpHostProgram))
    return fail(llvm::Twine("--") +
                (dumpHostProgram ? "dump-host-program" : "host-program") +
                " needs --backend=cpu (the interpreter backend runs every "
                "graph on its dataflow executor)"),
           false;
  if (!(channelTimeout > 0))
    return fail("--channel-timeout must be a positive number of seconds"),
           false;
  if (devices < 0)
    return fail("--devices must not be negative, got " + llvm::Twine(devices)),
           false;
  if (saveEvery && savePrefix.empty())
    return fail("--save-every needs --save=PREFIX"), false;
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("--output-dir: cannot create '" + outputDir +
                  "': " + ec.message()),
             false;
  StringRef saveDir = llvm::sys::path::parent_path(savePrefix);
  if (!saveDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(saveDir))
      return fail("--save: cannot create '" + saveDir + "': " + ec.message()),
             false;
  return true;
}

/// Restores what the command line and the SavedModel say, then runs the
/// SavedModel's main op.
static bool restoreVariables(runtime::Session &session) {
  std::string from =
      restorePath.empty() ? session.getSavedModelVariables() : restorePath;
  if ((!from.empty() || !savePrefix.empty()))
    if (auto variables = session.getCheckpointedVariables(); !variables)
      return fail(variables.takeError()), false;
  if (!from.empty()) {
    auto prefix = runtime::resolveCheckpointPrefix(from);
    if (!prefix)
      return fail(prefix.takeError(), "--restore: "), false;
    // Says from where, as TensorFlow's Saver.restore logs it (a
    // SavedModel's own variables go unsaid, as its loader's do).
    if (!restorePath.empty())
      llvm::errs() << "graph-run: Restoring parameters from " << *prefix
                   << "\n";
    if (llvm::Error error = session.restore(*prefix))
      return fail(std::move(error)), false;
  }
  if (llvm::Error error = session.loadSavedModel(/*restoreVariables=*/false))
    return fail(std::move(error)), false;
  return true;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  cl::opt<int> &threads = registerThreadsOption();
  registerGraphDefImportOptions();
  cl::HideUnrelatedOptions({&runCategory, &getGraphDefImportCategory()});
  cleave::parseToolOptions(argc, argv,
                           "Cleave reference interpreter: runs a graph\n");
  if (!checkOptions(threads))
    return 1;
  cleave::cpu::setKernelThreads(threads);
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  cleave::CommandLineDiagnostics requestErrors(&context, "graph-run: ");

  std::unique_ptr<runtime::Session> session = openSession(context, sourceMgr);
  if (!session)
    return 1;
  // A SavedModel run without saying what to compute runs its default
  // signature, as TensorFlow Serving answers a request that names none.
  if (signatureKey.empty() && fetchOpts.empty() && targetOpts.empty() &&
      initOpts.empty() && savePrefix.empty() && restorePath.empty()) {
    if (auto binding = session->bindSignature("serving_default", {}, {})) {
      signatureKey = "serving_default";
      llvm::errs() << "graph-run: running signature 'serving_default' "
                      "(name another with --signature, or tensors with "
                      "--fetch)\n";
    } else {
      llvm::consumeError(binding.takeError());
    }
  }
  std::optional<StepIO> io = readStepIO(*session);
  if (!io)
    return 1;
  // A command that names nothing to do must not look like one that did it.
  if (io->fetches.empty() && targetOpts.empty() && initOpts.empty() &&
      savePrefix.empty() && restorePath.empty())
    return fail("nothing to run: name what to compute with --fetch, "
                "--target or --signature (or --init, --restore, --save)");
  // The init op runs before the variables are restored, as a TensorFlow
  // program runs it before Saver.restore overwrites what it initialised.
  std::vector<std::string> initTargets(initOpts.begin(), initOpts.end());
  if (!initTargets.empty())
    if (auto done = session->run(io->feeds, {}, initTargets); !done)
      return fail(done.takeError());
  if (!restoreVariables(*session))
    return 1;
  if (io->fetches.empty() && targetOpts.empty() && savePrefix.empty()) {
    llvm::errs() << "graph-run: no --fetch, --target or --save: what --init "
                    "or --restore set is not kept\n";
    return 0;
  }

  unsigned maxToKeep = keepCheckpoints >= 0 ? unsigned(keepCheckpoints)
                                            : session->getDefaultMaxToKeep();
  // Says where, as TensorFlow's CheckpointSaverHook logs it.
  auto save = [&](const std::string &prefix, unsigned stepsRun) {
    if (llvm::Error error = session->save(prefix, maxToKeep))
      return fail(std::move(error), "--save: "), false;
    llvm::errs() << "graph-run: Saving checkpoints for " << stepsRun
                 << " into " << prefix << ".\n";
    return true;
  };
  std::vector<std::string> targets(targetOpts.begin(), targetOpts.end());
  std::vector<double> stepSeconds;
  Progress progress(steps);
  for (unsigned step = 0; step < steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    auto results = session->run(io->feeds, io->fetches, targets);
    stepSeconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
    progress.clear();
    if (!results)
      return fail(results.takeError());
    if (!reportFetches(step, *io, *results))
      return 1;
    progress.stepDone(step + 1, *io, *results);
    if (saveEvery && (step + 1) % saveEvery == 0 &&
        !save(savePrefix + "-" + std::to_string(step + 1), step + 1))
      return 1;
  }
  if (!savePrefix.empty() && !(saveEvery && steps % saveEvery == 0) &&
      !save(saveEvery ? savePrefix + "-" + std::to_string(steps)
                      : savePrefix.getValue(),
            steps))
    return 1;
  if (steps == 0)
    llvm::errs() << "graph-run: --steps=0: no step run\n";
  else if (timing)
    printTiming(stepSeconds, session->getCompileStatistics());
  return 0;
}
