//===- ClusterFormation.cpp - graph-cluster-formation ---------------------===//
//
// TensorFlow's tf-tpu-cluster-formation on the graph dialect: the nodes of
// one _tpu_replicate value become a graph.cluster (wrapped in a
// graph.replicate when the metadata asks for several replicas), with the
// checks of the MLIR bridge and of the graph bridge's encapsulation.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHCLUSTERFORMATIONPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave::graph;

namespace {

/// The nodes of one cluster, in block order, and its metadata.
struct ClusterNodes {
  NodeOp metadata;
  SmallVector<NodeOp> members;
};

class GraphClusterFormationPass
    : public cleave::graph::impl::GraphClusterFormationPassBase<
          GraphClusterFormationPass> {
public:
  void runOnOperation() override;

private:
  LogicalResult collect(Block &block,
                        llvm::MapVector<StringRef, ClusterNodes> &clusters);
  LogicalResult checkCycles(StringRef name, const ClusterNodes &nodes,
                            const llvm::DenseSet<Operation *> &members);
  FailureOr<ClusterOp> formCluster(StringRef name, ClusterNodes &nodes);
  LogicalResult replicate(ClusterOp cluster, int64_t n);
  void forwardSingleReplicaIO(ClusterOp cluster);
};

} // namespace

LogicalResult GraphClusterFormationPass::collect(
    Block &block, llvm::MapVector<StringRef, ClusterNodes> &clusters) {
  for (auto node : block.getOps<NodeOp>()) {
    Attribute tag = node.getTFAttr(kTPUReplicateAttr);
    auto name = dyn_cast_or_null<StringAttr>(tag);
    if (node.getOpType() == "TPUReplicateMetadata") {
      if (!name || name.getValue().empty())
        return nodeError(node) << "requires '_tpu_replicate' string attribute";
      ClusterNodes &entry = clusters[name.getValue()];
      if (entry.metadata)
        return nodeError(node)
               << "multiple TPUReplicateMetadata ops with the same "
                  "'_tpu_replicate' attribute '"
               << name.getValue() << "' found";
      entry.metadata = node;
      continue;
    }
    if (!tag)
      continue;
    if (!name || name.getValue().empty())
      return nodeError(node) << "has an empty '_tpu_replicate' attribute";
    clusters[name.getValue()].members.push_back(node);
  }
  for (auto &[name, nodes] : clusters) {
    if (!nodes.metadata)
      return nodeError(nodes.members.front())
             << "TPUReplicateMetadata for associated '_tpu_replicate' "
                "attribute '"
             << name << "' is missing";
    auto n = dyn_cast_or_null<IntegerAttr>(
        nodes.metadata.getTFAttr("num_replicas"));
    if (!n || n.getType().isInteger(1))
      return nodeError(nodes.metadata)
             << "requires 'num_replicas' int attribute";
    if (n.getInt() < 1)
      return nodeError(nodes.metadata)
             << "requires 'num_replicas' int attribute to be at least 1";
    if (n.getInt() > kMaxReplicas)
      return nodeError(nodes.metadata)
             << "'num_replicas' is " << n.getInt() << ", more than the "
             << kMaxReplicas << " replicas Cleave runs";
  }
  return success();
}

LogicalResult GraphClusterFormationPass::checkCycles(
    StringRef name, const ClusterNodes &nodes,
    const llvm::DenseSet<Operation *> &members) {
  // A node both reachable from the cluster and reaching it would close a
  // cycle through the cluster once it is one op.
  SmallVector<Operation *> worklist;
  llvm::DenseSet<Operation *> after, before;
  for (NodeOp member : nodes.members)
    worklist.push_back(member);
  worklist.push_back(nodes.metadata);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers())
      if (!members.contains(user) && after.insert(user).second)
        worklist.push_back(user);
  }
  for (NodeOp member : nodes.members)
    worklist.push_back(member);
  worklist.push_back(nodes.metadata);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value input : op->getOperands())
      if (Operation *producer = input.getDefiningOp();
          producer && !members.contains(producer) &&
          before.insert(producer).second)
        worklist.push_back(producer);
  }
  for (Operation &op : *nodes.metadata->getBlock())
    if (after.contains(&op) && before.contains(&op)) {
      auto node = cast<NodeOp>(op);
      return nodeError(node)
             << "Op has cyclic dependency with a compilation cluster: it "
                "depends on cluster '"
             << name << "' and the cluster depends on it";
    }
  return success();
}

FailureOr<ClusterOp>
GraphClusterFormationPass::formCluster(StringRef name, ClusterNodes &nodes) {
  llvm::DenseSet<Operation *> members;
  for (NodeOp member : nodes.members)
    members.insert(member);
  members.insert(nodes.metadata);
  if (failed(checkCycles(name, nodes, members)))
    return failure();

  // The cluster goes where its last node was; nodes in between that depend
  // on it move after it.
  Operation *first = nodes.metadata, *last = nodes.metadata;
  for (NodeOp member : nodes.members) {
    if (member->isBeforeInBlock(first))
      first = member;
    if (last->isBeforeInBlock(member))
      last = member;
  }
  llvm::DenseSet<Operation *> dependsOnCluster;
  SmallVector<Operation *> toMove;
  for (Operation *op = first; op != last; op = op->getNextNode()) {
    if (members.contains(op))
      continue;
    bool depends = llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && (members.contains(def) || dependsOnCluster.contains(def));
    });
    if (depends) {
      dependsOnCluster.insert(op);
      toMove.push_back(op);
    }
  }

  // Yield the values used outside, in member order. As in the MLIR bridge,
  // a value read by an untagged node (not only by a TPUReplicatedOutput)
  // is a result of the cluster too; under replication that node reads
  // replica 0 (see replicate()).
  SmallVector<Value> yielded;
  for (NodeOp member : nodes.members)
    for (Value v : member->getResults())
      if (llvm::any_of(v.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        yielded.push_back(v);

  MLIRContext *ctx = &getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(last);
  NodeOp metadata = nodes.metadata;
  SmallVector<Type> types;
  for (Value v : yielded)
    types.push_back(v.getType());
  // As the MLIR bridge: every metadata attr but num_replicas, which the
  // replicate (or its absence) says; export writes it back.
  NamedAttrList metadataAttrs(metadata.getAttrs());
  metadataAttrs.erase("num_replicas");
  auto cluster = b.create<ClusterOp>(
      metadata.getLoc(), types, ControlType::get(ctx),
      metadata.getControlInputs(), b.getStringAttr(name),
      metadataAttrs.getDictionary(ctx), metadata.getNameAttr(),
      metadata.getDeviceAttr());
  Block *body = new Block;
  cluster.getBody().push_back(body);
  Value metadataControl = body->addArgument(ControlType::get(ctx),
                                            metadata.getLoc());
  Operation *anchor = cluster;
  for (Operation *op : toMove) {
    op->moveAfter(anchor);
    anchor = op;
  }
  for (auto [i, v] : llvm::enumerate(yielded))
    v.replaceUsesWithIf(cluster.getOutputs()[i], [&](OpOperand &use) {
      return !members.contains(use.getOwner());
    });
  metadata.getControl().replaceUsesWithIf(
      metadataControl, [&](OpOperand &use) {
        return members.contains(use.getOwner());
      });
  metadata.getControl().replaceAllUsesWith(cluster.getControl());
  metadata.erase();

  b.setInsertionPointToEnd(body);
  for (NodeOp member : nodes.members) {
    member->moveBefore(body, body->end());
    setTFAttr(member, kTPUReplicateAttr, {});
    // The cluster runs on the replica's core: members keep only a device
    // that names that core (as the MLIR bridge's cluster formation does).
    if (auto device = member.getDeviceAttr();
        device && !device.getValue().contains("TPU_REPLICATED_CORE"))
      member.removeDeviceAttr();
  }
  b.create<YieldOp>(cluster.getLoc(), yielded);
  return cluster;
}

/// The dictionary export needs to write a folded node back.
static DictionaryAttr describeNode(Builder &b, NodeOp node,
                                   unsigned numControls) {
  NamedAttrList entry;
  entry.set("name", node.getNameAttr());
  entry.set("attrs", node.getAttrsAttr());
  if (auto device = node.getDeviceAttr())
    entry.set("device", device);
  if (numControls)
    entry.set("controls", b.getI64IntegerAttr(numControls));
  return entry.getDictionary(b.getContext());
}

static InFlightDiagnostic leftoverUse(NodeOp node, OpOperand &use) {
  auto diag = nodeError(node) << "'" << node.getOpType()
                              << "' is expected to have no uses, but it is "
                                 "operand#"
                              << use.getOperandNumber() << " of ";
  if (auto user = dyn_cast<NodeOp>(use.getOwner()))
    diag << "'" << user.getName() << "'";
  else
    diag << use.getOwner()->getName();
  return diag;
}

static bool isPartitionedInput(NodeOp node) {
  return node && (node.getOpType() == "TPUPartitionedInput" ||
                  node.getOpType() == "TPUPartitionedInputV2");
}

LogicalResult GraphClusterFormationPass::replicate(ClusterOp cluster,
                                                   int64_t n) {
  MLIRContext *ctx = &getContext();
  Builder b(ctx);
  int64_t numCores = 1;
  if (auto cores = cluster.getMetadata().getAs<IntegerAttr>(
          "num_cores_per_replica"))
    numCores = cores.getInt();
  // Replicated inputs: TPUReplicatedInput nodes read inside the cluster,
  // directly or through a TPUPartitionedInput[V2] that assembles a value
  // from per-core parts (each part a TPUReplicatedInput of its own).
  llvm::SetVector<NodeOp> usedInputs, partitionedInputs;
  auto addInput = [&](Value v) {
    if (auto tri = v.getDefiningOp<NodeOp>();
        tri && tri.getOpType() == "TPUReplicatedInput" &&
        !cluster->isAncestor(tri))
      usedInputs.insert(tri);
  };
  cluster.getBody().walk([&](NodeOp member) {
    for (Value v : member.getInputs()) {
      addInput(v);
      if (auto pi = v.getDefiningOp<NodeOp>();
          isPartitionedInput(pi) && !cluster->isAncestor(pi) &&
          partitionedInputs.insert(pi))
        for (Value part : pi.getDataInputs())
          addInput(part);
    }
  });
  for (NodeOp pi : partitionedInputs) {
    // The MLIR bridge's check: one part per core of a replica.
    int64_t numParts = pi.getDataInputs().size();
    if (numParts != numCores)
      return nodeError(pi) << "'" << pi.getOpType() << "' requires "
                           << numCores << " operands but found " << numParts
                           << " (num_cores_per_replica = " << numCores << ")";
    for (Operation *user : pi->getUsers())
      if (!cluster->isAncestor(user)) {
        auto userNode = dyn_cast<NodeOp>(user);
        return nodeError(pi) << "'" << pi.getOpType()
                             << "' feeds the TPU computation and so moves "
                                "into its replicate, but '"
                             << (userNode ? userNode.getName()
                                          : user->getName().getStringRef())
                             << "' outside the computation reads it too";
      }
  }
  for (NodeOp tri : usedInputs) {
    int64_t numValues = tri.getDataInputs().size();
    if (tri.getTFBool("is_packed").value_or(false)) {
      if (numValues != 1)
        return nodeError(tri) << "a packed TPUReplicatedInput (is_packed = "
                                 "true) holds one value for all "
                              << n << " replicas, but it has " << numValues
                              << " inputs";
      continue;
    }
    if (numValues != n)
      return nodeError(tri) << "Mismatched number of replicas. Computation "
                               "has "
                            << n << " replicas, input '" << tri.getName()
                            << "' has " << numValues << " replicas.";
  }
  // As TensorFlow lists them: replicated inputs first, then packed ones.
  SmallVector<NodeOp> inputNodes = usedInputs.takeVector();
  std::stable_partition(inputNodes.begin(), inputNodes.end(), [](NodeOp tri) {
    return !tri.getTFBool("is_packed").value_or(false);
  });
  // Replicated outputs: at most one TPUReplicatedOutput per cluster result.
  auto yield = cast<YieldOp>(cluster.getBody().front().getTerminator());
  SmallVector<NodeOp> outputNodes(yield.getNumOperands());
  for (auto [k, result] : llvm::enumerate(cluster.getOutputs()))
    for (Operation *user : result.getUsers())
      if (auto tro = dyn_cast<NodeOp>(user);
          tro && tro.getOpType() == "TPUReplicatedOutput" && !outputNodes[k]) {
        if ((int64_t)tro.getOutputs().size() != n)
          return nodeError(tro)
                 << "Mismatched number of replicas. Computation has " << n
                 << " replicas, output '" << tro.getName() << "' has "
                 << tro.getOutputs().size() << " replicas.";
        outputNodes[k] = tro;
      }

  SmallVector<Value> operands;
  SmallVector<Attribute> inputEntries, outputEntries;
  for (NodeOp tri : inputNodes) {
    llvm::append_range(operands, tri.getDataInputs());
    inputEntries.push_back(
        describeNode(b, tri, tri.getControlInputs().size()));
  }
  for (NodeOp tri : inputNodes)
    llvm::append_range(operands, tri.getControlInputs());
  for (NodeOp tro : outputNodes) {
    if (!tro) {
      outputEntries.push_back(b.getDictionaryAttr({}));
      continue;
    }
    outputEntries.push_back(
        describeNode(b, tro, tro.getControlInputs().size()));
    llvm::append_range(operands, tro.getControlInputs());
  }
  SmallVector<Type> resultTypes;
  for (Type t : yield.getOperandTypes())
    resultTypes.append(n, t);

  OpBuilder builder(cluster);
  auto replicate = builder.create<ReplicateOp>(
      cluster.getLoc(), resultTypes, ControlType::get(ctx), operands,
      builder.getI64IntegerAttr(n), builder.getArrayAttr(inputEntries),
      builder.getArrayAttr(outputEntries));
  // As the MLIR bridge: the operand groups of mirrored variables (one
  // variable per replica, updated alike) are listed for the runtime.
  SmallVector<int64_t> mirrored;
  for (int64_t i = 0, e = inputNodes.size(); i < e; ++i)
    if (NodeOp tri = inputNodes[i];
        tri.getTFBool("is_mirrored_variable").value_or(false))
      mirrored.push_back(i);
  if (!mirrored.empty())
    replicate->setAttr("_mirrored_variable_indices",
                       builder.getI64ArrayAttr(mirrored));
  Block *body = new Block;
  replicate.getBody().push_back(body);
  for (NodeOp tri : inputNodes) {
    Value arg = body->addArgument(tri.getOutputs()[0].getType(), tri.getLoc());
    tri.getOutputs()[0].replaceUsesWithIf(arg, [&](OpOperand &use) {
      return cluster->isAncestor(use.getOwner()) ||
             partitionedInputs.contains(dyn_cast<NodeOp>(use.getOwner()));
    });
  }
  // Each replica assembles its own value from its cores' parts, beside its
  // copy of the cluster (as the MLIR bridge moves them into the replicate).
  for (NodeOp pi : partitionedInputs)
    pi->moveBefore(body, body->end());
  cluster->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  builder.create<YieldOp>(cluster.getLoc(), cluster.getOutputs());

  for (auto [k, result] : llvm::enumerate(cluster.getOutputs())) {
    if (NodeOp tro = outputNodes[k])
      for (auto [r, out] : llvm::enumerate(tro.getOutputs()))
        out.replaceAllUsesWith(replicate.getOutputs()[k * n + r]);
    // Other users outside read replica 0.
    Operation *tro = outputNodes[k];
    result.replaceUsesWithIf(replicate.getOutputs()[k * n],
                             [&](OpOperand &use) {
                               return !replicate->isAncestor(use.getOwner()) &&
                                      use.getOwner() != tro;
                             });
  }
  cluster.getControl().replaceUsesWithIf(
      replicate.getControl(), [&](OpOperand &use) {
        return !replicate->isAncestor(use.getOwner());
      });

  // One node may stand for several inputs or outputs (a mutated graph
  // feeds two cluster outputs to one TPUReplicatedOutput): erase it once.
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (NodeOp node : llvm::concat<NodeOp>(inputNodes, outputNodes)) {
    if (!node || !erased.insert(node).second)
      continue;
    for (OpOperand &use : node->getUses())
      return leftoverUse(node, use);
    node.erase();
  }
  return success();
}

/// With one replica, TPUReplicatedInput and TPUReplicatedOutput are
/// identities: their uses read what they read, and they go when nothing
/// else (a control edge) holds them, as the MLIR bridge does.
void GraphClusterFormationPass::forwardSingleReplicaIO(ClusterOp cluster) {
  auto isSingle = [](NodeOp node, StringRef op) {
    return node && node.getOpType() == op && node.getDataInputs().size() == 1 &&
           node.getOutputs().size() == 1;
  };
  llvm::SetVector<NodeOp> forwarded;
  cluster.getBody().walk([&](NodeOp member) {
    for (Value input : member.getInputs())
      if (auto tri = input.getDefiningOp<NodeOp>();
          isSingle(tri, "TPUReplicatedInput") && !cluster->isAncestor(tri))
        forwarded.insert(tri);
  });
  for (Value result : cluster.getOutputs())
    for (Operation *user : result.getUsers())
      if (auto tro = dyn_cast<NodeOp>(user);
          isSingle(tro, "TPUReplicatedOutput"))
        forwarded.insert(tro);
  for (NodeOp node : forwarded) {
    node.getOutputs()[0].replaceAllUsesWith(node.getDataInputs()[0]);
    if (node.getControl().use_empty())
      node.erase();
  }
}

void GraphClusterFormationPass::runOnOperation() {
  if (failed(cleave::validateNodeDefs(getOperation())))
    return signalPassFailure();
  for (auto graph : getOperation().getOps<GraphOp>()) {
    llvm::MapVector<StringRef, ClusterNodes> clusters;
    if (failed(collect(graph.getBody().front(), clusters)))
      return signalPassFailure();
    // Names live in the nodes' attrs, which formation rewrites: copy them.
    SmallVector<std::pair<std::string, ClusterNodes>> work;
    for (auto &[name, nodes] : clusters)
      work.emplace_back(name.str(), nodes);
    for (auto &[name, nodes] : work) {
      int64_t n = nodes.metadata.getTFInt("num_replicas").value_or(1);
      FailureOr<ClusterOp> cluster = formCluster(name, nodes);
      if (failed(cluster))
        return signalPassFailure();
      if (n == 1)
        forwardSingleReplicaIO(*cluster);
      else if (failed(replicate(*cluster, n)))
        return signalPassFailure();
    }
  }
}
