//===- EstimatorImpl.h - the Estimator's state, shared by its files -*- C++
//-*-===//
//
// Estimator::Impl and what a mode's run keeps (its session, how a step
// feeds and fetches), for Estimator.cpp (the modes) and Export.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_ESTIMATORIMPL_H
#define CLEAVE_LIB_ESTIMATOR_ESTIMATORIMPL_H

#include "CapturedObject.h"
#include "TrainingHooks.h"

#include "cleave/Estimator/Estimator.h"
#include "cleave/Estimator/Input.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

namespace tensorflow {
class MetaGraphDef;
} // namespace tensorflow

namespace cleave::estimator {

/// A mode's graph in its session, with what the job binds in it.
struct ModeSession {
  std::unique_ptr<runtime::Session> session;
  Mode mode;
  /// Placeholders by input key (the model graph's).
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string trainOp, globalStep;
  /// For a graph without the global step: the restored checkpoint's.
  int64_t checkpointStep = 0;
  /// scaffold_fn's scaffold, captured when the graph is built, read when
  /// the session starts fresh.
  CapturedObject<Scaffold> scaffold;

  /// How a step runs. Off the device: the batch fed to `inputs`, the loss
  /// and `outfeed` fetched by name. On the device (graph-training-loop):
  /// each replica's rows fed to its infeed placeholders, the enqueues and
  /// the computation run, each replica's loss and outfeed dequeued.
  bool onDevice = false;
  int64_t replicas = 1;
  std::vector<std::string> lossFetches, targets;
  /// The model tensors a step gives the host (metric_fn's, predictions).
  std::vector<std::string> outfeed;
  /// On the device: each replica's infeed placeholders, by input, and its
  /// OutfeedDequeueTuple.
  std::vector<std::vector<std::string>> replicaFeeds;
  std::vector<std::string> outfeedDequeues;
  /// Training (and evaluation) on the device with graph-training-loop's
  /// While: a launch is one run of the replicas over
  /// `tpu_estimator/iterations_per_loop` steps, their batches enqueued
  /// before by `enqueueTargets`, their outfeed dequeued after.
  bool deviceLoop = false;
  std::vector<std::string> enqueueTargets;
};

/// One step's results: the loss (the mean over the replicas) and the
/// outfed tensors (the replicas' concatenated in replica order).
struct StepResult {
  double loss = std::nan("");
  Tensor lossTensor;
  std::vector<Tensor> outfed;
};

struct Estimator::Impl {
  Job job;
  mlir::MLIRContext &context;
  EstimatorOptions options;
  RunSettings settings;
  llvm::SourceMgr sourceMgr;
  /// For a model given as a SavedModel: which modes it has a graph for.
  bool savedModelHasMode[3] = {false, false, false};

  Impl(Job job, mlir::MLIRContext &context, EstimatorOptions options)
      : job(std::move(job)), context(context), options(std::move(options)) {}

  TrainingLog log(int64_t first = 0, int64_t last = 0) {
    return TrainingLog(options.log, options.liveProgress,
                       settings.logStepCountSteps, first, last);
  }
  void info(const llvm::Twine &line) { log().info(line); }

  std::string getGraphPath(Mode mode) const;
  std::string getGlobalStepName() const {
    return job.model().global_step().empty() ? "global_step"
                                             : job.model().global_step();
  }
  /// The train op: the job's, or the one its optimizer builds.
  std::string getTrainOpName() const;
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadGraph(Mode mode);
  /// A model given as a SavedModel (experimental_export_all_saved_models):
  /// what the job does not name, from its signatures and collections.
  llvm::Error bindSavedModel();
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  loadSavedModelGraph(Mode mode);
  /// export --all-modes (Export.cpp): the train graph with the
  /// checkpoint's variables (in `session`, which keeps them for the
  /// SavedModel) and the eval graph with metric_fn in it, as MetaGraphDefs
  /// whose supervised signatures take `inputs` (key, placeholder).
  llvm::Expected<tensorflow::MetaGraphDef> exportTrainGraph(
      llvm::StringRef prefix,
      const std::vector<std::pair<std::string, std::string>> &inputs,
      std::unique_ptr<runtime::Session> &session);
  llvm::Expected<tensorflow::MetaGraphDef> exportEvalGraph(
      const std::vector<std::pair<std::string, std::string>> &inputs);
  /// A fresh start of a model given as a SavedModel: its variables.
  llvm::Error restoreSavedModelVariables(runtime::Session &session);
  /// `numShards` > 0: the step of one of that many shards, built before
  /// the device loop replicates it; else `crossReplica`: the loss of a
  /// replicated computation.
  llvm::Error addTrainingStep(mlir::ModuleOp module, bool crossReplica,
                              int64_t numShards = 0);
  llvm::Error addTowers(mlir::ModuleOp module, ModeSession &mode);
  llvm::Error checkInputs(mlir::ModuleOp module, Mode mode);
  llvm::Error putOnDevice(mlir::ModuleOp module, ModeSession &mode);
  /// `evalLoop`: evaluation on the device may run as one launch of the
  /// device loop (the host needs no step's own tensors but the outfeed).
  /// `graph`: the mode's graph when the caller has loaded it already.
  llvm::Expected<ModeSession>
  open(Mode mode, llvm::ArrayRef<std::string> outfeed = {},
       bool evalLoop = false, mlir::OwningOpRef<mlir::ModuleOp> graph = {});
  llvm::Expected<StepResult> runStep(ModeSession &mode, const Batch &batch,
                                     llvm::ArrayRef<std::string> extraFetches,
                                     llvm::ArrayRef<std::string> extraTargets,
                                     std::vector<Tensor> *extraResults);
  /// One launch of the device loop: `batches.size()` steps in one run of
  /// each replica (ModeSession::deviceLoop). The loss is the replicas'
  /// mean of what the loop carries: the last step's in training, the sum
  /// of the steps' in evaluation.
  llvm::Expected<StepResult> runLaunch(ModeSession &mode,
                                       llvm::ArrayRef<Batch> batches);
  /// Prediction on the device: one launch of the loop over the whole
  /// input, until the stopping signal; `collect` gets each batch's
  /// predictions in order.
  llvm::Error runPredictLaunch(
      ModeSession &mode, Prefetcher &prefetcher,
      llvm::function_ref<llvm::Error(const Batch &, llvm::ArrayRef<Tensor>)>
          collect);
  /// One step's outfed tensors after a launch: each replica's dequeued,
  /// concatenated in replica order.
  llvm::Expected<std::vector<Tensor>> dequeueOutfeed(ModeSession &mode);
  /// Each replica's rows of `batch`, by its infeed placeholders.
  runtime::NamedTensors replicaFeeds(const ModeSession &mode,
                                     const Batch &batch);
  llvm::Error initialize(ModeSession &mode, llvm::StringRef checkpoint,
                         bool *restored);
  llvm::Error runInitializers(runtime::Session &session, bool localOnly);
  llvm::Error restoreForEvaluation(runtime::Session &session,
                                   llvm::StringRef prefix);
  llvm::Error checkScaffold(mlir::ModuleOp module, bool onDevice);
  /// What a fresh start restores after the initializers: a SavedModel
  /// model's variables, then warm_start_from's, then the scaffold's.
  llvm::Error warmStart(ModeSession &mode);
  llvm::Expected<Examples> readInput(Mode mode);
  llvm::Expected<int64_t> readGlobalStep(ModeSession &mode);
  llvm::Error save(ModeSession &mode, int64_t step);
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_ESTIMATORIMPL_H
