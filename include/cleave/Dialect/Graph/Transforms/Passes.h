//===- Passes.h - passes on the graph dialect -------------------*- C++ -*-===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cleave::graph {

#define GEN_PASS_DECL
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_H
