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

class DotWriter {
public:
  explicit DotWriter(llvm::raw_ostream &os) : os(os) {}

  void writeBody(Block &block, StringRef prefix) {
    // Group nodes: replicate cluster -> outside-compilation scope -> nodes.
    llvm::MapVector<StringRef, llvm::MapVector<StringRef,
                                               SmallVector<NodeOp>>> groups;
    for (auto node : block.getOps<NodeOp>())
      groups[getStringAttr(node, "_tpu_replicate")]
            [getStringAttr(node, "_xla_outside_compilation")]
                .push_back(node);
    for (auto &[cluster, scopes] : groups) {
      if (!cluster.empty())
        os << "  subgraph \"cluster_" << escape(prefix) << escape(cluster)
           << "\" {\n    label=\"" << escape(cluster)
           << "\"; color=\"" << kClusterColor << "\"; penwidth=2;\n";
      for (auto &[scope, nodes] : scopes) {
        if (!scope.empty())
          os << "  subgraph \"cluster_" << escape(prefix) << escape(cluster)
             << "_oc_" << escape(scope) << "\" {\n    label=\"outside "
             << escape(scope) << "\"; style=dashed; color=\""
             << kOutsideColor << "\";\n";
        for (NodeOp node : nodes)
          writeNode(node, prefix);
        if (!scope.empty())
          os << "  }\n";
      }
      if (!cluster.empty())
        os << "  }\n";
    }
    for (auto node : block.getOps<NodeOp>())
      for (Value input : node.getInputs())
        if (auto producer = input.getDefiningOp<NodeOp>())
          os << "  \"" << escape(prefix) << escape(producer.getName())
             << "\" -> \"" << escape(prefix) << escape(node.getName())
             << "\"" << (isa<ControlType>(input.getType())
                             ? " [style=dashed]"
                             : "")
             << ";\n";
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
  void writeNode(NodeOp node, StringRef prefix) {
    StringRef device = node.getDevice().value_or("");
    auto [it, inserted] = deviceColors.insert(
        {device, kDevicePalette[deviceColors.size() %
                                std::size(kDevicePalette)]});
    os << "    \"" << escape(prefix) << escape(node.getName())
       << "\" [label=\"" << escape(node.getName()) << "\\n"
       << escape(node.getOpType()) << "\", style=filled, fillcolor=\""
       << it->second << "\"];\n";
  }

  llvm::raw_ostream &os;
  llvm::MapVector<StringRef, const char *> deviceColors;
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
