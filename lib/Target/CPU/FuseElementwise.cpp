//===- FuseElementwise.cpp - elementwise producers into consumers ---------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cleave {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {

struct FuseElementwisePass
    : cleave::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::ControlFusionFn onlyGenerics = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return isa_and_nonnull<linalg::GenericOp>(producer) &&
             producer->hasOneUse() &&
             isa<linalg::GenericOp>(fused->getOwner());
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, onlyGenerics);
    // Operands that fusion makes unused or duplicated.
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};

} // namespace
