//===- Estimator.h - train, evaluate and predict from a job -----*- C++ -*-===//
//
// The mode-level driver: what tf.estimator.Estimator / TPUEstimator do
// around a model_fn, for a job (Job.h). It loads the graph of each mode,
// adds the training step (graph-minimize) when the job names an
// optimizer, feeds the batches of the job's input, keeps global_step,
// writes and restores checkpoints in model_dir, runs the hooks, computes
// metrics on the host and collects predictions. Every mode runs on the
// runtime's Session, interpreted or compiled.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ESTIMATOR_ESTIMATOR_H
#define CLEAVE_ESTIMATOR_ESTIMATOR_H

#include "cleave/Estimator/Job.h"
#include "cleave/Runtime/Session.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace cleave::runtime {
class ProcessGroup;
} // namespace cleave::runtime

namespace cleave::estimator {

/// Asynchronous training with parameter servers (train_and_evaluate with
/// ps tasks): who the tasks are and where they meet.
struct ParameterServerCluster {
  /// The ps tasks ("ps:0", ...) and the trainers (chief or master first,
  /// then the workers), in TensorFlow's global-id order.
  std::vector<std::string> psTasks, trainerTasks;
  /// This process's task, and whether it is the chief (it initializes the
  /// ps tasks and writes checkpoints).
  std::string self;
  bool isChief = false;
  /// The directory the tasks meet in (under the shared model_dir), and the
  /// address this process's TCP device binds to.
  std::string meetingDirectory;
  std::string hostname = "127.0.0.1";
  /// How long connecting and each message may take.
  double timeoutSeconds = 60;
};

struct EstimatorOptions {
  runtime::SessionOptions session;
  JobOverrides overrides;
  /// Where the INFO lines go (TensorFlow's logging: "loss = ..., step =
  /// ...", "Saving checkpoints for ..."); null: nowhere.
  llvm::raw_ostream *log = nullptr;
  /// Draw one live progress line on the log instead of the periodic
  /// lines (for a terminal).
  bool liveProgress = false;
  /// Synchronous training across processes (train_and_evaluate's chief
  /// and workers): the trainers' group, whose rank 0 is the chief. Each
  /// trains on its rows of every global batch, the replicated step's
  /// cross-replica sums span every trainer's replicas, and only the chief
  /// writes checkpoints (the others start from the chief's first).
  runtime::ProcessGroup *trainers = nullptr;
  /// With trainers: every this many steps (at a launch's end), compare a
  /// hash of each variable across them and fail naming the first variable
  /// that differs (0: never; a debugging aid).
  int64_t checkReplicasEvery = 0;
  /// Asynchronous training with ps tasks (train_and_evaluate's chief and
  /// workers of a cluster with ps): each trainer's steps pull the
  /// variables from the ps tasks and push gradients to them; only the
  /// chief writes checkpoints. Null: none.
  const ParameterServerCluster *parameterServers = nullptr;
};

/// What evaluate returns: the metrics by name, sorted, global_step and
/// loss included.
struct EvalResult {
  int64_t globalStep = 0;
  std::vector<std::pair<std::string, double>> metrics;
};

/// What predict returns: per requested key, the predictions of every
/// example in input order, along dimension 0.
struct Predictions {
  std::vector<std::string> keys;
  std::vector<Tensor> values;
};

/// Estimator.export_saved_model's arguments.
struct ExportOptions {
  /// The SavedModel goes to <exportDirBase>/<seconds since the epoch>.
  std::string exportDirBase;
  /// The checkpoint (prefix or directory; default: the latest).
  std::string checkpoint;
  /// saved_model.pbtxt instead of saved_model.pb.
  bool asText = false;
  /// experimental_export_all_saved_models: the train and eval graphs too.
  bool allModes = false;
};

/// tf.estimator.CheckpointSaverListener: told of each checkpoint train
/// writes (the first, at the start, included) and of the end of training.
class SavingListener {
public:
  virtual ~SavingListener() = default;
  /// After the checkpoint of `globalStep`; true stops training there.
  virtual llvm::Expected<bool> afterSave(int64_t globalStep) = 0;
  /// After the last step and its checkpoint.
  virtual llvm::Error end(int64_t globalStep) = 0;
};

class Estimator {
public:
  static llvm::Expected<std::unique_ptr<Estimator>>
  create(Job job, mlir::MLIRContext &context, EstimatorOptions options);
  ~Estimator();

  /// Estimator.train(steps=..., max_steps=..., saving_listeners=...).
  llvm::Error train(std::optional<int64_t> steps,
                    std::optional<int64_t> maxSteps,
                    SavingListener *listener = nullptr);
  /// A ps task of `options.parameterServers`: holds its share of the train
  /// graph's variables and applies the trainers' gradients to them, until
  /// the process is stopped.
  llvm::Error serveParameters();
  /// Estimator.evaluate(steps=..., checkpoint_path=..., name=...): the
  /// metrics also go to model_dir/eval[_name] as a TensorBoard event file.
  llvm::Expected<EvalResult> evaluate(std::optional<int64_t> steps,
                                      llvm::StringRef checkpoint,
                                      llvm::StringRef name);
  /// Estimator.predict(predict_keys=...).
  llvm::Expected<Predictions> predict(llvm::ArrayRef<std::string> predictKeys,
                                      llvm::StringRef checkpoint);

  /// Estimator.export_saved_model as TPUEstimator exports: the predict
  /// graph with the checkpoint's variables, as a MetaGraphDef tagged
  /// {serve} (export_to_cpu) and one tagged {serve, tpu} whose
  /// predictions are computed in a TPU computation (export_to_tpu), both
  /// with the signature serving_default (features in, predictions out).
  /// Returns the export directory.
  llvm::Expected<std::string> exportSavedModel(const ExportOptions &options);

  const RunSettings &getSettings() const;
  const Job &getJob() const;
  /// The checkpoint train or evaluate would restore now (empty: none).
  std::string getLatestCheckpoint() const;

private:
  struct Impl;
  explicit Estimator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace cleave::estimator

#endif // CLEAVE_ESTIMATOR_ESTIMATOR_H
