//===- Minimize.cpp - graph-minimize: optimizer.minimize() as a pass ------===//
//
// TensorFlow 1.x's Optimizer.minimize(): the gradients of the loss with
// respect to the variables (gated per op, as GATE_OP), the optimizer's slot
// variables and constants, one Apply* update per variable colocated with
// it, and the train op: a NoOp grouping the updates, or with a global step
// the AssignAdd that increments it after them. Names follow TensorFlow
// (GradientDescent/update_w/ApplyGradientDescent, w/Momentum, beta1_power).
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/Builders.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHMINIMIZEPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {
/// The replicated computation a cross-replica loss lies in.
struct ReplicatedLoss {
  StringAttr tag;
  int64_t numReplicas = 1;
};
} // namespace

static FailureOr<ReplicatedLoss> findReplicatedLoss(Block &body, Value loss) {
  auto lossNode = loss.getDefiningOp<NodeOp>();
  auto tag =
      lossNode
          ? dyn_cast_or_null<StringAttr>(lossNode.getTFAttr(kTPUReplicateAttr))
          : StringAttr();
  if (!tag)
    return emitError(loss.getLoc())
               << "graph-minimize: cross-replica needs a loss inside a "
                  "replicated computation (tagged _tpu_replicate), but '"
               << (lossNode ? lossNode.getName() : StringRef("?"))
               << "' is not in one",
           failure();
  for (auto node : body.getOps<NodeOp>())
    if (node.getOpType() == "TPUReplicateMetadata" &&
        node.getTFAttr(kTPUReplicateAttr) == tag)
      return ReplicatedLoss{tag, node.getTFInt("num_replicas").value_or(1)};
  return nodeError(lossNode) << "graph-minimize: no TPUReplicateMetadata for "
                                "computation '"
                             << tag.getValue() << "'",
         failure();
}

/// Where the computation reads `outside`: the Identity (tagged, after a
/// TPUReplicatedInput of N copies of it) graph-replicate made, or the value
/// itself when the computation reads it directly.
static Value getReplicatedValue(Value outside,
                                const ReplicatedLoss &replicated) {
  for (Operation *user : outside.getUsers()) {
    auto input = dyn_cast<NodeOp>(user);
    if (!input || input.getOpType() != "TPUReplicatedInput" ||
        !llvm::all_of(input.getDataInputs(),
                      [&](Value v) { return v == outside; }))
      continue;
    for (Operation *reader : input.getOutputs()[0].getUsers())
      if (auto identity = dyn_cast<NodeOp>(reader);
          identity && identity.getOpType() == "Identity" &&
          identity.getTFAttr(kTPUReplicateAttr) == replicated.tag)
        return identity.getOutputs()[0];
  }
  return outside;
}

namespace {
/// The cross_replica_sum of the gradients of `gradients` that share the
/// first dense one's dtype and have known shapes, as one sum over their
/// concatenation: each flattened (`CrossReplicaSum/flatten`), concatenated,
/// summed over `group`, split and reshaped back
/// (`CrossReplicaSum/unflatten`); their gradients become the sums. Returns
/// the indices it summed (none when fewer than two qualify).
static FailureOr<llvm::SmallDenseSet<size_t>>
combineGradientSums(NodeAdder &adder,
                    llvm::MutableArrayRef<VariableGradient> gradients,
                    TensorAttr group) {
  OpBuilder &builder = adder.getBuilder();
  MLIRContext *ctx = builder.getContext();
  Type i32 = builder.getI32Type();
  auto vectorConst = [&](StringRef name,
                         ArrayRef<int32_t> values) -> FailureOr<NodeOp> {
    SmallVector<int64_t> shape{int64_t(values.size())};
    auto value = TensorAttr::get(
        ctx, i32, ShapeAttr::get(ctx, shape, false, {}),
        DenseElementsAttr::get(RankedTensorType::get(shape, i32), values),
        values.size(), {});
    return adder.add("Const", name, {}, {},
                     {builder.getNamedAttr("dtype", TypeAttr::get(i32)),
                      builder.getNamedAttr("value", value)});
  };
  llvm::SmallDenseSet<size_t> chosen;
  Type elementType;
  SmallVector<std::vector<int64_t>> shapes;
  for (auto [index, vg] : llvm::enumerate(gradients)) {
    std::optional<std::vector<int64_t>> shape = getKnownShapeAttr(vg.variable);
    Type type = getElementTypeOf(vg.gradient);
    if (!shape || vg.sparse || !type || (elementType && type != elementType))
      continue;
    elementType = type;
    chosen.insert(index);
    shapes.push_back(*shape);
  }
  if (chosen.size() < 2)
    return llvm::SmallDenseSet<size_t>();
  FailureOr<NodeOp> flatShape = vectorConst("CrossReplicaSum/flat_shape", {-1});
  FailureOr<NodeOp> axis = adder.addScalar("CrossReplicaSum/axis", 0, i32);
  if (failed(flatShape) || failed(axis))
    return failure();
  SmallVector<Value> flats;
  SmallVector<int32_t> sizes;
  size_t k = 0;
  for (auto [index, vg] : llvm::enumerate(gradients)) {
    if (!chosen.contains(index))
      continue;
    FailureOr<NodeOp> flat =
        adder.add("Reshape", "CrossReplicaSum/flatten",
                  {vg.gradient, flatShape->getOutputs()[0]}, {});
    if (failed(flat))
      return failure();
    flats.push_back(flat->getOutputs()[0]);
    int64_t elements = 1;
    for (int64_t d : shapes[k++])
      elements *= d;
    sizes.push_back(int32_t(elements));
  }
  SmallVector<Value> concatInputs(flats);
  concatInputs.push_back(axis->getOutputs()[0]);
  FailureOr<NodeOp> concat =
      adder.add("ConcatV2", "CrossReplicaSum/concat", concatInputs, {});
  FailureOr<NodeOp> groupNode =
      adder.add("Const", "CrossReplicaSum/group_assignment", {}, {},
                {builder.getNamedAttr("dtype", TypeAttr::get(i32)),
                 builder.getNamedAttr("value", group)});
  if (failed(concat) || failed(groupNode))
    return failure();
  FailureOr<NodeOp> sum =
      adder.add("CrossReplicaSum", "CrossReplicaSum",
                {concat->getOutputs()[0], groupNode->getOutputs()[0]}, {});
  FailureOr<NodeOp> splitSizes = vectorConst("CrossReplicaSum/sizes", sizes);
  if (failed(sum) || failed(splitSizes))
    return failure();
  FailureOr<NodeOp> split = adder.add(
      "SplitV", "CrossReplicaSum/split",
      {sum->getOutputs()[0], splitSizes->getOutputs()[0],
       axis->getOutputs()[0]},
      {},
      {builder.getNamedAttr("num_split",
                            builder.getI64IntegerAttr(int64_t(sizes.size())))});
  if (failed(split))
    return failure();
  k = 0;
  for (auto [index, vg] : llvm::enumerate(gradients)) {
    if (!chosen.contains(index))
      continue;
    SmallVector<int32_t> dims(shapes[k].begin(), shapes[k].end());
    FailureOr<NodeOp> shape = vectorConst("CrossReplicaSum/shape", dims);
    if (failed(shape))
      return failure();
    FailureOr<NodeOp> unflat =
        adder.add("Reshape", "CrossReplicaSum/unflatten",
                  {split->getOutputs()[k], shape->getOutputs()[0]}, {});
    if (failed(unflat))
      return failure();
    vg.gradient = unflat->getOutputs()[0];
    ++k;
  }
  return chosen;
}

class GraphMinimizePass
    : public graph::impl::GraphMinimizePassBase<GraphMinimizePass> {
public:
  using GraphMinimizePassBase::GraphMinimizePassBase;
  void runOnOperation() override;
};
} // namespace

void GraphMinimizePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(validateNodeDefs(module)))
    return signalPassFailure();
  auto graphs = module.getOps<GraphOp>();
  if (graphs.empty()) {
    module.emitError("graph-minimize: the module has no graph.graph");
    return signalPassFailure();
  }
  GraphOp graph = *graphs.begin();
  Block &body = graph.getBody().front();
  if (!llvm::is_contained({"sgd", "momentum", "adam"}, StringRef(optimizer))) {
    emitOptionError(graph) << "graph-minimize: option 'optimizer' must be "
                              "sgd, momentum or adam, got '"
                           << optimizer.getValue() << "'";
    return signalPassFailure();
  }
  if (loss.empty()) {
    emitOptionError(graph) << "graph-minimize: option 'loss' is required: "
                              "it names the tensor to minimize";
    return signalPassFailure();
  }
  TensorNameResolver byName(graph, "graph-minimize");
  auto lossValues = byName.resolve({loss.getValue()}, "loss");
  if (failed(lossValues))
    return signalPassFailure();
  Value lossValue = lossValues->front();
  Location loc = lossValue.getDefiningOp()->getLoc();

  // The variables: var-list, or every variable but the global step.
  NodeOp globalStepNode;
  if (!globalStep.empty()) {
    globalStepNode = byName.lookupNode(globalStep);
    if (!globalStepNode && createGlobalStep) {
      auto created =
          cleave::graph::createGlobalStep(graph, loc, globalStep, initName,
                                          "graph-minimize");
      if (failed(created))
        return signalPassFailure();
      globalStepNode = *created;
    }
    if (!globalStepNode || !isVariableNode(globalStepNode)) {
      graph.emitError("graph-minimize: option 'global-step' names '")
          << globalStep.getValue() << "', which is no variable of the graph";
      return signalPassFailure();
    }
  }
  SmallVector<NodeOp> variables;
  if (!varList.empty()) {
    for (StringRef name : varList) {
      NodeOp node = byName.lookupNode(name);
      if (!node || !isVariableNode(node)) {
        graph.emitError("graph-minimize: option 'var-list' names '")
            << name << "', which is no variable of the graph";
        return signalPassFailure();
      }
      variables.push_back(node);
    }
  } else {
    for (auto node : body.getOps<NodeOp>())
      if (isVariableNode(node) && node != globalStepNode)
        variables.push_back(node);
  }
  if (variables.empty()) {
    graph.emitError("No variables to optimize.");
    return signalPassFailure();
  }

  // CrossShardOptimizer: the loss and gradients of one replica, summed.
  ReplicatedLoss replicated;
  bool allReduce = crossReplica || numShards > 0;
  if (crossReplica && numShards > 0) {
    graph.emitError("graph-minimize: options 'cross-replica' (a replicated "
                    "loss) and 'num-shards' (a shard's step, to be "
                    "replicated) exclude each other");
    return signalPassFailure();
  }
  if (numProcesses < 1) {
    graph.emitError("graph-minimize: option 'num-processes' must be "
                    "positive, got ")
        << numProcesses.getValue();
    return signalPassFailure();
  }
  if (decaySteps < 0) {
    graph.emitError("graph-minimize: option 'decay-steps' must be 0 or "
                    "more, got ")
        << decaySteps.getValue();
    return signalPassFailure();
  }
  if (decaySteps > 0 && allReduce) {
    graph.emitError("graph-minimize: the learning rate's exponential decay "
                    "(decay-steps) in a replicated step is not supported yet");
    return signalPassFailure();
  }
  if (numShards < 0) {
    graph.emitError("graph-minimize: option 'num-shards' must be positive, "
                    "got ")
        << numShards.getValue();
    return signalPassFailure();
  }
  if (allReduce) {
    if (numShards > 0) {
      replicated.numReplicas = numShards;
    } else {
      auto found = findReplicatedLoss(body, lossValue);
      if (failed(found))
        return signalPassFailure();
      replicated = *found;
    }
    if (crossReplicaReduction == "mean") {
      NodeAdder adder(graph, loc, "graph-minimize");
      adder.getBuilder().setInsertionPointAfter(lossValue.getDefiningOp());
      auto lossNode = lossValue.getDefiningOp<NodeOp>();
      auto scale =
          adder.addScalar(lossNode.getName().str() + "/cross_replica_scale",
                          1.0 / double(replicated.numReplicas * numProcesses),
                          getElementTypeOf(lossValue));
      if (failed(scale))
        return signalPassFailure();
      auto scaled =
          adder.add("Mul", lossNode.getName().str() + "/cross_replica_mean",
                    {lossValue, scale->getOutputs()[0]}, {});
      if (failed(scaled))
        return signalPassFailure();
      if (replicated.tag)
        for (NodeOp n : {*scale, *scaled})
          setTFAttr(n, kTPUReplicateAttr, replicated.tag);
      lossValue = scaled->getOutputs()[0];
    } else if (crossReplicaReduction != "sum") {
      graph.emitError("graph-minimize: option 'cross-replica-reduction' must "
                      "be mean or sum, got '")
          << crossReplicaReduction.getValue() << "'";
      return signalPassFailure();
    }
  }

  // compute_gradients(), gated per op. A variable a replicated computation
  // reads through a TPUReplicatedInput is differentiated there.
  SmallVector<Value> xs;
  for (NodeOp v : variables)
    xs.push_back(replicated.tag
                     ? getReplicatedValue(v.getOutputs()[0], replicated)
                     : v.getOutputs()[0]);
  GradientOptions options;
  options.gateGradients = true;
  options.aggregationMethod = aggregationMethod;
  options.colocateGradientsWithOps = colocateGradientsWithOps;
  // compute_gradients keeps a gather's IndexedSlices for the sparse
  // updates (CrossShardOptimizer's all-reduce makes them dense).
  options.keepSparseResults = !allReduce;
  SmallVector<std::optional<IndexedSlices>> sparse;
  FailureOr<SmallVector<Value>> grads =
      addGradients(graph, lossValue, xs, {}, {}, options, &sparse);
  if (failed(grads))
    return signalPassFailure();
  SmallVector<VariableGradient> varsWithGrads;
  for (auto [i, v] : llvm::enumerate(variables))
    if (Value g = (*grads)[i])
      varsWithGrads.push_back(
          {v, g, i < sparse.size() ? sparse[i] : std::nullopt});
  if (varsWithGrads.empty()) {
    emitNoGradients(graph, variables, lossValue);
    return signalPassFailure();
  }
  NodeAdder adder(graph, loc, "graph-minimize");
  if (allReduce) {
    // cross_replica_sum over the default group: every replica.
    SmallVector<int32_t> everyone;
    for (int64_t r = 0; r < replicated.numReplicas; ++r)
      everyone.push_back(r);
    MLIRContext *ctx = &getContext();
    Type i32 = adder.getBuilder().getI32Type();
    SmallVector<int64_t> shape{1, replicated.numReplicas};
    auto groupValue = TensorAttr::get(
        ctx, i32, ShapeAttr::get(ctx, shape, false, {}),
        DenseElementsAttr::get(RankedTensorType::get(shape, i32),
                               ArrayRef<int32_t>(everyone)),
        everyone.size(), {});
    // combine-all-reduce: the step's gradients of one dtype and known
    // shapes summed as one flat buffer (XLA's all-reduce combiner), so
    // that a sum across processes is one collective per step.
    llvm::SmallDenseSet<size_t> combined;
    if (combineAllReduce && !replicated.tag) {
      FailureOr<llvm::SmallDenseSet<size_t>> done =
          combineGradientSums(adder, varsWithGrads, groupValue);
      if (failed(done))
        return signalPassFailure();
      combined = std::move(*done);
    }
    for (auto [index, vg] : llvm::enumerate(varsWithGrads)) {
      Value &g = vg.gradient;
      auto producer = g.getDefiningOp<NodeOp>();
      if (combined.contains(index) ||
          (replicated.tag &&
           (!producer ||
            getStringTFAttr(producer, kTPUReplicateAttr) != replicated.tag)))
        continue;
      auto group = adder.add(
          "Const", "CrossReplicaSum/group_assignment", {}, {},
          {adder.getBuilder().getNamedAttr("dtype", TypeAttr::get(i32)),
           adder.getBuilder().getNamedAttr("value", groupValue)});
      if (failed(group))
        return signalPassFailure();
      auto sum = adder.add("CrossReplicaSum", "CrossReplicaSum",
                           {g, group->getOutputs()[0]}, {});
      if (failed(sum))
        return signalPassFailure();
      if (replicated.tag)
        for (NodeOp n : {*group, *sum})
          setTFAttr(n, kTPUReplicateAttr, replicated.tag);
      g = sum->getOutputs()[0];
    }
  }
  OptimizerConfig config{optimizer, learningRate, momentum, useNesterov,
                         beta1,     beta2,        epsilon};
  config.decaySteps = decaySteps;
  config.decayRate = decayRate;
  config.staircase = staircase;
  if (failed(applyGradients(adder, config, varsWithGrads, globalStepNode,
                            initName)))
    return signalPassFailure();
}
