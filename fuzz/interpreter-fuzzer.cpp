//===- interpreter-fuzzer.cpp - import, infer shapes, interpret -----------===//
//
// Small text graphs through the whole front half: import, the
// graph-infer-shapes pass, and the reference interpreter running every
// node (loops limited to 100 iterations, tensors to 2^20 elements by
// refusing graphs whose constants or shapes ask for more). A graph tagged
// for replication is formed and its outside compilation extracted first,
// as graph-run does, and runs with a 0.1 s channel timeout and no file
// access (a mutated saver would write and delete files). Errors are
// fine; crashes, hangs and sanitizer reports are findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Executor/Executor.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace cleave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz::isSmallTextGraph(data, size))
    return -1;
  mlir::OwningOpRef<mlir::ModuleOp> module = fuzz::importTextGraph(data, size);
  if (!module)
    return 0;
  mlir::MLIRContext &context = fuzz::getContext();
  bool replicated = false;
  module->walk([&](graph::NodeOp node) {
    replicated |= node.getOpType() == "TPUReplicateMetadata";
  });
  // The pipeline text is added to a module-anchored manager: written as
  // builtin.module(...) it would only run on modules nested in this one,
  // that is on nothing (the passes never ran, until this was noticed).
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  if (failed(mlir::parsePassPipeline(
          replicated ? "graph-infer-shapes,graph-cluster-formation,"
                       "graph-extract-outside-compilation"
                     : "graph-infer-shapes",
          pm)) ||
      failed(pm.run(*module)))
    return 0;
  // A graph that asks for large tensors is not run: allocations past
  // libFuzzer's malloc limit would be reported as findings, and Cleave
  // answers them with an error anyway (test/Runtime/splat-constant.test).
  bool large = false;
  module->walk([&](graph::NodeOp node) {
    for (mlir::Type type : node->getResultTypes())
      if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
        large |= tensor.hasStaticShape() && tensor.getNumElements() > (1 << 20);
  });
  if (large)
    return 0;
  // Every top-level node (nodes inside clusters cannot be targets).
  std::vector<std::string> targets;
  for (auto graph : module->getOps<graph::GraphOp>())
    for (auto node : graph.getBody().front().getOps<graph::NodeOp>())
      if (targets.size() < 64)
        targets.push_back(node.getName().str());
  interp::Executor interpreter(*module);
  interpreter.setMaxIterations(100);
  interpreter.setChannelTimeout(0.1);
  // Mutated savers must not write, rename or delete files.
  interpreter.setFileAccess(false);
  (void)interpreter.run({}, {}, targets);
  return 0;
}
