//===- FunctionalizeConds.cpp - graph-functionalize-conds -----------------===//
//
// Each TensorFlow v1 conditional (the Switch and Merge nodes tf.cond writes)
// becomes an If node over a then and an else function, as
// functionalize_cond.cc does: every node gets a cond state (the Switch
// branches it lies on, TensorFlow's CondState), a Merge joins two states that
// differ in one predicate's branch, and the nodes of the innermost
// conditional's branches move into the functions. Loops' frames are left to
// graph-functionalize-loops.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/LoopFrames.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHFUNCTIONALIZECONDSPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {
enum Branch : unsigned { kElse = 0, kThen = 1 };

/// The Switch branches a node lies on: (predicate, branch) pairs, sorted by
/// the predicate's number. TensorFlow's CondState.
using CondState = SmallVector<std::pair<Value, unsigned>, 2>;
} // namespace

static bool isSwitch(NodeOp node) {
  return node.getOpType() == "Switch" || node.getOpType() == "RefSwitch";
}

static bool isMerge(NodeOp node) {
  return node.getOpType() == "Merge" || node.getOpType() == "RefMerge";
}

/// A Const without inputs: copied into the branches that use it, as
/// TensorFlow does for constants that are not dominated by a Switch.
static bool isFreeConstant(NodeOp node) {
  return node.getOpType() == "Const" && node.getInputs().empty();
}

/// The predicate of a Switch, looking through Identity nodes as
/// GetSwitchPredicate does.
static Value getPredicate(NodeOp switchNode) {
  Value pred = switchNode.getDataInputs()[1];
  while (auto id = pred.getDefiningOp<NodeOp>()) {
    if (id.getOpType() != "Identity" || id.getDataInputs().size() != 1)
      break;
    pred = id.getDataInputs()[0];
  }
  return pred;
}

static std::string describeValue(Value v) {
  if (auto node = v.getDefiningOp<NodeOp>())
    return (node.getName() + ":" + Twine(cast<OpResult>(v).getResultNumber()))
        .str();
  return ("arg" + Twine(cast<BlockArgument>(v).getArgNumber())).str();
}

/// TensorFlow's DebugString of a CondState: `{s(p:0,then), ...}`.
static std::string describe(const CondState &state) {
  std::string s = "{";
  for (auto [i, entry] : llvm::enumerate(state))
    s += (i ? ", " : "") + ("s(" + describeValue(entry.first) + "," +
                            (entry.second == kThen ? "then" : "else") + ")");
  return s + "}";
}

/// Whether two states hold the same branches.
static bool isSameState(const CondState &a, const CondState &b) {
  return a.size() == b.size() &&
         llvm::all_of(a, [&](auto &e) { return llvm::is_contained(b, e); });
}

namespace {
/// One conditional: the Merges on `pred` whose state is `outer`.
struct Conditional {
  Value pred;
  CondState outer;
  /// Sorted by name, as TensorFlow orders them: the If's outputs.
  SmallVector<NodeOp> merges;
};

/// The cond states of a block's nodes.
class CondAnalysis {
public:
  CondAnalysis(Block &block, const llvm::DenseSet<Operation *> &loopMembers,
               const DenseMap<Operation *, CondState> &forced)
      : block(block), loopMembers(loopMembers), forced(forced) {}

  LogicalResult run();

  /// The state of `v` as its users see it: a Switch's data outputs add the
  /// Switch's branch.
  CondState along(Value v) const;

  bool isCondSwitch(NodeOp node) const {
    return isSwitch(node) && !loopMembers.contains(node) &&
           node.getDataInputs().size() == 2;
  }
  bool isCondMerge(NodeOp node) const {
    return isMerge(node) && !loopMembers.contains(node);
  }

  DenseMap<Operation *, CondState> state;
  /// The predicate each conditional Merge joins on.
  DenseMap<Operation *, Value> mergePred;
  SmallVector<Conditional> conds;

private:
  /// Nodes in an order where each comes after its inputs, loops' back edges
  /// aside.
  SmallVector<NodeOp> topologicalOrder();
  LogicalResult joinInto(NodeOp node, CondState &into, const CondState &from);
  LogicalResult visitMerge(NodeOp merge);
  unsigned predId(Value pred) {
    auto [it, inserted] = predIds.try_emplace(pred, predIds.size());
    return it->second;
  }

  Block &block;
  const llvm::DenseSet<Operation *> &loopMembers;
  const DenseMap<Operation *, CondState> &forced;
  DenseMap<Value, unsigned> predIds;
};
} // namespace

SmallVector<NodeOp> CondAnalysis::topologicalOrder() {
  auto isBackEdge = [&](NodeOp user, Value in) {
    auto producer = in.getDefiningOp<NodeOp>();
    return loopMembers.contains(user) && isMerge(user) && producer &&
           producer.getOpType() == "NextIteration";
  };
  DenseMap<Operation *, unsigned> pending;
  SmallVector<NodeOp> ready, order;
  for (NodeOp node : block.getOps<NodeOp>()) {
    unsigned n = 0;
    for (Value in : node.getInputs()) {
      Operation *producer = in.getDefiningOp();
      if (producer && producer->getBlock() == &block && !isBackEdge(node, in))
        ++n;
    }
    pending[node] = n;
    if (!n)
      ready.push_back(node);
  }
  std::reverse(ready.begin(), ready.end());
  while (!ready.empty()) {
    NodeOp node = ready.pop_back_val();
    order.push_back(node);
    for (OpOperand &use : node->getUses()) {
      auto user = dyn_cast<NodeOp>(use.getOwner());
      if (user && user->getBlock() == &block && !isBackEdge(user, use.get()) &&
          --pending[user] == 0)
        ready.push_back(user);
    }
  }
  // Cycles that are no loop's: visit what is left in block order.
  if (order.size() != pending.size())
    for (NodeOp node : block.getOps<NodeOp>())
      if (pending[node])
        order.push_back(node);
  return order;
}

CondState CondAnalysis::along(Value v) const {
  auto producer = v.getDefiningOp<NodeOp>();
  if (!producer || producer->getBlock() != &block)
    return {};
  CondState s = state.lookup(producer);
  if (isCondSwitch(producer) && !isa<ControlType>(v.getType())) {
    Value pred = getPredicate(producer);
    unsigned branch = cast<OpResult>(v).getResultNumber();
    auto it = llvm::find_if(s, [&](auto &e) { return e.first == pred; });
    if (it == s.end()) {
      s.push_back({pred, branch});
      llvm::sort(s, [&](auto &a, auto &b) {
        return predIds.lookup(a.first) < predIds.lookup(b.first);
      });
    } else {
      it->second = branch;
    }
  }
  return s;
}

LogicalResult CondAnalysis::joinInto(NodeOp node, CondState &into,
                                     const CondState &from) {
  for (auto entry : from) {
    auto it =
        llvm::find_if(into, [&](auto &e) { return e.first == entry.first; });
    if (it == into.end()) {
      into.push_back(entry);
      continue;
    }
    if (it->second != entry.second)
      return nodeError(node) << "Graph contains node with inputs predicated "
                                "on incompatible predicates: "
                             << describe(into) << " and " << describe(from);
  }
  llvm::sort(into, [&](auto &a, auto &b) {
    return predIds.lookup(a.first) < predIds.lookup(b.first);
  });
  return success();
}

LogicalResult CondAnalysis::visitMerge(NodeOp merge) {
  ValueRange inputs = merge.getDataInputs();
  if (inputs.size() != 2)
    return nodeError(merge) << "only has " << inputs.size()
                            << " inputs, while only merge nodes with two "
                               "inputs supported.";
  CondState a = along(inputs[0]), b = along(inputs[1]);
  if (a.empty() || b.empty())
    return nodeError(merge)
           << "Merge node has input that's not in any "
              "CondContext: '"
           << describeValue(a.empty() ? inputs[0] : inputs[1]) << "'";
  CondState diff, common;
  for (auto e : a)
    (llvm::is_contained(b, e) ? common : diff).push_back(e);
  for (auto e : b)
    if (!llvm::is_contained(a, e))
      diff.push_back(e);
  if (diff.size() > 2)
    return nodeError(merge)
           << "Merge of two inputs that differ on more than one predicate "
           << describe(a) << " and " << describe(b);
  if (diff.size() != 2 || diff[0].first != diff[1].first)
    return nodeError(merge)
           << "Unable to determine predicate for merge node: its inputs are "
              "predicated on "
           << describe(a) << " and " << describe(b);
  mergePred[merge] = diff[0].first;
  state[merge] = common;
  return success();
}

LogicalResult CondAnalysis::run() {
  for (NodeOp node : topologicalOrder()) {
    if (isCondSwitch(node))
      predId(getPredicate(node));
    if (isCondMerge(node)) {
      if (failed(visitMerge(node)))
        return failure();
      continue;
    }
    CondState s = forced.lookup(node);
    for (Value in : node.getInputs()) {
      auto producer = in.getDefiningOp<NodeOp>();
      if (isa<ControlType>(in.getType()) && producer && isCondSwitch(producer))
        return nodeError(node)
               << "has a control input from Switch '" << producer.getName()
               << "', which graph-functionalize-conds does not support";
      // A loop's back edge: the loop's state comes in through its Enter.
      if (producer && isMerge(node) && loopMembers.contains(node) &&
          producer.getOpType() == "NextIteration")
        continue;
      if (failed(joinInto(node, s, along(in))))
        return failure();
    }
    state[node] = s;
  }

  // Group the Merges into conditionals.
  std::map<std::pair<unsigned, std::string>, unsigned> index;
  for (NodeOp node : block.getOps<NodeOp>()) {
    auto it = mergePred.find(node);
    if (it == mergePred.end())
      continue;
    const CondState &outer = state[node];
    std::string key;
    for (auto [pred, branch] : outer)
      key += std::to_string(predIds.lookup(pred)) + (branch ? "t" : "e");
    auto [slot, inserted] =
        index.try_emplace({predIds.lookup(it->second), key}, conds.size());
    if (inserted)
      conds.push_back({it->second, outer, {}});
    conds[slot->second].merges.push_back(node);
  }
  for (Conditional &c : conds)
    llvm::sort(c.merges,
               [](NodeOp a, NodeOp b) { return a.getName() < b.getName(); });

  // A Switch whose predicate no Merge joins on.
  llvm::DenseSet<Value> joined;
  for (auto [merge, pred] : mergePred)
    joined.insert(pred);
  for (NodeOp node : block.getOps<NodeOp>())
    if (isCondSwitch(node) && !joined.contains(getPredicate(node)))
      return nodeError(node)
             << "Switch on predicate '" << describeValue(getPredicate(node))
             << "' whose branches never meet in a Merge";
  return success();
}

namespace {

class GraphFunctionalizeCondsPass
    : public graph::impl::GraphFunctionalizeCondsPassBase<
          GraphFunctionalizeCondsPass> {
public:
  void runOnOperation() override;

private:
  /// Functionalizes the conditionals of `block`, innermost first.
  LogicalResult functionalizeBlock(Block &block);
  /// Puts an If in place of `cond`.
  LogicalResult replaceCond(Conditional cond, const CondAnalysis &analysis);

  /// The outer state of the If nodes made here, which their inputs alone
  /// may not show.
  DenseMap<Operation *, CondState> forced;
};

} // namespace

LogicalResult
GraphFunctionalizeCondsPass::replaceCond(Conditional cond,
                                         const CondAnalysis &analysis) {
  MLIRContext *ctx = &getContext();
  ModuleOp module = getOperation();
  Block *block = cond.merges.front()->getBlock();
  auto branchState = [&](unsigned b) {
    CondState s = cond.outer;
    s.push_back({cond.pred, b});
    return s;
  };
  CondState states[2] = {branchState(kElse), branchState(kThen)};
  // The nodes of each branch, in block order.
  SmallVector<NodeOp> branchNodes[2];
  llvm::DenseSet<Operation *> inBranch[2];
  for (NodeOp node : block->getOps<NodeOp>()) {
    auto it = analysis.state.find(node);
    if (it == analysis.state.end() || analysis.mergePred.count(node))
      continue;
    for (unsigned b : {kElse, kThen})
      if (isSameState(it->second, states[b])) {
        branchNodes[b].push_back(node);
        inBranch[b].insert(node);
      }
  }
  auto isCondSwitch = [&](Operation *op) {
    auto node = dyn_cast_or_null<NodeOp>(op);
    return node && analysis.isCondSwitch(node) &&
           getPredicate(node) == cond.pred;
  };

  // The If's inputs: the values the Switches pass in and the other outside
  // values the branches read; its control inputs: those of the Switches,
  // the Merges and the branch nodes from outside.
  llvm::SetVector<Value> args, controls;
  llvm::SetVector<Operation *> switches;
  SmallVector<NodeOp> constants[2];
  auto addControl = [&](Value control) {
    if (!isCondSwitch(control.getDefiningOp()))
      controls.insert(control);
  };
  for (unsigned b : {kElse, kThen})
    for (NodeOp node : branchNodes[b])
      for (Value in : node.getInputs()) {
        Operation *producer = in.getDefiningOp();
        if (producer && inBranch[b].contains(producer))
          continue;
        if (isa<ControlType>(in.getType())) {
          addControl(in);
        } else if (isCondSwitch(producer)) {
          switches.insert(producer);
        } else if (auto c = dyn_cast_or_null<NodeOp>(producer);
                   c && isFreeConstant(c)) {
          if (!llvm::is_contained(constants[b], c))
            constants[b].push_back(c);
        } else {
          args.insert(in);
        }
      }
  // Which Merge input comes from which branch.
  SmallVector<std::array<unsigned, 2>> mergeInputs;
  for (NodeOp merge : cond.merges) {
    std::array<unsigned, 2> inputOf{};
    for (auto [i, in] : llvm::enumerate(merge.getDataInputs())) {
      CondState s = analysis.along(in);
      for (auto [pred, b] : s)
        if (pred == cond.pred)
          inputOf[b] = i;
      if (isCondSwitch(in.getDefiningOp()))
        switches.insert(in.getDefiningOp());
    }
    mergeInputs.push_back(inputOf);
    for (Value control : merge.getControlInputs())
      if (!inBranch[kElse].contains(control.getDefiningOp()) &&
          !inBranch[kThen].contains(control.getDefiningOp()))
        addControl(control);
  }
  // Switches on the predicate in the outer state whose outputs are unused.
  for (NodeOp node : block->getOps<NodeOp>())
    if (isCondSwitch(node) && node->use_empty() &&
        isSameState(analysis.state.lookup(node), cond.outer))
      switches.insert(node);
  SmallVector<Operation *> switchOrder(switches.begin(), switches.end());
  llvm::sort(switchOrder,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Value> inputs;
  llvm::SetVector<Value> switched;
  for (Operation *op : switchOrder) {
    auto node = cast<NodeOp>(op);
    switched.insert(node.getDataInputs()[0]);
    for (Value control : node.getControlInputs())
      addControl(control);
  }
  // The switched values first, in the Switches' order, then the rest.
  SmallVector<Value> argValues(switched.begin(), switched.end());
  for (Value v : args)
    if (!switched.contains(v))
      argValues.push_back(v);
  SmallVector<Type> argTypes;
  for (Value v : argValues)
    argTypes.push_back(v.getType());
  auto argIndex = [&](Value v) {
    return unsigned(llvm::find(argValues, v) - argValues.begin());
  };

  bool anyIndexUsed = llvm::any_of(
      cond.merges, [](NodeOp m) { return !m.getOutputs()[1].use_empty(); });
  NodeOp anchor = cond.merges.front();
  Location loc = anchor.getLoc();
  FuncOp functions[2];
  for (unsigned b : {kElse, kThen}) {
    auto built = buildLibraryFunction(
        module,
        b == kThen ? "_functionalize_if_then_branch"
                   : "_functionalize_if_else_branch",
        argTypes,
        [&](OpBuilder &builder,
            ArrayRef<Value> fargs) -> FailureOr<SmallVector<Value>> {
          IRMapping mapping;
          for (Operation *op : switches)
            mapping.map(op->getResult(b),
                        fargs[argIndex(cast<NodeOp>(op).getDataInputs()[0])]);
          for (Value v : args)
            mapping.map(v, fargs[argIndex(v)]);
          SmallVector<NodeOp> nodes(constants[b]);
          llvm::append_range(nodes, branchNodes[b]);
          // Control inputs from outside moved to the If.
          cloneNodesIntoFunction(builder, nodes, mapping);
          SmallVector<Value> results;
          for (auto [merge, inputOf] : llvm::zip(cond.merges, mergeInputs))
            results.push_back(
                mapping.lookupOrDefault(merge.getDataInputs()[inputOf[b]]));
          if (!anyIndexUsed)
            return results;
          // Merge's value_index: which input was live, a constant here.
          for (auto [merge, inputOf] : llvm::zip(cond.merges, mergeInputs)) {
            if (merge.getOutputs()[1].use_empty())
              continue;
            Type i32 = builder.getI32Type();
            auto tensorType = RankedTensorType::get({}, i32);
            auto value = TensorAttr::get(
                ctx, i32, ShapeAttr::get(ctx, {}, false, {}),
                DenseElementsAttr::get(tensorType,
                                       builder.getI32IntegerAttr(inputOf[b])),
                1, {});
            std::string error;
            FailureOr<NodeOp> index = createRegisteredNode(
                builder, merge.getLoc(), "Const",
                (merge.getName() + "/value_index").str(), {}, {},
                {builder.getNamedAttr("dtype", TypeAttr::get(i32)),
                 builder.getNamedAttr("value", value)},
                merge.getDevice().value_or(""), error);
            if (failed(index))
              return nodeError(merge) << "graph-functionalize-conds: " << error,
                     failure();
            results.push_back(index->getOutputs()[0]);
          }
          return results;
        },
        loc);
    if (failed(built))
      return failure();
    functions[b] = *built;
  }

  // The If, named after the first Merge as TensorFlow names it.
  OpBuilder builder(anchor);
  auto funcAttr = [&](FuncOp f) {
    return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                         DictionaryAttr::get(ctx));
  };
  SmallVector<Attribute> outTypes, outShapes;
  bool shapesKnown = true;
  for (NodeOp merge : cond.merges) {
    auto type = cast<TensorType>(merge.getOutputs()[0].getType());
    outTypes.push_back(TypeAttr::get(type.getElementType()));
    if (!type.hasRank())
      shapesKnown = false;
    else
      outShapes.push_back(ShapeAttr::get(ctx, type.getShape()));
  }
  for (NodeOp merge : cond.merges)
    if (!merge.getOutputs()[1].use_empty()) {
      outTypes.push_back(TypeAttr::get(builder.getI32Type()));
      outShapes.push_back(ShapeAttr::get(ctx, ArrayRef<int64_t>{}));
    }
  SmallVector<NamedAttribute> attrs{
      builder.getNamedAttr("then_branch", funcAttr(functions[kThen])),
      builder.getNamedAttr("else_branch", funcAttr(functions[kElse])),
      builder.getNamedAttr("Tout", builder.getArrayAttr(outTypes))};
  if (shapesKnown)
    attrs.push_back(
        builder.getNamedAttr("output_shapes", builder.getArrayAttr(outShapes)));
  if (auto predNode = cond.pred.getDefiningOp<NodeOp>())
    for (StringRef name : {"_xla_frontend_attributes",
                           "_xla_outside_compilation", "_tpu_replicate"})
      if (Attribute a = predNode.getTFAttr(name))
        attrs.push_back(builder.getNamedAttr(name, a));
  inputs.push_back(cond.pred);
  llvm::append_range(inputs, argValues);
  std::string error;
  FailureOr<NodeOp> ifNode = createRegisteredNode(
      builder, loc, "If", (anchor.getName() + "_if").str(), inputs,
      controls.getArrayRef(), attrs, anchor.getDevice().value_or(""), error);
  if (failed(ifNode))
    return nodeError(anchor) << "graph-functionalize-conds: " << error;
  if (!cond.outer.empty())
    forced[*ifNode] = cond.outer;

  // The Merges' users read the If; an Identity (IdentityN with the
  // value_index) keeps each Merge's name.
  unsigned nextIndex = cond.merges.size();
  SmallVector<std::pair<NodeOp, SmallVector<Value>>> keepers;
  for (auto [i, merge] : llvm::enumerate(cond.merges)) {
    SmallVector<Value> kept{ifNode->getOutputs()[i]};
    merge.getOutputs()[0].replaceAllUsesWith(ifNode->getOutputs()[i]);
    if (!merge.getOutputs()[1].use_empty()) {
      Value index = ifNode->getOutputs()[nextIndex++];
      merge.getOutputs()[1].replaceAllUsesWith(index);
      kept.push_back(index);
    }
    merge.getControl().replaceAllUsesWith(ifNode->getControl());
    keepers.push_back({merge, kept});
  }
  for (auto &[merge, kept] : keepers) {
    FailureOr<NodeOp> keeper = createRegisteredNode(
        builder, merge.getLoc(), kept.size() == 1 ? "Identity" : "IdentityN",
        merge.getName(), kept, {}, {}, merge.getDevice().value_or(""), error);
    if (failed(keeper))
      return nodeError(merge) << "graph-functionalize-conds: " << error;
  }

  // The branches are used only inside the conditional.
  llvm::DenseSet<Operation *> members(inBranch[kElse].begin(),
                                      inBranch[kElse].end());
  members.insert(inBranch[kThen].begin(), inBranch[kThen].end());
  for (NodeOp merge : cond.merges)
    members.insert(merge);
  for (unsigned b : {kElse, kThen})
    for (NodeOp node : branchNodes[b])
      for (Operation *user : node->getUsers())
        if (!members.contains(user))
          return nodeError(cast<NodeOp>(user))
                 << "graph-functionalize-conds: uses '" << node.getName()
                 << "' of the conditional on '" << describeValue(cond.pred)
                 << "' from outside it other than through a Merge";
  for (Operation *op : members)
    op->dropAllReferences();
  for (Operation *op : members) {
    forced.erase(op);
    op->erase();
  }
  // A Switch inside a branch (one conditional's Switch feeding another's
  // branch) was erased with the members.
  for (Operation *op : switches)
    if (!members.contains(op) && op->use_empty())
      op->erase();
  return success();
}

LogicalResult GraphFunctionalizeCondsPass::functionalizeBlock(Block &block) {
  FailureOr<SmallVector<LoopFrame>> loops = findLoopFrames(block);
  if (failed(loops))
    return failure();
  llvm::DenseSet<Operation *> loopMembers;
  for (const LoopFrame &loop : *loops)
    loopMembers.insert(loop.members.begin(), loop.members.end());
  while (true) {
    CondAnalysis analysis(block, loopMembers, forced);
    if (failed(analysis.run()))
      return failure();
    if (analysis.conds.empty())
      break;
    // The innermost conditional first: its If becomes a node of the
    // branch around it.
    const Conditional *innermost = &analysis.conds.front();
    for (const Conditional &c : analysis.conds)
      if (c.outer.size() > innermost->outer.size())
        innermost = &c;
    if (failed(replaceCond(*innermost, analysis)))
      return failure();
  }
  // Switches left are on no conditional's branches.
  for (NodeOp node : block.getOps<NodeOp>())
    if (isSwitch(node) && !loopMembers.contains(node))
      return nodeError(node)
             << "Switch on predicate '" << describeValue(getPredicate(node))
             << "' whose branches never meet in a Merge";
  return success();
}

void GraphFunctionalizeCondsPass::runOnOperation() {
  // Switch and Merge are read by position: a malformed one is an error.
  if (failed(validateNodeDefs(getOperation())))
    return signalPassFailure();
  for (Block *block : getGraphBodies(getOperation()))
    if (failed(functionalizeBlock(*block)))
      return signalPassFailure();
}
