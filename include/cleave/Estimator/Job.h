//===- Job.h - graph-estimator jobs: reading and checking -------*- C++ -*-===//
//
// A job (proto/cleave/estimator/job.proto, text format) names the graph
// pieces that stand for TPUEstimator's Python functions and gives its
// RunConfig and TPUConfig. This reads one, with errors that point at a
// line, and works out the settings a run uses, with TensorFlow's defaults
// and TensorFlow's checks and messages.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ESTIMATOR_JOB_H
#define CLEAVE_ESTIMATOR_JOB_H

#include "cleave/estimator/job.pb.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace cleave::estimator {

/// tf.estimator.ModeKeys.
enum class Mode { Train, Eval, Predict };
llvm::StringRef getModeName(Mode mode);

/// Parses a job in text format; `filename` prefixes the errors
/// ("<file>:<line>:<column>: <message>").
llvm::Expected<Job> parseJob(llvm::StringRef text, llvm::StringRef filename);

/// Reads and parses the job at `path`, and makes the file paths in it
/// relative to the job's directory absolute.
llvm::Expected<Job> readJob(llvm::StringRef path);

/// What the command line may override.
struct JobOverrides {
  std::string modelDir;
  std::optional<bool> useTpu;
};

/// The settings a run uses: the job's, with TensorFlow's defaults.
struct RunSettings {
  std::string modelDir;
  bool useTpu = true;
  bool evalOnTpu = true;
  int64_t numShards = 1;
  int64_t iterationsPerLoop = 2;
  /// Global batch sizes (0: not given).
  int64_t trainBatchSize = 0, evalBatchSize = 0, predictBatchSize = 0;
  std::optional<int64_t> saveCheckpointsSteps;
  std::optional<int64_t> saveCheckpointsSecs;
  int64_t keepCheckpointMax = 5;
  int64_t logStepCountSteps = 100;
  /// Processes that train together synchronously (train_and_evaluate's
  /// chief and workers), each on its share of every global train batch.
  int64_t trainers = 1;

  /// Replicas that run `mode`: num_shards on the device, else 1.
  int64_t getReplicas(Mode mode) const;
  /// The global batch size of `mode`.
  int64_t getGlobalBatchSize(Mode mode) const;
  /// params['batch_size'] in model_fn for `mode`: the global batch split
  /// over the replicas on the device (and, training, over the trainers),
  /// the whole batch off it.
  int64_t getPerReplicaBatchSize(Mode mode) const;
  /// Whether `mode` runs on the device (replicated, in loops).
  bool onDevice(Mode mode) const;
};

/// Applies the defaults and the checks RunConfig, TPUConfig and
/// TPUEstimator's constructor make, with their messages.
llvm::Expected<RunSettings> getRunSettings(const Job &job,
                                           const JobOverrides &overrides);

/// The checks TPUEstimator makes when a mode starts: the batch size of
/// `mode` given and divisible by the replicas.
llvm::Error checkBatchSize(const RunSettings &settings, Mode mode);

} // namespace cleave::estimator

#endif // CLEAVE_ESTIMATOR_JOB_H
