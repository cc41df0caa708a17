//===- FuzzSupport.h - what the libFuzzer targets share ---------*- C++ -*-===//
//
// One MLIR context for a whole fuzzing run (attributes are interned, so a
// context per input would only grow), with diagnostics swallowed: bad input
// must produce diagnostics, and those are not findings.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_FUZZ_FUZZSUPPORT_H
#define CLEAVE_FUZZ_FUZZSUPPORT_H

#include "cleave/InitAll.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

// libMLIR is not instrumented but shares llvm::BumpPtrAllocator slabs with
// Cleave's code; manual poisoning would give false reports (see
// test/lit.cfg.py). Not inline: it must be emitted for the runtime to find
// it (each fuzz target is one translation unit).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

namespace cleave::fuzz {

inline mlir::MLIRContext &getContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    auto *ctx = new mlir::MLIRContext(registry);
    ctx->loadAllAvailableDialects();
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  return *context;
}

inline llvm::StringRef asString(const uint8_t *data, size_t size) {
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// Whether the input is a text GraphDef small enough for the targets that
/// run passes and the interpreter (others are not kept in their corpus).
inline bool isSmallTextGraph(const uint8_t *data, size_t size) {
  return size <= 8192 &&
         detectInputFormat(asString(data, size)) == InputFormat::GraphDefText;
}

/// Imports a text GraphDef into the shared context, with every pass
/// registered for the pipelines the targets parse; null when it does not
/// import.
inline mlir::OwningOpRef<mlir::ModuleOp> importTextGraph(const uint8_t *data,
                                                         size_t size) {
  static bool registered = (registerAllPasses(), true);
  (void)registered;
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      asString(data, size), "fuzz", /*RequiresNullTerminator=*/false);
  return importGraphDef(*buffer, &getContext());
}

} // namespace cleave::fuzz

#endif // CLEAVE_FUZZ_FUZZSUPPORT_H
