//===- InitAll.h - register everything Cleave provides ----------*- C++ -*-===//
//
// One entry point for tools and embedders: dialects, passes, pipelines and
// translations.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INITALL_H
#define CLEAVE_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace cleave {

/// Adds Cleave's dialects (and the upstream ones its pipelines use).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers Cleave's passes and pipelines with the global pass registry.
void registerAllPasses();

/// Registers Cleave's translations (GraphDef, DOT) with mlir-translate.
void registerAllTranslations();

} // namespace cleave

#endif // CLEAVE_INITALL_H
