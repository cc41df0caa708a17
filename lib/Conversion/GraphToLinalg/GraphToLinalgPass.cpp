//===- GraphToLinalgPass.cpp - graph-to-linalg for graph-opt --------------===//
//
// The top-level graph as one function, for inspection and lit tests: the
// same lowering graph-run applies to each cluster, with the shapes the
// placeholders and variables declare.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Conversion/Passes.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "llvm/ADT/StringMap.h"

namespace cleave {
#define GEN_PASS_DEF_GRAPHTOLINALGPASS
#include "cleave/Conversion/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {

struct GraphToLinalgPass
    : cleave::impl::GraphToLinalgPassBase<GraphToLinalgPass> {
  using GraphToLinalgPassBase::GraphToLinalgPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GraphOp graph;
    for (auto g : module.getOps<GraphOp>())
      graph = g;
    if (!graph) {
      module.emitError("graph-to-linalg: the module has no graph.graph");
      return signalPassFailure();
    }
    Block &body = graph.getBody().front();
    llvm::StringMap<NodeOp> byName;
    for (auto node : body.getOps<NodeOp>())
      byName[node.getName()] = node;

    conversion::LoweringRequest request;
    request.body = &body;
    request.returnConstantOutputs = true;
    if (outputs.empty()) {
      // The outputs no node reads.
      for (auto node : body.getOps<NodeOp>())
        for (Value v : node.getOutputs())
          if (v.use_empty())
            request.outputs.push_back(v);
    }
    for (const std::string &name : outputs) {
      auto [nodeName, portText] = StringRef(name).split(':');
      unsigned port = 0;
      NodeOp node = byName.lookup(nodeName);
      if (!node || (!portText.empty() && portText.getAsInteger(10, port)) ||
          port >= node.getOutputs().size()) {
        module.emitError() << "graph-to-linalg: no tensor '" << name << "'";
        return signalPassFailure();
      }
      request.outputs.push_back(node.getOutputs()[port]);
    }

    // Placeholders are the arguments; their declared shapes must be known.
    llvm::StringMap<conversion::TensorSpec> variables;
    for (auto node : body.getOps<NodeOp>()) {
      StringRef op = node.getOpType();
      bool isPlaceholder = op == "Placeholder";
      bool isVariable =
          op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
      if (!isPlaceholder && !isVariable)
        continue;
      auto dtypeAttr = dyn_cast_or_null<TypeAttr>(node.getTFAttr("dtype"));
      int32_t dtype = dtypeAttr ? typeToDataType(dtypeAttr.getValue()) : -1;
      std::optional<std::vector<int64_t>> shape = getKnownShapeAttr(node);
      if (isVariable) {
        if (shape && dtype > 0)
          variables[getVariableName(node)] = {dtype, *shape};
        continue;
      }
      if (node.getOutputs()[0].use_empty() &&
          !llvm::is_contained(request.outputs, node.getOutputs()[0]))
        continue;
      if (!shape || dtype <= 0) {
        nodeError(node) << "graph-to-linalg needs a placeholder of fully "
                           "known shape and dtype";
        return signalPassFailure();
      }
      request.inputs.push_back(node.getOutputs()[0]);
      conversion::ArgSpecialization spec;
      spec.dtype = dtype;
      spec.shape = *shape;
      request.args.push_back(spec);
    }
    request.variableType =
        [&](StringRef name) -> std::optional<conversion::TensorSpec> {
      auto it = variables.find(name);
      if (it == variables.end())
        return std::nullopt;
      return it->second;
    };

    llvm::DenseSet<unsigned> needsConstant;
    if (failed(conversion::lowerToLinalg(request, module, function,
                                         needsConstant)))
      return signalPassFailure();
    // The graph and its library are replaced by the function.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (isa<GraphOp, FuncOp>(op)) {
        op.dropAllReferences();
        op.dropAllDefinedValueUses();
      }
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (isa<GraphOp, FuncOp>(op))
        op.erase();
  }
};

} // namespace
