//===- Towers.cpp - graph-towers: replicate_model_fn as a pass ------------===//
//
// tf.contrib.estimator.replicate_model_fn over the graph of one tower: the
// inputs split on the consolidation device, the tower copied once per
// device sharing the variables, each tower's loss scaled and
// differentiated, the gradients summed on each variable's device and
// applied once (TowerOptimizer), the towers' losses summed and their
// predictions concatenated. Names, devices and scopes are those the seed's
// Python builds: `split_inputs/split`, `tower_1/...`, `averaged_loss`,
// `train_op_placeholder`, `gradient_aggregating/AddN`, `loss`.
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ShapeRefinement.h"
#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <thread>

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHTOWERSPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

/// Where the seed consolidates: inputs are split and losses, predictions
/// summed there ('/CPU:0' unless the only device is one GPU).
static constexpr llvm::StringLiteral kConsolidationDevice = "/device:CPU:0";

/// The device a device setter gives a node: `device` with the node's own
/// fields on top.
static std::string placedDevice(StringRef device, NodeOp node) {
  std::optional<DeviceSpec> spec = DeviceSpec::parse(device);
  std::optional<DeviceSpec> own =
      DeviceSpec::parse(node.getDevice().value_or(""));
  if (!spec || !own)
    return device.str();
  spec->mergeFrom(*own);
  return spec->str();
}

static void setDevice(NodeOp node, StringRef device) {
  node.setDeviceAttr(StringAttr::get(node.getContext(), device));
}

/// The nodes `node` is colocated with (`_class` entries "loc:@<name>").
static SmallVector<StringRef> getColocationNames(NodeOp node) {
  SmallVector<StringRef> names;
  if (auto classes = dyn_cast_or_null<ArrayAttr>(node.getTFAttr("_class")))
    for (Attribute entry : classes)
      if (auto text = dyn_cast<StringAttr>(entry))
        if (text.getValue().starts_with("loc:@"))
          names.push_back(text.getValue().drop_front(5));
  return names;
}

/// How Python prints a graph tensor in TF 1.x messages:
/// Tensor("Mean:0", shape=(2, ?), dtype=float32).
static std::string describeTensor(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto node = value.getDefiningOp<NodeOp>();
  unsigned port = cast<OpResult>(value).getResultNumber();
  os << "Tensor(\"" << (node ? node.getName() : StringRef("?")) << ":" << port
     << "\", shape=";
  auto ranked = dyn_cast<RankedTensorType>(value.getType());
  if (!ranked) {
    os << "<unknown>";
  } else {
    os << "(";
    for (auto [i, d] : llvm::enumerate(ranked.getShape())) {
      if (i)
        os << ", ";
      if (ShapedType::isDynamic(d))
        os << "?";
      else
        os << d;
    }
    os << (ranked.getRank() == 1 ? ",)" : ")");
  }
  std::string dtype = getPythonDTypeName(getElementTypeOf(value));
  os << ", dtype=" << StringRef(dtype).drop_front(dtype.rfind('.') + 1) << ")";
  return text;
}

namespace {
class GraphTowersPass
    : public graph::impl::GraphTowersPassBase<GraphTowersPass> {
public:
  using GraphTowersPassBase::GraphTowersPassBase;
  void runOnOperation() override;

private:
  /// Checks the options and resolves the tensors they name.
  LogicalResult readOptions(TensorNameResolver &byName);
  /// The nodes each tower has its own copy of: everything the outputs read
  /// but the inputs (and what computes them), placeholders, variables and
  /// the nodes colocated with them.
  LogicalResult findTowerNodes();
  /// Places the variables and what is colocated with them.
  void placeVariables();
  /// Splits each input into one shard per tower; returns the shards.
  FailureOr<SmallVector<SmallVector<Value>>> splitInputs(NodeAdder &adder);
  /// The tower copies: tower 0 is the graph's own nodes, reading shard 0.
  void buildTowers(NodeAdder &adder, ArrayRef<SmallVector<Value>> shards);
  /// TowerOptimizer.minimize in every tower, the update in the last.
  LogicalResult minimizeInTowers(NodeAdder &adder);
  /// _compute_sum_on_device: the towers' gradients of `variable` summed
  /// on its device, AddN of dense ones, the values and indices of
  /// IndexedSlices (`sparse`, one per tower when they are) concatenated.
  FailureOr<VariableGradient> sumOnDevice(NodeAdder &adder, NodeOp variable,
                                          ArrayRef<Value> perTower,
                                          ArrayRef<IndexedSlices> sparse);
  /// `loss` / towers in tower `t` (for reductions other than sum).
  FailureOr<Value> scaleLoss(NodeAdder &adder, Value loss, unsigned t);
  /// Sum (AddN) or concatenation of one value of every tower on the
  /// consolidation device.
  LogicalResult combineAcrossTowers(NodeAdder &adder);
  /// _reduce_metric_variables: the towers' metric variables summed into
  /// the first tower's after every tower's update, the others zeroed.
  LogicalResult reduceMetricVariables(NodeAdder &adder);
  /// A read of `variable`'s value after `after` (TensorFlow's reads of a
  /// ref variable alias its buffer; Cleave's copy it when they run).
  FailureOr<Value> readAfter(NodeAdder &adder, NodeOp variable,
                             ValueRange after);

  /// The device of tower `t`'s copy of `node`.
  std::string deviceInTower(NodeOp node, unsigned t);
  /// The copy of `value` in tower `t`.
  Value inTower(Value value, unsigned t) {
    return t == 0 ? value : mappings[t - 1].lookupOrDefault(value);
  }
  /// Gives the nodes added since `before` the device `device` (merged with
  /// what they have, as a device setter does), except colocated ones.
  void placeNewNodes(const DenseSet<Operation *> &before, StringRef device);
  DenseSet<Operation *> currentNodes();

  GraphOp graph;
  const TensorNameResolver *resolver = nullptr;
  SmallVector<std::string> towerDevices;
  SmallVector<std::string> towerScopes; ///< "", "tower_1/", ...
  Value lossValue;
  SmallVector<Value> minimizeLosses, inputValues, predictionValues;
  SmallVector<std::string> predictionKeys;
  /// Eval metrics: their value tensors and update ops; the variables only
  /// they read, which every tower has its own copy of.
  SmallVector<Value> metricValueTensors;
  SmallVector<NodeOp> metricUpdateNodes;
  SetVector<Operation *> metricVariables;
  /// The parameter-server devices and the round-robin's next turn.
  SmallVector<std::string> psDevices;
  unsigned nextPsDevice = 0;
  /// The device of tower t's copy of a metric variable (t >= 1).
  DenseMap<std::pair<unsigned, Operation *>, std::string> copyDevices;
  /// The global step: not a model variable. It is incremented when the
  /// options name it.
  NodeOp globalStepNode, stepToIncrement;
  bool graphHasOwnUpdate = false;
  SetVector<Operation *> towerNodes;
  /// Nodes that read a split input, directly or not: their shapes change.
  DenseSet<Operation *> readsBatch;
  SmallVector<IRMapping> mappings; ///< towers 1.. from tower 0
};
} // namespace

/// An optimizer's update of a variable (graph-minimize's, TensorFlow's),
/// dense or sparse.
static bool isUpdateOp(StringRef opType) {
  return opType.starts_with("Apply") || opType.starts_with("ResourceApply") ||
         opType.starts_with("SparseApply") ||
         opType.starts_with("ResourceSparseApply") ||
         llvm::is_contained({"ScatterSub", "ScatterAdd", "ResourceScatterAdd",
                             "ResourceScatterSub"},
                            opType);
}

LogicalResult GraphTowersPass::readOptions(TensorNameResolver &byName) {
  auto fail = [&](const Twine &message) {
    graph.emitError("graph-towers: ") << message;
    return failure();
  };
  if (!llvm::is_contained({"train", "eval", "predict"}, StringRef(mode)))
    return fail("option 'mode' must be train, eval or predict, got '" + mode +
                "'");
  if (lossReduction == "none")
    return graph.emitError("Tower losses need to be reduced in some way, yet "
                           "none reduction is specified."),
           failure();
  if (!llvm::is_contained(
          {"sum", "mean", "sum-over-batch-size", "sum-by-nonzero-weights"},
          StringRef(lossReduction)))
    return fail("option 'loss-reduction' must be sum, mean, "
                "sum-over-batch-size or sum-by-nonzero-weights, got '" +
                lossReduction + "'");
  if (!llvm::is_contained(
          {"shared-local-parameter-server", "shared-round-robin"},
          StringRef(variableDistribution)))
    return fail("option 'variable-distribution' must be "
                "shared-local-parameter-server or shared-round-robin, got '" +
                variableDistribution + "'");
  if (!llvm::is_contained({"sgd", "momentum", "adam"}, StringRef(optimizer)))
    return fail("option 'optimizer' must be sgd, momentum or adam, got '" +
                optimizer + "'");

  // The devices: /device:CPU:0 .. /device:CPU:<n-1>.
  int64_t available = numDevices;
  if (available == 0)
    available = std::max(1u, std::thread::hardware_concurrency());
  if (available < 0)
    return fail("option 'num-devices' must not be negative, got " +
                Twine(available));
  std::string known;
  for (int64_t d = 0; d < available && d < 4; ++d)
    known += (d ? ", /device:CPU:" : "/device:CPU:") + std::to_string(d);
  if (available > 4)
    known += ", ... /device:CPU:" + std::to_string(available - 1);
  if (devices.empty()) {
    for (int64_t d = 0; d < available; ++d)
      towerDevices.push_back("/device:CPU:" + std::to_string(d));
  }
  for (StringRef text : devices) {
    std::optional<DeviceSpec> spec = DeviceSpec::parse(text);
    if (!spec)
      return fail("option 'devices' names '" + text +
                  "', which is not a device name (/device:CPU:<n>)");
    if (spec->job || spec->replica || spec->task || !spec->deviceType ||
        *spec->deviceType != "CPU" || !spec->deviceIndex ||
        *spec->deviceIndex >= available)
      return fail("option 'devices' names '" + text +
                  "', which is not a device of this machine; its devices "
                  "are " +
                  known + " (option 'num-devices')");
    towerDevices.push_back(spec->str());
  }
  unsigned towers = towerDevices.size();
  for (unsigned t = 0; t < towers; ++t)
    towerScopes.push_back(t == 0 ? "" : "tower_" + std::to_string(t));

  // The tensors.
  if (mode != "predict") {
    if (loss.empty())
      return fail("option 'loss' names the tower's loss, which " + mode +
                  " mode needs");
    auto found = byName.resolve({loss.getValue()}, "loss");
    if (failed(found))
      return failure();
    lossValue = found->front();
    auto ranked = dyn_cast<RankedTensorType>(lossValue.getType());
    if (ranked && ranked.hasStaticShape() && ranked.getNumElements() != 1)
      return nodeError(lossValue.getDefiningOp<NodeOp>())
                 << "Loss must be scalar, given: " << describeTensor(lossValue),
             failure();
  }
  if (mode == "train") {
    SmallVector<std::string> calls(minimize.begin(), minimize.end());
    if (calls.empty())
      calls.push_back(loss);
    auto found = byName.resolve(calls, "minimize");
    if (failed(found))
      return failure();
    minimizeLosses = *found;
  } else if (!minimize.empty()) {
    return fail("option 'minimize' is for train mode");
  }
  // Predictions are "key=tensor" (the EstimatorSpec's dict) or "tensor",
  // keyed by its node's name.
  SmallVector<std::string> predictionTensors;
  for (StringRef entry : this->predictions) {
    auto [key, tensor] = entry.split('=');
    if (tensor.empty())
      tensor = key;
    predictionTensors.push_back(tensor.str());
    predictionKeys.push_back(key == tensor ? "" : key.str());
  }
  auto predictions = byName.resolve(predictionTensors, "predictions");
  if (failed(predictions))
    return failure();
  predictionValues = *predictions;
  for (auto [key, value] : llvm::zip(predictionKeys, predictionValues))
    if (key.empty())
      key = value.getDefiningOp<NodeOp>().getName().str();
  if (mode == "predict" && predictionValues.empty())
    return fail("option 'predictions' names what predict mode concatenates");
  if (metricValues.size() != metricUpdates.size())
    return fail("options 'metric-values' and 'metric-updates' name " +
                Twine(metricValues.size()) + " and " +
                Twine(metricUpdates.size()) +
                " tensors: each metric has a value and an update op");
  if (!metricValues.empty() && mode != "eval")
    return fail("options 'metric-values' and 'metric-updates' are for eval "
                "mode");
  auto values = byName.resolve(
      SmallVector<std::string>(metricValues.begin(), metricValues.end()),
      "metric-values");
  if (failed(values))
    return failure();
  metricValueTensors = *values;
  for (StringRef name : metricUpdates) {
    NodeOp update = byName.lookupNode(name);
    if (!update)
      return fail("option 'metric-updates' names '" + name +
                  "', which is no node of the graph");
    metricUpdateNodes.push_back(update);
  }
  if (!globalStep.empty()) {
    globalStepNode = byName.lookupNode(globalStep);
    if (!globalStepNode && createGlobalStep) {
      auto created = cleave::graph::createGlobalStep(
          graph, graph.getLoc(), globalStep, initName, "graph-towers");
      if (failed(created))
        return failure();
      globalStepNode = *created;
    }
    if (!globalStepNode || !isVariableNode(globalStepNode))
      return fail("option 'global-step' names '" + globalStep +
                  "', which is no variable of the graph");
    stepToIncrement = globalStepNode;
  } else if (NodeOp named = byName.lookupNode("global_step");
             named && isVariableNode(named)) {
    // Not a model variable either way: the Estimator creates it outside
    // the model_fn (training_util.get_global_step finds it by this name).
    globalStepNode = named;
  }

  // A graph that brings its own update: the seed's TowerOptimizer check.
  for (auto node : graph.getBody().front().getOps<NodeOp>()) {
    if (!isUpdateOp(node.getOpType()))
      continue;
    graphHasOwnUpdate = true;
    if (mode == "train" && towers > 1)
      return nodeError(node)
                 << "Please wrap optimizers with TowerOptimizer in order to "
                    "use replicate_model_fn with multiple `devices`. (The "
                    "graph updates the variables itself; give graph-towers "
                    "the graph without its update and the optimizer as "
                    "options.)",
             failure();
  }

  auto inputs = byName.resolve(
      SmallVector<std::string>(this->inputs.begin(), this->inputs.end()),
      "inputs");
  if (failed(inputs))
    return failure();
  inputValues = *inputs;
  return success();
}

LogicalResult GraphTowersPass::findTowerNodes() {
  Block &body = graph.getBody().front();
  SmallVector<Value> outputs;
  if (lossValue)
    outputs.push_back(lossValue);
  llvm::append_range(outputs, minimizeLosses);
  llvm::append_range(outputs, predictionValues);
  SmallVector<Value> modelOutputs = outputs;
  llvm::append_range(outputs, metricValueTensors);
  for (NodeOp update : metricUpdateNodes)
    outputs.push_back(update.getControl());

  // Default inputs: the non-scalar placeholders the outputs read.
  auto forEachAncestor = [](ArrayRef<Operation *> roots,
                            function_ref<bool(NodeOp)> visit) {
    SmallVector<Operation *> stack(roots.begin(), roots.end());
    DenseSet<Operation *> seen(roots.begin(), roots.end());
    while (!stack.empty()) {
      auto node = dyn_cast_or_null<NodeOp>(stack.pop_back_val());
      if (!node || !visit(node))
        continue;
      for (Value input : node->getOperands())
        if (Operation *def = input.getDefiningOp();
            def && seen.insert(def).second)
          stack.push_back(def);
    }
  };
  SmallVector<Operation *> outputNodes;
  for (Value v : outputs)
    outputNodes.push_back(v.getDefiningOp());
  if (inputValues.empty()) {
    forEachAncestor(outputNodes, [&](NodeOp node) {
      if (node.getOpType() != "Placeholder" || node.getOutputs().empty())
        return true;
      auto ranked = dyn_cast<RankedTensorType>(node.getOutputs()[0].getType());
      if (!(ranked && ranked.getRank() == 0))
        inputValues.push_back(node.getOutputs()[0]);
      return true;
    });
    llvm::sort(inputValues, [](Value a, Value b) {
      return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
    });
  }
  unsigned towers = towerDevices.size();
  if (towers > 1 && inputValues.empty())
    return graph.emitError("graph-towers: the tower reads no batch to split; "
                           "name its batch-major inputs with option 'inputs'"),
           failure();

  // What computes the inputs stays out of the towers.
  DenseSet<Operation *> inputSide;
  SmallVector<Operation *> inputNodes;
  for (Value v : inputValues)
    inputNodes.push_back(v.getDefiningOp());
  forEachAncestor(inputNodes, [&](NodeOp node) {
    inputSide.insert(node);
    return true;
  });
  // Nodes that read a split input, directly or not.
  for (Operation &op : body)
    for (Value input : op.getOperands())
      if (llvm::is_contained(inputValues, input) ||
          readsBatch.contains(input.getDefiningOp()))
        readsBatch.insert(&op);
  // (Graph regions need not be ordered: iterate to a fixed point.)
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : body)
      if (!readsBatch.contains(&op))
        for (Value input : op.getOperands())
          if (readsBatch.contains(input.getDefiningOp())) {
            readsBatch.insert(&op);
            changed = true;
            break;
          }
  }

  // Metric variables: what only the metrics read. tf.metrics makes them
  // anew in every tower (tf.Variable, not get_variable).
  if (!metricUpdateNodes.empty()) {
    DenseSet<Operation *> modelAncestors;
    SmallVector<Operation *> modelNodes;
    for (Value v : modelOutputs)
      modelNodes.push_back(v.getDefiningOp());
    forEachAncestor(modelNodes, [&](NodeOp node) {
      modelAncestors.insert(node);
      return true;
    });
    SmallVector<Operation *> metricNodes;
    for (Value v : metricValueTensors)
      metricNodes.push_back(v.getDefiningOp());
    for (NodeOp update : metricUpdateNodes)
      metricNodes.push_back(update);
    SmallVector<Operation *> found;
    forEachAncestor(metricNodes, [&](NodeOp node) {
      if (isVariableNode(node) && node != globalStepNode &&
          !modelAncestors.contains(node))
        found.push_back(node);
      return true;
    });
    // In the order they were made (METRIC_VARIABLES' order).
    llvm::sort(found, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    metricVariables.insert(found.begin(), found.end());
  }
  DenseSet<StringRef> variableNames, metricVariableNames;
  for (auto node : body.getOps<NodeOp>())
    if (isVariableNode(node))
      (metricVariables.contains(node) ? metricVariableNames : variableNames)
          .insert(node.getName());
  auto isColocatedWithVariable = [&](NodeOp node) {
    return llvm::any_of(getColocationNames(node), [&](StringRef name) {
      return variableNames.contains(name);
    });
  };
  // A metric variable's initializer and read come with it.
  for (auto node : body.getOps<NodeOp>())
    if (llvm::any_of(getColocationNames(node), [&](StringRef name) {
          return metricVariableNames.contains(name);
        }))
      outputNodes.push_back(node);
  forEachAncestor(outputNodes, [&](NodeOp node) {
    bool shared = inputSide.contains(node) ||
                  (isVariableNode(node) && !metricVariables.contains(node)) ||
                  node.getOpType() == "Placeholder" ||
                  node.getOpType() == "PlaceholderWithDefault" ||
                  (isColocatedWithVariable(node) && !readsBatch.contains(node));
    if (shared)
      return false;
    towerNodes.insert(node);
    return true;
  });
  // A node outside the towers reading a tower's value would see only the
  // first tower's shard of the batch.
  for (auto node : body.getOps<NodeOp>()) {
    if (towers == 1 || towerNodes.contains(node) || inputSide.contains(node))
      continue;
    for (Value input : node.getDataInputs()) {
      auto producer = input.getDefiningOp<NodeOp>();
      if (!producer || !towerNodes.contains(producer) ||
          !readsBatch.contains(producer))
        continue;
      return nodeError(node)
                 << "graph-towers: reads '" << producer.getName()
                 << "', which the towers compute from their shards of the "
                    "batch, but is not part of the towers (they are what "
                 << (mode == "predict" ? "the predictions read"
                                       : "the losses and predictions read")
                 << "); name it among the predictions or leave it out of "
                    "the graph",
             failure();
    }
  }
  // In block order, so copies come out as the graph lists them.
  SmallVector<Operation *> ordered(towerNodes.begin(), towerNodes.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  towerNodes = SetVector<Operation *>(ordered.begin(), ordered.end());
  return success();
}

void GraphTowersPass::placeVariables() {
  // _local_device_setter: variables on the parameter-server devices, in
  // turn (_RoundRobinStrategy), what is colocated with them alongside.
  psDevices.assign({kConsolidationDevice.str()});
  if (variableDistribution == "shared-round-robin")
    psDevices.assign(towerDevices.begin(), towerDevices.end());
  Block &body = graph.getBody().front();
  llvm::StringMap<std::string> variableDevices;
  for (auto node : body.getOps<NodeOp>()) {
    if (!isVariableNode(node) || node == globalStepNode)
      continue;
    std::string device =
        placedDevice(psDevices[nextPsDevice++ % psDevices.size()], node);
    setDevice(node, device);
    variableDevices[node.getName()] = device;
  }
  for (auto node : body.getOps<NodeOp>()) {
    if (isVariableNode(node) || towerNodes.contains(node))
      continue;
    for (StringRef name : getColocationNames(node))
      if (auto it = variableDevices.find(name); it != variableDevices.end()) {
        setDevice(node, it->second);
        break;
      }
  }
}

FailureOr<SmallVector<SmallVector<Value>>>
GraphTowersPass::splitInputs(NodeAdder &adder) {
  unsigned towers = towerDevices.size();
  SmallVector<SmallVector<Value>> shards(towers);
  OpBuilder &b = adder.getBuilder();
  for (Value input : inputValues) {
    auto node = input.getDefiningOp<NodeOp>();
    auto ranked = dyn_cast<RankedTensorType>(input.getType());
    if (ranked && ranked.getRank() == 0)
      return nodeError(node)
                 << "graph-towers: the towers split their inputs along "
                    "dimension 0, but '"
                 << node.getName() << "' is a scalar",
             failure();
    // ensure_divisible_by_shards, on what the shape says statically.
    if (ranked && !ranked.isDynamicDim(0) && ranked.getDimSize(0) % towers)
      return nodeError(node) << "Batch size " << ranked.getDimSize(0)
                             << " needs to be divisible by the number of "
                                "GPUs, which is "
                             << towers << ".",
             failure();
    std::string name = adder.unique("split_inputs/split");
    auto axis = adder.addScalar(name + "/split_dim", 0, b.getI32Type());
    if (failed(axis))
      return failure();
    auto split = adder.add(
        "Split", name, {axis->getOutputs()[0], input}, {},
        {b.getNamedAttr("num_split", b.getI64IntegerAttr(towers))}, {},
        /*exactName=*/true);
    if (failed(split))
      return failure();
    for (NodeOp n : {*axis, *split})
      setDevice(n, kConsolidationDevice);
    for (unsigned t = 0; t < towers; ++t)
      shards[t].push_back(split->getOutputs()[t]);
  }
  return shards;
}

std::string GraphTowersPass::deviceInTower(NodeOp node, unsigned t) {
  // A tower's own (metric) variable: on a parameter-server device.
  if (isVariableNode(node))
    return t == 0 ? node.getDevice().value_or("").str()
                  : copyDevices.lookup({t, node});
  // Made under colocate_with a shared node (an embedding lookup's gather
  // with its variable) or a variable: that node's device, not the tower's.
  for (StringRef name : getColocationNames(node)) {
    NodeOp target = resolver->lookupNode(name);
    if (target && (!towerNodes.contains(target) || isVariableNode(target)))
      return deviceInTower(target, towerNodes.contains(target) ? t : 0);
  }
  return placedDevice(towerDevices[t], node);
}

void GraphTowersPass::buildTowers(NodeAdder &adder,
                                  ArrayRef<SmallVector<Value>> shards) {
  unsigned towers = towerDevices.size();
  SmallVector<NodeOp> originals;
  for (Operation *op : towerNodes)
    originals.push_back(cast<NodeOp>(op));
  DenseSet<StringRef> towerNames;
  for (NodeOp node : originals)
    towerNames.insert(node.getName());
  MLIRContext *ctx = &getContext();

  for (unsigned t = 1; t < towers; ++t) {
    towerScopes[t] = adder.unique(towerScopes[t]) + "/";
    // The device setter places each tower's variables in turn.
    for (NodeOp original : originals)
      if (isVariableNode(original))
        copyDevices[{t, original}] = placedDevice(
            psDevices[nextPsDevice++ % psDevices.size()], original);
    IRMapping &mapping = mappings.emplace_back();
    for (auto [input, shard] : llvm::zip(inputValues, shards[t]))
      mapping.map(input, shard);
    cloneNodes(adder.getBuilder(), originals, mapping);
    for (NodeOp original : originals) {
      auto copy = mapping.lookup(original.getControl()).getDefiningOp<NodeOp>();
      copy.setNameAttr(
          StringAttr::get(ctx, towerScopes[t] + original.getName().str()));
      setDevice(copy, deviceInTower(original, t));
      // A v1 loop's copy is a loop of its own: its frame is named in the
      // tower's scope, as tf.while_loop names it there.
      if (auto frame =
              dyn_cast_or_null<StringAttr>(copy.getTFAttr("frame_name")))
        setTFAttr(copy, "frame_name",
                  StringAttr::get(ctx, towerScopes[t] + frame.getValue()));
      // Colocation with a node of the tower means with its copy.
      if (auto classes =
              dyn_cast_or_null<ArrayAttr>(copy.getTFAttr("_class"))) {
        SmallVector<Attribute> renamed;
        for (Attribute entry : classes) {
          auto text = dyn_cast<StringAttr>(entry);
          if (text && text.getValue().starts_with("loc:@") &&
              towerNames.contains(text.getValue().drop_front(5)))
            entry = StringAttr::get(ctx, "loc:@" + towerScopes[t] +
                                             text.getValue().drop_front(5));
          renamed.push_back(entry);
        }
        setTFAttr(copy, "_class", ArrayAttr::get(ctx, renamed));
      }
    }
  }
  // A group of a tower node's effects (the local variables' initializer)
  // groups every tower's copy of it.
  for (NodeOp original : originals)
    for (Operation *user :
         llvm::make_early_inc_range(original.getControl().getUsers())) {
      auto group = dyn_cast<NodeOp>(user);
      if (!group || towerNodes.contains(group) || group.getOpType() != "NoOp")
        continue;
      SmallVector<Value> operands(group->getOperands());
      for (IRMapping &mapping : mappings)
        operands.push_back(mapping.lookup(original.getControl()));
      group->setOperands(operands);
    }
  // Tower 0 is the graph's own nodes, on the first device, reading shard 0.
  for (NodeOp node : originals) {
    setDevice(node, deviceInTower(node, 0));
    if (towers > 1)
      for (auto [input, shard] : llvm::zip(inputValues, shards[0]))
        node->replaceUsesOfWith(input, shard);
  }
  adder.refreshNames();
}

DenseSet<Operation *> GraphTowersPass::currentNodes() {
  DenseSet<Operation *> nodes;
  for (Operation &op : graph.getBody().front())
    nodes.insert(&op);
  return nodes;
}

void GraphTowersPass::placeNewNodes(const DenseSet<Operation *> &before,
                                    StringRef device) {
  // Nodes made under colocate_with escape the device setter (TensorFlow
  // clears the device functions there): they take their colocated node's
  // device (placed first: it comes earlier in the block).
  llvm::StringMap<NodeOp> byName;
  for (auto node : graph.getBody().front().getOps<NodeOp>()) {
    byName[node.getName()] = node;
    if (before.contains(node))
      continue;
    SmallVector<StringRef> colocated = getColocationNames(node);
    if (colocated.empty()) {
      setDevice(node, placedDevice(device, node));
    } else if (!node.getDevice()) {
      if (NodeOp target = byName.lookup(colocated.front()))
        if (std::optional<StringRef> targetDevice = target.getDevice())
          setDevice(node, *targetDevice);
    }
  }
}

FailureOr<Value> GraphTowersPass::scaleLoss(NodeAdder &adder, Value loss,
                                            unsigned t) {
  // _scale_loss: math_ops.div(loss, 1.0 * towers, name='averaged_loss').
  if (lossReduction == "sum" || towerDevices.size() == 1)
    return loss;
  std::string name = adder.unique(towerScopes[t] + "averaged_loss");
  auto divisor = adder.addScalar(name + "/y", double(towerDevices.size()),
                                 getElementTypeOf(loss));
  if (failed(divisor))
    return failure();
  auto quotient = adder.add("RealDiv", name, {loss, divisor->getOutputs()[0]},
                            {}, {}, {}, /*exactName=*/true);
  if (failed(quotient))
    return failure();
  for (NodeOp n : {*divisor, *quotient})
    setDevice(n, towerDevices[t]);
  return quotient->getOutputs()[0];
}

FailureOr<VariableGradient>
GraphTowersPass::sumOnDevice(NodeAdder &adder, NodeOp variable,
                             ArrayRef<Value> perTower,
                             ArrayRef<IndexedSlices> sparse) {
  StringRef device = variable.getDevice().value_or("");
  if (perTower.size() == 1)
    return VariableGradient{variable, perTower.front(),
                            sparse.empty() ? std::nullopt
                                           : std::optional(sparse.front())};
  OpBuilder &b = adder.getBuilder();
  if (sparse.size() == perTower.size()) {
    // array_ops.concat of the values, then of the indices, axis 0.
    SmallVector<Value> concatenated;
    for (bool ofIndices : {false, true}) {
      std::string name = adder.unique("gradient_aggregating/concat");
      auto axis = adder.addScalar(name + "/axis", 0, b.getI32Type());
      if (failed(axis))
        return failure();
      SmallVector<Value> parts;
      for (const IndexedSlices &s : sparse)
        parts.push_back(ofIndices ? s.indices : s.values);
      parts.push_back(axis->getOutputs()[0]);
      auto concat =
          adder.add("ConcatV2", name, parts, {}, {}, {}, /*exactName=*/true);
      if (failed(concat))
        return failure();
      for (NodeOp n : {*axis, *concat})
        setDevice(n, device);
      concatenated.push_back(concat->getOutputs()[0]);
    }
    return VariableGradient{variable, concatenated[0],
                            IndexedSlices{concatenated[0], concatenated[1],
                                          sparse.front().denseShape}};
  }
  // Dense, or (a tower whose gradient is dense) all made dense.
  SmallVector<Value> dense(perTower.begin(), perTower.end());
  for (Value &g : dense)
    for (const IndexedSlices &s : sparse)
      if (g == s.values) {
        auto made = densify(adder, "gradient_aggregating/", variable, s);
        if (failed(made))
          return failure();
        g = *made;
      }
  auto addN = adder.add("AddN", "gradient_aggregating/AddN", dense, {});
  if (failed(addN))
    return failure();
  setDevice(*addN, device);
  return VariableGradient{variable, addN->getOutputs()[0], std::nullopt};
}

LogicalResult GraphTowersPass::minimizeInTowers(NodeAdder &adder) {
  unsigned towers = towerDevices.size();
  Block &body = graph.getBody().front();
  SmallVector<NodeOp> variables;
  for (auto node : body.getOps<NodeOp>())
    if (isVariableNode(node) && node != globalStepNode)
      variables.push_back(node);
  if (variables.empty())
    return graph.emitError("No variables to optimize."), failure();
  SmallVector<Value> xs;
  for (NodeOp v : variables)
    xs.push_back(v.getOutputs()[0]);
  GradientOptions options;
  options.gateGradients = true;
  options.aggregationMethod = aggregationMethod;
  options.colocateGradientsWithOps = colocateGradientsWithOps;
  options.keepSparseResults = true;
  OptimizerConfig config{optimizer, learningRate, momentum, useNesterov,
                         beta1,     beta2,        epsilon};

  // grads[call][tower][variable]: dense, or an IndexedSlices' values.
  SmallVector<SmallVector<SmallVector<Value>>> grads(minimizeLosses.size());
  SmallVector<SmallVector<SmallVector<std::optional<IndexedSlices>>>> slices(
      minimizeLosses.size());
  SmallVector<NodeOp> trainOps;
  for (unsigned t = 0; t < towers; ++t) {
    for (auto [call, towerLoss] : llvm::enumerate(minimizeLosses)) {
      // compute_gradients: of the scaled loss, in the tower's scope.
      DenseSet<Operation *> before = currentNodes();
      auto scaled = scaleLoss(adder, inTower(towerLoss, t), t);
      if (failed(scaled))
        return failure();
      options.scopeName = towerScopes[t] + "gradients";
      SmallVector<std::optional<IndexedSlices>> towerSlices;
      auto towerGrads =
          addGradients(graph, *scaled, xs, {}, {}, options, &towerSlices);
      if (failed(towerGrads))
        return failure();
      placeNewNodes(before, towerDevices[t]);
      adder.refreshNames();
      if (llvm::all_of(*towerGrads, [](Value g) { return !g; }))
        return emitNoGradients(graph, variables, towerLoss), failure();
      grads[call].push_back(*towerGrads);
      slices[call].push_back(towerSlices);
      if (t + 1 < towers) {
        // Every tower but the last: a placeholder train op after its
        // gradients.
        SmallVector<Value> controls;
        for (Value g : *towerGrads)
          if (g)
            controls.push_back(g.getDefiningOp<NodeOp>().getControl());
        auto placeholder = adder.add(
            "NoOp", towerScopes[t] + "train_op_placeholder", {}, controls);
        if (failed(placeholder))
          return failure();
        setDevice(*placeholder, towerDevices[t]);
        continue;
      }
      // The last tower: the gradients of all towers, summed on each
      // variable's device, applied in the first tower's scope.
      DenseSet<Operation *> beforeUpdate = currentNodes();
      SmallVector<VariableGradient> varsWithGrads;
      for (auto [i, v] : llvm::enumerate(variables)) {
        SmallVector<Value> perTower;
        SmallVector<IndexedSlices> sparse;
        for (auto [g, s] : llvm::zip(grads[call], slices[call])) {
          if (!g[i])
            continue;
          perTower.push_back(g[i]);
          if (i < s.size() && s[i])
            sparse.push_back(*s[i]);
        }
        if (perTower.empty())
          continue;
        auto sum = sumOnDevice(adder, v, perTower, sparse);
        if (failed(sum))
          return failure();
        varsWithGrads.push_back(*sum);
      }
      auto trainOp = applyGradients(
          adder, config, varsWithGrads,
          call + 1 == minimizeLosses.size() ? stepToIncrement : NodeOp(),
          initName);
      if (failed(trainOp))
        return failure();
      // Under the last tower's device setter, as the seed applies them.
      placeNewNodes(beforeUpdate, towerDevices[t]);
      trainOps.push_back(*trainOp);
    }
  }
  if (trainOps.size() > 1) {
    SmallVector<Value> controls;
    for (NodeOp op : trainOps)
      controls.push_back(op.getControl());
    // The model_fn's tf.group, under the last tower's device setter.
    auto group = adder.add("NoOp", "train_op", {}, controls);
    if (failed(group))
      return failure();
    setDevice(*group, towerDevices.back());
  }
  return success();
}

LogicalResult GraphTowersPass::combineAcrossTowers(NodeAdder &adder) {
  unsigned towers = towerDevices.size();
  if (towers == 1)
    return success();
  OpBuilder &b = adder.getBuilder();
  if (lossValue) {
    // _scale_tower_loss in each tower, then the sum named 'loss'.
    SmallVector<Value> losses;
    for (unsigned t = 0; t < towers; ++t) {
      auto scaled = scaleLoss(adder, inTower(lossValue, t), t);
      if (failed(scaled))
        return failure();
      losses.push_back(*scaled);
    }
    auto sum = adder.add("AddN", "loss", losses, {});
    if (failed(sum))
      return failure();
    setDevice(*sum, kConsolidationDevice);
  }
  if (mode != "predict")
    return success();
  // _concat_tensor_dicts: each prediction concatenated along dimension 0.
  for (auto [key, prediction] : llvm::zip(predictionKeys, predictionValues)) {
    SmallVector<Value> parts;
    for (unsigned t = 0; t < towers; ++t)
      parts.push_back(inTower(prediction, t));
    std::string name = adder.unique(key);
    auto axis = adder.addScalar(name + "/axis", 0, b.getI32Type());
    if (failed(axis))
      return failure();
    parts.push_back(axis->getOutputs()[0]);
    auto concat = adder.add("ConcatV2", name, parts, {}, {}, {}, true);
    if (failed(concat))
      return failure();
    for (NodeOp n : {*axis, *concat})
      setDevice(n, kConsolidationDevice);
  }
  return success();
}

FailureOr<Value> GraphTowersPass::readAfter(NodeAdder &adder, NodeOp variable,
                                            ValueRange after) {
  OpBuilder &b = adder.getBuilder();
  std::string name = variable.getName().str() + "/read";
  auto read =
      isResourceVariable(variable)
          ? adder.add(
                "ReadVariableOp", name, variable.getOutputs()[0], after,
                {b.getNamedAttr("dtype",
                                TypeAttr::get(getVariableValueType(variable)))},
                variable)
          : adder.add("Identity", name, variable.getOutputs()[0], after, {},
                      variable);
  if (failed(read))
    return failure();
  return read->getOutputs()[0];
}

LogicalResult GraphTowersPass::reduceMetricVariables(NodeAdder &adder) {
  unsigned towers = towerDevices.size();
  if (metricUpdateNodes.empty())
    return success();
  if (towers == 1)
    return success(
        succeeded(adder.add("NoOp", "no_eval_metric_reduction", {}, {})));
  // Under control_dependencies(every tower's update ops).
  SmallVector<Value> updates;
  for (unsigned t = 0; t < towers; ++t)
    for (NodeOp update : metricUpdateNodes)
      updates.push_back(inTower(update.getControl(), t));
  OpBuilder &b = adder.getBuilder();
  SmallVector<Value> zeroings;
  for (Operation *op : metricVariables) {
    auto variable = cast<NodeOp>(op);
    bool resource = isResourceVariable(variable);
    Type type = getVariableValueType(variable);
    SmallVector<NodeOp> replicas;
    SmallVector<Value> replicaValues;
    for (unsigned t = 1; t < towers; ++t) {
      auto replica =
          inTower(variable.getOutputs()[0], t).getDefiningOp<NodeOp>();
      auto value = readAfter(adder, replica, updates);
      if (failed(value))
        return failure();
      replicas.push_back(replica);
      replicaValues.push_back(*value);
    }
    auto sum = adder.add("AddN", "AddN", replicaValues, updates);
    if (failed(sum))
      return failure();
    Value handle = variable.getOutputs()[0];
    auto reduce =
        resource ? adder.add("AssignAddVariableOp", "AssignAddVariableOp",
                             {handle, sum->getOutputs()[0]}, {},
                             {b.getNamedAttr("dtype", TypeAttr::get(type))})
                 : adder.add("AssignAdd", "AssignAdd",
                             {handle, sum->getOutputs()[0]}, {});
    if (failed(reduce))
      return failure();
    for (auto [replica, value] : llvm::zip(replicas, replicaValues)) {
      // array_ops.zeros(shape(replica)), then assign, after the reduction.
      auto shape = adder.add("Shape", "Shape", value, reduce->getControl());
      if (failed(shape))
        return failure();
      std::string zerosName = adder.unique("zeros");
      auto zero = adder.addScalar(zerosName + "/Const", 0, type);
      if (failed(zero))
        return failure();
      auto zeros = adder.add("Fill", zerosName,
                             {shape->getOutputs()[0], zero->getOutputs()[0]},
                             {}, {}, {}, /*exactName=*/true);
      if (failed(zeros))
        return failure();
      auto assign =
          resource
              ? adder.add("AssignVariableOp", "AssignVariableOp",
                          {replica.getOutputs()[0], zeros->getOutputs()[0]},
                          reduce->getControl(),
                          {b.getNamedAttr("dtype", TypeAttr::get(type))})
              : adder.add("Assign", "Assign",
                          {replica.getOutputs()[0], zeros->getOutputs()[0]},
                          reduce->getControl());
      if (failed(assign))
        return failure();
      zeroings.push_back(assign->getControl());
    }
  }
  return success(succeeded(adder.add("NoOp", "group_deps", {}, zeroings)));
}

void GraphTowersPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(validateNodeDefs(module)))
    return signalPassFailure();
  auto graphs = module.getOps<GraphOp>();
  if (graphs.empty()) {
    module.emitError("graph-towers: the module has no graph.graph");
    return signalPassFailure();
  }
  graph = *graphs.begin();
  // The checks (a scalar loss, a batch the towers divide) read shapes.
  if (failed(inferGraphShapes(graph)))
    return signalPassFailure();
  TensorNameResolver byName(graph, "graph-towers");
  resolver = &byName;
  if (failed(readOptions(byName)) || failed(findTowerNodes()))
    return signalPassFailure();
  Location loc =
      lossValue ? lossValue.getLoc() : predictionValues.front().getLoc();
  NodeAdder adder(graph, loc, "graph-towers");
  placeVariables();
  SmallVector<SmallVector<Value>> shards;
  if (towerDevices.size() > 1) {
    auto split = splitInputs(adder);
    if (failed(split))
      return signalPassFailure();
    shards = std::move(*split);
  }
  // The shapes of what reads the batch change with the split: forget them
  // (and any recorded _output_shapes), then infer them again.
  for (auto node : graph.getBody().front().getOps<NodeOp>()) {
    if (towerDevices.size() == 1 || !readsBatch.contains(node))
      continue;
    setTFAttr(node, "_output_shapes", nullptr);
    for (Value output : node.getOutputs())
      if (auto type = dyn_cast<TensorType>(output.getType()))
        output.setType(UnrankedTensorType::get(type.getElementType()));
  }
  buildTowers(adder, shards);
  if (mode == "train" && !graphHasOwnUpdate && failed(minimizeInTowers(adder)))
    return signalPassFailure();
  if (failed(combineAcrossTowers(adder)) ||
      failed(reduceMetricVariables(adder)) || failed(inferGraphShapes(graph)))
    return signalPassFailure();
}
