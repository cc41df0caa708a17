//===- AutoClustering.cpp - clusters of compilable nodes ------------------===//
//
// Cycle safety without a cycle detector: every needed node gets a level,
// the largest number of non-compilable nodes on a path from a source to it
// (a compilable node after a non-compilable one is one level higher).
// Compilable nodes joined by an edge on the same level share a cluster. A
// path that leaves a cluster through a non-compilable node comes back at a
// higher level, so no cluster can reach itself through the rest of the
// graph, and edges between clusters only go up: the clustered graph is
// acyclic. Values of ref type never cross a cluster boundary, and resource
// handles only enter one: nodes that would make them cross stay out, and
// the levels are computed again.
//
//===----------------------------------------------------------------------===//

#include "cleave/AutoClustering/AutoClustering.h"
#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/HostTransfers.h"
#include "cleave/Ops/OpRegistry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <deque>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

/// Whether values of `type` can live in compiled code.
static bool isCompilableType(Type type) {
  if (isa<ControlType>(type))
    return true;
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return false;
  Type element = tensor.getElementType();
  if (auto ref = dyn_cast<RefType>(element))
    element = ref.getElementType();
  // A TensorList compiles as a buffer while it stays inside its cluster
  // (dropBoundaryViolations).
  if (isa<ResourceType, VariantType>(element))
    return true;
  int32_t dtype = typeToDataType(element);
  return dtype > 0 &&
         conversion::getLoweredElementType(type.getContext(), dtype);
}

static bool isRefValue(Value v) {
  auto tensor = dyn_cast<TensorType>(v.getType());
  return tensor && isa<RefType>(tensor.getElementType());
}

static bool isResourceValue(Value v) {
  auto tensor = dyn_cast<TensorType>(v.getType());
  return tensor && isa<ResourceType>(tensor.getElementType());
}

static bool isVariantValue(Value v) {
  auto tensor = dyn_cast<TensorType>(v.getType());
  return tensor && isa<VariantType>(tensor.getElementType());
}

/// The elements of `v` when a Const node makes it and they are integers.
static std::optional<SmallVector<int64_t>> constantInts(Value v) {
  auto node = v.getDefiningOp<NodeOp>();
  if (!node || node.getOpType() != "Const")
    return std::nullopt;
  auto tensor = dyn_cast_or_null<TensorAttr>(node.getTFAttr("value"));
  auto dense = tensor ? dyn_cast_or_null<DenseIntElementsAttr>(
                            tensor.getValue())
                      : DenseIntElementsAttr();
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &value : dense.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

/// Why a node that makes a TensorList cannot make it in compiled code
/// (ListLowerings.cpp), where its constant inputs tell already; empty
/// otherwise. Such a list stays interpreted, and so do the nodes it
/// reaches, instead of the whole cluster failing to compile.
static std::string whyListDoesNotCompile(NodeOp node) {
  StringRef op = node.getOpType();
  if (op != "EmptyTensorList" && op != "TensorListReserve")
    return "";
  ValueRange inputs = node.getDataInputs();
  if (inputs.size() < 2)
    return "";
  if (auto shape = constantInts(inputs[0]);
      shape && llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return "a TensorList whose element shape is not fully known";
  if (auto bound = constantInts(inputs[1]);
      op == "EmptyTensorList" && bound && !bound->empty() && (*bound)[0] < 0)
    return "a TensorList without a bound (max_num_elements -1)";
  return "";
}

/// Ops that are not worth a cluster on their own.
static bool isTrivial(StringRef op) {
  return op == "Const" || op == "Identity" || op == "NoOp" ||
         op == "VariableV2" || op == "Variable" || op == "VarHandleOp" ||
         op == "Shape" || op == "Size" || op == "Rank" || op == "ShapeN" ||
         op == "Snapshot" || op == "StopGradient" || op == "IdentityN";
}

namespace {
class Clusterer {
public:
  /// Clusters the nodes of `body`: the top-level graph, pruned to what
  /// `signature` needs, or (`isDevice`) the body of a device computation
  /// (a graph.cluster), all of whose nodes run.
  Clusterer(ModuleOp module, Block &body, const jit::RunSignature &signature,
            bool isDevice)
      : module(module), body(body), signature(signature), isDevice(isDevice) {}

  LogicalResult run(std::vector<jit::ClusteringDecision> &decisions);

private:
  LogicalResult findNeeded();
  void findCandidates();
  void formClusters();
  bool dropBoundaryViolations();
  LogicalResult encapsulate(MutableArrayRef<NodeOp> members, StringRef name);

  ModuleOp module;
  Block &body;
  const jit::RunSignature &signature;
  bool isDevice;
  /// The values a unit reads: a node's inputs; for a graph.cluster or
  /// graph.replicate, its operands and the values of `body` its regions
  /// use.
  ValueRange unitInputs(Operation *unit);
  /// Whether `user` is kept only because a fed value's producer reads
  /// through it (the run does not run it).
  bool isKeptOnly(Operation *user) {
    Operation *unit = unitOf(user);
    return unit && keptOnly.count(unit);
  }
  /// The unit of `body` that holds `user` (null: none, as in a function).
  Operation *unitOf(Operation *user) {
    return body.findAncestorOpInBlock(*user);
  }

  llvm::StringMap<NodeOp> byName;
  /// The graph.cluster / graph.replicate regions of the top-level graph,
  /// by the names runs give them (metadata, TPUReplicatedOutput).
  llvm::StringMap<Operation *> regionsByName;
  llvm::DenseMap<Operation *, SmallVector<Value>> regionInputs;
  llvm::DenseSet<Value> fed;
  llvm::DenseSet<Operation *> needed;
  /// The units kept (not needed) as fed values' producers and what they
  /// read.
  llvm::DenseSet<Operation *> keptOnly;
  /// Needed units (nodes and regions) in topological order.
  llvm::SmallVector<Operation *> order;
  llvm::DenseMap<Operation *, std::string> reasons;
  llvm::DenseSet<Operation *> candidates;
  llvm::EquivalenceClasses<Operation *> clusters;
  /// Nodes fetched or run as targets: they keep their names.
  llvm::StringSet<> named;
  /// A fetch or target names nothing: the graph stays as it is, so that
  /// the run's error sees (and suggests) every name.
  bool unknownName = false;
};

ValueRange Clusterer::unitInputs(Operation *unit) {
  if (auto node = dyn_cast<NodeOp>(unit))
    return node.getInputs();
  auto [it, inserted] = regionInputs.try_emplace(unit);
  if (inserted) {
    it->second.append(unit->operand_begin(), unit->operand_end());
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(unit->getRegions(), used);
    for (Value v : used)
      if (v.getParentBlock() == &body && !llvm::is_contained(it->second, v))
        it->second.push_back(v);
  }
  return it->second;
}

LogicalResult Clusterer::findNeeded() {
  for (Operation &op : body) {
    if (isDevice && op.hasTrait<OpTrait::IsTerminator>())
      continue;
    // A formed replicated computation is a unit that never compiles here
    // (its device side was clustered on its own). Runs that name its nodes
    // need it (and the interpreter says they are sealed).
    if (isa<ClusterOp, ReplicateOp>(op))
      forEachNodeOfComputation(
          &op, [&](NodeOp inner) { regionsByName[inner.getName()] = &op; });
    if (auto cluster = dyn_cast<ClusterOp>(op)) {
      regionsByName[cluster.getMetadataName()] = &op;
      continue;
    }
    if (auto replicate = dyn_cast<ReplicateOp>(op)) {
      regionsByName[replicate.getCluster().getMetadataName()] = &op;
      for (Attribute entry : replicate.getOutputNodes())
        if (auto name = cast<DictionaryAttr>(entry).getAs<StringAttr>("name"))
          regionsByName[name.getValue()] = &op;
      continue;
    }
    auto node = dyn_cast<NodeOp>(op);
    if (!node)
      return op.emitError() << "auto-clustering runs on graphs of nodes; '"
                            << op.getName() << "' is not one",
             failure();
    byName[node.getName()] = node;
  }
  for (const std::string &feed : signature.feeds) {
    auto [name, port] = splitTensorName(feed);
    if (NodeOp node = byName.lookup(name); node && port < node.getOutputs().size())
      fed.insert(node.getOutputs()[port]);
  }
  SmallVector<Operation *> stack;
  bool all = signature.fetches.empty() && signature.targets.empty();
  for (const std::string &fetch : signature.fetches) {
    auto [name, port] = splitTensorName(fetch);
    if (NodeOp node = byName.lookup(name)) {
      named.insert(name);
      if (port >= node.getOutputs().size() || !fed.count(node.getOutputs()[port]))
        stack.push_back(node);
    } else if (Operation *region = regionsByName.lookup(name)) {
      stack.push_back(region);
    } else {
      unknownName = true;
    }
  }
  for (const std::string &target : signature.targets) {
    if (NodeOp node = byName.lookup(target)) {
      named.insert(target);
      stack.push_back(node);
    } else if (Operation *region = regionsByName.lookup(target)) {
      stack.push_back(region);
    } else {
      unknownName = true;
    }
  }
  if (all)
    for (Operation &op : body)
      if (!op.hasTrait<OpTrait::IsTerminator>())
        stack.push_back(&op);
  auto collectNeeded = [&]() {
    while (!stack.empty()) {
      Operation *unit = stack.pop_back_val();
      if (!needed.insert(unit).second)
        continue;
      for (Value input : unitInputs(unit))
        if (!fed.count(input))
          if (Operation *producer = input.getDefiningOp();
              producer && producer->getBlock() == &body)
            stack.push_back(producer);
    }
  };
  collectNeeded();
  // The host sides of the computations the run holds run with them (as
  // the executor runs them: findChannelSenders).
  addHostSides(body.getParentOp()->getParentOfType<ModuleOp>(), body, needed,
               [&](ArrayRef<Operation *> senders) {
                 stack.append(senders.begin(), senders.end());
                 collectNeeded();
               });

  // As a session prunes the graph to what a call needs: the needed nodes,
  // the producers of fed values and what they read stay (the latter do
  // not run).
  if (!all && !unknownName) {
    llvm::DenseSet<Operation *> kept(needed.begin(), needed.end());
    SmallVector<Operation *> keep;
    for (Value v : fed)
      keep.push_back(v.getDefiningOp());
    while (!keep.empty()) {
      Operation *op = keep.pop_back_val();
      if (!op || !kept.insert(op).second)
        continue;
      keptOnly.insert(op);
      for (Value input : op->getOperands())
        keep.push_back(input.getDefiningOp());
    }
    SmallVector<Operation *> pruned;
    for (Operation &op : body)
      if (!kept.count(&op))
        pruned.push_back(&op);
    for (Operation *op : pruned)
      op->dropAllReferences();
    for (Operation *op : pruned) {
      if (auto node = dyn_cast<NodeOp>(op))
        byName.erase(node.getName());
      op->erase();
    }
  }

  // Topological order (data and control edges; NextIteration back edges
  // are left out, and the loops they close never compile).
  llvm::DenseMap<Operation *, unsigned> waiting;
  std::deque<Operation *> ready;
  auto countsAsEdge = [&](Value input) {
    Operation *producer = input.getDefiningOp();
    if (!producer || producer->getBlock() != &body ||
        !needed.count(producer) || fed.count(input))
      return false;
    auto node = dyn_cast<NodeOp>(producer);
    return !node || (node.getOpType() != "NextIteration" &&
                     node.getOpType() != "RefNextIteration");
  };
  for (Operation &unit : body) {
    if (!needed.count(&unit))
      continue;
    unsigned count = 0;
    for (Value input : unitInputs(&unit))
      count += countsAsEdge(input);
    waiting[&unit] = count;
    if (!count)
      ready.push_back(&unit);
  }
  while (!ready.empty()) {
    Operation *unit = ready.front();
    ready.pop_front();
    order.push_back(unit);
    SmallPtrSet<Operation *, 8> consumers;
    for (Operation *user : unit->getUsers())
      if (Operation *consumer = unitOf(user);
          consumer && needed.count(consumer) && consumers.insert(consumer).second)
        for (Value input : unitInputs(consumer))
          if (input.getDefiningOp() == unit && countsAsEdge(input) &&
              --waiting[consumer] == 0)
            ready.push_back(consumer);
  }
  return success();
}
} // namespace

/// Whether every function `node` calls (If branches, While bodies, calls)
/// compiles; `why` says what stops it.
static bool compilableCallees(NodeOp node, std::string &why) {
  for (auto [attr, name] : getCalledFunctions(node)) {
    Operation *callee = SymbolTable::lookupNearestSymbolFrom(
        node, StringAttr::get(node.getContext(), name));
    if (!isa_and_nonnull<FuncOp>(callee)) {
      why = "calls '" + name.str() + "', which is not in the library";
      return false;
    }
    bool isLoopBody = attr == "body" && (node.getOpType() == "While" ||
                                         node.getOpType() == "StatelessWhile");
    if (!conversion::isCompilableFunction(callee, why, isLoopBody))
      return false;
  }
  return true;
}

namespace {
void Clusterer::findCandidates() {
  // Nodes downstream of a Switch or an Enter may be dead or run once per
  // iteration; compiled code runs once per call. Which of the two says
  // which pass makes them functional.
  llvm::DenseSet<Operation *> inLoop, inCond;
  for (Operation *unit : order) {
    auto node = dyn_cast<NodeOp>(unit);
    StringRef op = node ? node.getOpType() : "";
    bool loop = op == "Enter" || op == "RefEnter";
    bool cond = op == "Switch" || op == "RefSwitch";
    for (Value input : unitInputs(unit))
      if (Operation *producer = input.getDefiningOp()) {
        loop |= inLoop.count(producer) > 0;
        cond |= inCond.count(producer) > 0;
      }
    if (loop)
      inLoop.insert(unit);
    else if (cond)
      inCond.insert(unit);
  }
  for (auto node : body.getOps<NodeOp>()) {
    if (!needed.count(node))
      continue;
    std::string &reason = reasons[node];
    StringRef op = node.getOpType();
    bool ordered = llvm::is_contained(order, node.getOperation());
    bool isCall = !ops::lookupOp(op) && module.lookupSymbol(op);
    if (!ops::lookupOp(op) && !isCall) {
      reason = "Op type not registered '" + op.str() + "' in binary";
    } else if (!conversion::hasCPULowering(op) && !isCall) {
      reason = "op '" + op.str() + "' has no CPU lowering";
    } else if (!compilableCallees(node, reason)) {
      // `reason` names the node of the callee that stops it.
    } else if (!ordered || inLoop.count(node)) {
      reason = "inside a v1 while loop (run graph-functionalize-loops)";
    } else if (inCond.count(node)) {
      reason = "inside a v1 conditional (run graph-functionalize-conds)";
    } else if (llvm::any_of(node.getOutputs(),
                            [&](Value v) { return fed.count(v) > 0; })) {
      reason = "its output is fed";
    } else if (auto flag = node.getTFBool("_XlaCompile"); flag && !*flag) {
      reason = "_XlaCompile is false";
    } else if (!isDevice && (node.getTFAttr("_tpu_replicate") ||
                             node.getTFAttr("_xla_outside_compilation"))) {
      // Its placement and feeds follow the replicated computation's rules.
      reason = "part of a replicated computation";
    } else if (!conversion::knowsReceivedShapes(node)) {
      reason = conversion::kUnknownReceivedShapes.str();
    } else if (std::string why = whyListDoesNotCompile(node); !why.empty()) {
      reason = why;
    } else {
      for (Value v : node.getInputs())
        if (!isCompilableType(v.getType()))
          reason = "an input of a type compiled code cannot hold";
      for (Value v : node.getOutputs())
        if (!isCompilableType(v.getType()))
          reason = "an output of a type compiled code cannot hold";
    }
    if (reason.empty())
      candidates.insert(node);
  }
}

void Clusterer::formClusters() {
  clusters = llvm::EquivalenceClasses<Operation *>();
  llvm::DenseMap<Operation *, int64_t> level;
  auto isSource = [&](Operation *unit) {
    return candidates.count(unit) && unitInputs(unit).empty();
  };
  // A cluster never spans devices (as XLA's): an edge into another
  // device's node climbs a level as an interpreted node's does, so that no
  // path leaves a cluster and comes back to it at its level.
  llvm::DenseMap<Operation *, int64_t> devices;
  auto deviceOf = [&](Operation *unit) -> int64_t {
    auto [it, inserted] = devices.try_emplace(unit, 0);
    if (inserted)
      if (auto node = dyn_cast<NodeOp>(unit))
        it->second = getRuntimeCPUDevice(node.getDevice().value_or(""));
    return it->second;
  };
  // A node that starts its device's work and hands some to another device
  // (the split that gives each tower its share of the batch) ends its
  // cluster: the other device waits for it, not for all its own device
  // does after it.
  llvm::DenseMap<Operation *, bool> handsOff;
  auto handsWorkToOtherDevice = [&](Operation *unit) {
    auto [it, inserted] = handsOff.try_emplace(unit, false);
    if (!inserted)
      return it->second;
    bool feedsOther = llvm::any_of(unit->getUsers(), [&](Operation *user) {
      Operation *consumer = unitOf(user);
      return consumer && deviceOf(consumer) != deviceOf(unit);
    });
    bool startsDevice = llvm::none_of(unitInputs(unit), [&](Value input) {
      Operation *producer = input.getDefiningOp();
      return producer && candidates.count(producer) && !isSource(producer) &&
             !fed.count(input) && deviceOf(producer) == deviceOf(unit);
    });
    return it->second = feedsOther && startsDevice;
  };
  for (Operation *unit : order) {
    bool candidate = candidates.count(unit);
    int64_t h = 0;
    for (Value input : unitInputs(unit)) {
      Operation *producer = input.getDefiningOp();
      if (!producer || !level.count(producer) || fed.count(input) ||
          isSource(producer))
        continue;
      bool producerCandidate = candidates.count(producer);
      bool climbs = candidate && (!producerCandidate ||
                                  deviceOf(producer) != deviceOf(unit) ||
                                  handsWorkToOtherDevice(producer));
      h = std::max(h, level[producer] + (climbs ? 1 : 0));
    }
    level[unit] = h;
  }
  // A compilable node without inputs (a constant, a variable) can sit on
  // any level, as no path reaches it: it takes the lowest level of its
  // compilable consumers, so that its edges still only go up.
  for (Operation *unit : order) {
    if (!isSource(unit))
      continue;
    std::optional<int64_t> lowest;
    for (Operation *user : unit->getUsers())
      if (candidates.count(user) && level.count(user) &&
          deviceOf(user) == deviceOf(unit))
        lowest = std::min(lowest.value_or(level[user]), level[user]);
    if (lowest)
      level[unit] = *lowest;
  }
  // A device computation compiles as few programs as it can, as XLA
  // compiles a TPU computation whole: its clusters of one level join even
  // where no edge links them. (No path joins two clusters of one level
  // through an interpreted node, which would raise the later one's level,
  // so this makes no cycle.) Elsewhere clusters grow along edges, as in
  // mark_for_compilation.
  llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> firstOfLevel;
  for (Operation *unit : order) {
    auto node = dyn_cast<NodeOp>(unit);
    if (!candidates.count(unit))
      continue;
    clusters.insert(node);
    for (Value input : node.getInputs()) {
      auto producer = input.getDefiningOp<NodeOp>();
      if (producer && candidates.count(producer) && !fed.count(input) &&
          level.count(producer) && level[producer] == level[node] &&
          deviceOf(producer) == deviceOf(node))
        clusters.unionSets(producer, node);
    }
    if (isDevice) {
      auto [first, inserted] =
          firstOfLevel.try_emplace({level[node], deviceOf(node)}, node);
      if (!inserted)
        clusters.unionSets(first->second, node);
    }
  }
}

bool Clusterer::dropBoundaryViolations() {
  bool changed = false;
  auto sameCluster = [&](Operation *a, Operation *b) {
    return candidates.count(a) && candidates.count(b) &&
           clusters.isEquivalent(a, b);
  };
  for (Operation *unit : order) {
    if (!candidates.count(unit))
      continue;
    auto node = cast<NodeOp>(unit);
    std::string why;
    for (Value input : node.getDataInputs()) {
      Operation *producer = input.getDefiningOp();
      if (isRefValue(input) && (!producer || !sameCluster(producer, node)))
        why = "a reference input from outside its cluster";
      if (isVariantValue(input) && (!producer || !sameCluster(producer, node)))
        why = "a TensorList input from outside its cluster";
    }
    for (Value output : node.getOutputs())
      if (isVariantValue(output) &&
          (named.contains(node.getName()) ||
           llvm::any_of(output.getUsers(), [&](Operation *user) {
             Operation *consumer = unitOf(user);
             return consumer && needed.count(consumer) &&
                    !sameCluster(consumer, node);
           })))
        why = "a TensorList output used outside its cluster";
    // A fetched node keeps its name outside the cluster with all its
    // outputs, and compiled code cannot return a handle a loop passes on.
    if (named.contains(node.getName()) && !getCalledFunctions(node).empty() &&
        llvm::any_of(node.getOutputs(), isResourceValue))
      why = "a resource output of a fetched node";
    for (Value output : node.getOutputs())
      if (isRefValue(output) || isResourceValue(output))
        for (Operation *user : output.getUsers())
          if (Operation *consumer = unitOf(user);
              consumer && needed.count(consumer) &&
              !sameCluster(consumer, node))
            why = "a reference or resource output used outside its cluster";
    if (!why.empty()) {
      candidates.erase(node);
      reasons[node] = why;
      changed = true;
    }
  }
  return changed;
}

LogicalResult Clusterer::encapsulate(MutableArrayRef<NodeOp> members,
                                     StringRef name) {
  llvm::DenseSet<Operation *> inside;
  for (NodeOp node : members)
    inside.insert(node);
  SmallVector<Value> inputs, controls, outputs;
  llvm::DenseSet<Value> seenInputs, seenControls, seenOutputs;
  for (NodeOp node : members) {
    for (Value v : node.getInputs()) {
      if (v.getDefiningOp() && inside.count(v.getDefiningOp()))
        continue;
      if (isa<ControlType>(v.getType())) {
        if (seenControls.insert(v).second)
          controls.push_back(v);
      } else if (seenInputs.insert(v).second) {
        inputs.push_back(v);
      }
    }
    bool keepsName = named.contains(node.getName());
    for (Value v : node.getOutputs()) {
      // What only a fed value's producer chain reads (kept, never run) is
      // no output: a variable's handle read on the way to a fed gradient
      // stays inside.
      bool usedOutside = llvm::any_of(v.getUsers(), [&](Operation *user) {
        return !inside.count(user) && !isKeptOnly(user);
      });
      if ((usedOutside || keepsName) && seenOutputs.insert(v).second)
        outputs.push_back(v);
    }
  }

  SmallVector<Type> argTypes;
  for (Value v : inputs)
    argTypes.push_back(v.getType());
  IRMapping mapping;
  FailureOr<FuncOp> func = buildLibraryFunction(
      module, name, argTypes,
      [&](OpBuilder &builder, ArrayRef<Value> args)
          -> FailureOr<SmallVector<Value>> {
        for (auto [v, arg] : llvm::zip(inputs, args))
          mapping.map(v, arg);
        cloneNodes(builder, members, mapping);
        SmallVector<Value> results;
        for (Value v : outputs)
          results.push_back(mapping.lookup(v));
        return results;
      },
      members.front().getLoc());
  if (failed(func))
    return failure();
  // Targets run inside the call, as the function's control outputs (a
  // function call runs what its results and control outputs need).
  ReturnOp ret = func->getReturnOp();
  SmallVector<Attribute> controlNames(ret.getControlNames().begin(),
                                      ret.getControlNames().end());
  for (NodeOp node : members)
    if (named.contains(node.getName())) {
      ret->insertOperands(ret->getNumOperands(),
                          mapping.lookup(node.getControl()));
      controlNames.push_back(StringAttr::get(node.getContext(), node.getName()));
    }
  ret.setControlNamesAttr(ArrayAttr::get(func->getContext(), controlNames));
  // Control inputs from outside are the call's.
  func->walk([&](NodeOp clone) {
    for (int i = clone->getNumOperands() - 1; i >= 0; --i) {
      Value v = clone->getOperand(i);
      if (isa<ControlType>(v.getType()) &&
          v.getParentRegion() != &func->getBody() &&
          !func->getBody().isAncestor(v.getParentRegion()))
        clone->eraseOperand(i);
    }
  });

  OpBuilder builder(members.front());
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  SmallVector<Value> callInputs(inputs.begin(), inputs.end());
  callInputs.append(controls.begin(), controls.end());
  std::string callName = func->getSymName().str();
  for (unsigned k = 1; byName.count(callName); ++k)
    callName = func->getSymName().str() + "_" + std::to_string(k);
  // The call runs on its members' device (a cluster has one).
  std::string device;
  if (llvm::any_of(members, [](NodeOp n) { return n.getDevice().has_value(); }))
    device = "/device:CPU:" +
             std::to_string(getRuntimeCPUDevice(
                 members.front().getDevice().value_or("")));
  auto call = NodeOp::create(
      builder, members.front().getLoc(), func->getSymName(), callName,
      resultTypes, callInputs,
      builder.getDictionaryAttr(builder.getNamedAttr(
          "_XlaCompiledKernel", builder.getBoolAttr(true))),
      device);
  byName[callName] = call;
  for (auto [v, result] : llvm::zip(outputs, call.getOutputs()))
    v.replaceUsesWithIf(result, [&](OpOperand &use) {
      Operation *consumer = unitOf(use.getOwner());
      return consumer && !inside.count(consumer);
    });
  for (NodeOp node : members)
    node.getControl().replaceUsesWithIf(call.getControl(), [&](OpOperand &use) {
      Operation *consumer = unitOf(use.getOwner());
      return consumer && !inside.count(consumer);
    });

  // Names that runs refer to stay in the graph.
  for (NodeOp node : members) {
    if (!named.contains(node.getName()))
      continue;
    SmallVector<Value> forwarded;
    SmallVector<Attribute> types;
    for (Value v : node.getOutputs()) {
      auto it = llvm::find(outputs, v);
      forwarded.push_back(call.getOutputs()[it - outputs.begin()]);
      types.push_back(TypeAttr::get(
          cast<TensorType>(v.getType()).getElementType()));
    }
    std::string nodeName = node.getName().str();
    if (forwarded.empty()) {
      NodeOp::create(builder, node.getLoc(), "NoOp", nodeName, {},
                     ValueRange{call.getControl()}, builder.getDictionaryAttr({}));
    } else {
      forwarded.push_back(call.getControl());
      NodeOp::create(
          builder, node.getLoc(), "IdentityN", nodeName,
          ValueRange(forwarded).drop_back().getTypes(), forwarded,
          builder.getDictionaryAttr(builder.getNamedAttr(
              "T", builder.getArrayAttr(types))));
    }
  }
  // Members that chain no run reaches still reads stay beside the call
  // (they never run), with the members they read.
  llvm::DenseSet<Operation *> stay;
  SmallVector<Operation *> reading;
  for (NodeOp node : members)
    if (llvm::any_of(node->getUsers(), [&](Operation *user) {
          return !inside.count(user) && isKeptOnly(user);
        }))
      reading.push_back(node);
  while (!reading.empty()) {
    Operation *op = reading.pop_back_val();
    if (!stay.insert(op).second)
      continue;
    for (Value input : op->getOperands())
      if (Operation *producer = input.getDefiningOp();
          producer && inside.count(producer))
        reading.push_back(producer);
  }
  for (NodeOp node : llvm::reverse(members)) {
    if (stay.count(node))
      continue;
    byName.erase(node.getName());
    node->dropAllUses();
    node.erase();
  }
  return success();
}

LogicalResult
Clusterer::run(std::vector<jit::ClusteringDecision> &decisions) {
  if (failed(findNeeded()))
    return failure();
  if (unknownName)
    return success();
  findCandidates();
  do
    formClusters();
  while (dropBoundaryViolations());

  // Clusters in graph order, each with its members in graph order.
  llvm::DenseMap<Operation *, unsigned> clusterIndex;
  std::vector<SmallVector<NodeOp>> groups;
  for (auto node : body.getOps<NodeOp>()) {
    if (!candidates.count(node))
      continue;
    Operation *leader = clusters.getLeaderValue(node);
    auto [it, inserted] = clusterIndex.try_emplace(leader, groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].push_back(node);
  }
  llvm::DenseMap<Operation *, std::string> assigned;
  std::vector<std::pair<SmallVector<NodeOp>, std::string>> work;
  unsigned next = 0;
  for (auto &group : groups) {
    bool worthIt = llvm::any_of(
        group, [](NodeOp n) { return !isTrivial(n.getOpType()); });
    if (!worthIt) {
      for (NodeOp node : group)
        reasons[node] = "its cluster has nothing worth compiling";
      continue;
    }
    std::string name = "cluster_" + std::to_string(next++);
    while (module.lookupSymbol(name))
      name = "cluster_" + std::to_string(next++);
    for (NodeOp node : group)
      assigned[node] = name;
    work.push_back({group, name});
  }
  for (auto node : body.getOps<NodeOp>())
    if (needed.count(node))
      decisions.push_back({node.getName().str(), assigned.lookup(node),
                           assigned.count(node) ? "" : reasons.lookup(node)});
  for (auto &[group, name] : work)
    if (failed(encapsulate(group, name)))
      return failure();
  return success();
}
} // namespace

LogicalResult
cleave::jit::clusterForCompilation(ModuleOp module,
                                   const RunSignature &signature,
                                   std::vector<ClusteringDecision> &decisions) {
  GraphOp graph;
  for (auto g : module.getOps<GraphOp>())
    graph = g;
  if (!graph)
    return emitError(module.getLoc(), "the module has no graph.graph"),
           failure();
  Block &body = graph.getBody().front();
  bool replicated = llvm::any_of(
      body, [](Operation &op) { return isa<ClusterOp, ReplicateOp>(op); });
  if (!replicated)
    return Clusterer(module, body, signature, /*isDevice=*/false)
        .run(decisions);

  // A formed computation: its device side (each graph.cluster) compiles,
  // all of it running each launch; the host side around it (the nodes of
  // the graph and of each replica beside the cluster, host transfers,
  // collectives) runs in the interpreter, as TensorFlow runs host ops as
  // kernels.
  SmallVector<ClusterOp> devices;
  graph.walk([&](ClusterOp cluster) { devices.push_back(cluster); });
  jit::RunSignature everything;
  for (ClusterOp cluster : devices)
    if (failed(Clusterer(module, cluster.getBody().front(), everything,
                         /*isDevice=*/true)
                   .run(decisions)))
      return failure();
  graph.walk([&](NodeOp node) {
    if (isa<ReplicateOp>(node->getParentOp()))
      decisions.push_back({node.getName().str(), "",
                           "a host node of a replica"});
  });
  // The host program around them: its compilable nodes form clusters as
  // in any graph, the regions taking part as units that never compile.
  return Clusterer(module, body, signature, /*isDevice=*/false)
      .run(decisions);
}
