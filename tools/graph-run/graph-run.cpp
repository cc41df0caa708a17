//===- graph-run.cpp - run a graph with the reference interpreter ---------===//
//
//   graph-run model.pbtxt --feed x=[[1,2],[3,4]] --feed y=@y.npy
//             --fetch sum [--target train] [--init init] [--steps N]
//             [--output-dir DIR]
//
// Fetches are printed as "name = dtype [shape] values"; with --output-dir
// each is also written as DIR/<name>.npy ('/' and ':' become '_').
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/InitAll.h"
#include "cleave/Interpreter/Interpreter.h"
#include "cleave/Jit/AutoClustering.h"
#include "cleave/Runtime/CPUClusterRunner.h"
#include "cleave/Target/CPU/KernelLibrary.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
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
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("write fetches as .npy here"),
                                      cl::cat(runCategory));

/// Parses a nested-list literal into values and a shape.
static bool parseLiteral(StringRef text, std::vector<double> &values,
                         std::vector<int64_t> &shape, bool &isBool,
                         std::string &error) {
  text = text.trim();
  isBool = text.contains("true") || text.contains("false");
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
      size_t end = text.find_first_of(",] ", i);
      StringRef token = text.slice(i, end);
      double v;
      if (token == "true")
        v = 1;
      else if (token == "false")
        v = 0;
      else if (token.getAsDouble(v))
        return fail("'" + token.str() + "' is not a number");
      values.push_back(v);
      if (depth)
        nonEmpty[depth - 1] = true;
      i = end == StringRef::npos ? text.size() : end;
    }
  }
  if (depth)
    return fail("unbalanced '['");
  shape.assign(widths.begin(), widths.end());
  if (maxDepth == 0 && values.size() != 1)
    return fail("expected one value or a bracketed list");
  return true;
}

/// A tensor of `dtype` holding the literal's values, or an invalid tensor
/// when the dtype cannot be written as a literal.
static Tensor makeTensor(int32_t dtype, const std::vector<int64_t> &shape,
                         const std::vector<double> &values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i)
    if (!t.setFromDouble(i, values[i]))
      return Tensor();
  if (!dtypeSize(dtype))
    return Tensor();
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

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  cl::opt<int> &threads = registerThreadsOption();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "Cleave reference interpreter: runs a graph\n");
  if (threads < 0) {
    llvm::errs() << "graph-run: --threads must be 0 (every core) or more, "
                    "not "
                 << threads << "\n";
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

  OwningOpRef<ModuleOp> module =
      loadGraphFile(inputFilename, &context, sourceMgr, "graph-run");
  if (!module)
    return 1;

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string &feed : feedOpts) {
    auto [name, value] = StringRef(feed).split('=');
    if (name.empty() || value.empty()) {
      llvm::errs() << "graph-run: --feed expects name=value, got '" << feed
                   << "'\n";
      return 1;
    }
    Tensor tensor;
    std::string error;
    if (value.consume_front("@")) {
      auto bytes = llvm::MemoryBuffer::getFile(value);
      if (!bytes) {
        llvm::errs() << "graph-run: --feed " << name << ": cannot open '"
                     << value << "': " << bytes.getError().message() << "\n";
        return 1;
      }
      if (!readNpy((*bytes)->getBuffer(), tensor, error)) {
        llvm::errs() << "graph-run: --feed " << name << ": " << value << ": "
                     << error << "\n";
        return 1;
      }
    } else {
      std::vector<double> values;
      std::vector<int64_t> shape;
      bool isBool;
      if (!parseLiteral(value, values, shape, isBool, error)) {
        llvm::errs() << "graph-run: --feed " << name << ": " << error << "\n";
        return 1;
      }
      int32_t dtype = feedDtype(*module, name);
      tensor = makeTensor(dtype, shape, values);
      if (!tensor.isValid()) {
        llvm::errs() << "graph-run: --feed " << name << ": a literal cannot "
                     << "hold " << dtypeName(dtype)
                     << " values; feed a .npy file\n";
        return 1;
      }
    }
    feeds.emplace_back(name.str(), tensor);
  }

  std::vector<std::string> fetches(fetchOpts.begin(), fetchOpts.end());
  std::vector<std::string> targets(targetOpts.begin(), targetOpts.end());
  std::vector<std::string> feedNames;
  for (const auto &feed : feeds)
    feedNames.push_back(feed.first);

  // Each kind of run (init, step) gets its own graph, clustered for what it
  // feeds, fetches and runs (as TensorFlow clusters the graph a session
  // prunes for each call); variables carry over from one to the next.
  runtime::CPUClusterRunner runner;
  if (dumpLinalg)
    runner.setDumpLinalg(&llvm::errs());
  runner.setMaxIterations(maxIterations);
  runner.setStrict(strictCompile);
  if (dumpClusters)
    runner.setNotes(&llvm::errs());
  struct Run {
    OwningOpRef<ModuleOp> module;
    std::unique_ptr<Interpreter> interpreter;
  };
  auto prepare = [&](const std::vector<std::string> &runFetches,
                     const std::vector<std::string> &runTargets,
                     interp::State *previous) -> std::optional<Run> {
    Run run;
    if (backend == Backend::CPU) {
      run.module = module->clone();
      std::vector<jit::ClusteringDecision> decisions;
      if (failed(jit::clusterForCompilation(
              *run.module, {feedNames, runFetches, runTargets}, decisions)))
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
    } else {
      run.module = OwningOpRef<ModuleOp>(module->clone());
    }
    run.interpreter = std::make_unique<Interpreter>(*run.module);
    run.interpreter->setMaxIterations(maxIterations);
    if (backend == Backend::CPU)
      run.interpreter->setCompiledCallHandler(&runner);
    if (previous)
      run.interpreter->getState() = *previous;
    return run;
  };

  std::optional<Run> initRun;
  if (!initOpts.empty()) {
    std::vector<std::string> initTargets(initOpts.begin(), initOpts.end());
    initRun = prepare({}, initTargets, nullptr);
    if (!initRun || failed(initRun->interpreter->run(feeds, {}, initTargets)))
      return 1;
  }
  std::optional<Run> stepRun =
      prepare(fetches, targets,
              initRun ? &initRun->interpreter->getState() : nullptr);
  if (!stepRun)
    return 1;
  Interpreter &interpreter = *stepRun->interpreter;
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
    for (auto [name, tensor] : llvm::zip(fetches, *results)) {
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
        if (ec) {
          llvm::errs() << "graph-run: cannot write '" << path
                       << "': " << ec.message() << "\n";
          return 1;
        }
        out << writeNpy(tensor);
      }
    }
  }
  if (timing)
    printTiming(stepSeconds, runner.getStatistics());
  return 0;
}
