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

static Type elementTypeOf(Value value) {
  Type t = value.getType();
  if (auto tensor = dyn_cast<TensorType>(t))
    t = tensor.getElementType();
  if (auto ref = dyn_cast<RefType>(t))
    t = ref.getElementType();
  return t;
}

static bool isVariable(NodeOp node) {
  return node.getOpType() == "VariableV2" || node.getOpType() == "Variable" ||
         node.getOpType() == "VarHandleOp";
}

static bool isResource(NodeOp variable) {
  return variable.getOpType() == "VarHandleOp";
}

/// The dtype of a variable's values (a VarHandleOp's `dtype`).
static Type valueTypeOf(NodeOp variable) {
  if (isResource(variable))
    if (auto dtype = dyn_cast_or_null<TypeAttr>(variable.getTFAttr("dtype")))
      return dtype.getValue();
  return elementTypeOf(variable.getOutputs()[0]);
}

namespace {
/// The replicated computation a cross-replica loss lies in.
struct ReplicatedLoss {
  StringAttr tag;
  int64_t numReplicas = 1;
};
} // namespace

static FailureOr<ReplicatedLoss> findReplicatedLoss(Block &body, Value loss) {
  auto lossNode = loss.getDefiningOp<NodeOp>();
  auto tag = lossNode ? dyn_cast_or_null<StringAttr>(
                            lossNode.getTFAttr(kTPUReplicateAttr))
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
class GraphMinimizePass
    : public graph::impl::GraphMinimizePassBase<GraphMinimizePass> {
public:
  using GraphMinimizePassBase::GraphMinimizePassBase;
  void runOnOperation() override;

private:
  /// Adds a registered node; `colocate` gives it that node's device and
  /// colocation class. Failure has been diagnosed.
  FailureOr<NodeOp> add(StringRef opType, StringRef name, ValueRange inputs,
                        ValueRange controls,
                        ArrayRef<NamedAttribute> attrs = {},
                        NodeOp colocate = {}, bool exactName = false);
  FailureOr<NodeOp> addScalar(StringRef name, double value, Type type,
                              NodeOp colocate = {}, ValueRange controls = {});
  /// A zero-initialized (or `initial`-initialized) variable like `like`,
  /// named `name`, with its initializer and read: TF's slot_creator /
  /// non-slot variable. A resource variable (VarHandleOp, AssignVariableOp,
  /// `<name>/Read/ReadVariableOp`) when `like` is one, else a ref variable
  /// (VariableV2, Assign, `<name>/read`). Returns the variable.
  FailureOr<NodeOp> addVariable(StringRef name, NodeOp like, Type type,
                                std::optional<double> initial);

  /// A variable's value as TensorFlow reads it.
  Value readOf(NodeOp variable) { return reads.lookup(variable); }

  std::optional<NameUniquer> names;
  std::optional<OpBuilder> builder;
  DenseMap<Operation *, Value> reads;
  /// Where new nodes point: the loss.
  LocationAttr loc;
  SmallVector<Value> initializers;
};
} // namespace

FailureOr<NodeOp> GraphMinimizePass::add(StringRef opType, StringRef name,
                                         ValueRange inputs, ValueRange controls,
                                         ArrayRef<NamedAttribute> attrs,
                                         NodeOp colocate, bool exactName) {
  std::string error;
  StringRef device = colocate ? colocate.getDevice().value_or("") : StringRef();
  FailureOr<NodeOp> node = createRegisteredNode(
      *builder, loc, opType, exactName ? name.str() : names->unique(name),
      inputs, controls, attrs, device, error);
  if (failed(node))
    return emitError(loc) << "graph-minimize: " << error, failure();
  if (colocate) {
    Attribute classes = colocate.getTFAttr("_class");
    if (!classes)
      classes = builder->getArrayAttr(
          builder->getStringAttr(("loc:@" + colocate.getName()).str()));
    setTFAttr(*node, "_class", classes);
  }
  return node;
}

FailureOr<NodeOp> GraphMinimizePass::addScalar(StringRef name, double value,
                                               Type type, NodeOp colocate,
                                               ValueRange controls) {
  auto tensorType = RankedTensorType::get({}, type);
  DenseElementsAttr dense;
  if (auto f = dyn_cast<FloatType>(type)) {
    APFloat v(value);
    bool lost;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    dense = DenseElementsAttr::get(tensorType, v);
  } else {
    dense = DenseElementsAttr::get(
        tensorType, APInt(type.getIntOrFloatBitWidth(), int64_t(value), true));
  }
  MLIRContext *ctx = &getContext();
  auto tensor = TensorAttr::get(ctx, type, ShapeAttr::get(ctx, {}, false, {}),
                                dense, 1, {});
  return add("Const", name, {}, controls,
             {builder->getNamedAttr("dtype", TypeAttr::get(type)),
              builder->getNamedAttr("value", tensor)},
             colocate);
}

FailureOr<NodeOp>
GraphMinimizePass::addVariable(StringRef name, NodeOp like, Type type,
                               std::optional<double> initial) {
  std::string base = names->unique(name);
  Attribute shape =
      initial ? Attribute(ShapeAttr::get(&getContext(), {}, false, {}))
              : like.getTFAttr("shape");
  if (!shape)
    return like.emitError() << "Node '" << like.getName()
                            << "': the variable has no 'shape' attr to "
                               "create its slots from",
           failure();
  bool resource = isResource(like);
  NamedAttrList attrs;
  attrs.set("dtype", TypeAttr::get(type));
  attrs.set("shape", shape);
  if (resource)
    attrs.set("shared_name", builder->getStringAttr(base));
  FailureOr<NodeOp> variable =
      add(resource ? "VarHandleOp" : "VariableV2", base, {}, {},
          attrs.getAttrs(), like, /*exactName=*/true);
  if (failed(variable))
    return failure();
  FailureOr<NodeOp> value;
  if (initial) {
    value = addScalar(base + "/initial_value", *initial, type, *variable);
  } else {
    // zeros of the variable's shape: Fill(shape, 0).
    auto dims = cast<ShapeAttr>(shape);
    if (dims.getUnknownRank() ||
        llvm::any_of(dims.getDims(), [](int64_t d) { return d < 0; }))
      return like.emitError() << "Node '" << like.getName()
                              << "': slot variables need a fully known shape",
             failure();
    auto tensorType = RankedTensorType::get(dims.getDims(), type);
    DenseElementsAttr zeros;
    if (auto f = dyn_cast<FloatType>(type))
      zeros = DenseElementsAttr::get(tensorType,
                                     APFloat::getZero(f.getFloatSemantics()));
    else
      zeros = DenseElementsAttr::get(tensorType,
                                     APInt(type.getIntOrFloatBitWidth(), 0));
    MLIRContext *ctx = &getContext();
    auto tensor = TensorAttr::get(ctx, type, dims, zeros, 1, {});
    value = add("Const", base + "/Initializer/zeros", {}, {},
                {builder->getNamedAttr("dtype", TypeAttr::get(type)),
                 builder->getNamedAttr("value", tensor)},
                *variable);
  }
  if (failed(value))
    return failure();
  Value handle = variable->getOutputs()[0];
  FailureOr<NodeOp> assign =
      resource ? add("AssignVariableOp", base + "/Assign",
                     {handle, value->getOutputs()[0]}, {},
                     {builder->getNamedAttr("dtype", TypeAttr::get(type))},
                     *variable)
               : add("Assign", base + "/Assign",
                     {handle, value->getOutputs()[0]}, {},
                     {builder->getNamedAttr("validate_shape",
                                            builder->getBoolAttr(true)),
                      builder->getNamedAttr("use_locking",
                                            builder->getBoolAttr(true))},
                     *variable);
  if (failed(assign))
    return failure();
  initializers.push_back(assign->getControl());
  FailureOr<NodeOp> read =
      resource ? add("ReadVariableOp", base + "/Read/ReadVariableOp", handle,
                     {}, {builder->getNamedAttr("dtype", TypeAttr::get(type))},
                     *variable)
               : add("Identity", base + "/read", handle, {}, {}, *variable);
  if (failed(read))
    return failure();
  reads[*variable] = read->getOutputs()[0];
  return variable;
}

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
    graph.emitError("graph-minimize: option 'optimizer' must be sgd, "
                    "momentum or adam, got '")
        << optimizer.getValue() << "'";
    return signalPassFailure();
  }
  if (loss.empty()) {
    graph.emitError("graph-minimize: option 'loss' names the tensor to "
                    "minimize");
    return signalPassFailure();
  }
  TensorNameResolver byName(graph, "graph-minimize");
  auto lossValues = byName.resolve({loss.getValue()}, "loss");
  if (failed(lossValues))
    return signalPassFailure();
  Value lossValue = lossValues->front();
  loc = lossValue.getDefiningOp()->getLoc();

  // The variables: var-list, or every variable but the global step.
  NodeOp globalStepNode;
  if (!globalStep.empty()) {
    globalStepNode = byName.lookupNode(globalStep);
    if (!globalStepNode || !isVariable(globalStepNode)) {
      graph.emitError("graph-minimize: option 'global-step' names '")
          << globalStep.getValue() << "', which is no variable of the graph";
      return signalPassFailure();
    }
  }
  SmallVector<NodeOp> variables;
  if (!varList.empty()) {
    for (StringRef name : varList) {
      NodeOp node = byName.lookupNode(name);
      if (!node || !isVariable(node)) {
        graph.emitError("graph-minimize: option 'var-list' names '")
            << name << "', which is no variable of the graph";
        return signalPassFailure();
      }
      variables.push_back(node);
    }
  } else {
    for (auto node : body.getOps<NodeOp>())
      if (isVariable(node) && node != globalStepNode)
        variables.push_back(node);
  }
  if (variables.empty()) {
    graph.emitError("No variables to optimize.");
    return signalPassFailure();
  }

  // CrossShardOptimizer: the loss and gradients of one replica, summed.
  ReplicatedLoss replicated;
  if (crossReplica) {
    auto found = findReplicatedLoss(body, lossValue);
    if (failed(found))
      return signalPassFailure();
    replicated = *found;
    if (crossReplicaReduction == "mean") {
      OpBuilder lb(lossValue.getContext());
      lb.setInsertionPointAfter(lossValue.getDefiningOp());
      builder.emplace(lb);
      names.emplace(body);
      auto lossNode = lossValue.getDefiningOp<NodeOp>();
      auto scale = addScalar(lossNode.getName().str() + "/cross_replica_scale",
                             1.0 / replicated.numReplicas,
                             elementTypeOf(lossValue));
      if (failed(scale))
        return signalPassFailure();
      auto scaled = add("Mul", lossNode.getName().str() + "/cross_replica_mean",
                        {lossValue, scale->getOutputs()[0]}, {});
      if (failed(scaled))
        return signalPassFailure();
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
    xs.push_back(crossReplica
                     ? getReplicatedValue(v.getOutputs()[0], replicated)
                     : v.getOutputs()[0]);
  GradientOptions options;
  options.gateGradients = true;
  options.aggregationMethod = aggregationMethod;
  options.colocateGradientsWithOps = colocateGradientsWithOps;
  FailureOr<SmallVector<Value>> grads =
      addGradients(graph, lossValue, xs, {}, {}, options);
  if (failed(grads))
    return signalPassFailure();
  SmallVector<std::pair<NodeOp, Value>> varsWithGrads;
  for (auto [v, g] : llvm::zip(variables, *grads))
    if (g)
      varsWithGrads.push_back({v, g});
  if (varsWithGrads.empty()) {
    std::string list;
    for (NodeOp v : variables)
      list += (list.empty() ? "" : ", ") + v.getName().str();
    graph.emitError("No gradients provided for any variable, check your "
                    "graph for ops that do not support gradients, between "
                    "variables [")
        << list << "] and loss " << lossValue.getDefiningOp<NodeOp>().getName()
        << ":0.";
    return signalPassFailure();
  }
  names.emplace(body);
  builder.emplace(OpBuilder::atBlockEnd(&body));
  if (crossReplica) {
    // cross_replica_sum over the default group: every replica.
    SmallVector<int32_t> everyone;
    for (int64_t r = 0; r < replicated.numReplicas; ++r)
      everyone.push_back(r);
    MLIRContext *ctx = &getContext();
    Type i32 = builder->getI32Type();
    SmallVector<int64_t> shape{1, replicated.numReplicas};
    auto groupValue = TensorAttr::get(
        ctx, i32, ShapeAttr::get(ctx, shape, false, {}),
        DenseElementsAttr::get(RankedTensorType::get(shape, i32),
                               ArrayRef<int32_t>(everyone)),
        everyone.size(), {});
    for (auto &[v, g] : varsWithGrads) {
      auto producer = g.getDefiningOp<NodeOp>();
      if (!producer ||
          getStringTFAttr(producer, kTPUReplicateAttr) != replicated.tag)
        continue;
      auto group = add("Const", "CrossReplicaSum/group_assignment", {}, {},
                       {builder->getNamedAttr("dtype", TypeAttr::get(i32)),
                        builder->getNamedAttr("value", groupValue)});
      if (failed(group))
        return signalPassFailure();
      auto sum = add("CrossReplicaSum", "CrossReplicaSum",
                     {g, group->getOutputs()[0]}, {});
      if (failed(sum))
        return signalPassFailure();
      for (NodeOp n : {*group, *sum})
        setTFAttr(n, kTPUReplicateAttr, replicated.tag);
      g = sum->getOutputs()[0];
    }
  }
  Type floatType = valueTypeOf(varsWithGrads.front().first);
  std::string optimizerName = optimizer == "sgd"        ? "GradientDescent"
                              : optimizer == "momentum" ? "Momentum"
                                                        : "Adam";

  // _create_slots.
  DenseMap<Operation *, SmallVector<NodeOp, 2>> slots;
  NodeOp beta1Power, beta2Power;
  if (optimizer == "adam") {
    // Non-slot accumulators, colocated with the first variable by name.
    NodeOp first = varsWithGrads.front().first;
    for (auto &[v, g] : varsWithGrads)
      if (v.getName() < first.getName())
        first = v;
    auto b1 = addVariable("beta1_power", first, floatType, beta1.getValue());
    auto b2 = addVariable("beta2_power", first, floatType, beta2.getValue());
    if (failed(b1) || failed(b2))
      return signalPassFailure();
    beta1Power = *b1;
    beta2Power = *b2;
  }
  for (auto &[v, g] : varsWithGrads) {
    SmallVector<std::string> slotNames;
    if (optimizer == "momentum")
      slotNames = {v.getName().str() + "/Momentum"};
    else if (optimizer == "adam")
      slotNames = {v.getName().str() + "/Adam", v.getName().str() + "/Adam"};
    for (const std::string &slotName : slotNames) {
      auto slot = addVariable(slotName, v, valueTypeOf(v), std::nullopt);
      if (failed(slot))
        return signalPassFailure();
      slots[v].push_back(*slot);
    }
  }

  // _prepare and the updates, in the optimizer's name scope.
  std::string scope = names->unique(optimizerName) + "/";
  auto lr = addScalar(scope + "learning_rate", learningRate, floatType);
  if (failed(lr))
    return signalPassFailure();
  NodeOp momentumConst, beta1Const, beta2Const, epsilonConst;
  if (optimizer == "momentum") {
    auto m = addScalar(scope + "momentum", momentum, floatType);
    if (failed(m))
      return signalPassFailure();
    momentumConst = *m;
  } else if (optimizer == "adam") {
    auto b1 = addScalar(scope + "beta1", beta1, floatType);
    auto b2 = addScalar(scope + "beta2", beta2, floatType);
    auto eps = addScalar(scope + "epsilon", epsilon, floatType);
    if (failed(b1) || failed(b2) || failed(eps))
      return signalPassFailure();
    beta1Const = *b1;
    beta2Const = *b2;
    epsilonConst = *eps;
  }
  Builder &b = *builder;
  auto locking = b.getNamedAttr("use_locking", b.getBoolAttr(false));
  auto nesterov = b.getNamedAttr("use_nesterov", b.getBoolAttr(useNesterov));
  SmallVector<Value> updates;
  for (auto &[v, g] : varsWithGrads) {
    std::string prefix = scope + "update_" + v.getName().str() + "/";
    Value var = v.getOutputs()[0];
    Value lrValue = lr->getOutputs()[0];
    // Resource variables update through the Resource* kernels.
    std::string kind = isResource(v) ? "ResourceApply" : "Apply";
    FailureOr<NodeOp> update;
    if (optimizer == "sgd") {
      update = add(kind + "GradientDescent", prefix + kind + "GradientDescent",
                   {var, lrValue, g}, {}, {locking}, v);
    } else if (optimizer == "momentum") {
      update = add(kind + "Momentum", prefix + kind + "Momentum",
                   {var, slots[v][0].getOutputs()[0], lrValue, g,
                    momentumConst.getOutputs()[0]},
                   {}, {locking, nesterov}, v);
    } else {
      update = add(
          kind + "Adam", prefix + kind + "Adam",
          {var, slots[v][0].getOutputs()[0], slots[v][1].getOutputs()[0],
           readOf(beta1Power), readOf(beta2Power), lrValue,
           beta1Const.getOutputs()[0], beta2Const.getOutputs()[0],
           epsilonConst.getOutputs()[0], g},
          {}, {locking, b.getNamedAttr("use_nesterov", b.getBoolAttr(false))},
          v);
    }
    if (failed(update))
      return signalPassFailure();
    updates.push_back(update->getControl());
  }

  if (optimizer == "adam") {
    // _finish: after the updates, beta powers advance, next to beta1_power.
    SmallVector<Value> powerUpdates;
    for (auto [power, beta] : {std::pair(beta1Power, beta1Const),
                               std::pair(beta2Power, beta2Const)}) {
      auto mul =
          add("Mul", scope + "mul", {readOf(power), beta.getOutputs()[0]},
              updates, {}, beta1Power);
      if (failed(mul))
        return signalPassFailure();
      auto assign =
          isResource(power)
              ? add("AssignVariableOp", scope + "AssignVariableOp",
                    {power.getOutputs()[0], mul->getOutputs()[0]}, updates,
                    {b.getNamedAttr("dtype", TypeAttr::get(floatType))},
                    beta1Power)
              : add("Assign", scope + "Assign",
                    {power.getOutputs()[0], mul->getOutputs()[0]}, updates,
                    {b.getNamedAttr("validate_shape", b.getBoolAttr(true)),
                     locking},
                    beta1Power);
      if (failed(assign))
        return signalPassFailure();
      powerUpdates.push_back(assign->getControl());
    }
    llvm::append_range(updates, powerUpdates);
  }

  // The train op.
  std::string trainName = scope.substr(0, scope.size() - 1);
  if (globalStepNode) {
    auto group = add("NoOp", scope + "update", {}, updates);
    Type stepType = valueTypeOf(globalStepNode);
    // Under control_dependencies([update]), as the increment is.
    auto one = addScalar(scope + "value", 1, stepType, globalStepNode,
                         failed(group) ? ValueRange() : group->getControl());
    if (failed(group) || failed(one))
      return signalPassFailure();
    FailureOr<NodeOp> increment =
        isResource(globalStepNode)
            ? add("AssignAddVariableOp", trainName,
                  {globalStepNode.getOutputs()[0], one->getOutputs()[0]},
                  group->getControl(), {}, globalStepNode, true)
            : add("AssignAdd", trainName,
                  {globalStepNode.getOutputs()[0], one->getOutputs()[0]},
                  group->getControl(), {locking}, globalStepNode, true);
    if (failed(increment))
      return signalPassFailure();
  } else if (failed(add("NoOp", trainName, {}, updates, {}, {}, true))) {
    return signalPassFailure();
  }

  // The new variables' initializers join the graph's init op.
  if (initializers.empty())
    return;
  NodeOp init = byName.lookupNode(initName);
  if (init) {
    SmallVector<Value> operands(init->getOperands());
    llvm::append_range(operands, initializers);
    init->setOperands(operands);
  } else if (failed(add("NoOp", initName, {}, initializers, {}, {}, true))) {
    return signalPassFailure();
  }
}
