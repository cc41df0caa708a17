//===- passes-fuzzer.cpp - import, functionalize, infer, towers, gradients ===//
//
// Small text graphs through the front half's graph-to-graph passes that
// the interpreter fuzzer does not run: graph-functionalize-conds,
// graph-functionalize-loops, graph-infer-shapes, then graph-towers (two
// towers over the last floating-point node as the loss, on a copy) and
// graph-gradient of that node with respect to every Placeholder and
// variable, and export of the result. Errors are fine; crashes, hangs,
// sanitizer reports and a module that no longer verifies are findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdlib>

using namespace cleave;

/// Whether `name` can stand in a pass option list unquoted.
static bool isPlainName(llvm::StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '/' || c == '.' || c == '-';
  });
}

static bool isFloatTensor(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::TensorType>(type);
  return tensor && llvm::isa<mlir::FloatType>(tensor.getElementType());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz::isSmallTextGraph(data, size))
    return -1;
  mlir::OwningOpRef<mlir::ModuleOp> module = fuzz::importTextGraph(data, size);
  if (!module)
    return 0;
  mlir::MLIRContext &context = fuzz::getContext();
  // The pipeline text is added to a module-anchored manager: written as
  // builtin.module(...) it would only run on modules nested in this one,
  // that is on nothing (the passes never ran, until this was noticed).
  mlir::PassManager prepare(&context, mlir::ModuleOp::getOperationName());
  if (failed(mlir::parsePassPipeline(
          "graph-functionalize-conds,graph-functionalize-loops,"
          "graph-infer-shapes",
          prepare)) ||
      failed(prepare.run(*module)))
    return 0;
  // ys: the last floating-point node; xs: the placeholders and variables.
  std::string ys;
  std::vector<std::string> xs;
  for (auto graph : module->getOps<graph::GraphOp>())
    for (auto node : graph.getBody().front().getOps<graph::NodeOp>()) {
      if (!isPlainName(node.getName()) || node.getOutputs().empty())
        continue;
      llvm::StringRef op = node.getOpType();
      if (op == "Placeholder" || op == "VariableV2" || op == "VarHandleOp")
        xs.push_back(node.getName().str());
      else if (isFloatTensor(node.getOutputs()[0].getType()))
        ys = node.getName().str();
    }
  if (ys.empty() || xs.empty())
    return 0;
  // Two towers of the graph over that loss (mostly diagnostics: a loss
  // that is no scalar, no batch to split), on a copy.
  {
    mlir::OwningOpRef<mlir::ModuleOp> towers(module->clone());
    mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
    if (succeeded(mlir::parsePassPipeline(
            "graph-towers{num-devices=2 loss=" + ys + "}", pm)) &&
        succeeded(pm.run(*towers)) && failed(mlir::verify(*towers)))
      std::abort();
  }
  mlir::PassManager differentiate(&context, mlir::ModuleOp::getOperationName());
  if (failed(mlir::parsePassPipeline("graph-gradient{ys=" + ys +
                                         " xs=" + llvm::join(xs, ",") + "}",
                                     differentiate)))
    return 0;
  if (failed(differentiate.run(*module)))
    return 0;
  // A pass that succeeded must leave a valid module.
  if (failed(mlir::verify(*module)))
    std::abort();
  std::string out;
  llvm::raw_string_ostream os(out);
  (void)writeGraphMessage(*module, os, GraphMessage::GraphDef,
                          /*binary=*/false);
  return 0;
}
