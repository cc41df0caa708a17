//===- TrainAndEvaluate.cpp - tf.estimator.train_and_evaluate -------------===//
//
// The seed's training.py (TrainSpec, EvalSpec, _TrainingExecutor and its
// _Evaluator, _NewCheckpointListenerForEvaluate) over Estimator, with the
// exporters of Exporters.h: the same order of evaluations, throttling,
// exports, log lines and messages; and the trainers' process group for
// synchronous training across processes.
//
//===----------------------------------------------------------------------===//

#include "cleave/Estimator/TrainAndEvaluate.h"

#include "Exporters.h"
#include "Support.h"

#include "cleave/Runtime/ProcessGroup.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

using namespace cleave;
using namespace cleave::estimator;

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static void sleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

/// An optional value as Python's format() prints it.
static std::string pythonOptional(std::optional<int64_t> value) {
  return value ? std::to_string(*value) : "None";
}

//===----------------------------------------------------------------------===//
// The specs
//===----------------------------------------------------------------------===//

/// _validate_exporters, and the exporters' constructors.
static llvm::Error checkExporters(const EvalSpec &spec) {
  std::vector<std::string> names;
  for (const Exporter &exporter : spec.exporters())
    names.push_back(exporter.name());
  llvm::StringSet<> unique;
  for (const Exporter &exporter : spec.exporters()) {
    if (exporter.name().empty())
      return makeError(
          "eval_spec.exporters: An Exporter cannot have a name that "
          "is `None` or empty. All exporter names: " +
          pythonList(names));
    if (!unique.insert(exporter.name()).second)
      return makeError(
          "eval_spec.exporters: `exporters` must have unique names. "
          "Such a name cannot be `None`. All exporter names: " +
          pythonList(names));
    std::string where = "eval_spec.exporters '" + exporter.name() + "': ";
    switch (exporter.kind_case()) {
    case Exporter::kLatest:
      if (exporter.latest().has_exports_to_keep() &&
          exporter.latest().exports_to_keep() <= 0)
        return makeError(where + "`exports_to_keep`, if provided, must be "
                                 "positive number");
      break;
    case Exporter::kBest:
      if (exporter.best().has_exports_to_keep() &&
          exporter.best().exports_to_keep() <= 0)
        return makeError(where +
                         "`exports_to_keep`, if provided, must be a positive "
                         "number. Got " +
                         llvm::Twine(exporter.best().exports_to_keep()));
      break;
    case Exporter::kFinal:
      break;
    default:
      return makeError(where + "no kind (latest, best or final)");
    }
  }
  return llvm::Error::success();
}

llvm::Expected<TrainAndEvalSpecs>
estimator::getTrainAndEvalSpecs(const Job &job) {
  TrainAndEvalSpecs specs;
  const TrainSpec &train = job.train_spec();
  if (train.has_max_steps()) {
    if (train.max_steps() <= 0)
      return makeError("train_spec.max_steps: Must specify max_steps > 0, "
                       "given: " +
                       llvm::Twine(train.max_steps()));
    specs.maxSteps = train.max_steps();
  }
  const EvalSpec &eval = job.eval_spec();
  if (eval.has_steps() && eval.until_input_ends())
    return makeError(
        "eval_spec: steps and until_input_ends (steps=None) cannot "
        "both be set");
  if (eval.has_steps()) {
    if (eval.steps() <= 0)
      return makeError("eval_spec.steps: Must specify steps > 0, given: " +
                       llvm::Twine(eval.steps()));
    specs.evalSteps = eval.steps();
  } else if (eval.until_input_ends()) {
    specs.evalSteps = std::nullopt;
  }
  specs.evalName = eval.name();
  if (llvm::Error failure = checkExporters(eval))
    return std::move(failure);
  // EvalSpec's two waits: unset, its defaults; negative, its message.
  auto seconds = [](bool given, int64_t value, llvm::StringRef name,
                    int64_t &setting) -> llvm::Error {
    if (!given)
      return llvm::Error::success();
    if (value < 0)
      return makeError("eval_spec." + name + ": Must specify " + name +
                       " >= 0, given: " + llvm::Twine(value));
    setting = value;
    return llvm::Error::success();
  };
  if (llvm::Error failure =
          seconds(eval.has_start_delay_secs(), eval.start_delay_secs(),
                  "start_delay_secs", specs.startDelaySecs))
    return std::move(failure);
  if (llvm::Error failure =
          seconds(eval.has_throttle_secs(), eval.throttle_secs(),
                  "throttle_secs", specs.throttleSecs))
    return std::move(failure);
  specs.exporters.assign(eval.exporters().begin(), eval.exporters().end());
  return specs;
}

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

namespace {
enum class EvalStatus { Evaluated, MissingCheckpoint, NoNewCheckpoint };

llvm::StringRef getStatusName(EvalStatus status) {
  switch (status) {
  case EvalStatus::Evaluated:
    return "evaluated";
  case EvalStatus::MissingCheckpoint:
    return "missing checkpoint";
  case EvalStatus::NoNewCheckpoint:
    return "no new checkpoint";
  }
  return "";
}

struct Evaluation {
  EvalStatus status = EvalStatus::MissingCheckpoint;
  std::optional<EvalResult> result;
  std::vector<std::string> exports;
};

/// _TrainingExecutor._Evaluator: evaluates the latest checkpoint when it
/// is new, then runs the exporters.
class Evaluator {
public:
  Evaluator(Estimator &estimator, const TrainAndEvalSpecs &specs, InfoLog &log)
      : estimator(estimator), specs(specs), log(log) {
    for (const Exporter &exporter : specs.exporters)
      exporters.emplace_back(exporter, log);
  }

  llvm::Expected<Evaluation> evaluateAndExport();

private:
  /// A warning at most every 10 minutes.
  void warnEvery10Minutes(const llvm::Twine &message) {
    double time = now();
    if (time - lastWarningTime > 600) {
      log.warning(message);
      lastWarningTime = time;
    }
  }

  Estimator &estimator;
  const TrainAndEvalSpecs &specs;
  InfoLog &log;
  std::vector<ExporterRunner> exporters;
  std::string previousCheckpoint;
  double lastWarningTime = -1e9;
};
} // namespace

/// Whether the checkpoint at `prefix` is still on disk (a trainer keeps
/// only the newest keep_checkpoint_max).
static bool checkpointExists(llvm::StringRef prefix) {
  return llvm::sys::fs::exists(prefix + ".index");
}

llvm::Expected<Evaluation> Evaluator::evaluateAndExport() {
  Evaluation evaluation;
  std::string latest = estimator.getLatestCheckpoint();
  if (latest.empty()) {
    warnEvery10Minutes("Estimator is not trained yet. Will start an "
                       "evaluation when a checkpoint is ready.");
    evaluation.status = EvalStatus::MissingCheckpoint;
    return evaluation;
  }
  if (latest == previousCheckpoint) {
    warnEvery10Minutes("No new checkpoint ready for evaluation. Skip the "
                       "current evaluation pass as evaluation results are "
                       "expected to be same for the same checkpoint.");
    evaluation.status = EvalStatus::NoNewCheckpoint;
    return evaluation;
  }
  auto result = estimator.evaluate(specs.evalSteps, latest, specs.evalName);
  if (!result) {
    // A trainer that keeps few checkpoints may delete this one while it is
    // read: the next pass takes the newer one.
    if (!checkpointExists(latest)) {
      llvm::consumeError(result.takeError());
      log.warning("Checkpoint " + latest +
                  " was deleted before it was evaluated; waiting for the "
                  "next one.");
      evaluation.status = EvalStatus::NoNewCheckpoint;
      return evaluation;
    }
    return result.takeError();
  }
  evaluation.status = EvalStatus::Evaluated;
  bool isFinal = specs.maxSteps && result->globalStep >= *specs.maxSteps;
  llvm::SmallString<256> exportBase(estimator.getSettings().modelDir);
  llvm::sys::path::append(exportBase, "export");
  for (ExporterRunner &exporter : exporters) {
    llvm::SmallString<256> exportPath(exportBase);
    llvm::sys::path::append(exportPath, exporter.getName());
    auto exported =
        exporter.run(estimator, exportPath, latest, result->metrics, isFinal);
    if (!exported)
      return exported.takeError();
    if (!exported->empty())
      evaluation.exports.push_back(std::move(*exported));
  }
  lastWarningTime = -1e9;
  previousCheckpoint = latest;
  evaluation.result = std::move(*result);
  return evaluation;
}

//===----------------------------------------------------------------------===//
// Evaluation after checkpoints (local, master)
//===----------------------------------------------------------------------===//

namespace {
/// _NewCheckpointListenerForEvaluate: evaluates after each checkpoint but
/// the first (the untrained model), throttled, and after the last step
/// when that was not evaluated.
class EvaluateAfterCheckpoints : public SavingListener {
public:
  EvaluateAfterCheckpoints(Evaluator &evaluator, int64_t throttleSecs,
                           InfoLog &log)
      : evaluator(evaluator), throttleSecs(throttleSecs), log(log) {}

  llvm::Expected<bool> afterSave(int64_t globalStep) override {
    if (isFirstRun) {
      isFirstRun = false;
      return false;
    }
    if (shouldTrigger(globalStep)) {
      if (llvm::Error failure = evaluate(globalStep))
        return std::move(failure);
    } else {
      log.info("Skip the current checkpoint eval due to throttle secs (" +
               llvm::Twine(throttleSecs) + " secs).");
    }
    return false;
  }

  llvm::Error end(int64_t globalStep) override {
    if (lastTriggeredStep && *lastTriggeredStep == globalStep)
      return llvm::Error::success();
    return evaluate(globalStep);
  }

  TrainAndEvaluateResult takeResult() { return std::move(result); }

private:
  /// SecondOrStepTimer(every_secs=throttle_secs).should_trigger_for_step.
  bool shouldTrigger(int64_t step) const {
    if (!lastTriggeredStep)
      return true;
    if (*lastTriggeredStep == step)
      return false;
    return now() >= lastTriggeredTime + double(throttleSecs);
  }

  llvm::Error evaluate(int64_t globalStep) {
    lastTriggeredStep = globalStep;
    lastTriggeredTime = now();
    auto evaluation = evaluator.evaluateAndExport();
    if (!evaluation)
      return evaluation.takeError();
    if (evaluation->status != EvalStatus::Evaluated)
      return makeError("There was no new checkpoint after the training. Eval "
                       "status: " +
                       getStatusName(evaluation->status));
    result.metrics = std::move(evaluation->result);
    result.exports = std::move(evaluation->exports);
    return llvm::Error::success();
  }

  Evaluator &evaluator;
  int64_t throttleSecs;
  InfoLog &log;
  bool isFirstRun = true;
  std::optional<int64_t> lastTriggeredStep;
  double lastTriggeredTime = 0;
  TrainAndEvaluateResult result;
};
} // namespace

//===----------------------------------------------------------------------===//
// The roles
//===----------------------------------------------------------------------===//

namespace {
class TrainingExecutor {
public:
  TrainingExecutor(Estimator &estimator, const TrainAndEvalSpecs &specs,
                   const DistributedConfig &cluster, InfoLog &log)
      : estimator(estimator), specs(specs), cluster(cluster), log(log) {}

  llvm::Expected<TrainAndEvaluateResult> run();

private:
  llvm::Expected<TrainAndEvaluateResult> runLocal();
  /// Estimator.train with an evaluation after each checkpoint but the
  /// first (_NewCheckpointListenerForEvaluate): local and master.
  llvm::Expected<TrainAndEvaluateResult> trainWithEvaluation();
  llvm::Expected<TrainAndEvaluateResult> runTrainer(bool withEvaluation);
  llvm::Expected<TrainAndEvaluateResult> runEvaluator();

  Estimator &estimator;
  const TrainAndEvalSpecs &specs;
  const DistributedConfig &cluster;
  InfoLog &log;
};
} // namespace

llvm::Expected<TrainAndEvaluateResult> TrainingExecutor::runLocal() {
  const RunSettings &settings = estimator.getSettings();
  log.info("Start train and evaluate loop. The evaluate will happen after "
           "every checkpoint. Checkpoint frequency is determined based on "
           "RunConfig arguments: save_checkpoints_steps " +
           pythonOptional(settings.saveCheckpointsSteps) +
           " or save_checkpoints_secs " +
           pythonOptional(settings.saveCheckpointsSecs) + ".");
  return trainWithEvaluation();
}

llvm::Expected<TrainAndEvaluateResult> TrainingExecutor::trainWithEvaluation() {
  Evaluator evaluator(estimator, specs, log);
  EvaluateAfterCheckpoints listener(evaluator, specs.throttleSecs, log);
  if (llvm::Error failure =
          estimator.train(std::nullopt, specs.maxSteps, &listener))
    return std::move(failure);
  return listener.takeResult();
}

llvm::Expected<TrainAndEvaluateResult>
TrainingExecutor::runTrainer(bool withEvaluation) {
  if (cluster.numWorkerReplicas == 1 && cluster.numPsReplicas == 0)
    log.info("Skip starting Tensorflow server as there is only one node in "
             "the cluster.");
  // With ps tasks, worker n starts (n + 1) * 5 seconds late (at most 60, or
  // experimental_max_worker_delay_secs): asynchronous training converges
  // better when the chief's first steps come first.
  if (cluster.numPsReplicas > 0 && cluster.taskType == task_type::kWorker) {
    const Config &config = estimator.getJob().config();
    int64_t maxDelay = config.has_experimental_max_worker_delay_secs()
                           ? config.experimental_max_worker_delay_secs()
                           : 60;
    int64_t delay = std::min(maxDelay, (cluster.taskId + 1) * 5);
    if (delay > 0) {
      log.info("Waiting " + llvm::Twine(delay) +
               " secs before starting training.");
      sleepSeconds(double(delay));
    }
  }
  if (!withEvaluation) {
    if (llvm::Error failure = estimator.train(std::nullopt, specs.maxSteps))
      return std::move(failure);
    return TrainAndEvaluateResult();
  }
  return trainWithEvaluation();
}

llvm::Expected<TrainAndEvaluateResult> TrainingExecutor::runEvaluator() {
  if (specs.startDelaySecs) {
    log.info(llvm::formatv("Waiting {0:f6} secs before starting eval.",
                           double(specs.startDelaySecs))
                 .str());
    sleepSeconds(double(specs.startDelaySecs));
  }
  Evaluator evaluator(estimator, specs, log);
  TrainAndEvaluateResult last;
  while (true) {
    if (last.metrics && specs.maxSteps &&
        last.metrics->globalStep >= *specs.maxSteps) {
      log.info("Exiting evaluation, global_step=" +
               llvm::Twine(last.metrics->globalStep) +
               " >= train max_steps=" + llvm::Twine(*specs.maxSteps));
      return last;
    }
    double start = now();
    auto evaluation = evaluator.evaluateAndExport();
    if (!evaluation)
      return evaluation.takeError();
    if (evaluation->status == EvalStatus::Evaluated) {
      last.metrics = std::move(evaluation->result);
      last.exports = std::move(evaluation->exports);
    }
    double difference = double(specs.throttleSecs) - (now() - start);
    if (difference > 0) {
      log.info(llvm::formatv("Waiting {0:f6} secs before starting next eval "
                             "run.",
                             difference)
                   .str());
      sleepSeconds(difference);
    }
  }
}

llvm::Expected<TrainAndEvaluateResult> TrainingExecutor::run() {
  if (cluster.isLocal()) {
    log.info("Running training and evaluation locally (non-distributed).");
    return runLocal();
  }
  if (cluster.taskType.empty())
    return makeError("`estimator.config` must have task_type set. This usually "
                     "means TF_CONFIG environment is not set correctly.");
  if (cluster.taskType == "local")
    return makeError("`task.type` in TF_CONFIG cannot be `local`. Leaving "
                     "`cluster` and `task` properties in TF_CONFIG absent "
                     "triggers train and evaluate `Estimator` locally "
                     "(non-distributed).");
  if (cluster.taskType == task_type::kChief ||
      cluster.taskType == task_type::kWorker)
    return runTrainer(/*withEvaluation=*/false);
  if (cluster.taskType == task_type::kMaster)
    return runTrainer(/*withEvaluation=*/true);
  if (cluster.taskType == task_type::kEvaluator)
    return runEvaluator();
  if (cluster.taskType == task_type::kPs) {
    // run_ps: the server runs until the process is stopped.
    if (llvm::Error failure = estimator.serveParameters())
      return std::move(failure);
    return TrainAndEvaluateResult();
  }
  return makeError("Task type " + cluster.taskType +
                   " is not supported. Supported task types are ['chief', "
                   "'evaluator', 'master', 'ps', 'worker']");
}

/// The host of a task's address ("host:port").
static std::string getHost(const ClusterSpec &cluster, llvm::StringRef job,
                           int64_t index) {
  return llvm::StringRef(cluster.getAddress(job.str(), index))
      .rsplit(':')
      .first.str();
}

/// The trainers of the cluster (the chief or master, then the workers), in
/// the order of their global ids: the ranks of their process group.
static std::vector<std::pair<std::string, int64_t>>
getTrainers(const ClusterSpec &cluster) {
  std::vector<std::pair<std::string, int64_t>> trainers;
  for (const char *job :
       {task_type::kChief, task_type::kMaster, task_type::kWorker}) {
    auto it = cluster.jobs.find(job);
    if (it != cluster.jobs.end())
      for (const auto &[index, address] : it->second)
        trainers.emplace_back(job, index);
  }
  return trainers;
}

/// The global step of the latest checkpoint in `modelDir` (0: none): the
/// trainers meet under it, so that processes restarted from a newer
/// checkpoint meet afresh.
static int64_t getLatestStep(llvm::StringRef modelDir) {
  auto latest = findLatestCheckpoint(modelDir);
  if (!latest) {
    llvm::consumeError(latest.takeError());
    return 0;
  }
  return getCheckpointStep(*latest).value_or(0);
}

/// Tasks on one host share its cores: each gets its part of them for the
/// compiled kernels, which do not spin while waiting (spinning takes the
/// core another process's kernels need).
static void
shareCores(const ClusterSpec &cluster,
           const std::vector<std::pair<std::string, int64_t>> &tasks,
           llvm::StringRef host) {
  int64_t onThisHost = 0;
  for (const auto &[job, index] : tasks)
    onThisHost += getHost(cluster, job, index) == host;
  if (onThisHost > 1) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    cpu::setKernelThreads(std::max<int>(1, int(cores / onThisHost)));
    cpu::stopKernelThreadSpinning();
  }
}

/// Connects this trainer to the others of a synchronous cluster (none for
/// one trainer, the evaluator and ps tasks).
static llvm::Expected<std::unique_ptr<runtime::ProcessGroup>>
joinTrainers(const DistributedConfig &cluster, llvm::StringRef modelDir,
             double timeoutSeconds, InfoLog &log) {
  std::vector<std::pair<std::string, int64_t>> trainers =
      getTrainers(cluster.cluster);
  auto self =
      llvm::find(trainers, std::make_pair(cluster.taskType, cluster.taskId));
  if (trainers.size() < 2 || self == trainers.end() ||
      cluster.numPsReplicas != 0)
    return nullptr;
  if (modelDir.empty())
    return makeError("train_and_evaluate: training across processes needs "
                     "a model_dir all tasks share (config.model_dir, "
                     "--model-dir or TF_CONFIG's model_dir)");
  runtime::ProcessGroupOptions options;
  options.rank = int(self - trainers.begin());
  for (const auto &[job, index] : trainers)
    options.taskNames.push_back(job + ":" + std::to_string(index));
  int64_t step = getLatestStep(modelDir);
  llvm::SmallString<256> meetings(modelDir);
  llvm::sys::path::append(meetings, ".cleave", "rendezvous");
  llvm::SmallString<256> store(meetings);
  llvm::sys::path::append(store, std::to_string(step));
  options.storeDirectory = std::string(store);
  // The chief clears the meetings of earlier starts.
  if (options.rank == 0)
    runtime::removeMeetingsBefore(meetings, step);
  // The TCP device binds to the host of the task's address.
  std::string address =
      cluster.cluster.getAddress(cluster.taskType, cluster.taskId);
  llvm::StringRef host = llvm::StringRef(address).rsplit(':').first;
  if (!host.empty())
    options.hostname = host.str();
  options.timeoutSeconds = timeoutSeconds;
  shareCores(cluster.cluster, trainers, host);
  log.info("Joining the " + llvm::Twine(trainers.size()) + " trainers as " +
           options.taskNames[options.rank] + " (rank " +
           llvm::Twine(options.rank) + ") through " + options.storeDirectory);
  auto group = runtime::ProcessGroup::connect(options);
  if (!group)
    return group.takeError();
  return std::move(*group);
}

/// With ps tasks, the trainers and ps tasks of asynchronous training; none
/// for other clusters and the evaluator.
static llvm::Expected<std::optional<ParameterServerCluster>>
getParameterServers(const DistributedConfig &cluster, llvm::StringRef modelDir,
                    double timeoutSeconds) {
  if (cluster.numPsReplicas == 0 || cluster.taskType == task_type::kEvaluator)
    return std::nullopt;
  if (modelDir.empty())
    return makeError("train_and_evaluate: training with ps tasks needs a "
                     "model_dir all tasks share (config.model_dir, "
                     "--model-dir or TF_CONFIG's model_dir)");
  ParameterServerCluster servers;
  for (const auto &[job, index] : getTrainers(cluster.cluster))
    servers.trainerTasks.push_back(job + ":" + std::to_string(index));
  auto ps = cluster.cluster.jobs.find(task_type::kPs);
  for (const auto &[index, address] : ps->second)
    servers.psTasks.push_back(std::string(task_type::kPs) + ":" +
                              std::to_string(index));
  servers.self = cluster.taskType + ":" + std::to_string(cluster.taskId);
  servers.isChief = cluster.taskType == task_type::kChief ||
                    cluster.taskType == task_type::kMaster;
  llvm::SmallString<256> meeting(modelDir);
  llvm::sys::path::append(meeting, ".cleave", "ps");
  servers.meetingDirectory = std::string(meeting);
  std::string host = getHost(cluster.cluster, cluster.taskType, cluster.taskId);
  if (!host.empty())
    servers.hostname = host;
  servers.timeoutSeconds = timeoutSeconds;
  std::vector<std::pair<std::string, int64_t>> tasks =
      getTrainers(cluster.cluster);
  for (const auto &[index, address] : ps->second)
    tasks.emplace_back(task_type::kPs, index);
  shareCores(cluster.cluster, tasks, host);
  return servers;
}

llvm::Expected<TrainAndEvaluateResult> estimator::trainAndEvaluate(
    Job job, const DistributedConfig &cluster, mlir::MLIRContext &context,
    EstimatorOptions options, double collectiveTimeoutSeconds) {
  auto specs = getTrainAndEvalSpecs(job);
  if (!specs)
    return specs.takeError();
  if (cluster.taskType == task_type::kEvaluator && cluster.taskId > 0)
    return makeError("For distributed training, there can only be one "
                     "`evaluator` task (with task id 0). Given task id " +
                     llvm::Twine(cluster.taskId));
  auto modelDir = resolveModelDir(cluster, options.overrides.modelDir.empty()
                                               ? job.config().model_dir()
                                               : options.overrides.modelDir);
  if (!modelDir)
    return modelDir.takeError();
  options.overrides.modelDir = std::move(*modelDir);
  // The specs' hooks run beside the job's.
  for (const Hook &hook : job.train_spec().hooks())
    *job.add_training_hooks() = hook;
  for (const Hook &hook : job.eval_spec().hooks())
    *job.add_evaluation_hooks() = hook;
  InfoLog log(options.log);
  auto trainers = joinTrainers(cluster, options.overrides.modelDir,
                               collectiveTimeoutSeconds, log);
  if (!trainers)
    return trainers.takeError();
  options.trainers = trainers->get();
  auto servers = getParameterServers(cluster, options.overrides.modelDir,
                                     collectiveTimeoutSeconds);
  if (!servers)
    return servers.takeError();
  if (*servers)
    options.parameterServers = &**servers;
  auto estimator = Estimator::create(std::move(job), context, options);
  if (!estimator)
    return estimator.takeError();
  return TrainingExecutor(**estimator, *specs, cluster, log).run();
}
