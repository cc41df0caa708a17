//===- AutoClusterPass.cpp - graph-auto-cluster for graph-opt -------------===//

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/AutoClustering/Passes.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/AutoClustering/AutoClustering.h"

namespace cleave {
#define GEN_PASS_DEF_GRAPHAUTOCLUSTERPASS
#include "cleave/AutoClustering/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {
struct GraphAutoClusterPass
    : cleave::impl::GraphAutoClusterPassBase<GraphAutoClusterPass> {
  using GraphAutoClusterPassBase::GraphAutoClusterPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(validateNodeDefs(module)))
      return signalPassFailure();
    llvm::StringMap<Location> locations;
    if (report)
      module.walk([&](graph::NodeOp node) {
        if (isa<graph::GraphOp>(node->getParentOp()))
          locations.try_emplace(node.getName(), node.getLoc());
      });
    jit::RunSignature signature;
    signature.feeds.assign(feeds.begin(), feeds.end());
    signature.fetches.assign(fetches.begin(), fetches.end());
    signature.targets.assign(targets.begin(), targets.end());
    std::vector<jit::ClusteringDecision> decisions;
    if (failed(jit::clusterForCompilation(module, signature, decisions)))
      return signalPassFailure();
    if (!report)
      return;
    for (const jit::ClusteringDecision &d : decisions) {
      auto it = locations.find(d.node);
      Location loc = it != locations.end() ? it->second : module.getLoc();
      if (d.cluster.empty())
        emitRemark(loc) << "Node '" << d.node << "': interpreted: "
                        << d.reason;
      else
        emitRemark(loc) << "Node '" << d.node << "': compiled in "
                        << d.cluster;
    }
  }
};
} // namespace
