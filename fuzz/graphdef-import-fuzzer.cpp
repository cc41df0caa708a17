//===- graphdef-import-fuzzer.cpp - libFuzzer target for the importer -----===//
//
// Feeds arbitrary bytes to the GraphDef importer (text and binary are
// sniffed), and exports whatever imports. Any crash, sanitizer report, hang
// or unbounded allocation is a bug: bad input must only produce diagnostics.
//
//   cmake -DCLEAVE_ENABLE_FUZZERS=ON ... && ninja graphdef-import-fuzzer
//   build/bin/graphdef-import-fuzzer -max_len=65536 fuzz/corpus/
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

// libMLIR is not instrumented but shares llvm::BumpPtrAllocator slabs with
// this code; manual poisoning would give false reports (see test/lit.cfg.py).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context for the whole run: attributes are interned, not leaked.
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext();
    ctx->loadDialect<cleave::graph::GraphDialect>();
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz",
      /*RequiresNullTerminator=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      cleave::importGraphDef(*buffer, context);
  if (!module)
    return 0;
  std::string text, binary;
  llvm::raw_string_ostream textOs(text), binaryOs(binary);
  (void)cleave::writeGraphDef(*module, textOs, /*binary=*/false);
  (void)cleave::writeGraphDef(*module, binaryOs, /*binary=*/true);
  return 0;
}
