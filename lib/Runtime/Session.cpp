//===- Session.cpp - running a graph, as TensorFlow's Session -------------===//
//
// Each distinct run (feeds, fetches, targets) gets its own copy of the
// graph, clustered for what it needs as TensorFlow clusters the graph its
// session prunes for each call, and its own interpreter; the variables and
// device queues of the last run carry over to the next.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/Session.h"

#include "cleave/AutoClustering/AutoClustering.h"
#include "cleave/Checkpoint/CheckpointState.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Executor/HostProgram.h"
#include "cleave/Runtime/CPUClusterRunner.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Runtime/HostProgramCompiler.h"
#include "cleave/Runtime/Rendezvous.h"
#include "cleave/Runtime/SavedModel.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/meta_graph.pb.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <thread>

using namespace mlir;
using namespace cleave;
using namespace cleave::runtime;

char ReportedError::ID = 0;

void ReportedError::log(llvm::raw_ostream &os) const {
  os << "reported as a diagnostic";
}

std::error_code ReportedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

char SignatureKeyError::ID = 0;

void SignatureKeyError::log(llvm::raw_ostream &os) const { os << message; }

std::error_code SignatureKeyError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

void runtime::logError(llvm::Error error, llvm::raw_ostream &os,
                       StringRef prefix) {
  llvm::handleAllErrors(
      std::move(error), [](const ReportedError &) {},
      [&](const llvm::ErrorInfoBase &info) {
        os << prefix << info.message() << "\n";
      });
}

static llvm::Error reported() { return llvm::make_error<ReportedError>(); }

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Whether the graph holds a computation replicated more than once (or,
/// with `single`, at least once).
static bool hasSeveralReplicas(ModuleOp module, bool single) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<graph::ReplicateOp>(op))
      found = true;
    if (auto node = dyn_cast<graph::NodeOp>(op))
      if (node.getOpType() == "TPUReplicateMetadata" &&
          node.getTFInt("num_replicas").value_or(1) > (single ? 0 : 1) &&
          node.getTFString("_tpu_replicate").value_or("") != "" &&
          node->getParentOfType<graph::GraphOp>())
        found = true;
  });
  return found;
}

namespace {
/// One kind of run: its clustered graph and the interpreter running it.
struct PreparedRun {
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<interp::Executor> interpreter;
  bool described = false;
};
} // namespace

struct Session::Impl {
  OwningOpRef<ModuleOp> module;
  std::string path;
  SessionOptions options;
  bool replicated = false;
  CPUClusterRunner runner;
  std::unique_ptr<LLVMHostProgramCompiler> hostProgramCompiler;
  /// Prepared runs by their feeds, fetches and targets.
  std::map<std::string, std::unique_ptr<PreparedRun>> runs;
  /// The run whose state is the session's now (null before the first).
  PreparedRun *current = nullptr;
  /// The variables before the first run (restored ones).
  interp::State initialState;
  /// The saver's variables, listed when a checkpoint is first read or
  /// written.
  std::optional<std::vector<CheckpointedVariable>> checkpointed;

  interp::State &state() {
    return current ? current->interpreter->getState() : initialState;
  }
  llvm::raw_ostream *notes() const { return options.clusterNotes; }

  llvm::Expected<std::unique_ptr<PreparedRun>>
  prepare(const std::vector<std::string> &feeds,
          const std::vector<std::string> &fetches,
          const std::vector<std::string> &targets);
  void describeHostProgram(PreparedRun &run, StringRef kind);
  llvm::Expected<llvm::ArrayRef<CheckpointedVariable>> getCheckpointed();
};

/// For the compiled path: v1 control flow made functional, as TensorFlow's
/// XLA path does before clustering. An Exit keeps its name as an Identity
/// of the While's output (a Merge keeps its own through
/// graph-functionalize-conds), so runs fetch what they fetched. A graph
/// not in tf.while_loop / tf.cond's form, or a run that names a tensor the
/// functional form does not have (inside a loop, a Merge's index), stays
/// as it is, and `why` says why.
static bool functionalizeForCompilation(OwningOpRef<ModuleOp> &module,
                                        const jit::RunSignature &run,
                                        std::string &why) {
  bool any = false;
  module->walk([&](graph::NodeOp node) {
    any |= interp::isV1ControlFlow(node.getOpType());
  });
  if (!any)
    return false;
  OwningOpRef<ModuleOp> copy(module->clone());
  for (auto graph : copy->getOps<graph::GraphOp>()) {
    Block &body = graph.getBody().front();
    graph::NameUniquer names(body);
    for (auto exit : llvm::make_early_inc_range(body.getOps<graph::NodeOp>())) {
      if (exit.getOpType() != "Exit" && exit.getOpType() != "RefExit")
        continue;
      std::string name = exit.getName().str();
      exit.setNameAttr(StringAttr::get(exit.getContext(),
                                       names.unique(name + "/functionalized")));
      OpBuilder b(exit->getContext());
      b.setInsertionPointAfter(exit);
      std::string error;
      FailureOr<graph::NodeOp> identity = createRegisteredNode(
          b, exit.getLoc(), "Identity", name, exit.getOutputs()[0], {}, {},
          exit.getDevice().value_or(""), error);
      if (failed(identity))
        return why = error, false;
      exit.getOutputs()[0].replaceAllUsesExcept(identity->getOutputs()[0],
                                                *identity);
      exit.getControl().replaceAllUsesWith(identity->getControl());
    }
  }
  PassManager pm(copy->getContext());
  pm.addPass(graph::createGraphFunctionalizeLoopsPass());
  pm.addPass(graph::createGraphFunctionalizeCondsPass());
  std::string message;
  {
    ScopedDiagnosticHandler capture(copy->getContext(), [&](Diagnostic &d) {
      if (message.empty())
        message = d.str();
      return success();
    });
    if (failed(pm.run(*copy)))
      return why = message, false;
  }
  // Every tensor and node the run names is still there.
  for (auto graph : copy->getOps<graph::GraphOp>()) {
    llvm::StringMap<graph::NodeOp> byName;
    for (auto node : graph.getBody().front().getOps<graph::NodeOp>())
      byName[node.getName()] = node;
    for (const std::vector<std::string> *names :
         {&run.feeds, &run.fetches, &run.targets})
      for (const std::string &name : *names) {
        auto [nodeName, port] = graph::splitTensorName(name);
        graph::NodeOp node = byName.lookup(nodeName);
        if (!node || (names != &run.targets &&
                      port >= node.getOutputs().size()))
          return why = "the run names '" + name +
                       "', which its functional form does not have",
                 false;
      }
  }
  module = std::move(copy);
  return true;
}

llvm::Expected<std::unique_ptr<PreparedRun>>
Session::Impl::prepare(const std::vector<std::string> &feeds,
                       const std::vector<std::string> &fetches,
                       const std::vector<std::string> &targets) {
  bool compiled = options.backend == SessionOptions::Backend::CPU;
  auto run = std::make_unique<PreparedRun>();
  run->module = module->clone();
  if (compiled && options.functionalizeControlFlow) {
    std::string why;
    if (!functionalizeForCompilation(run->module, {feeds, fetches, targets},
                                     why) &&
        !why.empty() && notes())
      *notes() << options.notePrefix
               << "v1 control flow stays interpreted: " << why << "\n";
  }
  if (compiled) {
    std::vector<jit::ClusteringDecision> decisions;
    if (failed(jit::clusterForCompilation(
            *run->module, {feeds, fetches, targets}, decisions)))
      return reported();
    for (const jit::ClusteringDecision &d : decisions) {
      if (notes())
        *notes() << options.notePrefix << d.node << ": "
                 << (d.cluster.empty() ? "interpreted (" + d.reason + ")"
                                       : "compiled in " + d.cluster)
                 << "\n";
      StringRef reason = d.reason;
      bool uncompilableOp = reason.ends_with(" has no CPU lowering") ||
                            reason.starts_with("Op type not registered");
      if (options.strictCompile && uncompilableOp) {
        // On the node, so that the message gives its file and line.
        std::string message = "Node '" + d.node + "': " + d.reason;
        graph::NodeOp node;
        run->module->walk([&](graph::NodeOp candidate) {
          if (!node && candidate.getName() == d.node &&
              isa<graph::GraphOp>(candidate->getParentOp()))
            node = candidate;
        });
        if (!node)
          return error(message);
        node.emitError() << message;
        return reported();
      }
    }
  }
  run->interpreter = std::make_unique<interp::Executor>(*run->module);
  run->interpreter->setMaxIterations(options.maxIterations);
  run->interpreter->setChannelTimeout(options.channelTimeoutSeconds);
  run->interpreter->getRendezvous().setCrossProcess(options.crossProcess);
  if (compiled) {
    using HostPrograms = SessionOptions::HostPrograms;
    run->interpreter->setCompiledCallHandler(&runner);
    run->interpreter->setHostPrograms(
        options.hostPrograms != HostPrograms::Executor,
        options.hostPrograms == HostPrograms::Compiled
            ? hostProgramCompiler.get()
            : nullptr);
  }
  return run;
}

/// Says how a kind of run runs: its host program, or why the dataflow
/// executor runs it.
void Session::Impl::describeHostProgram(PreparedRun &run, StringRef kind) {
  llvm::raw_ostream *os = options.hostProgramDump;
  if (!os || run.described)
    return;
  run.described = true;
  std::string reason;
  const interp::HostProgram *program =
      run.interpreter->getLastHostProgram(reason);
  if (!program) {
    *os << options.notePrefix << "the " << kind
        << " runs on the dataflow executor: " << reason << "\n";
    return;
  }
  *os << options.notePrefix << "the " << kind << "'s host program";
  if (!reason.empty())
    *os << " (stepped through: " << reason << ")";
  *os << ":\n" << program->describe();
  if (options.hostPrograms == SessionOptions::HostPrograms::Compiled &&
      reason.empty())
    *os << options.notePrefix << "compiled as:\n"
        << *buildHostProgramModule(*program, module->getContext()) << "\n";
}

llvm::Expected<llvm::ArrayRef<CheckpointedVariable>>
Session::Impl::getCheckpointed() {
  if (!checkpointed) {
    auto vars = listCheckpointedVariables(*module);
    if (!vars)
      return vars.takeError();
    checkpointed = std::move(*vars);
  }
  return llvm::ArrayRef<CheckpointedVariable>(*checkpointed);
}

Session::Session(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Session::~Session() = default;

llvm::Expected<std::unique_ptr<Session>>
Session::open(StringRef path, MLIRContext &context,
              const SessionOptions &options) {
  return open(path, context, options, GraphDefImportOptions());
}

llvm::Expected<std::unique_ptr<Session>>
Session::open(StringRef path, MLIRContext &context,
              const SessionOptions &options,
              const GraphDefImportOptions &importOptions) {
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module =
      loadGraphFile(path, &context, sourceMgr, "cleave", importOptions);
  if (!module)
    return reported();
  return create(std::move(module), path, options);
}

/// TensorFlow's placer: a node explicitly placed on a CPU device the
/// session does not have cannot run (other device types are soft-placed).
static LogicalResult checkDevices(ModuleOp module, int64_t devices) {
  if (devices <= 0)
    devices = std::max(1u, std::thread::hardware_concurrency());
  for (auto graph : module.getOps<graph::GraphOp>()) {
    WalkResult walk = graph.walk([&](graph::NodeOp node) {
      StringRef device = node.getDevice().value_or("");
      std::optional<graph::DeviceSpec> spec = graph::DeviceSpec::parse(device);
      if (!spec || !spec->deviceType || *spec->deviceType != "CPU" ||
          !spec->deviceIndex || *spec->deviceIndex < devices)
        return WalkResult::advance();
      std::string available;
      for (int64_t d = 0; d < devices && d < 8; ++d)
        available += (d ? ", " : "") +
                     ("/job:localhost/replica:0/task:0/device:CPU:" +
                      std::to_string(d));
      if (devices > 8)
        available += ", ...";
      graph::nodeError(node)
          << "Cannot assign a device for operation " << node.getName()
          << ": it was explicitly assigned to " << device
          << " but available devices are [ " << available
          << " ]. Make sure the device specification refers to a valid "
             "device. (graph-run --devices sets how many CPU devices there "
             "are; now "
          << devices << ")";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

llvm::Expected<std::unique_ptr<Session>>
Session::create(OwningOpRef<ModuleOp> module, StringRef path,
                const SessionOptions &options) {
  if (!(options.channelTimeoutSeconds > 0))
    return error("the channel timeout must be a positive number of seconds");
  if (failed(checkDevices(*module, options.devices)))
    return reported();
  auto impl = std::make_unique<Impl>();
  impl->path = path.str();
  impl->options = options;
  // Several replicas run once their computation is formed into a
  // graph.replicate, its host nodes beside the cluster: with the CPU
  // backend, the device side of each replica is compiled.
  // Kernel threads stop spinning between calls only where replicas run
  // side by side.
  bool severalReplicas = hasSeveralReplicas(*module, false);
  impl->replicated =
      hasSeveralReplicas(*module, options.formSingleReplica);
  if (impl->replicated) {
    PassManager pm(module->getContext());
    pm.addPass(graph::createGraphClusterFormationPass());
    pm.addPass(graph::createGraphExtractOutsideCompilationPass());
    if (failed(pm.run(*module)))
      return reported();
  }
  impl->module = std::move(module);
  CPUClusterRunner &runner = impl->runner;
  runner.setDumpLinalg(options.linalgDump);
  runner.setMaxIterations(options.maxIterations);
  runner.setStrict(options.strictCompile);
  runner.setSharesCores(severalReplicas);
  runner.setNotes(options.clusterNotes);
  runner.setSlowCompileNotes(options.slowCompileNotes, options.notePrefix,
                             options.slowCompileSeconds);
  impl->hostProgramCompiler =
      std::make_unique<LLVMHostProgramCompiler>(impl->module->getContext());
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

ModuleOp Session::getModule() const { return *impl->module; }

bool Session::isReplicated() const { return impl->replicated; }

llvm::Expected<std::vector<Tensor>>
Session::run(const NamedTensors &feeds, llvm::ArrayRef<std::string> fetches,
             llvm::ArrayRef<std::string> targets) {
  std::vector<std::string> feedNames;
  for (const auto &feed : feeds)
    feedNames.push_back(feed.first);
  std::vector<std::string> fetchList(fetches), targetList(targets);
  std::string key = llvm::join(feedNames, ",") + "|" +
                    llvm::join(fetchList, ",") + "|" +
                    llvm::join(targetList, ",");
  std::unique_ptr<PreparedRun> &slot = impl->runs[key];
  if (!slot) {
    auto prepared = impl->prepare(feedNames, fetchList, targetList);
    if (!prepared) {
      impl->runs.erase(key);
      return prepared.takeError();
    }
    slot = std::move(*prepared);
  }
  PreparedRun *run = slot.get();
  if (run != impl->current) {
    run->interpreter->getState() = impl->state();
    if (impl->current)
      run->interpreter->takeDeviceQueuesFrom(*impl->current->interpreter);
    impl->current = run;
  }
  FailureOr<std::vector<Tensor>> results =
      run->interpreter->run(feeds, fetchList, targetList);
  if (failed(results))
    return reported();
  impl->describeHostProgram(*run, fetchList.empty() ? "init run" : "step");
  return std::move(*results);
}

int32_t Session::getFeedDType(StringRef tensorName) const {
  // (Named, not a structured binding: the lambda below captures them.)
  std::pair<StringRef, unsigned> name = graph::splitTensorName(tensorName);
  StringRef nodeName = name.first;
  unsigned port = name.second;
  int32_t dtype = kFloat;
  // Feeds name nodes of the top-level graph, not of functions.
  for (auto graphOp : impl->module->getOps<graph::GraphOp>())
    graphOp.walk([&](graph::NodeOp node) {
      if (node.getName() == nodeName && port < node.getOutputs().size())
        if (auto type = dyn_cast<TensorType>(node.getOutputs()[port].getType()))
          if (int32_t dt = graph::typeToDataType(type.getElementType()); dt > 0)
            dtype = dt;
    });
  return dtype;
}

llvm::Expected<SignatureBinding>
Session::bindSignature(StringRef key, llvm::ArrayRef<std::string> inputKeys,
                       llvm::ArrayRef<std::string> outputKeys) const {
  auto signature = getSignature(*impl->module, key);
  if (!signature)
    return signature.takeError();
  SignatureBinding binding;
  llvm::StringMap<std::string> inputs, outputs;
  for (auto &[name, tensor] : signature->inputs)
    inputs[name] = tensor;
  for (auto &[name, tensor] : signature->outputs)
    outputs[name] = tensor;
  binding.fetchKeys.assign(outputKeys.begin(), outputKeys.end());
  if (binding.fetchKeys.empty())
    for (auto &[name, tensor] : signature->outputs)
      binding.fetchKeys.push_back(name);
  for (const std::string &output : binding.fetchKeys) {
    auto it = outputs.find(output);
    if (it == outputs.end())
      return llvm::make_error<SignatureKeyError>(
          false, output,
          ("signature '" + key + "' has no output '" + output + "' (outputs: " +
           llvm::join(llvm::make_first_range(signature->outputs), ", ") + ")")
              .str());
    binding.fetches.push_back(it->second);
  }
  for (const std::string &input : inputKeys) {
    auto it = inputs.find(input);
    if (it == inputs.end()) {
      std::vector<StringRef> keys(inputs.keys().begin(), inputs.keys().end());
      llvm::sort(keys);
      return llvm::make_error<SignatureKeyError>(
          true, input,
          ("signature '" + key + "' has no input '" + input +
           "' (inputs: " + llvm::join(keys, ", ") + ")")
              .str());
    }
    binding.feeds.push_back(it->second);
  }
  for (auto &[name, tensor] : signature->inputs)
    if (!llvm::is_contained(inputKeys, name))
      binding.missingInputs.emplace_back(name, tensor);
  return binding;
}

llvm::Expected<std::vector<std::string>> Session::getCheckpointedVariables() {
  auto variables = impl->getCheckpointed();
  if (!variables)
    return variables.takeError();
  std::vector<std::string> names;
  for (const CheckpointedVariable &variable : *variables)
    names.push_back(variable.node);
  return names;
}

llvm::Error Session::restore(StringRef prefixOrDirectory) {
  auto variables = impl->getCheckpointed();
  if (!variables)
    return variables.takeError();
  auto prefix = resolveCheckpointPrefix(prefixOrDirectory);
  if (!prefix)
    return prefix.takeError();
  if (llvm::Error failure =
          restoreVariables(*variables, *prefix, impl->state()))
    return error("restoring '" + *prefix +
                 "': " + llvm::toString(std::move(failure)));
  return llvm::Error::success();
}

/// The top-level variable node named `name`, or null.
static graph::NodeOp findVariableNode(ModuleOp module, StringRef name) {
  graph::NodeOp found;
  for (auto graphOp : module.getOps<graph::GraphOp>())
    graphOp.walk([&](graph::NodeOp node) {
      StringRef op = node.getOpType();
      if (node.getName() == name &&
          (op == "VariableV2" || op == "Variable" || op == "VarHandleOp"))
        found = node;
    });
  return found;
}

llvm::Error Session::restoreMapped(
    StringRef prefixOrDirectory,
    llvm::ArrayRef<std::pair<std::string, std::string>> nodesAndKeys) {
  auto prefix = resolveCheckpointPrefix(prefixOrDirectory);
  if (!prefix)
    return prefix.takeError();
  std::vector<CheckpointedVariable> variables;
  for (const auto &[name, key] : nodesAndKeys) {
    graph::NodeOp node = findVariableNode(*impl->module, name);
    if (!node)
      return error("no variable '" + name + "' in the graph");
    CheckpointedVariable variable = describeVariable(node);
    variable.key = key;
    variables.push_back(std::move(variable));
  }
  if (llvm::Error failure =
          restoreVariables(variables, *prefix, impl->state()))
    return error("restoring '" + *prefix +
                 "': " + llvm::toString(std::move(failure)));
  return llvm::Error::success();
}

llvm::Expected<Tensor> Session::readVariable(StringRef name) {
  graph::NodeOp node = findVariableNode(*impl->module, name);
  if (!node)
    return error("no variable '" + name + "' in the graph");
  auto it = impl->state().variables.find(getVariableName(node));
  if (it == impl->state().variables.end() || !it->second.isValid())
    return error("Attempting to use uninitialized value " + name);
  return it->second;
}

llvm::Error Session::writeVariable(StringRef name, Tensor value) {
  graph::NodeOp node = findVariableNode(*impl->module, name);
  if (!node)
    return error("no variable '" + name + "' in the graph");
  CheckpointedVariable variable = describeVariable(node);
  if (variable.dtype && value.dtype() != variable.dtype)
    return error("cannot assign a " + dtypeName(value.dtype()) +
                 " value to variable '" + name + "' of " +
                 dtypeName(variable.dtype));
  Tensor &stored = impl->state().variables[getVariableName(node)];
  if (stored.isValid() && stored.shape() != value.shape())
    return error("cannot assign a value of shape " +
                 shapeString(value.shape()) + " to variable '" + name +
                 "' of shape " + shapeString(stored.shape()));
  stored = std::move(value);
  return llvm::Error::success();
}

std::string Session::getSavedModelVariables() const {
  return runtime::getSavedModelVariables(*impl->module, impl->path);
}

llvm::Error Session::loadSavedModel(bool restoreVariables) {
  if (getImportedMessage(*impl->module) != GraphMessage::SavedModel)
    return llvm::Error::success();
  if (std::string variables = getSavedModelVariables();
      restoreVariables && !variables.empty())
    if (llvm::Error failure = restore(variables))
      return failure;
  auto init = getSavedModelInit(*impl->module, getExportDir(impl->path));
  if (!init)
    return init.takeError();
  if (init->mainOp.empty())
    return llvm::Error::success();
  auto result = run(init->assetFeeds, {}, {init->mainOp});
  return result ? llvm::Error::success() : result.takeError();
}

llvm::Error Session::writeVariables(StringRef prefix) {
  auto variables = impl->getCheckpointed();
  if (!variables)
    return variables.takeError();
  StringRef dir = llvm::sys::path::parent_path(prefix);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return error("cannot create '" + dir + "': " + ec.message());
  return saveVariables(*variables, impl->state(), prefix);
}

llvm::Error Session::save(StringRef prefix, unsigned maxToKeep,
                          bool relativePaths) {
  if (llvm::Error failure = writeVariables(prefix))
    return failure;
  StringRef dir = llvm::sys::path::parent_path(prefix);
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  return checkpoint::recordCheckpoint(dir.empty() ? "." : dir, prefix,
                                      maxToKeep, now, relativePaths);
}

unsigned Session::getDefaultMaxToKeep() const {
  tensorflow::MetaGraphDef meta;
  if (getMetaGraphInfo(*impl->module, meta) && meta.has_saver_def())
    return std::max(0, meta.saver_def().max_to_keep());
  return 5;
}

Session::CompileStatistics Session::getCompileStatistics() const {
  const CPUClusterRunner::Statistics &stats = impl->runner.getStatistics();
  return {stats.compilations, stats.compileSeconds};
}
