//===- Estimator.cpp - train, evaluate and predict from a job -------------===//
//
// The modes as tf.estimator runs them: each mode's graph in its own
// Session; variables restored from model_dir's latest checkpoint or
// initialized (then warm-started and scaffolded); the input's batches fed
// to the feature and label placeholders; hooks, checkpoints and metrics
// on the host.
//
//===----------------------------------------------------------------------===//

#include "cleave/Estimator/Estimator.h"

#include "AllReducedStep.h"
#include "EstimatorImpl.h"
#include "Exporters.h"
#include "HostCall.h"
#include "MetricGraphs.h"
#include "ParameterServer.h"
#include "Support.h"
#include "TrainingHooks.h"

#include "cleave/Checkpoint/EventFile.h"
#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Estimator/Input.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Runtime/ProcessGroup.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;
using runtime::NamedTensors;
using runtime::Session;

//===----------------------------------------------------------------------===//
// Estimator
//===----------------------------------------------------------------------===//

Estimator::Estimator(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Estimator::~Estimator() = default;

const RunSettings &Estimator::getSettings() const { return impl->settings; }

const Job &Estimator::getJob() const { return impl->job; }

llvm::Expected<std::unique_ptr<Estimator>>
Estimator::create(Job job, MLIRContext &context, EstimatorOptions options) {
  auto impl =
      std::make_unique<Impl>(std::move(job), context, std::move(options));
  auto settings = getRunSettings(impl->job, impl->options.overrides);
  if (!settings)
    return settings.takeError();
  impl->settings = std::move(*settings);
  if (impl->options.trainers)
    impl->settings.trainers = impl->options.trainers->getSize();
  const Model &model = impl->job.model();
  if (model.has_saved_model())
    if (llvm::Error failure = impl->bindSavedModel())
      return std::move(failure);
  if (!model.has_graph() && !model.has_saved_model())
    return makeError("model: no graph (model.graph { train: ... eval: ... "
                     "predict: ... } or { all: ... }, or model.saved_model)");
  if (model.features().empty())
    return makeError("model.features: no features (features { key: \"x\" "
                     "placeholder: \"x\" })");
  if (!model.train_op().empty() && model.has_optimizer())
    return makeError("model: train_op and optimizer are exclusive (the "
                     "optimizer builds the train op)");
  if (impl->settings.modelDir.empty()) {
    llvm::SmallString<128> dir;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("graph-estimator", dir))
      return makeError("cannot create a temporary model directory: " +
                       ec.message());
    impl->settings.modelDir = std::string(dir);
    impl->info("Using temporary folder as model directory: " + dir);
  }
  if (!impl->settings.useTpu && impl->job.config().has_eval_on_tpu() &&
      impl->job.config().eval_on_tpu())
    impl->info("eval_on_tpu ignored because use_tpu is False.");
  return std::unique_ptr<Estimator>(new Estimator(std::move(impl)));
}

std::string Estimator::Impl::getTrainOpName() const {
  const Model &model = job.model();
  if (!model.has_optimizer())
    return model.train_op();
  return model.optimizer().has_adam()       ? "Adam"
         : model.optimizer().has_momentum() ? "Momentum"
                                            : "GradientDescent";
}

std::string Estimator::Impl::getGraphPath(Mode mode) const {
  if (job.model().has_saved_model())
    return job.model().saved_model();
  const ModeGraphs &graphs = job.model().graph();
  const std::string &specific = mode == Mode::Train  ? graphs.train()
                                : mode == Mode::Eval ? graphs.eval()
                                                     : graphs.predict();
  return specific.empty() ? graphs.all() : specific;
}

llvm::Expected<OwningOpRef<ModuleOp>> Estimator::Impl::loadGraph(Mode mode) {
  if (job.model().has_saved_model())
    return loadSavedModelGraph(mode);
  std::string path = getGraphPath(mode);
  if (path.empty())
    return makeError(llvm::Twine("model.graph: no graph for mode ") +
                     getModeName(mode) + " (model.graph." +
                     (mode == Mode::Train  ? "train"
                      : mode == Mode::Eval ? "eval"
                                           : "predict") +
                     " or model.graph.all)");
  OwningOpRef<ModuleOp> module =
      loadGraphFile(path, &context, sourceMgr, "graph-estimator");
  if (!module)
    return llvm::make_error<runtime::ReportedError>();
  return module;
}

/// The job's optimizer as graph-minimize's and graph-towers' options.
template <typename Options>
static llvm::Error setOptimizer(const Optimizer &optimizer, Options &options) {
  switch (optimizer.kind_case()) {
  case Optimizer::kSgd:
    options.optimizer = "sgd";
    options.learningRate = optimizer.sgd().learning_rate();
    return llvm::Error::success();
  case Optimizer::kMomentum: {
    const auto &momentum = optimizer.momentum();
    options.optimizer = "momentum";
    options.learningRate = momentum.learning_rate();
    if (momentum.has_momentum())
      options.momentum = momentum.momentum();
    options.useNesterov = momentum.use_nesterov();
    return llvm::Error::success();
  }
  case Optimizer::kAdam: {
    const auto &adam = optimizer.adam();
    options.optimizer = "adam";
    options.learningRate = adam.learning_rate();
    if (adam.has_beta1())
      options.beta1 = adam.beta1();
    if (adam.has_beta2())
      options.beta2 = adam.beta2();
    if (adam.has_epsilon())
      options.epsilon = adam.epsilon();
    return llvm::Error::success();
  }
  case Optimizer::KIND_NOT_SET:
    break;
  }
  return makeError("model.optimizer: no optimizer kind (sgd, momentum or "
                   "adam)");
}

llvm::Error Estimator::Impl::addTowers(ModuleOp module, ModeSession &mode) {
  const Model &model = job.model();
  const Towers &towers = job.config().towers();
  if (!model.has_optimizer())
    return makeError("config.towers: towers build the training step "
                     "(TowerOptimizer): name model.optimizer instead of a "
                     "train op");
  if (model.optimizer().has_exponential_decay())
    return makeError("model.optimizer.exponential_decay: a decayed learning "
                     "rate with towers is not supported yet");
  graph::GraphTowersPassOptions options;
  options.mode = "train";
  options.loss = model.loss();
  std::vector<std::string> inputs;
  for (const auto &[key, placeholder] : mode.inputs)
    inputs.push_back(placeholder);
  options.inputs = inputs;
  // What reads the towers' values must be part of them: the predictions
  // the train graph computes are concatenated, as the seed's _train_spec.
  std::vector<std::string> predictions;
  for (const NamedTensor &prediction : model.predictions())
    if (hasTensor(module, prediction.tensor()))
      predictions.push_back(prediction.key() + "=" + prediction.tensor());
  options.predictions = predictions;
  options.numDevices = towers.num_devices();
  if (!towers.variable_distribution().empty())
    options.variableDistribution = towers.variable_distribution();
  if (!towers.loss_reduction().empty())
    options.lossReduction = towers.loss_reduction();
  options.globalStep = getGlobalStepName();
  options.createGlobalStep = true;
  if (!model.init_op().empty())
    options.initName = model.init_op();
  if (llvm::Error failure = setOptimizer(model.optimizer(), options))
    return failure;
  llvm::StringSet<> before;
  walkNodes(module, [&](graph::NodeOp node) { before.insert(node.getName()); });
  PassManager pm(&context);
  pm.addPass(graph::createGraphInferShapesPass());
  pm.addPass(graph::createGraphTowersPass(options));
  if (failed(pm.run(module)))
    return llvm::make_error<runtime::ReportedError>();
  // The towers' losses summed (`loss`, made unique) is the step's loss.
  walkNodes(module, [&](graph::NodeOp node) {
    if (node.getOpType() == "AddN" && !before.contains(node.getName()) &&
        node.getName().starts_with("loss"))
      mode.lossFetches = {node.getName().str()};
  });
  return llvm::Error::success();
}

llvm::Error Estimator::Impl::addTrainingStep(ModuleOp module, bool crossReplica,
                                             int64_t numShards) {
  const Model &model = job.model();
  if (!model.has_optimizer()) {
    if (model.train_op().empty())
      return makeError("model: Missing train_op. (name the train graph's "
                       "train_op, or an optimizer to build it)");
    return llvm::Error::success();
  }
  graph::GraphMinimizePassOptions minimize;
  minimize.loss = model.loss();
  minimize.globalStep = getGlobalStepName();
  minimize.createGlobalStep = true;
  // CrossShardOptimizer on the device: the replicas' gradients summed.
  minimize.crossReplica = crossReplica && numShards == 0;
  minimize.numShards = numShards;
  minimize.crossReplicaReduction =
      model.optimizer().reduction() == Optimizer::SUM ? "sum" : "mean";
  minimize.numProcesses = settings.trainers;
  // Across processes each sum is a network collective: one per step.
  minimize.combineAllReduce = settings.trainers > 1;
  if (!model.init_op().empty())
    minimize.initName = model.init_op();
  if (llvm::Error failure = setOptimizer(model.optimizer(), minimize))
    return failure;
  if (model.optimizer().has_exponential_decay()) {
    const auto &decay = model.optimizer().exponential_decay();
    if (decay.decay_steps() <= 0)
      return makeError("model.optimizer.exponential_decay: decay_steps must "
                       "be positive, got " +
                       llvm::Twine(decay.decay_steps()));
    if (crossReplica || numShards > 0)
      return makeError("model.optimizer.exponential_decay: a decayed "
                       "learning rate in TPUEstimator's replicated step is "
                       "not supported yet (use_tpu: false trains with it)");
    minimize.decaySteps = decay.decay_steps();
    minimize.decayRate = decay.decay_rate();
    minimize.staircase = decay.staircase();
  }
  PassManager pm(&context);
  pm.addPass(graph::createGraphInferShapesPass());
  pm.addPass(graph::createGraphMinimizePass(minimize));
  if (failed(pm.run(module)))
    return llvm::make_error<runtime::ReportedError>();
  return llvm::Error::success();
}

llvm::Error Estimator::Impl::checkInputs(ModuleOp module, Mode mode) {
  int64_t batch = settings.getPerReplicaBatchSize(mode);
  auto check = [&](const InputBinding &binding,
                   llvm::StringRef field) -> llvm::Error {
    graph::NodeOp node = findNode(module, binding.placeholder());
    if (!node)
      return makeError("model." + field + ": no node '" +
                       binding.placeholder() + "' in the " + getModeName(mode) +
                       " graph");
    if (node.getOpType() != "Placeholder" &&
        node.getOpType() != "PlaceholderWithDefault")
      return makeError("model." + field + ": '" + binding.placeholder() +
                       "' is a " + node.getOpType() + ", not a Placeholder");
    auto shape = dyn_cast_or_null<graph::ShapeAttr>(node.getTFAttr("shape"));
    if (shape && !shape.getUnknownRank() && !shape.getDims().empty() &&
        shape.getDims()[0] >= 0 && shape.getDims()[0] != batch)
      return makeError("model." + field + ": placeholder '" +
                       binding.placeholder() + "' has batch dimension " +
                       llvm::Twine(shape.getDims()[0]) +
                       ", but params['batch_size'] is " + llvm::Twine(batch) +
                       " in " + getModeName(mode));
    return llvm::Error::success();
  };
  for (const InputBinding &binding : job.model().features())
    if (llvm::Error failure = check(binding, "features"))
      return failure;
  if (mode != Mode::Predict)
    for (const InputBinding &binding : job.model().labels())
      if (llvm::Error failure = check(binding, "labels"))
        return failure;
  if (mode != Mode::Predict && job.model().loss().empty())
    return makeError("model.loss: Missing loss.");
  if (mode != Mode::Predict && !hasTensor(module, job.model().loss()))
    return makeError("model.loss: no tensor '" + job.model().loss() +
                     "' in the " + getModeName(mode) + " graph");
  return llvm::Error::success();
}

llvm::Error Estimator::Impl::putOnDevice(ModuleOp module, ModeSession &mode) {
  const Model &model = job.model();
  std::vector<std::string> inputs, labels;
  for (const auto &[key, placeholder] : mode.inputs)
    inputs.push_back(placeholder);
  for (const InputBinding &binding : model.labels())
    labels.push_back(binding.placeholder());
  graph::GraphTrainingLoopPassOptions loop;
  std::string modeName = mode.mode == Mode::Train  ? "train"
                         : mode.mode == Mode::Eval ? "eval"
                                                   : "predict";
  loop.mode = modeName;
  loop.inputs = inputs;
  loop.labels = labels;
  loop.batchSize = settings.getPerReplicaBatchSize(mode.mode);
  loop.numReplicas = mode.replicas;
  if (mode.mode != Mode::Predict)
    loop.loss = model.loss();
  loop.outfeed = mode.outfeed;
  loop.deviceLoop = mode.deviceLoop;
  if (mode.deviceLoop && mode.mode == Mode::Train)
    loop.trainOp = mode.trainOp;
  PassManager pm(&context);
  pm.addPass(graph::createGraphInferShapesPass());
  pm.addPass(graph::createGraphTrainingLoopPass(loop));
  if (failed(pm.run(module)))
    return llvm::make_error<runtime::ReportedError>();
  for (int64_t r = 0; r < mode.replicas; ++r) {
    std::string shard = "input_pipeline_task0/shard_" + std::to_string(r);
    mode.replicaFeeds.emplace_back();
    for (const std::string &placeholder : inputs)
      mode.replicaFeeds.back().push_back(shard + "/" + placeholder);
    if (mode.deviceLoop && mode.mode == Mode::Predict)
      mode.replicaFeeds.back().push_back(shard + "/signals/stopping");
    (mode.deviceLoop ? mode.enqueueTargets : mode.targets)
        .push_back("InfeedQueue/enqueue/" + std::to_string(r));
    if (mode.mode != Mode::Predict)
      mode.lossFetches.push_back("output_0_shard_" + std::to_string(r));
    if (!mode.outfeed.empty())
      mode.outfeedDequeues.push_back(r ? "OutfeedDequeueTuple_" +
                                             std::to_string(r)
                                       : std::string("OutfeedDequeueTuple"));
  }
  // Prediction fetches nothing the computation computes (the outfeed is
  // dequeued on the host): its outputs are run for it.
  if (mode.mode == Mode::Predict)
    for (int64_t r = 0; r < mode.replicas; ++r)
      mode.targets.push_back("output_0_shard_" + std::to_string(r));
  return llvm::Error::success();
}

llvm::Expected<ModeSession>
Estimator::Impl::open(Mode mode, llvm::ArrayRef<std::string> outfeed,
                      bool evalLoop, OwningOpRef<ModuleOp> graph) {
  if (llvm::Error failure = checkBatchSize(settings, mode))
    return std::move(failure);
  auto module = graph ? llvm::Expected<OwningOpRef<ModuleOp>>(std::move(graph))
                      : loadGraph(mode);
  if (!module)
    return module.takeError();
  if (llvm::Error failure = checkInputs(**module, mode))
    return std::move(failure);
  const Model &model = job.model();
  ModeSession result;
  result.mode = mode;
  result.onDevice = settings.onDevice(mode);
  result.replicas = settings.getReplicas(mode);
  result.outfeed.assign(outfeed.begin(), outfeed.end());
  for (const InputBinding &binding : model.features())
    result.inputs.emplace_back(binding.key(), binding.placeholder());
  if (mode != Mode::Predict)
    for (const InputBinding &binding : model.labels())
      result.inputs.emplace_back(binding.key(), binding.placeholder());

  if (mode == Mode::Train && result.onDevice && !model.has_optimizer() &&
      result.replicas > 1) {
    // A train op the graph has updates the variables once per replica.
    bool crossShard = false;
    (*module)->walk([&](graph::NodeOp node) {
      crossShard |= node.getOpType() == "CrossReplicaSum";
    });
    if (!crossShard)
      return makeError("model.train_op: CrossShardOptimizer must be used for "
                       "model training on TPUs.");
    return makeError(
        "model.train_op: on " + llvm::Twine(result.replicas) +
        " replicas graph-estimator builds the training step itself "
        "(CrossShardOptimizer): name model.optimizer instead of a "
        "train op");
  }
  bool towers = job.config().has_towers();
  // Training on the device loops over the step there (TPUEstimator's
  // training_loop.repeat), host_call's tensors outfed each step, unless a
  // hook logs tensors (the host needs each step's).
  bool logsTensors = llvm::any_of(job.training_hooks(), [](const Hook &hook) {
    return hook.has_logging() && hook.logging().tensors_size() > 0;
  });
  // Evaluation on the device is one launch over its steps, as
  // TPUEstimator's _SetEvalIterationsHook sets the loop's trip count;
  // prediction one launch over its input, until the stopping signal.
  result.deviceLoop = result.onDevice && !towers &&
                      (mode == Mode::Train  ? !logsTensors
                       : mode == Mode::Eval ? evalLoop
                                            : true);
  result.trainOp = getTrainOpName();
  // The step is built before the device loop takes it in (model_fn's
  // CrossShardOptimizer step, inside the computation), else after.
  auto addStep = [&]() -> llvm::Error {
    if (llvm::Error failure =
            towers ? addTowers(**module, result)
                   : addTrainingStep(**module, result.onDevice,
                                     result.deviceLoop ? result.replicas : 0))
      return failure;
    if (!findNode(**module, result.trainOp))
      return makeError("model.train_op: no node '" + result.trainOp +
                       "' in the train graph");
    return llvm::Error::success();
  };
  if (mode == Mode::Train && result.deviceLoop)
    if (llvm::Error failure = addStep())
      return std::move(failure);
  if (result.onDevice) {
    if (llvm::Error failure = putOnDevice(**module, result))
      return std::move(failure);
  } else if (mode != Mode::Predict) {
    result.lossFetches.push_back(model.loss());
  }
  if (towers && result.onDevice)
    return makeError("config.towers: towers (replicate_model_fn) train a "
                     "plain Estimator: set use_tpu: false");
  if (towers && job.config().towers().num_devices() < 1)
    return makeError("config.towers.num_devices: must be at least 1, got " +
                     llvm::Twine(job.config().towers().num_devices()));
  if (mode == Mode::Train && !result.deviceLoop) {
    if (llvm::Error failure = addStep())
      return std::move(failure);
    result.targets.push_back(result.trainOp);
  }
  result.globalStep = getGlobalStepName();
  if (graph::NodeOp step = findNode(**module, result.globalStep);
      !step || !isVariableOpType(step.getOpType())) {
    if (mode == Mode::Train)
      return makeError(
          "model.global_step: '" + result.globalStep +
          "' is not a variable of the train graph (name the global "
          "step the train op increments)");
    result.globalStep.clear();
  }
  if (llvm::Error failure = checkScaffold(**module, result.onDevice))
    return std::move(failure);
  if (llvm::Error failure = result.scaffold.capture(model.scaffold()))
    return std::move(failure);
  std::string path = getGraphPath(mode);
  // One replica on the device compiles as several do; towers run on
  // their virtual devices side by side.
  runtime::SessionOptions sessionOptions = options.session;
  sessionOptions.formSingleReplica = true;
  if (towers && mode == Mode::Train)
    sessionOptions.devices = job.config().towers().num_devices();
  // Training across processes: the step's cross-replica sums span them.
  if (mode == Mode::Train)
    sessionOptions.crossProcess = options.trainers;
  auto session = Session::create(std::move(*module), path, sessionOptions);
  if (!session)
    return session.takeError();
  result.session = std::move(*session);
  return result;
}

NamedTensors Estimator::Impl::replicaFeeds(const ModeSession &mode,
                                           const Batch &batch) {
  NamedTensors feeds;
  for (const auto &[index, input] : llvm::enumerate(mode.inputs))
    for (const auto &[key, column] : batch.columns) {
      if (key != input.first)
        continue;
      // Replica r of R takes rows [rB/R, (r+1)B/R) of the global batch.
      int64_t rows = column.shape()[0] / mode.replicas;
      for (int64_t r = 0; r < mode.replicas; ++r)
        feeds.emplace_back(mode.replicaFeeds[r][index],
                           sliceRows(column, r * rows, (r + 1) * rows));
    }
  return feeds;
}

/// The device loop's trip count, set as TensorFlow's
/// `iterations_per_loop_var.load(n)` does: its initializer, run with the
/// value fed.
static constexpr llvm::StringLiteral
    kIterationsAssign = "tpu_estimator/iterations_per_loop/Assign",
    kIterationsValue = "tpu_estimator/iterations_per_loop/Initializer/zeros";

llvm::Expected<StepResult>
Estimator::Impl::runLaunch(ModeSession &mode, llvm::ArrayRef<Batch> batches) {
  Tensor iterations(kInt32, {});
  iterations.data<int32_t>()[0] = static_cast<int32_t>(batches.size());
  if (auto set = mode.session->run({{kIterationsValue.str(), iterations}}, {},
                                   {kIterationsAssign.str()});
      !set)
    return set.takeError();
  // The infeed thread's work: every step's batch on each replica's queue.
  for (const Batch &batch : batches)
    if (auto enqueued = mode.session->run(replicaFeeds(mode, batch), {},
                                          mode.enqueueTargets);
        !enqueued)
      return enqueued.takeError();
  auto results = mode.session->run({}, mode.lossFetches, {});
  if (!results)
    return results.takeError();
  StepResult launch;
  double sum = 0;
  for (const Tensor &loss : *results)
    sum += loss.getAsDouble(0);
  launch.loss = sum / results->size();
  launch.lossTensor = (*results)[0];
  launch.lossTensor.setFromDouble(0, launch.loss);
  return launch;
}

/// The fetches of each replica's outfed tensors, replica by replica.
static std::vector<std::string> getOutfeedFetches(const ModeSession &mode) {
  std::vector<std::string> fetches;
  for (const std::string &dequeue : mode.outfeedDequeues)
    for (size_t k = 0; k < mode.outfeed.size(); ++k)
      fetches.push_back(dequeue + ":" + std::to_string(k));
  return fetches;
}

/// The outfed tensors of getOutfeedFetches' results from `next` on, the
/// replicas' concatenated.
static std::vector<Tensor> concatOutfeed(const ModeSession &mode,
                                         llvm::ArrayRef<Tensor> results,
                                         size_t &next) {
  std::vector<std::vector<Tensor>> parts(mode.outfeed.size());
  for (size_t r = 0; r < mode.outfeedDequeues.size(); ++r)
    for (size_t k = 0; k < mode.outfeed.size(); ++k)
      parts[k].push_back(results[next++]);
  std::vector<Tensor> outfed;
  for (auto &replicas : parts)
    outfed.push_back(concatRows(replicas));
  return outfed;
}

llvm::Expected<std::vector<Tensor>>
Estimator::Impl::dequeueOutfeed(ModeSession &mode) {
  auto results = mode.session->run({}, getOutfeedFetches(mode), {});
  if (!results)
    return results.takeError();
  size_t next = 0;
  return concatOutfeed(mode, *results, next);
}

llvm::Expected<StepResult>
Estimator::Impl::runStep(ModeSession &mode, const Batch &batch,
                         llvm::ArrayRef<std::string> extraFetches,
                         llvm::ArrayRef<std::string> extraTargets,
                         std::vector<Tensor> *extraResults) {
  NamedTensors feeds;
  std::vector<std::string> fetches = mode.lossFetches;
  if (mode.onDevice)
    feeds = replicaFeeds(mode, batch);
  else
    for (const auto &[key, placeholder] : mode.inputs)
      for (const auto &[column, tensor] : batch.columns)
        if (column == key)
          feeds.emplace_back(placeholder, tensor);
  llvm::append_range(fetches,
                     mode.onDevice ? getOutfeedFetches(mode) : mode.outfeed);
  llvm::append_range(fetches, extraFetches);
  std::vector<std::string> targets = mode.targets;
  llvm::append_range(targets, extraTargets);
  auto results = mode.session->run(feeds, fetches, targets);
  if (!results)
    return results.takeError();
  StepResult step;
  size_t next = 0;
  if (!mode.lossFetches.empty()) {
    double sum = 0;
    for (size_t r = 0; r < mode.lossFetches.size(); ++r)
      sum += (*results)[next++].getAsDouble(0);
    step.loss = sum / mode.lossFetches.size();
    step.lossTensor = (*results)[0];
    if (mode.lossFetches.size() > 1)
      step.lossTensor.setFromDouble(0, step.loss);
  }
  if (mode.onDevice) {
    step.outfed = concatOutfeed(mode, *results, next);
  } else {
    for (size_t k = 0; k < mode.outfeed.size(); ++k)
      step.outfed.push_back((*results)[next++]);
  }
  if (extraResults)
    extraResults->assign(results->begin() + next, results->end());
  return step;
}

llvm::Error Estimator::Impl::runInitializers(Session &session, bool localOnly) {
  ModuleOp module = session.getModule();
  std::string initName = job.model().init_op();
  if (initName.empty() && findNode(module, "init"))
    initName = "init";
  std::vector<std::string> targets;
  llvm::StringSet<> byInit;
  if (!initName.empty()) {
    graph::NodeOp init = findNode(module, initName);
    if (!init)
      return makeError("model.init_op: no node '" + initName +
                       "' in the graph");
    byInit = getControlInputNames(init);
    if (!localOnly)
      targets.push_back(initName);
  }
  // Variables the init op does not initialize (local ones: metrics) by
  // their own initializers.
  for (graph::NodeOp variable : getVariables(module)) {
    graph::NodeOp initializer = getInitializer(variable);
    if (!initializer || byInit.contains(initializer.getName()))
      continue;
    if (!localOnly && !initName.empty() &&
        llvm::is_contained(targets, initializer.getName()))
      continue;
    targets.push_back(initializer.getName().str());
  }
  if (!job.model().local_init_op().empty())
    targets.push_back(job.model().local_init_op());
  if (targets.empty())
    return llvm::Error::success();
  auto done = session.run({}, {}, targets);
  return done ? llvm::Error::success() : done.takeError();
}

/// For evaluation and prediction: the checkpoint's variables; variables it
/// lacks that the init op does not initialize (local ones) are initialized.
llvm::Error Estimator::Impl::restoreForEvaluation(Session &session,
                                                  llvm::StringRef prefix) {
  ModuleOp module = session.getModule();
  std::vector<std::string> missing;
  auto mapped = mapVariablesByName(module, prefix, "", &missing);
  if (!mapped)
    return mapped.takeError();
  if (llvm::Error failure = runInitializers(session, /*localOnly=*/true))
    return failure;
  // A model variable the checkpoint does not hold is Saver's error.
  std::string initName = job.model().init_op().empty() ? std::string("init")
                                                       : job.model().init_op();
  if (graph::NodeOp init = findNode(module, initName)) {
    llvm::StringSet<> byInit = getControlInputNames(init);
    for (const std::string &name : missing)
      if (graph::NodeOp initializer = getInitializer(findNode(module, name));
          initializer && byInit.contains(initializer.getName()))
        return makeError("restoring '" + prefix + "': Key " + name +
                         " not found in checkpoint");
  }
  info("Restoring parameters from " + prefix);
  return session.restoreMapped(prefix, *mapped);
}

/// TPUEstimator's _get_scaffold: a scaffold_fn that gives nothing, and on
/// the device a scaffold op that reads the TPU computation (what
/// _CapturingContext refuses).
llvm::Error Estimator::Impl::checkScaffold(ModuleOp module, bool onDevice) {
  const Model &model = job.model();
  if (!model.has_scaffold())
    return llvm::Error::success();
  const Scaffold &scaffold = model.scaffold();
  if (!scaffold.has_init_from_checkpoint() && scaffold.init_op().empty() &&
      scaffold.local_init_op().empty())
    return makeError("model.scaffold: TPUEstimatorSpec.scaffold_fn returns "
                     "None, which is not allowed");
  for (auto [field, name] : {std::pair<llvm::StringRef, llvm::StringRef>{
                                 "init_op", scaffold.init_op()},
                             {"local_init_op", scaffold.local_init_op()}}) {
    if (name.empty())
      continue;
    graph::NodeOp op = findNode(module, name);
    if (!op)
      return makeError("model.scaffold." + field + ": no node '" + name +
                       "' in the graph");
    if (!onDevice)
      continue;
    // The device loop's step moved into its body: what model_fn built
    // and is still in the graph reads the infeed.
    llvm::DenseSet<Operation *> readsInfeed;
    if (graph::NodeOp dequeue = findNode(module, "InfeedQueue/dequeue")) {
      llvm::SmallVector<Operation *> forward = {dequeue};
      while (!forward.empty()) {
        Operation *node = forward.pop_back_val();
        if (readsInfeed.insert(node).second)
          llvm::append_range(forward, node->getUsers());
      }
    }
    llvm::SmallVector<graph::NodeOp> work = {op};
    llvm::DenseSet<Operation *> seen;
    while (!work.empty()) {
      graph::NodeOp node = work.pop_back_val();
      if (!seen.insert(node).second)
        continue;
      for (Value input : node->getOperands()) {
        auto producer = input.getDefiningOp<graph::NodeOp>();
        // A replica's output (output_<k>_shard_<r> of a
        // TPUReplicatedOutput) stands for the tensor the computation gave.
        if (producer && producer.getOpType() == "Identity" &&
            !producer.getDataInputs().empty())
          if (auto output =
                  producer.getDataInputs()[0].getDefiningOp<graph::NodeOp>();
              output && output.getOpType() == "TPUReplicatedOutput")
            producer = output;
        if (producer && producer.getOpType() == "TPUReplicatedOutput" &&
            !producer.getDataInputs().empty()) {
          input = producer.getDataInputs()[0];
          producer = input.getDefiningOp<graph::NodeOp>();
          if (producer && producer.getTFBool("_tpu_output_identity") &&
              !producer.getDataInputs().empty()) {
            input = producer.getDataInputs()[0];
            producer = input.getDefiningOp<graph::NodeOp>();
          }
        }
        if (!producer)
          continue;
        if (producer.getTFAttr("_tpu_replicate") ||
            readsInfeed.contains(producer)) {
          std::string tensor =
              isa<graph::ControlType>(input.getType())
                  ? ("^" + producer.getName()).str()
                  : (producer.getName() + ":" +
                     llvm::Twine(cast<OpResult>(input).getResultNumber()))
                        .str();
          return makeError("model.scaffold." + field +
                           ": Inside scaffold_fn: Op '" + node.getName() +
                           "' depends on TPU computation '" + tensor +
                           "', which is not allowed.");
        }
        work.push_back(producer);
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error Estimator::Impl::warmStart(ModeSession &mode) {
  Session &session = *mode.session;
  if (llvm::Error failure = restoreSavedModelVariables(session))
    return failure;
  const std::string &from = job.config().warm_start_from();
  if (!from.empty()) {
    auto prefix = runtime::resolveCheckpointPrefix(from);
    if (!prefix)
      return makeError("config.warm_start_from: " +
                       llvm::toString(prefix.takeError()));
    // WarmStartSettings' default: every trainable variable the checkpoint
    // holds under the same name (the global step is not warm-started).
    auto mapped =
        mapVariablesByName(session.getModule(), *prefix, getGlobalStepName());
    if (!mapped)
      return mapped.takeError();
    info("Warm-starting from: " + *prefix);
    if (llvm::Error failure = session.restoreMapped(*prefix, *mapped))
      return failure;
  }
  auto captured = mode.scaffold.get();
  if (!captured)
    return captured.takeError();
  const Scaffold &scaffold = *captured;
  if (scaffold.has_init_from_checkpoint()) {
    const InitFromCheckpoint &init = scaffold.init_from_checkpoint();
    auto prefix = runtime::resolveCheckpointPrefix(init.checkpoint());
    if (!prefix)
      return makeError("model.scaffold.init_from_checkpoint: " +
                       llvm::toString(prefix.takeError()));
    auto reader = checkpoint::BundleReader::open(*prefix);
    if (!reader)
      return reader.takeError();
    std::vector<std::string> keys = reader->keys();
    std::vector<std::pair<std::string, std::string>> mapped;
    ModuleOp module = session.getModule();
    for (const auto &assignment : init.assignment()) {
      llvm::StringRef from = assignment.from(), to = assignment.to();
      bool scoped = from.ends_with("/");
      size_t before = mapped.size();
      if (!scoped) {
        if (!llvm::is_contained(keys, from))
          return makeError("model.scaffold.init_from_checkpoint: Tensor " +
                           from + " is not found in " + *prefix +
                           " checkpoint");
        mapped.emplace_back(to.str(), from.str());
      } else {
        // 'scope/' -> 'scope/': every checkpoint variable under the scope
        // ('/': the root) into the graph's scope.
        llvm::StringRef prefixFrom = from == "/" ? "" : from;
        llvm::StringRef prefixTo = to == "/" ? "" : to;
        for (const std::string &key : keys)
          if (llvm::StringRef(key).starts_with(prefixFrom)) {
            std::string target =
                (prefixTo + llvm::StringRef(key).drop_front(prefixFrom.size()))
                    .str();
            if (findNode(module, target))
              mapped.emplace_back(target, key);
          }
      }
      if (mapped.size() == before)
        return makeError("model.scaffold.init_from_checkpoint: Assignment map "
                         "with scope only name " +
                         from + " should map to scope only " + to +
                         " (nothing in " + *prefix + " matches)");
    }
    if (llvm::Error failure = session.restoreMapped(*prefix, mapped))
      return makeError("model.scaffold.init_from_checkpoint: " +
                       llvm::toString(std::move(failure)));
  }
  for (const std::string *op : {&scaffold.init_op(), &scaffold.local_init_op()})
    if (!op->empty()) {
      auto done = session.run({}, {}, {*op});
      if (!done)
        return done.takeError();
    }
  return llvm::Error::success();
}

llvm::Error Estimator::Impl::initialize(ModeSession &mode,
                                        llvm::StringRef checkpoint,
                                        bool *restored) {
  std::string prefix = checkpoint.str();
  if (prefix.empty()) {
    auto latest = findLatestCheckpoint(settings.modelDir);
    if (!latest)
      return latest.takeError();
    prefix = *latest;
  } else {
    auto resolved = runtime::resolveCheckpointPrefix(prefix);
    if (!resolved)
      return resolved.takeError();
    prefix = *resolved;
  }
  *restored = !prefix.empty();
  if (mode.mode != Mode::Train) {
    if (prefix.empty()) {
      info("Could not find trained model in model_dir: " + settings.modelDir +
           ", running initialization to " +
           (mode.mode == Mode::Eval ? "evaluate." : "predict."));
      if (llvm::Error failure = runInitializers(*mode.session, false))
        return failure;
      return warmStart(mode);
    }
    if (mode.globalStep.empty()) {
      // The eval and predict graphs need not hold the global step; the
      // checkpoint does.
      auto reader = checkpoint::BundleReader::open(prefix);
      if (!reader)
        return reader.takeError();
      if (reader->lookup(getGlobalStepName())) {
        auto step = reader->read(getGlobalStepName());
        if (!step)
          return step.takeError();
        mode.checkpointStep = step->getAsInt(0);
      }
    }
    return restoreForEvaluation(*mode.session, prefix);
  }
  if (!prefix.empty()) {
    info("Restoring parameters from " + prefix);
    return mode.session->restore(prefix);
  }
  if (llvm::Error failure = runInitializers(*mode.session, false))
    return failure;
  return warmStart(mode);
}

llvm::Expected<Examples> Estimator::Impl::readInput(Mode mode) {
  const Input &input = job.input();
  const Dataset &dataset = mode == Mode::Train  ? input.train()
                           : mode == Mode::Eval ? input.eval()
                                                : input.predict();
  llvm::StringRef field = mode == Mode::Train  ? "input.train"
                          : mode == Mode::Eval ? "input.eval"
                                               : "input.predict";
  if (!dataset.has_idx() && !dataset.has_npy() && !dataset.has_tfrecord())
    return makeError(field + ": no input (idx { images: ... labels: ... }, "
                             "npy { file { key: ... path: ... } } or "
                             "tfrecord { files: ... features { ... } })");
  InputKeys keys;
  keys.featureKey = job.model().features(0).key();
  keys.labelKey =
      job.model().labels().empty() ? "labels" : job.model().labels(0).key();
  auto examples = readDataset(dataset, "", keys);
  if (!examples)
    return makeError(field + ": " + llvm::toString(examples.takeError()));
  for (const InputBinding &binding : job.model().features())
    if (!examples->find(binding.key()))
      return makeError(field + ": the input has no '" + binding.key() +
                       "' for model.features");
  if (mode != Mode::Predict)
    for (const InputBinding &binding : job.model().labels())
      if (!examples->find(binding.key()))
        return makeError(field + ": the input has no '" + binding.key() +
                         "' for model.labels");
  return examples;
}

llvm::Expected<int64_t> Estimator::Impl::readGlobalStep(ModeSession &mode) {
  if (mode.globalStep.empty())
    return mode.checkpointStep;
  auto value = mode.session->readVariable(mode.globalStep);
  if (!value)
    return value.takeError();
  return value->getAsInt(0);
}

llvm::Error Estimator::Impl::save(ModeSession &mode, int64_t step) {
  std::string prefix = getCheckpointPrefix(settings.modelDir, step);
  info("Saving checkpoints for " + llvm::Twine(step) + " into " +
       llvm::StringRef(prefix).drop_back(std::to_string(step).size() + 1) +
       ".");
  return mode.session->save(prefix, unsigned(settings.keepCheckpointMax),
                            /*relativePaths=*/true);
}

std::string Estimator::getLatestCheckpoint() const {
  auto latest = findLatestCheckpoint(impl->settings.modelDir);
  if (latest)
    return *latest;
  llvm::consumeError(latest.takeError());
  return "";
}

//===----------------------------------------------------------------------===//
// train
//===----------------------------------------------------------------------===//

/// --check-replicas-every: every trainer hashes each variable it holds;
/// the chief's hashes are summed with the others' zeros (so each trainer
/// gets them), and the count of trainers that disagree on each variable is
/// summed too, so that all of them fail together, naming the first
/// variable that differs. Hashes keep 52 bits: exact in a double.
static llvm::Error checkTrainersAgree(runtime::Session &session,
                                      runtime::ProcessGroup &trainers,
                                      int64_t step) {
  auto names = session.getCheckpointedVariables();
  if (!names)
    return names.takeError();
  size_t n = names->size();
  std::vector<double> mine(n), chief(n, 0.0), disagree(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    auto value = session.readVariable((*names)[i]);
    if (!value)
      return value.takeError();
    llvm::ArrayRef<uint8_t> bytes(
        reinterpret_cast<const uint8_t *>(value->raw()), value->byteSize());
    mine[i] = double(llvm::xxh3_64bits(bytes) & ((uint64_t(1) << 52) - 1));
  }
  if (trainers.getRank() == 0)
    chief = mine;
  if (llvm::Error failure = trainers.allReduceSum(chief.data(), n, kDouble))
    return failure;
  for (size_t i = 0; i < n; ++i)
    disagree[i] = mine[i] != chief[i];
  if (llvm::Error failure = trainers.allReduceSum(disagree.data(), n, kDouble))
    return failure;
  for (size_t i = 0; i < n; ++i)
    if (disagree[i] > 0)
      return makeError("--check-replicas-every: after global step " +
                       llvm::Twine(step) + ", variable '" + (*names)[i] +
                       "' differs from the chief's on " +
                       llvm::Twine(int64_t(disagree[i])) + " of the " +
                       llvm::Twine(trainers.getSize()) + " trainers");
  return llvm::Error::success();
}

llvm::Error Estimator::train(std::optional<int64_t> steps,
                             std::optional<int64_t> maxSteps,
                             SavingListener *listener) {
  Impl &I = *impl;
  if (steps && maxSteps)
    return makeError("Can not provide both steps and max_steps.");
  if (steps && *steps <= 0)
    return makeError("Must specify steps > 0, given: " + llvm::Twine(*steps));
  if (maxSteps && *maxSteps <= 0)
    return makeError("Must specify max_steps > 0, given: " +
                     llvm::Twine(*maxSteps));
  if (I.settings.onDevice(Mode::Train) && !steps && !maxSteps)
    return makeError("For TPU training, one of `steps` or `max_steps` must be "
                     "set. Cannot be both `None`.");
  runtime::ProcessGroup *trainers = I.options.trainers;
  const ParameterServerCluster *psCluster = I.options.parameterServers;
  if (psCluster && I.settings.onDevice(Mode::Train))
    return makeError("config.use_tpu: asynchronous training with ps tasks "
                     "runs Estimator's step, each trainer on its own: set "
                     "use_tpu: false");
  // Across processes only the chief writes checkpoints and runs host_call
  // (its summaries).
  bool isChief =
      psCluster ? psCluster->isChief : !trainers || trainers->getRank() == 0;
  if (maxSteps) {
    // Estimator skips a run whose max_steps a checkpoint already reached.
    std::optional<int64_t> saved = getCheckpointStep(getLatestCheckpoint());
    if (saved && *saved >= *maxSteps) {
      I.info("Skipping training since max_steps has already saved.");
      return llvm::Error::success();
    }
  }
  auto examples = I.readInput(Mode::Train);
  if (!examples)
    return examples.takeError();
  I.info("Calling model_fn.");
  // host_call's tensors are what each training step outfeeds.
  std::unique_ptr<HostCallRunner> hostCall;
  OwningOpRef<ModuleOp> graph;
  if (I.job.model().has_host_call() && isChief) {
    auto loaded = I.loadGraph(Mode::Train);
    if (!loaded)
      return loaded.takeError();
    graph = std::move(*loaded);
    auto runner =
        HostCallRunner::create(I.job, *graph, I.context, I.options.session);
    if (!runner)
      return runner.takeError();
    hostCall = std::move(*runner);
  }
  auto mode = I.open(Mode::Train,
                     hostCall ? hostCall->getModelTensors()
                              : std::vector<std::string>(),
                     /*evalLoop=*/false, std::move(graph));
  if (!mode)
    return mode.takeError();
  I.info("Done calling model_fn.");
  bool restored = false;
  if (llvm::Error failure = I.initialize(*mode, "", &restored))
    return failure;
  // With ps tasks the chief puts what it initialized or restored on them,
  // the others wait for it; every step then pulls the variables and
  // pushes the gradients, which the ps tasks apply.
  std::unique_ptr<ParameterClient> parameters;
  if (psCluster) {
    auto layout = ParameterLayout::build(*mode->session, mode->globalStep,
                                         int(psCluster->psTasks.size()));
    if (!layout)
      return layout.takeError();
    InfoLog log(I.options.log);
    auto client = ParameterClient::connect(*psCluster, std::move(*layout), log);
    if (!client)
      return client.takeError();
    parameters = std::move(*client);
    llvm::Error ready = isChief ? parameters->initialize(*mode->session)
                                : parameters->waitUntilReady(log);
    if (ready)
      return ready;
    if (llvm::Error failure = parameters->pullTrained(*mode->session))
      return failure;
    mode->targets.clear();
  }
  auto startStep = I.readGlobalStep(*mode);
  if (!startStep)
    return startStep.takeError();
  int64_t step = *startStep;
  int64_t lastStep = maxSteps ? *maxSteps
                     : steps  ? step + *steps
                              : std::numeric_limits<int64_t>::max();
  auto hooks =
      TrainingHooks::create(I.job, I.settings.onDevice(Mode::Train), step);
  if (!hooks)
    return hooks.takeError();
  if (hooks->lastStep)
    lastStep = std::min(lastStep, *hooks->lastStep);
  if (step >= lastStep) {
    I.info("Skipping training since max_steps has already saved.");
    return llvm::Error::success();
  }

  const Dataset &dataset = I.job.input().train();
  // With ps tasks every trainer reads the whole input, as each worker's
  // input_fn does, in an order of its own: the shuffle seed plus its index,
  // and (unshuffled) from its own part of the first epoch on.
  int64_t trainerIndex = 0, trainerCount = 1;
  if (psCluster) {
    trainerCount = psCluster->trainerTasks.size();
    trainerIndex = llvm::find(psCluster->trainerTasks, psCluster->self) -
                   psCluster->trainerTasks.begin();
  }
  BatchStream stream(*examples, I.settings.getGlobalBatchSize(Mode::Train),
                     dataset.has_shuffle(),
                     dataset.shuffle().seed() + uint64_t(trainerIndex),
                     dataset.repeat(), /*padLast=*/false);
  // A trainer of several names the step a failure (a trainer gone)
  // stopped.
  auto failedAt = [&](llvm::Error failure) -> llvm::Error {
    if (!trainers && !parameters)
      return failure;
    std::string message;
    llvm::handleAllErrors(
        std::move(failure),
        [&](const runtime::ReportedError &) { message = "the error above"; },
        [&](const llvm::ErrorInfoBase &info) { message = info.message(); });
    return makeError("training stopped after global step " + llvm::Twine(step) +
                     ": " + message);
  };
  // A trainer of several takes its rows of each global batch, as its
  // replicas then take theirs.
  auto processShare = [&](Batch batch) {
    if (!trainers)
      return batch;
    int64_t rows = batch.columns.front().second.shape()[0];
    int64_t rank = trainers->getRank(), size = trainers->getSize();
    return sliceBatch(batch, rows * rank / size, rows * (rank + 1) / size);
  };
  // The input position follows global_step, so a resumed run sees the
  // batches an uninterrupted run would.
  int64_t firstBatch = step;
  if (psCluster && !dataset.has_shuffle())
    firstBatch +=
        trainerIndex * stream.getBatchCount().value_or(0) / trainerCount;
  Prefetcher prefetcher(stream, firstBatch,
                        dataset.prefetch() > 0 ? dataset.prefetch() : 2);

  // Checkpoints: one at the start, at loop boundaries when due, one at
  // the end, as CheckpointSaverHook saves them, each told to the listener
  // (which may stop training).
  bool listenerStop = false;
  auto save = [&]() -> llvm::Error {
    if (!isChief)
      return llvm::Error::success();
    if (parameters) {
      // The ps tasks' variables, at the global step they have reached.
      if (llvm::Error failure = parameters->pullAll(*mode->session))
        return failedAt(std::move(failure));
      auto pulled = I.readGlobalStep(*mode);
      if (!pulled)
        return pulled.takeError();
      step = *pulled;
    }
    if (llvm::Error failure = I.save(*mode, step))
      return failure;
    if (!listener)
      return llvm::Error::success();
    auto stop = listener->afterSave(step);
    if (!stop)
      return stop.takeError();
    listenerStop |= *stop;
    return llvm::Error::success();
  };
  if (llvm::Error failure = save())
    return failure;
  // The plain step across processes: each trainer's gradients summed
  // over all of them, then applied by each (with ps tasks, pushed).
  std::unique_ptr<AllReducedStep> allReduced;
  if (trainers) {
    // The other trainers start from the chief's first checkpoint, so
    // every process holds the same variables.
    if (llvm::Error failure = trainers->barrier())
      return failure;
    if (!isChief)
      if (llvm::Error failure = mode->session->restore(
              getCheckpointPrefix(I.settings.modelDir, step)))
        return failure;
    if (!I.settings.onDevice(Mode::Train)) {
      auto created = AllReducedStep::create(
          *mode->session, mode->globalStep, mode->trainOp, *trainers,
          !I.job.model().has_optimizer() ||
              I.job.model().optimizer().reduction() != Optimizer::SUM);
      if (!created)
        return created.takeError();
      allReduced = std::move(*created);
      mode->targets.clear();
    }
  }
  GradientExchange *exchange =
      parameters ? static_cast<GradientExchange *>(parameters.get())
                 : allReduced.get();
  int64_t lastSaveStep = step;
  auto lastSaveTime = std::chrono::steady_clock::now();

  // On the device, a launch runs iterations_per_loop steps; the hooks,
  // the saver and the stop check run between launches.
  int64_t perLaunch =
      I.settings.onDevice(Mode::Train) ? I.settings.iterationsPerLoop : 1;
  TrainingLog log = I.log(step, lastStep);
  std::string lossText = "nan";
  bool inputEnded = false;
  int64_t stepsRun = 0;
  // NanTensorHook: Estimator's fails; fail_on_nan_loss: false logs.
  auto checkLoss = [&](const StepResult &result) -> llvm::Error {
    if (!std::isnan(result.loss))
      return llvm::Error::success();
    log.clear();
    if (hooks->failOnNanLoss)
      return makeError("NaN loss during training.");
    I.info("Model diverged with loss = NaN.");
    return llvm::Error::success();
  };
  // After `ran` steps: global_step must have grown (by one per step of a
  // launch, which the device loop's optimizer increments).
  auto advance = [&](const StepResult &result, int64_t ran) -> llvm::Error {
    lossText = formatValue(result.lossTensor);
    auto after = I.readGlobalStep(*mode);
    if (!after)
      return after.takeError();
    if (*after == step || (mode->deviceLoop && *after != step + ran))
      return makeError("It seems that global step (tf.train.get_global_step) "
                       "has not been increased: model.train_op '" +
                       mode->trainOp + "' does not increment '" +
                       mode->globalStep + "'" +
                       (mode->deviceLoop ? " once per step" : ""));
    step = *after;
    stepsRun += ran;
    return llvm::Error::success();
  };
  while (step < lastStep && !inputEnded && !listenerStop) {
    int64_t launch = std::min(perLaunch, lastStep - step);
    if (perLaunch > 1)
      log.info(llvm::formatv("Enqueue next ({0}) batch(es) of data to "
                             "infeed.",
                             launch)
                   .str());
    int64_t launchStart = step;
    if (mode->deviceLoop) {
      std::vector<Batch> batches;
      while ((int64_t)batches.size() < launch) {
        auto batch = prefetcher.next();
        if (!batch)
          return batch.takeError();
        if (!*batch) {
          inputEnded = true;
          break;
        }
        batches.push_back(processShare(std::move(**batch)));
      }
      if (batches.empty())
        break;
      auto result = I.runLaunch(*mode, batches);
      if (!result) {
        log.clear();
        return failedAt(result.takeError());
      }
      // The outfeed thread's work: host_call on each step's tensors, in
      // step order.
      for (size_t i = 0; hostCall && i < batches.size(); ++i) {
        auto outfed = I.dequeueOutfeed(*mode);
        llvm::Error failure =
            outfed ? hostCall->run(*outfed) : outfed.takeError();
        if (failure) {
          log.clear();
          return failure;
        }
      }
      if (llvm::Error failure = checkLoss(*result))
        return failure;
      if (llvm::Error failure = advance(*result, batches.size()))
        return failure;
    }
    for (int64_t i = 0; i < launch && !mode->deviceLoop; ++i) {
      auto batch = prefetcher.next();
      if (!batch) {
        log.clear();
        return batch.takeError();
      }
      if (!*batch) {
        inputEnded = true;
        break;
      }
      std::vector<std::string> fetches = hooks->fetchesAt(step);
      if (parameters) {
        // The variables the last push (or the first pull) brought back:
        // others may have taken training to its end meanwhile.
        auto pulled = I.readGlobalStep(*mode);
        if (!pulled)
          return pulled.takeError();
        step = *pulled;
        if (step >= lastStep)
          break;
      }
      if (exchange)
        llvm::append_range(fetches, exchange->getGradients());
      std::vector<Tensor> logged;
      auto result = I.runStep(*mode, processShare(std::move(**batch)), fetches,
                              {}, &logged);
      if (!result) {
        log.clear();
        return failedAt(result.takeError());
      }
      if (exchange) {
        size_t count = exchange->getGradients().size();
        if (llvm::Error failure = exchange->exchange(
                llvm::ArrayRef<Tensor>(logged).take_back(count),
                *mode->session)) {
          log.clear();
          return failedAt(std::move(failure));
        }
        logged.resize(logged.size() - count);
      }
      if (llvm::Error failure = checkLoss(*result))
        return failure;
      hooks->logTensors(step, logged, log);
      if (hostCall)
        if (llvm::Error failure = hostCall->run(result->outfed)) {
          log.clear();
          return failure;
        }
      if (llvm::Error failure = advance(*result, 1))
        return failure;
    }
    log.stepsDone(launchStart, step - launchStart, lossText,
                  perLaunch > 1 ? step : launchStart);
    hooks->countSteps(step, log);
    if (trainers && I.options.checkReplicasEvery > 0 &&
        step / I.options.checkReplicasEvery !=
            launchStart / I.options.checkReplicasEvery)
      if (llvm::Error failure =
              checkTrainersAgree(*mode->session, *trainers, step)) {
        log.clear();
        return failure;
      }
    bool dueBySteps = I.settings.saveCheckpointsSteps &&
                      step - lastSaveStep >= *I.settings.saveCheckpointsSteps;
    bool dueBySecs =
        I.settings.saveCheckpointsSecs &&
        secondsSince(lastSaveTime) >= *I.settings.saveCheckpointsSecs;
    if ((dueBySteps || dueBySecs) && step != lastSaveStep && step < lastStep &&
        !inputEnded) {
      log.clear();
      if (llvm::Error failure = save())
        return failure;
      lastSaveStep = step;
      lastSaveTime = std::chrono::steady_clock::now();
    }
  }
  log.clear();
  if (step != lastSaveStep)
    if (llvm::Error failure = save())
      return failure;
  if (listener)
    if (llvm::Error failure = listener->end(step))
      return failure;
  if (stepsRun == 0)
    I.info("Training with estimator made no steps. Perhaps input is empty "
           "or misspecified.");
  I.info("Loss for final step: " + lossText + ".");
  return llvm::Error::success();
}

llvm::Error Estimator::serveParameters() {
  Impl &I = *impl;
  const ParameterServerCluster *cluster = I.options.parameterServers;
  if (!cluster)
    return makeError("serveParameters: no ps cluster in the options");
  if (I.settings.onDevice(Mode::Train))
    return makeError("config.use_tpu: asynchronous training with ps tasks "
                     "runs Estimator's step, each trainer on its own: set "
                     "use_tpu: false");
  I.info("Calling model_fn.");
  auto mode = I.open(Mode::Train);
  if (!mode)
    return mode.takeError();
  I.info("Done calling model_fn.");
  // The chief's values replace these; the others' updates need some.
  bool restored = false;
  if (llvm::Error failure = I.initialize(*mode, "", &restored))
    return failure;
  auto layout = ParameterLayout::build(*mode->session, mode->globalStep,
                                       int(cluster->psTasks.size()));
  if (!layout)
    return layout.takeError();
  InfoLog log(I.options.log);
  return estimator::serveParameters(*mode->session, *layout, mode->trainOp,
                                    *cluster, log);
}

//===----------------------------------------------------------------------===//
// evaluate
//===----------------------------------------------------------------------===//

llvm::Expected<EvalResult> Estimator::evaluate(std::optional<int64_t> steps,
                                               llvm::StringRef checkpoint,
                                               llvm::StringRef name) {
  Impl &I = *impl;
  if (steps && *steps <= 0)
    return makeError("Must specify steps > 0, given: " + llvm::Twine(*steps));
  if (I.settings.onDevice(Mode::Eval) && !steps)
    return makeError("Evaluate `steps` must be set on TPU. Cannot be `None`.");
  auto hooks =
      TrainingHooks::create(I.job.evaluation_hooks(), "evaluation_hooks",
                            I.settings.onDevice(Mode::Eval), 0);
  if (!hooks)
    return hooks.takeError();
  auto examples = I.readInput(Mode::Eval);
  if (!examples)
    return examples.takeError();
  I.info("Calling model_fn.");
  // The metrics are checked against the graph model_fn gives; their
  // tensors are what a step outfeeds.
  auto graph = I.loadGraph(Mode::Eval);
  if (!graph)
    return graph.takeError();
  auto metrics =
      MetricRunner::create(I.job, **graph, I.settings.onDevice(Mode::Eval),
                           I.context, I.options.session);
  if (!metrics)
    return metrics.takeError();
  // In-graph metric updates need each step on the host: then one step
  // per run, else the whole evaluation in one launch of the device loop.
  auto mode = I.open(Mode::Eval, (*metrics)->getModelTensors(),
                     (*metrics)->getModelUpdates().empty(), std::move(*graph));
  if (!mode)
    return mode.takeError();
  I.info("Done calling model_fn.");
  bool restored = false;
  if (llvm::Error failure = I.initialize(*mode, checkpoint, &restored))
    return std::move(failure);
  if (llvm::Error failure = (*metrics)->initialize())
    return std::move(failure);
  auto globalStep = I.readGlobalStep(*mode);
  if (!globalStep)
    return globalStep.takeError();

  auto start = std::chrono::system_clock::now();
  std::time_t startTime = std::chrono::system_clock::to_time_t(start);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S",
                std::localtime(&startTime));
  I.info(llvm::Twine("Starting evaluation at ") + stamp);

  const Dataset &dataset = I.job.input().eval();
  BatchStream stream(*examples, I.settings.getGlobalBatchSize(Mode::Eval),
                     dataset.has_shuffle(), dataset.shuffle().seed(),
                     dataset.repeat(), /*padLast=*/false);
  Prefetcher prefetcher(stream, 0,
                        dataset.prefetch() > 0 ? dataset.prefetch() : 2);
  int64_t evaluated = 0;
  auto began = std::chrono::steady_clock::now();
  auto inputEnded = [&](int64_t read) {
    return makeError(
        llvm::formatv("input.eval: the input ended after {0} of the {1} "
                      "evaluation steps (each of {2} examples; the input "
                      "holds {3})",
                      read, *steps, stream.getBatchSize(), examples->count)
            .str());
  };
  auto logProgress = [&]() {
    if (steps &&
        (*steps < 20 || evaluated % std::max<int64_t>(1, *steps / 10) == 0 ||
         evaluated == *steps))
      I.info(llvm::formatv("Evaluation [{0}/{1}]", evaluated, *steps).str());
  };
  if (mode->deviceLoop) {
    // One launch: every batch enqueued, the replicas run the loop, and the
    // outfeed thread's work after it: each step's tensors to the metrics.
    std::vector<Batch> batches;
    while (int64_t(batches.size()) < *steps) {
      auto batch = prefetcher.next();
      if (!batch)
        return batch.takeError();
      if (!*batch)
        return inputEnded(batches.size());
      batches.push_back(std::move(**batch));
    }
    I.info(
        llvm::formatv("Enqueue next ({0}) batch(es) of data to infeed.", *steps)
            .str());
    I.info(llvm::formatv("Dequeue next ({0}) batch(es) of data from outfeed.",
                         *steps)
               .str());
    auto launch = I.runLaunch(*mode, batches);
    if (!launch)
      return launch.takeError();
    // The loop carries the sum of the steps' losses.
    double stepLoss = launch->loss / *steps;
    while (evaluated < *steps) {
      auto outfed = I.dequeueOutfeed(*mode);
      if (!outfed)
        return outfed.takeError();
      if (llvm::Error failure = (*metrics)->update(stepLoss, *outfed))
        return std::move(failure);
      ++evaluated;
      logProgress();
    }
  } else {
    TrainingLog log = I.log();
    while (!steps || evaluated < *steps) {
      auto next = prefetcher.next();
      if (!next)
        return next.takeError();
      std::optional<Batch> &batch = *next;
      if (!batch) {
        if (steps)
          return inputEnded(evaluated);
        break;
      }
      // The step's in-graph metric updates, then what the hooks log.
      std::vector<std::string> extra = (*metrics)->getModelUpdates();
      size_t updates = extra.size();
      llvm::append_range(extra, hooks->fetchesAt(evaluated));
      std::vector<Tensor> extraResults;
      auto result = I.runStep(*mode, *batch, extra, {}, &extraResults);
      if (!result)
        return result.takeError();
      if (llvm::Error failure =
              (*metrics)->update(result->loss, result->outfed))
        return std::move(failure);
      hooks->logTensors(
          evaluated, llvm::ArrayRef<Tensor>(extraResults).drop_front(updates),
          log);
      ++evaluated;
      logProgress();
    }
  }
  I.info(llvm::formatv("Inference Time : {0:f5}s", secondsSince(began)).str());
  auto values = (*metrics)->values(*mode->session);
  if (!values)
    return values.takeError();
  EvalResult result;
  result.globalStep = *globalStep;
  result.metrics = std::move(*values);
  result.metrics.emplace_back("global_step", double(*globalStep));
  llvm::sort(result.metrics);
  std::time_t endTime =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H:%M:%S",
                std::localtime(&endTime));
  I.info(llvm::Twine("Finished evaluation at ") + stamp);
  std::string line;
  for (const auto &[metric, value] : result.metrics) {
    if (!line.empty())
      line += ", ";
    line += metric + " = " +
            (metric == "global_step"
                 ? std::to_string(int64_t(value))
                 : llvm::formatv("{0}", llvm::format("%g", value)).str());
  }
  I.info("Saving dict for global step " + llvm::Twine(*globalStep) + ": " +
         line);
  llvm::SmallString<256> eventDir(I.settings.modelDir);
  llvm::sys::path::append(eventDir, name.empty() ? std::string("eval")
                                                 : ("eval_" + name).str());
  auto events = checkpoint::EventFileWriter::create(eventDir);
  if (!events)
    return events.takeError();
  if (llvm::Error failure =
          (*events)->writeScalars(*globalStep, result.metrics))
    return std::move(failure);
  return result;
}

//===----------------------------------------------------------------------===//
// predict
//===----------------------------------------------------------------------===//

llvm::Expected<Predictions>
Estimator::predict(llvm::ArrayRef<std::string> predictKeys,
                   llvm::StringRef checkpoint) {
  Impl &I = *impl;
  const Model &model = I.job.model();
  if (model.predictions().empty())
    return makeError("model.predictions: Missing predictions.");
  std::vector<std::string> keys, tensors;
  std::vector<std::string> existing;
  for (const NamedTensor &prediction : model.predictions())
    existing.push_back(prediction.key());
  for (const NamedTensor &prediction : model.predictions())
    if (predictKeys.empty() ||
        llvm::is_contained(predictKeys, prediction.key())) {
      keys.push_back(prediction.key());
      tensors.push_back(prediction.tensor());
    }
  if (keys.empty()) {
    return makeError("Expected to run at least one output from " +
                     pythonList(existing) + ", provided " +
                     pythonList(predictKeys) + ".");
  }
  auto hooks =
      TrainingHooks::create(I.job.prediction_hooks(), "prediction_hooks",
                            I.settings.onDevice(Mode::Predict), 0);
  if (!hooks)
    return hooks.takeError();
  auto examples = I.readInput(Mode::Predict);
  if (!examples)
    return examples.takeError();
  I.info("Calling model_fn.");
  auto graph = I.loadGraph(Mode::Predict);
  if (!graph)
    return graph.takeError();
  for (const NamedTensor &prediction : model.predictions())
    if (!hasTensor(**graph, prediction.tensor()))
      return makeError("model.predictions: no tensor '" + prediction.tensor() +
                       "' (key '" + prediction.key() +
                       "') in the predict graph");
  auto mode =
      I.open(Mode::Predict, tensors, /*evalLoop=*/false, std::move(*graph));
  if (!mode)
    return mode.takeError();
  I.info("Done calling model_fn.");
  bool restored = false;
  if (llvm::Error failure = I.initialize(*mode, checkpoint, &restored))
    return std::move(failure);

  const Dataset &dataset = I.job.input().predict();
  BatchStream stream(*examples, I.settings.getGlobalBatchSize(Mode::Predict),
                     /*shuffle=*/false, 0, /*repeat=*/false,
                     /*padLast=*/true);
  Prefetcher prefetcher(stream, 0,
                        dataset.prefetch() > 0 ? dataset.prefetch() : 2);
  std::vector<std::vector<Tensor>> pieces(keys.size());
  // Each batch's predictions, the padding rows of the last dropped.
  auto collect = [&](const Batch &batch,
                     llvm::ArrayRef<Tensor> outfed) -> llvm::Error {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Tensor &value = outfed[k];
      if (value.rank() == 0 || value.shape()[0] != stream.getBatchSize())
        return makeError("Batch length of predictions should be same. " +
                         keys[k] + " has different batch length than others.");
      pieces[k].push_back(batch.validRows == value.shape()[0]
                              ? value
                              : sliceRows(value, 0, batch.validRows));
    }
    return llvm::Error::success();
  };
  if (mode->deviceLoop) {
    if (llvm::Error failure = I.runPredictLaunch(*mode, prefetcher, collect))
      return std::move(failure);
  } else {
    TrainingLog log = I.log();
    for (int64_t step = 0;; ++step) {
      auto next = prefetcher.next();
      if (!next)
        return next.takeError();
      std::optional<Batch> &batch = *next;
      if (!batch)
        break;
      std::vector<Tensor> logged;
      auto result =
          I.runStep(*mode, *batch, hooks->fetchesAt(step), {}, &logged);
      if (!result)
        return result.takeError();
      if (llvm::Error failure = collect(*batch, result->outfed))
        return std::move(failure);
      hooks->logTensors(step, logged, log);
    }
  }
  Predictions predictions;
  predictions.keys = keys;
  for (const auto &parts : pieces)
    predictions.values.push_back(concatRows(parts));
  return predictions;
}

llvm::Error Estimator::Impl::runPredictLaunch(
    ModeSession &mode, Prefetcher &prefetcher,
    llvm::function_ref<llvm::Error(const Batch &, llvm::ArrayRef<Tensor>)>
        collect) {
  // The infeed thread's work: every batch with its stopping signal
  // (_StopSignals) false, then the last batch again, flagged.
  std::vector<Batch> batches;
  while (true) {
    auto batch = prefetcher.next();
    if (!batch)
      return batch.takeError();
    if (!*batch)
      break;
    batches.push_back(std::move(**batch));
  }
  if (batches.empty())
    return llvm::Error::success();
  int64_t rows = batches.front().columns.front().second.shape()[0];
  for (size_t b = 0; b <= batches.size(); ++b) {
    const Batch &batch = batches[std::min(b, batches.size() - 1)];
    NamedTensors feeds = replicaFeeds(mode, batch);
    Tensor stopping(kBool, {rows / mode.replicas, 1});
    for (int64_t i = 0; i < stopping.numElements(); ++i)
      stopping.setFromDouble(i, b == batches.size());
    for (int64_t r = 0; r < mode.replicas; ++r)
      feeds.emplace_back(mode.replicaFeeds[r].back(), stopping);
    if (auto enqueued = mode.session->run(feeds, {}, mode.enqueueTargets);
        !enqueued)
      return enqueued.takeError();
  }
  // The replicas run until the flagged batch; the outfeed thread's work:
  // each batch's predictions, and the flagged batch's, dropped.
  if (auto ran = mode.session->run({}, {}, mode.targets); !ran)
    return ran.takeError();
  for (size_t b = 0; b <= batches.size(); ++b) {
    auto outfed = dequeueOutfeed(mode);
    if (!outfed)
      return outfed.takeError();
    if (b < batches.size())
      if (llvm::Error failure = collect(batches[b], *outfed))
        return failure;
  }
  return llvm::Error::success();
}
