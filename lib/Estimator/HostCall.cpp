//===- HostCall.cpp - TPUEstimatorSpec.host_call on the host --------------===//

#include "HostCall.h"

#include "MetricGraphs.h"
#include "Support.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Translate/GraphDef.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;

llvm::Expected<std::unique_ptr<HostCallRunner>>
HostCallRunner::create(const Job &job, ModuleOp model, MLIRContext &context,
                       const runtime::SessionOptions &options) {
  const HostCall &spec = job.model().host_call();
  std::unique_ptr<HostCallRunner> runner(new HostCallRunner);
  if (spec.host_fn().empty() ||
      (spec.tensors().empty() && spec.tensor_list().empty()))
    return makeError("model.host_call: host_call should have two elements. "
                     "(host_fn, and tensors or tensor_list)");
  if (!spec.tensors().empty() && !spec.tensor_list().empty())
    return makeError(
        "model.host_call: host_call[1] should be tuple or list, or "
        "dict. (give tensors or tensor_list, not both)");
  std::vector<std::pair<std::string, std::string>> tensors;
  for (const NamedTensor &tensor : spec.tensors())
    tensors.emplace_back(tensor.key(), tensor.tensor());
  for (const std::string &tensor : spec.tensor_list())
    tensors.emplace_back("", tensor);
  for (const auto &[key, tensor] : tensors)
    if (!hasTensor(model, tensor))
      return makeError("model.host_call.tensors: no tensor '" + tensor +
                       "' in the train graph");
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> hostModule =
      loadGraphFile(spec.host_fn(), &context, sourceMgr, "graph-estimator");
  if (!hostModule)
    return llvm::make_error<runtime::ReportedError>();
  if (llvm::Error failure =
          bindHostArguments("host_call", *hostModule, spec.arguments(),
                            !spec.tensor_list().empty(), tensors))
    return std::move(failure);
  for (const auto &[key, tensor] : tensors) {
    runner->placeholders.push_back(key);
    runner->modelTensors.push_back(tensor);
  }
  runner->targets.assign(spec.targets().begin(), spec.targets().end());
  if (runner->targets.empty()) {
    // What host_fn builds for effect: the nodes nothing reads.
    for (auto graphOp : hostModule->getOps<graph::GraphOp>())
      graphOp.walk([&](graph::NodeOp node) {
        bool read = !node.getControl().use_empty() ||
                    llvm::any_of(node.getOutputs(),
                                 [](Value v) { return !v.use_empty(); });
        if (!read && node.getOpType() != "Placeholder" &&
            node.getOpType() != "Const")
          runner->targets.push_back(node.getName().str());
      });
  }
  if (runner->targets.empty())
    return makeError("model.host_call: host_fn's graph does nothing (no node "
                     "that nothing reads; name its ops in host_call.targets)");
  runtime::SessionOptions hostOptions = options;
  hostOptions.devices = 0;
  auto session = runtime::Session::create(std::move(hostModule), spec.host_fn(),
                                          hostOptions);
  if (!session)
    return session.takeError();
  runner->host = std::move(*session);
  return runner;
}

llvm::Error HostCallRunner::run(llvm::ArrayRef<Tensor> tensors) {
  runtime::NamedTensors feeds;
  for (size_t i = 0; i < placeholders.size(); ++i)
    feeds.emplace_back(placeholders[i], tensors[i]);
  auto done = host->run(feeds, {}, targets);
  return done ? llvm::Error::success() : done.takeError();
}
