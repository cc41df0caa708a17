//===- DotExport.cpp - Graphviz view of a graph ---------------------------===//

#include "cleave/Translate/Dot.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {
/// Light fill colours for devices, picked in order of first appearance.
constexpr const char *kDevicePalette[] = {
    "#e8f1fb", "#fdebd3", "#e3f4e1", "#f6e1f0", "#fff6cc",
    "#e0f3f3", "#efe6fa", "#fbe3e3", "#eeeeee", "#dfe9d0"};
constexpr const char *kClusterColor = "#1f6fc5";
constexpr const char *kOutsideColor = "#c55a11";

std::string escape(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text, os);
  return out;
}

StringRef getStringAttr(NodeOp node, StringRef name) {
  if (auto s = dyn_cast_or_null<StringAttr>(node.getTFAttr(name)))
    return s.getValue();
  return "";
}

/// A node as the flat graph has it: a graph.node, or one that a
/// graph.cluster / graph.replicate folded (metadata, replicated inputs and
/// outputs).
struct DotNode {
  StringRef name, opType, device;
  /// Its inputs, in flat-graph terms.
  SmallVector<Value> inputs;
};

class DotWriter {
public:
  explicit DotWriter(llvm::raw_ostream &os) : os(os) {}

  void writeBody(Block &block, StringRef prefix) {
    // Group nodes: replicate cluster -> outside-compilation scope -> nodes.
    groups.clear();
    for (Operation &op : block) {
      if (auto node = dyn_cast<NodeOp>(op))
        addNode(node, getStringAttr(node, "_tpu_replicate"));
      else if (auto cluster = dyn_cast<ClusterOp>(op))
        addCluster(cluster);
      else if (auto replicate = dyn_cast<ReplicateOp>(op))
        addReplicate(replicate);
    }
    for (auto &[cluster, scopes] : groups) {
      if (!cluster.empty())
        os << "  subgraph \"cluster_" << escape(prefix) << escape(cluster)
           << "\" {\n    label=\"" << escape(cluster)
           << clusterSuffix.lookup(cluster) << "\"; color=\""
           << kClusterColor << "\"; penwidth=2;\n";
      for (auto &[scope, nodes] : scopes) {
        if (!scope.empty())
          os << "  subgraph \"cluster_" << escape(prefix) << escape(cluster)
             << "_oc_" << escape(scope) << "\" {\n    label=\"outside "
             << escape(scope) << "\"; style=dashed; color=\""
             << kOutsideColor << "\";\n";
        for (const DotNode &node : nodes)
          writeNode(node, prefix);
        if (!scope.empty())
          os << "  }\n";
      }
      if (!cluster.empty())
        os << "  }\n";
    }
    for (auto &[cluster, scopes] : groups)
      for (auto &[scope, nodes] : scopes)
        for (const DotNode &node : nodes)
          writeEdges(node, prefix);
  }

  void writeLegend() {
    os << "  subgraph cluster_legend {\n    label=\"devices\";\n";
    for (auto [i, device] : llvm::enumerate(deviceColors))
      os << "    \"legend_" << i << "\" [label=\""
         << escape(device.first.empty() ? "(no device)" : device.first)
         << "\", style=filled, fillcolor=\"" << device.second << "\"];\n";
    os << "  }\n";
  }

private:
  SmallVector<DotNode> &group(StringRef cluster, StringRef scope) {
    return groups[cluster][scope];
  }

  void addNode(NodeOp node, StringRef cluster) {
    group(cluster, getStringAttr(node, "_xla_outside_compilation"))
        .push_back({node.getName(), node.getOpType(),
                    node.getDevice().value_or(""),
                    SmallVector<Value>(node.getInputs())});
  }

  /// A folded node of a replicate region, from its {name, device?,
  /// controls?} entry; it takes its share of the trailing `controls`.
  static DotNode foldedNode(Attribute entry, StringRef opType,
                            SmallVector<Value> inputs, ValueRange &controls) {
    auto dict = cast<DictionaryAttr>(entry);
    StringRef device;
    if (auto d = dict.getAs<StringAttr>("device"))
      device = d.getValue();
    if (auto count = dict.getAs<IntegerAttr>("controls")) {
      llvm::append_range(inputs, controls.take_front(count.getInt()));
      controls = controls.drop_front(count.getInt());
    }
    return {dict.getAs<StringAttr>("name").getValue(), opType, device,
            std::move(inputs)};
  }

  void addCluster(ClusterOp cluster) {
    StringRef name = cluster.getCluster();
    group(name, "").push_back(
        {cluster.getMetadataName(), "TPUReplicateMetadata",
         cluster.getMetadataDevice().value_or(""),
         SmallVector<Value>(cluster.getControlInputs())});
    for (auto node : cluster.getBody().front().getOps<NodeOp>())
      addNode(node, name);
  }

  void addReplicate(ReplicateOp replicate) {
    uint64_t n = replicate.getN();
    ValueRange operands = replicate.getInputs();
    ArrayAttr inputNodes = replicate.getInputNodes();
    ValueRange controls = operands.drop_front(inputNodes.size() * n);
    for (auto [i, entry] : llvm::enumerate(inputNodes)) {
      ValueRange perReplica = operands.slice(i * n, n);
      group("", "").push_back(foldedNode(entry, "TPUReplicatedInput",
                                         SmallVector<Value>(perReplica),
                                         controls));
    }
    ClusterOp cluster = replicate.getCluster();
    clusterSuffix[cluster.getCluster()] =
        " (" + std::to_string(n) + " replicas)";
    addCluster(cluster);
    Operation *yield = replicate.getBody().front().getTerminator();
    for (auto [k, entry] : llvm::enumerate(replicate.getOutputNodes()))
      if (!cast<DictionaryAttr>(entry).empty())
        group("", "").push_back(foldedNode(entry, "TPUReplicatedOutput",
                                           {yield->getOperand(k)}, controls));
  }

  void writeNode(const DotNode &node, StringRef prefix) {
    auto [it, inserted] = deviceColors.insert(
        {node.device, kDevicePalette[deviceColors.size() %
                                     std::size(kDevicePalette)]});
    os << "    \"" << escape(prefix) << escape(node.name) << "\" [label=\""
       << escape(node.name) << "\\n" << escape(node.opType)
       << "\", style=filled, fillcolor=\"" << it->second << "\"];\n";
  }

  void writeEdges(const DotNode &node, StringRef prefix) {
    for (Value input : node.inputs)
      if (std::optional<FlatValue> producer = getFlatValue(input))
        os << "  \"" << escape(prefix) << escape(producer->node) << "\" -> \""
           << escape(prefix) << escape(node.name) << "\""
           << (producer->isControl ? " [style=dashed]" : "") << ";\n";
  }

  llvm::raw_ostream &os;
  llvm::MapVector<StringRef, const char *> deviceColors;
  llvm::MapVector<StringRef, llvm::MapVector<StringRef, SmallVector<DotNode>>>
      groups;
  llvm::StringMap<std::string> clusterSuffix;
};
} // namespace

LogicalResult cleave::writeDot(ModuleOp module, llvm::raw_ostream &os) {
  os << "digraph G {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  DotWriter writer(os);
  for (auto graph : module.getOps<GraphOp>())
    writer.writeBody(graph.getBody().front(), "");
  for (auto func : module.getOps<FuncOp>()) {
    std::string prefix = (func.getSymName() + "/").str();
    os << "  subgraph \"cluster_fn_" << escape(func.getSymName())
       << "\" {\n    label=\"function " << escape(func.getSymName())
       << "\"; style=rounded;\n";
    writer.writeBody(func.getBody().front(), prefix);
    os << "  }\n";
  }
  writer.writeLegend();
  os << "}\n";
  return success();
}

void cleave::registerDotTranslation() {
  TranslateFromMLIRRegistration reg(
      "export-dot", "graph dialect to a Graphviz digraph",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeDot(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<GraphDialect>();
      });
}
