//===- HostTransfers.cpp - the channels host and device meet on -----------===//

#include "cleave/Dialect/Graph/Utils/HostTransfers.h"

#include "cleave/Dialect/Graph/IR/Graph.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

static void addKey(NodeOp node, StringRef attr, llvm::StringSet<> &set) {
  if (auto key = dyn_cast_or_null<StringAttr>(node.getTFAttr(attr)))
    set.insert(key.getValue());
}

ChannelUse cleave::graph::getChannelUse(ModuleOp module,
                                        ArrayRef<Operation *> ops) {
  ChannelUse use;
  SmallVector<Operation *> work(ops);
  llvm::DenseSet<Operation *> visited;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    op->walk([&](NodeOp node) {
      StringRef type = node.getOpType();
      if (type == "_XlaHostComputeMlir") {
        addKey(node, "send_key", use.sentChannels);
        addKey(node, "recv_key", use.receivedChannels);
      } else if (type == "XlaSendToHost" || type == "_XlaSendFromHost" ||
                 type == "_XlaSendFromHostV2") {
        addKey(node, "key", use.sentChannels);
      } else if (type == "XlaRecvFromHost" || type == "_XlaRecvAtHost" ||
                 type == "_XlaRecvAtHostV2") {
        addKey(node, "key", use.receivedChannels);
      } else if (type == "InfeedEnqueueTuple" || type == "InfeedEnqueue") {
        use.sentQueues.insert("infeed");
      } else if (type == "OutfeedEnqueueTuple" || type == "OutfeedEnqueue") {
        use.sentQueues.insert("outfeed");
      }
      for (const auto &called : getCalledFunctions(node))
        if (auto func = module.lookupSymbol<FuncOp>(called.second))
          if (visited.insert(func).second)
            work.push_back(func);
    });
  }
  return use;
}

/// The computation `unit` belongs to: a cluster or replicate region's
/// name, a node's `_tpu_replicate`; empty for none.
static StringRef computationOf(Operation *unit) {
  if (auto cluster = dyn_cast<ClusterOp>(unit))
    return cluster.getCluster();
  if (auto replicate = dyn_cast<ReplicateOp>(unit))
    return replicate.getCluster().getCluster();
  if (auto node = dyn_cast<NodeOp>(unit))
    if (auto name =
            dyn_cast_or_null<StringAttr>(node.getTFAttr("_tpu_replicate")))
      return name.getValue();
  return {};
}

/// The computation whose program key `op` reads directly (the key node
/// graph-extract-outside-compilation writes, "<cluster>/program_key"), or
/// empty.
static StringRef programKeyRead(Operation *op) {
  for (Value input : op->getOperands()) {
    auto key = input.getDefiningOp<NodeOp>();
    if (key && key.getOpType() == "_XlaCompileMlirPlaceholderProgramKey" &&
        key.getName().ends_with("/program_key"))
      return key.getName().drop_back(StringRef("/program_key").size());
  }
  return {};
}

SmallVector<Operation *>
cleave::graph::findChannelSenders(ModuleOp module, Block &body,
                                  const llvm::DenseSet<Operation *> &needed,
                                  const ChannelUse &neededUse) {
  SmallVector<Operation *> senders;
  if (neededUse.receivedChannels.empty())
    return senders;
  llvm::StringSet<> computations;
  for (Operation *unit : needed)
    if (StringRef name = computationOf(unit); !name.empty())
      computations.insert(name);
  for (Operation &op : body) {
    if (needed.count(&op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    StringRef program = programKeyRead(&op);
    if (program.empty() || !computations.contains(program))
      continue;
    ChannelUse use = getChannelUse(module, {&op});
    if (llvm::any_of(use.sentChannels, [&](const auto &key) {
          return neededUse.receivedChannels.contains(key.getKey());
        }))
      senders.push_back(&op);
  }
  return senders;
}

ChannelUse cleave::graph::addHostSides(
    ModuleOp module, Block &body, const llvm::DenseSet<Operation *> &needed,
    llvm::function_ref<void(ArrayRef<Operation *>)> addNeeded) {
  ChannelUse use = getChannelUse(module, llvm::to_vector(needed));
  for (SmallVector<Operation *> senders =
           findChannelSenders(module, body, needed, use);
       !senders.empty();
       senders = findChannelSenders(module, body, needed, use)) {
    addNeeded(senders);
    use = getChannelUse(module, llvm::to_vector(needed));
  }
  return use;
}
