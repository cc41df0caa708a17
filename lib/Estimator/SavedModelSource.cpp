//===- SavedModelSource.cpp - a SavedModel as model_fn --------------------===//
//
// A model given as the SavedModel experimental_export_all_saved_models
// writes (graph-estimator export --all-modes writes the same): its
// MetaGraphDefs tagged {train}, {eval} and {serve} are model_fn in the
// three modes. What the job leaves unnamed comes from them, as a
// TensorFlow 1.x user exports once and then names only the input:
//   - features: the inputs of serve's `serving_default` signature;
//   - labels: the inputs of train's `train` signature that are no feature;
//   - loss: the `loss` output of `train` (else of `eval`);
//   - train_op: the collection saved_model_train_op of the train graph;
//   - predictions: the outputs of `serving_default`;
//   - eval_metrics: every `metrics/<name>/value` and `.../update_op` of
//     `eval`, run in the eval graph (off the device) or moved to the host.
// A run that starts fresh begins from the SavedModel's variables.
//
//===----------------------------------------------------------------------===//

#include "EstimatorImpl.h"
#include "Support.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Runtime/SavedModel.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/saved_model.pb.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;

/// The tags of the MetaGraphDef that is model_fn in `mode`.
static std::vector<std::string> getModeTags(Mode mode) {
  return {mode == Mode::Train  ? "train"
          : mode == Mode::Eval ? "eval"
                               : "serve"};
}

/// A tensor of a signature as the job names tensors: "node" for port 0.
static std::string getTensorName(const tensorflow::TensorInfo &info) {
  auto [node, port] = graph::splitTensorName(info.name());
  return port ? info.name() : node.str();
}

static const tensorflow::MetaGraphDef *
findMetaGraph(const tensorflow::SavedModel &savedModel, Mode mode) {
  std::vector<std::string> tags = getModeTags(mode);
  for (const tensorflow::MetaGraphDef &meta : savedModel.meta_graphs()) {
    const auto &metaTags = meta.meta_info_def().tags();
    if (std::vector<std::string>(metaTags.begin(), metaTags.end()) == tags)
      return &meta;
  }
  return nullptr;
}

static const tensorflow::SignatureDef *
findSignature(const tensorflow::MetaGraphDef *meta, llvm::StringRef key) {
  if (!meta)
    return nullptr;
  auto it = meta->signature_def().find(key.str());
  return it == meta->signature_def().end() ? nullptr : &it->second;
}

llvm::Error Estimator::Impl::bindSavedModel() {
  Model &model = *job.mutable_model();
  const std::string &path = model.saved_model();
  auto buffer = readGraphInput(path, "graph-estimator");
  if (!buffer)
    return llvm::make_error<runtime::ReportedError>();
  tensorflow::SavedModel savedModel;
  if (failed(parseSavedModel(*buffer, &context, savedModel)))
    return llvm::make_error<runtime::ReportedError>();
  const tensorflow::MetaGraphDef *train =
      findMetaGraph(savedModel, Mode::Train);
  const tensorflow::MetaGraphDef *eval = findMetaGraph(savedModel, Mode::Eval);
  const tensorflow::MetaGraphDef *serve =
      findMetaGraph(savedModel, Mode::Predict);
  savedModelHasMode[int(Mode::Train)] = train;
  savedModelHasMode[int(Mode::Eval)] = eval;
  savedModelHasMode[int(Mode::Predict)] = serve;
  if (!train && !eval && !serve)
    return makeError("model.saved_model: '" + path +
                     "' has no MetaGraphDef tagged train, eval or serve "
                     "(experimental_export_all_saved_models writes them)");
  const tensorflow::SignatureDef *trainSignature =
      findSignature(train, "train");
  const tensorflow::SignatureDef *evalSignature = findSignature(eval, "eval");
  const tensorflow::SignatureDef *serving =
      findSignature(serve, "serving_default");

  // Signature maps are unordered: keys are taken sorted.
  auto sortedKeys = [](const auto &map) {
    std::vector<std::string> keys;
    for (const auto &entry : map)
      keys.push_back(entry.first);
    llvm::sort(keys);
    return keys;
  };
  // An input of a signature binds its key to its placeholder.
  auto bind = [](google::protobuf::RepeatedPtrField<InputBinding> *bindings,
                 const std::string &key, const tensorflow::TensorInfo &info) {
    InputBinding *binding = bindings->Add();
    binding->set_key(key);
    binding->set_placeholder(
        std::string(graph::splitTensorName(info.name()).first));
  };
  if (model.features().empty() && serving)
    for (const std::string &key : sortedKeys(serving->inputs()))
      bind(model.mutable_features(), key, serving->inputs().at(key));
  if (model.labels().empty())
    if (const tensorflow::SignatureDef *supervised =
            trainSignature ? trainSignature : evalSignature)
      for (const std::string &key : sortedKeys(supervised->inputs())) {
        if (llvm::any_of(model.features(), [&](const InputBinding &feature) {
              return feature.key() == key;
            }))
          continue;
        bind(model.mutable_labels(), key, supervised->inputs().at(key));
      }
  if (model.loss().empty())
    for (const tensorflow::SignatureDef *supervised :
         {trainSignature, evalSignature})
      if (supervised && supervised->outputs().count("loss")) {
        model.set_loss(getTensorName(supervised->outputs().at("loss")));
        break;
      }
  const tensorflow::CollectionDef *trainOp = nullptr;
  if (train)
    if (auto it = train->collection_def().find("saved_model_train_op");
        it != train->collection_def().end() &&
        it->second.node_list().value_size() == 1)
      trainOp = &it->second;
  if (trainOp && model.has_optimizer())
    return makeError("model.optimizer: the SavedModel's train graph has its "
                     "train op (collection saved_model_train_op); leave the "
                     "optimizer out");
  if (model.train_op().empty() && trainOp)
    model.set_train_op(std::string(
        graph::splitTensorName(
            llvm::StringRef(trainOp->node_list().value(0)).ltrim('^'))
            .first));
  if (model.predictions().empty() && serving)
    for (const std::string &key : sortedKeys(serving->outputs())) {
      NamedTensor *prediction = model.add_predictions();
      prediction->set_key(key);
      prediction->set_tensor(getTensorName(serving->outputs().at(key)));
    }
  if (!model.has_eval_metrics() && evalSignature) {
    // metrics/<name>/value with its metrics/<name>/update_op.
    EvalMetrics metrics;
    for (const std::string &key : sortedKeys(evalSignature->outputs())) {
      llvm::StringRef name(key);
      if (!name.consume_front("metrics/") || !name.consume_back("/value"))
        continue;
      auto update = evalSignature->outputs().find(
          ("metrics/" + name + "/update_op").str());
      if (update == evalSignature->outputs().end())
        continue;
      Metric *metric = metrics.add_metrics();
      metric->set_name(name.str());
      metric->set_value(getTensorName(evalSignature->outputs().at(key)));
      metric->set_update_op(getTensorName(update->second));
    }
    if (metrics.metrics_size()) {
      metrics.set_from_graph_metrics(true);
      *model.mutable_eval_metrics() = std::move(metrics);
    }
  }
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>>
Estimator::Impl::loadSavedModelGraph(Mode mode) {
  if (!savedModelHasMode[int(mode)])
    return makeError("model.saved_model: '" + job.model().saved_model() +
                     "' has no MetaGraphDef tagged " + getModeTags(mode)[0] +
                     ", model_fn in " + getModeName(mode) +
                     " mode (experimental_export_all_saved_models writes "
                     "train, eval and serve)");
  GraphDefImportOptions importOptions;
  importOptions.tags = getModeTags(mode);
  OwningOpRef<ModuleOp> module =
      loadGraphFile(job.model().saved_model(), &context, sourceMgr,
                    "graph-estimator", importOptions);
  if (!module)
    return llvm::make_error<runtime::ReportedError>();
  return module;
}

llvm::Error
Estimator::Impl::restoreSavedModelVariables(runtime::Session &session) {
  if (!job.model().has_saved_model())
    return llvm::Error::success();
  llvm::SmallString<256> prefix(
      runtime::getExportDir(job.model().saved_model()));
  llvm::sys::path::append(prefix, "variables", "variables");
  // Every variable of the mode's graph the SavedModel holds, the global
  // step and optimizer slots included: a fresh start goes on from where the
  // export was.
  auto mapped = mapVariablesByName(session.getModule(), prefix);
  if (!mapped)
    return makeError("model.saved_model: " +
                     llvm::toString(mapped.takeError()));
  info("Restoring parameters from " + prefix + " (the SavedModel's variables)");
  return session.restoreMapped(prefix, *mapped);
}
