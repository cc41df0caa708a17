//===- Export.cpp - Estimator.export_saved_model --------------------------===//
//
// The SavedModel TPUEstimator exports: the predict graph, its variables
// from a checkpoint in variables/variables, a MetaGraphDef tagged {serve}
// (export_to_cpu) and one tagged {serve, tpu} whose predictions a TPU
// computation computes (export_to_tpu; the computation replicated once,
// as tpu.rewrite builds it), each with the signature serving_default
// (method tensorflow/serving/predict: the features in, the predictions
// out). Written under a temporary name and renamed, as TensorFlow does.
//
// With all modes (experimental_export_all_saved_models), also the train
// graph, tagged {train}, with the signature `train` and the train op in the
// collection saved_model_train_op, and the eval graph with metric_fn
// applied in it, tagged {eval}, with the signature `eval`; the variables
// are then the train graph's (optimizer slots and global step included),
// as TensorFlow saves those of the first mode.
//
//===----------------------------------------------------------------------===//

#include "EstimatorImpl.h"
#include "MetricGraphs.h"
#include "Support.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/meta_graph.pb.h"
#include "cleave/tf/saved_model.pb.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/text_format.h>

#include <chrono>

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;

/// The TensorInfo of tensor `name` of the module: "node:port", dtype and
/// the shape the graph knows.
static tensorflow::TensorInfo tensorInfo(ModuleOp module,
                                         llvm::StringRef name) {
  tensorflow::TensorInfo info;
  auto [nodeName, port] = graph::splitTensorName(name);
  info.set_name((nodeName + ":" + llvm::Twine(port)).str());
  graph::NodeOp node = findNode(module, nodeName);
  auto type = node ? dyn_cast<TensorType>(node.getOutputs()[port].getType())
                   : TensorType();
  if (!type)
    return info;
  info.set_dtype(
      tensorflow::DataType(graph::typeToDataType(type.getElementType())));
  auto *shape = info.mutable_tensor_shape();
  if (!type.hasRank()) {
    shape->set_unknown_rank(true);
    return info;
  }
  for (int64_t d : type.getShape())
    shape->add_dim()->set_size(ShapedType::isDynamic(d) ? -1 : d);
  return info;
}

using TensorNames = std::vector<std::pair<std::string, std::string>>;

/// One MetaGraphDef of the export: the module's graph, `tags`, and the
/// signature `key` (method `method`) with `inputs` and `outputs` (key ->
/// tensor).
static llvm::Expected<tensorflow::MetaGraphDef>
metaGraph(ModuleOp module, llvm::ArrayRef<std::string> tags,
          llvm::StringRef key, llvm::StringRef method,
          const TensorNames &inputs, const TensorNames &outputs) {
  tensorflow::MetaGraphDef meta;
  if (failed(exportMetaGraphDef(module, meta)))
    return llvm::make_error<runtime::ReportedError>();
  meta.mutable_meta_info_def()->clear_tags();
  for (const std::string &tag : tags)
    meta.mutable_meta_info_def()->add_tags(tag);
  tensorflow::SignatureDef &signature =
      (*meta.mutable_signature_def())[key.str()];
  signature.set_method_name(method.str());
  for (const auto &[name, tensor] : inputs)
    (*signature.mutable_inputs())[name] = tensorInfo(module, tensor);
  for (const auto &[name, tensor] : outputs)
    (*signature.mutable_outputs())[name] = tensorInfo(module, tensor);
  return meta;
}

static llvm::Error inferShapes(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addPass(graph::createGraphInferShapesPass());
  if (failed(pm.run(module)))
    return llvm::make_error<runtime::ReportedError>();
  return llvm::Error::success();
}

/// What a supervised signature (TrainOutput, EvalOutput) gives besides the
/// loss and metrics: the predictions the graph has, as
/// `predictions/<key>`.
static void addPredictionOutputs(ModuleOp module, const Model &model,
                                 TensorNames &outputs) {
  for (const NamedTensor &prediction : model.predictions())
    if (hasTensor(module, prediction.tensor()))
      outputs.emplace_back("predictions/" + prediction.key(),
                           prediction.tensor());
}

/// The train graph (model_fn in TRAIN mode, on the CPU) with the
/// checkpoint's variables restored in `session`, as the MetaGraphDef
/// tagged {train}.
llvm::Expected<tensorflow::MetaGraphDef>
Estimator::Impl::exportTrainGraph(llvm::StringRef prefix,
                                  const TensorNames &inputs,
                                  std::unique_ptr<runtime::Session> &session) {
  const Model &model = job.model();
  auto graph = loadGraph(Mode::Train);
  if (!graph)
    return graph.takeError();
  if (model.has_optimizer())
    if (llvm::Error failure = addTrainingStep(**graph, false))
      return std::move(failure);
  std::string trainOp = getTrainOpName();
  if (!findNode(**graph, trainOp))
    return makeError("model.train_op: no node '" + trainOp +
                     "' in the train graph");
  if (llvm::Error failure = inferShapes(context, **graph))
    return std::move(failure);
  runtime::SessionOptions sessionOptions = options.session;
  sessionOptions.backend = runtime::SessionOptions::Backend::Interpreter;
  auto created = runtime::Session::create(
      std::move(*graph), getGraphPath(Mode::Train), sessionOptions);
  if (!created)
    return created.takeError();
  session = std::move(*created);
  if (llvm::Error failure = restoreForEvaluation(*session, prefix))
    return std::move(failure);
  ModuleOp module = session->getModule();
  TensorNames outputs = {{"loss", model.loss()}};
  addPredictionOutputs(module, model, outputs);
  auto meta = metaGraph(module, {"train"}, "train",
                        "tensorflow/supervised/training", inputs, outputs);
  if (!meta)
    return meta.takeError();
  (*meta->mutable_collection_def())["saved_model_train_op"]
      .mutable_node_list()
      ->add_value(trainOp);
  return meta;
}

/// The eval graph with metric_fn's nodes in it (model_fn in EVAL mode, on
/// the CPU, as TPUEstimator converts eval_metrics to eval_metric_ops), as
/// the MetaGraphDef tagged {eval}.
llvm::Expected<tensorflow::MetaGraphDef>
Estimator::Impl::exportEvalGraph(const TensorNames &inputs) {
  const Model &model = job.model();
  auto graph = loadGraph(Mode::Eval);
  if (!graph)
    return graph.takeError();
  auto metrics = MetricRunner::create(job, **graph, /*onDevice=*/false,
                                      context, options.session);
  if (!metrics)
    return metrics.takeError();
  tensorflow::GraphDef graphDef;
  if (failed(exportGraphDef(**graph, graphDef)))
    return llvm::make_error<runtime::ReportedError>();
  auto merged = (*metrics)->addToGraph(graphDef);
  if (!merged)
    return merged.takeError();
  // A metric whose update is an op, not a tensor, is given as a tensor
  // that runs it, as _SupervisedOutput wraps it for the SignatureDef.
  int wrappers = 0;
  for (MetricOps &metric : *merged)
    for (const tensorflow::NodeDef &node : graphDef.node()) {
      if (node.name() != graph::splitTensorName(metric.update).first ||
          node.op() != "NoOp")
        continue;
      tensorflow::NodeDef *wrapper = graphDef.add_node();
      wrapper->set_name(wrappers
                            ? "metric_op_wrapper_" + std::to_string(wrappers)
                            : std::string("metric_op_wrapper"));
      ++wrappers;
      wrapper->set_op("Const");
      wrapper->add_input("^" + node.name());
      (*wrapper->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
      tensorflow::TensorProto &value =
          *(*wrapper->mutable_attr())["value"].mutable_tensor();
      value.set_dtype(tensorflow::DT_FLOAT);
      value.mutable_tensor_shape()->add_dim()->set_size(0);
      metric.update = wrapper->name();
      break;
    }
  OwningOpRef<ModuleOp> module =
      importGraphDef(graphDef, &context, getGraphPath(Mode::Eval));
  if (!module)
    return llvm::make_error<runtime::ReportedError>();
  if (llvm::Error failure = inferShapes(context, *module))
    return std::move(failure);
  TensorNames outputs = {{"loss", model.loss()}};
  addPredictionOutputs(*module, model, outputs);
  for (const MetricOps &metric : *merged) {
    std::string key = llvm::StringRef(metric.name).starts_with("metrics")
                          ? metric.name
                          : "metrics/" + metric.name;
    outputs.emplace_back(key + "/value", metric.value);
    outputs.emplace_back(key + "/update_op", metric.update);
  }
  return metaGraph(*module, {"eval"}, "eval", "tensorflow/supervised/eval",
                   inputs, outputs);
}

llvm::Expected<std::string>
Estimator::exportSavedModel(const ExportOptions &exportOptions) {
  Impl &I = *impl;
  const Config &config = I.job.config();
  bool toCpu = config.has_export_to_cpu() ? config.export_to_cpu() : true;
  bool toTpu = config.has_export_to_tpu() ? config.export_to_tpu() : true;
  if (!toCpu && !toTpu)
    return makeError("config: One of export_to_cpu and export_to_tpu must "
                     "be true.");
  if (exportOptions.exportDirBase.empty())
    return makeError("--export-dir-base: where the SavedModel goes");
  const Model &model = I.job.model();
  if (model.predictions().empty())
    return makeError("model.predictions: no export_outputs are provided "
                     "(the predictions are what the SavedModel serves)");
  std::string prefix = exportOptions.checkpoint;
  if (prefix.empty())
    prefix = getLatestCheckpoint();
  if (prefix.empty())
    return makeError("Couldn't find trained model at " + I.settings.modelDir +
                     ".");
  auto resolved = runtime::resolveCheckpointPrefix(prefix);
  if (!resolved)
    return resolved.takeError();

  tensorflow::SavedModel savedModel;
  savedModel.set_saved_model_schema_version(1);
  TensorNames inputs, outputs;
  for (const InputBinding &binding : model.features())
    inputs.emplace_back(binding.key(), binding.placeholder());
  // All modes: the train and eval graphs first, the train graph's session
  // holding the variables the SavedModel keeps.
  std::unique_ptr<runtime::Session> trainSession;
  if (exportOptions.allModes) {
    TensorNames supervised = inputs;
    for (const InputBinding &binding : model.labels())
      supervised.emplace_back(binding.key(), binding.placeholder());
    auto train = I.exportTrainGraph(*resolved, supervised, trainSession);
    if (!train)
      return train.takeError();
    *savedModel.add_meta_graphs() = std::move(*train);
    auto eval = I.exportEvalGraph(supervised);
    if (!eval)
      return eval.takeError();
    *savedModel.add_meta_graphs() = std::move(*eval);
  }

  // The predict graph with the checkpoint's variables.
  auto graph = I.loadGraph(Mode::Predict);
  if (!graph)
    return graph.takeError();
  std::vector<std::string> predictionTensors;
  for (const NamedTensor &prediction : model.predictions()) {
    if (!hasTensor(**graph, prediction.tensor()))
      return makeError("model.predictions: no tensor '" + prediction.tensor() +
                       "' (key '" + prediction.key() +
                       "') in the predict graph");
    outputs.emplace_back(prediction.key(), prediction.tensor());
    predictionTensors.push_back(prediction.tensor());
  }
  // The signatures carry the shapes the graph knows; the TPU graph is a
  // copy of it.
  if (llvm::Error failure = inferShapes(I.context, **graph))
    return std::move(failure);
  OwningOpRef<ModuleOp> tpuGraph = (*graph)->clone();
  runtime::SessionOptions sessionOptions = I.options.session;
  sessionOptions.backend = runtime::SessionOptions::Backend::Interpreter;
  auto session = runtime::Session::create(
      std::move(*graph), I.getGraphPath(Mode::Predict), sessionOptions);
  if (!session)
    return session.takeError();
  if (llvm::Error failure = I.restoreForEvaluation(**session, *resolved))
    return std::move(failure);

  // <base>/<timestamp>, written as <base>/temp-<timestamp> first.
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  llvm::SmallString<256> exportDir, tempDir;
  for (;; ++seconds) {
    exportDir = exportOptions.exportDirBase;
    llvm::sys::path::append(exportDir, std::to_string(seconds));
    if (!llvm::sys::fs::exists(exportDir))
      break;
  }
  tempDir = exportOptions.exportDirBase;
  llvm::sys::path::append(tempDir, "temp-" + std::to_string(seconds));
  llvm::SmallString<256> variables(tempDir);
  llvm::sys::path::append(variables, "variables", "variables");
  if (llvm::Error failure =
          (trainSession ? *trainSession : **session).writeVariables(variables))
    return std::move(failure);

  if (toCpu) {
    auto meta = metaGraph((*session)->getModule(), {"serve"}, "serving_default",
                          "tensorflow/serving/predict", inputs, outputs);
    if (!meta)
      return meta.takeError();
    *savedModel.add_meta_graphs() = std::move(*meta);
  }
  if (toTpu) {
    // tpu.rewrite: the predictions computed in a computation replicated
    // once; the signature serves its outputs.
    graph::GraphReplicatePassOptions rewrite;
    rewrite.outputs = predictionTensors;
    rewrite.numReplicas = 1;
    PassManager pm(&I.context);
    pm.addPass(graph::createGraphReplicatePass(rewrite));
    if (failed(pm.run(*tpuGraph)))
      return llvm::make_error<runtime::ReportedError>();
    std::vector<std::pair<std::string, std::string>> tpuOutputs;
    for (size_t k = 0; k < outputs.size(); ++k)
      tpuOutputs.emplace_back(outputs[k].first,
                              "output_" + std::to_string(k) + "_shard_0");
    auto meta = metaGraph(*tpuGraph, {"serve", "tpu"}, "serving_default",
                          "tensorflow/serving/predict", inputs, tpuOutputs);
    if (!meta)
      return meta.takeError();
    *savedModel.add_meta_graphs() = std::move(*meta);
  }
  llvm::SmallString<256> file(tempDir);
  llvm::sys::path::append(file, exportOptions.asText ? "saved_model.pbtxt"
                                                     : "saved_model.pb");
  std::string bytes;
  if (exportOptions.asText)
    google::protobuf::TextFormat::PrintToString(savedModel, &bytes);
  else
    savedModel.SerializeToString(&bytes);
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec)
    return makeError("cannot write '" + file + "': " + ec.message());
  os << bytes;
  os.close();
  if (os.has_error())
    return makeError("cannot write '" + file + "': " + os.error().message());
  if (std::error_code ec = llvm::sys::fs::rename(tempDir, exportDir))
    return makeError("cannot rename '" + tempDir + "' to '" + exportDir +
                     "': " + ec.message());
  I.info("SavedModel written to: " + exportDir);
  return std::string(exportDir);
}
