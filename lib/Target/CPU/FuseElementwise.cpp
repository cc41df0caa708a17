//===- FuseElementwise.cpp - elementwise producers into consumers ---------===//
//
// Linalg's elementwise fusion of a generic into the generic that alone uses
// it, as populateElementwiseOpsFusionPatterns fuses them, but without its
// RemoveOutsDependency pattern: that pattern gives every generic whose
// payload does not read its output a fresh tensor.empty destination, which
// undoes the destination-passing the lowering chose on purpose (a loop's
// update written into the loop's carried value, so that bufferization
// updates the variable's buffer in place instead of allocating a new one
// each iteration and copying every carried value into it).
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cleave {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {

/// Whether the payload of `op` reads the value its destination holds: an
/// accumulation into it is no elementwise producer (fused into a consumer
/// that broadcasts it, the accumulation ran once per consumer element:
/// einsum.pbtxt's broadcast product came out multiplied).
static bool readsItsOutput(linalg::GenericOp op) {
  return llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    return op.payloadUsesValueFromOperand(&init);
  });
}

/// Fuses into a generic the generic that produces one of its operands and
/// has no other use (the consumer's destinations are kept).
struct FuseSingleUseProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!producer || !producer->hasOneUse() ||
          !linalg::areElementwiseOpsFusable(&operand) ||
          readsItsOutput(producer))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return rewriter.notifyMatchFailure(consumer, "fusion failed");
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != producer;
        });
      rewriter.eraseOp(consumer);
      return success();
    }
    return failure();
  }
};

struct FuseElementwisePass
    : cleave::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<FuseSingleUseProducer>(context);
    // Operands that fusion makes unused or duplicated.
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};

} // namespace
