//===- LoopFrames.cpp - TensorFlow v1 while loops -------------------------===//
//
// Frames as TensorFlow's BuildControlFlowInfo assigns them (a node runs in
// its inputs' frame; Enter opens a child frame, Exit returns to the
// parent), the loops they form, and their functional form.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/LoopFrames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

static bool isEnter(NodeOp node) {
  return node.getOpType() == "Enter" || node.getOpType() == "RefEnter";
}

static bool isExit(NodeOp node) {
  return node.getOpType() == "Exit" || node.getOpType() == "RefExit";
}

SmallVector<Value> LoopFrame::getInputs() const {
  SmallVector<Value> inputs;
  for (LoopVariable v : variables)
    inputs.push_back(v.enter.getDataInputs()[0]);
  for (NodeOp invariant : invariants)
    inputs.push_back(invariant.getDataInputs()[0]);
  return inputs;
}

SmallVector<NodeOp> LoopFrame::getExits() const {
  SmallVector<NodeOp> exits;
  for (LoopVariable v : variables)
    if (v.exit)
      exits.push_back(v.exit);
  return exits;
}

NodeOp LoopFrame::getAnchor() const {
  for (LoopVariable v : variables)
    if (v.exit)
      return v.exit;
  return variables.empty() ? invariants.front() : variables.front().enter;
}

namespace {

/// The frame every node of a block runs in.
class FrameAnalysis {
public:
  struct Frame {
    std::string name;
    unsigned parent;
  };
  static constexpr unsigned kRoot = 0;

  LogicalResult run(Block &block);

  SmallVector<Frame> frames{{"", kRoot}};
  DenseMap<Operation *, unsigned> frameOf;
  /// Each Enter's child frame.
  DenseMap<Operation *, unsigned> entered;

private:
  /// The frame of the values `node` produces when it runs in `frame`.
  FailureOr<unsigned> outputFrame(NodeOp node, unsigned frame);

  std::map<std::pair<unsigned, std::string>, unsigned> ids;
};

} // namespace

FailureOr<unsigned> FrameAnalysis::outputFrame(NodeOp node, unsigned frame) {
  if (isEnter(node)) {
    std::optional<std::string> name = node.getTFString("frame_name");
    if (!name || name->empty())
      return nodeError(node) << "an Enter needs a frame_name", failure();
    auto [it, inserted] = ids.try_emplace({frame, *name}, frames.size());
    if (inserted)
      frames.push_back({*name, frame});
    entered[node] = it->second;
    return it->second;
  }
  if (isExit(node)) {
    if (frame == kRoot)
      return nodeError(node) << "an Exit outside any loop frame", failure();
    return frames[frame].parent;
  }
  return frame;
}

LogicalResult FrameAnalysis::run(Block &block) {
  // From the nodes whose inputs all come from outside the block, along
  // data and control edges.
  SmallVector<NodeOp> work;
  for (NodeOp node : block.getOps<NodeOp>())
    if (llvm::none_of(node.getInputs(), [&](Value in) {
          Operation *producer = in.getDefiningOp();
          return producer && producer->getBlock() == &block;
        })) {
      frameOf[node] = kRoot;
      work.push_back(node);
    }
  DenseMap<Operation *, NodeOp> reachedFrom;
  while (!work.empty()) {
    NodeOp node = work.pop_back_val();
    FailureOr<unsigned> out = outputFrame(node, frameOf[node]);
    if (failed(out))
      return failure();
    for (Operation *user : node->getUsers()) {
      auto consumer = dyn_cast<NodeOp>(user);
      if (!consumer)
        continue;
      auto [it, inserted] = frameOf.try_emplace(consumer, *out);
      if (inserted) {
        reachedFrom[consumer] = node;
        work.push_back(consumer);
      } else if (it->second != *out) {
        NodeOp other = reachedFrom.lookup(consumer);
        return nodeError(consumer)
               << "has inputs from different frames. The input '"
               << node.getName() << "' is in frame '" << frames[*out].name
               << "'. The input '" << (other ? other.getName() : "")
               << "' is in frame '" << frames[it->second].name << "'.";
      }
    }
  }
  return success();
}

/// The variables, invariants and LoopCond of a loop whose members are
/// known; diagnoses what tf.while_loop would not have built.
static LogicalResult analyzeLoop(LoopFrame &loop, const FrameAnalysis &analysis,
                                 unsigned frame) {
  auto formError = [&](NodeOp node) {
    return nodeError(node) << "v1 loop '" << loop.name
                           << "' is not in tf.while_loop's form: ";
  };
  for (NodeOp node : loop.members) {
    if (analysis.entered.lookup(node) != frame || !isEnter(node) ||
        analysis.frameOf.lookup(node) != FrameAnalysis::kRoot)
      continue;
    if (node.getTFBool("is_constant").value_or(false))
      loop.invariants.push_back(node);
    else
      loop.variables.push_back({node, {}, {}, {}, {}});
  }
  for (LoopVariable &v : loop.variables) {
    Value entered = v.enter.getOutputs()[0];
    v.merge = entered.hasOneUse()
                  ? dyn_cast<NodeOp>(*entered.getUsers().begin())
                  : NodeOp();
    if (!v.merge || v.merge.getOpType() != "Merge")
      return formError(v.enter) << "a loop variable's Enter feeds one Merge";
    ValueRange mergeInputs = v.merge.getDataInputs();
    if (mergeInputs.size() != 2)
      return formError(v.merge) << "a loop variable's Merge has two inputs";
    Value back = mergeInputs[0] == entered ? mergeInputs[1] : mergeInputs[0];
    v.nextIteration = back.getDefiningOp<NodeOp>();
    if (!v.nextIteration || v.nextIteration.getOpType() != "NextIteration")
      return formError(v.merge)
             << "a loop variable's Merge takes its Enter and a NextIteration";
    for (Operation *user : v.merge.getOutputs()[0].getUsers()) {
      auto node = dyn_cast<NodeOp>(user);
      if (!node || node.getOpType() != "Switch" ||
          node.getDataInputs().size() != 2 ||
          node.getDataInputs()[0] != v.merge.getOutputs()[0])
        continue;
      auto pred = node.getDataInputs()[1].getDefiningOp<NodeOp>();
      if (!pred || pred.getOpType() != "LoopCond")
        continue;
      if (v.switchNode)
        return formError(v.merge) << "a loop variable has one Switch";
      if (loop.loopCond && loop.loopCond != pred)
        return formError(pred) << "the loop has one LoopCond";
      v.switchNode = node;
      loop.loopCond = pred;
    }
    if (!v.switchNode)
      return formError(v.merge)
             << "a loop variable's Merge feeds a Switch on the LoopCond";
    for (Operation *user : v.switchNode.getOutputs()[0].getUsers()) {
      auto node = dyn_cast<NodeOp>(user);
      if (!node || !isExit(node))
        return formError(node ? node : v.switchNode)
               << "the false output of a loop variable's Switch feeds its "
                  "Exit only";
      if (v.exit)
        return formError(node) << "a loop variable has one Exit";
      v.exit = node;
    }
  }
  if (loop.variables.empty())
    return formError(loop.members.front()) << "a loop has a loop variable";
  return success();
}

FailureOr<SmallVector<LoopFrame>> cleave::graph::findLoopFrames(Block &block) {
  FrameAnalysis analysis;
  if (failed(analysis.run(block)))
    return failure();
  // The loop each frame belongs to: its top-level ancestor.
  SmallVector<unsigned> topLevel(analysis.frames.size());
  std::map<unsigned, unsigned> loopIndex;
  SmallVector<LoopFrame> loops;
  SmallVector<unsigned> loopFrames;
  for (unsigned f = 1; f < analysis.frames.size(); ++f) {
    unsigned parent = analysis.frames[f].parent;
    // Frames are numbered as they are found, parents first.
    topLevel[f] = parent == FrameAnalysis::kRoot ? f : topLevel[parent];
    if (parent == FrameAnalysis::kRoot) {
      loopIndex[f] = loops.size();
      loops.push_back({});
      loops.back().name = analysis.frames[f].name;
      loopFrames.push_back(f);
    }
  }
  for (NodeOp node : block.getOps<NodeOp>()) {
    unsigned frame = analysis.frameOf.lookup(node);
    if (frame == FrameAnalysis::kRoot)
      frame = analysis.entered.lookup(node);
    if (frame != FrameAnalysis::kRoot)
      loops[loopIndex[topLevel[frame]]].members.push_back(node);
  }
  for (auto [loop, frame] : llvm::zip(loops, loopFrames))
    if (failed(analyzeLoop(loop, analysis, frame)))
      return failure();
  return loops;
}

namespace {

/// Copies the nodes of a loop into a function.
class LoopCopier {
public:
  LoopCopier(const LoopFrame &loop) : loop(loop) {
    members.insert(loop.members.begin(), loop.members.end());
    for (LoopVariable v : loop.variables)
      for (NodeOp node :
           {v.enter, v.merge, v.switchNode, v.exit, v.nextIteration})
        if (node)
          structural.insert(node);
    structural.insert(loop.invariants.begin(), loop.invariants.end());
    structural.insert(loop.loopCond);
  }

  /// The loop's nodes that compute `roots` from the values `mapping`
  /// maps, in block order.
  FailureOr<SmallVector<NodeOp>> collect(ArrayRef<Value> roots,
                                         const IRMapping &mapping);

  /// Copies `nodes` at the builder's insertion point (into a function),
  /// dropping control edges from the loop's structure: in TensorFlow they
  /// only hold constants in the loop's frame.
  void copy(OpBuilder &builder, ArrayRef<NodeOp> nodes, IRMapping &mapping);

  bool isStructural(Operation *op) const { return structural.contains(op); }

private:
  const LoopFrame &loop;
  llvm::DenseSet<Operation *> members, structural;
};

} // namespace

FailureOr<SmallVector<NodeOp>> LoopCopier::collect(ArrayRef<Value> roots,
                                                   const IRMapping &mapping) {
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> work(roots);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (mapping.contains(v))
      continue;
    auto producer = v.getDefiningOp<NodeOp>();
    if (!producer)
      return nodeError(loop.getAnchor())
                 << "v1 loop '" << loop.name
                 << "' reads a function argument without an Enter",
             failure();
    if (!needed.insert(producer))
      continue;
    // A constant without inputs runs in any frame.
    bool isConstant =
        producer.getOpType() == "Const" && producer.getInputs().empty();
    if (structural.contains(producer) ||
        (!members.contains(producer) && !isConstant))
      return nodeError(producer)
                 << "v1 loop '" << loop.name
                 << "' cannot be made functional: a node of its cond or body "
                    "uses this node, which is "
                 << (structural.contains(producer)
                         ? "part of the loop's structure"
                         : "outside the loop and not entered through an Enter"),
             failure();
    for (Value in : producer.getInputs()) {
      Operation *source = in.getDefiningOp();
      if (isa<ControlType>(in.getType()) &&
          (!source || structural.contains(source)))
        continue;
      work.push_back(in);
    }
  }
  SmallVector<Operation *> ordered(needed.begin(), needed.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<NodeOp> nodes;
  for (Operation *op : ordered)
    nodes.push_back(cast<NodeOp>(op));
  return nodes;
}

void LoopCopier::copy(OpBuilder &builder, ArrayRef<NodeOp> nodes,
                      IRMapping &mapping) {
  cloneNodesIntoFunction(builder, nodes, mapping);
}

FailureOr<FunctionalLoop>
cleave::graph::functionalizeLoop(const LoopFrame &loop, ModuleOp module) {
  LoopCopier copier(loop);
  SmallVector<Type> stateTypes;
  for (LoopVariable v : loop.variables)
    stateTypes.push_back(v.merge.getOutputs()[0].getType());
  for (NodeOp invariant : loop.invariants)
    stateTypes.push_back(invariant.getOutputs()[0].getType());
  unsigned numVariables = loop.variables.size();
  Location loc = loop.getAnchor().getLoc();
  auto mapInvariants = [&](IRMapping &mapping, ArrayRef<Value> args) {
    for (auto [i, invariant] : llvm::enumerate(loop.invariants))
      mapping.map(NodeOp(invariant).getOutputs()[0], args[numVariables + i]);
  };

  // cond: the LoopCond's input, from the Merges' outputs.
  llvm::DenseSet<Operation *> inCond;
  auto cond = buildLibraryFunction(
      module, "_functionalize_cond", stateTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        IRMapping mapping;
        for (auto [i, v] : llvm::enumerate(loop.variables))
          mapping.map(NodeOp(v.merge).getOutputs()[0], args[i]);
        mapInvariants(mapping, args);
        Value pred = NodeOp(loop.loopCond).getDataInputs()[0];
        FailureOr<SmallVector<NodeOp>> nodes = copier.collect(pred, mapping);
        if (failed(nodes))
          return failure();
        inCond.insert(nodes->begin(), nodes->end());
        copier.copy(builder, *nodes, mapping);
        return SmallVector<Value>{mapping.lookupOrDefault(pred)};
      },
      loc);
  if (failed(cond))
    return failure();

  // body: the NextIterations' inputs from the Switches' true outputs, and
  // the loop's other nodes (side effects), which TensorFlow runs too.
  auto body = buildLibraryFunction(
      module, "_functionalize_body", stateTypes,
      [&](OpBuilder &builder,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        IRMapping mapping;
        for (auto [i, v] : llvm::enumerate(loop.variables))
          mapping.map(NodeOp(v.switchNode).getOutputs()[1], args[i]);
        mapInvariants(mapping, args);
        SmallVector<Value> roots;
        for (LoopVariable v : loop.variables)
          roots.push_back(v.nextIteration.getDataInputs()[0]);
        for (NodeOp member : loop.members)
          if (!copier.isStructural(member) && !inCond.contains(member))
            roots.push_back(member.getControl());
        FailureOr<SmallVector<NodeOp>> nodes = copier.collect(roots, mapping);
        if (failed(nodes))
          return failure();
        copier.copy(builder, *nodes, mapping);
        SmallVector<Value> results;
        for (LoopVariable v : loop.variables)
          results.push_back(
              mapping.lookupOrDefault(v.nextIteration.getDataInputs()[0]));
        llvm::append_range(results, args.drop_front(numVariables));
        return results;
      },
      loc);
  if (failed(body))
    return failure();
  return FunctionalLoop{*cond, *body};
}
