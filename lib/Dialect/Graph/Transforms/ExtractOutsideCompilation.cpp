//===- ExtractOutsideCompilation.cpp - graph-extract-outside-compilation --===//
//
// TensorFlow's tf-extract-head-tail-outside-compilation and
// tf-extract-outside-compilation on the graph dialect: the outside-compiled
// nodes of a formed cluster leave it. Head and tail nodes move before and
// after the cluster; the rest become host nodes beside it, talking to the
// device through channels: `_XlaHostComputeMlir` in the cluster,
// `_XlaRecvAtHost` / `_XlaSendFromHost` on the host. Functions that If,
// While and calls reach are split into a device copy and a host copy, and
// the host twin of the control-flow node follows the device's predicate.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHEXTRACTOUTSIDECOMPILATIONPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

static constexpr StringLiteral kHostTransferAttr = "_xla_has_host_transfer";

static StringRef getOutsideCompilation(NodeOp node) {
  return getStringTFAttr(node, kOutsideCompilationAttr);
}
static bool isOutsideCompiled(NodeOp node) {
  return static_cast<bool>(node.getTFAttr(kOutsideCompilationAttr));
}

/// "name:port" of a value as a message names it.
static std::string describe(Value v) {
  if (auto node = v.getDefiningOp<NodeOp>())
    return (node.getName() + ":" + Twine(cast<OpResult>(v).getResultNumber()))
        .str();
  return "<argument>";
}

/// The `host_mlir_module` of a host compute whose results have shapes not
/// known statically: a module whose `host_func` computes, from what the
/// device sends (`args`, then the values the members read from elsewhere),
/// what the host sends back (`rets`), with copies of the members (data
/// edges only). Compiled device code infers its result shapes from it for
/// the shapes it sends, as XLA does with TensorFlow's.
static std::string buildHostModule(ArrayRef<NodeOp> members,
                                   ArrayRef<Value> args, ArrayRef<Value> rets,
                                   Location loc) {
  MLIRContext *context = loc.getContext();
  llvm::SetVector<Operation *> memberOps;
  for (NodeOp member : members)
    memberOps.insert(member);
  llvm::SetVector<Value> inputs(args.begin(), args.end());
  for (NodeOp member : members)
    for (Value v : member.getDataInputs())
      if (!memberOps.contains(v.getDefiningOp()))
        inputs.insert(v);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  SmallVector<Type> argTypes, retTypes;
  SmallVector<Attribute> argNames, retNames;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    argTypes.push_back(v.getType());
    argNames.push_back(b.getStringAttr("_host_compute_arg_" + Twine(i)));
  }
  for (auto [i, v] : llvm::enumerate(rets)) {
    retTypes.push_back(v.getType());
    retNames.push_back(b.getStringAttr("ret_" + Twine(i)));
  }
  auto func = b.create<FuncOp>(
      loc, b.getStringAttr("host_func"),
      TypeAttr::get(b.getFunctionType(argTypes, retTypes)), ArrayAttr(),
      ArrayAttr(), b.getArrayAttr(argNames), b.getDictionaryAttr({}),
      DictionaryAttr(), DictionaryAttr(), DictionaryAttr(), DictionaryAttr());
  Block *body = new Block;
  func.getBody().push_back(body);
  IRMapping mapping;
  for (Value v : inputs)
    mapping.map(v, body->addArgument(v.getType(), loc));
  b.setInsertionPointToEnd(body);
  for (NodeOp member : members) {
    Operation *copy = b.clone(*member, mapping);
    setTFAttr(cast<NodeOp>(copy), kOutsideCompilationAttr, nullptr);
    SmallVector<Value> data;
    for (Value v : copy->getOperands())
      if (!isa<ControlType>(v.getType()))
        data.push_back(v);
    copy->setOperands(data);
  }
  SmallVector<Value> returned;
  for (Value v : rets)
    returned.push_back(mapping.lookup(v));
  b.create<ReturnOp>(loc, returned, b.getArrayAttr(retNames),
                     b.getStrArrayAttr({}), ArrayAttr());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// Whether the device knows the shape of `t` when it compiles.
static bool hasStaticShape(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.hasStaticShape();
}

/// The element type a device computation cannot hold, or null.
static Type getHostOnlyType(Type t) {
  auto tensor = dyn_cast<TensorType>(t);
  if (!tensor)
    return {};
  Type element = tensor.getElementType();
  if (isa<StringType, ResourceType, VariantType>(element))
    return element;
  return {};
}

namespace {
/// Where the host nodes of one device block go: the builder's insertion
/// point in the host block, the program key and (inside a replicate) the
/// device ordinals the transfers are keyed by, one per core that hosts
/// computations.
struct HostSide {
  OpBuilder builder;
  NameUniquer *names;
  bool replicated;
  /// Host functions get the key and one ordinal as arguments (every core's
  /// transfers in them use it); the top level makes them on first use.
  Value programKey;
  std::map<int64_t, Value> deviceOrdinals;
  std::function<Value(HostSide &)> makeProgramKey;
  std::function<Value(HostSide &, int64_t core)> makeDeviceOrdinal;

  Value getProgramKey() {
    if (!programKey && makeProgramKey)
      programKey = makeProgramKey(*this);
    return programKey;
  }
  Value getDeviceOrdinal(int64_t core) {
    if (Value ordinal = deviceOrdinals[core])
      return ordinal;
    if (!makeDeviceOrdinal)
      return deviceOrdinals[core] = deviceOrdinals[0];
    return deviceOrdinals[core] = makeDeviceOrdinal(*this, core);
  }
};

/// The nodes of one `_xla_outside_compilation` value in one device block
/// (`scope`), or of one part of it (`name`, see splitGroups).
struct Group {
  std::string name;
  StringRef scope;
  SmallVector<NodeOp> members;
};

class Extractor {
public:
  Extractor(ModuleOp module, ClusterOp cluster, NameUniquer &names)
      : module(module), cluster(cluster), ctx(module.getContext()),
        topNames(names) {}

  LogicalResult run();

private:
  LogicalResult checkMarkers(Block &block, llvm::DenseSet<Operation *> &seen);
  void extractHeadAndTail(OpBuilder &before, OpBuilder &after);
  LogicalResult extractBlock(Block &device, HostSide &host,
                             NameUniquer &deviceNames);
  /// Moves one group to the host; returns its host compute (null when it
  /// does not communicate).
  FailureOr<NodeOp>
  extractGroup(Block &device, Group &group, HostSide &host,
               NameUniquer &deviceNames,
               const llvm::DenseMap<Operation *, unsigned> &groupOf,
               SmallVectorImpl<std::pair<unsigned, unsigned>> &hostEdges);
  void splitGroups(Block &device, SmallVectorImpl<Group> &groups,
                   llvm::DenseMap<Operation *, unsigned> &groupOf,
                   SmallVectorImpl<std::pair<bool, unsigned>> &units);
  LogicalResult checkGroupCycles(Block &device, ArrayRef<Group> groups,
                                 const llvm::DenseMap<Operation *, unsigned> &groupOf);
  LogicalResult splitControlFlow(NodeOp node, HostSide &host,
                                 NameUniquer &deviceNames);
  /// What a split function is to its caller.
  enum class Role { Branch, LoopCondition, LoopBody };
  FailureOr<FuncOp> splitFunction(NodeOp caller, StringRef name, Role role,
                                  bool replicated, FuncOp &hostFunction,
                                  StringRef conditionKey = "");
  bool reachesOutsideCompilation(StringRef function);
  Value passedInFromOutside(Value v);
  FailureOr<NodeOp> createNode(OpBuilder &b, NameUniquer &names, Location loc,
                               StringRef opType, StringRef name,
                               ValueRange inputs, ValueRange controls,
                               ArrayRef<NamedAttribute> attrs);
  /// `_XlaRecvAtHost` or `_XlaSendFromHost` (their V2 inside a replicate,
  /// keyed by the ordinal of the replica's `core`) on channel `key`.
  NodeOp createTransfer(HostSide &host, Location loc, StringRef opType,
                        StringRef typesAttr, TypeRange types, StringRef name,
                        StringRef key, ValueRange values, ValueRange controls,
                        int64_t core);
  NodeOp createRecv(HostSide &host, Location loc, StringRef name, StringRef key,
                    TypeRange types, int64_t core = 0);
  NodeOp createSend(HostSide &host, Location loc, StringRef name, StringRef key,
                    ValueRange values, ValueRange controls, int64_t core = 0);
  ArrayAttr typeList(TypeRange types);
  void finishCluster();
  LogicalResult verifyNoMarkers();

  ModuleOp module;
  ClusterOp cluster;

  /// The core the metadata's `host_compute_core` ("<scope>:<core>", as
  /// graph-replicate and TensorFlow's tpu.replicate record an outside
  /// compilation entered on a replicated core) gives outside compilation
  /// `scope`, which becomes its host compute's `tpu_core`.
  std::optional<int64_t> getHostComputeCore(StringRef scope) {
    DictionaryAttr metadata = cluster.getMetadata();
    auto cores = metadata ? dyn_cast_or_null<ArrayAttr>(
                                metadata.get("host_compute_core"))
                          : ArrayAttr();
    if (!cores)
      return std::nullopt;
    for (Attribute entry : cores) {
      auto text = dyn_cast<StringAttr>(entry);
      if (!text)
        continue;
      auto [name, core] = text.getValue().rsplit(':');
      int64_t value;
      if (name == scope && !core.getAsInteger(10, value))
        return value;
    }
    return std::nullopt;
  }
  MLIRContext *ctx;
  NameUniquer &topNames;
  int channel = 0;
  /// The device values tail nodes read, to be yielded.
  llvm::SetVector<Value> tailInputs;
  /// Whether a function (transitively) holds outside-compiled nodes.
  llvm::StringMap<bool> reaches;
  /// The device copies made, checked for leftover markers at the end.
  SmallVector<FuncOp> deviceFunctions;
};
} // namespace

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

ArrayAttr Extractor::typeList(TypeRange types) {
  SmallVector<Attribute> list;
  for (Type t : types)
    list.push_back(TypeAttr::get(cast<TensorType>(t).getElementType()));
  return ArrayAttr::get(ctx, list);
}

FailureOr<NodeOp> Extractor::createNode(OpBuilder &b, NameUniquer &names,
                                        Location loc, StringRef opType,
                                        StringRef name, ValueRange inputs,
                                        ValueRange controls,
                                        ArrayRef<NamedAttribute> attrs) {
  std::string error;
  FailureOr<NodeOp> node = createRegisteredNode(
      b, loc, opType, names.unique(name), inputs, controls, attrs, "", error);
  if (failed(node))
    return emitError(loc) << "graph-extract-outside-compilation: " << error;
  return node;
}

NodeOp Extractor::createTransfer(HostSide &host, Location loc, StringRef opType,
                                 StringRef typesAttr, TypeRange types,
                                 StringRef name, StringRef key,
                                 ValueRange values, ValueRange controls,
                                 int64_t core) {
  OpBuilder &b = host.builder;
  SmallVector<Value> inputs(values);
  inputs.push_back(host.getProgramKey());
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr(typesAttr, typeList(types)),
      b.getNamedAttr("key", b.getStringAttr(key)),
      b.getNamedAttr(kHostTransferAttr, b.getBoolAttr(true))};
  if (host.replicated)
    inputs.push_back(host.getDeviceOrdinal(core));
  else
    attrs.push_back(b.getNamedAttr("device_ordinal", b.getI64IntegerAttr(0)));
  return *createNode(b, *host.names, loc,
                     host.replicated ? (opType + "V2").str() : opType.str(),
                     name, inputs, controls, attrs);
}

NodeOp Extractor::createRecv(HostSide &host, Location loc, StringRef name,
                             StringRef key, TypeRange types, int64_t core) {
  NodeOp recv = createTransfer(host, loc, "_XlaRecvAtHost", "Toutputs", types,
                               name, key, {}, {}, core);
  for (auto [out, t] : llvm::zip(recv.getOutputs(), types))
    out.setType(t);
  return recv;
}

NodeOp Extractor::createSend(HostSide &host, Location loc, StringRef name,
                             StringRef key, ValueRange values,
                             ValueRange controls, int64_t core) {
  return createTransfer(host, loc, "_XlaSendFromHost", "Tinputs",
                        values.getTypes(), name, key, values, controls, core);
}

bool Extractor::reachesOutsideCompilation(StringRef name) {
  if (auto it = reaches.find(name); it != reaches.end())
    return it->second;
  reaches[name] = false; // recursion guard
  auto function = module.lookupSymbol<FuncOp>(name);
  bool found = false;
  if (function && !function.getBody().empty())
    for (auto node : function.getBody().front().getOps<NodeOp>()) {
      if (isOutsideCompiled(node))
        found = true;
      for (auto [attr, callee] : getCalledFunctions(node))
        found |= reachesOutsideCompilation(callee);
      if (found)
        break;
    }
  return reaches[name] = found;
}

//===----------------------------------------------------------------------===//
// Checks before extraction
//===----------------------------------------------------------------------===//

/// Empty tags, and tags under an outside-compiled node, in `block` and the
/// functions it calls.
LogicalResult Extractor::checkMarkers(Block &block,
                                      llvm::DenseSet<Operation *> &seen) {
  for (auto node : block.getOps<NodeOp>()) {
    if (Attribute tag = node.getTFAttr(kOutsideCompilationAttr)) {
      auto s = dyn_cast<StringAttr>(tag);
      if (!s || s.getValue().empty())
        return nodeError(node)
               << "attribute '_xla_outside_compilation' is empty";
    }
    for (auto [attr, callee] : getCalledFunctions(node)) {
      auto function = module.lookupSymbol<FuncOp>(callee);
      if (!function || function.getBody().empty())
        continue;
      if (isOutsideCompiled(node) && reachesOutsideCompilation(callee)) {
        NodeOp inner;
        function.walk([&](NodeOp n) {
          if (!inner && isOutsideCompiled(n))
            inner = n;
        });
        InFlightDiagnostic diag =
            inner ? nodeError(inner) : nodeError(node);
        return diag << "An op marked for outside compilation (having "
                       "attribute _xla_outside_compilation) has an ancestor "
                       "marked for outside compilation. (ancestor: '"
                    << node.getName() << "' calling '" << callee << "')";
      }
      if (seen.insert(function).second &&
          failed(checkMarkers(function.getBody().front(), seen)))
        return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Head and tail
//===----------------------------------------------------------------------===//

void Extractor::extractHeadAndTail(OpBuilder &before, OpBuilder &after) {
  Block &body = cluster.getBody().front();
  Value metadataControl = cluster.getMetadataControl();
  auto moveOut = [&](NodeOp node, OpBuilder &b) {
    SmallVector<Value> operands;
    for (Value v : node->getOperands())
      if (v != metadataControl)
        operands.push_back(v);
    node->setOperands(operands);
    node->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
    setTFAttr(node, kOutsideCompilationAttr, nullptr);
  };

  // Head: every input comes from outside the cluster or from head nodes.
  llvm::DenseSet<Operation *> head;
  for (auto node : body.getOps<NodeOp>()) {
    if (!isOutsideCompiled(node))
      continue;
    bool fromOutside = llvm::all_of(node->getOperands(), [&](Value v) {
      if (v == metadataControl)
        return true;
      Operation *def = v.getDefiningOp();
      return head.contains(def) || !body.getParent()->isAncestor(
                                       v.getParentRegion());
    });
    if (fromOutside)
      head.insert(node);
  }
  for (auto node : llvm::make_early_inc_range(body.getOps<NodeOp>()))
    if (head.contains(node))
      moveOut(node, before);

  // Tail: every use is the yield or a tail node.
  Operation *yield = body.getTerminator();
  llvm::SetVector<Operation *> tail;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    auto node = dyn_cast<NodeOp>(op);
    if (!node || !isOutsideCompiled(node))
      continue;
    bool onlyLeaves = llvm::all_of(node->getUsers(), [&](Operation *user) {
      return user == yield || tail.contains(user);
    });
    if (onlyLeaves)
      tail.insert(node);
  }
  // In block order after the cluster.
  for (Operation *op : llvm::reverse(tail)) {
    auto node = cast<NodeOp>(op);
    for (Value v : node->getOperands())
      if (v != metadataControl && body.getParent()->isAncestor(
                                       v.getParentRegion()) &&
          !tail.contains(v.getDefiningOp()))
        tailInputs.insert(v);
    moveOut(node, after);
    after.setInsertionPointAfter(node);
  }
}

//===----------------------------------------------------------------------===//
// Host groups
//===----------------------------------------------------------------------===//

/// A group must become one host computation: no device node may both
/// depend on it and feed it. Each group counts as one node; a topological
/// sort of that graph (Kahn's, linear in its size) leaves exactly the
/// nodes on or after a cycle.
/// The operands of `op` that other ops of `block` produce, but for a v1
/// loop's back edges (not a dependency of one iteration).
static SmallVector<Operation *> producersInBlock(Operation *op, Block &block) {
  SmallVector<Operation *> producers;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block || def == op)
      continue;
    if (auto node = dyn_cast<NodeOp>(def);
        node && node.getOpType().ends_with("NextIteration"))
      continue;
    producers.push_back(def);
  }
  return producers;
}

void Extractor::splitGroups(Block &device, SmallVectorImpl<Group> &groups,
                            llvm::DenseMap<Operation *, unsigned> &groupOf,
                            SmallVectorImpl<std::pair<bool, unsigned>> &units) {
  // The block's ops in dependency order (a graph region need not be).
  llvm::DenseMap<Operation *, unsigned> missing;
  SmallVector<Operation *> order, ready;
  for (Operation &op : device.without_terminator()) {
    missing[&op] = producersInBlock(&op, device).size();
    if (missing[&op] == 0)
      ready.push_back(&op);
  }
  llvm::DenseMap<Operation *, SmallVector<Operation *>> consumers;
  for (Operation &op : device.without_terminator())
    for (Operation *producer : producersInBlock(&op, device))
      consumers[producer].push_back(&op);
  while (!ready.empty()) {
    Operation *op = ready.pop_back_val();
    order.push_back(op);
    for (Operation *consumer : consumers[op])
      if (--missing[consumer] == 0)
        ready.push_back(consumer);
  }
  if (order.size() != missing.size())
    return; // a cycle: checkGroupCycles or the verifier says where

  // A member's part: the most device crossings on a path to it from a
  // member of its group. reached[op][g]: the highest part of group g that
  // reaches op (-1: none). Another group's member counts as a crossing, as
  // its host computation is a device node.
  unsigned numGroups = groups.size();
  llvm::DenseMap<Operation *, SmallVector<int>> reached;
  llvm::DenseMap<Operation *, int> part;
  SmallVector<int> lastPart(numGroups, 0);
  for (Operation *op : order) {
    SmallVector<int> reach(numGroups, -1);
    auto own = groupOf.find(op);
    int myPart = 0;
    for (Operation *producer : producersInBlock(op, device)) {
      const SmallVector<int> &from = reached[producer];
      for (unsigned g = 0; g < numGroups; ++g)
        reach[g] = std::max(reach[g], from[g]);
      if (own == groupOf.end())
        continue;
      auto theirs = groupOf.find(producer);
      if (theirs != groupOf.end() && theirs->second == own->second)
        myPart = std::max(myPart, part[producer]);
      else if (from[own->second] >= 0)
        myPart = std::max(myPart, from[own->second] + 1);
    }
    if (own != groupOf.end()) {
      part[op] = myPart;
      reach[own->second] = std::max(reach[own->second], myPart);
      lastPart[own->second] = std::max(lastPart[own->second], myPart);
    }
    reached[op] = std::move(reach);
  }

  // Parts after the first become groups of their own, "<name>_<part>",
  // extracted right after the group.
  llvm::StringSet<> names;
  for (const Group &group : groups)
    names.insert(group.name);
  SmallVector<std::pair<bool, unsigned>> newUnits;
  for (auto [isGroup, index] : units) {
    newUnits.push_back({isGroup, index});
    if (!isGroup || lastPart[index] == 0)
      continue;
    SmallVector<NodeOp> first;
    SmallVector<unsigned> partGroups(lastPart[index] + 1, index);
    for (int k = 1; k <= lastPart[index]; ++k) {
      std::string name = groups[index].name + "_" + std::to_string(k);
      while (!names.insert(name).second)
        name += "_" + std::to_string(k);
      partGroups[k] = groups.size();
      newUnits.push_back({true, unsigned(groups.size())});
      groups.push_back({name, groups[index].scope, {}});
    }
    for (NodeOp member : groups[index].members) {
      int k = part.lookup(member);
      if (k == 0) {
        first.push_back(member);
        continue;
      }
      groups[partGroups[k]].members.push_back(member);
      groupOf[member] = partGroups[k];
      setTFAttr(member, kOutsideCompilationAttr,
                StringAttr::get(ctx, groups[partGroups[k]].name));
    }
    groups[index].members = std::move(first);
  }
  units.assign(newUnits.begin(), newUnits.end());
}

LogicalResult Extractor::checkGroupCycles(
    Block &device, ArrayRef<Group> groups,
    const llvm::DenseMap<Operation *, unsigned> &groupOf) {
  // Units: groups 0..G-1, then the device nodes.
  llvm::DenseMap<Operation *, unsigned> unitOf;
  SmallVector<Operation *> deviceNodes;
  for (Operation &op : device.without_terminator()) {
    if (auto it = groupOf.find(&op); it != groupOf.end()) {
      unitOf[&op] = it->second;
      continue;
    }
    unitOf[&op] = groups.size() + deviceNodes.size();
    deviceNodes.push_back(&op);
  }
  unsigned numUnits = groups.size() + deviceNodes.size();
  SmallVector<SmallVector<unsigned>> successors(numUnits);
  SmallVector<unsigned> inDegree(numUnits, 0);
  for (Operation &op : device.without_terminator()) {
    unsigned to = unitOf.lookup(&op);
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &device)
        continue;
      // A v1 loop's back edge is not a dependency of one iteration.
      if (auto node = dyn_cast<NodeOp>(def);
          node && node.getOpType().ends_with("NextIteration"))
        continue;
      unsigned from = unitOf.lookup(def);
      if (from == to)
        continue;
      successors[from].push_back(to);
      ++inDegree[to];
    }
  }
  SmallVector<unsigned> ready;
  for (unsigned u = 0; u < numUnits; ++u)
    if (inDegree[u] == 0)
      ready.push_back(u);
  while (!ready.empty()) {
    unsigned u = ready.pop_back_val();
    for (unsigned next : successors[u])
      if (--inDegree[next] == 0)
        ready.push_back(next);
  }
  for (auto [g, group] : llvm::enumerate(groups)) {
    if (inDegree[g] == 0)
      continue;
    // A member fed by a device node left unsorted: the cycle goes there.
    for (NodeOp member : group.members)
      for (Value v : member->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || def->getBlock() != &device || groupOf.count(def))
          continue;
        unsigned from = unitOf.lookup(def);
        if (inDegree[from] != 0)
          return nodeError(member)
                 << "outside compilation cluster '" << group.name
                 << "' depends on itself through device node '"
                 << cast<NodeOp>(def).getName()
                 << "', and no split of the cluster breaks the cycle: its "
                    "host computation would wait for its own result";
      }
  }
  return success();
}

/// The value from outside the cluster that `v` is, through Identity nodes
/// of the cluster body (the replicated inputs' `_tpu_input_identity`), or
/// null.
Value Extractor::passedInFromOutside(Value v) {
  Block &body = cluster.getBody().front();
  while (auto node = v.getDefiningOp<NodeOp>()) {
    if (node->getBlock() != &body || node.getOpType() != "Identity" ||
        node.getDataInputs().size() != 1)
      return Value();
    v = node.getDataInputs().front();
  }
  if (v.getParentRegion() == &cluster.getBody() ||
      cluster->isAncestor(v.getParentRegion()->getParentOp()))
    return Value();
  return v;
}

FailureOr<NodeOp> Extractor::extractGroup(
    Block &device, Group &group, HostSide &host, NameUniquer &deviceNames,
    const llvm::DenseMap<Operation *, unsigned> &groupOf,
    SmallVectorImpl<std::pair<unsigned, unsigned>> &hostEdges) {
  unsigned self = groupOf.lookup(group.members.front());
  llvm::DenseSet<Operation *> members(group.members.begin(),
                                      group.members.end());
  Operation *terminator = device.getTerminator();
  bool isClusterBody = &device == &cluster.getBody().front();
  auto isDeviceNode = [&](Operation *op) {
    return op && op->getBlock() == &device && isa<NodeOp>(op) &&
           !groupOf.count(op);
  };

  // Device -> host: device values and control tokens the members read.
  llvm::SetVector<Value> args, argControls;
  for (NodeOp member : group.members)
    for (OpOperand &operand : member->getOpOperands()) {
      Value v = operand.get();
      Operation *def = v.getDefiningOp();
      if (def && groupOf.count(def)) {
        if (groupOf.lookup(def) != self)
          hostEdges.push_back({self, groupOf.lookup(def)});
        continue;
      }
      bool fromDevice =
          isDeviceNode(def) ||
          (!def && cast<BlockArgument>(v).getOwner() == &device);
      if (!fromDevice)
        continue;
      if (isClusterBody && v == cluster.getMetadataControl())
        continue;
      if (isa<ControlType>(v.getType())) {
        argControls.insert(v);
        continue;
      }
      if (Type t = getHostOnlyType(v.getType())) {
        // A replicated input (or another value from outside the cluster)
        // the device only passes on: the host reads it where it comes
        // from, as TensorFlow's host launch reads the replicate's
        // per-replica argument.
        if (Value outside = passedInFromOutside(v)) {
          operand.set(outside);
          continue;
        }
        InFlightDiagnostic diag =
            def ? nodeError(cast<NodeOp>(def)) : emitError(v.getLoc());
        return diag << "device value '" << describe(v) << "' of type " << t
                    << " is read by outside-compiled node '"
                    << member.getName()
                    << "': a device computation cannot hold " << t
                    << " tensors (compile its producer outside too)";
      }
      args.insert(v);
    }
  // Host -> device: member values device nodes (or a function's return)
  // read. Values the cluster only yields leave it directly.
  llvm::SetVector<Value> rets, retControls;
  for (NodeOp member : group.members)
    for (Value v : member->getResults())
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isClusterBody && user == terminator)
          continue; // finishCluster yields it from the host
        if (user != terminator && !isDeviceNode(user))
          continue;
        if (isa<ControlType>(v.getType())) {
          retControls.insert(v);
          continue;
        }
        if (Type t = getHostOnlyType(v.getType()))
          return nodeError(member)
                 << "outside-compiled value '" << describe(v) << "' of type "
                 << t << " is used by device node '"
                 << (isa<NodeOp>(user) ? cast<NodeOp>(user).getName()
                                       : StringRef("<return>"))
                 << "': a device computation cannot hold " << t << " tensors";
        rets.insert(v);
      }

  NodeOp first = group.members.front();
  Location loc = first.getLoc();
  std::string base = "outside_compilation_" + group.name;
  // Members leave the device block, untagged, keeping only host devices.
  auto moveToHost = [&]() {
    for (NodeOp member : group.members) {
      member->moveBefore(host.builder.getInsertionBlock(),
                         host.builder.getInsertionPoint());
      setTFAttr(member, kOutsideCompilationAttr, nullptr);
      if (member.getDevice() &&
          member.getDevice()->contains("TPU_REPLICATED_CORE"))
        member.removeDeviceAttr();
    }
  };
  bool communicates = !args.empty() || !argControls.empty() ||
                      !rets.empty() || !retControls.empty();
  if (!communicates) {
    moveToHost();
    return NodeOp();
  }

  int index = channel++;
  std::string argsKey =
      args.empty() && argControls.empty()
          ? ""
          : ("host_compute_channel_" + Twine(index) + "_args").str();
  std::string retvalsKey =
      rets.empty() && retControls.empty()
          ? ""
          : ("host_compute_channel_" + Twine(index) + "_retvals").str();

  // The device side: one host compute where the group was.
  OpBuilder db(first);
  SmallVector<Type> retTypes;
  for (Value v : rets)
    retTypes.push_back(v.getType());
  SmallVector<Value> argValues(args.begin(), args.end());
  FailureOr<NodeOp> hostCompute = createNode(
      db, deviceNames, loc, "_XlaHostComputeMlir", base + "_host_compute",
      argValues, argControls.getArrayRef(),
      {db.getNamedAttr("Tinputs", typeList(TypeRange(ValueRange(argValues)))),
       db.getNamedAttr("Toutputs", typeList(retTypes)),
       db.getNamedAttr("send_key", db.getStringAttr(argsKey)),
       db.getNamedAttr("recv_key", db.getStringAttr(retvalsKey))});
  if (failed(hostCompute))
    return failure();
  for (auto [out, t] : llvm::zip(hostCompute->getOutputs(), retTypes))
    out.setType(t);
  std::optional<int64_t> core = getHostComputeCore(group.scope);
  if (core)
    setTFAttr(*hostCompute, "tpu_core", db.getI64IntegerAttr(*core));
  if (!llvm::all_of(retTypes, hasStaticShape))
    setTFAttr(*hostCompute, "host_mlir_module",
              db.getStringAttr(buildHostModule(
                  group.members, argValues, SmallVector<Value>(rets.begin(),
                                                               rets.end()),
                  loc)));

  // The host side: receive, the members, send.
  if (!argsKey.empty()) {
    NodeOp recv =
        createRecv(host, loc, base + "_recv", argsKey,
                   TypeRange(ValueRange(argValues)), core.value_or(0));
    for (auto [v, received] : llvm::zip(argValues, recv.getOutputs()))
      v.replaceUsesWithIf(received, [&](OpOperand &use) {
        return members.contains(use.getOwner());
      });
    for (NodeOp member : group.members) {
      SmallVector<Value> operands;
      bool waits = false;
      for (Value v : member->getOperands()) {
        if (argControls.contains(v)) {
          waits = true;
          continue;
        }
        operands.push_back(v);
      }
      if (waits)
        operands.push_back(recv.getControl());
      member->setOperands(operands);
    }
  }
  for (NodeOp member : group.members) {
    // The metadata's token means "the computation started": on the host,
    // nothing to wait for.
    if (isClusterBody) {
      SmallVector<Value> operands;
      for (Value v : member->getOperands())
        if (v != cluster.getMetadataControl())
          operands.push_back(v);
      member->setOperands(operands);
    }
  }
  moveToHost();
  if (!retvalsKey.empty()) {
    SmallVector<Value> values(rets.begin(), rets.end());
    createSend(host, loc, base + "_send", retvalsKey, values,
               retControls.getArrayRef(), core.value_or(0));
    for (auto [v, result] : llvm::zip(values, hostCompute->getOutputs()))
      v.replaceUsesWithIf(result, [&](OpOperand &use) {
        return use.getOwner()->getBlock() == &device &&
               !(isClusterBody && use.getOwner() == terminator);
      });
    for (Value c : retControls)
      c.replaceUsesWithIf(hostCompute->getControl(), [&](OpOperand &use) {
        return use.getOwner()->getBlock() == &device &&
               !(isClusterBody && use.getOwner() == terminator);
      });
  }
  return *hostCompute;
}

LogicalResult Extractor::extractBlock(Block &device, HostSide &host,
                                      NameUniquer &deviceNames) {
  // The units, in block order: a group at its first member, or a
  // control-flow node whose functions hold outside compilation.
  SmallVector<Group> groups;
  llvm::StringMap<unsigned> groupIndex;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  SmallVector<std::pair<bool, unsigned>> units; // (is group, index)
  SmallVector<NodeOp> controlFlow;
  NodeOp v1ControlFlow;
  for (auto node : device.getOps<NodeOp>()) {
    StringRef op = node.getOpType();
    if (op.ends_with("Switch") || op.ends_with("Merge") ||
        op.ends_with("Enter") || op.ends_with("Exit") ||
        op.ends_with("NextIteration"))
      v1ControlFlow = v1ControlFlow ? v1ControlFlow : node;
    if (isOutsideCompiled(node)) {
      auto [it, inserted] =
          groupIndex.try_emplace(getOutsideCompilation(node), groups.size());
      if (inserted) {
        groups.push_back({getOutsideCompilation(node).str(),
                          getOutsideCompilation(node),
                          {}});
        units.push_back({true, it->second});
      }
      groups[it->second].members.push_back(node);
      groupOf[node] = it->second;
      continue;
    }
    bool reaches = llvm::any_of(getCalledFunctions(node), [&](auto called) {
      return reachesOutsideCompilation(called.second);
    });
    if (reaches) {
      units.push_back({false, unsigned(controlFlow.size())});
      controlFlow.push_back(node);
    }
  }
  if (units.empty())
    return success();
  if (v1ControlFlow) {
    NodeOp host = groups.empty() ? controlFlow.front()
                                 : groups.front().members.front();
    return nodeError(host)
           << "outside compilation in a computation with TensorFlow v1 "
              "control flow ('"
           << v1ControlFlow.getName() << "' is a "
           << v1ControlFlow.getOpType()
           << "): run graph-functionalize-conds and "
              "graph-functionalize-loops first";
  }
  splitGroups(device, groups, groupOf, units);
  if (failed(checkGroupCycles(device, groups, groupOf)))
    return failure();

  SmallVector<std::pair<unsigned, unsigned>> hostEdges;
  SmallVector<NodeOp> hostComputes(groups.size());
  for (auto [isGroup, index] : units) {
    if (!isGroup) {
      if (failed(splitControlFlow(controlFlow[index], host, deviceNames)))
        return failure();
      continue;
    }
    FailureOr<NodeOp> hostCompute = extractGroup(
        device, groups[index], host, deviceNames, groupOf, hostEdges);
    if (failed(hostCompute))
      return failure();
    hostComputes[index] = *hostCompute;
  }
  // A group reading another's values directly runs after it on the host,
  // so its host computation must come after the other's on the device (and
  // after those of the groups that one waits for, when it has none).
  SmallVector<SmallVector<unsigned>> producers(groups.size());
  for (auto [consumer, producer] : hostEdges)
    producers[consumer].push_back(producer);
  for (unsigned consumer = 0; consumer < groups.size(); ++consumer) {
    NodeOp later = hostComputes[consumer];
    if (!later)
      continue;
    llvm::SetVector<Value> waits;
    llvm::DenseSet<unsigned> seen;
    SmallVector<unsigned> worklist(producers[consumer]);
    while (!worklist.empty()) {
      unsigned producer = worklist.pop_back_val();
      if (!seen.insert(producer).second)
        continue;
      if (NodeOp earlier = hostComputes[producer])
        waits.insert(earlier.getControl());
      else
        llvm::append_range(worklist, producers[producer]);
    }
    SmallVector<Value> operands(later->getOperands());
    for (Value w : waits)
      if (!llvm::is_contained(operands, w))
        operands.push_back(w);
    later->setOperands(operands);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

/// Makes a device copy of function `name` (outside-compiled nodes replaced
/// by host computes) and a host function over (program key[, ordinal])
/// holding those nodes. A While condition's host copy returns the
/// condition the device sends on `conditionKey`; a loop body's passes its
/// arguments on.
FailureOr<FuncOp> Extractor::splitFunction(NodeOp caller, StringRef name,
                                           Role role, bool replicated,
                                           FuncOp &hostFunction,
                                           StringRef conditionKey) {
  auto original = module.lookupSymbol<FuncOp>(name);
  if (!original)
    return nodeError(caller) << "function '" << name
                             << "' is not in the graph's library",
           failure();
  auto deviceFunction = cast<FuncOp>(original->clone());
  std::string deviceName = (name + "_device").str();
  for (int k = 1; module.lookupSymbol(deviceName); ++k)
    deviceName = (name + "_device_" + Twine(k)).str();
  deviceFunction.setSymName(deviceName);
  module.getBody()->push_back(deviceFunction);
  deviceFunctions.push_back(deviceFunction);
  Block &deviceBody = deviceFunction.getBody().front();
  NameUniquer deviceNames(deviceBody);

  Type keyType = RankedTensorType::get({3}, StringType::get(ctx));
  Type ordinalType = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  SmallVector<Type> hostArgs{keyType};
  if (replicated)
    hostArgs.push_back(ordinalType);
  LogicalResult extracted = success();
  auto built = buildLibraryFunction(
      module, (name + "_host").str(), hostArgs,
      [&](OpBuilder &b, ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        NameUniquer hostNames(*b.getInsertionBlock());
        HostSide host{b, &hostNames, replicated, args[0], {}, nullptr, nullptr};
        if (replicated)
          host.deviceOrdinals[0] = args[1];
        if (failed(extractBlock(deviceBody, host, deviceNames)))
          return extracted = failure(), failure();
        SmallVector<Value> results;
        if (role == Role::LoopCondition) {
          // The device sends its condition; the host loop follows it.
          ReturnOp ret = deviceFunction.getReturnOp();
          Value condition = ret.getOperand(0);
          OpBuilder db(ret);
          if (failed(createNode(db, deviceNames, ret.getLoc(), "XlaSendToHost",
                                "while_condition_send", {condition}, {},
                                {db.getNamedAttr("key", db.getStringAttr(
                                                            conditionKey))})))
            return failure();
          NodeOp recv = createRecv(host, ret.getLoc(), "while_condition_recv",
                                   conditionKey, {condition.getType()});
          results.push_back(recv.getOutputs()[0]);
        } else if (role == Role::LoopBody) {
          // A loop body passes the key and ordinal on.
          llvm::append_range(results, args);
        }
        return results;
      },
      original.getLoc());
  if (failed(built) || failed(extracted))
    return failure();
  hostFunction = *built;
  return deviceFunction;
}

LogicalResult Extractor::splitControlFlow(NodeOp node, HostSide &host,
                                          NameUniquer &deviceNames) {
  StringRef op = node.getOpType();
  Location loc = node.getLoc();
  OpBuilder &hb = host.builder;
  auto funcAttr = [&](FuncOp f, StringRef attrName) {
    auto old = dyn_cast_or_null<FuncAttr>(node.getTFAttr(attrName));
    return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                         old ? old.getAttrs() : DictionaryAttr::get(ctx));
  };
  SmallVector<Value> hostInputs{host.getProgramKey()};
  if (host.replicated)
    hostInputs.push_back(host.getDeviceOrdinal(0));
  std::string hostName = (node.getName() + "_host").str();

  bool isIf = op == "If" || op == "StatelessIf";
  if (isIf || op == "Case" || op == "StatelessCase") {
    // The selector (If's predicate, Case's branch index) crosses first, then
    // each branch's channels.
    StringRef what = isIf ? "predicate" : "index";
    Value selector = node.getDataInputs()[0];
    Value hostSelector = selector;
    bool fromDevice = selector.getParentRegion() == node->getParentRegion();
    if (fromDevice) {
      std::string key =
          ((isIf ? "if_predicate_channel_" : "case_index_channel_") +
           Twine(channel++))
              .str();
      OpBuilder db(node);
      FailureOr<NodeOp> send = createNode(
          db, deviceNames, loc, "_XlaHostComputeMlir",
          (node.getName() + "_" + what + "_host_compute").str(), {selector},
          {},
          {db.getNamedAttr("Tinputs", typeList({selector.getType()})),
           db.getNamedAttr("Toutputs", typeList({})),
           db.getNamedAttr("send_key", db.getStringAttr(key)),
           db.getNamedAttr("recv_key", db.getStringAttr(""))});
      if (failed(send))
        return failure();
      // The host takes the branch only once it has the selector: the
      // device's branch must not talk to it before.
      SmallVector<Value> operands(node->getOperands());
      operands.push_back(send->getControl());
      node->setOperands(operands);
      hostSelector =
          createRecv(host, loc, (node.getName() + "_" + what + "_recv").str(),
                     key, {selector.getType()})
              .getOutputs()[0];
    }
    // The branches: If's then/else, Case's list.
    SmallVector<FuncAttr> branches;
    StringRef names[2] = {"then_branch", "else_branch"};
    if (isIf) {
      for (StringRef name : names) {
        auto f = dyn_cast_or_null<FuncAttr>(node.getTFAttr(name));
        if (!f)
          return nodeError(node) << "requires attribute '" << name << "'";
        branches.push_back(f);
      }
    } else {
      auto list = dyn_cast_or_null<ArrayAttr>(node.getTFAttr("branches"));
      for (Attribute entry : list ? list : ArrayAttr::get(ctx, {})) {
        auto f = dyn_cast<FuncAttr>(entry);
        if (!f)
          return nodeError(node) << "requires attribute 'branches', a list "
                                    "of functions";
        branches.push_back(f);
      }
      if (branches.empty())
        return nodeError(node) << "requires attribute 'branches', a list of "
                                  "functions";
    }
    SmallVector<Attribute> hostBranches, deviceBranches;
    for (FuncAttr branch : branches) {
      FuncOp hostBranch;
      auto split = splitFunction(node, branch.getName().getValue(),
                                 Role::Branch, host.replicated, hostBranch);
      if (failed(split))
        return failure();
      hostBranches.push_back(
          FuncAttr::get(ctx, FlatSymbolRefAttr::get(hostBranch.getSymNameAttr()),
                        DictionaryAttr::get(ctx)));
      deviceBranches.push_back(FuncAttr::get(
          ctx, FlatSymbolRefAttr::get(split->getSymNameAttr()),
          branch.getAttrs()));
    }
    // The host twin has no results: the branches' values reach the device
    // through their own channels.
    SmallVector<Value> inputs{hostSelector};
    llvm::append_range(inputs, hostInputs);
    SmallVector<NamedAttribute> hostAttrs{
        hb.getNamedAttr("Tout", hb.getArrayAttr({}))};
    if (isIf) {
      hostAttrs.push_back(hb.getNamedAttr(names[0], hostBranches[0]));
      hostAttrs.push_back(hb.getNamedAttr(names[1], hostBranches[1]));
    } else {
      hostAttrs.push_back(
          hb.getNamedAttr("branches", hb.getArrayAttr(hostBranches)));
    }
    if (failed(createNode(hb, *host.names, loc, isIf ? "If" : "Case",
                          hostName, inputs, {}, hostAttrs)))
      return failure();
    if (isIf) {
      setTFAttr(node, names[0], deviceBranches[0]);
      setTFAttr(node, names[1], deviceBranches[1]);
    } else {
      setTFAttr(node, "branches", ArrayAttr::get(ctx, deviceBranches));
    }
    node.setOpType(isIf ? "If" : "Case");
    return success();
  }

  if (op == "While" || op == "StatelessWhile") {
    auto cond = dyn_cast_or_null<FuncAttr>(node.getTFAttr("cond"));
    auto body = dyn_cast_or_null<FuncAttr>(node.getTFAttr("body"));
    if (!cond || !body)
      return nodeError(node) << "requires attributes 'cond' and 'body'";
    std::string key = ("while_condition_channel_" + Twine(channel++)).str();
    FuncOp hostCond, hostBody;
    auto deviceCond = splitFunction(node, cond.getName().getValue(),
                                    Role::LoopCondition, host.replicated,
                                    hostCond, key);
    if (failed(deviceCond))
      return failure();
    auto deviceBody = splitFunction(node, body.getName().getValue(),
                                    Role::LoopBody, host.replicated, hostBody);
    if (failed(deviceBody))
      return failure();
    // The host loop carries the key (and ordinal) and asks the device's
    // condition each time round.
    if (failed(createNode(hb, *host.names, loc, "While", hostName, hostInputs,
                          {},
                          {hb.getNamedAttr("cond", funcAttr(hostCond, "")),
                           hb.getNamedAttr("body", funcAttr(hostBody, ""))})))
      return failure();
    setTFAttr(node, "cond", funcAttr(*deviceCond, "cond"));
    setTFAttr(node, "body", funcAttr(*deviceBody, "body"));
    node.setOpType("While");
    return success();
  }

  // A call: the host calls the host copy when the device calls its copy.
  StringRef callee = getCalleeName(node);
  auto called = getCalledFunctions(node);
  if (callee.empty() || called.size() != 1 || called.front().second != callee)
    return success(); // left for the check of leftover markers
  FuncOp hostFunction;
  auto deviceFunction =
      splitFunction(node, callee, Role::Branch, host.replicated, hostFunction);
  if (failed(deviceFunction))
    return failure();
  if (failed(createNode(
          hb, *host.names, loc, "StatefulPartitionedCall", hostName,
          hostInputs, {},
          {hb.getNamedAttr("f", funcAttr(hostFunction, "")),
           hb.getNamedAttr("Tout", hb.getArrayAttr({}))})))
    return failure();
  if (node.getOpType() == callee)
    node.setOpType(deviceFunction->getSymName());
  else
    setTFAttr(node, "f", funcAttr(*deviceFunction, "f"));
  return success();
}

//===----------------------------------------------------------------------===//
// The cluster
//===----------------------------------------------------------------------===//

/// Rebuilds the cluster's results: host values it yielded leave it
/// directly, device values tail nodes read are yielded.
void Extractor::finishCluster() {
  Block &body = cluster.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> yielded;
  SmallVector<int> newIndex;
  for (Value v : yield.getOperands()) {
    bool isHost = v.getDefiningOp() && v.getDefiningOp()->getBlock() != &body;
    if (isHost) {
      newIndex.push_back(-1);
      continue;
    }
    newIndex.push_back(yielded.size());
    yielded.push_back(v);
  }
  SmallVector<Value> added;
  for (Value v : tailInputs)
    if ((!v.getDefiningOp() || v.getDefiningOp()->getBlock() == &body) &&
        !llvm::is_contained(yielded, v)) {
      yielded.push_back(v);
      added.push_back(v);
    }
  // Values read outside the cluster (by tail nodes) come from its results.
  auto rewireOutsideUses = [&](ClusterOp c) {
    Region *inside = &c.getBody();
    for (auto [k, v] : llvm::enumerate(yielded))
      v.replaceUsesWithIf(c.getOutputs()[k], [&](OpOperand &use) {
        return !inside->isAncestor(use.getOwner()->getParentRegion());
      });
  };
  if (added.empty() &&
      llvm::all_of(newIndex, [](int i) { return i >= 0; }))
    return rewireOutsideUses(cluster);

  OpBuilder b(cluster);
  SmallVector<Type> types;
  for (Value v : yielded)
    types.push_back(v.getType());
  auto rebuilt = b.create<ClusterOp>(
      cluster.getLoc(), types, ControlType::get(ctx),
      cluster.getControlInputs(), cluster.getClusterAttr(),
      cluster.getMetadataAttr(), cluster.getMetadataNameAttr(),
      cluster.getMetadataDeviceAttr());
  rebuilt.getBody().takeBody(cluster.getBody());
  OpBuilder yb(yield);
  yb.create<YieldOp>(yield.getLoc(), yielded);
  SmallVector<Value> oldYielded(yield.getOperands());
  yield.erase();
  for (auto [k, result] : llvm::enumerate(cluster.getOutputs()))
    result.replaceAllUsesWith(newIndex[k] >= 0
                                  ? rebuilt.getOutputs()[newIndex[k]]
                                  : oldYielded[k]);
  cluster.getControl().replaceAllUsesWith(rebuilt.getControl());
  rewireOutsideUses(rebuilt);
  cluster.erase();
  cluster = rebuilt;
}

LogicalResult Extractor::verifyNoMarkers() {
  // Every node the device runs: the cluster's and its functions'.
  SmallVector<Block *> blocks{&cluster.getBody().front()};
  llvm::DenseSet<Operation *> seen;
  while (!blocks.empty()) {
    Block *block = blocks.pop_back_val();
    for (auto node : block->getOps<NodeOp>()) {
      if (isOutsideCompiled(node))
        return nodeError(node)
               << "op has outside compilation attribute "
                  "_xla_outside_compilation which is not allowed after "
                  "clustering (graph-extract-outside-compilation moves it "
                  "to the host only from the cluster and from functions "
                  "that If, Case, While and calls reach)";
      for (auto [attr, callee] : getCalledFunctions(node))
        if (auto f = module.lookupSymbol<FuncOp>(callee);
            f && !f.getBody().empty() && seen.insert(f).second)
          blocks.push_back(&f.getBody().front());
    }
  }
  for (Type t : cluster.getOutputs().getTypes())
    if (Type hostOnly = getHostOnlyType(t))
      return cluster.emitError()
             << "The ExtractHeadTailOutsideCompilation pass produced a "
                "Device cluster with a result with a non-XLA type: "
             << hostOnly;
  return success();
}

LogicalResult Extractor::run() {
  llvm::DenseSet<Operation *> seen;
  if (failed(checkMarkers(cluster.getBody().front(), seen)))
    return failure();

  bool replicated = isa<ReplicateOp>(cluster->getParentOp());
  OpBuilder before(cluster), after(ctx);
  after.setInsertionPointAfter(cluster);
  extractHeadAndTail(before, after);

  // Host nodes go before the cluster, after the head.
  std::string clusterName = cluster.getCluster().str();
  HostSide host{before, &topNames, replicated, Value(), {}, nullptr, nullptr};
  Location loc = cluster.getLoc();
  host.makeProgramKey = [&, clusterName, loc](HostSide &h) {
    Value key = (*createNode(h.builder, *h.names, loc,
                             "_XlaCompileMlirPlaceholderProgramKey",
                             clusterName + "/program_key", {}, {}, {}))
                    .getOutputs()[0];
    key.setType(RankedTensorType::get({3}, StringType::get(ctx)));
    return key;
  };
  // As TensorFlow's bridge: one placeholder per core whose host
  // computations transfer, with that core as its logical_core.
  host.makeDeviceOrdinal = [&, clusterName, loc](HostSide &h, int64_t core) {
    OpBuilder &b = h.builder;
    std::string name = clusterName + "/device_ordinal";
    if (core != 0)
      name += "_" + std::to_string(core);
    Value ordinal =
        (*createNode(
             b, *h.names, loc, "_TPUDeviceOrdinalPlaceholder", name, {}, {},
             {b.getNamedAttr("logical_core", b.getI64IntegerAttr(core))}))
            .getOutputs()[0];
    ordinal.setType(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
    return ordinal;
  };
  if (failed(extractBlock(cluster.getBody().front(), host, topNames)))
    return failure();
  finishCluster();
  return verifyNoMarkers();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
class GraphExtractOutsideCompilationPass
    : public cleave::graph::impl::GraphExtractOutsideCompilationPassBase<
          GraphExtractOutsideCompilationPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(validateNodeDefs(module)))
      return signalPassFailure();
    for (Block *body : getGraphBodies(module)) {
      SmallVector<ClusterOp> clusters;
      body->walk([&](ClusterOp c) { clusters.push_back(c); });
      if (clusters.empty())
        continue;
      NameUniquer names(*body);
      for (ClusterOp cluster : clusters)
        if (failed(Extractor(module, cluster, names).run()))
          return signalPassFailure();
    }
  }
};
} // namespace
