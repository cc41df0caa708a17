//===- TrainAndEvaluate.h - tf.estimator.train_and_evaluate ----*- C++ -*-===//
//
// Training with evaluation (and export) of new checkpoints, for the role
// TF_CONFIG gives the process: locally, evaluation after each checkpoint
// train writes; as the evaluator, evaluation of each new checkpoint another
// process writes, until training's max_steps; as a lone chief or master,
// training (with evaluation for the master). The job's train_spec and
// eval_spec are TrainSpec and EvalSpec, checked as their constructors
// check them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ESTIMATOR_TRAINANDEVALUATE_H
#define CLEAVE_ESTIMATOR_TRAINANDEVALUATE_H

#include "cleave/Estimator/Estimator.h"
#include "cleave/Estimator/TFConfig.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::estimator {

/// TrainSpec and EvalSpec with their defaults.
struct TrainAndEvalSpecs {
  std::optional<int64_t> maxSteps;
  /// Batches per evaluation; none: until the eval input ends.
  std::optional<int64_t> evalSteps = 100;
  std::string evalName;
  int64_t startDelaySecs = 120;
  int64_t throttleSecs = 600;
  std::vector<Exporter> exporters;
};

/// The job's train_spec and eval_spec with TrainSpec's, EvalSpec's and
/// the exporters' checks and messages.
llvm::Expected<TrainAndEvalSpecs> getTrainAndEvalSpecs(const Job &job);

/// What train_and_evaluate returns locally (and what the evaluator saw
/// last): the last evaluation's metrics and the exports it made.
struct TrainAndEvaluateResult {
  std::optional<EvalResult> metrics;
  std::vector<std::string> exports;
};

/// train_and_evaluate for the role `cluster` gives this process.
/// `options.overrides.modelDir` and TF_CONFIG's model_dir must agree. The
/// chief and workers of a cluster without ps train synchronously: they
/// meet in <model_dir>/.cleave/rendezvous/<latest step> and a collective
/// that takes longer than `collectiveTimeoutSeconds` (a trainer gone)
/// fails.
llvm::Expected<TrainAndEvaluateResult>
trainAndEvaluate(Job job, const DistributedConfig &cluster,
                 mlir::MLIRContext &context, EstimatorOptions options,
                 double collectiveTimeoutSeconds = 60);

} // namespace cleave::estimator

#endif // CLEAVE_ESTIMATOR_TRAINANDEVALUATE_H
