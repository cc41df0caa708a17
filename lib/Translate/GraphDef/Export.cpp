//===- Export.cpp - graph dialect -> GraphDef -----------------------------===//
//
// Writes nodes in IR order with their attrs, inputs (as the file spelled
// them, while still valid) and devices. Output is deterministic: map keys
// are sorted on the wire and in text.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "cleave/Translate/GraphDef.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include "google/protobuf/arena.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
namespace tf = tensorflow;
namespace pb = google::protobuf;

static LogicalResult exportNode(NodeOp node, tf::NodeDef &def,
                                bool inFunction) {
  def.set_name(node.getName().str());
  def.set_op(node.getOpType().str());
  ArrayAttr spellings = node.getSpellingsAttr();
  for (auto [i, input] : llvm::enumerate(node.getInputs())) {
    if (spellings) {
      StringRef text = cast<StringAttr>(spellings[i]).getValue();
      if (graphdef::spellingMatches(text, input, inFunction)) {
        def.add_input(text.str());
        continue;
      }
    }
    def.add_input(graphdef::renderInput(input, inFunction));
  }
  if (auto device = node.getDevice())
    def.set_device(device->str());
  std::string error;
  if (failed(
          graphdef::exportAttrMap(node.getAttrs(), *def.mutable_attr(), error)))
    return node.emitOpError("node '") << node.getName() << "': " << error;
  if (auto info = node.getDebugInfoAttr())
    if (failed(graphdef::attrToProto(
            info, *def.mutable_experimental_debug_info(), error)))
      return node.emitOpError("debug_info: ") << error;
  if (auto type = node.getFullTypeAttr())
    if (failed(graphdef::attrToProto(type, *def.mutable_experimental_type(),
                                     error)))
      return node.emitOpError("full_type: ") << error;
  return success();
}

/// Writes a node that graph-cluster-formation folded into `op`.
static LogicalResult exportFlatNode(Operation *op, const FlatNode &node,
                                    tf::GraphDef &graphDef) {
  tf::NodeDef &def = *graphDef.add_node();
  def.set_name(node.name.str());
  def.set_op(node.opType.str());
  for (Value input : node.inputs)
    def.add_input(graphdef::renderInput(input, false));
  if (!node.device.empty())
    def.set_device(node.device.str());
  std::string error;
  if (failed(graphdef::exportAttrMap(node.attrs, *def.mutable_attr(), error)))
    return op->emitOpError("node '") << def.name() << "': " << error;
  return success();
}

/// A cluster goes back flat: its metadata node, then its nodes tagged
/// `_tpu_replicate` again.
static LogicalResult exportCluster(ClusterOp cluster, tf::GraphDef &graphDef) {
  if (failed(exportFlatNode(cluster, getMetadataNode(cluster), graphDef)))
    return failure();
  for (auto node : cluster.getBody().front().getOps<NodeOp>()) {
    tf::NodeDef &def = *graphDef.add_node();
    if (failed(exportNode(node, def, false)))
      return failure();
    (*def.mutable_attr())["_tpu_replicate"].set_s(cluster.getCluster().str());
  }
  return success();
}

/// The name replica `replica`'s copy of host node `name` gets.
static std::string replicaNodeName(StringRef name, int64_t replica) {
  return (name + "/replica_" + Twine(replica)).str();
}

/// How replica `replica`'s copy of a host node names its input `input`:
/// replica `replica`'s value of a block argument, that replica's copy of
/// another host node, the one program key, or a value from outside as is.
static FailureOr<std::string>
renderReplicaInput(ReplicateOp replicate, NodeOp user, Value input,
                   int64_t replica) {
  Block &body = replicate.getBody().front();
  if (auto arg = dyn_cast<BlockArgument>(input); arg && arg.getOwner() == &body)
    return graphdef::renderInput(
        replicate.getReplicaInput(arg.getArgNumber(), replica), false);
  auto producer = input.getDefiningOp<NodeOp>();
  if (!replicate->isAncestor(input.getParentBlock()->getParentOp()))
    return graphdef::renderInput(input, false);
  if (!producer || producer->getBlock() != &body)
    return user.emitOpError("node '")
               << user.getName()
               << "' is the host side of an outside-compiled replicated "
                  "computation and reads a value of its device side, which "
                  "has no GraphDef form; write MLIR instead",
           failure();
  if (producer.getOpType() == "_XlaCompileMlirPlaceholderProgramKey")
    return graphdef::renderInput(input, false);
  std::string name = replicaNodeName(producer.getName(), replica);
  if (isa<ControlType>(input.getType()))
    return "^" + name;
  unsigned port = cast<OpResult>(input).getResultNumber();
  return port == 0 ? name : name + ":" + std::to_string(port);
}

/// The host side of an outside-compiled replicated computation goes back
/// as one copy per replica, as TensorFlow's lowering of a replicate region
/// to islands makes them: replica r's copy of node `h` is `h/replica_r`,
/// reads replica r's inputs, and the device ordinal placeholder becomes
/// replica r's constant ordinal (the host side's transfers name their
/// replica by it). The program key, the same for every replica, stays one
/// node. Read back, the copies are host nodes beside the cluster that the
/// run ties to it by the program key and the channel keys.
static LogicalResult exportReplicaHostNodes(ReplicateOp replicate,
                                            ArrayRef<NodeOp> hostNodes,
                                            tf::GraphDef &graphDef) {
  Operation *yield = replicate.getBody().front().getTerminator();
  for (Value v : yield->getOperands())
    if (auto producer = v.getDefiningOp<NodeOp>())
      return producer.emitOpError("node '")
                 << producer.getName()
                 << "' is the host side of an outside-compiled replicated "
                    "computation and a result of it, which has no GraphDef "
                    "form; write MLIR instead",
             failure();
  for (NodeOp node : hostNodes)
    if (node.getOpType() == "_XlaCompileMlirPlaceholderProgramKey" &&
        failed(exportNode(node, *graphDef.add_node(), false)))
      return failure();
  for (int64_t r = 0; r < replicate.getN(); ++r) {
    for (NodeOp node : hostNodes) {
      StringRef opType = node.getOpType();
      if (opType == "_XlaCompileMlirPlaceholderProgramKey")
        continue;
      tf::NodeDef &def = *graphDef.add_node();
      if (opType == "_TPUDeviceOrdinalPlaceholder") {
        def.set_name(replicaNodeName(node.getName(), r));
        def.set_op("Const");
        auto &attrs = *def.mutable_attr();
        attrs["dtype"].set_type(tf::DT_INT64);
        tf::TensorProto &value = *attrs["value"].mutable_tensor();
        value.set_dtype(tf::DT_INT64);
        value.mutable_tensor_shape();
        value.add_int64_val(r);
        continue;
      }
      if (failed(exportNode(node, def, false)))
        return failure();
      def.set_name(replicaNodeName(node.getName(), r));
      def.clear_input();
      for (Value input : node.getInputs()) {
        FailureOr<std::string> text =
            renderReplicaInput(replicate, node, input, r);
        if (failed(text))
          return failure();
        def.add_input(*text);
      }
    }
  }
  return success();
}

/// A replicate region goes back as its TPUReplicatedInput nodes, the
/// TPUPartitionedInput[V2] nodes formation moved in (they read those by
/// name), the per-replica copies of its host side, the cluster, then its
/// TPUReplicatedOutput nodes.
static LogicalResult exportReplicate(ReplicateOp replicate,
                                     tf::GraphDef &graphDef) {
  SmallVector<NodeOp> partitionedInputs, hostNodes;
  for (auto node : replicate.getBody().front().getOps<NodeOp>())
    (node.getOpType().starts_with("TPUPartitionedInput") ? partitionedInputs
                                                         : hostNodes)
        .push_back(node);
  SmallVector<FlatNode> inputs, outputs;
  getReplicatedNodes(replicate, inputs, outputs);
  for (const FlatNode &node : inputs)
    if (failed(exportFlatNode(replicate, node, graphDef)))
      return failure();
  for (NodeOp node : partitionedInputs)
    if (failed(exportNode(node, *graphDef.add_node(), false)))
      return failure();
  if (failed(exportReplicaHostNodes(replicate, hostNodes, graphDef)) ||
      failed(exportCluster(replicate.getCluster(), graphDef)))
    return failure();
  for (const FlatNode &node : outputs)
    if (failed(exportFlatNode(replicate, node, graphDef)))
      return failure();
  return success();
}

static LogicalResult exportFunction(FuncOp func, tf::FunctionDef &fdef) {
  std::string error;
  if (DictionaryAttr uncallable = func.getUncallableAttr()) {
    if (failed(graphdef::attrToProto(uncallable, fdef, error)))
      return func.emitOpError("uncallable: ") << error;
    return success();
  }
  tf::OpDef *sig = fdef.mutable_signature();
  if (failed(graphdef::attrToProto(func.getSignature(), *sig, error)))
    return func.emitOpError("signature: ") << error;
  sig->set_name(func.getSymName().str());
  if (auto attr = func.getAttrAttr())
    if (failed(graphdef::exportAttrMap(attr, *fdef.mutable_attr(), error)))
      return func.emitOpError() << error;
  if (auto argAttr = func.getArgAttrAttr()) {
    for (NamedAttribute entry : argAttr) {
      unsigned idx;
      auto dict = dyn_cast<DictionaryAttr>(entry.getValue());
      if (entry.getName().getValue().getAsInteger(10, idx) || !dict)
        return func.emitOpError("arg_attr keys must be argument indices");
      auto &slot = (*fdef.mutable_arg_attr())[idx];
      if (failed(graphdef::exportAttrMap(dict, *slot.mutable_attr(), error)))
        return func.emitOpError() << error;
    }
  }
  if (auto ids = func.getResourceArgUniqueIdAttr()) {
    for (NamedAttribute entry : ids) {
      unsigned idx;
      auto id = dyn_cast<IntegerAttr>(entry.getValue());
      if (entry.getName().getValue().getAsInteger(10, idx) || !id)
        return func.emitOpError(
            "resource_arg_unique_id must map argument indices to integers");
      (*fdef.mutable_resource_arg_unique_id())[idx] =
          id.getValue().getZExtValue();
    }
  }
  Block &body = func.getBody().front();
  for (auto node : body.getOps<NodeOp>())
    if (failed(exportNode(node, *fdef.add_node_def(), /*inFunction=*/true)))
      return failure();
  ReturnOp ret = func.getReturnOp();
  ArrayAttr spellings = ret.getSpellingsAttr();
  for (auto [i, name] : llvm::enumerate(ret.getNames())) {
    Value v = ret.getOperand(i);
    std::string text = graphdef::renderInput(v, true);
    if (spellings) {
      StringRef spelled = cast<StringAttr>(spellings[i]).getValue();
      if (graphdef::spellingMatches(spelled, v, true))
        text = spelled.str();
    }
    (*fdef.mutable_ret())[cast<StringAttr>(name).str()] = text;
  }
  unsigned numData = ret.getNames().size();
  for (auto [i, name] : llvm::enumerate(ret.getControlNames())) {
    auto node = ret.getOperand(numData + i).getDefiningOp<NodeOp>();
    if (!node)
      return ret.emitOpError("control_ret must name a node");
    (*fdef.mutable_control_ret())[cast<StringAttr>(name).str()] =
        node.getName().str();
  }
  return success();
}

LogicalResult cleave::exportGraphDef(ModuleOp module, tf::GraphDef &graphDef) {
  GraphOp graph;
  for (Operation &op : *module.getBody()) {
    if (auto g = dyn_cast<GraphOp>(op)) {
      if (graph)
        return g.emitOpError("a module can hold only one graph.graph");
      graph = g;
    } else if (!isa<FuncOp>(op)) {
      return op.emitOpError("cannot be exported to a GraphDef");
    }
  }
  std::string error;
  if (graph) {
    for (Operation &op : graph.getBody().front()) {
      LogicalResult written =
          TypeSwitch<Operation *, LogicalResult>(&op)
              .Case([&](NodeOp node) {
                return exportNode(node, *graphDef.add_node(), false);
              })
              .Case([&](ClusterOp cluster) {
                return exportCluster(cluster, graphDef);
              })
              .Case([&](ReplicateOp replicate) {
                return exportReplicate(replicate, graphDef);
              })
              .Default([](Operation *op) {
                return op->emitOpError("cannot be exported to a GraphDef");
              });
      if (failed(written))
        return failure();
    }
    if (auto versions = graph.getVersionsAttr()) {
      tf::VersionDef *v = graphDef.mutable_versions();
      v->set_producer(versions.getProducer());
      v->set_min_consumer(versions.getMinConsumer());
      for (int32_t bad : versions.getBadConsumers())
        v->add_bad_consumers(bad);
    }
    if (auto version = graph.getVersionAttr()) {
      // The deprecated field 3, kept because the file had it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      graphDef.set_version(version.getInt());
#pragma GCC diagnostic pop
    }
    if (auto library = graph.getLibraryAttr())
      if (failed(graphdef::attrToProto(library, *graphDef.mutable_library(),
                                       error)))
        return graph.emitOpError("library: ") << error;
    if (auto info = graph.getDebugInfoAttr())
      if (failed(graphdef::attrToProto(info, *graphDef.mutable_debug_info(),
                                       error)))
        return graph.emitOpError("debug_info: ") << error;
  }
  for (auto func : module.getOps<FuncOp>())
    if (failed(
            exportFunction(func, *graphDef.mutable_library()->add_function())))
      return failure();
  return success();
}
