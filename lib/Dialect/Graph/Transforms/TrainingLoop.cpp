//===- TrainingLoop.cpp - TPUEstimator's device step ----------------------===//
//
// graph-training-loop: from the graph model_fn builds for one mode, the
// graph TPUEstimator builds around it on the device: the feature and label
// placeholders become `InfeedQueue/dequeue` (InfeedDequeueTuple) inside a
// computation replicated over num-replicas replicas (graph-replicate with
// the loss or the outfed tensors as its outputs), fed on the host by one
// `InfeedQueue/enqueue/<r>` (InfeedEnqueueTuple, device_ordinal r) per
// replica from placeholders `input_pipeline_task0/shard_<r>/<name>`; the
// tensors for metric_fn or predictions leave through OutfeedEnqueueTuple,
// dequeued on the host by one OutfeedDequeueTuple per replica.
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Transforms/ShapeRefinement.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHTRAININGLOOPPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {
class GraphTrainingLoopPass
    : public graph::impl::GraphTrainingLoopPassBase<GraphTrainingLoopPass> {
public:
  using GraphTrainingLoopPassBase::GraphTrainingLoopPassBase;
  void runOnOperation() override;

private:
  LogicalResult checkOptions(GraphOp graph);
  FailureOr<SmallVector<NodeOp>> resolveInputs(GraphOp graph);
  LogicalResult buildInfeed(GraphOp graph,
                            MutableArrayRef<NodeOp> placeholders);
  LogicalResult buildOutfeed(GraphOp graph);
};
} // namespace

static ArrayAttr typeList(Builder &b, ArrayRef<Type> types) {
  SmallVector<Attribute> list;
  for (Type t : types)
    list.push_back(TypeAttr::get(t));
  return b.getArrayAttr(list);
}

static ArrayAttr shapeList(Builder &b, ArrayRef<SmallVector<int64_t>> shapes) {
  SmallVector<Attribute> list;
  for (const auto &dims : shapes)
    list.push_back(ShapeAttr::get(b.getContext(), dims));
  return b.getArrayAttr(list);
}

LogicalResult GraphTrainingLoopPass::checkOptions(GraphOp graph) {
  if (!llvm::is_contained({"train", "eval", "predict"}, StringRef(mode)))
    return graph.emitError("graph-training-loop: option 'mode' must be "
                           "train, eval or predict, got '")
           << mode.getValue() << "'";
  if (inputs.empty())
    return graph.emitError("graph-training-loop: option 'inputs' names the "
                           "feature and label placeholders the infeed "
                           "replaces");
  if (numReplicas < 1)
    return graph.emitError("graph-training-loop: option 'num-replicas' must "
                           "be at least 1, got ")
           << numReplicas.getValue();
  if (batchSize < 1)
    return graph.emitError("graph-training-loop: option 'batch-size' (each "
                           "replica's params['batch_size']) must be at least "
                           "1, got ")
           << batchSize.getValue();
  if (mode != "predict" && loss.empty())
    return graph.emitError("graph-training-loop: option 'loss' is required "
                           "in mode ")
           << mode.getValue();
  if (mode == "predict" && outfeed.empty())
    return graph.emitError("graph-training-loop: mode predict outfeeds the "
                           "predictions: option 'outfeed' is required");
  return success();
}

FailureOr<SmallVector<NodeOp>>
GraphTrainingLoopPass::resolveInputs(GraphOp graph) {
  TensorNameResolver byName(graph, "graph-training-loop");
  SmallVector<NodeOp> placeholders;
  for (StringRef name : inputs) {
    NodeOp node = byName.lookupNode(name);
    if (!node || node.getOpType() != "Placeholder")
      return graph.emitError("graph-training-loop: option 'inputs' names '")
                 << name << "', which is no Placeholder of the graph",
             failure();
    // TPUEstimator needs static shapes on the device; the batch dimension
    // is params['batch_size'].
    auto shape = dyn_cast_or_null<ShapeAttr>(node.getTFAttr("shape"));
    bool known = shape && !shape.getUnknownRank() && !shape.getDims().empty();
    for (int64_t d : known ? shape.getDims().drop_front() : ArrayRef<int64_t>())
      known &= d >= 0;
    if (!known)
      return nodeError(node)
                 << "The "
                 << (llvm::is_contained(labels, name) ? "labels" : "features")
                 << " to the model returned by input_fn must have static "
                    "shape. Tensor: "
                 << name
                 << " (its shape must be known but for the batch "
                    "dimension)",
             failure();
    int64_t batch = shape.getDims().front();
    if (batch >= 0 && batch != batchSize)
      return nodeError(node)
                 << "graph-training-loop: placeholder '" << name
                 << "' has batch dimension " << batch
                 << ", but each replica's batch is " << batchSize.getValue(),
             failure();
    placeholders.push_back(node);
  }
  return placeholders;
}

LogicalResult
GraphTrainingLoopPass::buildInfeed(GraphOp graph,
                                   MutableArrayRef<NodeOp> placeholders) {
  NodeAdder adder(graph, placeholders.front().getLoc(), "graph-training-loop");
  OpBuilder &b = adder.getBuilder();
  SmallVector<Type> dtypes;
  SmallVector<SmallVector<int64_t>> shapes;
  for (NodeOp &node : placeholders) {
    dtypes.push_back(getElementTypeOf(node.getOutputs()[0]));
    auto dims = cast<ShapeAttr>(node.getTFAttr("shape")).getDims();
    SmallVector<int64_t> shape(dims.begin(), dims.end());
    shape.front() = batchSize;
    shapes.push_back(shape);
  }
  NamedAttribute dtypesAttr = b.getNamedAttr("dtypes", typeList(b, dtypes));
  NamedAttribute shapesAttr = b.getNamedAttr("shapes", shapeList(b, shapes));
  b.setInsertionPointAfter(placeholders.back());
  FailureOr<NodeOp> dequeue =
      adder.add("InfeedDequeueTuple", "InfeedQueue/dequeue", {}, {},
                {dtypesAttr, shapesAttr});
  if (failed(dequeue))
    return failure();
  // The host's side: each replica's batch, enqueued by device ordinal.
  for (int64_t r = 0; r < numReplicas; ++r) {
    SmallVector<Value> values;
    for (auto [i, node] : llvm::enumerate(placeholders)) {
      FailureOr<NodeOp> input = adder.add(
          "Placeholder",
          ("input_pipeline_task0/shard_" + llvm::Twine(r) + "/" +
           node.getName())
              .str(),
          {}, {},
          {b.getNamedAttr("dtype", TypeAttr::get(dtypes[i])),
           b.getNamedAttr("shape", ShapeAttr::get(b.getContext(), shapes[i]))});
      if (failed(input))
        return failure();
      values.push_back(input->getOutputs()[0]);
    }
    FailureOr<NodeOp> enqueue =
        adder.add("InfeedEnqueueTuple",
                  ("InfeedQueue/enqueue/" + llvm::Twine(r)).str(), values, {},
                  {dtypesAttr, shapesAttr,
                   b.getNamedAttr("device_ordinal", b.getI64IntegerAttr(r))});
    if (failed(enqueue))
      return failure();
  }
  for (auto [i, node] : llvm::enumerate(placeholders)) {
    node.getOutputs()[0].replaceAllUsesWith(dequeue->getOutputs()[i]);
    node.getControl().replaceAllUsesWith(dequeue->getControl());
    node.erase();
  }
  return success();
}

LogicalResult GraphTrainingLoopPass::buildOutfeed(GraphOp graph) {
  TensorNameResolver byName(graph, "graph-training-loop");
  auto values = byName.resolve(outfeed, "outfeed");
  if (failed(values))
    return failure();
  StringAttr cluster;
  SmallVector<Type> dtypes;
  SmallVector<SmallVector<int64_t>> shapes;
  for (auto [name, value] : llvm::zip(outfeed, *values)) {
    auto producer = value.getDefiningOp<NodeOp>();
    if (auto tag =
            dyn_cast_or_null<StringAttr>(producer.getTFAttr(kTPUReplicateAttr)))
      cluster = tag;
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type && type.getRank() == 0)
      return nodeError(producer)
                 << "All tensors outfed from TPU should preserve batch size "
                    "dimension, but got scalar "
                 << name,
             failure();
    if (!type || !type.hasStaticShape())
      return nodeError(producer)
                 << "The tensor with key (" << name
                 << ") in TPUEstimatorSpec.predictions has dynamic shape "
                    "(should be static). Tensor: "
                 << name,
             failure();
    dtypes.push_back(type.getElementType());
    shapes.emplace_back(type.getShape().begin(), type.getShape().end());
  }
  if (!cluster)
    return graph.emitError("graph-training-loop: no outfed tensor is "
                           "computed on the device");
  NodeAdder adder(graph, graph.getLoc(), "graph-training-loop");
  OpBuilder &b = adder.getBuilder();
  NamedAttribute dtypesAttr = b.getNamedAttr("dtypes", typeList(b, dtypes));
  FailureOr<NodeOp> enqueue = adder.add(
      "OutfeedEnqueueTuple", "OutfeedEnqueueTuple", *values, {}, {dtypesAttr});
  if (failed(enqueue))
    return failure();
  setTFAttr(*enqueue, kTPUReplicateAttr, cluster);
  for (int64_t r = 0; r < numReplicas; ++r)
    if (failed(adder.add(
            "OutfeedDequeueTuple", "OutfeedDequeueTuple", {}, {},
            {dtypesAttr, b.getNamedAttr("shapes", shapeList(b, shapes)),
             b.getNamedAttr("device_ordinal", b.getI64IntegerAttr(r))})))
      return failure();
  return success();
}

void GraphTrainingLoopPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto graphs = module.getOps<GraphOp>();
  if (graphs.empty()) {
    module.emitError("graph-training-loop: the module has no graph.graph");
    return signalPassFailure();
  }
  GraphOp graph = *graphs.begin();
  if (failed(checkOptions(graph)))
    return signalPassFailure();
  auto placeholders = resolveInputs(graph);
  if (failed(placeholders) || failed(buildInfeed(graph, *placeholders)) ||
      failed(inferGraphShapes(graph)))
    return signalPassFailure();

  // A tensor named by an input's placeholder is now the dequeue's.
  for (std::string &name : outfeed)
    for (auto [i, input] : llvm::enumerate(inputs))
      if (name == input || name == input + ":0")
        name = "InfeedQueue/dequeue:" + std::to_string(i);

  // The computation: what the loss (and the outfed tensors) need.
  GraphReplicatePassOptions replicate;
  std::vector<std::string> outputs;
  if (!loss.empty())
    outputs.push_back(loss);
  outputs.insert(outputs.end(), outfeed.begin(), outfeed.end());
  replicate.outputs = outputs;
  replicate.numReplicas = numReplicas;
  OpPassManager pipeline("builtin.module");
  pipeline.addPass(createGraphReplicatePass(replicate));
  if (failed(runPipeline(pipeline, module)))
    return signalPassFailure();
  if (!outfeed.empty() && failed(buildOutfeed(graph)))
    return signalPassFailure();
}
