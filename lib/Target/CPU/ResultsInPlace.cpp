//===- ResultsInPlace.cpp - results computed in their out-parameters ------===//
//
// buffer-results-to-out-params leaves every result computed in a buffer of
// its own and copied into the caller's buffer at the end: a second pass
// over every output. Where the result's buffer is an allocation of the
// entry block that nothing uses after the copy, the out-parameter takes
// its place.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace cleave {
#define GEN_PASS_DEF_RESULTSINPLACEPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

/// The source and target of a whole-buffer copy.
static std::optional<std::pair<Value, Value>> copiedBuffers(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return std::make_pair(copy.getSource(), copy.getTarget());
  if (auto copy = dyn_cast<linalg::CopyOp>(op);
      copy && copy.hasPureBufferSemantics())
    return std::make_pair(copy.getDpsInputOperand(0)->get(),
                          copy.getDpsInitOperand(0)->get());
  return std::nullopt;
}

namespace {
struct ResultsInPlacePass
    : cleave::impl::ResultsInPlacePassBase<ResultsInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (!func.isDeclaration())
        computeInPlace(func.getBody().front());
    });
  }

  static void computeInPlace(Block &entry) {
    SmallVector<Operation *> copies;
    for (Operation &op : entry)
      if (copiedBuffers(&op))
        copies.push_back(&op);
    for (Operation *copy : copies) {
      auto [source, target] = *copiedBuffers(copy);
      auto alloc = source.getDefiningOp<memref::AllocOp>();
      auto outParam = dyn_cast<BlockArgument>(target);
      if (!alloc || alloc->getBlock() != &entry || !outParam ||
          outParam.getOwner() != &entry || !outParam.hasOneUse() ||
          source.getType() != target.getType() || !isLastUse(copy, source))
        continue;
      copy->erase();
      source.replaceAllUsesWith(target);
      alloc->erase();
    }
  }

  /// Whether nothing uses `buffer` after `copy` (in its block).
  static bool isLastUse(Operation *copy, Value buffer) {
    Block *block = copy->getBlock();
    for (Operation *user : buffer.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (user != copy && (!inBlock || copy->isBeforeInBlock(inBlock)))
        return false;
    }
    return true;
  }
};
} // namespace
