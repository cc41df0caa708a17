//===- DeallocateBuffers.cpp - frees after the last use, linearly ---------===//
//
// A compiled step is mostly one straight-line block: each temporary is
// allocated in it, used by ops of it (or inside their regions), and dead
// after its last use there. For such functions a buffer and its views are
// followed once, and the free goes after the last op that uses them.
// Anything else takes upstream's ownership-based deallocation.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/InliningUtils.h"

namespace cleave {
#define GEN_PASS_DEF_DEALLOCATEBUFFERSPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

/// Ops that only read or write the buffers they are given.
static bool onlyAccesses(Operation *op) {
  return isa<linalg::LinalgOp, memref::CopyOp, memref::LoadOp,
             memref::StoreOp, memref::DimOp, memref::ExtractStridedMetadataOp,
             memref::ExtractAlignedPointerAsIndexOp>(op);
}

/// The last op of `entry` that uses the address `pointer` (a buffer's
/// aligned pointer as an index) or an address computed from it: a call of
/// the runtime reads or writes the buffer through it (a collective, a host
/// transfer). An address stored into a buffer (a table of descriptors) is
/// used where that buffer's address is. Null when it leaves the entry
/// block.
static Operation *lastUseOfAddress(Value pointer, Block &entry,
                                   Operation *last) {
  SmallVector<Value> addresses = {pointer};
  while (!addresses.empty()) {
    Value address = addresses.pop_back_val();
    for (Operation *user : address.getUsers()) {
      Operation *inEntry = entry.findAncestorOpInBlock(*user);
      if (!inEntry)
        return nullptr;
      if (last->isBeforeInBlock(inEntry))
        last = inEntry;
      if (isa<arith::ArithDialect>(user->getDialect()))
        llvm::append_range(addresses, user->getResults());
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getValueToStore() == address)
        for (Operation *tableUser : store.getMemRef().getUsers())
          if (isa<memref::ExtractAlignedPointerAsIndexOp>(tableUser))
            addresses.push_back(tableUser->getResult(0));
    }
  }
  return last;
}

/// The op of `entry` after which `alloc` and its views are dead, or null
/// when one of them escapes (yielded, returned, passed to a call).
static Operation *lastUse(memref::AllocOp alloc, Block &entry) {
  Operation *last = alloc;
  SmallVector<Value> buffers = {alloc.getResult()};
  while (!buffers.empty()) {
    Value buffer = buffers.pop_back_val();
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == buffer)
        buffers.push_back(user->getResult(0));
      else if (!onlyAccesses(user))
        return nullptr;
      Operation *inEntry = entry.findAncestorOpInBlock(*user);
      if (!inEntry)
        return nullptr;
      if (last->isBeforeInBlock(inEntry))
        last = inEntry;
      if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user))
        if (!(last = lastUseOfAddress(pointer, entry, last)))
          return nullptr;
    }
  }
  return last;
}

namespace {
struct DeallocateBuffersPass
    : cleave::impl::DeallocateBuffersPassBase<DeallocateBuffersPass> {
  /// Upstream's ownership-based deallocation. Where it frees one of
  /// several buffers, it calls a helper it adds to the module
  /// (`dealloc_helper`), whose dynamically shaped arguments the CPU
  /// target's bare-pointer calling convention cannot pass: the helpers are
  /// inlined.
  LogicalResult deallocateByOwnership(ModuleOp module) {
    llvm::DenseSet<StringAttr> existing;
    for (auto func : module.getOps<func::FuncOp>())
      existing.insert(func.getSymNameAttr());
    OpPassManager ownership("builtin.module");
    bufferization::BufferDeallocationPipelineOptions options;
    bufferization::buildBufferDeallocationPipeline(ownership, options);
    if (failed(runPipeline(ownership, module)))
      return failure();
    SmallVector<func::FuncOp> helpers;
    for (auto func : module.getOps<func::FuncOp>())
      if (!existing.count(func.getSymNameAttr()))
        helpers.push_back(func);
    InlinerInterface inliner(module.getContext());
    for (func::FuncOp helper : helpers) {
      if (auto uses = SymbolTable::getSymbolUses(helper, module))
        for (SymbolTable::SymbolUse use : *uses) {
          auto call = dyn_cast<func::CallOp>(use.getUser());
          if (!call || failed(inlineCall(inliner, call, helper,
                                         &helper.getBody())))
            return helper.emitError("cannot inline the deallocation helper");
          call.erase();
        }
      helper.erase();
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Where each allocation is freed, for every function, or nothing.
    SmallVector<std::pair<memref::AllocOp, Operation *>> frees;
    bool straightLine = true;
    module.walk([&](func::FuncOp func) {
      if (func.isDeclaration())
        return WalkResult::advance();
      Block &entry = func.getBody().front();
      WalkResult result = func.walk([&](Operation *op) {
        if (isa<memref::DeallocOp, bufferization::DeallocOp>(op))
          return WalkResult::interrupt();
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (!alloc)
          return WalkResult::advance();
        Operation *last =
            alloc->getBlock() == &entry ? lastUse(alloc, entry) : nullptr;
        if (!last)
          return WalkResult::interrupt();
        frees.push_back({alloc, last});
        return WalkResult::advance();
      });
      straightLine = !result.wasInterrupted();
      return straightLine ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (!straightLine) {
      if (failed(deallocateByOwnership(module)))
        signalPassFailure();
      return;
    }
    for (auto [alloc, last] : frees) {
      OpBuilder b(last->getContext());
      b.setInsertionPointAfter(last);
      b.create<memref::DeallocOp>(alloc.getLoc(), alloc.getResult());
    }
  }
};
} // namespace
