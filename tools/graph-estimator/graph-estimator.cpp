//===- graph-estimator.cpp - an Estimator's methods on a job --------------===//
//
//   graph-estimator train JOB [--steps N | --max-steps N]
//   graph-estimator evaluate JOB [--steps N] [--checkpoint PATH] [--name N]
//   graph-estimator predict JOB [--predict-keys K,...] [--output-dir DIR]
//   graph-estimator latest-checkpoint JOB
//   graph-estimator train-and-evaluate JOB [--tf-config FILE]
//
// The mode-level driver over the Session library: model_dir, checkpoints,
// input, hooks and metrics, as tf.estimator.Estimator and TPUEstimator run
// them; see docs/Estimator.md.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/Estimator/Estimator.h"
#include "cleave/Estimator/TrainAndEvaluate.h"
#include "cleave/InitAll.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Tensor/Npy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace cleave;
using namespace cleave::estimator;

static cl::SubCommand trainCommand("train", "Estimator.train: train the "
                                            "model on the job's train input");
static cl::SubCommand evaluateCommand(
    "evaluate", "Estimator.evaluate: the metrics of the latest checkpoint on "
                "the job's eval input");
static cl::SubCommand predictCommand(
    "predict", "Estimator.predict: the predictions of the latest checkpoint "
               "for the job's predict input");
static cl::SubCommand
    exportCommand("export",
                  "Estimator.export_saved_model: a SavedModel of the predict "
                  "graph with the latest checkpoint's variables");
static cl::SubCommand
    listCommand("list-variables",
                "Estimator.get_variable_names: the variables of the latest "
                "checkpoint, with their dtypes and shapes");
static cl::SubCommand
    latestCommand("latest-checkpoint",
                  "the checkpoint evaluate and predict would restore");
static cl::SubCommand trainAndEvaluateCommand(
    "train-and-evaluate",
    "tf.estimator.train_and_evaluate: the role TF_CONFIG gives this process "
    "(local: training with evaluation after checkpoints; evaluator: "
    "evaluation of each new checkpoint)");

static cl::OptionCategory category("graph-estimator options");

static cl::opt<std::string> jobPath(cl::Positional, cl::desc("<job.pbtxt>"),
                                    cl::Required,
                                    cl::sub(cl::SubCommand::getAll()));
static cl::opt<std::string>
    modelDir("model-dir",
             cl::desc("the model directory (overrides config.model_dir)"),
             cl::sub(cl::SubCommand::getAll()), cl::cat(category));
using Backend = runtime::SessionOptions::Backend;
static cl::opt<Backend> backend(
    "backend", cl::desc("how nodes run"),
    cl::values(clEnumValN(Backend::Interpreter, "interpreter",
                          "the reference interpreter runs every node"),
               clEnumValN(Backend::CPU, "cpu",
                          "compilable nodes run compiled for the host CPU")),
    cl::init(Backend::CPU), cl::sub(cl::SubCommand::getAll()),
    cl::cat(category));
static cl::opt<std::string>
    useTpu("use-tpu",
           cl::desc("true or false: overrides config.use_tpu (false: one "
                    "replica, the whole batch, every step from the host)"),
           cl::value_desc("bool"), cl::sub(cl::SubCommand::getAll()),
           cl::cat(category));
static cl::opt<bool> dumpClusters(
    "dump-clusters",
    cl::desc("with --backend=cpu: print which nodes each kind of run "
             "compiles, and why the others are interpreted"),
    cl::sub(cl::SubCommand::getAll()), cl::cat(category));
static cl::opt<bool> dumpLinalg(
    "dump-linalg",
    cl::desc("with --backend=cpu: print each compiled cluster as linalg on "
             "tensors, before code generation"),
    cl::sub(cl::SubCommand::getAll()), cl::cat(category));
static cl::opt<bool> quiet("quiet",
                           cl::desc("no INFO lines (errors and results only)"),
                           cl::sub(cl::SubCommand::getAll()),
                           cl::cat(category));

static cl::opt<int64_t> steps("steps",
                              cl::desc("train: steps to run from where the "
                                       "model is; evaluate: batches"),
                              cl::init(0), cl::sub(trainCommand),
                              cl::sub(evaluateCommand), cl::cat(category));
static cl::opt<int64_t> maxSteps("max-steps",
                                 cl::desc("train until global_step reaches N"),
                                 cl::init(0), cl::sub(trainCommand),
                                 cl::cat(category));
static cl::opt<std::string>
    checkpointPath("checkpoint",
                   cl::desc("a checkpoint prefix or directory (default: the "
                            "latest in the model directory)"),
                   cl::sub(evaluateCommand), cl::sub(predictCommand),
                   cl::sub(exportCommand), cl::sub(listCommand),
                   cl::cat(category));
static cl::opt<std::string>
    exportDirBase("export-dir-base",
                  cl::desc("export: the SavedModel goes to <DIR>/<timestamp>"),
                  cl::value_desc("DIR"), cl::sub(exportCommand),
                  cl::cat(category));
static cl::opt<bool> asText("as-text",
                            cl::desc("export: saved_model.pbtxt instead of "
                                     "saved_model.pb"),
                            cl::sub(exportCommand), cl::cat(category));
static cl::opt<bool>
    allModes("all-modes",
             cl::desc("export: the train and eval graphs too, as "
                      "experimental_export_all_saved_models (tags train, "
                      "eval, serve); a job's model.saved_model reads it"),
             cl::sub(exportCommand), cl::cat(category));
static cl::opt<std::string>
    evalName("name",
             cl::desc("the evaluation's name: metrics go to "
                      "<model_dir>/eval_<name>"),
             cl::sub(evaluateCommand), cl::cat(category));
static cl::list<std::string>
    predictKeys("predict-keys", cl::desc("the prediction keys to return"),
                cl::CommaSeparated, cl::sub(predictCommand), cl::cat(category));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("write each prediction key's values as <key>.npy "
                       "here instead of printing them"),
              cl::sub(predictCommand), cl::cat(category));

static cl::opt<std::string>
    tfConfigPath("tf-config",
                 cl::desc("read TF_CONFIG's JSON from this file instead of "
                          "the environment"),
                 cl::value_desc("FILE"), cl::sub(trainAndEvaluateCommand),
                 cl::cat(category));

static cl::opt<double> collectiveTimeout(
    "collective-timeout",
    cl::desc("seconds a trainer waits for the others (meeting them, each "
             "cross-process sum) before it fails naming the task gone"),
    cl::init(60), cl::sub(trainAndEvaluateCommand), cl::cat(category));

static cl::opt<int64_t> checkReplicasEvery(
    "check-replicas-every",
    cl::desc("with trainers in several processes: every N steps, compare a "
             "hash of each variable across them and fail naming the first "
             "that differs (a debugging aid; 0: never)"),
    cl::value_desc("N"), cl::init(0), cl::sub(trainAndEvaluateCommand),
    cl::cat(category));

static int fail(Error error) {
  runtime::logError(std::move(error), errs(), "graph-estimator: error: ");
  return 1;
}

/// One example's predictions, one line: "<index>: key = value, ...".
static void printExample(const Predictions &predictions, int64_t row) {
  outs() << row << ":";
  for (size_t k = 0; k < predictions.keys.size(); ++k) {
    const Tensor &all = predictions.values[k];
    ArrayRef<int64_t> shape = ArrayRef<int64_t>(all.shape()).drop_front();
    int64_t size = 1;
    for (int64_t d : shape)
      size *= d;
    outs() << (k ? ", " : " ") << predictions.keys[k] << " = "
           << all.toNumpyString(row * size, shape);
  }
  outs() << "\n";
}

/// The metrics as evaluate prints them.
static void printMetrics(const EvalResult &result) {
  for (const auto &[name, value] : result.metrics) {
    if (name == "global_step")
      outs() << name << " = " << int64_t(value) << "\n";
    else
      outs() << name << " = " << format("%g", value) << "\n";
  }
}

static int runTrainAndEvaluate(Job job, mlir::MLIRContext &context,
                               const EstimatorOptions &options) {
  std::string json;
  if (!tfConfigPath.empty()) {
    auto buffer = MemoryBuffer::getFile(tfConfigPath);
    if (!buffer)
      return fail(createStringError(inconvertibleErrorCode(),
                                    "--tf-config: cannot open '" +
                                        tfConfigPath +
                                        "': " + buffer.getError().message()));
    json = (*buffer)->getBuffer().str();
  } else if (const char *environment = std::getenv("TF_CONFIG")) {
    json = environment;
  }
  auto cluster = parseTFConfig(json);
  if (!cluster)
    return fail(cluster.takeError());
  if (!(collectiveTimeout > 0))
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--collective-timeout must be positive"));
  if (checkReplicasEvery < 0)
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--check-replicas-every must be 0 or more"));
  EstimatorOptions checked = options;
  checked.checkReplicasEvery = checkReplicasEvery;
  auto result = trainAndEvaluate(std::move(job), *cluster, context, checked,
                                 collectiveTimeout);
  if (!result)
    return fail(result.takeError());
  if (result->metrics)
    printMetrics(*result->metrics);
  for (const std::string &dir : result->exports)
    outs() << "export: " << dir << "\n";
  return 0;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cleave::parseToolOptions(
      argc, argv,
      "Cleave's Estimator: train, evaluate and predict with a job "
      "(docs/Estimator.md)\n\n"
      "  graph-estimator train JOB [--steps N | --max-steps N]\n"
      "  graph-estimator evaluate JOB [--steps N] [--checkpoint PATH]\n"
      "  graph-estimator predict JOB [--predict-keys K,...] "
      "[--output-dir DIR]\n"
      "  graph-estimator export JOB --export-dir-base DIR [--as-text] "
      "[--all-modes]\n"
      "  graph-estimator train-and-evaluate JOB [--tf-config FILE] "
      "[--collective-timeout S] [--check-replicas-every N]\n");
  if (!trainCommand && !evaluateCommand && !predictCommand && !exportCommand &&
      !listCommand && !latestCommand && !trainAndEvaluateCommand) {
    errs() << "graph-estimator: error: name a command: train, evaluate, "
              "predict, export, train-and-evaluate, list-variables or "
              "latest-checkpoint (see --help)\n";
    return 1;
  }
  EstimatorOptions options;
  options.session.backend = backend;
  if (dumpClusters) {
    options.session.clusterNotes = &errs();
    options.session.notePrefix = "graph-estimator: ";
  }
  if (dumpLinalg)
    options.session.linalgDump = &errs();
  options.overrides.modelDir = modelDir;
  if (!useTpu.empty()) {
    if (useTpu != "true" && useTpu != "false") {
      errs() << "graph-estimator: error: --use-tpu must be true or false, "
                "got '"
             << useTpu << "'\n";
      return 1;
    }
    options.overrides.useTpu = useTpu == "true";
  }
  if (!quiet) {
    options.log = &errs();
    options.liveProgress = errs().is_displayed();
  }
  if (steps.getNumOccurrences() && steps <= 0)
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--steps: Must specify steps > 0, given: " +
                                      std::to_string(steps)));

  mlir::DialectRegistry registry;
  cleave::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  auto job = readJob(jobPath);
  if (!job)
    return fail(job.takeError());
  if (trainAndEvaluateCommand)
    return runTrainAndEvaluate(std::move(*job), context, options);
  auto estimator = Estimator::create(std::move(*job), context, options);
  if (!estimator)
    return fail(estimator.takeError());

  if (listCommand) {
    // tf.train.list_variables: name, then dtype and shape, sorted.
    std::string prefix = checkpointPath.empty()
                             ? (*estimator)->getLatestCheckpoint()
                             : std::string(checkpointPath);
    if (prefix.empty())
      return fail(
          createStringError(inconvertibleErrorCode(),
                            "Could not find trained model in model_dir: " +
                                (*estimator)->getSettings().modelDir + "."));
    auto resolved = runtime::resolveCheckpointPrefix(prefix);
    if (!resolved)
      return fail(resolved.takeError());
    auto reader = checkpoint::BundleReader::open(*resolved);
    if (!reader)
      return fail(reader.takeError());
    for (const std::string &key : reader->keys()) {
      const checkpoint::BundleEntry *entry = reader->lookup(key);
      outs() << key << " " << dtypeName(entry->dtype) << " "
             << shapeString(entry->shape) << "\n";
    }
    return 0;
  }
  if (latestCommand) {
    std::string latest = (*estimator)->getLatestCheckpoint();
    if (latest.empty())
      return fail(
          createStringError(inconvertibleErrorCode(),
                            "Could not find trained model in model_dir: " +
                                (*estimator)->getSettings().modelDir + "."));
    outs() << latest << "\n";
    return 0;
  }
  if (exportCommand) {
    ExportOptions exportOptions;
    exportOptions.exportDirBase = exportDirBase;
    exportOptions.checkpoint = checkpointPath;
    exportOptions.asText = asText;
    exportOptions.allModes = allModes;
    auto dir = (*estimator)->exportSavedModel(exportOptions);
    if (!dir)
      return fail(dir.takeError());
    outs() << *dir << "\n";
    return 0;
  }
  if (trainCommand) {
    std::optional<int64_t> stepCount, maxStepCount;
    if (steps.getNumOccurrences())
      stepCount = steps;
    if (maxSteps.getNumOccurrences())
      maxStepCount = maxSteps;
    if (Error error = (*estimator)->train(stepCount, maxStepCount))
      return fail(std::move(error));
    return 0;
  }
  if (evaluateCommand) {
    std::optional<int64_t> stepCount;
    if (steps.getNumOccurrences())
      stepCount = steps;
    auto result = (*estimator)->evaluate(stepCount, checkpointPath, evalName);
    if (!result)
      return fail(result.takeError());
    printMetrics(*result);
    return 0;
  }
  std::vector<std::string> keys(predictKeys.begin(), predictKeys.end());
  auto predictions = (*estimator)->predict(keys, checkpointPath);
  if (!predictions)
    return fail(predictions.takeError());
  if (!outputDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(outputDir)) {
      errs() << "graph-estimator: error: cannot create '" << outputDir
             << "': " << ec.message() << "\n";
      return 1;
    }
    for (size_t k = 0; k < predictions->keys.size(); ++k) {
      SmallString<256> path(outputDir);
      sys::path::append(path, predictions->keys[k] + ".npy");
      std::error_code ec;
      raw_fd_ostream os(path, ec);
      if (!ec)
        os << writeNpy(predictions->values[k]);
      if (ec || os.has_error()) {
        errs() << "graph-estimator: error: cannot write '" << path << "'\n";
        return 1;
      }
    }
    return 0;
  }
  int64_t rows = predictions->values.front().shape()[0];
  for (int64_t row = 0; row < rows; ++row)
    printExample(*predictions, row);
  return 0;
}
