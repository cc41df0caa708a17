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

/// Light fill colours for devices, picked in order of first appearance.
static constexpr const char *kDevicePalette[] = {
    "#e8f1fb", "#fdebd3", "#e3f4e1", "#f6e1f0", "#fff6cc",
    "#e0f3f3", "#efe6fa", "#fbe3e3", "#eeeeee", "#dfe9d0"};
static constexpr const char *kClusterColor = "#1f6fc5";
static constexpr const char *kOutsideColor = "#c55a11";

static std::string escape(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text, os);
  return out;
}

static StringRef getStringAttr(NodeOp node, StringRef name) {
  if (auto s = dyn_cast_or_null<StringAttr>(node.getTFAttr(name)))
    return s.getValue();
  return "";
}

namespace {
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
           << clusterSuffix.lookup(cluster) << "\"; color=\"" << kClusterColor
           << "\"; penwidth=2;\n";
      for (auto &[scope, nodes] : scopes) {
        if (!scope.empty())
          os << "  subgraph \"cluster_" << escape(prefix) << escape(cluster)
             << "_oc_" << escape(scope) << "\" {\n    label=\"outside "
             << escape(scope) << "\"; style=dashed; color=\"" << kOutsideColor
             << "\";\n";
        for (const FlatNode &node : nodes)
          writeNode(node, prefix);
        if (!scope.empty())
          os << "  }\n";
      }
      if (!cluster.empty())
        os << "  }\n";
    }
    for (auto &[cluster, scopes] : groups)
      for (auto &[scope, nodes] : scopes)
        for (const FlatNode &node : nodes)
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
  SmallVector<FlatNode> &group(StringRef cluster, StringRef scope) {
    return groups[cluster][scope];
  }

  void addNode(NodeOp node, StringRef cluster) {
    group(cluster, getStringAttr(node, "_xla_outside_compilation"))
        .push_back({node.getName(), node.getOpType(),
                    node.getDevice().value_or(""), node.getAttrs(),
                    SmallVector<Value>(node.getInputs())});
  }

  void addFolded(FlatNode node, StringRef cluster) {
    group(cluster, "").push_back(std::move(node));
  }

  void addCluster(ClusterOp cluster) {
    StringRef name = cluster.getCluster();
    addFolded(getMetadataNode(cluster), name);
    for (auto node : cluster.getBody().front().getOps<NodeOp>())
      addNode(node, name);
  }

  void addReplicate(ReplicateOp replicate) {
    SmallVector<FlatNode> inputs, outputs;
    getReplicatedNodes(replicate, inputs, outputs);
    for (FlatNode &node : inputs)
      addFolded(std::move(node), "");
    ClusterOp cluster = replicate.getCluster();
    clusterSuffix[cluster.getCluster()] =
        " (" + std::to_string(replicate.getN()) + " replicas)";
    addCluster(cluster);
    // The host side that outside-compilation extraction left beside it.
    for (auto node : replicate.getBody().front().getOps<NodeOp>())
      addNode(node, "");
    for (FlatNode &node : outputs)
      addFolded(std::move(node), "");
  }

  void writeNode(const FlatNode &node, StringRef prefix) {
    auto [it, inserted] = deviceColors.insert(
        {node.device,
         kDevicePalette[deviceColors.size() % std::size(kDevicePalette)]});
    os << "    \"" << escape(prefix) << escape(node.name) << "\" [label=\""
       << escape(node.name) << "\\n"
       << escape(node.opType) << "\", style=filled, fillcolor=\"" << it->second
       << "\"];\n";
  }

  void writeEdges(const FlatNode &node, StringRef prefix) {
    for (Value input : node.inputs)
      if (std::optional<FlatValue> producer = getFlatValue(input))
        os << "  \"" << escape(prefix) << escape(producer->node) << "\" -> \""
           << escape(prefix) << escape(node.name) << "\""
           << (producer->isControl ? " [style=dashed]" : "") << ";\n";
  }

  llvm::raw_ostream &os;
  llvm::MapVector<StringRef, const char *> deviceColors;
  llvm::MapVector<StringRef, llvm::MapVector<StringRef, SmallVector<FlatNode>>>
      groups;
  llvm::StringMap<std::string> clusterSuffix;
};
} // namespace

LogicalResult cleave::writeDot(ModuleOp module, llvm::raw_ostream &os) {
  os << "digraph G {\n  rankdir=TB;\n  node [shape=box, "
        "fontname=\"Helvetica\"];\n";
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
      [](DialectRegistry &registry) { registry.insert<GraphDialect>(); });
}
