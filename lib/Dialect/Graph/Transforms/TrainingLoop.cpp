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
#include "mlir/IR/IRMapping.h"
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
  FailureOr<NodeOp> buildOutfeedEnqueue(GraphOp graph);
  LogicalResult buildOutfeedDequeues(GraphOp graph, TypeRange outfed);
  FailureOr<std::string> buildDeviceLoop(GraphOp graph, NodeOp outfeed);
  FailureOr<std::string> buildPredictLoop(GraphOp graph, NodeOp outfeed,
                                          Value stopping);
};

/// A step of the device loop: the nodes the roots need, up to the
/// variables and placeholders, the values they read from outside (the
/// loop's captured values) and the control inputs from outside.
struct LoopStep {
  SmallVector<NodeOp> nodes;
  llvm::SetVector<Value> captured;
  SmallVector<Value> outsideControls;
};
} // namespace

static LoopStep collectStep(Block &body, ArrayRef<Operation *> roots) {
  llvm::DenseSet<Operation *> inStep;
  SmallVector<Operation *> work(roots.begin(), roots.end());
  while (!work.empty()) {
    auto node = dyn_cast_or_null<NodeOp>(work.pop_back_val());
    if (!node || node->getBlock() != &body || inStep.contains(node))
      continue;
    StringRef op = node.getOpType();
    if (op == "VarHandleOp" || op == "VariableV2" || op == "Variable" ||
        op == "Placeholder" || op == "PlaceholderWithDefault")
      continue;
    inStep.insert(node);
    for (Value input : node->getOperands())
      work.push_back(input.getDefiningOp());
  }
  LoopStep step;
  for (auto node : body.getOps<NodeOp>()) {
    if (!inStep.contains(node))
      continue;
    step.nodes.push_back(node);
    for (Value input : node->getOperands()) {
      if (inStep.contains(input.getDefiningOp()))
        continue;
      if (isa<ControlType>(input.getType()))
        step.outsideControls.push_back(input);
      else
        step.captured.insert(input);
    }
  }
  return step;
}

/// Erases the step's nodes that nothing outside the loop reads any more.
static void eraseMovedNodes(MutableArrayRef<NodeOp> step) {
  // (Passes add nodes out of dependency order: until none is left.)
  for (bool erased = true; erased;) {
    erased = false;
    for (NodeOp &node : step)
      if (node && node->use_empty()) {
        node.erase();
        node = nullptr;
        erased = true;
      }
  }
}

/// A node in one of the loop's functions; errors at `loc`.
static FailureOr<NodeOp> addFunctionNode(OpBuilder &builder, Location loc,
                                         StringRef op, StringRef name,
                                         ValueRange inputs, ValueRange controls,
                                         ArrayRef<NamedAttribute> attrs = {}) {
  std::string error;
  auto node = createRegisteredNode(builder, loc, op, name, inputs, controls,
                                   attrs, "", error);
  if (failed(node))
    emitError(loc) << "graph-training-loop: " << error;
  return node;
}

static FuncAttr getFuncAttr(FuncOp f) {
  MLIRContext *ctx = f.getContext();
  return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                       DictionaryAttr::get(ctx));
}

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

FailureOr<NodeOp> GraphTrainingLoopPass::buildOutfeedEnqueue(GraphOp graph) {
  TensorNameResolver byName(graph, "graph-training-loop");
  auto values = byName.resolve(outfeed, "outfeed");
  if (failed(values))
    return failure();
  SmallVector<Type> dtypes;
  for (auto [name, value] : llvm::zip(outfeed, *values)) {
    auto producer = value.getDefiningOp<NodeOp>();
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
  }
  NodeAdder adder(graph, graph.getLoc(), "graph-training-loop");
  return adder.add("OutfeedEnqueueTuple", "OutfeedEnqueueTuple", *values, {},
                   {adder.getBuilder().getNamedAttr(
                       "dtypes", typeList(adder.getBuilder(), dtypes))});
}

/// One OutfeedDequeueTuple per replica for tensors of the `outfed` types.
LogicalResult GraphTrainingLoopPass::buildOutfeedDequeues(GraphOp graph,
                                                          TypeRange outfed) {
  SmallVector<Type> dtypes;
  SmallVector<SmallVector<int64_t>> shapes;
  for (Type t : outfed) {
    auto type = cast<RankedTensorType>(t);
    dtypes.push_back(type.getElementType());
    shapes.emplace_back(type.getShape().begin(), type.getShape().end());
  }
  NodeAdder adder(graph, graph.getLoc(), "graph-training-loop");
  OpBuilder &b = adder.getBuilder();
  for (int64_t r = 0; r < numReplicas; ++r)
    if (failed(adder.add(
            "OutfeedDequeueTuple", "OutfeedDequeueTuple", {}, {},
            {b.getNamedAttr("dtypes", typeList(b, dtypes)),
             b.getNamedAttr("shapes", shapeList(b, shapes)),
             b.getNamedAttr("device_ordinal", b.getI64IntegerAttr(r))})))
      return failure();
  return success();
}

/// The device loop of training_loop.repeat(iterations_per_loop, step,
/// [initial loss]): the step (everything the loss, the train op and the
/// outfeed need, up to the variables) moves into the body of a While over
/// (i, n, loss, captured...), n read from the resource variable
/// `tpu_estimator/iterations_per_loop`; the body returns the step's loss
/// in training and the running sum in evaluation, and counts i once the
/// update and the outfeed ran. Returns the name of the loop's loss.
FailureOr<std::string>
GraphTrainingLoopPass::buildDeviceLoop(GraphOp graph, NodeOp outfeedEnqueue) {
  MLIRContext *ctx = &getContext();
  Block &body = graph.getBody().front();
  TensorNameResolver byName(graph, "graph-training-loop");
  auto lossValues = byName.resolve({loss}, "loss");
  if (failed(lossValues))
    return failure();
  Value lossValue = (*lossValues)[0];
  auto lossType = dyn_cast<RankedTensorType>(lossValue.getType());
  if (!lossType || lossType.getRank() != 0)
    return emitError(lossValue.getLoc())
               << "graph-training-loop: the loss '" << loss
               << "' must be a scalar, got " << lossValue.getType(),
           failure();
  SmallVector<Operation *> roots{lossValue.getDefiningOp()};
  NodeOp trainNode;
  if (mode == "train") {
    if (trainOp.empty())
      return graph.emitError("graph-training-loop: the device loop runs the "
                             "training step: option 'train-op' is required "
                             "in mode train (or device-loop=false)"),
             failure();
    trainNode = byName.lookupNode(trainOp);
    if (!trainNode)
      return graph.emitError("graph-training-loop: option 'train-op' names '")
                 << trainOp.getValue() << "', which is no node of the graph",
             failure();
    roots.push_back(trainNode);
  }
  if (outfeedEnqueue)
    roots.push_back(outfeedEnqueue);

  // The step: what the roots need, up to the variables.
  LoopStep collected = collectStep(body, roots);
  SmallVector<NodeOp> &step = collected.nodes;
  llvm::SetVector<Value> &captured = collected.captured;

  // The loop's functions over (i, n, loss, captured...).
  Location loc = lossValue.getLoc();
  Type i32 = IntegerType::get(ctx, 32);
  Type lossElement = lossType.getElementType();
  SmallVector<Type> argTypes{RankedTensorType::get({}, i32),
                             RankedTensorType::get({}, i32), lossType};
  for (Value v : captured)
    argTypes.push_back(v.getType());
  ModuleOp module = getOperation();
  auto cond = buildLibraryFunction(
      module, "while_cond", argTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        auto less = addFunctionNode(builder, loc, "Less", "Less",
                                    {args[0], args[1]}, {});
        if (failed(less))
          return failure();
        return SmallVector<Value>{less->getOutputs()[0]};
      },
      loc);
  if (failed(cond))
    return failure();
  auto loopBody = buildLibraryFunction(
      module, "while_body", argTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        IRMapping mapping;
        for (auto [i, v] : llvm::enumerate(captured))
          mapping.map(v, args[3 + i]);
        cloneNodesIntoFunction(builder, step, mapping);
        Value stepLoss = mapping.lookup(lossValue);
        SmallVector<Value> ran;
        for (Operation *root : roots)
          ran.push_back(mapping.lookup(cast<NodeOp>(root).getControl()));
        auto one = addFunctionNode(
            builder, loc, "Const", "add/y", {}, {},
            {builder.getNamedAttr("dtype", TypeAttr::get(i32)),
             builder.getNamedAttr("value", getScalarTensor(i32, 1))});
        if (failed(one))
          return failure();
        auto next = addFunctionNode(builder, loc, "AddV2", "add",
                                    {args[0], one->getOutputs()[0]}, ran);
        if (failed(next))
          return failure();
        Value carried = stepLoss;
        if (mode == "eval") {
          auto sum = addFunctionNode(builder, loc, "AddV2", "add_1",
                                     {args[2], stepLoss}, {});
          if (failed(sum))
            return failure();
          carried = sum->getOutputs()[0];
        }
        SmallVector<Value> results{next->getOutputs()[0], args[1], carried};
        llvm::append_range(results, args.drop_front(3));
        return results;
      },
      loc);
  if (failed(loopBody))
    return failure();

  // The loop where the loss was; the step's nodes that nothing outside
  // reads go.
  NodeAdder adder(graph, loc, "graph-training-loop");
  OpBuilder &b = adder.getBuilder();
  auto counter = adder.add(
      "VarHandleOp", "tpu_estimator/iterations_per_loop", {}, {},
      {b.getNamedAttr("dtype", TypeAttr::get(i32)),
       b.getNamedAttr("shape", ShapeAttr::get(ctx, ArrayRef<int64_t>{})),
       b.getNamedAttr("shared_name",
                      b.getStringAttr("tpu_estimator/iterations_per_loop"))},
      {}, /*exactName=*/true);
  if (failed(counter))
    return failure();
  auto zero = adder.addScalar(
      "tpu_estimator/iterations_per_loop/Initializer/zeros", 0, i32);
  if (failed(zero) ||
      failed(adder.add("AssignVariableOp",
                       "tpu_estimator/iterations_per_loop/Assign",
                       {counter->getOutputs()[0], zero->getOutputs()[0]}, {})))
    return failure();
  auto iterations = adder.add("ReadVariableOp", "while/iterations",
                              {counter->getOutputs()[0]}, {},
                              {b.getNamedAttr("dtype", TypeAttr::get(i32))});
  auto start = adder.addScalar("while/start", 0, i32);
  auto initialLoss = adder.addScalar("while/initial_loss", 0, lossElement);
  if (failed(iterations) || failed(start) || failed(initialLoss))
    return failure();
  SmallVector<Value> inputs{start->getOutputs()[0], iterations->getOutputs()[0],
                            initialLoss->getOutputs()[0]};
  llvm::append_range(inputs, captured);
  auto loop = adder.add(
      "While", "while", inputs, collected.outsideControls,
      {b.getNamedAttr("cond", getFuncAttr(*cond)),
       b.getNamedAttr("body", getFuncAttr(*loopBody)),
       b.getNamedAttr("parallel_iterations", b.getI64IntegerAttr(1))});
  if (failed(loop))
    return failure();
  eraseMovedNodes(step);
  return (loop->getName() + ":2").str();
}

/// Prediction's loop (TPUEstimator's _predict_on_tpu_system): a While over
/// (stop, captured...) while not stop; each iteration dequeues a batch
/// with its `stopping` signal, outfeeds the predictions and the signal,
/// and carries the signal on (_StopSignals.as_scalar_stopping_signal: any
/// row of the batch's signal), so the loop ends after the batch the host
/// flags, whatever the number of batches. Returns the loop's output.
FailureOr<std::string>
GraphTrainingLoopPass::buildPredictLoop(GraphOp graph, NodeOp outfeedEnqueue,
                                        Value stopping) {
  MLIRContext *ctx = &getContext();
  Location loc = outfeedEnqueue.getLoc();
  Block &body = graph.getBody().front();
  LoopStep collected = collectStep(body, {outfeedEnqueue});
  Type i1 = IntegerType::get(ctx, 1), i32 = IntegerType::get(ctx, 32);
  Type flag = RankedTensorType::get({}, i1);
  SmallVector<Type> argTypes{flag};
  for (Value v : collected.captured)
    argTypes.push_back(v.getType());
  ModuleOp module = getOperation();
  auto cond = buildLibraryFunction(
      module, "while_cond", argTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        auto goOn = addFunctionNode(builder, loc, "LogicalNot", "LogicalNot",
                                    {args[0]}, {});
        if (failed(goOn))
          return failure();
        return SmallVector<Value>{goOn->getOutputs()[0]};
      },
      loc);
  if (failed(cond))
    return failure();
  auto loopBody = buildLibraryFunction(
      module, "while_body", argTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        IRMapping mapping;
        for (auto [i, v] : llvm::enumerate(collected.captured))
          mapping.map(v, args[1 + i]);
        cloneNodesIntoFunction(builder, collected.nodes, mapping);
        auto axis = addFunctionNode(
            builder, loc, "Const", "stopping_signal/axis", {}, {},
            {builder.getNamedAttr("dtype", TypeAttr::get(i32)),
             builder.getNamedAttr("value", getScalarTensor(i32, 0))});
        if (failed(axis))
          return failure();
        // The [batch, 1] signal reduced to a scalar once the batch's
        // predictions are outfed.
        Value signal = mapping.lookup(stopping);
        for (StringRef name : {"stopping_signal/rows", "stopping_signal"}) {
          auto any = addFunctionNode(
              builder, loc, "Any", name, {signal, axis->getOutputs()[0]},
              {mapping.lookup(outfeedEnqueue.getControl())},
              {builder.getNamedAttr("Tidx", TypeAttr::get(i32)),
               builder.getNamedAttr("keep_dims", builder.getBoolAttr(false))});
          if (failed(any))
            return failure();
          signal = any->getOutputs()[0];
        }
        SmallVector<Value> results{signal};
        llvm::append_range(results, args.drop_front(1));
        return results;
      },
      loc);
  if (failed(loopBody))
    return failure();
  NodeAdder adder(graph, loc, "graph-training-loop");
  OpBuilder &b = adder.getBuilder();
  auto start = adder.addScalar("while/start", 0, i1);
  if (failed(start))
    return failure();
  SmallVector<Value> inputs{start->getOutputs()[0]};
  llvm::append_range(inputs, collected.captured);
  auto loop = adder.add(
      "While", "while", inputs, collected.outsideControls,
      {b.getNamedAttr("cond", getFuncAttr(*cond)),
       b.getNamedAttr("body", getFuncAttr(*loopBody)),
       b.getNamedAttr("parallel_iterations", b.getI64IntegerAttr(1))});
  if (failed(loop))
    return failure();
  eraseMovedNodes(collected.nodes);
  return (loop->getName() + ":0").str();
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
  if (failed(placeholders))
    return signalPassFailure();
  // Prediction's loop: each batch comes with its stopping signal
  // (_StopSignals: [batch, 1], true in the batch after the last), which
  // is outfed with the predictions.
  bool predictLoop = deviceLoop && mode == "predict";
  if (predictLoop) {
    NodeAdder adder(graph, placeholders->back().getLoc(),
                    "graph-training-loop");
    OpBuilder &b = adder.getBuilder();
    auto stopping = adder.add(
        "Placeholder", "signals/stopping", {}, {},
        {b.getNamedAttr("dtype", TypeAttr::get(b.getI1Type())),
         b.getNamedAttr(
             "shape",
             ShapeAttr::get(b.getContext(), ArrayRef<int64_t>{batchSize, 1}))});
    if (failed(stopping))
      return signalPassFailure();
    placeholders->push_back(*stopping);
  }
  if (failed(buildInfeed(graph, *placeholders)) ||
      failed(inferGraphShapes(graph)))
    return signalPassFailure();

  // A tensor named by an input's placeholder is now the dequeue's.
  for (std::string &name : outfeed)
    for (auto [i, input] : llvm::enumerate(inputs))
      if (name == input || name == input + ":0")
        name = "InfeedQueue/dequeue:" + std::to_string(i);
  if (predictLoop)
    outfeed.push_back("InfeedQueue/dequeue:" +
                      std::to_string(placeholders->size() - 1));

  // The computation: the device loop (training and evaluation), or one
  // step (prediction): what the loss and the outfed tensors need.
  bool loop = deviceLoop && mode != "predict";
  std::vector<std::string> outputs;
  NodeOp enqueue;
  // What the host dequeues (the enqueue itself moves into the loop).
  SmallVector<Type> outfed;
  if (loop) {
    if (!outfeed.empty()) {
      auto built = buildOutfeedEnqueue(graph);
      if (failed(built))
        return signalPassFailure();
      enqueue = *built;
      llvm::append_range(outfed, enqueue.getDataInputs().getTypes());
    }
    auto loopLoss = buildDeviceLoop(graph, enqueue);
    if (failed(loopLoss))
      return signalPassFailure();
    outputs.push_back(*loopLoss);
  } else if (predictLoop) {
    auto built = buildOutfeedEnqueue(graph);
    if (failed(built))
      return signalPassFailure();
    enqueue = *built;
    llvm::append_range(outfed, enqueue.getDataInputs().getTypes());
    Value stopping = enqueue.getDataInputs().back();
    auto loopStop = buildPredictLoop(graph, enqueue, stopping);
    if (failed(loopStop))
      return signalPassFailure();
    outputs.push_back(*loopStop);
  } else {
    if (!loss.empty())
      outputs.push_back(loss);
    outputs.insert(outputs.end(), outfeed.begin(), outfeed.end());
  }
  GraphReplicatePassOptions replicate;
  replicate.outputs = outputs;
  replicate.numReplicas = numReplicas;
  OpPassManager pipeline("builtin.module");
  pipeline.addPass(createGraphReplicatePass(replicate));
  if (failed(runPipeline(pipeline, module)))
    return signalPassFailure();
  if (!loop && !predictLoop && !outfeed.empty()) {
    // The step's outfeed, in the computation after its values.
    auto built = buildOutfeedEnqueue(graph);
    if (failed(built))
      return signalPassFailure();
    enqueue = *built;
    for (Value v : enqueue.getDataInputs())
      if (auto tag = v.getDefiningOp<NodeOp>().getTFAttr(kTPUReplicateAttr))
        setTFAttr(enqueue, kTPUReplicateAttr, tag);
    if (!enqueue.getTFAttr(kTPUReplicateAttr)) {
      graph.emitError("graph-training-loop: no outfed tensor is computed on "
                      "the device");
      return signalPassFailure();
    }
    llvm::append_range(outfed, enqueue.getDataInputs().getTypes());
  }
  if (!outfed.empty() && failed(buildOutfeedDequeues(graph, outfed)))
    return signalPassFailure();
}
