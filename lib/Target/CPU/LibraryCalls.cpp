//===- LibraryCalls.cpp - matrix products as calls of OpenBLAS ------------===//
//
// Generated loops reach a fraction of a tuned GEMM's speed, so matrix
// products and convolutions on buffers call the kernel library
// (KernelLibrary.h). Each operand's layout decides the call: a matrix whose
// rows are contiguous is passed with its row stride; one whose columns are
// (a transposed view) is passed as the transposed matrix.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace cleave {
#define GEN_PASS_DEF_LIBRARYCALLSPASS
#include "cleave/Target/CPU/Passes.h.inc"
} // namespace cleave

using namespace mlir;

/// The static strides of `type`, or nothing.
static std::optional<SmallVector<int64_t>> staticStrides(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(getStridesAndOffset(type, strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return strides;
}

namespace {
/// How a stored matrix is handed to GEMM: its transposition as BLAS sees
/// it and its leading dimension.
struct BlasMatrix {
  bool transposed;
  int64_t leadingDim;
};
} // namespace

/// `type` (rows x cols as stored) as a BLAS matrix that the op reads
/// transposed when `opTransposes`; nothing when neither its rows nor its
/// columns are contiguous or its strides are not static.
static std::optional<BlasMatrix> asBlasMatrix(MemRefType type,
                                              bool opTransposes) {
  std::optional<SmallVector<int64_t>> strides = staticStrides(type);
  if (!strides)
    return std::nullopt;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  if ((*strides)[1] == 1 || cols == 1)
    return BlasMatrix{opTransposes,
                      std::max<int64_t>({(*strides)[0], cols, 1})};
  if ((*strides)[0] == 1 || rows == 1)
    return BlasMatrix{!opTransposes,
                      std::max<int64_t>({(*strides)[1], rows, 1})};
  return std::nullopt;
}

namespace {
/// Builds the arguments of a library call before `op`.
struct CallArguments {
  OpBuilder builder;
  Location loc;
  SmallVector<Value> values;

  explicit CallArguments(Operation *op) : builder(op), loc(op->getLoc()) {}

  void addInt(int64_t v) {
    values.push_back(builder.create<arith::ConstantIntOp>(loc, v, 64));
  }
  void addFloat(Type type, double v) {
    values.push_back(
        builder.create<arith::ConstantOp>(loc, builder.getFloatAttr(type, v)));
  }
  /// The address of `memref`'s first element (the aligned pointer does not
  /// include a view's offset).
  void addPointer(Value memref) {
    Value base =
        builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
    auto type = cast<MemRefType>(memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)getStridesAndOffset(type, strides, offset);
    if (offset == 0) {
      values.push_back(base);
      return;
    }
    Value elements =
        ShapedType::isDynamic(offset)
            ? builder.create<memref::ExtractStridedMetadataOp>(loc, memref)
                  .getOffset()
            : Value(builder.create<arith::ConstantIndexOp>(loc, offset));
    Value bytes = builder.create<arith::MulIOp>(
        loc, elements,
        builder.create<arith::ConstantIndexOp>(
            loc, type.getElementTypeBitWidth() / 8));
    values.push_back(builder.create<arith::AddIOp>(loc, base, bytes));
  }

  /// Calls `name`, declared from the arguments' types on first use.
  void call(SymbolTable &symbols, StringRef name) {
    auto callee = symbols.lookup<func::FuncOp>(name);
    if (!callee) {
      auto module = cast<ModuleOp>(symbols.getOp());
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      callee = top.create<func::FuncOp>(
          module.getLoc(), name,
          top.getFunctionType(ValueRange(values).getTypes(), {}));
      callee.setPrivate();
      symbols.insert(callee);
    }
    builder.create<func::CallOp>(loc, callee, values);
  }
};

struct LibraryCallsPass
    : cleave::impl::LibraryCallsPassBase<LibraryCallsPass> {
  void runOnOperation() override {
    // (A symbol table, not ModuleOp::lookupSymbol, which scans the module:
    // quadratic over thousands of products.)
    SymbolTable symbols(getOperation());
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 0 &&
          isa<linalg::MatmulOp, linalg::MatmulTransposeAOp,
              linalg::MatmulTransposeBOp, linalg::Conv2DNhwcHwcfOp>(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation()))
        replaceConvolution(symbols, conv);
      else
        replaceProduct(symbols, op);
    }
  }

  void replaceProduct(SymbolTable &symbols, linalg::LinalgOp op) {
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    auto aType = cast<MemRefType>(a.getType());
    auto bType = cast<MemRefType>(b.getType());
    auto cType = cast<MemRefType>(c.getType());
    Type element = cType.getElementType();
    if (!(element.isF32() || element.isF64()) ||
        aType.getElementType() != element || bType.getElementType() != element)
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
    linalg::FillOp zeroFill = findZeroFill(op, c);
    CallArguments args(op);
    for (int64_t v : {int64_t(lhs->transposed), int64_t(rhs->transposed), m,
                      n, k})
      args.addInt(v);
    args.addPointer(a);
    args.addInt(lhs->leadingDim);
    args.addPointer(b);
    args.addInt(rhs->leadingDim);
    args.addFloat(element, zeroFill ? 0.0 : 1.0);
    args.addPointer(c);
    args.addInt(out->leadingDim);
    args.call(symbols,
              element.isF32() ? "cleave_cpu_sgemm" : "cleave_cpu_dgemm");
    if (zeroFill)
      zeroFill.erase();
    op.erase();
  }

  /// Convolutions of f32 images (any strides, channels contiguous) with a
  /// contiguous filter into a contiguous output: im2col and sgemm.
  void replaceConvolution(SymbolTable &symbols, linalg::Conv2DNhwcHwcfOp op) {
    Value in = op.getDpsInputOperand(0)->get();
    Value filter = op.getDpsInputOperand(1)->get();
    Value out = op.getDpsInitOperand(0)->get();
    auto inType = cast<MemRefType>(in.getType());
    auto filterType = cast<MemRefType>(filter.getType());
    auto outType = cast<MemRefType>(out.getType());
    std::optional<SmallVector<int64_t>> inStrides = staticStrides(inType);
    if (!inType.getElementType().isF32() ||
        !filterType.getElementType().isF32() ||
        !outType.getElementType().isF32() || !inStrides ||
        ((*inStrides)[3] != 1 && inType.getDimSize(3) != 1) ||
        !memref::isStaticShapeAndContiguousRowMajor(filterType) ||
        !memref::isStaticShapeAndContiguousRowMajor(outType))
      return;
    linalg::FillOp zeroFill = findZeroFill(op, out);
    auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
    auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
    CallArguments args(op);
    args.addPointer(in);
    for (int64_t v : {inType.getDimSize(0), (*inStrides)[0], (*inStrides)[1],
                      (*inStrides)[2], inType.getDimSize(3)})
      args.addInt(v);
    args.addPointer(filter);
    for (int64_t v : {filterType.getDimSize(0), filterType.getDimSize(1),
                      filterType.getDimSize(3)})
      args.addInt(v);
    args.addPointer(out);
    for (int64_t v : {outType.getDimSize(1), outType.getDimSize(2), strides[0],
                      strides[1], dilations[0], dilations[1]})
      args.addInt(v);
    args.addFloat(outType.getElementType(), zeroFill ? 0.0 : 1.0);
    args.call(symbols, "cleave_cpu_conv2d_f32");
    if (zeroFill)
      zeroFill.erase();
    op.erase();
  }

  /// The `linalg.fill` of zeros into `c` that `product` accumulates onto,
  /// when nothing else touches `c` between the two.
  static linalg::FillOp findZeroFill(Operation *product, Value c) {
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
