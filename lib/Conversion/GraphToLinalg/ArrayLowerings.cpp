//===- ArrayLowerings.cpp - constants, shapes and data movement -----------===//
//
// Shapes are static, so Shape/Size/Rank are constants and reshapes are
// tensor.collapse_shape/expand_shape (no copy once bufferized). Data
// movement becomes tensor.extract_slice/insert_slice, linalg.transpose, or a
// linalg.generic whose input map does the indexing (Tile, BroadcastTo).
// Output shapes come from the ops' shape functions, which checked the
// inputs with TensorFlow's messages.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Ops/CheckNumerics.h"
#include "cleave/Ops/Reverse.h"
#include "cleave/Ops/StridedSlice.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

static LogicalResult constant(NodeLowering &ctx) {
  auto attr = dyn_cast_or_null<graph::TensorAttr>(ctx.node.getTFAttr("value"));
  auto dense = attr ? dyn_cast_or_null<DenseElementsAttr>(attr.getValue())
                    : DenseElementsAttr();
  int32_t dtype = attr ? graph::typeToDataType(attr.getDtype()) : -1;
  if (!dense || !ctx.elementType(dtype))
    return ctx.error() << "a constant of dtype "
                       << (attr ? graph::getDataTypeName(attr.getDtype())
                                : std::string("?"))
                       << " has no CPU lowering";
  std::vector<int64_t> shape(attr.getShape().getDims().begin(),
                             attr.getShape().getDims().end());
  // A large splat (TensorFlow's compact form: one value for the whole
  // shape) is filled at run time from its one value, never materialised
  // here: a billion-element constant costs the compiler nothing.
  bool fillAtRunTime =
      dense.isSplat() && hasMoreElements(shape, kMaxFoldedElements);
  Tensor value(dtype, fillAtRunTime ? std::vector<int64_t>{} : shape);
  if (dtype == cleave::kBool) {
    auto bits = dense.getValues<bool>();
    for (int64_t i = 0; i < value.numElements(); ++i)
      value.data<bool>()[i] = bits[dense.isSplat() ? 0 : i];
  } else {
    ArrayRef<char> raw = dense.getRawData();
    size_t size = cleave::dtypeSize(dtype);
    for (int64_t i = 0; i < value.numElements(); ++i)
      std::memcpy(value.raw() + i * size,
                  raw.data() + (dense.isSplat() ? 0 : i * size), size);
  }
  if (fillAtRunTime) {
    Value one = ctx.b.create<tensor::ExtractOp>(
        ctx.loc, ctx.constantTensor(value), ValueRange{});
    ctx.setOutput(0, ctx.filled(shape, dtype, one), dtype);
    return success();
  }
  ctx.setConstantOutput(0, std::move(value));
  return success();
}

/// Identity, Snapshot, StopGradient, ...: the input, variable name and all.
static LogicalResult forward(NodeLowering &ctx) {
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    ctx.setOutput(i, ctx.input(i));
  return success();
}

/// The input; the status becomes the reference kernel's error when an
/// element is Inf (bit 1) or NaN (bit 2), OR-ed over the tensor.
/// MatrixBandPart: a select per element on its row and column. The band's
/// bounds are compile-time constants (as XLA needs them), checked as the
/// reference kernel checks them.
static LogicalResult matrixBandPart(NodeLowering &ctx) {
  if (failed(ctx.requireConstants({1, 2})))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  if (rank < 2)
    return ctx.error() << "input must be at least 2-dim, received shape: "
                       << cleave::shapeString(shape),
           failure();
  for (unsigned i : {1u, 2u}) {
    const char *name = i == 1 ? "num_lower" : "num_upper";
    if (!ctx.shape(i).empty())
      return ctx.error() << name << " must be scalar, got shape "
                         << cleave::shapeString(ctx.shape(i)),
             failure();
    int64_t limit = shape[rank - (i == 1 ? 2 : 1)];
    if (int64_t count = ctx.input(i).constant->getAsInt(0); count > limit)
      return ctx.error() << name << " must be negative or less or equal to "
                         << (i == 1 ? "number of rows ("
                                    : "number of columns (")
                         << limit << ") got: " << count,
             failure();
  }
  int32_t dtype = ctx.dtype(0);
  if (!ctx.elementType(dtype))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " has no CPU lowering",
           failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto bound = [&](unsigned i) -> Value {
    return b.create<arith::ConstantOp>(
        loc, b.getI64IntegerAttr(ctx.input(i).constant->getAsInt(0)));
  };
  Value lower = bound(1), upper = bound(2);
  Value zero = ctx.scalar(dtype, 0);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{ctx.tensorType(shape, dtype)}, ValueRange{ctx.tensor(0)},
      ValueRange{ctx.empty(shape, dtype)},
      SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto at = [&](int64_t d) -> Value {
          return nb.create<arith::IndexCastOp>(
              nloc, nb.getI64Type(), nb.create<linalg::IndexOp>(nloc, d));
        };
        Value m = at(rank - 2), n = at(rank - 1);
        Value c0 = nb.create<arith::ConstantOp>(nloc, nb.getI64IntegerAttr(0));
        auto within = [&](Value count, Value distance) -> Value {
          return nb.create<arith::OrIOp>(
              nloc,
              nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::slt, count,
                                       c0),
              nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::sle,
                                       distance, count));
        };
        Value inBand = nb.create<arith::AndIOp>(
            nloc, within(lower, nb.create<arith::SubIOp>(nloc, m, n)),
            within(upper, nb.create<arith::SubIOp>(nloc, n, m)));
        nb.create<linalg::YieldOp>(
            nloc, nb.create<arith::SelectOp>(nloc, inBand, args[0], zero)
                      .getResult());
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// CheckNumerics and CheckNumericsV2: the kinds of non-finite values, or-ed
/// over the tensor, pick the status's error (TensorFlow's message for each
/// combination).
template <bool isV2> static LogicalResult checkNumerics(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported";
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const std::vector<int64_t> &shape = ctx.shape(0);
  Value x = ctx.tensor(0);
  auto i32 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v));
  };
  Value bits =
      ctx.map({x}, shape, cleave::kInt32,
              [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                using FP = arith::CmpFPredicate;
                Value v = args[0];
                Value inf = b.create<arith::ConstantOp>(
                    loc, b.getFloatAttr(v.getType(), INFINITY));
                Value isPositiveInf =
                    b.create<arith::CmpFOp>(loc, FP::OEQ, v, inf);
                Value isNegativeInf = b.create<arith::CmpFOp>(
                    loc, FP::OEQ, v, b.create<arith::NegFOp>(loc, inf));
                Value isNan = b.create<arith::CmpFOp>(loc, FP::UNO, v, v);
                return b.create<arith::SelectOp>(
                    loc, isPositiveInf, i32(ops::kPositiveInfinity),
                    b.create<arith::SelectOp>(
                        loc, isNegativeInf, i32(ops::kNegativeInfinity),
                        b.create<arith::SelectOp>(
                            loc, isNan, i32(ops::kNotANumber), i32(0))));
              });
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    axes.push_back(d);
  Value any = bits;
  if (!axes.empty())
    any = ctx.reduce(bits, shape, cleave::kInt32, axes, i32(0),
                     [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                       return b.create<arith::OrIOp>(loc, args[0], args[1]);
                     });
  Value found = b.create<tensor::ExtractOp>(loc, any, ValueRange{});
  std::string message = ctx.node.getTFString("message").value_or("");
  Value status = ctx.getStatus();
  Value ok = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::eq, status,
      b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0)));
  for (unsigned kinds = 1; kinds < 8; ++kinds) {
    int64_t code =
        ctx.addError(message + " : Tensor had " +
                     ops::describeNonFinite(kinds, isV2) + " values");
    Value hit = b.create<arith::AndIOp>(
        loc, ok,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, found,
                                i32(kinds)));
    status = b.create<arith::SelectOp>(
        loc, hit, b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(code)),
        status);
  }
  ctx.setStatus(status);
  ctx.setOutput(0, ctx.input(0));
  return success();
}

static Tensor intVector(int32_t dtype, ArrayRef<int64_t> values) {
  Tensor t(dtype, {int64_t(values.size())});
  for (auto [i, v] : llvm::enumerate(values))
    t.setFromDouble(i, double(v));
  return t;
}

static Tensor intScalar(int32_t dtype, int64_t value) {
  Tensor t(dtype, {});
  t.setFromDouble(0, double(value));
  return t;
}

static LogicalResult shape(NodeLowering &ctx) {
  int32_t outType = ctx.getType("out_type").value_or(kInt32);
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    ctx.setConstantOutput(i, intVector(outType, ctx.shape(i)));
  return success();
}

static LogicalResult size(NodeLowering &ctx) {
  int64_t count = 1;
  for (int64_t d : ctx.shape(0))
    count *= d;
  ctx.setConstantOutput(
      0, intScalar(ctx.getType("out_type").value_or(kInt32), count));
  return success();
}

static LogicalResult rank(NodeLowering &ctx) {
  ctx.setConstantOutput(0, intScalar(kInt32, ctx.shape(0).size()));
  return success();
}

/// Reshape, ExpandDims, Squeeze: the same elements with another shape.
template <unsigned shapeInput>
static LogicalResult reshapeLike(NodeLowering &ctx) {
  std::vector<unsigned> shapeInputs;
  if (shapeInput < ctx.getNumInputs())
    shapeInputs.push_back(shapeInput);
  FailureOr<std::vector<int64_t>> to = ctx.inferredOutputShape(shapeInputs);
  if (failed(to))
    return failure();
  int32_t dtype = ctx.dtype(0);
  ctx.setOutput(0, ctx.reshape(ctx.tensor(0), ctx.shape(0), *to, dtype),
                dtype);
  return success();
}

static LogicalResult fill(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({0});
  if (failed(shape))
    return failure();
  if (!ctx.shape(1).empty())
    return ctx.error() << "value must be a scalar, got shape "
                       << cleave::shapeString(ctx.shape(1));
  int32_t dtype = ctx.dtype(1);
  ctx.setOutput(0,
                ctx.map({ctx.tensor(1)}, *shape, dtype,
                        [](OpBuilder &, Location, ValueRange args) {
                          return args[0];
                        }),
                dtype);
  return success();
}

template <int value> static LogicalResult filledLike(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  ctx.setOutput(0, ctx.filled(ctx.shape(0), dtype, ctx.scalar(dtype, value)),
                dtype);
  return success();
}

static LogicalResult transpose(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> perm = ctx.constantInts(1);
  if (failed(perm))
    return failure();
  const std::vector<int64_t> &in = ctx.shape(0);
  std::vector<int64_t> sorted = *perm;
  llvm::sort(sorted);
  bool valid = perm->size() == in.size();
  for (size_t d = 0; valid && d < sorted.size(); ++d)
    valid = sorted[d] == int64_t(d);
  if (perm->size() != in.size())
    return ctx.error() << "transpose expects a vector of size " << in.size()
                       << ". But input(1) is a vector of size "
                       << perm->size();
  if (!valid)
    return ctx.error() << cleave::shapeString(*perm)
                       << " is not a valid permutation";
  std::vector<int64_t> out;
  for (int64_t d : *perm)
    out.push_back(in[d]);
  int32_t dtype = ctx.dtype(0);
  Value result = ctx.b
                     .create<linalg::TransposeOp>(ctx.loc, ctx.tensor(0),
                                                  ctx.empty(out, dtype), *perm)
                     .getResult()[0];
  ctx.setOutput(0, result, dtype);
  return success();
}

/// ReverseV2 of compile-time axes: a linalg.generic reading each reversed
/// dimension from its far end.
static LogicalResult reverseV2(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> axes = ctx.constantInts(1);
  if (failed(axes))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  if (ctx.shape(1).size() != 1)
    return ctx.error() << "'dims' must be 1-dimension, not "
                       << ctx.shape(1).size();
  std::vector<bool> reversed;
  std::string error = ops::reversedDimensions(*axes, rank, reversed);
  if (!error.empty())
    return ctx.error() << error;
  OpBuilder &b = ctx.b;
  int32_t dtype = ctx.dtype(0);
  SmallVector<AffineExpr> reads;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr dim = b.getAffineDimExpr(d);
    reads.push_back(reversed[d] ? shape[d] - 1 - dim : dim);
  }
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, reads, b.getContext()),
                              b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, ctx.tensorType(shape, dtype), ValueRange{ctx.tensor(0)},
      ValueRange{ctx.empty(shape, dtype)}, maps, iterators,
      [](OpBuilder &b, Location loc, ValueRange args) {
        b.create<linalg::YieldOp>(loc, args[0]);
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// Inserts `pieces` along `axis` into a new tensor of `shape`.
static Value concatenate(NodeLowering &ctx, ArrayRef<Value> pieces,
                         int64_t axis, ArrayRef<int64_t> shape, int32_t dtype) {
  OpBuilder &b = ctx.b;
  Value result = ctx.empty(shape, dtype);
  int64_t offset = 0;
  for (Value piece : pieces) {
    ArrayRef<int64_t> pieceShape =
        cast<RankedTensorType>(piece.getType()).getShape();
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
        sizes, strides(shape.size(), b.getIndexAttr(1));
    for (int64_t d : pieceShape)
      sizes.push_back(b.getIndexAttr(d));
    offsets[axis] = b.getIndexAttr(offset);
    offset += pieceShape[axis];
    result = b.create<tensor::InsertSliceOp>(ctx.loc, piece, result, offsets,
                                             sizes, strides);
  }
  return result;
}

static LogicalResult concat(NodeLowering &ctx) {
  unsigned n = ctx.getNumInputs() - 1;
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({n});
  if (failed(shape))
    return failure();
  int64_t axis = ctx.constantInts(n)->front();
  if (axis < 0)
    axis += shape->size();
  SmallVector<Value> pieces;
  for (unsigned i = 0; i < n; ++i)
    pieces.push_back(ctx.tensor(i));
  int32_t dtype = ctx.dtype(0);
  ctx.setOutput(0, concatenate(ctx, pieces, axis, *shape, dtype), dtype);
  return success();
}

static LogicalResult pack(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({});
  if (failed(shape))
    return failure();
  int64_t axis = ctx.getInt("axis").value_or(0);
  if (axis < 0)
    axis += shape->size();
  int32_t dtype = ctx.dtype(0);
  SmallVector<Value> pieces;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    std::vector<int64_t> expanded = ctx.shape(i);
    expanded.insert(expanded.begin() + axis, 1);
    pieces.push_back(
        ctx.reshape(ctx.tensor(i), ctx.shape(i), expanded, dtype));
  }
  ctx.setOutput(0, concatenate(ctx, pieces, axis, *shape, dtype), dtype);
  return success();
}

/// Slices `input` of `shape` at `offsets` with `sizes`.
static Value slice(NodeLowering &ctx, Value input, ArrayRef<int64_t> offsets,
                   ArrayRef<int64_t> sizes) {
  OpBuilder &b = ctx.b;
  SmallVector<OpFoldResult> o, s, st;
  for (auto [offset, size] : llvm::zip(offsets, sizes)) {
    o.push_back(b.getIndexAttr(offset));
    s.push_back(b.getIndexAttr(size));
    st.push_back(b.getIndexAttr(1));
  }
  auto type = RankedTensorType::get(
      sizes, cast<RankedTensorType>(input.getType()).getElementType());
  return b.create<tensor::ExtractSliceOp>(ctx.loc, type, input, o, s, st);
}

static LogicalResult unpack(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0);
  int64_t axis = ctx.getInt("axis").value_or(0);
  int64_t rank = in.size();
  if (axis < -rank || axis >= rank)
    return ctx.error() << "axis = " << axis << " not in [" << -rank << ", "
                       << rank << ")";
  if (axis < 0)
    axis += rank;
  if (int64_t(ctx.node.getOutputs().size()) != in[axis])
    return ctx.error() << "Input shape axis " << axis << " must equal "
                       << ctx.node.getOutputs().size() << ", got shape "
                       << cleave::shapeString(in);
  int32_t dtype = ctx.dtype(0);
  std::vector<int64_t> sizes = in, out = in;
  sizes[axis] = 1;
  out.erase(out.begin() + axis);
  for (int64_t i = 0; i < in[axis]; ++i) {
    std::vector<int64_t> offsets(rank, 0);
    offsets[axis] = i;
    Value piece = slice(ctx, ctx.tensor(0), offsets, sizes);
    ctx.setOutput(i, ctx.reshape(piece, sizes, out, dtype), dtype);
  }
  return success();
}

/// Split(axis, value) and SplitV(value, size_splits, axis): slices along
/// the axis, the sizes as the shape function found them.
template <bool isV> static LogicalResult split(NodeLowering &ctx) {
  unsigned valueInput = isV ? 0 : 1, axisInput = isV ? 2 : 0;
  std::vector<unsigned> constants = {axisInput};
  if (isV)
    constants.push_back(1);
  if (failed(ctx.requireConstants(constants)))
    return failure();
  const std::vector<int64_t> &in = ctx.shape(valueInput);
  int64_t axis = ctx.constantInts(axisInput)->front();
  if (axis < 0)
    axis += in.size();
  int32_t dtype = ctx.dtype(valueInput);
  int64_t offset = 0;
  for (unsigned i = 0; i < ctx.node.getOutputs().size(); ++i) {
    std::optional<std::vector<int64_t>> out = ctx.outputShape(i);
    if (!out)
      return ctx.error() << "the output shapes could not be inferred";
    std::vector<int64_t> offsets(in.size(), 0);
    offsets[axis] = offset;
    offset += (*out)[axis];
    ctx.setOutput(i, slice(ctx, ctx.tensor(valueInput), offsets, *out),
                  dtype);
  }
  return success();
}

/// Slice at a begin computed at run time (XLA's dynamic slice): the size
/// is a compile-time constant; a begin out of range is TensorFlow's error,
/// reported through the status, and the slice reads clamped offsets, so
/// that no access leaves the input.
static LogicalResult dynamicSlice(NodeLowering &ctx, ArrayRef<int64_t> sizes) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const std::vector<int64_t> &in = ctx.shape(0);
  Value begin = ctx.tensor(1);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value status = ctx.getStatus();
  Value statusZero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  SmallVector<OpFoldResult> offsets, strides;
  for (size_t d = 0; d < in.size(); ++d) {
    Value at = b.create<arith::ConstantIndexOp>(loc, d);
    Value element = b.create<tensor::ExtractOp>(loc, begin, ValueRange{at});
    Value offset = b.create<arith::IndexCastOp>(loc, b.getIndexType(), element);
    Value last = b.create<arith::ConstantIndexOp>(loc, in[d] - sizes[d]);
    Value outside = b.create<arith::OrIOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, offset, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, offset, last));
    int64_t code = ctx.addError(
        "Expected begin[" + std::to_string(d) + "] (computed at run time) and "
        "size[" + std::to_string(d) + "] = " + std::to_string(sizes[d]) +
        " in [0, " + std::to_string(in[d]) + "]");
    Value firstError = b.create<arith::AndIOp>(
        loc, outside,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, status,
                                statusZero));
    status = b.create<arith::SelectOp>(
        loc, firstError,
        b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(code)), status);
    offsets.push_back(b.create<arith::MaxSIOp>(
        loc, zero, b.create<arith::MinSIOp>(loc, offset, last)).getResult());
    strides.push_back(b.getIndexAttr(1));
  }
  ctx.setStatus(status);
  SmallVector<OpFoldResult> sizeAttrs;
  for (int64_t size : sizes)
    sizeAttrs.push_back(b.getIndexAttr(size));
  int32_t dtype = ctx.dtype(0);
  auto type = RankedTensorType::get(sizes, ctx.elementType(dtype));
  ctx.setOutput(0,
                b.create<tensor::ExtractSliceOp>(loc, type, ctx.tensor(0),
                                                 offsets, sizeAttrs, strides),
                dtype);
  return success();
}

static LogicalResult sliceOp(NodeLowering &ctx) {
  if (!ctx.input(1).constant) {
    // Only the size decides the output's shape; it must be known.
    if (failed(ctx.requireConstants({2})))
      return failure();
    std::vector<int64_t> sizes = *ctx.constantInts(2);
    if (llvm::any_of(sizes, [](int64_t size) { return size < 0; }))
      return ctx.requireConstants({1});
    if (sizes.size() != ctx.shape(0).size())
      return ctx.error() << "Expected size to have " << ctx.shape(0).size()
                         << " elements, got " << sizes.size();
    for (size_t d = 0; d < sizes.size(); ++d)
      if (sizes[d] > ctx.shape(0)[d])
        return ctx.error() << "Expected size[" << d << "] = " << sizes[d]
                           << " in [0, " << ctx.shape(0)[d] << "]";
    return dynamicSlice(ctx, sizes);
  }
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({1, 2});
  if (failed(shape))
    return failure();
  std::vector<int64_t> begin = *ctx.constantInts(1);
  const std::vector<int64_t> &in = ctx.shape(0);
  for (size_t d = 0; d < in.size(); ++d)
    if (begin[d] < 0 || begin[d] + (*shape)[d] > in[d])
      return ctx.error() << "Expected begin[" << d << "] = " << begin[d]
                         << " and size[" << d << "] = " << (*shape)[d]
                         << " in [0, " << in[d] << "]";
  ctx.setOutput(0, slice(ctx, ctx.tensor(0), begin, *shape), ctx.dtype(0));
  return success();
}

/// StridedSlice[Grad]'s slice over `shape`: begin, end and strides are
/// inputs `first`.. and must be compile-time constants, as in XLA.
static FailureOr<ops::StridedSlicePlan>
planStridedSlice(NodeLowering &ctx, ArrayRef<int64_t> shape, unsigned first) {
  if (failed(ctx.requireConstants({first, first + 1, first + 2})))
    return failure();
  ops::StridedSliceMasks masks;
  masks.begin = ctx.getInt("begin_mask").value_or(0);
  masks.end = ctx.getInt("end_mask").value_or(0);
  masks.ellipsis = ctx.getInt("ellipsis_mask").value_or(0);
  masks.newAxis = ctx.getInt("new_axis_mask").value_or(0);
  masks.shrinkAxis = ctx.getInt("shrink_axis_mask").value_or(0);
  ops::StridedSlicePlan plan;
  std::string error = ops::planStridedSlice(
      shape, *ctx.constantInts(first), *ctx.constantInts(first + 1),
      *ctx.constantInts(first + 2), masks, plan);
  if (!error.empty())
    return ctx.error() << error, failure();
  return plan;
}

namespace {
/// The planned elements of each dimension as a slice with positive
/// strides (tensor.extract_slice / insert_slice take no others): a
/// negative stride takes the same elements from the other end, reversed.
struct PositiveStrides {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<bool> reversed;
  bool anyReversed = false;
};
} // namespace

static PositiveStrides positiveStrides(OpBuilder &b,
                                       const ops::StridedSlicePlan &plan) {
  PositiveStrides slice;
  for (size_t d = 0; d < plan.sizes.size(); ++d) {
    int64_t size = plan.sizes[d], stride = plan.strides[d];
    int64_t offset = size == 0 ? 0
                     : stride > 0
                         ? plan.begin[d]
                         : plan.begin[d] + (size - 1) * stride;
    slice.offsets.push_back(b.getIndexAttr(offset));
    slice.sizes.push_back(b.getIndexAttr(size));
    slice.strides.push_back(b.getIndexAttr(std::abs(stride)));
    slice.reversed.push_back(stride < 0 && size > 1);
    slice.anyReversed |= slice.reversed.back();
  }
  return slice;
}

/// `input` (of `shape`) reversed along the dimensions `reversed` marks.
static Value reverse(NodeLowering &ctx, Value input, ArrayRef<int64_t> shape,
                     int32_t dtype, ArrayRef<bool> reversed) {
  OpBuilder &b = ctx.b;
  SmallVector<AffineExpr> read;
  for (auto [d, size] : llvm::enumerate(shape))
    read.push_back(reversed[d] ? b.getAffineConstantExpr(size - 1) -
                                     b.getAffineDimExpr(d)
                               : b.getAffineDimExpr(d));
  unsigned rank = shape.size();
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, read, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value init = ctx.empty(shape, dtype);
  return b
      .create<linalg::GenericOp>(
          ctx.loc, init.getType(), ValueRange{input}, ValueRange{init}, maps,
          iterators,
          [](OpBuilder &nb, Location loc, ValueRange args) {
            nb.create<linalg::YieldOp>(loc, args[0]);
          })
      .getResult(0);
}

/// StridedSlice: a view of the input (tensor.extract_slice), reversed
/// where a stride is negative, reshaped for shrunk and new axes.
static LogicalResult stridedSlice(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  FailureOr<ops::StridedSlicePlan> plan = planStridedSlice(ctx, in, 1);
  if (failed(plan))
    return failure();
  PositiveStrides slice = positiveStrides(ctx.b, *plan);
  std::vector<int64_t> sizes(plan->sizes.begin(), plan->sizes.end());
  Value view = ctx.b.create<tensor::ExtractSliceOp>(
      ctx.loc, ctx.tensorType(sizes, dtype), ctx.tensor(0), slice.offsets,
      slice.sizes, slice.strides);
  if (slice.anyReversed)
    view = reverse(ctx, view, sizes, dtype, slice.reversed);
  std::vector<int64_t> out(plan->outputShape.begin(), plan->outputShape.end());
  ctx.setOutput(0, ctx.reshape(view, sizes, out, dtype), dtype);
  return success();
}

/// StridedSliceGrad(shape, begin, end, strides, dy): dy inserted into
/// zeros of `shape` where StridedSlice took its elements.
static LogicalResult stridedSliceGrad(NodeLowering &ctx) {
  if (failed(ctx.requireConstants({0})))
    return failure();
  std::vector<int64_t> shape = *ctx.constantInts(0);
  int32_t dtype = ctx.dtype(4);
  FailureOr<ops::StridedSlicePlan> plan = planStridedSlice(ctx, shape, 1);
  if (failed(plan))
    return failure();
  std::vector<int64_t> expected(plan->outputShape.begin(),
                                plan->outputShape.end());
  if (ctx.shape(4) != expected)
    return ctx.error() << "shape of dy was "
                       << cleave::shapeString(ctx.shape(4)) << " instead of "
                       << cleave::shapeString(expected),
           failure();
  PositiveStrides slice = positiveStrides(ctx.b, *plan);
  std::vector<int64_t> sizes(plan->sizes.begin(), plan->sizes.end());
  Value dy = ctx.reshape(ctx.tensor(4), expected, sizes, dtype);
  if (slice.anyReversed)
    dy = reverse(ctx, dy, sizes, dtype, slice.reversed);
  Value zeros = ctx.filled(shape, dtype, ctx.scalar(dtype, 0));
  ctx.setOutput(0,
                ctx.b.create<tensor::InsertSliceOp>(ctx.loc, dy, zeros,
                                                    slice.offsets, slice.sizes,
                                                    slice.strides),
                dtype);
  return success();
}

/// Tile and BroadcastTo: a generic whose input map indexes the source.
template <bool isTile>
static LogicalResult replicateElements(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({1});
  if (failed(out))
    return failure();
  const std::vector<int64_t> &in = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  if (!isTile) {
    std::vector<int64_t> joined;
    if (!cleave::broadcastShape(in, *out, joined) || joined != *out)
      return ctx.error() << "Unable to broadcast tensor of shape "
                         << cleave::shapeString(in) << " to tensor of shape "
                         << cleave::shapeString(*out);
    ctx.setOutput(0,
                  ctx.map({ctx.tensor(0)}, *out, dtype,
                          [](OpBuilder &, Location, ValueRange args) {
                            return args[0];
                          }),
                  dtype);
    return success();
  }
  OpBuilder &b = ctx.b;
  int64_t rank = out->size();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(in[d] == 0 ? b.getAffineConstantExpr(0)
                               : b.getAffineDimExpr(d) % in[d]);
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, b.getContext()),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(*out, dtype)}, ValueRange{ctx.tensor(0)},
      ValueRange{ctx.empty(*out, dtype)}, maps, iterators,
      [](OpBuilder &nested, Location loc, ValueRange args) {
        nested.create<linalg::YieldOp>(loc, args[0]);
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// Pad and PadV2: tensor.pad with the constant value.
static LogicalResult pad(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({1});
  if (failed(out))
    return failure();
  std::vector<int64_t> paddings = *ctx.constantInts(1);
  for (int64_t p : paddings)
    if (p < 0)
      return ctx.error() << "Paddings must be non-negative";
  int32_t dtype = ctx.dtype(0);
  OpBuilder &b = ctx.b;
  Value padValue = ctx.getNumInputs() > 2
                       ? b.create<tensor::ExtractOp>(ctx.loc, ctx.tensor(2),
                                                     ValueRange{})
                             .getResult()
                       : ctx.scalar(dtype, 0);
  SmallVector<OpFoldResult> low, high;
  for (size_t d = 0; d < ctx.shape(0).size(); ++d) {
    low.push_back(b.getIndexAttr(paddings[2 * d]));
    high.push_back(b.getIndexAttr(paddings[2 * d + 1]));
  }
  Value padded = b.create<tensor::PadOp>(ctx.loc, ctx.tensorType(*out, dtype),
                                         ctx.tensor(0), low, high, padValue);
  ctx.setOutput(0, padded, dtype);
  return success();
}

/// GatherV2 with batch_dims 0: out[outer, i..., inner] =
/// params[outer, indices[i...], inner]. Indices out of range read the
/// nearest element (as XLA clamps) instead of failing.
static LogicalResult gather(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({2});
  if (failed(out))
    return failure();
  if (ctx.getInt("batch_dims").value_or(0) != 0)
    return ctx.error() << "batch_dims other than 0 are not supported yet";
  const std::vector<int64_t> &params = ctx.shape(0), &indices = ctx.shape(1);
  int64_t axis = ctx.constantInts(2)->front();
  if (axis < 0)
    axis += params.size();
  if (params[axis] == 0 && !indices.empty())
    return ctx.error() << "Gather from an empty axis";
  int32_t dtype = ctx.dtype(0), indexType = ctx.dtype(1);
  OpBuilder &b = ctx.b;
  int64_t rank = out->size(), indexRank = indices.size();
  SmallVector<AffineExpr> indexExprs;
  for (int64_t d = 0; d < indexRank; ++d)
    indexExprs.push_back(b.getAffineDimExpr(axis + d));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, indexExprs, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value paramsTensor = ctx.tensor(0);
  int64_t limit = params[axis] - 1;
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(*out, dtype)},
      ValueRange{ctx.tensor(1)}, ValueRange{ctx.empty(*out, dtype)}, maps,
      iterators, [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value index =
            isUnsignedDType(indexType)
                ? nb.create<arith::IndexCastUIOp>(loc, nb.getIndexType(),
                                                  args[0])
                      .getResult()
                : nb.create<arith::IndexCastOp>(loc, nb.getIndexType(),
                                                args[0])
                      .getResult();
        Value zero = nb.create<arith::ConstantIndexOp>(loc, 0);
        Value top = nb.create<arith::ConstantIndexOp>(loc, limit);
        index = nb.create<arith::MaxSIOp>(loc, index, zero);
        index = nb.create<arith::MinSIOp>(loc, index, top);
        SmallVector<Value> at;
        for (int64_t d = 0; d < axis; ++d)
          at.push_back(nb.create<linalg::IndexOp>(loc, d));
        at.push_back(index);
        for (int64_t d = axis + 1; d < int64_t(params.size()); ++d)
          at.push_back(nb.create<linalg::IndexOp>(loc, d - 1 + indexRank));
        nb.create<linalg::YieldOp>(
            loc, nb.create<tensor::ExtractOp>(loc, paramsTensor, at)
                     .getResult());
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// Index `value` (an element of an index tensor of dtype `indexType`) as an
/// index.
static Value asIndex(OpBuilder &b, Location loc, Value value,
                     int32_t indexType) {
  if (isUnsignedDType(indexType))
    return b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), value);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), value);
}

/// GatherNd: out[i..., inner...] = params[indices[i..., :], inner...].
/// Index tuples out of range read the nearest element (as XLA clamps)
/// instead of failing.
static LogicalResult gatherNd(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({});
  if (failed(out))
    return failure();
  const std::vector<int64_t> &params = ctx.shape(0), &indices = ctx.shape(1);
  int64_t depth = indices.back(), outer = indices.size() - 1;
  for (int64_t d = 0; d < depth; ++d)
    if (params[d] == 0 && hasMoreElements(*out, 0))
      return ctx.error() << "Requested more than 0 entries, but params is "
                            "empty.";
  int32_t dtype = ctx.dtype(0), indexType = ctx.dtype(1);
  OpBuilder &b = ctx.b;
  int64_t rank = out->size();
  Value paramsTensor = ctx.tensor(0), indicesTensor = ctx.tensor(1);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(*out, dtype)}, ValueRange{},
      ValueRange{ctx.empty(*out, dtype)},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange) {
        SmallVector<Value> row;
        for (int64_t d = 0; d < outer; ++d)
          row.push_back(nb.create<linalg::IndexOp>(loc, d));
        SmallVector<Value> at;
        for (int64_t k = 0; k < depth; ++k) {
          SmallVector<Value> where(row);
          where.push_back(nb.create<arith::ConstantIndexOp>(loc, k));
          Value index = asIndex(
              nb, loc, nb.create<tensor::ExtractOp>(loc, indicesTensor, where),
              indexType);
          index = nb.create<arith::MaxSIOp>(
              loc, index, nb.create<arith::ConstantIndexOp>(loc, 0));
          index = nb.create<arith::MinSIOp>(
              loc, index,
              nb.create<arith::ConstantIndexOp>(
                  loc, std::max<int64_t>(params[k] - 1, 0)));
          at.push_back(index);
        }
        for (int64_t d = depth; d < int64_t(params.size()); ++d)
          at.push_back(nb.create<linalg::IndexOp>(loc, outer + d - depth));
        nb.create<linalg::YieldOp>(
            loc,
            nb.create<tensor::ExtractOp>(loc, paramsTensor, at).getResult());
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// The scatter of updates (input `updatesIndex`) at the index tuples of
/// input `indicesIndex` into `initial` (zeros when null) of shape `out`,
/// each update row combined with the row it lands on, in order. A tuple out
/// of range is TensorFlow's error, through the status.
static LogicalResult lowerScatter(NodeLowering &ctx, Value initial,
                                  const std::vector<int64_t> &out,
                                  unsigned indicesIndex, unsigned updatesIndex,
                                  ScatterCombine combine) {
  const std::vector<int64_t> &indices = ctx.shape(indicesIndex),
                             &updates = ctx.shape(updatesIndex);
  int32_t dtype = ctx.dtype(updatesIndex), indexType = ctx.dtype(indicesIndex);
  if (indices.empty())
    return ctx.error() << "Indices shape must have rank at least one. Found:"
                       << cleave::shapeString(indices),
           failure();
  int64_t depth = indices.back();
  if (depth > int64_t(out.size()))
    return ctx.error() << "Output must have at least " << depth
                       << " dimensions, the indices' innermost length; got "
                       << cleave::shapeString(out),
           failure();
  std::vector<int64_t> expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), out.begin() + depth, out.end());
  if (updates != expected)
    return ctx.error() << "updates must have shape "
                       << cleave::shapeString(expected)
                       << " (indices' outer dims, then shape's after " << depth
                       << "), got " << cleave::shapeString(updates),
           failure();
  bool arithmetic = combine != ScatterCombine::Update;
  if (!ctx.elementType(dtype) || !ctx.elementType(dtype).isIntOrFloat() ||
      (arithmetic && dtype == cleave::kBool))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported",
           failure();
  int64_t rows = 1, inner = 1, segments = 1;
  for (size_t d = 0; d + 1 < indices.size(); ++d)
    rows *= indices[d];
  for (int64_t d = 0; d < depth; ++d)
    segments *= out[d];
  for (size_t d = depth; d < out.size(); ++d)
    inner *= out[d];
  Location loc = ctx.loc;
  Value flatUpdates =
      ctx.reshape(ctx.tensor(updatesIndex), updates, {rows, inner}, dtype);
  Value tuples =
      ctx.reshape(ctx.tensor(indicesIndex), indices, {rows, depth}, indexType);
  if (initial)
    initial = ctx.reshape(initial, out, {segments, inner}, dtype);
  std::vector<int64_t> leading(out.begin(), out.begin() + depth);
  int64_t code = ctx.addError("an index (computed at run time) does not "
                              "index into shape " +
                              cleave::shapeString(out));
  Value result = scatterRows(
      ctx, initial, flatUpdates, rows, inner, segments, dtype, combine,
      [&](OpBuilder &b, Value row) -> std::array<Value, 3> {
        Value id = b.create<arith::ConstantIndexOp>(loc, 0);
        Value invalid = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
        for (int64_t k = 0; k < depth; ++k) {
          Value index = asIndex(
              b, loc,
              b.create<tensor::ExtractOp>(
                  loc, tuples,
                  ValueRange{row, b.create<arith::ConstantIndexOp>(loc, k)}),
              indexType);
          Value outside = b.create<arith::OrIOp>(
              loc,
              b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index,
                                      b.create<arith::ConstantIndexOp>(loc, 0)),
              b.create<arith::CmpIOp>(
                  loc, arith::CmpIPredicate::sge, index,
                  b.create<arith::ConstantIndexOp>(loc, leading[k])));
          invalid = b.create<arith::OrIOp>(loc, invalid, outside);
          id = b.create<arith::AddIOp>(
              loc,
              b.create<arith::MulIOp>(
                  loc, id, b.create<arith::ConstantIndexOp>(loc, leading[k])),
              index);
        }
        // A dropped row's id is never used, but keep it in range.
        id = b.create<arith::SelectOp>(
            loc, invalid, b.create<arith::ConstantIndexOp>(loc, 0), id);
        return {id, b.create<arith::ConstantOp>(loc, b.getBoolAttr(false)),
                invalid};
      },
      code);
  ctx.setOutput(0, ctx.reshape(result, {segments, inner}, out, dtype), dtype);
  return success();
}

/// ScatterNd: zeros of the constant `shape`, each update row added at the
/// row its index tuple names (duplicates sum).
static LogicalResult scatterNd(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({2});
  if (failed(out))
    return failure();
  return lowerScatter(ctx, /*initial=*/nullptr, *out, 0, 1,
                      ScatterCombine::Add);
}

/// TensorScatterUpdate/Add/Sub/Min/Max: the tensor with each update row
/// combined into the row its index tuple names.
template <ScatterCombine combine>
static LogicalResult tensorScatter(NodeLowering &ctx) {
  const std::vector<int64_t> &shape = ctx.shape(0);
  if (shape.empty())
    return ctx.error() << "Shape must be at least rank 1 but is rank 0",
           failure();
  if (!hasMoreElements(shape, 0) &&
      (hasMoreElements(ctx.shape(1), 0) || hasMoreElements(ctx.shape(2), 0)))
    return ctx.error() << "Indices and updates specified for empty input",
           failure();
  return lowerScatter(ctx, ctx.tensor(0), shape, 1, 2, combine);
}

/// Bitcast: the same bytes as another type (little-endian, as the host
/// stores them): element by element between types of one size; to a
/// smaller type each element's pieces along a new last dimension; to a
/// larger one the pieces of the last dimension (its size the ratio) put
/// together.
static LogicalResult bitcast(NodeLowering &ctx) {
  int32_t from = ctx.dtype(0);
  int32_t to = ctx.getType("type").value_or(0);
  Type fromType = ctx.elementType(from), toType = ctx.elementType(to);
  if (!fromType || !toType || !fromType.isIntOrFloat() ||
      !toType.isIntOrFloat() || from == cleave::kBool || to == cleave::kBool)
    return ctx.error() << "Bitcast from " << cleave::dtypeName(from) << " to "
                       << cleave::dtypeName(to) << " is not supported",
           failure();
  unsigned fromBits = fromType.getIntOrFloatBitWidth(),
           toBits = toType.getIntOrFloatBitWidth();
  const std::vector<int64_t> &input = ctx.shape(0);
  std::vector<int64_t> out = input;
  if (fromBits > toBits) {
    out.push_back(fromBits / toBits);
  } else if (fromBits < toBits) {
    if (input.empty() || input.back() != int64_t(toBits / fromBits))
      return ctx.error() << "Cannot bitcast from " << cleave::dtypeName(from)
                         << " to " << cleave::dtypeName(to) << ": shape "
                         << cleave::shapeString(input),
             failure();
    out.pop_back();
  }
  OpBuilder &b = ctx.b;
  Value source = ctx.tensor(0);
  // To and from integers of the same width.
  auto asInteger = [](OpBuilder &nb, Location l, Value v) -> Value {
    unsigned bits = v.getType().getIntOrFloatBitWidth();
    if (v.getType().isInteger(bits))
      return v;
    return nb.create<arith::BitcastOp>(l, nb.getIntegerType(bits), v);
  };
  auto fromInteger = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return v.getType() == toType ? v
                                 : nb.create<arith::BitcastOp>(l, toType, v);
  };
  int64_t rank = out.size();
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(out, to)}, ValueRange{},
      ValueRange{ctx.empty(out, to)},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < int64_t(input.size()); ++d)
          at.push_back(nb.create<linalg::IndexOp>(l, std::min(d, rank - 1)));
        Value result;
        if (fromBits == toBits) {
          result = fromInteger(
              nb, l,
              asInteger(nb, l, nb.create<tensor::ExtractOp>(l, source, at)));
        } else if (fromBits > toBits) {
          // Piece j of the element: its bits from toBits * j up.
          Value whole =
              asInteger(nb, l, nb.create<tensor::ExtractOp>(l, source, at));
          Value piece = nb.create<arith::IndexCastOp>(
              l, whole.getType(), nb.create<linalg::IndexOp>(l, rank - 1));
          Value shift = nb.create<arith::MulIOp>(
              l, piece,
              nb.create<arith::ConstantOp>(
                  l, nb.getIntegerAttr(whole.getType(), toBits)));
          Value shifted = nb.create<arith::ShRUIOp>(l, whole, shift);
          result = fromInteger(nb, l,
                               nb.create<arith::TruncIOp>(
                                   l, nb.getIntegerType(toBits), shifted));
        } else {
          Type wide = nb.getIntegerType(toBits);
          Value sum =
              nb.create<arith::ConstantOp>(l, nb.getIntegerAttr(wide, 0));
          for (unsigned j = 0; j < toBits / fromBits; ++j) {
            SmallVector<Value> pieceAt(at.begin(), at.end() - 1);
            pieceAt.push_back(nb.create<arith::ConstantIndexOp>(l, j));
            Value piece = nb.create<arith::ExtUIOp>(
                l, wide,
                asInteger(nb, l,
                          nb.create<tensor::ExtractOp>(l, source, pieceAt)));
            Value shifted = nb.create<arith::ShLIOp>(
                l, piece,
                nb.create<arith::ConstantOp>(
                    l, nb.getIntegerAttr(wide, fromBits * j)));
            sum = nb.create<arith::OrIOp>(l, sum, shifted);
          }
          result = fromInteger(nb, l, sum);
        }
        nb.create<linalg::YieldOp>(l, result);
      });
  ctx.setOutput(0, generic.getResult(0), to);
  return success();
}

/// OneHot: on where the index equals the position along `axis`.
static LogicalResult oneHot(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({1});
  if (failed(out))
    return failure();
  if (!ctx.shape(2).empty() || !ctx.shape(3).empty())
    return ctx.error() << "on_value and off_value must be scalars";
  int64_t axis = ctx.getInt("axis").value_or(-1);
  int64_t rank = out->size();
  if (axis < 0)
    axis = rank - 1;
  int32_t dtype = ctx.dtype(2), indexType = ctx.dtype(0);
  OpBuilder &b = ctx.b;
  SmallVector<AffineExpr> indexExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      indexExprs.push_back(b.getAffineDimExpr(d));
  AffineMap scalarMap = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, indexExprs, b.getContext()), scalarMap,
      scalarMap, b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Type indexElement = ctx.elementType(indexType);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(*out, dtype)},
      ValueRange{ctx.tensor(0), ctx.tensor(2), ctx.tensor(3)},
      ValueRange{ctx.empty(*out, dtype)}, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value position = nb.create<arith::IndexCastOp>(
            loc, indexElement, nb.create<linalg::IndexOp>(loc, axis));
        Value hit = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                             args[0], position);
        nb.create<linalg::YieldOp>(
            loc, nb.create<arith::SelectOp>(loc, hit, args[1], args[2])
                     .getResult());
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

LoweringTable cleave::conversion::getArrayLowerings() {
  return {
      {"Const", constant},
      {"Identity", forward},
      {"IdentityN", forward},
      {"Snapshot", forward},
      {"StopGradient", forward},
      {"CheckNumerics", checkNumerics<false>},
      {"CheckNumericsV2", checkNumerics<true>},
      {"Bitcast", bitcast},
      {"MatrixBandPart", matrixBandPart},
      {"ReverseV2", reverseV2},
      {"PreventGradient", forward},
      {"PlaceholderWithDefault", forward},
      {"Shape", shape},
      {"ShapeN", shape},
      {"Size", size},
      {"Rank", rank},
      {"BroadcastGradientArgs", lowerCompileTimeOnly},
      {"Reshape", reshapeLike<1>},
      {"ExpandDims", reshapeLike<1>},
      {"Squeeze", reshapeLike<~0u>},
      {"Fill", fill},
      {"ZerosLike", filledLike<0>},
      {"OnesLike", filledLike<1>},
      {"Transpose", transpose},
      {"ConcatV2", concat},
      {"Pack", pack},
      {"Unpack", unpack},
      {"Split", split<false>},
      {"SplitV", split<true>},
      {"Slice", sliceOp},
      {"StridedSlice", stridedSlice},
      {"StridedSliceGrad", stridedSliceGrad},
      {"Tile", replicateElements<true>},
      {"BroadcastTo", replicateElements<false>},
      {"Pad", pad},
      {"GatherV2", gather},
      {"GatherNd", gatherNd},
      {"ScatterNd", scatterNd},
      {"TensorScatterUpdate", tensorScatter<ScatterCombine::Update>},
      {"TensorScatterAdd", tensorScatter<ScatterCombine::Add>},
      {"TensorScatterSub", tensorScatter<ScatterCombine::Sub>},
      {"TensorScatterMin", tensorScatter<ScatterCombine::Min>},
      {"TensorScatterMax", tensorScatter<ScatterCombine::Max>},
      {"OneHot", oneHot},
  };
}
