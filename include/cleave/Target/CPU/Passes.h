//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//

#ifndef CLEAVE_TARGET_CPU_PASSES_H
#define CLEAVE_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/Target/CPU/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_TARGET_CPU_PASSES_H
