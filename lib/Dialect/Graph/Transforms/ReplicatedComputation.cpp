//===- ReplicatedComputation.cpp - names and rules of replication ---------===//

#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cleave::graph;

NameUniquer::NameUniquer(Block &block) {
  block.walk([&](NodeOp node) {
    StringRef name = node.getName();
    markUsed(name);
    // Every enclosing name scope is in use too.
    for (size_t slash = name.find('/'); slash != StringRef::npos;
         slash = name.find('/', slash + 1))
      markUsed(name.take_front(slash));
  });
}

void NameUniquer::markUsed(StringRef name) {
  namesInUse.try_emplace(name.lower(), 1);
}

bool NameUniquer::isUsed(StringRef name) const {
  return namesInUse.count(name.lower());
}

std::string NameUniquer::unique(StringRef name) {
  // Graph.unique_name: the count of a key is how often it was asked for.
  std::string key = name.lower();
  int i = namesInUse.lookup(key);
  namesInUse[key] = i + 1;
  if (i == 0)
    return name.str();
  std::string candidate = key;
  while (namesInUse.count(candidate))
    candidate = key + "_" + std::to_string(i++);
  namesInUse[candidate] = 1;
  return (name + "_" + Twine(i - 1)).str();
}

StringRef cleave::graph::getStringTFAttr(NodeOp node, StringRef name) {
  if (auto s = dyn_cast_or_null<StringAttr>(node.getTFAttr(name)))
    return s.getValue();
  return "";
}

void cleave::graph::setTFAttr(NodeOp node, StringRef name, Attribute value) {
  NamedAttrList attrs(node.getAttrs());
  if (value)
    attrs.set(name, value);
  else
    attrs.erase(name);
  node.setAttrsAttr(attrs.getDictionary(node.getContext()));
}

Type cleave::graph::getElementTypeOf(Value value) {
  Type type = value.getType();
  if (auto tensor = dyn_cast<TensorType>(type))
    type = tensor.getElementType();
  if (auto ref = dyn_cast<RefType>(type))
    return ref.getElementType();
  return type;
}

std::string cleave::graph::getPythonDTypeName(Type elementType) {
  std::string name = getDataTypeName(elementType);
  if (name == "float")
    name = "float32";
  else if (name == "double")
    name = "float64";
  else if (name == "half")
    name = "float16";
  return "tf." + name;
}

/// Whether `node` is a node of a replicated computation that TensorFlow
/// marks non-feedable and non-fetchable (TPUReplicateContext.AddOp).
static bool isSealedByReplication(NodeOp node) {
  StringRef cluster = getStringTFAttr(node, kTPUReplicateAttr);
  if (cluster.empty())
    return false;
  if (getStringTFAttr(node, kOutsideCompilationAttr).empty())
    return true;
  // Outside-compiled: sealed only when the cluster has several replicas.
  for (auto other : node->getBlock()->getOps<NodeOp>())
    if (other.getOpType() == "TPUReplicateMetadata" &&
        getStringTFAttr(other, kTPUReplicateAttr) == cluster)
      return other.getTFInt("num_replicas").value_or(1) > 1;
  return false;
}

std::optional<std::string>
cleave::graph::getReplicationFeedError(NodeOp node, unsigned port) {
  if (!isSealedByReplication(node))
    return std::nullopt;
  return getNotFeedableMessage((node.getName() + ":" + Twine(port)).str());
}

std::optional<std::string>
cleave::graph::getReplicationFetchError(NodeOp node) {
  if (!isSealedByReplication(node))
    return std::nullopt;
  return getNotFetchableMessage(node.getName());
}

std::string cleave::graph::getNotFetchableMessage(StringRef nodeName) {
  return ("Operation " + nodeName +
          " has been marked as not fetchable. Typically this happens when it "
          "is defined in another function or code block. Use return values, "
          "explicit Python locals or TensorFlow collections to access it.")
      .str();
}

std::string cleave::graph::getNotFeedableMessage(StringRef tensorName) {
  return ("Tensor " + tensorName + " may not be fed.").str();
}

void cleave::graph::forEachNodeOfComputation(
    Operation *region, llvm::function_ref<void(NodeOp)> fn) {
  region->walk([&](NodeOp node) {
    fn(node);
    if (node.getTFBool("_XlaCompiledKernel").value_or(false))
      if (auto moved = SymbolTable::lookupNearestSymbolFrom<FuncOp>(
              node, StringAttr::get(node.getContext(), node.getOpType())))
        moved.walk(fn);
  });
}
