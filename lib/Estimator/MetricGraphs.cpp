//===- MetricGraphs.cpp - evaluation metrics on the host ------------------===//

#include "MetricGraphs.h"

#include "Support.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"
#include "cleave/tf/types.pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;
using runtime::NamedTensors;
using runtime::Session;

std::vector<MetricOps> estimator::findGraphMetrics(ModuleOp module) {
  llvm::StringSet<> names;
  walkNodes(module, [&](graph::NodeOp node) { names.insert(node.getName()); });
  std::vector<MetricOps> metrics;
  walkNodes(module, [&](graph::NodeOp node) {
    llvm::StringRef name = node.getName();
    if (!name.consume_back("/update_op") ||
        !names.contains((name + "/value").str()))
      return;
    metrics.push_back(
        {name.str(), (name + "/value").str(), (name + "/update_op").str()});
  });
  return metrics;
}

//===----------------------------------------------------------------------===//
// Built-in metrics: the nodes tf.compat.v1.metrics builds
//===----------------------------------------------------------------------===//

namespace {
class MetricGraphText {
public:
  std::string node(llvm::StringRef name, llvm::StringRef op,
                   llvm::ArrayRef<std::string> inputs,
                   llvm::ArrayRef<std::string> attrs = {}) {
    text += "node { name: \"" + name.str() + "\" op: \"" + op.str() + "\"";
    for (const std::string &input : inputs)
      text += " input: \"" + input + "\"";
    for (const std::string &attr : attrs)
      text += " " + attr;
    text += " }\n";
    return name.str();
  }
  static std::string type(llvm::StringRef key, int32_t dtype) {
    return "attr { key: \"" + key.str() + "\" value { type: " +
           tensorflow::DataType_Name(tensorflow::DataType(dtype)) + " } }";
  }
  static std::string boolean(llvm::StringRef key, bool value) {
    return "attr { key: \"" + key.str() +
           "\" value { b: " + (value ? "true" : "false") + " } }";
  }
  std::string scalar(llvm::StringRef name, int32_t dtype, llvm::StringRef field,
                     llvm::StringRef value, int rank = 0) {
    std::string shape = rank ? "dim { size: 1 }" : "";
    return node(name, "Const", {},
                {type("dtype", dtype),
                 "attr { key: \"value\" value { tensor { dtype: " +
                     tensorflow::DataType_Name(tensorflow::DataType(dtype)) +
                     " tensor_shape { " + shape + " } " + field.str() + ": " +
                     value.str() + " } } }"});
  }
  std::string cast(llvm::StringRef name, const std::string &input, int32_t from,
                   int32_t to) {
    return node(
        name, "Cast", {input},
        {type("SrcT", from), type("DstT", to), boolean("Truncate", false)});
  }
  /// A float32 local variable initialized to zero.
  std::string variable(llvm::StringRef name) {
    std::string var = node(name, "VariableV2", {},
                           {type("dtype", tensorflow::DT_FLOAT),
                            "attr { key: \"shape\" value { shape { } } }",
                            "attr { key: \"container\" value { s: \"\" } }",
                            "attr { key: \"shared_name\" value { s: \"\" } }"});
    std::string zeros = scalar((name + "/Initializer/zeros").str(),
                               tensorflow::DT_FLOAT, "float_val", "0");
    node((name + "/Assign").str(), "Assign", {var, zeros},
         {type("T", tensorflow::DT_FLOAT), boolean("use_locking", true),
          boolean("validate_shape", true)});
    return var;
  }
  /// metrics.mean(values) in scope `scope` over float32 `values`.
  void mean(llvm::StringRef scope, const std::string &values) {
    std::string s = scope.str() + "/";
    int32_t f32 = tensorflow::DT_FLOAT, i32 = tensorflow::DT_INT32;
    std::string total = variable(s + "total");
    std::string count = variable(s + "count");
    std::string flat =
        node(s + "Reshape", "Reshape",
             {values, scalar(s + "Reshape/shape", i32, "int_val", "-1", 1)},
             {type("T", f32), type("Tshape", i32)});
    std::string sum =
        node(s + "Sum", "Sum", {flat, scalar(s + "Const", i32, "int_val", "0")},
             {type("T", f32), type("Tidx", i32), boolean("keep_dims", false)});
    std::string addTotal =
        node(s + "AssignAdd", "AssignAdd", {total, sum},
             {type("T", f32), boolean("use_locking", false)});
    std::string size = node(s + "Size", "Size", {values},
                            {type("T", f32), type("out_type", i32)});
    std::string numValues = cast(s + "ToFloat_1", size, i32, f32);
    std::string addCount =
        node(s + "AssignAdd_1", "AssignAdd", {count, numValues, "^" + values},
             {type("T", f32), boolean("use_locking", false)});
    node(s + "value", "DivNoNan", {total, count}, {type("T", f32)});
    std::string positive =
        node(s + "Maximum", "Maximum",
             {addCount, scalar(s + "Maximum/y", f32, "float_val", "0")},
             {type("T", f32)});
    node(s + "update_op", "DivNoNan", {addTotal, positive}, {type("T", f32)});
  }
  std::string text;
};
} // namespace

llvm::Expected<std::string> estimator::buildMetricGraph(
    const BuiltinMetrics &metrics,
    llvm::ArrayRef<std::pair<std::string, int32_t>> dtypes) {
  MetricGraphText g;
  int32_t f32 = tensorflow::DT_FLOAT;
  auto dtypeOf = [&](const std::string &key) -> int32_t {
    for (const auto &[name, dtype] : dtypes)
      if (name == key)
        return dtype;
    return 0;
  };
  auto placeholder = [&](const std::string &key,
                         llvm::StringRef field) -> llvm::Expected<std::string> {
    int32_t dtype = dtypeOf(key);
    if (!dtype)
      return makeError("model.eval_metrics.builtin: " + field + " '" + key +
                       "' is none of eval_metrics.tensors' keys");
    if (!g.text.empty() &&
        g.text.find("name: \"" + key + "\" op:") != std::string::npos)
      return key;
    return g.node(key, "Placeholder", {},
                  {MetricGraphText::type("dtype", dtype)});
  };
  for (const BuiltinMetric &metric : metrics.metric()) {
    switch (metric.kind_case()) {
    case BuiltinMetric::kAccuracy: {
      const auto &accuracy = metric.accuracy();
      std::string scope = metric.name().empty() ? "accuracy" : metric.name();
      auto labels = placeholder(accuracy.labels(), "labels");
      if (!labels)
        return labels.takeError();
      int32_t labelType = dtypeOf(accuracy.labels());
      std::string predictions;
      int32_t predictionType;
      if (!accuracy.logits().empty()) {
        auto logits = placeholder(accuracy.logits(), "logits");
        if (!logits)
          return logits.takeError();
        std::string axis = g.scalar(scope + "/ArgMax/dimension",
                                    tensorflow::DT_INT32, "int_val", "-1");
        predictions = g.node(
            scope + "/ArgMax", "ArgMax", {*logits, axis},
            {MetricGraphText::type("T", dtypeOf(accuracy.logits())),
             MetricGraphText::type("Tidx", tensorflow::DT_INT32),
             MetricGraphText::type("output_type", tensorflow::DT_INT64)});
        predictionType = tensorflow::DT_INT64;
      } else {
        auto fed = placeholder(accuracy.predictions(), "predictions");
        if (!fed)
          return fed.takeError();
        predictions = *fed;
        predictionType = dtypeOf(accuracy.predictions());
      }
      if (predictionType != labelType)
        predictions =
            g.cast(scope + "/Cast", predictions, predictionType, labelType);
      std::string equal =
          g.node(scope + "/Equal", "Equal", {predictions, *labels},
                 {MetricGraphText::type("T", labelType),
                  MetricGraphText::boolean("incompatible_shape_error", true)});
      g.mean(scope,
             g.cast(scope + "/ToFloat", equal, tensorflow::DT_BOOL, f32));
      break;
    }
    case BuiltinMetric::kMean: {
      std::string scope = metric.name().empty() ? "mean" : metric.name();
      auto values = placeholder(metric.mean().values(), "values");
      if (!values)
        return values.takeError();
      int32_t type = dtypeOf(metric.mean().values());
      g.mean(scope, type == f32
                        ? *values
                        : g.cast(scope + "/ToFloat", *values, type, f32));
      break;
    }
    case BuiltinMetric::KIND_NOT_SET:
      return makeError("model.eval_metrics.builtin: a metric without a kind "
                       "(accuracy or mean)");
    }
  }
  return g.text;
}

//===----------------------------------------------------------------------===//
// Host functions' arguments
//===----------------------------------------------------------------------===//

llvm::Error estimator::bindHostArguments(
    llvm::StringRef name, ModuleOp host,
    const google::protobuf::RepeatedPtrField<std::string> &argumentList,
    bool listForm, std::vector<std::pair<std::string, std::string>> &tensors) {
  std::vector<std::string> placeholders;
  walkNodes(host, [&](graph::NodeOp node) {
    if (node.getOpType() == "Placeholder")
      placeholders.push_back(node.getName().str());
  });
  if (listForm) {
    std::vector<std::string> arguments(argumentList.begin(),
                                       argumentList.end());
    if (arguments.empty())
      arguments = placeholders;
    if (arguments.size() != tensors.size())
      return makeError(
          llvm::formatv("model.{0}: In TPUEstimatorSpec.{0}, length "
                        "of tensors {1} does not match method args "
                        "of the function, which takes {2}.",
                        name, tensors.size(), arguments.size())
              .str());
    for (size_t i = 0; i < tensors.size(); ++i)
      tensors[i].first = arguments[i];
  }
  std::vector<std::string> missing, additional;
  for (const std::string &placeholder : placeholders)
    if (!llvm::any_of(tensors,
                      [&](const auto &t) { return t.first == placeholder; }))
      missing.push_back(placeholder);
  for (const auto &[key, tensor] : tensors)
    if (!llvm::is_contained(placeholders, key))
      additional.push_back(key);
  std::string fn =
      name == "eval_metrics" ? "metric_fn" : "host_call's function";
  std::string first = "(first element of TPUEstimatorSpec." + name.str() + ")";
  std::string second =
      "(second element of TPUEstimatorSpec." + name.str() + ")";
  std::string given =
      name == "eval_metrics" ? "evaluation tensors" : "its tensors";
  if (!missing.empty())
    return makeError("model." + name + ": Arguments " + pythonList(missing) +
                     " are needed by " + fn + " " + first +
                     " but they are not provided by " + given + " " + second +
                     ".");
  if (!additional.empty())
    return makeError("model." + name + ": Arguments " + pythonList(additional) +
                     " are provided by " + given + " " + second +
                     " but they are not needed by " + fn + " " + first + ".");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// MetricRunner
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<MetricRunner>>
MetricRunner::create(const Job &job, ModuleOp model, bool onDevice,
                     MLIRContext &context,
                     const runtime::SessionOptions &options) {
  std::unique_ptr<MetricRunner> runner(new MetricRunner);
  const EvalMetrics &spec = job.model().eval_metrics();
  bool plainSpec = job.model().spec() == Model::ESTIMATOR_SPEC;
  if (plainSpec && onDevice)
    return makeError("model.spec: estimator_spec used by TPU evaluation must "
                     "have type`TPUEstimatorSpec`. Got <class "
                     "'tensorflow_estimator.python.estimator.model_fn."
                     "EstimatorSpec'>");
  bool hasTensors = spec.tensors_size() || spec.tensor_list_size();
  bool hasFn = spec.fn_case() == EvalMetrics::kMetricFn ||
               spec.fn_case() == EvalMetrics::kBuiltin;
  if (spec.tensors_size() && spec.tensor_list_size())
    return makeError("model.eval_metrics: eval_metrics[1] should be tuple or "
                     "list, or dict. (give tensors or tensor_list, not both)");
  if (hasTensors != hasFn)
    return makeError("model.eval_metrics: eval_metrics should have two "
                     "elements. (metric_fn or builtin, and tensors)");

  // The metrics the job names, else those named as TensorFlow names them.
  auto namedMetrics = [&](ModuleOp graph) {
    if (!spec.metrics_size())
      return findGraphMetrics(graph);
    std::vector<MetricOps> metrics;
    for (const Metric &metric : spec.metrics())
      metrics.push_back(
          {metric.name(),
           metric.value().empty() ? metric.name() + "/value" : metric.value(),
           metric.update_op().empty() ? metric.name() + "/update_op"
                                      : metric.update_op()});
    return metrics;
  };
  std::vector<MetricOps> graphMetrics = findGraphMetrics(model);
  if (plainSpec || spec.fn_case() == EvalMetrics::kFromGraphMetrics) {
    runner->inGraph = namedMetrics(model);
  } else if (!hasFn && onDevice && !graphMetrics.empty()) {
    return makeError("model.eval_metrics: EstimatorSpec.eval_metric_ops is not "
                     "supported with XLA compilation. Please use "
                     "TPUEstimatorSpec.eval_metrics instead. (the eval graph "
                     "has metric '" +
                     graphMetrics.front().name +
                     "'; eval_metrics { from_graph_metrics: true } moves them "
                     "to the host)");
  }

  if (hasFn) {
    // The tensors metric_fn receives: key -> model tensor.
    std::vector<std::pair<std::string, std::string>> tensors;
    for (const NamedTensor &tensor : spec.tensors())
      tensors.emplace_back(tensor.key(), tensor.tensor());
    for (const std::string &tensor : spec.tensor_list())
      tensors.emplace_back("", tensor);
    for (const auto &[key, tensor] : tensors) {
      auto [node, port] = graph::splitTensorName(tensor);
      (void)port;
      if (!getTensorDType(model, tensor))
        return makeError("model.eval_metrics.tensors: no tensor '" + tensor +
                         "' in the eval graph");
      (void)node;
    }
    OwningOpRef<ModuleOp> hostModule;
    llvm::SourceMgr sourceMgr;
    if (spec.fn_case() == EvalMetrics::kBuiltin) {
      std::vector<std::pair<std::string, int32_t>> dtypes;
      for (const auto &[key, tensor] : tensors)
        dtypes.emplace_back(key, getTensorDType(model, tensor));
      auto text = buildMetricGraph(spec.builtin(), dtypes);
      if (!text)
        return text.takeError();
      auto buffer = llvm::MemoryBuffer::getMemBuffer(*text, "builtin-metrics");
      hostModule = importGraphDef(*buffer, &context);
    } else {
      hostModule = loadGraphFile(spec.metric_fn(), &context, sourceMgr,
                                 "graph-estimator");
    }
    if (!hostModule)
      return llvm::make_error<runtime::ReportedError>();
    if (llvm::Error failure =
            bindHostArguments("eval_metrics", *hostModule, spec.arguments(),
                              spec.tensor_list_size() > 0, tensors))
      return std::move(failure);
    for (const auto &[key, tensor] : tensors) {
      runner->placeholders.push_back(key);
      runner->modelTensors.push_back(tensor);
    }
    runner->hostMetrics = namedMetrics(*hostModule);
    if (runner->hostMetrics.empty())
      return makeError(
          "model.eval_metrics: metric_fn's graph has no metric (no "
          "<name>/update_op with its <name>/value; or name them in "
          "eval_metrics.metrics)");
    // The host side runs where TensorFlow runs metric_fn: on the host CPU.
    runtime::SessionOptions hostOptions = options;
    hostOptions.devices = 0;
    auto session = Session::create(std::move(hostModule),
                                   spec.fn_case() == EvalMetrics::kMetricFn
                                       ? spec.metric_fn()
                                       : "builtin-metrics",
                                   hostOptions);
    if (!session)
      return session.takeError();
    runner->host = std::move(*session);
  }
  for (const auto *list : {&runner->inGraph, &runner->hostMetrics})
    for (const MetricOps &metric : *list) {
      if (metric.name == "loss")
        return makeError("model.eval_metrics: Metric with name \"loss\" is not "
                         "allowed, because Estimator already defines a default "
                         "metric with the same name.");
      if (metric.name == "global_step")
        return makeError(
            "model.eval_metrics: Metric with name `global_step` is "
            "not allowed, because Estimator already defines a "
            "default metric with the same name.");
    }
  return runner;
}

llvm::Expected<std::vector<MetricOps>>
MetricRunner::addToGraph(tensorflow::GraphDef &eval) const {
  std::vector<MetricOps> metrics = inGraph;
  if (!host)
    return metrics;
  tensorflow::GraphDef metricGraph;
  if (failed(exportGraphDef(host->getModule(), metricGraph)))
    return llvm::make_error<runtime::ReportedError>();
  llvm::StringMap<std::string> bound;
  for (size_t i = 0; i < placeholders.size(); ++i)
    bound[placeholders[i]] = modelTensors[i];
  llvm::StringSet<> names;
  for (const tensorflow::NodeDef &node : eval.node())
    names.insert(node.name());
  for (const tensorflow::NodeDef &node : metricGraph.node()) {
    if (bound.count(node.name()))
      continue;
    if (names.contains(node.name()))
      return makeError("model.eval_metrics: metric_fn's node '" + node.name() +
                       "' has the name of a node of the eval graph (the "
                       "exported eval graph holds both)");
    tensorflow::NodeDef *copy = eval.add_node();
    *copy = node;
    for (std::string &input : *copy->mutable_input()) {
      bool control = llvm::StringRef(input).starts_with("^");
      auto it = bound.find(
          graph::splitTensorName(llvm::StringRef(input).drop_front(control))
              .first);
      if (it == bound.end())
        continue;
      input = control ? "^" + graph::splitTensorName(it->second).first.str()
                      : it->second;
    }
  }
  for (const auto &function : metricGraph.library().function())
    *eval.mutable_library()->add_function() = function;
  llvm::append_range(metrics, hostMetrics);
  return metrics;
}

llvm::Error MetricRunner::initialize() {
  if (!host)
    return llvm::Error::success();
  // Each metric variable's `<name>/Assign`, as tf.compat.v1.metrics names
  // the initializers of their local variables.
  std::vector<std::string> initializers;
  for (graph::NodeOp variable : getVariables(host->getModule()))
    if (graph::NodeOp initializer = getInitializer(variable);
        initializer &&
        initializer.getName() == (variable.getName() + "/Assign").str())
      initializers.push_back(initializer.getName().str());
  if (initializers.empty())
    return llvm::Error::success();
  auto done = host->run({}, {}, initializers);
  return done ? llvm::Error::success() : done.takeError();
}

std::vector<std::string> MetricRunner::getModelUpdates() const {
  std::vector<std::string> updates;
  for (const MetricOps &metric : inGraph)
    updates.push_back(metric.update);
  return updates;
}

llvm::Error MetricRunner::update(double loss, llvm::ArrayRef<Tensor> tensors) {
  lossSum += loss;
  ++steps;
  if (!host)
    return llvm::Error::success();
  NamedTensors hostFeeds;
  for (size_t i = 0; i < placeholders.size(); ++i)
    hostFeeds.emplace_back(placeholders[i], tensors[i]);
  std::vector<std::string> updates;
  for (const MetricOps &metric : hostMetrics)
    updates.push_back(metric.update);
  auto updated = host->run(hostFeeds, updates, {});
  return updated ? llvm::Error::success() : updated.takeError();
}

llvm::Expected<std::vector<std::pair<std::string, double>>>
MetricRunner::values(Session &model) {
  std::vector<std::pair<std::string, double>> result;
  result.emplace_back("loss", steps ? lossSum / steps : 0.0);
  auto read = [&](Session &session,
                  const std::vector<MetricOps> &metrics) -> llvm::Error {
    if (metrics.empty())
      return llvm::Error::success();
    std::vector<std::string> fetches;
    for (const MetricOps &metric : metrics)
      fetches.push_back(metric.value);
    auto values = session.run({}, fetches, {});
    if (!values)
      return values.takeError();
    for (size_t i = 0; i < metrics.size(); ++i)
      result.emplace_back(metrics[i].name, (*values)[i].getAsDouble(0));
    return llvm::Error::success();
  };
  if (llvm::Error failure = read(model, inGraph))
    return std::move(failure);
  if (host)
    if (llvm::Error failure = read(*host, hostMetrics))
      return std::move(failure);
  return result;
}
