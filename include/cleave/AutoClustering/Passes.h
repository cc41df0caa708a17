//===- Passes.h - auto-clustering passes ------------------------*- C++ -*-===//

#ifndef CLEAVE_AUTOCLUSTERING_PASSES_H
#define CLEAVE_AUTOCLUSTERING_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/AutoClustering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/AutoClustering/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_AUTOCLUSTERING_PASSES_H
