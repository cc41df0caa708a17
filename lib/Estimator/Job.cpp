//===- Job.cpp - graph-estimator jobs: reading and checking ---------------===//

#include "cleave/Estimator/Job.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <map>

using namespace cleave;
using namespace cleave::estimator;
namespace pb = google::protobuf;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::StringRef estimator::getModeName(Mode mode) {
  switch (mode) {
  case Mode::Train:
    return "train";
  case Mode::Eval:
    return "eval";
  case Mode::Predict:
    return "infer";
  }
  return "";
}

namespace {
/// Keeps the first error the text-format parser reports, with its place.
class JobErrorCollector : public pb::io::ErrorCollector {
public:
  explicit JobErrorCollector(llvm::StringRef filename) : filename(filename) {}
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string &message) override {
    if (first.empty())
      first = (filename + ":" + llvm::Twine(line + 1) + ":" +
               llvm::Twine(column + 1) + ": " + message)
                  .str();
  }
  std::string first;

private:
  std::string filename;
};
} // namespace

llvm::Expected<Job> estimator::parseJob(llvm::StringRef text,
                                        llvm::StringRef filename) {
  Job job;
  JobErrorCollector errors(filename);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text.str(), &job))
    return error(errors.first.empty() ? (filename + ": not a job").str()
                                      : errors.first);
  return job;
}

static void makeAbsolute(std::string *path, llvm::StringRef dir) {
  if (path->empty() || llvm::sys::path::is_absolute(*path))
    return;
  llvm::SmallString<256> full(dir);
  llvm::sys::path::append(full, *path);
  llvm::sys::path::remove_dots(full, /*remove_dot_dot=*/true);
  *path = std::string(full);
}

static void makeDatasetAbsolute(Dataset *dataset, llvm::StringRef dir) {
  if (dataset->has_idx()) {
    makeAbsolute(dataset->mutable_idx()->mutable_images(), dir);
    makeAbsolute(dataset->mutable_idx()->mutable_labels(), dir);
  }
  if (dataset->has_npy())
    for (auto &file : *dataset->mutable_npy()->mutable_file())
      makeAbsolute(file.mutable_path(), dir);
  if (dataset->has_tfrecord())
    for (std::string &file : *dataset->mutable_tfrecord()->mutable_files())
      makeAbsolute(&file, dir);
}

llvm::Expected<Job> estimator::readJob(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return error("cannot open '" + path + "': " + buffer.getError().message());
  auto job = parseJob((*buffer)->getBuffer(), path);
  if (!job)
    return job.takeError();
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (std::error_code ec = llvm::sys::fs::make_absolute(dir))
    return error("cannot resolve '" + path + "': " + ec.message());
  Model *model = job->mutable_model();
  if (model->has_graph()) {
    ModeGraphs *graphs = model->mutable_graph();
    for (std::string *file : {graphs->mutable_train(), graphs->mutable_eval(),
                              graphs->mutable_predict(), graphs->mutable_all()})
      makeAbsolute(file, dir);
  } else if (model->has_saved_model()) {
    makeAbsolute(model->mutable_saved_model(), dir);
  }
  if (model->eval_metrics().fn_case() == EvalMetrics::kMetricFn)
    makeAbsolute(model->mutable_eval_metrics()->mutable_metric_fn(), dir);
  if (model->has_host_call())
    makeAbsolute(model->mutable_host_call()->mutable_host_fn(), dir);
  if (model->scaffold().has_init_from_checkpoint())
    makeAbsolute(model->mutable_scaffold()
                     ->mutable_init_from_checkpoint()
                     ->mutable_checkpoint(),
                 dir);
  Input *input = job->mutable_input();
  for (Dataset *dataset : {input->mutable_train(), input->mutable_eval(),
                           input->mutable_predict()})
    makeDatasetAbsolute(dataset, dir);
  Config *config = job->mutable_config();
  makeAbsolute(config->mutable_model_dir(), dir);
  makeAbsolute(config->mutable_warm_start_from(), dir);
  return job;
}

//===----------------------------------------------------------------------===//
// Settings
//===----------------------------------------------------------------------===//

int64_t RunSettings::getReplicas(Mode mode) const {
  return onDevice(mode) ? numShards : 1;
}

int64_t RunSettings::getGlobalBatchSize(Mode mode) const {
  switch (mode) {
  case Mode::Train:
    return trainBatchSize;
  case Mode::Eval:
    return evalBatchSize;
  case Mode::Predict:
    return predictBatchSize;
  }
  return 0;
}

int64_t RunSettings::getPerReplicaBatchSize(Mode mode) const {
  return getGlobalBatchSize(mode) /
         (getReplicas(mode) * (mode == Mode::Train ? trainers : 1));
}

bool RunSettings::onDevice(Mode mode) const {
  return useTpu && (mode != Mode::Eval || evalOnTpu);
}

/// util_lib.check_positive_integer's message.
static llvm::Error checkPositive(int64_t value, llvm::StringRef name) {
  if (value > 0)
    return llvm::Error::success();
  return error(name + " must be positive, got " + llvm::Twine(value));
}

/// A Python dict of strings as str() prints it.
static std::string pythonDict(const pb::Map<std::string, std::string> &map) {
  std::map<std::string, std::string> sorted(map.begin(), map.end());
  std::string out = "{";
  for (const auto &[key, value] : sorted) {
    if (out.size() > 1)
      out += ", ";
    out += "'" + key + "': '" + value + "'";
  }
  return out + "}";
}

llvm::Expected<RunSettings>
estimator::getRunSettings(const Job &job, const JobOverrides &overrides) {
  const Config &config = job.config();
  RunSettings settings;
  settings.modelDir =
      overrides.modelDir.empty() ? config.model_dir() : overrides.modelDir;
  settings.useTpu =
      overrides.useTpu.value_or(config.has_use_tpu() ? config.use_tpu() : true);
  settings.evalOnTpu = config.has_eval_on_tpu() ? config.eval_on_tpu() : true;

  // RunConfig.
  if (config.has_save_checkpoints_steps() && config.has_save_checkpoints_secs())
    return error("config: `save_checkpoints_steps` and "
                 "`save_checkpoints_secs` cannot be both set.");
  if (config.has_save_checkpoints_steps()) {
    if (config.save_checkpoints_steps() < 0)
      return error("config.save_checkpoints_steps: save_checkpoints_steps "
                   "should be >= 0");
    if (config.save_checkpoints_steps() > 0)
      settings.saveCheckpointsSteps = config.save_checkpoints_steps();
  } else if (config.has_save_checkpoints_secs()) {
    if (config.save_checkpoints_secs() < 0)
      return error("config.save_checkpoints_secs: save_checkpoints_secs "
                   "should be >= 0");
    if (config.save_checkpoints_secs() > 0)
      settings.saveCheckpointsSecs = config.save_checkpoints_secs();
  } else {
    settings.saveCheckpointsSecs = 600;
  }
  if (config.has_keep_checkpoint_max()) {
    if (config.keep_checkpoint_max() < 0)
      return error("config.keep_checkpoint_max: keep_checkpoint_max should "
                   "be >= 0");
    settings.keepCheckpointMax = config.keep_checkpoint_max();
  }
  if (config.has_log_step_count_steps()) {
    if (config.log_step_count_steps() <= 0)
      return error("config.log_step_count_steps: log_step_count_steps "
                   "should be > 0");
    settings.logStepCountSteps = config.log_step_count_steps();
  }

  // TPUConfig.
  if (config.has_iterations_per_loop()) {
    if (config.iterations_per_loop() <= 0)
      return error(
          "config.iterations_per_loop: Invalid TPUConfig "
          "`iterations_per_loop` value. Value must be positive integer value "
          "or time-based value `<N><s|m|h>` where <N> is anypositive integer "
          "and `s`, `m`, `h` are unit of time in seconds, minutes, hours "
          "respectively. Examples of valid values: `3600s`, `60m`, `1h`.");
    settings.iterationsPerLoop = config.iterations_per_loop();
  }
  if (config.num_shards() != 0) {
    if (llvm::Error failure =
            checkPositive(config.num_shards(), "TPUConfig num_shards"))
      return error("config.num_shards: " + llvm::toString(std::move(failure)));
    settings.numShards = config.num_shards();
  }
  // One host: PER_HOST_V1, PER_SHARD_V1 and PER_HOST_V2 give replica r the
  // same rows of the global batch; BROADCAST (every replica the whole
  // input, for model parallelism) is another computation.
  if (config.per_host_input_for_training() == Config::BROADCAST)
    return error("config.per_host_input_for_training: BROADCAST (the same "
                 "input on every replica, for model parallelism) is not "
                 "supported yet; PER_HOST_V1, PER_SHARD_V1 and PER_HOST_V2 "
                 "give each replica its rows of the global batch");
  for (int64_t axis : config.batch_axis())
    if (axis != 0)
      return error("config.batch_axis: the job's inputs have their examples "
                   "along dimension 0 (its input pipeline batches them so), "
                   "so each is split along 0; got " +
                   llvm::Twine(axis));

  // TPUEstimator's constructor.
  static const char *const reserved[] = {"batch_size", "context"};
  for (const char *key : reserved)
    if (config.params().count(key))
      return error("config.params: ['batch_size', 'context'] are reserved "
                   "keys but existed in params " +
                   pythonDict(config.params()) + ".");
  struct BatchField {
    const char *name;
    int64_t value;
    int64_t *target;
  } batches[] = {
      {"train_batch_size", config.train_batch_size(), &settings.trainBatchSize},
      {"eval_batch_size", config.eval_batch_size(), &settings.evalBatchSize},
      {"predict_batch_size", config.predict_batch_size(),
       &settings.predictBatchSize}};
  for (const BatchField &field : batches) {
    if (field.value < 0)
      return error(llvm::Twine("config.") + field.name + ": " + field.name +
                   " must be positive, got " + llvm::Twine(field.value));
    *field.target = field.value;
  }
  if (settings.useTpu && settings.trainBatchSize == 0)
    return error("config.train_batch_size: `train_batch_size` cannot be "
                 "`None`");
  if (job.model().optimizer().reduction() == Optimizer::NONE)
    return error("model.optimizer.reduction: Unsupported reduction: none.");
  return settings;
}

llvm::Error estimator::checkBatchSize(const RunSettings &settings, Mode mode) {
  int64_t batch = settings.getGlobalBatchSize(mode);
  // Every replica of every trainer process.
  int64_t replicas = settings.getReplicas(mode) *
                     (mode == Mode::Train ? settings.trainers : 1);
  const char *field = mode == Mode::Train  ? "train_batch_size"
                      : mode == Mode::Eval ? "eval_batch_size"
                                           : "predict_batch_size";
  if (batch == 0) {
    if (mode == Mode::Eval && settings.onDevice(mode))
      return error("config.eval_batch_size: eval_batch_size in TPUEstimator "
                   "constructor cannot be `None` if .evaluate is running on "
                   "TPU.");
    if (mode == Mode::Predict && settings.onDevice(mode))
      return error("config.predict_batch_size: predict_batch_size in "
                   "TPUEstimator constructor cannot be `None` if .predict is "
                   "running on TPU.");
    // Off the device, input_fn picks its own batch size; a job's input
    // needs one.
    return error(llvm::Twine("config.") + field + ": no " + field + " for " +
                 getModeName(mode) + " (input_fn batches by it)");
  }
  if (batch % replicas != 0) {
    const char *what = mode == Mode::Train  ? "train"
                       : mode == Mode::Eval ? "eval"
                                            : "predict";
    return error(llvm::Twine("config.") + field + ": " + what + " batch size " +
                 llvm::Twine(batch) +
                 " must be divisible by number of replicas " +
                 llvm::Twine(replicas));
  }
  return llvm::Error::success();
}
