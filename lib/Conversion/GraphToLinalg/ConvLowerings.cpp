//===- ConvLowerings.cpp - convolution and pooling to linalg --------------===//
//
// NHWC convolution and pooling with TensorFlow's SAME/VALID geometry (as
// GetWindowedOutputSize). The forward ops pad explicitly and use linalg's
// named convolution and pooling ops. The gradients:
//   - Conv2DBackpropInput is the transposed convolution: the output
//     gradient spread by the stride, padded, convolved with the flipped
//     filter;
//   - Conv2DBackpropFilter is a convolution too: of the padded input,
//     channels first, with the output gradient as the filter (the
//     forward op's stride and dilation swapped);
//   - MaxPoolGrad and AvgPoolGrad gather, for each input element, the
//     gradients of the windows that contain it (the first maximum of a
//     window takes its whole gradient, as in the reference kernel).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

namespace {

/// One spatial dimension of a window: output size and the padding before
/// and after the input, as TensorFlow's GetWindowedOutputSize.
struct Window {
  int64_t in = 0, size = 0, stride = 1, dilation = 1;
  int64_t out = 0, padBefore = 0, padAfter = 0;
  int64_t effective() const { return (size - 1) * dilation + 1; }
};

Window makeWindow(int64_t in, int64_t size, int64_t stride, int64_t dilation,
                  bool same) {
  Window w{in, size, stride, dilation};
  int64_t effective = w.effective();
  if (!same) {
    w.out = in < effective ? 0 : (in - effective + stride) / stride;
    return w;
  }
  w.out = (in + stride - 1) / stride;
  int64_t pad = std::max<int64_t>((w.out - 1) * stride + effective - in, 0);
  w.padBefore = pad / 2;
  w.padAfter = pad - w.padBefore;
  return w;
}

/// The NHWC geometry of a convolution or pooling node.
struct Geometry {
  int64_t n = 0, c = 0, oc = 0;
  Window h, w;
  std::vector<int64_t> outputShape() const { return {n, h.out, w.out, oc}; }
  std::vector<int64_t> inputShape() const { return {n, h.in, w.in, c}; }
};

FailureOr<bool> readPadding(NodeLowering &ctx, std::vector<int64_t> &strides) {
  if (ctx.getString("data_format").value_or("NHWC") != "NHWC")
    return ctx.error() << "only NHWC is supported by the CPU lowering",
           failure();
  strides = ctx.getIntList("strides").value_or(std::vector<int64_t>());
  if (strides.size() != 4 || strides[0] != 1 || strides[3] != 1 ||
      strides[1] < 1 || strides[2] < 1)
    return ctx.error() << "strides must have 4 entries with batch and depth "
                          "strides of 1",
           failure();
  std::string padding = ctx.getString("padding").value_or("");
  if (padding != "SAME" && padding != "VALID")
    return ctx.error() << "padding '" << padding
                       << "' is not supported (SAME or VALID)",
           failure();
  return padding == "SAME";
}

FailureOr<Geometry> convGeometry(NodeLowering &ctx,
                                 const std::vector<int64_t> &in,
                                 const std::vector<int64_t> &filter) {
  std::vector<int64_t> strides;
  FailureOr<bool> same = readPadding(ctx, strides);
  if (failed(same))
    return failure();
  std::vector<int64_t> dilations =
      ctx.getIntList("dilations").value_or(std::vector<int64_t>{1, 1, 1, 1});
  if (in.size() != 4 || filter.size() != 4 || dilations.size() != 4)
    return ctx.error() << "input and filter must be 4-D, and dilations have 4 "
                          "entries",
           failure();
  if (filter[2] != in[3])
    return ctx.error() << "input depth " << in[3]
                       << " does not match the filter's input depth "
                       << filter[2]
                       << " (grouped convolutions are not supported yet)",
           failure();
  Geometry g;
  g.n = in[0], g.c = in[3], g.oc = filter[3];
  g.h = makeWindow(in[1], filter[0], strides[1], dilations[1], *same);
  g.w = makeWindow(in[2], filter[1], strides[2], dilations[2], *same);
  return g;
}

FailureOr<Geometry> poolGeometry(NodeLowering &ctx,
                                 const std::vector<int64_t> &in) {
  std::vector<int64_t> strides;
  FailureOr<bool> same = readPadding(ctx, strides);
  if (failed(same))
    return failure();
  auto ksize = ctx.getIntList("ksize").value_or(std::vector<int64_t>());
  if (ksize.size() != 4 || ksize[0] != 1 || ksize[3] != 1 || ksize[1] < 1 ||
      ksize[2] < 1)
    return ctx.error() << "ksize must have 4 entries with batch and depth "
                          "sizes of 1",
           failure();
  if (in.size() != 4)
    return ctx.error() << "input must be 4-D", failure();
  Geometry g;
  g.n = in[0], g.c = in[3], g.oc = in[3];
  g.h = makeWindow(in[1], ksize[1], strides[1], 1, *same);
  g.w = makeWindow(in[2], ksize[2], strides[2], 1, *same);
  return g;
}

LogicalResult checkShape(NodeLowering &ctx, const char *what,
                         const std::vector<int64_t> &actual,
                         const std::vector<int64_t> &expected) {
  if (actual != expected)
    return ctx.error() << what << " has shape " << cleave::shapeString(actual)
                       << ", but the forward output has shape "
                       << cleave::shapeString(expected);
  return success();
}

/// Pads the spatial dimensions of an NHWC tensor with `value`.
Value padSpatial(NodeLowering &ctx, Value input, const Geometry &g,
                 int64_t hLow, int64_t hHigh, int64_t wLow, int64_t wHigh,
                 Value value, int32_t dtype) {
  if (!hLow && !hHigh && !wLow && !wHigh)
    return input;
  OpBuilder &b = ctx.b;
  auto type = cast<RankedTensorType>(input.getType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  shape[1] += hLow + hHigh;
  shape[2] += wLow + wHigh;
  SmallVector<OpFoldResult> low = {b.getIndexAttr(0), b.getIndexAttr(hLow),
                                   b.getIndexAttr(wLow), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> high = {b.getIndexAttr(0), b.getIndexAttr(hHigh),
                                    b.getIndexAttr(wHigh), b.getIndexAttr(0)};
  return b.create<tensor::PadOp>(ctx.loc, ctx.tensorType(shape, dtype), input,
                                 low, high, value);
}

LogicalResult floatOnly(NodeLowering &ctx, int32_t dtype) {
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported";
  return success();
}

LogicalResult conv2D(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<Geometry> g = convGeometry(ctx, ctx.shape(0), ctx.shape(1));
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  Value input = padSpatial(ctx, ctx.tensor(0), *g, g->h.padBefore,
                           g->h.padAfter, g->w.padBefore, g->w.padAfter,
                           ctx.scalar(dtype, 0), dtype);
  Value init = ctx.filled(g->outputShape(), dtype, ctx.scalar(dtype, 0));
  auto conv = b.create<linalg::Conv2DNhwcHwcfOp>(
      ctx.loc, TypeRange{init.getType()}, ValueRange{input, ctx.tensor(1)},
      ValueRange{init}, b.getI64TensorAttr({g->h.stride, g->w.stride}),
      b.getI64TensorAttr({g->h.dilation, g->w.dilation}));
  ctx.setOutput(0, conv.getResult(0), dtype);
  return success();
}

/// Conv2DBackpropInput(input_sizes, filter, out_backprop).
LogicalResult conv2DBackpropInput(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> inShape = ctx.constantInts(0);
  if (failed(inShape))
    return failure();
  int32_t dtype = ctx.dtype(2);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  const std::vector<int64_t> &filter = ctx.shape(1);
  FailureOr<Geometry> g = convGeometry(ctx, *inShape, filter);
  if (failed(g) ||
      failed(checkShape(ctx, "out_backprop", ctx.shape(2), g->outputShape())))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // The output gradient spread by the stride: zeros between the rows and
  // columns of a strided convolution.
  Value dy = ctx.tensor(2);
  int64_t spreadH = g->h.out ? (g->h.out - 1) * g->h.stride + 1 : 0;
  int64_t spreadW = g->w.out ? (g->w.out - 1) * g->w.stride + 1 : 0;
  if (g->h.stride > 1 || g->w.stride > 1) {
    Value zeros = ctx.filled({g->n, spreadH, spreadW, g->oc}, dtype,
                             ctx.scalar(dtype, 0));
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(g->n), b.getIndexAttr(g->h.out),
        b.getIndexAttr(g->w.out), b.getIndexAttr(g->oc)};
    SmallVector<OpFoldResult> strides = {
        b.getIndexAttr(1), b.getIndexAttr(g->h.stride),
        b.getIndexAttr(g->w.stride), b.getIndexAttr(1)};
    dy = b.create<tensor::InsertSliceOp>(loc, dy, zeros, offsets, sizes,
                                         strides);
  }
  // Full padding so that a VALID convolution gives the input's size.
  int64_t hLow = g->h.effective() - 1 - g->h.padBefore;
  int64_t wLow = g->w.effective() - 1 - g->w.padBefore;
  int64_t hHigh = g->h.in + g->h.effective() - 1 - spreadH - hLow;
  int64_t wHigh = g->w.in + g->w.effective() - 1 - spreadW - wLow;
  if (hLow < 0 || wLow < 0 || hHigh < 0 || wHigh < 0)
    return ctx.error() << "unexpected convolution geometry";
  dy = padSpatial(ctx, dy, *g, hLow, hHigh, wLow, wHigh, ctx.scalar(dtype, 0),
                  dtype);
  // The filter flipped in space, its channels swapped: [kh, kw, oc, c].
  int64_t kh = filter[0], kw = filter[1];
  SmallVector<AffineExpr> flip = {
      b.getAffineConstantExpr(kh - 1) - b.getAffineDimExpr(0),
      b.getAffineConstantExpr(kw - 1) - b.getAffineDimExpr(1),
      b.getAffineDimExpr(3), b.getAffineDimExpr(2)};
  std::vector<int64_t> flippedShape = {kh, kw, g->oc, g->c};
  auto flipped = b.create<linalg::GenericOp>(
      loc, TypeRange{ctx.tensorType(flippedShape, dtype)},
      ValueRange{ctx.tensor(1)}, ValueRange{ctx.empty(flippedShape, dtype)},
      SmallVector<AffineMap>{AffineMap::get(4, 0, flip, b.getContext()),
                             b.getMultiDimIdentityMap(4)},
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, args[0]);
      });
  Value init = ctx.filled(*inShape, dtype, ctx.scalar(dtype, 0));
  auto conv = b.create<linalg::Conv2DNhwcHwcfOp>(
      loc, TypeRange{init.getType()}, ValueRange{dy, flipped.getResult(0)},
      ValueRange{init}, b.getI64TensorAttr({1, 1}),
      b.getI64TensorAttr({g->h.dilation, g->w.dilation}));
  ctx.setOutput(0, conv.getResult(0), dtype);
  return success();
}

/// Conv2DBackpropFilter(input, filter_sizes, out_backprop).
LogicalResult conv2DBackpropFilter(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> filter = ctx.constantInts(1);
  if (failed(filter))
    return failure();
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<Geometry> g = convGeometry(ctx, ctx.shape(0), *filter);
  if (failed(g) ||
      failed(checkShape(ctx, "out_backprop", ctx.shape(2), g->outputShape())))
    return failure();
  // No output positions or no images: nothing to sum.
  if (g->n == 0 || g->h.out == 0 || g->w.out == 0) {
    ctx.setOutput(0, ctx.filled(*filter, dtype, ctx.scalar(dtype, 0)), dtype);
    return success();
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value input = padSpatial(ctx, ctx.tensor(0), *g, g->h.padBefore,
                           g->h.padAfter, g->w.padBefore, g->w.padAfter,
                           ctx.scalar(dtype, 0), dtype);
  // The rows and columns the windows reach (VALID leaves the rest unread).
  int64_t kh = (*filter)[0], kw = (*filter)[1];
  int64_t reachH = (g->h.out - 1) * g->h.stride + g->h.effective();
  int64_t reachW = (g->w.out - 1) * g->w.stride + g->w.effective();
  auto paddedType = cast<RankedTensorType>(input.getType());
  if (paddedType.getDimSize(1) != reachH || paddedType.getDimSize(2) != reachW) {
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(g->n), b.getIndexAttr(reachH), b.getIndexAttr(reachW),
        b.getIndexAttr(g->c)};
    SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
    input = b.create<tensor::ExtractSliceOp>(
        loc, ctx.tensorType({g->n, reachH, reachW, g->c}, dtype), input,
        offsets, sizes, ones);
  }
  auto transpose = [&](Value value, ArrayRef<int64_t> perm) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    std::vector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    return b.create<linalg::TransposeOp>(loc, value, ctx.empty(shape, dtype),
                                         perm)
        .getResult()[0];
  };
  // dW[i, j, k, o] = sum over b, y, x of in[b, y*s + i*d, x*s + j*d, k] *
  // dy[b, y, x, o]: a convolution of the input seen as k images of b
  // channels with dy seen as a [y, x, b, o] filter, the forward op's
  // dilation as stride and its stride as dilation. One named convolution
  // for the targets' convolution kernels (and library calls) to take.
  Value images = transpose(input, {3, 1, 2, 0});
  Value window = transpose(ctx.tensor(2), {1, 2, 0, 3});
  Value init = ctx.filled({g->c, kh, kw, g->oc}, dtype, ctx.scalar(dtype, 0));
  auto conv = b.create<linalg::Conv2DNhwcHwcfOp>(
      loc, TypeRange{init.getType()}, ValueRange{images, window},
      ValueRange{init}, b.getI64TensorAttr({g->h.dilation, g->w.dilation}),
      b.getI64TensorAttr({g->h.stride, g->w.stride}));
  ctx.setOutput(0, transpose(conv.getResult(0), {1, 2, 0, 3}), dtype);
  return success();
}

/// The number of real (not padding) input elements in each window, [oh, ow].
std::vector<double> windowCounts(const Geometry &g) {
  std::vector<double> counts;
  auto real = [](const Window &w, int64_t o) {
    int64_t start = o * w.stride - w.padBefore;
    int64_t end = std::min(start + w.size, w.in);
    return std::max<int64_t>(end - std::max<int64_t>(start, 0), 0);
  };
  for (int64_t y = 0; y < g.h.out; ++y)
    for (int64_t x = 0; x < g.w.out; ++x)
      counts.push_back(double(real(g.h, y) * real(g.w, x)));
  return counts;
}

Value countsTensor(NodeLowering &ctx, const Geometry &g, int32_t dtype) {
  cleave::Tensor counts(dtype, {g.h.out, g.w.out, 1});
  for (auto [i, v] : llvm::enumerate(windowCounts(g)))
    counts.setFromDouble(i, v);
  return ctx.constantTensor(counts);
}

template <bool isMax> LogicalResult pool(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<Geometry> g = poolGeometry(ctx, ctx.shape(0));
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  Type type = ctx.elementType(dtype);
  // Padding never wins a max and adds nothing to a sum.
  Value padValue =
      isMax ? b.create<arith::ConstantOp>(
                   ctx.loc, b.getFloatAttr(
                                type, -std::numeric_limits<double>::infinity()))
                  .getResult()
            : ctx.scalar(dtype, 0);
  Value input = padSpatial(ctx, ctx.tensor(0), *g, g->h.padBefore,
                           g->h.padAfter, g->w.padBefore, g->w.padAfter,
                           padValue, dtype);
  Value init = ctx.filled(g->outputShape(), dtype, padValue);
  Value window = b.create<tensor::EmptyOp>(
      ctx.loc, ArrayRef<int64_t>{g->h.size, g->w.size}, type);
  auto strides = b.getI64TensorAttr({g->h.stride, g->w.stride});
  auto dilations = b.getI64TensorAttr({1, 1});
  Value result;
  if (isMax)
    result = b.create<linalg::PoolingNhwcMaxOp>(
                  ctx.loc, TypeRange{init.getType()}, ValueRange{input, window},
                  ValueRange{init}, strides, dilations)
                 .getResult(0);
  else
    result = b.create<linalg::PoolingNhwcSumOp>(
                  ctx.loc, TypeRange{init.getType()}, ValueRange{input, window},
                  ValueRange{init}, strides, dilations)
                 .getResult(0);
  if (!isMax)
    result = ctx.map({result, countsTensor(ctx, *g, dtype)}, g->outputShape(),
                     dtype, [](OpBuilder &nb, Location l, ValueRange args) {
                       return nb.create<arith::DivFOp>(l, args[0], args[1])
                           .getResult();
                     });
  ctx.setOutput(0, result, dtype);
  return success();
}

/// For each input element (b, iy, ix, k): the sum over the windows (y, x)
/// that contain it of `contribution` at (b, y, x, k), which may narrow
/// `valid` to reject a window.
using WindowValueFn = llvm::function_ref<Value(
    OpBuilder &, Location, ValueRange index /* b, y, x, k */, Value &valid)>;

Value gatherWindows(NodeLowering &ctx, const Geometry &g, int32_t dtype,
                    WindowValueFn contribution) {
  OpBuilder &b = ctx.b;
  std::vector<int64_t> inShape = g.inputShape();
  // Loop dims: b, iy, ix, k (the input element), i, j (the tap of the
  // window that would cover it).
  SmallVector<AffineExpr> outExprs = {b.getAffineDimExpr(0),
                                      b.getAffineDimExpr(1),
                                      b.getAffineDimExpr(2),
                                      b.getAffineDimExpr(3)};
  // A dummy input over the taps gives the loop its extent.
  Value taps = ctx.empty({g.h.size, g.w.size}, dtype);
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {b.getAffineDimExpr(4), b.getAffineDimExpr(5)},
                     b.getContext()),
      AffineMap::get(6, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  Value init = ctx.filled(inShape, dtype, ctx.scalar(dtype, 0));
  Type type = ctx.elementType(dtype);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{init.getType()}, ValueRange{taps}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        auto index = [&](unsigned d) -> Value {
          return nb.create<linalg::IndexOp>(l, d);
        };
        auto constant = [&](int64_t v) -> Value {
          return nb.create<arith::ConstantIndexOp>(l, v);
        };
        // The window whose tap (i, j) lands on (iy, ix):
        // iy + padBefore - i = y * stride.
        auto windowAt = [&](Value position, Value tap, const Window &w,
                            Value &valid) {
          Value shifted = nb.create<arith::SubIOp>(
              l, nb.create<arith::AddIOp>(l, position, constant(w.padBefore)),
              tap);
          Value stride = constant(w.stride);
          Value q = nb.create<arith::DivSIOp>(l, shifted, stride);
          Value exact = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              nb.create<arith::RemSIOp>(l, shifted, stride), constant(0));
          Value nonNegative = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::sge, shifted, constant(0));
          Value inRange = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::slt, q, constant(w.out));
          valid = nb.create<arith::AndIOp>(
              l, valid,
              nb.create<arith::AndIOp>(
                  l, exact, nb.create<arith::AndIOp>(l, nonNegative, inRange)));
          // A clamped index keeps the reads in bounds when not valid.
          Value low = nb.create<arith::MaxSIOp>(l, q, constant(0));
          return nb.create<arith::MinSIOp>(l, low, constant(std::max<int64_t>(w.out - 1, 0)))
              .getResult();
        };
        Value valid = nb.create<arith::ConstantOp>(l, nb.getBoolAttr(true));
        Value y = windowAt(index(1), index(4), g.h, valid);
        Value x = windowAt(index(2), index(5), g.w, valid);
        Value value = contribution(nb, l, {index(0), y, x, index(3)}, valid);
        Value zero = nb.create<arith::ConstantOp>(l, nb.getFloatAttr(type, 0));
        Value term = nb.create<arith::SelectOp>(l, valid, value, zero);
        nb.create<linalg::YieldOp>(
            l, nb.create<arith::AddFOp>(l, args[1], term).getResult());
      });
  return generic.getResult(0);
}

/// MaxPoolGrad(orig_input, orig_output, grad): the gradient of each window
/// goes to its first maximum.
LogicalResult maxPoolGrad(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<Geometry> g = poolGeometry(ctx, ctx.shape(0));
  if (failed(g))
    return failure();
  const char *names[] = {"orig_output", "grad"};
  for (unsigned i = 1; i <= 2; ++i)
    if (ctx.shape(i) != g->outputShape())
      return ctx.error() << "Expected " << names[i - 1] << " shape to be "
                         << cleave::shapeString(g->outputShape())
                         << ", but got " << cleave::shapeString(ctx.shape(i));
  OpBuilder &b = ctx.b;
  Type type = ctx.elementType(dtype);
  // First, each window's first maximum as a flat index iy * w + ix.
  Value lowest = b.create<arith::ConstantOp>(
      ctx.loc,
      b.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  Value input = ctx.tensor(0);
  std::vector<int64_t> outShape = g->outputShape();
  Value best = ctx.filled(outShape, dtype, lowest);
  Value argBest =
      ctx.filled(outShape, cleave::kInt64, ctx.scalar(cleave::kInt64, -1));
  Value taps = ctx.empty({g->h.size, g->w.size}, dtype);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)},
                                    b.getContext());
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {d(4), d(5)}, b.getContext()), outMap, outMap};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  const Geometry geometry = *g;
  auto argmax = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{best.getType(), argBest.getType()}, ValueRange{taps},
      ValueRange{best, argBest}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto index = [&](unsigned dim) -> Value {
          return nb.create<linalg::IndexOp>(l, dim);
        };
        auto constant = [&](int64_t v) -> Value {
          return nb.create<arith::ConstantIndexOp>(l, v);
        };
        auto position = [&](Value o, Value tap, const Window &w, Value &inside) {
          Value p = nb.create<arith::SubIOp>(
              l,
              nb.create<arith::AddIOp>(
                  l, nb.create<arith::MulIOp>(l, o, constant(w.stride)), tap),
              constant(w.padBefore));
          inside = nb.create<arith::AndIOp>(
              l, inside,
              nb.create<arith::AndIOp>(
                  l,
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, p,
                                           constant(0)),
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, p,
                                           constant(w.in))));
          Value low = nb.create<arith::MaxSIOp>(l, p, constant(0));
          return nb.create<arith::MinSIOp>(l, low, constant(w.in - 1))
              .getResult();
        };
        Value inside = nb.create<arith::ConstantOp>(l, nb.getBoolAttr(true));
        Value iy = position(index(1), index(4), geometry.h, inside);
        Value ix = position(index(2), index(5), geometry.w, inside);
        Value v = nb.create<tensor::ExtractOp>(
            l, input, ValueRange{index(0), iy, ix, index(3)});
        Value flat = nb.create<arith::IndexCastOp>(
            l, nb.getI64Type(),
            nb.create<arith::AddIOp>(
                l, nb.create<arith::MulIOp>(l, iy, constant(geometry.w.in)),
                ix));
        // Strictly greater, or the first real element: scan order keeps
        // the first maximum.
        Value none = nb.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::slt, args[2],
            nb.create<arith::ConstantOp>(l, nb.getI64IntegerAttr(0)));
        Value greater = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                 v, args[1]);
        Value take = nb.create<arith::AndIOp>(
            l, inside, nb.create<arith::OrIOp>(l, none, greater));
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::SelectOp>(l, take, v, args[1]),
                          nb.create<arith::SelectOp>(l, take, flat, args[2])});
      });
  Value argTensor = argmax.getResult(1);
  Value grad = ctx.tensor(2);
  Value dx = gatherWindows(
      ctx, *g, dtype,
      [&](OpBuilder &nb, Location l, ValueRange at, Value &valid) -> Value {
        Value chosen = nb.create<tensor::ExtractOp>(l, argTensor, at);
        Value iy = nb.create<linalg::IndexOp>(l, 1);
        Value ix = nb.create<linalg::IndexOp>(l, 2);
        Value flat = nb.create<arith::IndexCastOp>(
            l, nb.getI64Type(),
            nb.create<arith::AddIOp>(
                l,
                nb.create<arith::MulIOp>(
                    l, iy, nb.create<arith::ConstantIndexOp>(l, geometry.w.in)),
                ix));
        valid = nb.create<arith::AndIOp>(
            l, valid,
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, chosen,
                                     flat));
        return nb.create<tensor::ExtractOp>(l, grad, at);
      });
  ctx.setOutput(0, dx, dtype);
  return success();
}

/// AvgPoolGrad(orig_input_shape, grad): each window's gradient shared by
/// its real elements.
LogicalResult avgPoolGrad(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> inShape = ctx.constantInts(0);
  if (failed(inShape))
    return failure();
  int32_t dtype = ctx.dtype(1);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<Geometry> g = poolGeometry(ctx, *inShape);
  if (failed(g) ||
      failed(checkShape(ctx, "out_backprop", ctx.shape(1), g->outputShape())))
    return failure();
  Value share = ctx.map({ctx.tensor(1), countsTensor(ctx, *g, dtype)},
                        g->outputShape(), dtype,
                        [](OpBuilder &nb, Location l, ValueRange args) {
                          return nb.create<arith::DivFOp>(l, args[0], args[1])
                              .getResult();
                        });
  Value dx = gatherWindows(
      ctx, *g, dtype,
      [&](OpBuilder &nb, Location l, ValueRange at, Value &) -> Value {
        return nb.create<tensor::ExtractOp>(l, share, at);
      });
  ctx.setOutput(0, dx, dtype);
  return success();
}

} // namespace

LoweringTable cleave::conversion::getConvLowerings() {
  return {
      {"Conv2D", conv2D},
      {"Conv2DBackpropInput", conv2DBackpropInput},
      {"Conv2DBackpropFilter", conv2DBackpropFilter},
      {"MaxPool", pool<true>},
      {"AvgPool", pool<false>},
      {"MaxPoolGrad", maxPoolGrad},
      {"AvgPoolGrad", avgPoolGrad},
  };
}
