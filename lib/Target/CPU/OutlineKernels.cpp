//===- OutlineKernels.cpp - one function per linalg op --------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace cleave {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {
struct OutlineKernelsPass
    : cleave::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp func : functions) {
      if (func.isDeclaration() || func->hasAttr("no_inline"))
        continue;
      SmallVector<linalg::LinalgOp> kernels;
      func.walk([&](linalg::LinalgOp op) {
        // Only ops on buffers: they have no results to return.
        if (op->getNumResults() == 0 && passesAsPointers(op))
          kernels.push_back(op);
      });
      unsigned index = 0;
      for (linalg::LinalgOp op : kernels)
        outline(op, func, symbols, index++);
    }
  }

  /// Kernels take their buffers as bare pointers, which carry no offset
  /// or strides: a view at an offset known only at run time (a dynamic
  /// slice) stays in its function instead.
  static bool passesAsPointers(linalg::LinalgOp op) {
    for (Value v : op->getOperands()) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type)
        continue;
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(getStridesAndOffset(type, strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return false;
    }
    return true;
  }

  /// `op` into `<func>_kernel<index>(operands..., captured values...)`.
  void outline(linalg::LinalgOp op, func::FuncOp parent, SymbolTable &symbols,
               unsigned index) {
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Value> args(op->getOperands());
    // Constants are cloned into the kernel, not passed: LLVM then sees the
    // strides and bounds of the loop body (a shift, not a division).
    SmallVector<Operation *> constants;
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else if (!llvm::is_contained(args, v))
        args.push_back(v);
    }
    OpBuilder builder(parent);
    auto type = builder.getFunctionType(ValueRange(args).getTypes(), {});
    auto kernel = builder.create<func::FuncOp>(
        op.getLoc(),
        (parent.getSymName() + "_kernel" + std::to_string(index)).str(), type);
    kernel.setPrivate();
    kernel->setAttr("no_inline", builder.getUnitAttr());
    // Not exported from object files (graph-compile).
    kernel->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                        builder.getContext(),
                                        LLVM::Linkage::Internal));
    // The op writes only its own fresh output buffers, which no other
    // argument points into: the vectorizer needs no run-time alias checks
    // (without this, checking every pair of pointers of a gather kernel
    // takes LLVM minutes).
    // (A buffer passed twice, read and written in place, is not.)
    for (auto [i, v] : llvm::enumerate(args))
      if (isa<MemRefType>(v.getType()) && llvm::count(args, v) == 1)
        kernel.setArgAttr(i, "llvm.noalias", builder.getUnitAttr());
    symbols.insert(kernel);
    Block *body = kernel.addEntryBlock();
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(args, body->getArguments()))
      mapping.map(v, arg);
    builder.setInsertionPointToEnd(body);
    for (Operation *constant : constants)
      builder.clone(*constant, mapping);
    builder.clone(*op, mapping);
    builder.create<func::ReturnOp>(op.getLoc());
    builder.setInsertionPoint(op);
    builder.create<func::CallOp>(op.getLoc(), kernel, args);
    op->erase();
  }
};
} // namespace
