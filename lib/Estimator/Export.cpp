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
//===----------------------------------------------------------------------===//

#include "EstimatorImpl.h"
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

/// One MetaGraphDef of the export: the module's graph, `tags`, and the
/// serving_default signature with `outputs` (key -> tensor).
static llvm::Expected<tensorflow::MetaGraphDef>
metaGraph(ModuleOp module, llvm::ArrayRef<std::string> tags,
          llvm::ArrayRef<std::pair<std::string, std::string>> inputs,
          llvm::ArrayRef<std::pair<std::string, std::string>> outputs) {
  tensorflow::MetaGraphDef meta;
  if (failed(exportMetaGraphDef(module, meta)))
    return llvm::make_error<runtime::ReportedError>();
  meta.mutable_meta_info_def()->clear_tags();
  for (const std::string &tag : tags)
    meta.mutable_meta_info_def()->add_tags(tag);
  tensorflow::SignatureDef &signature =
      (*meta.mutable_signature_def())["serving_default"];
  signature.set_method_name("tensorflow/serving/predict");
  for (const auto &[key, tensor] : inputs)
    (*signature.mutable_inputs())[key] = tensorInfo(module, tensor);
  for (const auto &[key, tensor] : outputs)
    (*signature.mutable_outputs())[key] = tensorInfo(module, tensor);
  return meta;
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

  // The predict graph with the checkpoint's variables.
  auto graph = I.loadGraph(Mode::Predict);
  if (!graph)
    return graph.takeError();
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  for (const InputBinding &binding : model.features())
    inputs.emplace_back(binding.key(), binding.placeholder());
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
  PassManager inferShapes(&I.context);
  inferShapes.addPass(graph::createGraphInferShapesPass());
  if (failed(inferShapes.run(**graph)))
    return llvm::make_error<runtime::ReportedError>();
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
  if (llvm::Error failure = (*session)->writeVariables(variables))
    return std::move(failure);

  tensorflow::SavedModel savedModel;
  savedModel.set_saved_model_schema_version(1);
  if (toCpu) {
    auto meta = metaGraph((*session)->getModule(), {"serve"}, inputs, outputs);
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
    auto meta = metaGraph(*tpuGraph, {"serve", "tpu"}, inputs, tpuOutputs);
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
