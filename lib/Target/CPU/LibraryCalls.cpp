//===- LibraryCalls.cpp - matrix products as calls of OpenBLAS ------------===//
//
// Generated loops reach a fraction of a tuned GEMM's speed, so matrix
// products on buffers call the kernel library (KernelLibrary.h). Each
// operand's layout decides the call: a matrix whose rows are contiguous is
// passed with its row stride; one whose columns are (a transposed view) is
// passed as the transposed matrix.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace cleave {
#define GEN_PASS_DEF_LIBRARYCALLSPASS
#include "cleave/Conversion/Passes.h.inc"
} // namespace cleave

using namespace mlir;

namespace {

/// How a stored matrix is handed to GEMM: its transposition as BLAS sees
/// it and its leading dimension.
struct BlasMatrix {
  bool transposed;
  int64_t leadingDim;
};

/// `type` (rows x cols as stored) as a BLAS matrix that the op reads
/// transposed when `opTransposes`; nothing when neither its rows nor its
/// columns are contiguous or its strides are not static.
std::optional<BlasMatrix> asBlasMatrix(MemRefType type, bool opTransposes) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(strides[0]) || ShapedType::isDynamic(strides[1]))
    return std::nullopt;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  if (strides[1] == 1 || cols == 1)
    return BlasMatrix{opTransposes, std::max<int64_t>({strides[0], cols, 1})};
  if (strides[0] == 1 || rows == 1)
    return BlasMatrix{!opTransposes, std::max<int64_t>({strides[1], rows, 1})};
  return std::nullopt;
}

struct LibraryCallsPass
    : cleave::impl::LibraryCallsPassBase<LibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> products;
    module.walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 0 &&
          isa<linalg::MatmulOp, linalg::MatmulTransposeAOp,
              linalg::MatmulTransposeBOp>(op))
        products.push_back(op);
    });
    for (linalg::LinalgOp op : products)
      replaceByCall(module, op);
  }

  /// The library function for `type`'s elements, declared on first use.
  func::FuncOp getGemm(ModuleOp module, Type element) {
    StringRef name = element.isF32() ? "cleave_cpu_sgemm" : "cleave_cpu_dgemm";
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    Type i64 = b.getI64Type(), ptr = b.getIndexType();
    auto type = b.getFunctionType(
        {i64, i64, i64, i64, i64, ptr, i64, ptr, i64, element, ptr, i64}, {});
    auto gemm = b.create<func::FuncOp>(module.getLoc(), name, type);
    gemm.setPrivate();
    return gemm;
  }

  void replaceByCall(ModuleOp module, linalg::LinalgOp op) {
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    auto aType = cast<MemRefType>(a.getType());
    auto bType = cast<MemRefType>(b.getType());
    auto cType = cast<MemRefType>(c.getType());
    Type element = cType.getElementType();
    if (!(element.isF32() || element.isF64()) ||
        aType.getElementType() != element || bType.getElementType() != element ||
        !aType.hasStaticShape() || !bType.hasStaticShape() ||
        !cType.hasStaticShape())
      return;
    bool ta = isa<linalg::MatmulTransposeAOp>(op);
    bool tb = isa<linalg::MatmulTransposeBOp>(op);
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1);
    int64_t k = aType.getDimSize(ta ? 0 : 1);
    // Empty products are loops that do nothing; BLAS rejects some of
    // their leading dimensions.
    if (m == 0 || n == 0 || k == 0)
      return;
    std::optional<BlasMatrix> lhs = asBlasMatrix(aType, ta);
    std::optional<BlasMatrix> rhs = asBlasMatrix(bType, tb);
    std::optional<BlasMatrix> out = asBlasMatrix(cType, false);
    if (!lhs || !rhs || !out || out->transposed)
      return;

    OpBuilder builder(op);
    Location loc = op.getLoc();
    linalg::FillOp zeroFill = findZeroFill(op, c);
    Value beta = builder.create<arith::ConstantOp>(
        loc, builder.getFloatAttr(element, zeroFill ? 0.0 : 1.0));
    auto i64 = [&](int64_t v) -> Value {
      return builder.create<arith::ConstantIntOp>(loc, v, 64);
    };
    // The aligned pointer does not include the view's offset.
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    auto pointer = [&](Value memref) -> Value {
      Value base = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
          loc, memref);
      SmallVector<int64_t> strides;
      int64_t offset;
      (void)getStridesAndOffset(cast<MemRefType>(memref.getType()), strides,
                                offset);
      if (offset == 0)
        return base;
      Value elements =
          ShapedType::isDynamic(offset)
              ? builder.create<memref::ExtractStridedMetadataOp>(loc, memref)
                    .getOffset()
              : Value(builder.create<arith::ConstantIndexOp>(loc, offset));
      Value offsetBytes = builder.create<arith::MulIOp>(
          loc, elements, builder.create<arith::ConstantIndexOp>(loc, bytes));
      return builder.create<arith::AddIOp>(loc, base, offsetBytes);
    };
    SmallVector<Value> args = {
        i64(lhs->transposed), i64(rhs->transposed), i64(m), i64(n), i64(k),
        pointer(a), i64(lhs->leadingDim), pointer(b), i64(rhs->leadingDim),
        beta, pointer(c), i64(out->leadingDim)};
    builder.create<func::CallOp>(loc, getGemm(module, element), args);
    if (zeroFill)
      zeroFill.erase();
    op.erase();
  }

  /// The `linalg.fill` of zeros into `c` that `product` accumulates onto,
  /// when nothing else touches `c` between the two.
  static linalg::FillOp findZeroFill(linalg::LinalgOp product, Value c) {
    Block *block = product->getBlock();
    linalg::FillOp fill;
    for (Operation *user : c.getUsers()) {
      auto candidate = dyn_cast<linalg::FillOp>(user);
      if (candidate && candidate->getBlock() == block &&
          candidate->isBeforeInBlock(product) &&
          candidate.getDpsInitOperand(0)->get() == c &&
          (!fill || fill->isBeforeInBlock(candidate)))
        fill = candidate;
    }
    if (!fill || !matchPattern(fill.getDpsInputOperand(0)->get(),
                               m_AnyZeroFloat()))
      return nullptr;
    for (Operation *user : c.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (user != fill && user != product && inBlock &&
          fill->isBeforeInBlock(inBlock) && inBlock->isBeforeInBlock(product))
        return nullptr;
    }
    return fill;
  }
};

} // namespace
