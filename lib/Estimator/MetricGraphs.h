//===- MetricGraphs.h - evaluation metrics on the host ----------*- C++ -*-===//
//
// TPUEstimatorSpec.eval_metrics as Cleave runs it: each batch's metric
// tensors come out of the model's graph and feed metric_fn's graph (a
// GraphDef the job names, or one built as tf.compat.v1.metrics builds
// accuracy and mean), whose update ops run once per step and whose value
// tensors are read at the end; or a plain EstimatorSpec's metric ops in
// the model graph itself. The mean loss is always reported, as
// Estimator's default `loss` metric.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_METRICGRAPHS_H
#define CLEAVE_LIB_ESTIMATOR_METRICGRAPHS_H

#include "cleave/Estimator/Job.h"
#include "cleave/Runtime/Session.h"

#include "mlir/IR/BuiltinOps.h"

namespace tensorflow {
class GraphDef;
} // namespace tensorflow

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cleave::estimator {

/// A metric's value tensor and update op ("node" or "node:port").
struct MetricOps {
  std::string name, value, update;
};

/// The metrics a graph holds by TensorFlow's names: every
/// `<name>/update_op` with its `<name>/value`.
std::vector<MetricOps> findGraphMetrics(mlir::ModuleOp module);

/// The GraphDef text of the job's built-in metrics over placeholders named
/// as the metric tensors' keys, of the dtypes `dtypes` gives by key.
llvm::Expected<std::string>
buildMetricGraph(const BuiltinMetrics &metrics,
                 llvm::ArrayRef<std::pair<std::string, int32_t>> dtypes);

/// Binds the Placeholders of a host function's graph (metric_fn's,
/// host_call's) to the model tensors `tensors` gives (key, tensor): by key
/// (dict form), or for the list form by position to `arguments` (default:
/// the placeholders in graph order), whose names it sets as the keys.
/// `name` ("eval_metrics", "host_call") words TensorFlow's messages.
llvm::Error bindHostArguments(
    llvm::StringRef name, mlir::ModuleOp host,
    const google::protobuf::RepeatedPtrField<std::string> &arguments,
    bool listForm, std::vector<std::pair<std::string, std::string>> &tensors);

class MetricRunner {
public:
  /// Checks the job's eval_metrics against the eval graph `model` and
  /// prepares the metric graph's session.
  static llvm::Expected<std::unique_ptr<MetricRunner>>
  create(const Job &job, mlir::ModuleOp model, bool onDevice,
         mlir::MLIRContext &context, const runtime::SessionOptions &options);

  /// Initializes the metric graph's variables.
  llvm::Error initialize();
  /// The model's tensors a step must give the metrics (eval_metrics'
  /// tensors, in order: what TPUEstimator outfeeds).
  const std::vector<std::string> &getModelTensors() const {
    return modelTensors;
  }
  /// The model's own metric update ops a step runs (in-graph metrics).
  std::vector<std::string> getModelUpdates() const;
  /// After one evaluation step: its loss and the values of
  /// getModelTensors(); runs the metric graph's updates on them.
  llvm::Error update(double loss, llvm::ArrayRef<Tensor> tensors);
  /// The metrics' values now, and `loss` (the mean of the steps' losses).
  llvm::Expected<std::vector<std::pair<std::string, double>>>
  values(runtime::Session &model);
  /// The eval graph as TensorFlow exports it (model_fn in EVAL mode with
  /// metric_fn applied in the graph): metric_fn's nodes added to `eval`,
  /// its placeholders replaced by the model tensors bound to them. Gives
  /// every metric, the model's own ones first.
  llvm::Expected<std::vector<MetricOps>>
  addToGraph(tensorflow::GraphDef &eval) const;

private:
  MetricRunner() = default;

  double lossSum = 0;
  int64_t steps = 0;
  /// Metrics of the model graph itself.
  std::vector<MetricOps> inGraph;
  /// metric_fn's graph, its placeholders (bound in order to
  /// modelTensors), and its metrics.
  std::unique_ptr<runtime::Session> host;
  std::vector<std::string> placeholders, modelTensors;
  std::vector<MetricOps> hostMetrics;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_METRICGRAPHS_H
