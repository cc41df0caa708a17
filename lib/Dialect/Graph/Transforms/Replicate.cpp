//===- Replicate.cpp - graph-replicate: tpu.replicate() as a pass ---------===//
//
// Builds, around an existing computation, the nodes TensorFlow's Python
// tpu.replicate() would have created while tracing it, in the same order
// (so unique names come out the same), and tags the computation with
// _tpu_replicate and its host parts with _xla_outside_compilation.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Ops/OpRegistry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHREPLICATEPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

/// TPUReplicateContext's limit on listed unsupported ops.
static constexpr int kMaxWarningLines = 5;
static constexpr StringLiteral kReplicatedCore =
    "/device:TPU_REPLICATED_CORE:0";

/// Whether a node's name lies in name scope `scope` (or is the scope).
static bool inScope(StringRef name, StringRef scope) {
  return name == scope ||
         (name.starts_with(scope) && name.size() > scope.size() &&
          name[scope.size()] == '/');
}

static Type elementTypeOf(Value value) {
  if (auto tensor = dyn_cast<TensorType>(value.getType()))
    return tensor.getElementType();
  return value.getType();
}

static std::string formatTypes(ArrayRef<Value> values) {
  SmallVector<std::string> names;
  for (Value v : values)
    names.push_back(getPythonDTypeName(elementTypeOf(v)));
  return "[" + llvm::join(names, ", ") + "]";
}

/// Whether the device backend compiles `node`: its registry entry says so;
/// calls compile with their callee; unknown ops run on the host.
static bool isDeviceCompilable(NodeOp node, ModuleOp module) {
  if (const ops::OpSpec *spec = ops::lookupOp(node.getOpType()))
    return spec->isDeviceCompilable;
  return static_cast<bool>(module.lookupSymbol<FuncOp>(node.getOpType()));
}

namespace {
class GraphReplicatePass
    : public graph::impl::GraphReplicatePassBase<GraphReplicatePass> {
public:
  using GraphReplicatePassBase::GraphReplicatePassBase;

  void runOnOperation() override;

private:
  /// What the user named, before any rewrite.
  struct Computation {
    FuncOp function;               ///< Set in function mode.
    SmallVector<NodeOp> callSites; ///< Function mode: one per replica (or 1).
    SmallVector<NodeOp> members;   ///< Scope mode: the scope's nodes.
    /// Outputs mode: the tensors named, outputs whoever reads them.
    SmallVector<Value> namedOutputs;
    /// Per replica, its input values (before mirroring).
    SmallVector<SmallVector<Value>> replicaInputs;
  };

  /// What the pass builds, step by step.
  struct Replication {
    StringAttr cluster;
    NodeOp pivot, metadata;
    /// The replicated_input_<i> identities: the computation's inputs.
    SmallVector<Value> computationInputs;
    /// The computation's nodes, in graph order.
    SmallVector<NodeOp> members;
    /// Its data outputs and (function mode) control outputs.
    SmallVector<Value> outputs, outputOperations;
    /// The output identities inside the computation, one per output.
    SmallVector<Value> outputIdentities;
    /// shards[r][k]: replica r's k-th result (or its shard NoOp).
    SmallVector<SmallVector<NodeOp>> shards;
  };

  LogicalResult checkOptions(GraphOp graph);
  LogicalResult resolve(GraphOp graph, Computation &comp);
  LogicalResult checkReplicaInputs(Computation &comp, Location loc);
  LogicalResult checkMember(NodeOp node);
  LogicalResult markOutsideCompilation(ArrayRef<NodeOp> members,
                                       NodeOp metadata);
  void reportUnsupported(ArrayRef<NodeOp> members);
  void buildFanIn(OpBuilder &b, Location loc, const Computation &comp,
                  Replication &rep);
  void inlineFunction(OpBuilder &b, FuncOp function, Replication &rep);
  void adoptScope(const Computation &comp, Replication &rep);
  void tagMembers(Replication &rep);
  void buildFanOut(OpBuilder &b, Location loc, Replication &rep);
  void rewireUsers(Computation &comp, Replication &rep);
  NodeOp createNode(OpBuilder &b, Location loc, StringRef opType,
                    StringRef baseName, TypeRange types, ValueRange inputs,
                    ArrayRef<NamedAttribute> attrs, StringRef device = {});
  DictionaryAttr metadataAttrs(Builder &b, StringRef cluster);

  std::optional<NameUniquer> names;
};
} // namespace

NodeOp GraphReplicatePass::createNode(OpBuilder &b, Location loc,
                                      StringRef opType, StringRef baseName,
                                      TypeRange types, ValueRange inputs,
                                      ArrayRef<NamedAttribute> attrs,
                                      StringRef device) {
  return NodeOp::create(b, loc, opType, names->unique(baseName), types, inputs,
                        b.getDictionaryAttr(attrs), device);
}

LogicalResult GraphReplicatePass::resolve(GraphOp graph, Computation &comp) {
  ModuleOp module = getOperation();
  Block &body = graph.getBody().front();
  comp.function = module.lookupSymbol<FuncOp>(computation);
  if (comp.function) {
    for (auto node : body.getOps<NodeOp>())
      if (getCalleeName(node) == computation)
        comp.callSites.push_back(node);
    if (comp.callSites.empty())
      return comp.function.emitError("graph-replicate: function '")
             << computation.getValue() << "' has no call site in the graph";
    if (comp.callSites.size() != 1 &&
        (int64_t)comp.callSites.size() != numReplicas)
      return comp.callSites[1].emitError("graph-replicate: ")
             << comp.callSites.size() << " call sites of '"
             << computation.getValue()
             << "' for num-replicas=" << numReplicas.getValue()
             << ": give one call site per replica, or one call site whose "
                "inputs every replica shares";
    for (NodeOp call : comp.callSites)
      comp.replicaInputs.emplace_back(call.getDataInputs().begin(),
                                      call.getDataInputs().end());
    return checkReplicaInputs(comp, comp.callSites.front().getLoc());
  }
  if (!outputs.empty()) {
    // The nodes the outputs need, up to variables, placeholders and other
    // computations: what tpu.replicate() traces of a computation function
    // whose arguments are those.
    TensorNameResolver byName(graph, "graph-replicate");
    auto named = byName.resolve(outputs, "outputs");
    if (failed(named))
      return failure();
    comp.namedOutputs = *named;
    llvm::DenseSet<Operation *> needed;
    SmallVector<Operation *> work;
    for (Value v : comp.namedOutputs)
      work.push_back(v.getDefiningOp());
    while (!work.empty()) {
      auto node = dyn_cast_or_null<NodeOp>(work.pop_back_val());
      if (!node || needed.contains(node))
        continue;
      StringRef op = node.getOpType();
      if (op == "VariableV2" || op == "Variable" || op == "VarHandleOp" ||
          op == "Placeholder" || op == "PlaceholderWithDefault" ||
          node.getTFAttr(kTPUReplicateAttr))
        continue;
      needed.insert(node);
      for (Value input : node->getOperands())
        work.push_back(input.getDefiningOp());
    }
    for (auto node : body.getOps<NodeOp>())
      if (needed.contains(node))
        comp.members.push_back(node);
  } else {
    for (auto node : body.getOps<NodeOp>())
      if (inScope(node.getName(), computation))
        comp.members.push_back(node);
  }
  if (comp.members.empty() && !outputs.empty())
    return graph.emitError("graph-replicate: the outputs need no node to "
                           "replicate (they are variables or placeholders)");
  if (comp.members.empty())
    return graph.emitError("graph-replicate: computation '")
           << computation.getValue()
           << "' is neither a function of the library nor a name scope of "
              "the graph";
  // Inbound edges, in order of first use, become the replicated inputs.
  llvm::DenseSet<Operation *> memberSet;
  for (NodeOp node : comp.members)
    memberSet.insert(node);
  llvm::SetVector<Value> inbound;
  for (NodeOp node : comp.members)
    for (Value input : node.getDataInputs())
      if (!memberSet.contains(input.getDefiningOp()))
        inbound.insert(input);
  comp.replicaInputs.emplace_back(inbound.begin(), inbound.end());
  return success();
}

LogicalResult GraphReplicatePass::checkReplicaInputs(Computation &comp,
                                                     Location loc) {
  ArrayRef<Value> first = comp.replicaInputs.front();
  for (auto [i, inputs] : llvm::enumerate(comp.replicaInputs)) {
    if (inputs.size() != first.size())
      return nodeError(comp.callSites[i])
             << "Replicas must have the same number of inputs. Replica 0 had "
             << first.size() << " inputs, replica " << i << " had "
             << inputs.size() << " inputs.";
    for (auto [a, b] : llvm::zip(first, inputs))
      if (elementTypeOf(a) != elementTypeOf(b))
        return nodeError(comp.callSites[i])
               << "Replicas must have matching input types. Replica 0 had "
                  "input types "
               << formatTypes(first) << ", replica " << i << " had input types "
               << formatTypes(inputs);
  }
  unsigned numArgs = 0;
  for (Type t : comp.function.getArgumentTypes())
    numArgs += !isa<ControlType>(t);
  if (first.size() != numArgs)
    return emitError(loc) << "Supplied computation cannot be called with the "
                             "specified inputs. You specified "
                          << first.size() << " inputs, but the computation '"
                          << computation.getValue() << "' needs " << numArgs;
  return success();
}

LogicalResult GraphReplicatePass::checkMember(NodeOp node) {
  if (node.getTFAttr(kTPUReplicateAttr))
    return nodeError(node) << "TPU computations cannot be nested";
  for (Value input : node.getDataInputs())
    if (isa<RefType>(elementTypeOf(input)))
      return nodeError(node) << "Non-resource Variables are not supported "
                                "inside TPU computations (operator name: "
                             << node.getName() << ")";
  for (NamedAttribute attr : node.getAttrs())
    if (isa<PlaceholderAttr>(attr.getValue()))
      return nodeError(node)
             << "attr '" << attr.getName().getValue()
             << "' is a placeholder: only functions with concrete attrs can "
                "be inlined into a replicated computation";
  return success();
}

DictionaryAttr GraphReplicatePass::metadataAttrs(Builder &b,
                                                 StringRef cluster) {
  // The Python op wrapper writes every attr of the OpDef, defaults included.
  NamedAttrList attrs;
  if (const ops::OpSpec *spec = ops::lookupOp("TPUReplicateMetadata"))
    for (const ops::AttrSpec &attr : spec->attrs)
      if (Attribute value = getDefaultAttr(attr, b.getContext()))
        attrs.set(attr.name, value);
  attrs.set("num_replicas", b.getI64IntegerAttr(numReplicas));
  attrs.set("num_cores_per_replica", b.getI64IntegerAttr(numCoresPerReplica));
  attrs.set("topology", b.getStringAttr(topology));
  SmallVector<Attribute> assignment;
  for (int64_t core : deviceAssignment)
    assignment.push_back(b.getI64IntegerAttr(core));
  attrs.set("device_assignment", b.getArrayAttr(assignment));
  attrs.set("use_tpu", b.getBoolAttr(useTpu));
  attrs.set("step_marker_location", b.getStringAttr(stepMarkerLocation));
  attrs.set("allow_soft_placement", b.getBoolAttr(allowSoftPlacement));
  attrs.set("use_spmd_for_xla_partitioning",
            b.getBoolAttr(useSpmdForXlaPartitioning));
  attrs.set(kTPUReplicateAttr, b.getStringAttr(cluster));
  return attrs.getDictionary(b.getContext());
}

/// The TPU_REPLICATED_CORE index a device names, if it names one.
static std::optional<int> getReplicatedCore(StringRef device) {
  size_t at = device.find("TPU_REPLICATED_CORE:");
  if (at == StringRef::npos)
    return std::nullopt;
  int core;
  StringRef digits = device.drop_front(at + strlen("TPU_REPLICATED_CORE:"));
  if (digits.consumeInteger(10, core))
    return std::nullopt;
  return core;
}

LogicalResult
GraphReplicatePass::markOutsideCompilation(ArrayRef<NodeOp> members,
                                           NodeOp metadata) {
  Builder b(&getContext());
  for (auto [i, outer] : llvm::enumerate(outsideCompilation))
    for (auto [j, inner] : llvm::enumerate(outsideCompilation))
      if (i != j && inScope(inner, outer))
        return metadata.emitError("Cannot nest outside_compilation clusters")
               << " (outside-compilation scope '" << inner << "' lies in '"
               << outer << "')";
  llvm::StringSet<> taken;
  for (NodeOp node : members)
    if (auto scope = getStringTFAttr(node, kOutsideCompilationAttr);
        !scope.empty())
      taken.insert(scope);
  SmallVector<Attribute> hostComputeCores;
  int counter = 0;
  for (StringRef scopePrefix : outsideCompilation) {
    // TPUReplicateContext's counter, skipping names the graph already uses.
    std::string scope;
    do
      scope = std::to_string(counter++);
    while (taken.contains(scope));
    bool matched = false, recorded = false;
    for (NodeOp node : members) {
      if (!inScope(node.getName(), scopePrefix))
        continue;
      if (node.getTFAttr(kOutsideCompilationAttr))
        return nodeError(node) << "Cannot nest outside_compilation clusters";
      matched = true;
      setTFAttr(node, kOutsideCompilationAttr, b.getStringAttr(scope));
      // The scope was entered on a replicated core: the host computation
      // talks to that core, and its nodes run on the host.
      if (auto core = getReplicatedCore(node.getDevice().value_or(""))) {
        if (!recorded)
          hostComputeCores.push_back(
              b.getStringAttr(scope + ":" + std::to_string(*core)));
        recorded = true;
        node.removeDeviceAttr();
      }
    }
    if (!matched)
      return metadata.emitError("graph-replicate: outside-compilation scope '")
             << scopePrefix << "' names no node of the computation";
  }
  if (!hostComputeCores.empty())
    setTFAttr(metadata, "host_compute_core", b.getArrayAttr(hostComputeCores));

  if (!allowSoftPlacement)
    return success();
  // auto<N>: a node joins its producers' scope when they all share one
  // (then no path leaves the scope and comes back), else opens a new one.
  llvm::DenseMap<Operation *, std::string> autoScope;
  llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
  int autoCounter = 0;
  for (NodeOp node : members) {
    if (node.getTFAttr(kOutsideCompilationAttr) ||
        isDeviceCompilable(node, getOperation()))
      continue;
    std::optional<std::string> shared;
    bool joinable = true;
    for (Value input : node.getInputs()) {
      Operation *producer = input.getDefiningOp();
      if (!producer || !memberSet.contains(producer))
        continue;
      auto it = autoScope.find(producer);
      if (it == autoScope.end() || (shared && *shared != it->second)) {
        joinable = false;
        break;
      }
      shared = it->second;
    }
    std::string scope =
        joinable && shared ? *shared : "auto" + std::to_string(autoCounter++);
    autoScope[node] = scope;
    setTFAttr(node, kOutsideCompilationAttr, b.getStringAttr(scope));
  }
  return success();
}

void GraphReplicatePass::reportUnsupported(ArrayRef<NodeOp> members) {
  SmallVector<NodeOp> unsupported;
  for (NodeOp node : members)
    if (!node.getTFAttr(kOutsideCompilationAttr) &&
        !isDeviceCompilable(node, getOperation()))
      unsupported.push_back(node);
  if (unsupported.empty())
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << unsupported.size() << " unsupported operations found: ";
  for (NodeOp node : ArrayRef(unsupported).take_front(kMaxWarningLines))
    os << "\n  " << node.getOpType() << " (" << node.getName() << ")";
  unsupported.front().emitWarning(text);
  if (unsupported.size() > kMaxWarningLines)
    unsupported[kMaxWarningLines].emitWarning()
        << "... and " << unsupported.size() - kMaxWarningLines << " more";
}

LogicalResult GraphReplicatePass::checkOptions(GraphOp graph) {
  if (computation.empty() == outputs.empty())
    return graph.emitError("graph-replicate: give option 'computation' (a "
                           "function of the library or a name scope) or "
                           "option 'outputs' (the tensors the computation "
                           "computes), not both");
  if (numReplicas < 1)
    return graph.emitError("graph-replicate: option 'num-replicas' must be "
                           "at least 1, got ")
           << numReplicas.getValue();
  if (numCoresPerReplica < 1)
    return graph.emitError("graph-replicate: option 'num-cores-per-replica' "
                           "must be at least 1, got ")
           << numCoresPerReplica.getValue();
  // The names of TensorFlow's xla::DebugOptions::StepMarkerLocation.
  if (!llvm::is_contained(
          {"STEP_MARK_AT_ENTRY", "STEP_MARK_AT_TOP_LEVEL_WHILE_LOOP",
           "STEP_MARK_AT_SECOND_LEVEL_WHILE_LOOP", "STEP_MARK_NONE"},
          StringRef(stepMarkerLocation)))
    return graph.emitError("graph-replicate: option 'step-marker-location' "
                           "must be one of STEP_MARK_AT_ENTRY, "
                           "STEP_MARK_AT_TOP_LEVEL_WHILE_LOOP, "
                           "STEP_MARK_AT_SECOND_LEVEL_WHILE_LOOP, "
                           "STEP_MARK_NONE; got '")
           << stepMarkerLocation.getValue() << "'";
  return success();
}

void GraphReplicatePass::buildFanIn(OpBuilder &b, Location loc,
                                    const Computation &comp, Replication &rep) {
  // One TPUReplicatedInput per input, replica r's value at r.
  unsigned numInputs = comp.replicaInputs.front().size();
  SmallVector<Value> replicatedInputs;
  for (unsigned i = 0; i < numInputs; ++i) {
    SmallVector<Value> perReplica;
    for (int64_t r = 0; r < numReplicas; ++r)
      perReplica.push_back(
          comp.replicaInputs[comp.replicaInputs.size() == 1 ? 0 : r][i]);
    Value v = perReplica.front();
    replicatedInputs.push_back(
        createNode(
            b, loc, "TPUReplicatedInput", "input" + std::to_string(i),
            v.getType(), perReplica,
            {b.getNamedAttr("N", b.getI64IntegerAttr(numReplicas)),
             b.getNamedAttr("T", TypeAttr::get(elementTypeOf(v))),
             b.getNamedAttr("index", b.getI64IntegerAttr(i)),
             b.getNamedAttr("is_mirrored_variable", b.getBoolAttr(false)),
             b.getNamedAttr("is_packed", b.getBoolAttr(false))})
            .getOutputs()[0]);
  }
  std::string cluster = names->unique("cluster");
  rep.cluster = b.getStringAttr(cluster);
  rep.pivot = createNode(b, loc, "NoOp", cluster + "/pivot", {}, {},
                         {b.getNamedAttr("_pivot_for_cluster", rep.cluster)});
  rep.metadata = NodeOp::create(
      b, loc, "TPUReplicateMetadata", names->unique("TPUReplicateMetadata"), {},
      rep.pivot.getControl(), metadataAttrs(b, cluster));
  // Under control_dependencies([metadata]).
  for (auto [i, v] : llvm::enumerate(replicatedInputs))
    rep.computationInputs.push_back(
        createNode(b, loc, "Identity", "replicated_input_" + std::to_string(i),
                   v.getType(), {v, rep.metadata.getControl()},
                   {b.getNamedAttr("T", TypeAttr::get(elementTypeOf(v))),
                    b.getNamedAttr(kTPUReplicateAttr, rep.cluster),
                    b.getNamedAttr("_tpu_input_identity", b.getBoolAttr(true))})
            .getOutputs()[0]);
}

void GraphReplicatePass::inlineFunction(OpBuilder &b, FuncOp function,
                                        Replication &rep) {
  Block &fbody = function.getBody().front();
  IRMapping mapping;
  unsigned dataArg = 0;
  DenseMap<StringRef, Value> argByName;
  for (auto [arg, name] :
       llvm::zip(fbody.getArguments(), function.getArgNames())) {
    if (isa<ControlType>(arg.getType()))
      continue;
    Value input = rep.computationInputs[dataArg++];
    mapping.map(arg, input);
    argByName[cast<StringAttr>(name).getValue().split(':').first] = input;
  }
  // A control input on argument "x" ("^x") waits for its input identity.
  for (auto [arg, name] :
       llvm::zip(fbody.getArguments(), function.getArgNames()))
    if (isa<ControlType>(arg.getType()))
      if (Value data = argByName.lookup(
              cast<StringAttr>(name).getValue().drop_front().split(':').first))
        mapping.map(arg, data.getDefiningOp<NodeOp>().getControl());
  // Name scopes are made unique as a whole: "dense/..." -> "dense_1/...".
  llvm::StringMap<std::string> scopeNames;
  for (auto node : fbody.getOps<NodeOp>()) {
    auto copy = cast<NodeOp>(b.cloneWithoutRegions(*node));
    auto [head, tail] = node.getName().split('/');
    std::string name;
    if (tail.empty()) {
      name = names->unique(head);
    } else {
      auto [it, inserted] = scopeNames.try_emplace(head);
      if (inserted)
        it->second = names->unique(head);
      name = names->unique(it->second + "/" + tail.str());
    }
    copy.setNameAttr(b.getStringAttr(name));
    copy.removeSpellingsAttr();
    mapping.map(node->getResults(), copy->getResults());
    rep.members.push_back(copy);
  }
  for (NodeOp copy : rep.members)
    for (OpOperand &operand : copy->getOpOperands())
      operand.set(mapping.lookupOrDefault(operand.get()));
  ReturnOp ret = function.getReturnOp();
  unsigned numData = ret.getNames().size();
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    (i < numData ? rep.outputs : rep.outputOperations)
        .push_back(mapping.lookupOrDefault(v));
}

void GraphReplicatePass::adoptScope(const Computation &comp, Replication &rep) {
  DenseMap<Value, Value> inputMap;
  for (auto [outside, inside] :
       llvm::zip(comp.replicaInputs.front(), rep.computationInputs))
    inputMap[outside] = inside;
  llvm::DenseSet<Operation *> memberSet(comp.members.begin(),
                                        comp.members.end());
  for (NodeOp node : comp.members) {
    for (OpOperand &operand : node->getOpOperands())
      if (Value inside = inputMap.lookup(operand.get()))
        operand.set(inside);
    rep.members.push_back(node);
  }
  // The named outputs, then the values read outside the scope, in graph
  // order.
  llvm::SetVector<Value> outputs(comp.namedOutputs.begin(),
                                 comp.namedOutputs.end());
  for (NodeOp node : comp.members)
    for (Value v : node.getOutputs())
      if (llvm::any_of(v.getUsers(), [&](Operation *user) {
            return !memberSet.contains(user);
          }))
        outputs.insert(v);
  rep.outputs.append(outputs.begin(), outputs.end());
}

void GraphReplicatePass::tagMembers(Replication &rep) {
  // As TPUReplicateContext.AddOp: a node with no inputs and no control
  // input from inside the computation (its nodes and input identities)
  // hangs off the pivot.
  llvm::DenseSet<Operation *> inContext(rep.members.begin(), rep.members.end());
  for (Value input : rep.computationInputs)
    inContext.insert(input.getDefiningOp());
  for (NodeOp node : rep.members) {
    setTFAttr(node, kTPUReplicateAttr, rep.cluster);
    if (!node.getDataInputs().empty() ||
        llvm::any_of(node.getControlInputs(), [&](Value control) {
          return inContext.contains(control.getDefiningOp());
        }))
      continue;
    SmallVector<Value> inputs(node.getInputs());
    inputs.push_back(rep.pivot.getControl());
    node->setOperands(inputs);
  }
}

void GraphReplicatePass::buildFanOut(OpBuilder &b, Location loc,
                                     Replication &rep) {
  // Identities inside the computation (so that no input is an output).
  for (Value v : rep.outputs) {
    auto producer = v.getDefiningOp<NodeOp>();
    StringRef device = producer ? producer.getDevice().value_or("") : "";
    rep.outputIdentities.push_back(
        createNode(
            b, loc, "Identity", "Identity", v.getType(), v,
            {b.getNamedAttr("T", TypeAttr::get(elementTypeOf(v))),
             b.getNamedAttr(kTPUReplicateAttr, rep.cluster),
             b.getNamedAttr("_tpu_output_identity", b.getBoolAttr(true))},
            device.empty() ? StringRef(kReplicatedCore) : device)
            .getOutputs()[0]);
  }
  Value metadataControl = rep.metadata.getControl();
  if (useTpu)
    createNode(b, loc, "TPUCompilationResult", "TPUCompilationResult",
               RankedTensorType::get({}, StringType::get(&getContext())),
               metadataControl,
               {b.getNamedAttr("_tpu_compilation_status", rep.cluster)});
  else
    createNode(b, loc, "NoOp", "compilation_status", {}, metadataControl, {});
  // Per-replica results, created output by output as TensorFlow does.
  rep.shards.resize(numReplicas);
  if (rep.outputs.empty())
    for (int64_t r = 0; r < numReplicas; ++r)
      rep.shards[r].push_back(createNode(b, loc, "NoOp",
                                         "shard_" + std::to_string(r), {},
                                         rep.outputOperations, {}));
  for (auto [k, v] : llvm::enumerate(rep.outputIdentities)) {
    NodeOp tro = createNode(
        b, loc, "TPUReplicatedOutput", "output" + std::to_string(k),
        SmallVector<Type>(numReplicas, v.getType()), v,
        {b.getNamedAttr("num_replicas", b.getI64IntegerAttr(numReplicas)),
         b.getNamedAttr("T", TypeAttr::get(elementTypeOf(v)))});
    for (int64_t r = 0; r < numReplicas; ++r) {
      Value replica = tro.getOutputs()[r];
      SmallVector<Value> inputs{replica};
      inputs.append(rep.outputOperations);
      rep.shards[r].push_back(createNode(
          b, loc, "Identity",
          "output_" + std::to_string(k) + "_shard_" + std::to_string(r),
          replica.getType(), inputs,
          {b.getNamedAttr("T", TypeAttr::get(elementTypeOf(replica)))}));
    }
  }
}

void GraphReplicatePass::rewireUsers(Computation &comp, Replication &rep) {
  if (!comp.function) {
    // Outside users of the scope read replica 0.
    llvm::DenseSet<Operation *> memberSet(rep.members.begin(),
                                          rep.members.end());
    for (auto [k, v] : llvm::enumerate(rep.outputs)) {
      Operation *identity = rep.outputIdentities[k].getDefiningOp();
      v.replaceUsesWithIf(
          rep.shards[0][k].getOutputs()[0], [&](OpOperand &use) {
            Operation *user = use.getOwner();
            return !memberSet.contains(user) && user != identity;
          });
    }
    return;
  }
  for (auto [r, call] : llvm::enumerate(comp.callSites)) {
    for (auto [k, result] : llvm::enumerate(call.getOutputs()))
      result.replaceAllUsesWith(rep.shards[r][k].getOutputs()[0]);
    // A control edge on the call waits for all of its replica's results.
    SmallVector<Operation *> controlUsers(call.getControl().getUsers());
    for (Operation *user : controlUsers) {
      SmallVector<Value> operands;
      for (Value v : user->getOperands()) {
        if (v != call.getControl()) {
          operands.push_back(v);
          continue;
        }
        for (NodeOp shard : rep.shards[r])
          operands.push_back(shard.getControl());
      }
      user->setOperands(operands);
    }
    call.erase();
  }
}

void GraphReplicatePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto graphs = module.getOps<GraphOp>();
  if (graphs.empty()) {
    module.emitError("graph-replicate: the module has no graph.graph");
    return signalPassFailure();
  }
  GraphOp graph = *graphs.begin();
  if (failed(checkOptions(graph)))
    return signalPassFailure();
  Computation comp;
  if (failed(resolve(graph, comp)))
    return signalPassFailure();
  auto toCheck =
      comp.function
          ? SmallVector<NodeOp>(comp.function.getBody().getOps<NodeOp>())
          : comp.members;
  for (NodeOp node : toCheck)
    if (failed(checkMember(node)))
      return signalPassFailure();

  names.emplace(graph.getBody().front());
  OpBuilder b(&getContext());
  Operation *first = comp.function ? comp.callSites.front().getOperation()
                                   : comp.members.front().getOperation();
  Location loc = first->getLoc();
  b.setInsertionPoint(first);
  Replication rep;
  buildFanIn(b, loc, comp, rep);
  if (comp.function)
    inlineFunction(b, comp.function, rep);
  else
    adoptScope(comp, rep);
  tagMembers(rep);
  if (failed(markOutsideCompilation(rep.members, rep.metadata)))
    return signalPassFailure();
  if (!allowSoftPlacement)
    reportUnsupported(rep.members);
  b.setInsertionPointAfter(rep.members.empty() ? rep.metadata
                                               : rep.members.back());
  buildFanOut(b, loc, rep);
  rewireUsers(comp, rep);
}
