//===- ParallelizeKernels.cpp - large loop nests over all threads ---------===//

#include "cleave/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace cleave {
#define GEN_PASS_DEF_PARALLELIZEKERNELSPASS
#include "cleave/Conversion/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {

struct ParallelizeKernelsPass
    : cleave::impl::ParallelizeKernelsPassBase<ParallelizeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> large;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 0 && isWorthThreads(op))
        large.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : large) {
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::linalgOpToParallelLoops(rewriter, op)))
        rewriter.eraseOp(op);
    }
  }

  /// Parallel dimensions first, then only reductions, and enough
  /// iterations (static ranges only).
  bool isWorthThreads(linalg::LinalgOp op) const {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    if (iterators.empty() || iterators.front() != utils::IteratorType::parallel)
      return false;
    bool reducing = false;
    for (utils::IteratorType type : iterators) {
      if (type == utils::IteratorType::reduction)
        reducing = true;
      else if (reducing)
        return false;
    }
    int64_t iterations = 1;
    for (int64_t range : op.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range))
        return false;
      iterations *= range;
    }
    return iterations >= minIterations;
  }
};

} // namespace
