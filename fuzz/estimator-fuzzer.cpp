//===- estimator-fuzzer.cpp - libFuzzer target for graph-estimator's input
//-===//
//
// What graph-estimator reads from users before any graph: the job (text
// protobuf, then RunConfig/TPUConfig/TPUEstimator's checks for every mode),
// IDX files (gzipped or not), then batches of what they decode, and
// TFRecord files of tf.train.Example protos, and TF_CONFIG's JSON. Bad
// input must give an error, never a crash; the first byte picks the kind
// (modulo 4: job, IDX, TFRecord, TF_CONFIG).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Estimator/Input.h"
#include "cleave/Estimator/Job.h"
#include "cleave/Estimator/TFConfig.h"

using namespace cleave;
using namespace cleave::estimator;

static void fuzzJob(llvm::StringRef text) {
  auto job = parseJob(text, "fuzz.job.pbtxt");
  if (!job) {
    llvm::consumeError(job.takeError());
    return;
  }
  for (bool useTpu : {false, true}) {
    JobOverrides overrides;
    overrides.useTpu = useTpu;
    auto settings = getRunSettings(*job, overrides);
    if (!settings) {
      llvm::consumeError(settings.takeError());
      continue;
    }
    for (Mode mode : {Mode::Train, Mode::Eval, Mode::Predict}) {
      if (llvm::Error failure = checkBatchSize(*settings, mode)) {
        llvm::consumeError(std::move(failure));
        continue;
      }
      // What a run derives from the settings must be sane.
      if (settings->getPerReplicaBatchSize(mode) *
              settings->getReplicas(mode) !=
          settings->getGlobalBatchSize(mode))
        abort();
    }
  }
}

static void fuzzIdx(llvm::StringRef bytes) {
  auto tensor = decodeIdx(bytes, "fuzz.idx");
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return;
  }
  // Batching is linear in the examples (and batches of count + 1 rows are
  // asked for): keep the runs short.
  if (tensor->rank() == 0 || tensor->shape()[0] == 0 ||
      tensor->shape()[0] > 4096 || tensor->numElements() > (1 << 20))
    return;
  Examples examples;
  examples.count = tensor->shape()[0];
  examples.columns.emplace_back("x", *tensor);
  // Batches of every kind: shuffled and repeated, padded, dropped.
  for (int64_t batch : {int64_t(1), int64_t(3), examples.count + 1}) {
    BatchStream repeated(examples, batch, true, 7, true, false);
    for (int64_t k = 0; k < 3; ++k) {
      auto got = repeated.get(k);
      if (!got) {
        // Only a batch whose shape cannot be allocated.
        llvm::consumeError(got.takeError());
        return;
      }
      if (!*got || (*got)->columns[0].second.shape()[0] != batch)
        abort(); // a repeated stream never ends and keeps its batch size
    }
    BatchStream padded(examples, batch, false, 0, false, true);
    int64_t rows = 0;
    for (int64_t k = 0;; ++k) {
      auto got = padded.get(k);
      if (!got)
        abort(); // batches of this size were made above
      if (!*got)
        break;
      rows += (*got)->validRows;
    }
    if (rows != examples.count)
      abort(); // prediction sees every example once
  }
}

/// TFRecord bytes parsed as Examples with a spec of every kind: a float
/// vector, an int64 scalar with a default and a cast, a string.
static void fuzzTFRecord(llvm::StringRef bytes) {
  static const TFRecordFiles spec = [] {
    TFRecordFiles files;
    auto add = [&](const char *key, const char *dtype,
                   std::vector<int64_t> shape) {
      FixedLenFeature *feature = files.add_features();
      feature->set_key(key);
      feature->set_dtype(dtype);
      for (int64_t d : shape)
        feature->add_shape(d);
      return feature;
    };
    add("x", "float32", {4});
    FixedLenFeature *labels = add("labels", "int64", {});
    labels->set_default_value(0);
    labels->set_cast("int32");
    add("name", "string", {})->set_default_value(0);
    return files;
  }();
  auto examples =
      decodeTFRecordExamples(spec, {{"fuzz.tfrecord", bytes.str()}});
  if (!examples) {
    llvm::consumeError(examples.takeError());
    return;
  }
  for (const auto &[key, tensor] : examples->columns)
    if (tensor.rank() == 0 || tensor.shape()[0] != examples->count)
      abort(); // every column holds every example
}

/// TF_CONFIG: what RunConfig derives must be consistent.
static void fuzzTFConfig(llvm::StringRef json) {
  auto config = parseTFConfig(json);
  if (!config) {
    llvm::consumeError(config.takeError());
    return;
  }
  if (config->isLocal())
    return;
  if (config->taskId < 0)
    abort();
  if (config->taskType == task_type::kEvaluator) {
    if (!config->cluster.empty() || config->globalIdInCluster)
      abort(); // the evaluator is not part of the training cluster
    return;
  }
  int64_t tasks = 0;
  for (const auto &job : config->cluster.jobs)
    tasks += config->cluster.getJobTaskListSize(job.first);
  if (!config->globalIdInCluster || *config->globalIdInCluster < 0 ||
      *config->globalIdInCluster >= tasks)
    abort(); // a task of the cluster has a global id in it
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef rest = fuzz::asString(data + 1, size - 1);
  switch (data[0] % 4) {
  case 0:
    return fuzzJob(rest), 0;
  case 1:
    return fuzzIdx(rest), 0;
  case 2:
    return fuzzTFRecord(rest), 0;
  default:
    return fuzzTFConfig(rest), 0;
  }
}
