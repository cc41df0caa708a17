//===- Dot.h - Graphviz view of a graph -------------------------*- C++ -*-===//

#ifndef CLEAVE_TRANSLATE_DOT_H
#define CLEAVE_TRANSLATE_DOT_H

#include "mlir/IR/BuiltinOps.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace cleave {

/// Writes the graph and its functions as a Graphviz digraph. Nodes are
/// coloured by device; `_tpu_replicate` clusters and
/// `_xla_outside_compilation` scopes are drawn as nested subgraphs; control
/// edges are dashed.
mlir::LogicalResult writeDot(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers --export-dot with mlir-translate's registry.
void registerDotTranslation();

} // namespace cleave

#endif // CLEAVE_TRANSLATE_DOT_H
