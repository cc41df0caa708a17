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

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/InitAll.h"
#include "cleave/Interpreter/HostProgram.h"
#include "cleave/Runtime/HostProgramCompiler.h"
#include "cleave/Interpreter/Interpreter.h"
#include "cleave/Jit/AutoClustering.h"
#include "cleave/Checkpoint/CheckpointState.h"
#include "cleave/Runtime/CPUClusterRunner.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Runtime/SavedModel.h"
#include "cleave/Target/CPU/KernelLibrary.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Tensor/Npy.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/meta_graph.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;
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
static cl::opt<double> channelTimeout(
    "channel-timeout",
    cl::desc("seconds a host transfer or collective of a replicated graph "
             "waits before it fails (a deadlock, or a replica that failed)"),
    cl::init(300), cl::cat(runCategory));
enum class Backend { Interpreter, CPU };
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
enum class HostProgramMode { Compiled, Stepped, Executor };
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

/// One element of a literal: its text, unescaped when it was quoted.
struct LiteralToken {
  std::string text;
  bool quoted = false;
};

/// Parses a nested-list literal into its elements and a shape. An element
/// is a bare word (a number, true, false; any word for a string tensor) or
/// a double-quoted string with \\, \", \n and \t escapes.
static bool parseLiteral(StringRef text, std::vector<LiteralToken> &tokens,
                         std::vector<int64_t> &shape, std::string &error) {
  text = text.trim();
  std::vector<int64_t> counts; // separators seen at each depth
  std::vector<bool> nonEmpty;  // whether the open list at a depth has items
  int depth = 0, maxDepth = 0;
  std::vector<int64_t> widths;
  size_t i = 0;
  auto fail = [&](std::string why) {
    error = why;
    return false;
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '[') {
      ++depth;
      maxDepth = std::max(maxDepth, depth);
      if (depth > 1)
        nonEmpty[depth - 2] = true; // a nested list is an item
      if (int(counts.size()) < depth) {
        counts.resize(depth, 0);
        nonEmpty.resize(depth, false);
      }
      counts[depth - 1] = 0;
      nonEmpty[depth - 1] = false;
      ++i;
    } else if (c == ']') {
      if (!depth)
        return fail("unbalanced ']'");
      int64_t n = nonEmpty[depth - 1] ? counts[depth - 1] + 1 : 0;
      if (int(widths.size()) < depth)
        widths.resize(depth, -1);
      if (widths[depth - 1] == -1)
        widths[depth - 1] = n;
      else if (widths[depth - 1] != n)
        return fail("ragged literal: rows of different lengths");
      --depth;
      ++i;
    } else if (c == ',') {
      if (depth)
        ++counts[depth - 1];
      ++i;
    } else if (c == ' ') {
      ++i;
    } else {
      LiteralToken token;
      if (c == '"') {
        token.quoted = true;
        size_t j = i + 1;
        for (; j < text.size() && text[j] != '"'; ++j) {
          if (text[j] != '\\') {
            token.text += text[j];
            continue;
          }
          if (++j == text.size())
            break;
          switch (text[j]) {
          case 'n': token.text += '\n'; break;
          case 't': token.text += '\t'; break;
          case '"': case '\\': token.text += text[j]; break;
          default:
            return fail(std::string("unknown escape '\\") + text[j] +
                        "' in a string");
          }
        }
        if (j >= text.size())
          return fail("unterminated string " + text.substr(i).str());
        i = j + 1;
        if (i < text.size() && !StringRef(",] ").contains(text[i]))
          return fail("expected ',' or ']' after the string \"" +
                      token.text + "\"");
      } else {
        size_t end = text.find_first_of(",] ", i);
        token.text = text.slice(i, end).str();
        i = end == StringRef::npos ? text.size() : end;
      }
      tokens.push_back(std::move(token));
      if (depth)
        nonEmpty[depth - 1] = true;
    }
  }
  if (depth)
    return fail("unbalanced '['");
  shape.assign(widths.begin(), widths.end());
  if (maxDepth == 0 && tokens.size() != 1)
    return fail("expected one value or a bracketed list");
  return true;
}

/// A tensor of `dtype` and `shape` holding the literal's elements; an
/// invalid tensor with `error` when they do not fit the dtype.
static Tensor makeTensor(int32_t dtype, const std::vector<int64_t> &shape,
                         const std::vector<LiteralToken> &tokens,
                         std::string &error) {
  Tensor t(dtype, shape);
  if (dtype == kString) {
    for (auto [i, token] : llvm::enumerate(tokens))
      t.strings()[i] = token.text;
    return t;
  }
  if (!dtypeSize(dtype)) {
    error = "a literal cannot hold " + dtypeName(dtype) +
            " values; feed a .npy file";
    return Tensor();
  }
  for (auto [i, token] : llvm::enumerate(tokens)) {
    double v;
    if (token.quoted) {
      error = "\"" + token.text + "\" is a string, but the tensor holds " +
              dtypeName(dtype) + " values";
      return Tensor();
    }
    if (token.text == "true")
      v = 1;
    else if (token.text == "false")
      v = 0;
    else if (StringRef(token.text).getAsDouble(v)) {
      error = "'" + token.text + "' is not a number";
      return Tensor();
    }
    // Every dtype with a size holds numbers (bool included).
    t.setFromDouble(i, v);
  }
  return t;
}

/// The dtype a feed of `name` must have: its node's result element type.
static int32_t feedDtype(ModuleOp module, StringRef name) {
  StringRef nodeName = name.split(':').first, portText = name.split(':').second;
  unsigned port = 0;
  if (!portText.empty())
    portText.getAsInteger(10, port);
  int32_t dtype = kFloat;
  // Feeds name nodes of the top-level graph, not of functions.
  for (auto graph : module.getOps<graph::GraphOp>())
    graph.walk([&](graph::NodeOp node) {
      if (node.getName() == nodeName && port < node.getOutputs().size())
        if (auto type = dyn_cast<TensorType>(node.getOutputs()[port].getType()))
          if (int32_t dt = graph::typeToDataType(type.getElementType()); dt > 0)
            dtype = dt;
    });
  return dtype;
}

/// Step times (the first step, which compiles, counted apart when there
/// are more) and compilation time, for benchmarks.
static void printTiming(std::vector<double> seconds,
                        const runtime::CPUClusterRunner::Statistics &stats) {
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

/// Whether the graph holds a computation replicated more than once.
static bool hasSeveralReplicas(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<graph::ReplicateOp>(op))
      found = true;
    if (auto node = dyn_cast<graph::NodeOp>(op))
      if (node.getOpType() == "TPUReplicateMetadata" &&
          node.getTFInt("num_replicas").value_or(1) > 1 &&
          node.getTFString("_tpu_replicate").value_or("") != "" &&
          node->getParentOfType<graph::GraphOp>())
        found = true;
  });
  return found;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  cl::opt<int> &threads = registerThreadsOption();
  registerGraphDefImportOptions();
  cl::HideUnrelatedOptions({&runCategory, &getGraphDefImportCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "Cleave reference interpreter: runs a graph\n");
  if (threads < 0) {
    llvm::errs() << "graph-run: --threads must be 0 (every core) or more, "
                    "not "
                 << threads << "\n";
    return 1;
  }
  if (backend != Backend::CPU &&
      (hostProgramMode.getNumOccurrences() || dumpHostProgram)) {
    llvm::errs() << "graph-run: --"
                 << (dumpHostProgram ? "dump-host-program" : "host-program")
                 << " needs --backend=cpu (the interpreter backend runs every "
                    "graph on its dataflow executor)\n";
    return 1;
  }
  cleave::cpu::setKernelThreads(threads);
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "graph-run: --output-dir: cannot create '" << outputDir
                   << "': " << ec.message() << "\n";
      return 1;
    }

  if (!(channelTimeout > 0))
    return llvm::errs() << "graph-run: --channel-timeout must be a positive "
                           "number of seconds\n",
           1;
  OwningOpRef<ModuleOp> module =
      loadGraphFile(inputFilename, &context, sourceMgr, "graph-run",
                    getGraphDefImportOptionsFromCL());
  if (!module)
    return 1;
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "graph-run: " << message << "\n";
    return 1;
  };

  // Several replicas run once their computation is formed into a
  // graph.replicate, its host nodes beside the cluster: with the CPU
  // backend, the device side of each replica is compiled.
  bool replicated = hasSeveralReplicas(*module);
  if (replicated) {
    PassManager pm(&context);
    pm.addPass(graph::createGraphClusterFormationPass());
    pm.addPass(graph::createGraphExtractOutsideCompilationPass());
    if (failed(pm.run(*module)))
      return 1;
  }

  // With --signature, feeds and fetches are the SignatureDef's keys.
  std::vector<std::string> fetchKeys(fetchOpts.begin(), fetchOpts.end());
  std::vector<std::string> fetches = fetchKeys;
  llvm::StringMap<std::string> signatureInputs;
  if (!signatureKey.empty()) {
    auto signature = runtime::getSignature(*module, signatureKey);
    if (!signature)
      return fail(llvm::toString(signature.takeError()));
    for (auto &[key, tensor] : signature->inputs)
      signatureInputs[key] = tensor;
    llvm::StringMap<std::string> outputs;
    for (auto &[key, tensor] : signature->outputs)
      outputs[key] = tensor;
    if (fetchKeys.empty())
      for (auto &[key, tensor] : signature->outputs)
        fetchKeys.push_back(key);
    fetches.clear();
    for (const std::string &key : fetchKeys) {
      auto it = outputs.find(key);
      if (it == outputs.end())
        return fail("--fetch " + key + ": signature '" + signatureKey +
                    "' has no output '" + key + "' (outputs: " +
                    llvm::join(llvm::make_first_range(signature->outputs),
                               ", ") +
                    ")");
      fetches.push_back(it->second);
    }
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string &feed : feedOpts) {
    auto [nameText, value] = StringRef(feed).split('=');
    if (nameText.empty() || value.empty())
      return fail("--feed expects name=value, got '" + feed + "'");
    std::string name = nameText.str();
    if (!signatureKey.empty()) {
      auto it = signatureInputs.find(name);
      if (it == signatureInputs.end()) {
        std::vector<StringRef> keys(signatureInputs.keys().begin(),
                                    signatureInputs.keys().end());
        llvm::sort(keys);
        return fail("--feed " + name + ": signature '" + signatureKey +
                    "' has no input '" + name + "' (inputs: " +
                    llvm::join(keys, ", ") + ")");
      }
      name = it->second;
    }
    Tensor tensor;
    std::string error;
    if (value.consume_front("@")) {
      auto bytes = llvm::MemoryBuffer::getFile(value);
      if (!bytes)
        return fail("--feed " + nameText + ": cannot open '" + value +
                    "': " + bytes.getError().message());
      if (!readNpy((*bytes)->getBuffer(), tensor, error))
        return fail("--feed " + nameText + ": " + value + ": " + error);
    } else {
      std::vector<LiteralToken> tokens;
      std::vector<int64_t> shape;
      if (!parseLiteral(value, tokens, shape, error))
        return fail("--feed " + nameText + ": " + error);
      tensor = makeTensor(feedDtype(*module, name), shape, tokens, error);
      if (!tensor.isValid())
        return fail("--feed " + nameText + ": " + error);
    }
    feeds.emplace_back(name, tensor);
  }

  // Checkpoints: what the graph's saver saves, from where it restores.
  bool isSavedModel = getImportedMessage(*module) == GraphMessage::SavedModel;
  std::string exportDir = runtime::getExportDir(inputFilename);
  std::string restoreFrom =
      restorePath.empty()
          ? runtime::getSavedModelVariables(*module, inputFilename)
          : restorePath.getValue();
  std::vector<runtime::CheckpointedVariable> checkpointed;
  if (!restoreFrom.empty() || !savePrefix.empty()) {
    auto vars = runtime::listCheckpointedVariables(*module);
    if (!vars)
      return fail(llvm::toString(vars.takeError()));
    checkpointed = std::move(*vars);
  }
  if (saveEvery && savePrefix.empty())
    return fail("--save-every needs --save=PREFIX");
  unsigned maxToKeep = 5;
  if (keepCheckpoints >= 0) {
    maxToKeep = keepCheckpoints;
  } else if (tensorflow::MetaGraphDef meta;
             getMetaGraphInfo(*module, meta) && meta.has_saver_def()) {
    maxToKeep = std::max(0, meta.saver_def().max_to_keep());
  }

  std::vector<std::string> targets(targetOpts.begin(), targetOpts.end());
  std::vector<std::string> feedNames;
  for (const auto &feed : feeds)
    feedNames.push_back(feed.first);

  // Each kind of run (init, main op, step) gets its own graph, clustered
  // for what it feeds, fetches and runs (as TensorFlow clusters the graph a
  // session prunes for each call); variables carry over from one to the
  // next.
  runtime::CPUClusterRunner runner;
  if (dumpLinalg)
    runner.setDumpLinalg(&llvm::errs());
  runner.setMaxIterations(maxIterations);
  runner.setStrict(strictCompile);
  runner.setSharesCores(replicated);
  if (dumpClusters)
    runner.setNotes(&llvm::errs());
  runtime::LLVMHostProgramCompiler hostProgramCompiler(&context);
  struct Run {
    OwningOpRef<ModuleOp> module;
    std::unique_ptr<Interpreter> interpreter;
  };
  auto prepare = [&](const std::vector<std::string> &runFeeds,
                     const std::vector<std::string> &runFetches,
                     const std::vector<std::string> &runTargets,
                     const interp::State &previous) -> std::optional<Run> {
    Run run;
    run.module = module->clone();
    if (backend == Backend::CPU) {
      std::vector<jit::ClusteringDecision> decisions;
      if (failed(jit::clusterForCompilation(
              *run.module, {runFeeds, runFetches, runTargets}, decisions)))
        return std::nullopt;
      for (const jit::ClusteringDecision &d : decisions) {
        if (dumpClusters)
          llvm::errs() << "graph-run: " << d.node << ": "
                       << (d.cluster.empty() ? "interpreted (" + d.reason + ")"
                                             : "compiled in " + d.cluster)
                       << "\n";
        if (strictCompile && StringRef(d.reason).ends_with("no CPU lowering")) {
          llvm::errs() << "graph-run: Node '" << d.node << "': "
                       << StringRef(d.reason).drop_back(
                              StringRef(" has no CPU lowering").size())
                       << " has no CPU lowering\n";
          return std::nullopt;
        }
      }
    }
    run.interpreter = std::make_unique<Interpreter>(*run.module);
    run.interpreter->setMaxIterations(maxIterations);
    run.interpreter->setChannelTimeout(channelTimeout);
    if (backend == Backend::CPU) {
      run.interpreter->setCompiledCallHandler(&runner);
      run.interpreter->setHostPrograms(
          hostProgramMode != HostProgramMode::Executor,
          hostProgramMode == HostProgramMode::Compiled ? &hostProgramCompiler
                                                       : nullptr);
    }
    run.interpreter->getState() = previous;
    return run;
  };

  // Says how a kind of run runs: its host program, or why the dataflow
  // executor runs it.
  auto describeRun = [&](Interpreter &interpreter, StringRef kind) {
    if (!dumpHostProgram)
      return;
    std::string reason;
    const interp::HostProgram *program =
        interpreter.getLastHostProgram(reason);
    if (!program) {
      llvm::errs() << "graph-run: the " << kind
                   << " runs on the dataflow executor: " << reason << "\n";
      return;
    }
    llvm::errs() << "graph-run: the " << kind << "'s host program";
    if (!reason.empty())
      llvm::errs() << " (stepped through: " << reason << ")";
    llvm::errs() << ":\n" << program->describe();
    if (hostProgramMode == HostProgramMode::Compiled && reason.empty())
      llvm::errs() << "graph-run: compiled as:\n"
                   << *runtime::buildHostProgramModule(*program, &context)
                   << "\n";
  };

  interp::State carried;
  // What the init run leaves in the infeed and outfeed queues, for the
  // steps (device queues outlive a run, as variables do).
  std::optional<Run> initRun;
  if (!initOpts.empty()) {
    std::vector<std::string> initTargets(initOpts.begin(), initOpts.end());
    initRun = prepare(feedNames, {}, initTargets, carried);
    if (!initRun || failed(initRun->interpreter->run(feeds, {}, initTargets)))
      return 1;
    describeRun(*initRun->interpreter, "init run");
    carried = initRun->interpreter->getState();
  }
  if (!restoreFrom.empty()) {
    auto prefix = runtime::resolveCheckpointPrefix(restoreFrom);
    if (!prefix)
      return fail("--restore: " + llvm::toString(prefix.takeError()));
    if (llvm::Error error =
            runtime::restoreVariables(checkpointed, *prefix, carried))
      return fail("restoring '" + *prefix + "': " +
                  llvm::toString(std::move(error)));
  }
  if (isSavedModel) {
    auto init = runtime::getSavedModelInit(*module, exportDir);
    if (!init)
      return fail(llvm::toString(init.takeError()));
    if (!init->mainOp.empty()) {
      std::vector<std::string> assetNames;
      for (const auto &feed : init->assetFeeds)
        assetNames.push_back(feed.first);
      std::optional<Run> mainRun =
          prepare(assetNames, {}, {init->mainOp}, carried);
      if (!mainRun || failed(mainRun->interpreter->run(init->assetFeeds, {},
                                                        {init->mainOp})))
        return 1;
      carried = mainRun->interpreter->getState();
    }
  }

  std::optional<Run> stepRun = prepare(feedNames, fetches, targets, carried);
  if (!stepRun)
    return 1;
  Interpreter &interpreter = *stepRun->interpreter;
  if (initRun)
    interpreter.takeDeviceQueuesFrom(*initRun->interpreter);
  auto save = [&](const std::string &prefix) -> bool {
    if (llvm::Error error = runtime::saveVariables(
            checkpointed, interpreter.getState(), prefix)) {
      fail("--save: " + llvm::toString(std::move(error)));
      return false;
    }
    StringRef dir = llvm::sys::path::parent_path(prefix);
    double now = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    if (llvm::Error error = checkpoint::recordCheckpoint(
            dir.empty() ? "." : dir, prefix, maxToKeep, now)) {
      fail("--save: " + llvm::toString(std::move(error)));
      return false;
    }
    return true;
  };
  if (!savePrefix.empty()) {
    StringRef dir = llvm::sys::path::parent_path(savePrefix);
    if (!dir.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(dir))
        return fail("--save: cannot create '" + dir + "': " + ec.message());
  }
  std::vector<double> stepSeconds;
  for (unsigned step = 0; step < steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    FailureOr<std::vector<Tensor>> results =
        interpreter.run(feeds, fetches, targets);
    stepSeconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
    if (failed(results))
      return 1;
    if (step == 0)
      describeRun(interpreter, "step");
    for (auto [name, tensor] : llvm::zip(fetchKeys, *results)) {
      if (steps > 1)
        llvm::outs() << "step " << step << ": ";
      llvm::outs() << name << " = " << tensor.toString() << "\n";
      if (!outputDir.empty() && step + 1 == steps) {
        std::string fileName = name;
        for (char &c : fileName)
          if (c == '/' || c == ':')
            c = '_';
        llvm::SmallString<128> path(outputDir);
        llvm::sys::path::append(path, fileName + ".npy");
        std::error_code ec;
        llvm::raw_fd_ostream out(path, ec);
        if (ec)
          return fail("cannot write '" + path + "': " + ec.message());
        out << writeNpy(tensor);
      }
    }
    if (saveEvery && (step + 1) % saveEvery == 0 &&
        !save(savePrefix + "-" + std::to_string(step + 1)))
      return 1;
  }
  if (!savePrefix.empty() && !(saveEvery && steps % saveEvery == 0) &&
      !save(saveEvery ? savePrefix + "-" + std::to_string(steps)
                      : savePrefix.getValue()))
    return 1;
  if (timing)
    printTiming(stepSeconds, runner.getStatistics());
  return 0;
}
