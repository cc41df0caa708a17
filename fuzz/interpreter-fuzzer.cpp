//===- interpreter-fuzzer.cpp - import, infer shapes, interpret -----------===//
//
// Small text graphs through the whole front half: import, the
// graph-infer-shapes pass, and the reference interpreter running every
// node (loops limited to 100 iterations, tensors to 2^20 elements by
// refusing graphs whose constants or shapes ask for more). Errors are
// fine; crashes, hangs and sanitizer reports are findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Interpreter/Interpreter.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace cleave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes = fuzz::asString(data, size);
  if (size > 8192 || detectInputFormat(bytes) != InputFormat::GraphDefText)
    return -1;
  mlir::MLIRContext &context = fuzz::getContext();
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      bytes, "fuzz", /*RequiresNullTerminator=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module = importGraphDef(*buffer, &context);
  if (!module)
    return 0;
  static bool registered = (registerAllPasses(), true);
  (void)registered;
  mlir::PassManager pm(&context);
  if (failed(mlir::parsePassPipeline("builtin.module(graph-infer-shapes)",
                                     pm)) ||
      failed(pm.run(*module)))
    return 0;
  std::vector<std::string> targets;
  for (auto graph : module->getOps<graph::GraphOp>())
    graph.walk([&](graph::NodeOp node) {
      if (targets.size() < 64)
        targets.push_back(node.getName().str());
    });
  interp::Interpreter interpreter(*module);
  interpreter.setMaxIterations(100);
  (void)interpreter.run({}, {}, targets);
  return 0;
}
