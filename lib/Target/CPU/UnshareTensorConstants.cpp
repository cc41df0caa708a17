//===- UnshareTensorConstants.cpp - one tensor constant per use -----------===//
//
// One-Shot Bufferize analyses every pair of uses of a tensor for
// read-after-write conflicts: a constant the canonicalizer shared among
// thousands of users costs time quadratic in their number. A copy per use
// makes the analysis linear; bufferized, the copies read one global.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

namespace cleave {
#define GEN_PASS_DEF_UNSHARETENSORCONSTANTSPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {
struct UnshareTensorConstantsPass
    : cleave::impl::UnshareTensorConstantsPassBase<
          UnshareTensorConstantsPass> {
  void runOnOperation() override {
    SmallVector<arith::ConstantOp> shared;
    getOperation().walk([&](arith::ConstantOp constant) {
      if (isa<TensorType>(constant.getType()) &&
          !constant->hasOneUse() && !constant->use_empty())
        shared.push_back(constant);
    });
    for (arith::ConstantOp constant : shared) {
      auto uses = llvm::make_early_inc_range(
          llvm::drop_begin(constant->getUses()));
      for (OpOperand &use : uses) {
        OpBuilder builder(use.getOwner());
        use.set(builder.clone(*constant)->getResult(0));
      }
    }
  }
};
} // namespace
