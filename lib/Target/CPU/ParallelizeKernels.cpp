//===- ParallelizeKernels.cpp - large kernels over all threads ------------===//
//
// A kernel (outline-kernels' function around one linalg op) whose first
// loop is parallel and long runs as tiles: the kernel takes a tile number
// and works on the slices of its buffers along that loop's dimension, and
// its call becomes an scf.parallel over the tiles, which
// convert-scf-to-openmp shares among the threads. The loop nest stays in
// the kernel, whose arguments keep their noalias and static shapes, so
// LLVM vectorizes it as before; only the call is in the OpenMP region.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace cleave {
#define GEN_PASS_DEF_PARALLELIZEKERNELSPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

/// Tiles a loop of `extent` iterations is split into: a divisor of the
/// extent (so every tile has the same static size) between 16 and 64 where
/// there is one, else the largest below 16; 1 when there is none.
static int64_t tileCount(int64_t extent) {
  for (int64_t tiles = 16; tiles <= 64 && tiles <= extent; ++tiles)
    if (extent % tiles == 0)
      return tiles;
  for (int64_t tiles = std::min<int64_t>(15, extent); tiles > 1; --tiles)
    if (extent % tiles == 0)
      return tiles;
  return 1;
}

/// For each operand of `op`, the position of the first loop's dimension
/// among its indices (-1: it does not depend on it), or nothing when the
/// first loop is used other than as a whole index.
static std::optional<SmallVector<int64_t>>
slicedPositions(linalg::LinalgOp op) {
  SmallVector<int64_t> positions;
  for (AffineMap map : op.getIndexingMapsArray()) {
    int64_t position = -1;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && dim.getPosition() == 0) {
        if (position >= 0)
          return std::nullopt;
        position = i;
      } else if (expr.isFunctionOfDim(0)) {
        return std::nullopt;
      }
    }
    positions.push_back(position);
  }
  return positions;
}

namespace {
struct ParallelizeKernelsPass
    : cleave::impl::ParallelizeKernelsPassBase<ParallelizeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    // (A symbol table: ModuleOp::lookupSymbol scans the module.)
    SymbolTable symbols(getOperation());
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      auto kernel = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!kernel || kernel.isDeclaration() || !kernel->hasAttr("no_inline"))
        continue;
      auto ops = kernel.getBody().front().getOps<linalg::LinalgOp>();
      if (std::distance(ops.begin(), ops.end()) != 1)
        continue;
      parallelize(call, kernel, *ops.begin());
    }
  }

  void parallelize(func::CallOp call, func::FuncOp kernel,
                   linalg::LinalgOp op) {
    if (!isWorthThreads(op))
      return;
    std::optional<SmallVector<int64_t>> positions = slicedPositions(op);
    // Every output slices along the loop: tiles write disjoint parts.
    if (!positions ||
        llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
          return (*positions)[init.getOperandNumber()] < 0;
        }))
      return;
    int64_t extent = op.getStaticLoopRanges().front();
    int64_t tiles = tileCount(extent);
    if (tiles < 2)
      return;
    int64_t tileSize = extent / tiles;

    // The kernel takes the tile number last and slices its buffers.
    Block &body = kernel.getBody().front();
    Value tile = body.addArgument(IndexType::get(&getContext()), op.getLoc());
    kernel.setType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                                     {}));
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value first = b.create<arith::MulIOp>(
        loc, tile, b.create<arith::ConstantIndexOp>(loc, tileSize));
    IRMapping slices;
    for (auto [operand, position] :
         llvm::zip(op->getOpOperands(), *positions)) {
      if (position < 0)
        continue;
      auto type = cast<MemRefType>(operand.get().getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                               b.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      offsets[position] = first;
      sizes[position] = b.getIndexAttr(tileSize);
      slices.map(operand.get(), b.create<memref::SubViewOp>(
                                    loc, operand.get(), offsets, sizes,
                                    strides));
    }
    Operation *sliced = b.clone(*op, slices);
    // Bodies that read their position see the whole loop's.
    sliced->walk([&](linalg::IndexOp index) {
      if (index.getDim() != 0)
        return;
      OpBuilder after(index->getContext());
      after.setInsertionPointAfter(index);
      auto shifted = after.create<arith::AddIOp>(index.getLoc(),
                                                 index.getResult(), first);
      index.getResult().replaceAllUsesExcept(shifted, shifted);
    });
    op->erase();

    // The call: one per tile, in parallel.
    OpBuilder c(call);
    Location callLoc = call.getLoc();
    Value zero = c.create<arith::ConstantIndexOp>(callLoc, 0);
    Value one = c.create<arith::ConstantIndexOp>(callLoc, 1);
    Value count = c.create<arith::ConstantIndexOp>(callLoc, tiles);
    c.create<scf::ParallelOp>(
        callLoc, ValueRange{zero}, ValueRange{count}, ValueRange{one},
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          SmallVector<Value> args(call.getOperands());
          args.push_back(ivs.front());
          nb.create<func::CallOp>(l, kernel, args);
        });
    call.erase();
  }

  /// Parallel first loop, and enough iterations (static ranges only).
  bool isWorthThreads(linalg::LinalgOp op) const {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    if (iterators.empty() ||
        iterators.front() != utils::IteratorType::parallel ||
        op->getNumResults() != 0)
      return false;
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
