//===- Optimizers.cpp - Optimizer.apply_gradients() over the graph --------===//
//
// TensorFlow 1.x's apply_gradients(): the optimizer's slot variables
// (zero-initialized, colocated with their variable, of its kind) and
// non-slot accumulators, its constants in its name scope, one Apply* per
// variable colocated with it, and the train op. Names follow TensorFlow
// (GradientDescent/update_w/ApplyGradientDescent, w/Momentum, beta1_power).
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

bool cleave::graph::isVariableNode(NodeOp node) {
  return isVariableOpType(node.getOpType());
}

bool cleave::graph::isResourceVariable(NodeOp variable) {
  return variable.getOpType() == "VarHandleOp";
}

Type cleave::graph::getVariableValueType(NodeOp variable) {
  if (isResourceVariable(variable))
    if (auto dtype = dyn_cast_or_null<TypeAttr>(variable.getTFAttr("dtype")))
      return dtype.getValue();
  return getElementTypeOf(variable.getOutputs()[0]);
}

//===----------------------------------------------------------------------===//
// NodeAdder
//===----------------------------------------------------------------------===//

NodeAdder::NodeAdder(GraphOp graph, Location loc, StringRef pass)
    : graph(graph), builder(OpBuilder::atBlockEnd(&graph.getBody().front())),
      loc(loc), pass(pass.str()) {
  refreshNames();
}

void NodeAdder::refreshNames() { names.emplace(graph.getBody().front()); }

FailureOr<NodeOp> NodeAdder::add(StringRef opType, StringRef name,
                                 ValueRange inputs, ValueRange controls,
                                 ArrayRef<NamedAttribute> attrs,
                                 NodeOp colocate, bool exactName) {
  std::string error;
  StringRef device = colocate ? colocate.getDevice().value_or("") : StringRef();
  FailureOr<NodeOp> node = createRegisteredNode(
      builder, loc, opType, exactName ? name.str() : names->unique(name),
      inputs, controls, attrs, device, error);
  if (failed(node))
    return emitError(loc) << pass << ": " << error, failure();
  if (colocate) {
    Attribute classes = colocate.getTFAttr("_class");
    if (!classes)
      classes = builder.getArrayAttr(
          builder.getStringAttr(("loc:@" + colocate.getName()).str()));
    setTFAttr(*node, "_class", classes);
  }
  return node;
}

TensorAttr cleave::graph::getScalarTensor(Type type, double value) {
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
  MLIRContext *ctx = type.getContext();
  return TensorAttr::get(ctx, type, ShapeAttr::get(ctx, {}, false, {}), dense,
                         1, {});
}

FailureOr<NodeOp> NodeAdder::addScalar(StringRef name, double value, Type type,
                                       NodeOp colocate, ValueRange controls) {
  return add("Const", name, {}, controls,
             {builder.getNamedAttr("dtype", TypeAttr::get(type)),
              builder.getNamedAttr("value", getScalarTensor(type, value))},
             colocate);
}

InFlightDiagnostic cleave::graph::emitNoGradients(GraphOp graph,
                                                  ArrayRef<NodeOp> variables,
                                                  Value loss) {
  std::string list;
  for (NodeOp v : variables)
    list += (list.empty() ? "" : ", ") + v.getName().str();
  auto lossNode = loss.getDefiningOp<NodeOp>();
  return graph.emitError("No gradients provided for any variable, check "
                         "your graph for ops that do not support gradients, "
                         "between variables [")
         << list << "] and loss "
         << (lossNode ? lossNode.getName() : StringRef("?")) << ":0.";
}

StringRef OptimizerConfig::getName() const {
  return kind == "sgd"        ? "GradientDescent"
         : kind == "momentum" ? "Momentum"
                              : "Adam";
}

//===----------------------------------------------------------------------===//
// apply_gradients
//===----------------------------------------------------------------------===//

namespace {
/// The optimizer's own variables: slots and accumulators, with their
/// initializers and reads.
class SlotCreator {
public:
  explicit SlotCreator(NodeAdder &adder) : adder(adder) {}

  /// A zero-initialized (or `initial`-initialized) variable like `like`,
  /// named `name`, with its initializer and read: TF's slot_creator /
  /// non-slot variable. A resource variable (VarHandleOp, AssignVariableOp,
  /// `<name>/Read/ReadVariableOp`) when `like` is one, else a ref variable
  /// (VariableV2, Assign, `<name>/read`). Returns the variable.
  FailureOr<NodeOp> addVariable(StringRef name, NodeOp like, Type type,
                                std::optional<double> initial);
  /// A variable's value as TensorFlow reads it.
  Value readOf(NodeOp variable) { return reads.lookup(variable); }
  /// Adds the initializers to `initName`'s control inputs (creating it).
  LogicalResult joinInit(StringRef initName);

private:
  NodeAdder &adder;
  DenseMap<Operation *, Value> reads;
  SmallVector<Value> initializers;
};
} // namespace

FailureOr<NodeOp> SlotCreator::addVariable(StringRef name, NodeOp like,
                                           Type type,
                                           std::optional<double> initial) {
  OpBuilder &builder = adder.getBuilder();
  MLIRContext *ctx = builder.getContext();
  std::string base = adder.unique(name);
  Attribute shape = initial ? Attribute(ShapeAttr::get(ctx, {}, false, {}))
                            : like.getTFAttr("shape");
  if (!shape)
    return like.emitError() << "Node '" << like.getName()
                            << "': the variable has no 'shape' attr to "
                               "create its slots from",
           failure();
  bool resource = isResourceVariable(like);
  NamedAttrList attrs;
  attrs.set("dtype", TypeAttr::get(type));
  attrs.set("shape", shape);
  if (resource)
    attrs.set("shared_name", builder.getStringAttr(base));
  FailureOr<NodeOp> variable =
      adder.add(resource ? "VarHandleOp" : "VariableV2", base, {}, {},
                attrs.getAttrs(), like, /*exactName=*/true);
  if (failed(variable))
    return failure();
  FailureOr<NodeOp> value;
  if (initial) {
    value = adder.addScalar(base + "/initial_value", *initial, type, *variable);
  } else {
    // zeros of the variable's shape.
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
    auto tensor = TensorAttr::get(ctx, type, dims, zeros, 1, {});
    value = adder.add("Const", base + "/Initializer/zeros", {}, {},
                      {builder.getNamedAttr("dtype", TypeAttr::get(type)),
                       builder.getNamedAttr("value", tensor)},
                      *variable);
  }
  if (failed(value))
    return failure();
  Value handle = variable->getOutputs()[0];
  FailureOr<NodeOp> assign =
      resource ? adder.add("AssignVariableOp", base + "/Assign",
                           {handle, value->getOutputs()[0]}, {},
                           {builder.getNamedAttr("dtype", TypeAttr::get(type))},
                           *variable)
               : adder.add("Assign", base + "/Assign",
                           {handle, value->getOutputs()[0]}, {},
                           {builder.getNamedAttr("validate_shape",
                                                 builder.getBoolAttr(true)),
                            builder.getNamedAttr("use_locking",
                                                 builder.getBoolAttr(true))},
                           *variable);
  if (failed(assign))
    return failure();
  initializers.push_back(assign->getControl());
  FailureOr<NodeOp> read =
      resource
          ? adder.add("ReadVariableOp", base + "/Read/ReadVariableOp", handle,
                      {}, {builder.getNamedAttr("dtype", TypeAttr::get(type))},
                      *variable)
          : adder.add("Identity", base + "/read", handle, {}, {}, *variable);
  if (failed(read))
    return failure();
  reads[*variable] = read->getOutputs()[0];
  return variable;
}

LogicalResult SlotCreator::joinInit(StringRef initName) {
  if (initializers.empty())
    return success();
  for (auto node : adder.getGraph().getBody().front().getOps<NodeOp>()) {
    if (node.getName() != initName)
      continue;
    SmallVector<Value> operands(node->getOperands());
    llvm::append_range(operands, initializers);
    node->setOperands(operands);
    return success();
  }
  return adder.add("NoOp", initName, {}, initializers, {}, {}, true);
}

/// The first dimension of a shape tensor (`array_ops.shape(x)[0]`).
static FailureOr<Value> firstDimension(NodeAdder &adder, StringRef prefix,
                                       Value shape, NodeOp colocate) {
  OpBuilder &b = adder.getBuilder();
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  std::string name = adder.unique((prefix + "strided_slice").str());
  SmallVector<Value> operands{shape};
  for (auto [suffix, value] : {std::pair("stack", 0), std::pair("stack_1", 1),
                               std::pair("stack_2", 1)}) {
    auto tensor = TensorAttr::get(
        ctx, i32, ShapeAttr::get(ctx, {1}, false, {}),
        DenseElementsAttr::get(RankedTensorType::get({1}, i32),
                               ArrayRef<int32_t>{int32_t(value)}),
        1, {});
    auto c = adder.add("Const", name + "/" + suffix, {}, {},
                       {b.getNamedAttr("dtype", TypeAttr::get(i32)),
                        b.getNamedAttr("value", tensor)},
                       colocate, /*exactName=*/true);
    if (failed(c))
      return failure();
    operands.push_back(c->getOutputs()[0]);
  }
  auto slice = adder.add(
      "StridedSlice", name, operands, {},
      {b.getNamedAttr("shrink_axis_mask", b.getI64IntegerAttr(1))}, colocate,
      /*exactName=*/true);
  if (failed(slice))
    return failure();
  return slice->getOutputs()[0];
}

FailureOr<IndexedSlices>
cleave::graph::sumRepeatedRows(NodeAdder &adder, StringRef prefix,
                               NodeOp variable, const IndexedSlices &g) {
  auto unique = adder.add("Unique", (prefix + "Unique").str(), g.indices, {},
                          {}, variable);
  if (failed(unique))
    return failure();
  auto shape = adder.add("Shape", (prefix + "Shape").str(),
                         unique->getOutputs()[0], {}, {}, variable);
  if (failed(shape))
    return failure();
  auto rows = firstDimension(adder, prefix, shape->getOutputs()[0], variable);
  if (failed(rows))
    return failure();
  auto summed =
      adder.add("UnsortedSegmentSum", (prefix + "UnsortedSegmentSum").str(),
                {g.values, unique->getOutputs()[1], *rows}, {}, {}, variable);
  if (failed(summed))
    return failure();
  return IndexedSlices{summed->getOutputs()[0], unique->getOutputs()[0],
                       g.denseShape};
}

FailureOr<Value> cleave::graph::densify(NodeAdder &adder, StringRef prefix,
                                        NodeOp variable,
                                        const IndexedSlices &g) {
  auto rows = firstDimension(adder, prefix, g.denseShape, variable);
  if (failed(rows))
    return failure();
  auto dense =
      adder.add("UnsortedSegmentSum", (prefix + "UnsortedSegmentSum").str(),
                {g.values, g.indices, *rows}, {}, {}, variable);
  if (failed(dense))
    return failure();
  return dense->getOutputs()[0];
}

/// GradientDescent's _apply_sparse_duplicate_indices: a ref variable's
/// rows less values * lr (ScatterSub), a resource variable's plus
/// -values * lr (ResourceScatterAdd).
static FailureOr<NodeOp>
applySparseGradientDescent(NodeAdder &adder, StringRef prefix, NodeOp variable,
                           const IndexedSlices &g, Value lr) {
  Value var = variable.getOutputs()[0];
  Value values = g.values;
  if (isResourceVariable(variable)) {
    auto negated =
        adder.add("Neg", (prefix + "Neg").str(), values, {}, {}, variable);
    if (failed(negated))
      return failure();
    values = negated->getOutputs()[0];
  }
  auto delta =
      adder.add("Mul", (prefix + "mul").str(), {values, lr}, {}, {}, variable);
  if (failed(delta))
    return failure();
  if (isResourceVariable(variable))
    return adder.add(
        "ResourceScatterAdd", (prefix + "ResourceScatterAdd").str(),
        {var, g.indices, delta->getOutputs()[0]}, {}, {}, variable);
  return adder.add("ScatterSub", (prefix + "ScatterSub").str(),
                   {var, g.indices, delta->getOutputs()[0]}, {}, {}, variable);
}

/// tf.compat.v1.train.exponential_decay(learning_rate, global_step,
/// decay_steps, decay_rate, staircase) in its name scope, on the value of
/// `globalStep` before the train op increments it.
static FailureOr<NodeOp> addExponentialDecay(NodeAdder &adder,
                                             const OptimizerConfig &config,
                                             Type floatType,
                                             NodeOp globalStep) {
  if (!globalStep)
    return emitError(adder.getLoc())
               << adder.getPassName()
               << ": the learning rate's exponential decay needs the global "
                  "step (global-step, or create-global-step)",
           failure();
  Builder &b = adder.getBuilder();
  std::string scope = adder.unique("ExponentialDecay");
  auto rate =
      adder.addScalar(scope + "/learning_rate", config.learningRate, floatType);
  auto steps = adder.addScalar(scope + "/decay_steps",
                               double(config.decaySteps), floatType);
  auto base =
      adder.addScalar(scope + "/decay_rate", config.decayRate, floatType);
  if (failed(rate) || failed(steps) || failed(base))
    return failure();
  Type stepType = getVariableValueType(globalStep);
  FailureOr<NodeOp> step =
      isResourceVariable(globalStep)
          ? adder.add("ReadVariableOp", scope + "/ReadVariableOp",
                      {globalStep.getOutputs()[0]}, {},
                      {b.getNamedAttr("dtype", TypeAttr::get(stepType))})
          : adder.add("Identity", scope + "/global_step",
                      {globalStep.getOutputs()[0]}, {},
                      {b.getNamedAttr("T", TypeAttr::get(stepType))});
  if (failed(step))
    return failure();
  auto cast = adder.add("Cast", scope + "/Cast", {step->getOutputs()[0]}, {},
                        {b.getNamedAttr("SrcT", TypeAttr::get(stepType)),
                         b.getNamedAttr("DstT", TypeAttr::get(floatType)),
                         b.getNamedAttr("Truncate", b.getBoolAttr(false))});
  if (failed(cast))
    return failure();
  auto typed = b.getNamedAttr("T", TypeAttr::get(floatType));
  auto p =
      adder.add("RealDiv", scope + "/truediv",
                {cast->getOutputs()[0], steps->getOutputs()[0]}, {}, {typed});
  if (failed(p))
    return failure();
  if (config.staircase) {
    p = adder.add("Floor", scope + "/Floor", {p->getOutputs()[0]}, {}, {typed});
    if (failed(p))
      return failure();
  }
  auto power =
      adder.add("Pow", scope + "/Pow",
                {base->getOutputs()[0], p->getOutputs()[0]}, {}, {typed});
  if (failed(power))
    return failure();
  auto decayed =
      adder.add("Mul", scope, {rate->getOutputs()[0], power->getOutputs()[0]},
                {}, {typed}, {}, /*exactName=*/true);
  return decayed;
}

FailureOr<NodeOp>
cleave::graph::applyGradients(NodeAdder &adder, const OptimizerConfig &config,
                              ArrayRef<VariableGradient> gradients,
                              NodeOp globalStep, StringRef initName) {
  StringRef kind = config.kind;
  Type floatType = getVariableValueType(gradients.front().variable);
  SlotCreator slotCreator(adder);

  // _create_slots.
  DenseMap<Operation *, SmallVector<NodeOp, 2>> slots;
  NodeOp beta1Power, beta2Power;
  if (kind == "adam") {
    // Non-slot accumulators, colocated with the first variable by name.
    NodeOp first = gradients.front().variable;
    for (VariableGradient vg : gradients)
      if (vg.variable.getName() < first.getName())
        first = vg.variable;
    auto b1 =
        slotCreator.addVariable("beta1_power", first, floatType, config.beta1);
    auto b2 =
        slotCreator.addVariable("beta2_power", first, floatType, config.beta2);
    if (failed(b1) || failed(b2))
      return failure();
    beta1Power = *b1;
    beta2Power = *b2;
  }
  for (const VariableGradient &vg : gradients) {
    NodeOp v = vg.variable;
    SmallVector<std::string> slotNames;
    if (kind == "momentum")
      slotNames = {v.getName().str() + "/Momentum"};
    else if (kind == "adam")
      slotNames = {v.getName().str() + "/Adam", v.getName().str() + "/Adam"};
    for (const std::string &slotName : slotNames) {
      auto slot = slotCreator.addVariable(slotName, v, getVariableValueType(v),
                                          std::nullopt);
      if (failed(slot))
        return failure();
      slots[v].push_back(*slot);
    }
  }

  // _prepare and the updates, in the optimizer's name scope.
  FailureOr<NodeOp> lr = failure();
  if (config.decaySteps > 0)
    lr = addExponentialDecay(adder, config, floatType, globalStep);
  std::string scope = adder.unique(config.getName()) + "/";
  if (config.decaySteps <= 0)
    lr = adder.addScalar(scope + "learning_rate", config.learningRate,
                         floatType);
  if (failed(lr))
    return failure();
  NodeOp momentumConst, beta1Const, beta2Const, epsilonConst;
  if (kind == "momentum") {
    auto m = adder.addScalar(scope + "momentum", config.momentum, floatType);
    if (failed(m))
      return failure();
    momentumConst = *m;
  } else if (kind == "adam") {
    auto b1 = adder.addScalar(scope + "beta1", config.beta1, floatType);
    auto b2 = adder.addScalar(scope + "beta2", config.beta2, floatType);
    auto eps = adder.addScalar(scope + "epsilon", config.epsilon, floatType);
    if (failed(b1) || failed(b2) || failed(eps))
      return failure();
    beta1Const = *b1;
    beta2Const = *b2;
    epsilonConst = *eps;
  }
  Builder &b = adder.getBuilder();
  auto locking = b.getNamedAttr("use_locking", b.getBoolAttr(false));
  auto nesterov =
      b.getNamedAttr("use_nesterov", b.getBoolAttr(config.useNesterov));
  SmallVector<Value> updates;
  for (const VariableGradient &vg : gradients) {
    NodeOp v = vg.variable;
    Value g = vg.gradient;
    std::string prefix = scope + "update_" + v.getName().str() + "/";
    Value var = v.getOutputs()[0];
    Value lrValue = lr->getOutputs()[0];
    bool resource = isResourceVariable(v);
    // Resource variables update through the Resource* kernels.
    std::string apply = resource ? "ResourceApply" : "Apply";
    FailureOr<NodeOp> update;
    if (vg.sparse && kind == "sgd") {
      update =
          applySparseGradientDescent(adder, prefix, v, *vg.sparse, lrValue);
    } else if (vg.sparse && kind == "momentum") {
      auto summed = sumRepeatedRows(adder, prefix, v, *vg.sparse);
      if (failed(summed))
        return failure();
      std::string sparseApply =
          resource ? "ResourceSparseApplyMomentum" : "SparseApplyMomentum";
      update =
          adder.add(sparseApply, prefix + sparseApply,
                    {var, slots[v][0].getOutputs()[0], lrValue, summed->values,
                     summed->indices, momentumConst.getOutputs()[0]},
                    {}, {locking, nesterov}, v);
    } else {
      if (vg.sparse) {
        auto dense = densify(adder, prefix, v, *vg.sparse);
        if (failed(dense))
          return failure();
        g = *dense;
      }
      if (kind == "sgd") {
        update = adder.add(apply + "GradientDescent",
                           prefix + apply + "GradientDescent",
                           {var, lrValue, g}, {}, {locking}, v);
      } else if (kind == "momentum") {
        update = adder.add(apply + "Momentum", prefix + apply + "Momentum",
                           {var, slots[v][0].getOutputs()[0], lrValue, g,
                            momentumConst.getOutputs()[0]},
                           {}, {locking, nesterov}, v);
      } else {
        update = adder.add(
            apply + "Adam", prefix + apply + "Adam",
            {var, slots[v][0].getOutputs()[0], slots[v][1].getOutputs()[0],
             slotCreator.readOf(beta1Power), slotCreator.readOf(beta2Power),
             lrValue, beta1Const.getOutputs()[0], beta2Const.getOutputs()[0],
             epsilonConst.getOutputs()[0], g},
            {}, {locking, b.getNamedAttr("use_nesterov", b.getBoolAttr(false))},
            v);
      }
    }
    if (failed(update))
      return failure();
    updates.push_back(update->getControl());
  }

  if (kind == "adam") {
    // _finish: after the updates, beta powers advance, next to beta1_power.
    SmallVector<Value> powerUpdates;
    for (auto [power, beta] : {std::pair(beta1Power, beta1Const),
                               std::pair(beta2Power, beta2Const)}) {
      auto mul = adder.add("Mul", scope + "mul",
                           {slotCreator.readOf(power), beta.getOutputs()[0]},
                           updates, {}, beta1Power);
      if (failed(mul))
        return failure();
      auto assign =
          isResourceVariable(power)
              ? adder.add("AssignVariableOp", scope + "AssignVariableOp",
                          {power.getOutputs()[0], mul->getOutputs()[0]},
                          updates,
                          {b.getNamedAttr("dtype", TypeAttr::get(floatType))},
                          beta1Power)
              : adder.add(
                    "Assign", scope + "Assign",
                    {power.getOutputs()[0], mul->getOutputs()[0]}, updates,
                    {b.getNamedAttr("validate_shape", b.getBoolAttr(true)),
                     locking},
                    beta1Power);
      if (failed(assign))
        return failure();
      powerUpdates.push_back(assign->getControl());
    }
    llvm::append_range(updates, powerUpdates);
  }

  // The train op.
  std::string trainName = scope.substr(0, scope.size() - 1);
  FailureOr<NodeOp> trainOp;
  if (globalStep) {
    auto group = adder.add("NoOp", scope + "update", {}, updates);
    if (failed(group))
      return failure();
    Type stepType = getVariableValueType(globalStep);
    // Under control_dependencies([update]), as the increment is.
    auto one = adder.addScalar(scope + "value", 1, stepType, globalStep,
                               group->getControl());
    if (failed(one))
      return failure();
    trainOp =
        isResourceVariable(globalStep)
            ? adder.add("AssignAddVariableOp", trainName,
                        {globalStep.getOutputs()[0], one->getOutputs()[0]},
                        group->getControl(), {}, globalStep, true)
            : adder.add("AssignAdd", trainName,
                        {globalStep.getOutputs()[0], one->getOutputs()[0]},
                        group->getControl(), {locking}, globalStep, true);
  } else {
    trainOp = adder.add("NoOp", trainName, {}, updates, {}, {}, true);
  }
  if (failed(trainOp) || failed(slotCreator.joinInit(initName)))
    return failure();
  return trainOp;
}

/// tf.compat.v1.train.create_global_step(): a resource variable of int64
/// `name`, zero-initialized by `initName`.
FailureOr<NodeOp> cleave::graph::createGlobalStep(GraphOp graph, Location loc,
                                                 StringRef name,
                                                 StringRef initName,
                                                 StringRef pass) {
  NodeAdder adder(graph, loc, pass);
  OpBuilder &b = adder.getBuilder();
  b.setInsertionPointToStart(&graph.getBody().front());
  Type i64 = b.getI64Type();
  auto dtype = b.getNamedAttr("dtype", TypeAttr::get(i64));
  FailureOr<NodeOp> variable = adder.add(
      "VarHandleOp", name, {}, {},
      {dtype,
       b.getNamedAttr("shape", ShapeAttr::get(b.getContext(), {}, false, {})),
       b.getNamedAttr("shared_name", b.getStringAttr(name))},
      {}, /*exactName=*/true);
  if (failed(variable))
    return failure();
  FailureOr<NodeOp> zero = adder.addScalar(
      (name + "/Initializer/zeros").str(), 0, i64, *variable);
  if (failed(zero))
    return failure();
  FailureOr<NodeOp> assign = adder.add(
      "AssignVariableOp", (name + "/Assign").str(),
      {variable->getOutputs()[0], zero->getOutputs()[0]}, {}, {dtype},
      *variable);
  if (failed(assign))
    return failure();
  for (auto node : graph.getBody().front().getOps<NodeOp>())
    if (node.getName() == initName) {
      SmallVector<Value> operands(node->getOperands());
      operands.push_back(assign->getControl());
      node->setOperands(operands);
      return variable;
    }
  b.setInsertionPointToEnd(&graph.getBody().front());
  if (failed(adder.add("NoOp", initName, {}, assign->getControl(), {}, {},
                       /*exactName=*/true)))
    return failure();
  return variable;
}
