//===- Gradient.cpp - graph-gradient: tf.gradients() as a pass ------------===//
//
// TensorFlow's gradients_util._GradientsHelper over the graph dialect: the
// ops between xs and ys are visited from the ys back, each op's gradient
// rule (lib/Ops) adds its nodes through a GradientContext, and gradients
// of one tensor are summed. Names, node order, colocation and the
// gradient_uid outside-compilation clusters follow TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Ops/GradientRules.h"
#include "cleave/Support/CommandLine.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <deque>

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHGRADIENTPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using ops::GradAttr;
using ops::GradTensor;

using namespace cleave::graph::gradient;

namespace {

class GraphGradientPass
    : public graph::impl::GraphGradientPassBase<GraphGradientPass> {
public:
  using GraphGradientPassBase::GraphGradientPassBase;
  void runOnOperation() override;

private:
  LogicalResult checkOptions(GraphOp graph);
};

} // namespace

LogicalResult GraphGradientPass::checkOptions(GraphOp graph) {
  if (ys.empty() || xs.empty())
    return emitOptionError(graph)
           << "graph-gradient: options 'ys' and 'xs' are required: they name "
              "the tensors to differentiate and to differentiate with respect "
              "to";
  if (!llvm::is_contained({"add_n", "tree", "accumulate_n"},
                          StringRef(aggregationMethod)))
    return graph.emitError("Invalid aggregation_method specified ")
           << aggregationMethod.getValue()
           << ". (option 'aggregation-method': add_n, tree or accumulate_n)";
  if (!llvm::is_contained({"none", "zero"}, StringRef(unconnectedGradients)))
    return graph.emitError("Unknown value for unconnected_gradients: '")
           << unconnectedGradients.getValue()
           << "' (option 'unconnected-gradients': none or zero)";
  if (!gradYs.empty() && gradYs.size() != ys.size())
    return graph.emitError("Passed ")
           << gradYs.size() << " grad_ys for " << ys.size() << " ys";
  if (!resultNames.empty() && resultNames.size() != xs.size())
    return graph.emitError("graph-gradient: ")
           << resultNames.size() << " result-names for " << xs.size() << " xs";
  return success();
}

TensorNameResolver::TensorNameResolver(GraphOp graph, StringRef pass)
    : graph(graph), pass(pass.str()) {
  for (auto node : graph.getBody().front().getOps<NodeOp>())
    byName[node.getName()] = node;
}

FailureOr<SmallVector<Value>>
TensorNameResolver::resolve(ArrayRef<std::string> texts,
                            StringRef option) const {
  SmallVector<Value> values;
  for (StringRef text : texts) {
    auto [name, port] = splitTensorName(text);
    NodeOp node = byName.lookup(name);
    if (!node) {
      SmallVector<StringRef> names;
      for (auto &entry : byName)
        names.push_back(entry.first);
      return emitOptionError(graph)
             << pass << ": option '" << option << "' names '" << text
             << "', which is no node of the graph"
             << suggestNearest(name, names);
    }
    if (port >= node.getOutputs().size())
      return emitOptionError(graph)
             << pass << ": option '" << option << "' names '" << text
             << "', but node '" << node.getName() << "' has "
             << node.getOutputs().size()
             << (node.getOutputs().size() == 1 ? " output" : " outputs");
    values.push_back(node.getOutputs()[port]);
  }
  return values;
}

LogicalResult Differentiator::defaultGradYs(GradientBuilder &b,
                                            ArrayRef<Value> ys,
                                            ArrayRef<Value> given,
                                            SmallVector<Value> &gradYs) {
  for (auto [i, y] : llvm::enumerate(ys)) {
    NodeOp yOp = y.getDefiningOp<NodeOp>();
    if (!yOp) {
      // A function returning its argument: the gradient passes through.
      if (given.empty())
        return emitError(y.getLoc(), "graph-gradient: a y that is a "
                                     "function argument needs grad_ys");
      gradYs.push_back(given[i]);
      continue;
    }
    Type yType = getElementTypeOf(y);
    if (colocateGradientsWithOps && failed(b.enterColocation(yOp)))
      return failure();
    b.forward = yOp;
    std::string name = "grad_ys_" + std::to_string(i);
    Value gradY;
    if (given.empty()) {
      if (isComplex(yType))
        return nodeError(yOp)
               << "Gradients of complex tensors must set grad_ys (y.dtype = "
               << getDataTypeName(yType) << ")";
      if (!isFloating(yType) && !isa<IntegerType>(yType))
        return nodeError(yOp)
               << "Tensor " << tensorName(y) << " with type "
               << getDataTypeName(yType)
               << " must be numeric to obtain a default gradient";
      FailureOr<NodeOp> shape = b.create("Shape", y, {}, "", yOp.getLoc());
      NodeGradientContext ctx(yOp, b, {}, {});
      GradTensor one = ctx.scalar(1, typeToDataType(yType), name);
      if (failed(shape) || !one)
        return failure();
      FailureOr<NodeOp> fill = b.create(
          "Fill", {shape->getOutputs()[0], unwrap(one)}, {}, "", yOp.getLoc());
      if (failed(fill))
        return failure();
      gradY = fill->getOutputs()[0];
    } else {
      Value g = given[i];
      Type gType = getElementTypeOf(g);
      bool yReal = isFloating(yType) || isa<IntegerType>(yType);
      bool gReal = isFloating(gType) || isa<IntegerType>(gType);
      if (yReal && !gReal)
        return nodeError(yOp)
               << "Gradient type " << getDataTypeName(gType)
               << " generated for real or integer-valued tensor "
               << tensorName(y) << " with type " << getDataTypeName(yType)
               << " must be real or integer";
      if (isComplex(yType) && !isComplex(gType))
        return nodeError(yOp)
               << "Gradient type " << getDataTypeName(gType)
               << " generated for complex-valued tensor " << tensorName(y)
               << " with type " << getDataTypeName(yType) << " must be complex";
      FailureOr<NodeOp> identity =
          b.create("Identity", g, {}, name, yOp.getLoc());
      if (failed(identity))
        return failure();
      gradY = identity->getOutputs()[0];
    }
    gradYs.push_back(gradY);
    if (colocateGradientsWithOps && failed(b.exitColocation()))
      return failure();
  }
  b.forward = {};
  return success();
}

FailureOr<Value> Differentiator::multiDeviceAddN(GradientBuilder &b,
                                                 ArrayRef<Value> tensors,
                                                 Location loc) {
  // Buckets by device, sorted by device name ("" first).
  std::map<std::string, SmallVector<Value>> buckets;
  for (Value t : tensors) {
    auto producer = t.getDefiningOp<NodeOp>();
    buckets[producer ? producer.getDevice().value_or("").str() : ""].push_back(
        t);
  }
  SmallVector<Value> summands;
  for (auto &[device, bucket] : buckets) {
    // add_n of one tensor is that tensor.
    if (bucket.size() == 1) {
      summands.push_back(bucket.front());
      continue;
    }
    // colocate_with(bucket[0].op, ignore_existing=True), always.
    if (failed(b.enterColocation(bucket.front().getDefiningOp<NodeOp>())))
      return failure();
    FailureOr<NodeOp> sum = b.create("AddN", bucket, {}, "", loc);
    if (failed(sum) || failed(b.exitColocation()))
      return failure();
    summands.push_back(sum->getOutputs()[0]);
  }
  if (summands.size() == 1)
    return summands.front();
  FailureOr<NodeOp> total = b.create("AddN", summands, {}, "", loc);
  if (failed(total))
    return failure();
  return total->getOutputs()[0];
}

LogicalResult Differentiator::aggregate(GradientBuilder &b, NodeOp op,
                                        GradMap &grads) {
  auto it = grads.find(op);
  if (it == grads.end())
    return success();
  for (SmallVector<Value, 1> &outGrad : it->second) {
    if (outGrad.size() < 2)
      continue;
    Value sum;
    if (llvm::any_of(outGrad, [&](Value g) { return slices.count(g); })) {
      FailureOr<Value> total = concatSlices(b, outGrad, op.getLoc());
      if (failed(total))
        return failure();
      sum = *total;
    } else if (aggregationMethod == "add_n") {
      FailureOr<Value> total = multiDeviceAddN(b, outGrad, op.getLoc());
      if (failed(total))
        return failure();
      sum = *total;
    } else {
      // A left-to-right chain of two-input sums.
      std::string saved = b.prefix;
      b.prefix = b.getNames().unique(b.scope + "/" + op.getName().str() +
                                     "_gradient_sum") +
                 "/";
      sum = outGrad.front();
      for (Value g : ArrayRef(outGrad).drop_front()) {
        FailureOr<NodeOp> add = b.create("AddN", {sum, g}, {}, "", op.getLoc());
        if (failed(add))
          return failure();
        sum = add->getOutputs()[0];
      }
      b.prefix = saved;
    }
    outGrad.assign(1, sum);
  }
  return success();
}

FailureOr<Value> Differentiator::densify(GradientBuilder &b, Value g,
                                         Location loc) {
  auto it = slices.find(g);
  if (!g || it == slices.end())
    return g;
  auto [indices, shape] = it->second;
  MLIRContext *ctx = g.getContext();
  NodeGradientContext consts(g.getDefiningOp<NodeOp>(), b, {}, {});
  auto rows =
      b.create("StridedSlice",
               {shape, unwrap(consts.intVector({0}, "strided_slice/stack")),
                unwrap(consts.intVector({1}, "strided_slice/stack_1")),
                unwrap(consts.intVector({1}, "strided_slice/stack_2"))},
               {NamedAttribute(StringAttr::get(ctx, "shrink_axis_mask"),
                               IntegerAttr::get(IntegerType::get(ctx, 64), 1))},
               "strided_slice", loc);
  if (failed(rows))
    return failure();
  auto sum = b.create("UnsortedSegmentSum", {g, indices, rows->getOutputs()[0]},
                      {}, "", loc);
  if (failed(sum))
    return failure();
  return sum->getOutputs()[0];
}

FailureOr<Value> Differentiator::concatSlices(GradientBuilder &b,
                                              ArrayRef<Value> grads,
                                              Location loc) {
  SmallVector<Value> values, indices;
  Value shape;
  for (Value g : grads) {
    if (auto it = slices.find(g); it != slices.end()) {
      values.push_back(g);
      indices.push_back(it->second.first);
      shape = shape ? shape : it->second.second;
      continue;
    }
    // A dense gradient as slices: all its rows, in order.
    NodeGradientContext consts(g.getDefiningOp<NodeOp>(), b, {}, {});
    GradTensor dense = wrap(g);
    GradTensor rows = consts.op(
        "StridedSlice",
        {consts.op("Shape", {dense}),
         consts.intVector({0}, "strided_slice/stack"),
         consts.intVector({1}, "strided_slice/stack_1"),
         consts.intVector({1}, "strided_slice/stack_2")},
        {ops::GradAttr::integer("shrink_axis_mask", 1)}, "strided_slice");
    GradTensor range = consts.op("Range",
                                 {consts.scalar(0, 3, "range/start"), rows,
                                  consts.scalar(1, 3, "range/delta")},
                                 {}, "range");
    if (consts.failedToBuild)
      return failure();
    values.push_back(g);
    indices.push_back(unwrap(range));
  }
  NodeGradientContext consts(grads.front().getDefiningOp<NodeOp>(), b, {}, {});
  Value axis = unwrap(consts.scalar(0, 3, "concat/axis"));
  if (!axis)
    return failure();
  SmallVector<Value> valueInputs(values), indexInputs(indices);
  valueInputs.push_back(axis);
  indexInputs.push_back(axis);
  auto allValues = b.create("ConcatV2", valueInputs, {}, "concat", loc);
  auto allIndices = b.create("ConcatV2", indexInputs, {}, "concat", loc);
  if (failed(allValues) || failed(allIndices))
    return failure();
  Value result = allValues->getOutputs()[0];
  slices[result] = {allIndices->getOutputs()[0], shape};
  return result;
}

LogicalResult Differentiator::gate(GradientBuilder &b, NodeOp op,
                                   SmallVector<Value> &inGrads) {
  // control_flow_ops.tuple(in_grads), outside any colocation.
  if (llvm::count_if(inGrads, [](Value v) { return bool(v); }) < 2)
    return success();
  if (failed(b.enterColocation({})))
    return failure();
  std::string saved = b.prefix;
  b.prefix =
      b.getNames().unique(b.scope + "/" + op.getName().str() + "_grad/tuple") +
      "/";
  SmallVector<Value> gating;
  for (Value g : inGrads)
    if (g)
      gating.push_back(g);
  SmallVector<Value> controls;
  for (Value g : gating)
    controls.push_back(g.getDefiningOp<NodeOp>().getControl());
  OpBuilder ob = OpBuilder::atBlockEnd(op->getBlock());
  NodeOp group = NodeOp::create(ob, op.getLoc(), "NoOp",
                                b.getNames().unique(b.prefix + "group_deps"),
                                {}, controls, ob.getDictionaryAttr({}));
  if (Attribute tag = op.getTFAttr(kTPUReplicateAttr))
    setTFAttr(group, kTPUReplicateAttr, tag);
  for (Value &g : inGrads) {
    // Sparse gradients pass ungated: an identity would lose their slices.
    if (!g || slices.count(g))
      continue;
    // with_dependencies: colocated with the gradient it passes on.
    NodeOp producer = g.getDefiningOp<NodeOp>();
    if (failed(b.enterColocation(producer)))
      return failure();
    b.controlDeps.assign(1, group.getControl());
    FailureOr<NodeOp> identity =
        b.create("Identity", g, {}, "control_dependency", op.getLoc());
    b.controlDeps.clear();
    if (failed(identity) || failed(b.exitColocation()))
      return failure();
    g = identity->getOutputs()[0];
  }
  b.prefix = saved;
  return b.exitColocation();
}

SmallVector<Value> Differentiator::unitInputs(Operation *unit) const {
  if (const LoopFrame *loop = getLoop(unit))
    return loop->getInputs();
  return SmallVector<Value>(cast<NodeOp>(unit).getDataInputs());
}

SmallVector<Value> Differentiator::unitOutputs(Operation *unit) const {
  const LoopFrame *loop = getLoop(unit);
  if (!loop)
    return SmallVector<Value>(cast<NodeOp>(unit).getOutputs());
  SmallVector<Value> outputs;
  for (NodeOp exit : loop->getExits())
    outputs.push_back(exit.getOutputs()[0]);
  return outputs;
}

LogicalResult Differentiator::nodeGrad(GradientBuilder &b, NodeOp op,
                                       GradMap &grads,
                                       SmallVector<Value> &inGrads) {
  SmallVector<Value> outGrads(op.getOutputs().size());
  SmallVector<bool> hasGrad(op.getOutputs().size(), false);
  if (auto it = grads.find(op); it != grads.end())
    for (auto [i, g] : llvm::enumerate(it->second))
      if (!g.empty()) {
        outGrads[i] = g.front();
        hasGrad[i] = true;
      }
  if (!llvm::is_contained(hasGrad, true) || op.getDataInputs().empty())
    return success();
  ops::GradFn rule = ops::lookupGradFn(op.getOpType());
  FuncOp callee = rule ? FuncOp() : getCallee(op);
  bool isIf = llvm::is_contained({"If", "StatelessIf", "Case", "StatelessCase"},
                                 op.getOpType());
  bool isWhile =
      op.getOpType() == "While" || op.getOpType() == "StatelessWhile";
  if (!rule && !callee && !isIf && !isWhile) {
    if (ops::isNotDifferentiable(op.getOpType()))
      return success();
    return nodeError(op) << "No gradient defined for operation '"
                         << op.getName() << "' (op type: " << op.getOpType()
                         << ")";
  }
  // Only ops that pass a gradient through take it sparse.
  if (!llvm::is_contained({"Identity", "Snapshot", "ReadVariableOp"},
                          op.getOpType()))
    for (Value &g : outGrads) {
      FailureOr<Value> dense = densify(b, g, op.getLoc());
      if (failed(dense))
        return failure();
      g = *dense;
    }
  // Outputs no gradient reached get zeros (ZerosLike in the scope).
  for (auto [i, out] : llvm::enumerate(op.getOutputs()))
    if (!outGrads[i] && isTrainable(out)) {
      FailureOr<Value> zeros = b.zerosLike(out, op.getLoc());
      if (failed(zeros))
        return failure();
      outGrads[i] = *zeros;
    }
  std::string saved = b.prefix;
  b.prefix =
      b.getNames().unique(b.scope + "/" + op.getName().str() + "_grad") + "/";
  if (callee || isIf || isWhile) {
    LogicalResult built = isIf ? ifGrad(b, op, outGrads, inGrads)
                          : isWhile
                              ? whileGrad(b, op, outGrads, inGrads)
                              : callGrad(b, op, callee, outGrads, inGrads);
    b.prefix = saved;
    if (failed(built))
      return failure();
  } else {
    NodeGradientContext ctx(op, b, outGrads, hasGrad);
    std::string error = rule(ctx);
    b.controlDeps.clear();
    b.prefix = saved;
    if (!error.empty())
      return nodeError(op) << error;
    if (ctx.failedToBuild)
      return failure();
    for (auto [i, g] : llvm::enumerate(ctx.getInputGrads())) {
      inGrads[i] = g ? unwrap(g) : Value();
      auto [indices, shape] = ctx.getInputGradSlices(i);
      if (g && indices && shape)
        slices[inGrads[i]] = {unwrap(indices), unwrap(shape)};
    }
  }
  return gateGradients ? gate(b, op, inGrads) : success();
}

FailureOr<SmallVector<Value>>
Differentiator::run(Block &block, ArrayRef<Value> ys, ArrayRef<Value> xs,
                    ArrayRef<Value> givenGradYs, ArrayRef<Value> stops) {
  GradientBuilder b(block);
  module = block.getParentOp()->getParentOfType<ModuleOp>();
  b.scope = b.getNames().unique(scopeName);
  b.uid = b.getNames().unique(b.scope + "/uid");
  b.prefix = b.scope + "/";

  // v1 loops take part as one node each: their state in, their Exits out.
  FailureOr<SmallVector<LoopFrame>> found = findLoopFrames(block);
  if (failed(found))
    return failure();
  loops = std::move(*found);
  for (auto [i, loop] : llvm::enumerate(loops))
    for (NodeOp member : loop.members)
      loopOf[member] = i;
  auto checkOutsideLoops = [&](ArrayRef<Value> values) -> LogicalResult {
    for (Value v : values) {
      auto op = v.getDefiningOp<NodeOp>();
      auto it = op ? loopOf.find(op) : loopOf.end();
      if (it != loopOf.end() && op.getOpType() != "Exit" &&
          op.getOpType() != "RefExit")
        return nodeError(op)
               << "graph-gradient: this node is inside v1 loop '"
               << loops[it->second].name
               << "'; gradients are taken of and with respect to the "
                  "tensors a loop takes in or gives out (Exit)";
    }
    return success();
  };
  if (failed(checkOutsideLoops(ys)) || failed(checkOutsideLoops(xs)) ||
      failed(checkOutsideLoops(stops)))
    return failure();

  // The ops between xs and ys: reached from the xs, reaching the ys.
  llvm::SetVector<Operation *> reached;
  SmallVector<Operation *> work;
  // A function argument has no op: its users are where the walk starts.
  for (Value x : xs) {
    if (Operation *op = x.getDefiningOp())
      work.push_back(unitOf(op));
    else
      for (Operation *user : x.getUsers())
        if (isa<NodeOp>(user))
          work.push_back(unitOf(user));
  }
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!reached.insert(op))
      continue;
    for (Value out : unitOutputs(op))
      for (Operation *user : out.getUsers())
        if (isa<NodeOp>(user))
          work.push_back(unitOf(user));
  }
  llvm::DenseSet<Operation *> between;
  for (Value y : ys)
    if (Operation *op = y.getDefiningOp())
      work.push_back(unitOf(op));
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!reached.contains(op) || !between.insert(op).second)
      continue;
    for (Value in : unitInputs(op))
      if (Operation *producer = in.getDefiningOp())
        work.push_back(unitOf(producer));
  }
  // The number of consumers in between whose gradients each op awaits.
  DenseMap<Operation *, int> pending;
  auto producerUnit = [&](Value v) -> Operation * {
    Operation *producer = v.getDefiningOp();
    return producer ? unitOf(producer) : nullptr;
  };
  for (Operation *op : between)
    for (Value in : unitInputs(op))
      if (Operation *producer = producerUnit(in);
          producer && between.contains(producer))
        ++pending[producer];
  // Ops the gradient stops at: xs whose inputs get no gradient, and the
  // stop_gradients (a stopped Exit stops that loop output only).
  llvm::DenseSet<Operation *> stopOps;
  for (Value x : xs) {
    Operation *op = producerUnit(x);
    if (op && llvm::none_of(unitInputs(op), [&](Value in) {
          return pending.lookup(producerUnit(in)) > 0;
        }))
      stopOps.insert(op);
  }
  for (Value s : stops) {
    if (loopOf.count(s.getDefiningOp()))
      stoppedExits.insert(s.getDefiningOp());
    else
      stopOps.insert(s.getDefiningOp());
  }

  SmallVector<Value> initialGrads;
  if (failed(defaultGradYs(b, ys, givenGradYs, initialGrads)))
    return failure();
  GradMap grads;
  DenseMap<Value, SmallVector<Value, 1>> argGrads;
  auto addGrad = [&](Value t, Value g) {
    if (isa<BlockArgument>(t))
      return argGrads[t].push_back(g);
    auto &slots = grads[t.getDefiningOp()];
    slots.resize(t.getDefiningOp()->getNumResults() - 1);
    slots[cast<OpResult>(t).getResultNumber()].push_back(g);
  };
  for (auto [y, g] : llvm::zip(ys, initialGrads))
    addGrad(y, g);

  std::deque<NodeOp> queue;
  llvm::DenseSet<Operation *> queued;
  for (Value y : ys) {
    Operation *op = producerUnit(y);
    if (op && pending.lookup(op) == 0 && reached.contains(op) &&
        queued.insert(op).second)
      queue.push_back(cast<NodeOp>(op));
  }
  llvm::DenseSet<Operation *> processed;
  while (!queue.empty()) {
    NodeOp op = queue.front();
    queue.pop_front();
    processed.insert(op);
    if (colocateGradientsWithOps && failed(b.enterColocation(op)))
      return failure();
    b.forward = op;
    // Each output's gradients summed, then passed on unless stopped.
    const LoopFrame *loop = getLoop(op);
    for (NodeOp producer : loop ? loop->getExits() : SmallVector<NodeOp>{op})
      if (failed(aggregate(b, producer, grads)))
        return failure();
    SmallVector<Value> inputs = unitInputs(op);
    SmallVector<Value> inGrads(inputs.size());
    if (!stopOps.contains(op)) {
      if (failed(loop ? frameGrad(b, *loop, grads, inGrads)
                      : nodeGrad(b, op, grads, inGrads)))
        return failure();
    }
    for (auto [input, g] : llvm::zip(inputs, inGrads))
      if (g)
        addGrad(input, g);
    if (colocateGradientsWithOps && failed(b.exitColocation()))
      return failure();
    b.forward = {};
    for (Value input : inputs) {
      Operation *producer = producerUnit(input);
      if (!between.contains(producer))
        continue;
      if (--pending[producer] == 0 && queued.insert(producer).second)
        queue.push_back(cast<NodeOp>(producer));
    }
  }

  // Ops still waiting for their consumers' gradients sit on a cycle or
  // after one; every cycle passes a NextIteration (the importer checks),
  // which outside a loop frame has no Enter and Exit to make it a loop.
  NodeOp stuck;
  for (auto op : block.getOps<NodeOp>())
    if (between.contains(op) && !processed.contains(op) &&
        pending.lookup(op) > 0 &&
        (!stuck || op.getOpType() == "NextIteration")) {
      stuck = op;
      if (op.getOpType() == "NextIteration")
        break;
    }
  if (stuck)
    return nodeError(stuck)
           << "graph-gradient: the gradient cannot pass this cycle, which "
              "is outside any v1 loop frame (a NextIteration loop without "
              "Enter and Exit)";

  // The results: each x's (aggregated) gradient.
  SmallVector<Value> results;
  b.prefix = b.scope + "/";
  for (Value x : xs) {
    Value g;
    if (isa<BlockArgument>(x)) {
      // Sums of an argument's gradients, which no op aggregated.
      SmallVector<Value, 1> &slot = argGrads[x];
      if (slot.size() > 1) {
        FailureOr<Value> sum = multiDeviceAddN(b, slot, x.getLoc());
        if (failed(sum))
          return failure();
        slot.assign(1, *sum);
      }
      if (!slot.empty())
        g = slot.front();
    } else if (auto it = grads.find(x.getDefiningOp()); it != grads.end()) {
      auto &slot = it->second[cast<OpResult>(x).getResultNumber()];
      if (!slot.empty())
        g = slot.front();
    }
    std::optional<IndexedSlices> kept;
    if (auto it = g ? slices.find(g) : slices.end();
        keepSparseResults && it != slices.end()) {
      kept = IndexedSlices{g, it->second.first, it->second.second};
    } else if (g) {
      FailureOr<Value> dense = densify(b, g, x.getLoc());
      if (failed(dense))
        return failure();
      g = *dense;
    }
    sparseResults.push_back(kept);
    if (!g && unconnectedGradients == "zero") {
      FailureOr<Value> zeros = b.zerosLike(x, x.getLoc());
      if (failed(zeros))
        return failure();
      g = *zeros;
    }
    results.push_back(g);
  }
  return results;
}

FailureOr<SmallVector<Value>>
cleave::graph::addGradients(
    GraphOp graph, ArrayRef<Value> ys, ArrayRef<Value> xs,
    ArrayRef<Value> gradYs, ArrayRef<Value> stopGradients,
    const GradientOptions &options,
    SmallVectorImpl<std::optional<IndexedSlices>> *sparse) {
  Differentiator differentiator(options);
  auto results = differentiator.run(graph.getBody().front(), ys, xs, gradYs,
                                    stopGradients);
  if (succeeded(results) && sparse)
    *sparse = std::move(differentiator.sparseResults);
  return results;
}

void GraphGradientPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Gradient rules read their op's inputs by position.
  if (failed(validateNodeDefs(module)))
    return signalPassFailure();
  auto graphs = module.getOps<GraphOp>();
  if (graphs.empty()) {
    module.emitError("graph-gradient: the module has no graph.graph");
    return signalPassFailure();
  }
  GraphOp graph = *graphs.begin();
  if (failed(checkOptions(graph)))
    return signalPassFailure();
  TensorNameResolver tensors(graph, "graph-gradient");
  auto yValues = tensors.resolve(ys, "ys");
  auto xValues = tensors.resolve(xs, "xs");
  auto givenGradYs = tensors.resolve(gradYs, "grad-ys");
  auto stopValues = tensors.resolve(stopGradients, "stop-gradients");
  if (failed(yValues) || failed(xValues) || failed(givenGradYs) ||
      failed(stopValues))
    return signalPassFailure();
  GradientOptions options;
  options.aggregationMethod = aggregationMethod;
  options.gateGradients = gateGradients;
  options.colocateGradientsWithOps = colocateGradientsWithOps;
  options.unconnectedGradients = unconnectedGradients;
  options.scopeName = scopeName;
  FailureOr<SmallVector<Value>> grads = addGradients(
      graph, *yValues, *xValues, *givenGradYs, *stopValues, options);
  if (failed(grads))
    return signalPassFailure();
  if (resultNames.empty())
    return;
  NameUniquer names(graph.getBody().front());
  OpBuilder builder = OpBuilder::atBlockEnd(&graph.getBody().front());
  for (auto [x, g, name] : llvm::zip(*xValues, *grads, resultNames)) {
    NodeOp xOp = x.getDefiningOp<NodeOp>();
    if (!g) {
      nodeError(xOp) << "no gradient reaches '" << tensorName(x)
                     << "' from the ys (unconnected-gradients=zero gives "
                        "zeros)";
      return signalPassFailure();
    }
    if (names.isUsed(name)) {
      graph.emitError("graph-gradient: result name '")
          << name << "' is already used in the graph";
      return signalPassFailure();
    }
    std::string error;
    if (failed(createRegisteredNode(builder, xOp.getLoc(), "Identity", name, g,
                                    {}, {}, "", error))) {
      graph.emitError("graph-gradient: ") << error;
      return signalPassFailure();
    }
  }
}
