//===- VolumeLowerings.cpp - 3-D convolution and pooling on the CPU -------===//
//
// Conv3D, MaxPool3D, AvgPool3D and their gradients in NDHWC, with
// TensorFlow's SAME or VALID geometry (cleave/Ops/WindowAttrs.h), computed
// as the reference kernels (lib/Kernels/VolumeKernels.cpp) do:
//   - the forward ops pad the input explicitly, then use linalg's 3-D
//     convolution and pooling ops; the average divides by the real
//     elements of each window;
//   - Conv3DBackpropInputV2 is the transposed convolution: the output
//     gradient spread by the stride, padded to full size, convolved with
//     the filter flipped in space, its channels swapped;
//   - Conv3DBackpropFilterV2 is a convolution of the padded input, channels
//     first, with the output gradient as the filter (the forward op's
//     stride and dilation swapped);
//   - MaxPool3DGrad and AvgPool3DGrad gather, for each input element, the
//     gradients of the windows that contain it: the first maximum of a
//     window in the kernel's scan order takes its whole gradient, and an
//     average's gradient is shared by the window's real elements.
// NCDHW runs on the reference kernels.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Ops/WindowAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

namespace {
struct VolumeGeometry {
  ops::WindowAttrs attrs;
  int64_t in[3], window[3], out[3], before[3], after[3];

  int64_t stride(int d) const { return attrs.strides[1 + d]; }
  int64_t dilation(int d) const { return attrs.dilations[1 + d]; }
  /// The extent of the window along d, dilation included.
  int64_t effective(int d) const { return (window[d] - 1) * dilation(d) + 1; }
};
} // namespace

static FailureOr<VolumeGeometry> volumeGeometry(NodeLowering &ctx,
                                                const std::vector<int64_t> &in,
                                                ArrayRef<int64_t> window,
                                                bool isPool) {
  if (ctx.getString("data_format").value_or("NDHWC") != "NDHWC")
    return ctx.error() << "only NDHWC is supported by the CPU lowering",
           failure();
  if (in.size() != 5)
    return ctx.error() << "input must be 5-dimensional, got shape "
                       << cleave::shapeString(in),
           failure();
  VolumeGeometry g;
  g.attrs.strides = ctx.getIntList("strides").value_or(std::vector<int64_t>());
  g.attrs.dilations =
      isPool ? std::vector<int64_t>(5, 1)
             : ctx.getIntList("dilations").value_or(std::vector<int64_t>(5, 1));
  std::string padding = ctx.getString("padding").value_or("");
  g.attrs.same = padding == "SAME";
  if (g.attrs.strides.size() != 5 || g.attrs.strides[0] != 1 ||
      g.attrs.strides[4] != 1 || g.attrs.dilations.size() != 5)
    return ctx.error() << "strides must have 5 entries with batch and depth "
                          "strides of 1",
           failure();
  if (padding != "SAME" && padding != "VALID")
    return ctx.error() << "padding '" << padding
                       << "' is not supported (SAME or VALID)",
           failure();
  std::vector<int64_t> ksize;
  if (isPool) {
    ksize = ctx.getIntList("ksize").value_or(std::vector<int64_t>());
    if (ksize.size() != 5 || ksize[0] != 1 || ksize[4] != 1)
      return ctx.error() << "ksize must have 5 entries with batch and depth "
                            "sizes of 1",
             failure();
    window = ArrayRef<int64_t>(ksize).slice(1, 3);
  }
  for (int d = 0; d < 3; ++d) {
    if (g.attrs.strides[1 + d] < 1 || g.attrs.dilations[1 + d] < 1 ||
        window[d] < 1)
      return ctx.error() << "strides, dilations and window sizes must be "
                            "positive",
             failure();
    ops::WindowDim w = ops::windowDim(g.attrs, 1 + d, in[1 + d], window[d]);
    g.in[d] = in[1 + d];
    g.window[d] = window[d];
    g.out[d] = w.out;
    g.before[d] = w.before;
    g.after[d] = w.after;
  }
  return g;
}

/// [n, od, oh, ow, channels]: the forward output's shape.
static std::vector<int64_t> outputShape(const VolumeGeometry &g, int64_t n,
                                        int64_t channels) {
  return {n, g.out[0], g.out[1], g.out[2], channels};
}

/// The reference kernels' message for a gradient of the wrong shape.
static LogicalResult checkBackprop(NodeLowering &ctx, unsigned input,
                                   const std::vector<int64_t> &expected) {
  if (ctx.shape(input) != expected)
    return ctx.error() << "out_backprop has shape "
                       << cleave::shapeString(ctx.shape(input))
                       << ", but the forward output has shape "
                       << cleave::shapeString(expected);
  return success();
}

static LogicalResult floatOnly(NodeLowering &ctx, int32_t dtype) {
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  return success();
}

/// `input` padded spatially with `value`, `low` before and `high` after.
static Value padSpatial(NodeLowering &ctx, Value input, ArrayRef<int64_t> low,
                        ArrayRef<int64_t> high, Value value, int32_t dtype) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return input;
  OpBuilder &b = ctx.b;
  auto type = cast<RankedTensorType>(input.getType());
  std::vector<int64_t> out(type.getShape().begin(), type.getShape().end());
  SmallVector<OpFoldResult> lows(5, b.getIndexAttr(0)),
      highs(5, b.getIndexAttr(0));
  for (int d = 0; d < 3; ++d) {
    out[1 + d] += low[d] + high[d];
    lows[1 + d] = b.getIndexAttr(low[d]);
    highs[1 + d] = b.getIndexAttr(high[d]);
  }
  return b.create<tensor::PadOp>(ctx.loc, ctx.tensorType(out, dtype), input,
                                 lows, highs, value);
}

/// The input padded spatially with `value` as the forward op pads it.
static Value padded(NodeLowering &ctx, Value input, const VolumeGeometry &g,
                    Value value, int32_t dtype) {
  return padSpatial(ctx, input, g.before, g.after, value, dtype);
}

/// `value` with its dimensions permuted: result dimension i is `value`'s
/// dimension perm[i].
static Value transposed(NodeLowering &ctx, Value value, int32_t dtype,
                        ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return ctx.b
      .create<linalg::TransposeOp>(ctx.loc, value, ctx.empty(shape, dtype),
                                   perm)
      .getResult()[0];
}

/// The geometry of a convolution of an `in` input with a `filter`
/// ([kd, kh, kw, in channels, out channels]): the layout checked first (an
/// NCDHW input's last dimension is no depth), then the filter's input depth
/// as Conv3D checks it.
static FailureOr<VolumeGeometry>
convGeometry(NodeLowering &ctx, const std::vector<int64_t> &in,
             const std::vector<int64_t> &filter, const char *what) {
  if (filter.size() != 5)
    return ctx.error() << what << " must be 5-dimensional, got shape "
                       << cleave::shapeString(filter),
           failure();
  FailureOr<VolumeGeometry> g =
      volumeGeometry(ctx, in, {filter[0], filter[1], filter[2]}, false);
  if (failed(g))
    return failure();
  if (filter[3] != in[4])
    return ctx.error() << "Input depth must be evenly divisible by filter "
                          "depth: "
                       << in[4] << " vs " << filter[3],
           failure();
  return g;
}

static LogicalResult conv3D(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0), &filter = ctx.shape(1);
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<VolumeGeometry> g = convGeometry(ctx, in, filter, "filter");
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  Value input = padded(ctx, ctx.tensor(0), *g, ctx.scalar(dtype, 0), dtype);
  Value init = ctx.filled(outputShape(*g, in[0], filter[4]), dtype,
                          ctx.scalar(dtype, 0));
  const std::vector<int64_t> &s = g->attrs.strides, &d = g->attrs.dilations;
  auto conv = b.create<linalg::Conv3DNdhwcDhwcfOp>(
      ctx.loc, TypeRange{init.getType()}, ValueRange{input, ctx.tensor(1)},
      ValueRange{init}, b.getI64TensorAttr({s[1], s[2], s[3]}),
      b.getI64TensorAttr({d[1], d[2], d[3]}));
  ctx.setOutput(0, conv.getResult(0), dtype);
  return success();
}

/// Conv3DBackpropInputV2(input_sizes, filter, out_backprop).
static LogicalResult conv3DBackpropInput(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> inShape = ctx.constantInts(0);
  if (failed(inShape))
    return failure();
  int32_t dtype = ctx.dtype(2);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  const std::vector<int64_t> &filter = ctx.shape(1);
  FailureOr<VolumeGeometry> g = convGeometry(ctx, *inShape, filter, "filter");
  if (failed(g))
    return failure();
  int64_t n = (*inShape)[0], c = (*inShape)[4], oc = filter[4];
  if (failed(checkBackprop(ctx, 2, outputShape(*g, n, oc))))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // The output gradient spread by the stride: zeros between the planes,
  // rows and columns of a strided convolution.
  Value dy = ctx.tensor(2);
  int64_t spread[3];
  bool strided = false;
  for (int d = 0; d < 3; ++d) {
    spread[d] = g->out[d] ? (g->out[d] - 1) * g->stride(d) + 1 : 0;
    strided |= g->stride(d) > 1;
  }
  if (strided) {
    Value zeros = ctx.filled({n, spread[0], spread[1], spread[2], oc}, dtype,
                             ctx.scalar(dtype, 0));
    SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(n), b.getIndexAttr(g->out[0]), b.getIndexAttr(g->out[1]),
        b.getIndexAttr(g->out[2]), b.getIndexAttr(oc)};
    SmallVector<OpFoldResult> strides = {
        b.getIndexAttr(1), b.getIndexAttr(g->stride(0)),
        b.getIndexAttr(g->stride(1)), b.getIndexAttr(g->stride(2)),
        b.getIndexAttr(1)};
    dy = b.create<tensor::InsertSliceOp>(loc, dy, zeros, offsets, sizes,
                                         strides);
  }
  // Full padding, so that a VALID stride-1 convolution gives the input's
  // size: window - 1 - padBefore before, the rest after. SAME and VALID
  // never make a side negative.
  int64_t low[3], high[3];
  for (int d = 0; d < 3; ++d) {
    low[d] = g->effective(d) - 1 - g->before[d];
    high[d] = g->in[d] + g->effective(d) - 1 - spread[d] - low[d];
    if (low[d] < 0 || high[d] < 0)
      return ctx.error() << "unexpected convolution geometry";
  }
  dy = padSpatial(ctx, dy, low, high, ctx.scalar(dtype, 0), dtype);
  // The filter flipped in space, its channels swapped: [kd, kh, kw, oc, c].
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto last = [&](int d) { return b.getAffineConstantExpr(filter[d] - 1); };
  SmallVector<AffineExpr> flip = {last(0) - dim(0), last(1) - dim(1),
                                  last(2) - dim(2), dim(4), dim(3)};
  std::vector<int64_t> flippedShape = {filter[0], filter[1], filter[2], oc, c};
  auto flipped = b.create<linalg::GenericOp>(
      loc, TypeRange{ctx.tensorType(flippedShape, dtype)},
      ValueRange{ctx.tensor(1)}, ValueRange{ctx.empty(flippedShape, dtype)},
      SmallVector<AffineMap>{AffineMap::get(5, 0, flip, b.getContext()),
                             b.getMultiDimIdentityMap(5)},
      SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, args[0]);
      });
  Value init = ctx.filled(*inShape, dtype, ctx.scalar(dtype, 0));
  auto conv = b.create<linalg::Conv3DNdhwcDhwcfOp>(
      loc, TypeRange{init.getType()}, ValueRange{dy, flipped.getResult(0)},
      ValueRange{init}, b.getI64TensorAttr({1, 1, 1}),
      b.getI64TensorAttr({g->dilation(0), g->dilation(1), g->dilation(2)}));
  ctx.setOutput(0, conv.getResult(0), dtype);
  return success();
}

/// Conv3DBackpropFilterV2(input, filter_sizes, out_backprop).
static LogicalResult conv3DBackpropFilter(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> filter = ctx.constantInts(1);
  if (failed(filter))
    return failure();
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  const std::vector<int64_t> &in = ctx.shape(0);
  FailureOr<VolumeGeometry> g = convGeometry(ctx, in, *filter, "filter_sizes");
  if (failed(g))
    return failure();
  int64_t n = in[0], c = in[4], oc = (*filter)[4];
  if (failed(checkBackprop(ctx, 2, outputShape(*g, n, oc))))
    return failure();
  // No output positions or no images: nothing to sum.
  if (n == 0 || g->out[0] == 0 || g->out[1] == 0 || g->out[2] == 0) {
    ctx.setOutput(0, ctx.filled(*filter, dtype, ctx.scalar(dtype, 0)), dtype);
    return success();
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value input = padded(ctx, ctx.tensor(0), *g, ctx.scalar(dtype, 0), dtype);
  // The planes, rows and columns the windows reach (VALID may leave the
  // rest unread).
  int64_t reach[3];
  auto paddedType = cast<RankedTensorType>(input.getType());
  bool cut = false;
  for (int d = 0; d < 3; ++d) {
    reach[d] = (g->out[d] - 1) * g->stride(d) + g->effective(d);
    cut |= paddedType.getDimSize(1 + d) != reach[d];
  }
  if (cut) {
    SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(n), b.getIndexAttr(reach[0]), b.getIndexAttr(reach[1]),
        b.getIndexAttr(reach[2]), b.getIndexAttr(c)};
    SmallVector<OpFoldResult> ones(5, b.getIndexAttr(1));
    input = b.create<tensor::ExtractSliceOp>(
        loc, ctx.tensorType({n, reach[0], reach[1], reach[2], c}, dtype), input,
        offsets, sizes, ones);
  }
  // dW[i, j, l, k, o] = sum over b, z, y, x of
  // in[b, z*s + i*d, y*s + j*d, x*s + l*d, k] * dy[b, z, y, x, o]: a
  // convolution of the input seen as k volumes of b channels with dy seen
  // as a [z, y, x, b, o] filter, the forward op's dilation as stride and
  // its stride as dilation.
  Value volumes = transposed(ctx, input, dtype, {4, 1, 2, 3, 0});
  Value window = transposed(ctx, ctx.tensor(2), dtype, {1, 2, 3, 0, 4});
  Value init = ctx.filled({c, (*filter)[0], (*filter)[1], (*filter)[2], oc},
                          dtype, ctx.scalar(dtype, 0));
  auto conv = b.create<linalg::Conv3DNdhwcDhwcfOp>(
      loc, TypeRange{init.getType()}, ValueRange{volumes, window},
      ValueRange{init},
      b.getI64TensorAttr({g->dilation(0), g->dilation(1), g->dilation(2)}),
      b.getI64TensorAttr({g->stride(0), g->stride(1), g->stride(2)}));
  ctx.setOutput(0, transposed(ctx, conv.getResult(0), dtype, {1, 2, 3, 0, 4}),
                dtype);
  return success();
}

/// The number of real (not padding) elements of each pooling window, a
/// constant [1, od, oh, ow, 1] (at least 1: an empty window divides
/// nothing).
static Value windowCounts(NodeLowering &ctx, const VolumeGeometry &g,
                          int32_t dtype) {
  Tensor counts(dtype, {1, g.out[0], g.out[1], g.out[2], 1});
  int64_t at = 0;
  for (int64_t z = 0; z < g.out[0]; ++z)
    for (int64_t y = 0; y < g.out[1]; ++y)
      for (int64_t x = 0; x < g.out[2]; ++x) {
        int64_t count = 1, pos[3] = {z, y, x};
        for (int d = 0; d < 3; ++d) {
          int64_t first = pos[d] * g.stride(d) - g.before[d];
          int64_t last = first + g.window[d];
          count *= std::max<int64_t>(
              std::min(last, g.in[d]) - std::max<int64_t>(first, 0), 0);
        }
        counts.setFromDouble(at++, double(std::max<int64_t>(count, 1)));
      }
  return ctx.constantTensor(counts);
}

static Value divide(NodeLowering &ctx, Value x, Value counts,
                    ArrayRef<int64_t> shape, int32_t dtype) {
  return ctx.map({x, counts}, shape, dtype,
                 [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                   return nb.create<arith::DivFOp>(l, args[0], args[1]);
                 });
}

/// MaxPool3D (padding the lowest value, so it never wins) and AvgPool3D
/// (sums over zero padding, divided by each window's real elements).
template <bool isMax> static LogicalResult pool3D(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<VolumeGeometry> g = volumeGeometry(ctx, in, {}, true);
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  double lowest = -std::numeric_limits<double>::infinity();
  Value padValue = ctx.scalar(dtype, isMax ? lowest : 0);
  Value input = padded(ctx, ctx.tensor(0), *g, padValue, dtype);
  std::vector<int64_t> outShape = outputShape(*g, in[0], in[4]);
  Value init = ctx.filled(outShape, dtype, padValue);
  Value window = ctx.empty({g->window[0], g->window[1], g->window[2]}, dtype);
  auto strides = b.getI64TensorAttr({g->stride(0), g->stride(1), g->stride(2)});
  auto dilations = b.getI64TensorAttr({1, 1, 1});
  Value result;
  if (isMax)
    result = b.create<linalg::PoolingNdhwcMaxOp>(
                  ctx.loc, TypeRange{init.getType()}, ValueRange{input, window},
                  ValueRange{init}, strides, dilations)
                 .getResult(0);
  else
    result = b.create<linalg::PoolingNdhwcSumOp>(
                  ctx.loc, TypeRange{init.getType()}, ValueRange{input, window},
                  ValueRange{init}, strides, dilations)
                 .getResult(0);
  if (!isMax)
    result = divide(ctx, result, windowCounts(ctx, *g, dtype), outShape, dtype);
  ctx.setOutput(0, result, dtype);
  return success();
}

namespace {
/// The value of window (b, z, y, x, k) that goes to the input element the
/// loop is at (dims 0 to 4: b, iz, iy, ix, k), which may narrow `valid` to
/// reject the window.
using WindowValueFn = llvm::function_ref<Value(
    OpBuilder &, Location, ValueRange window /* b, z, y, x, k */,
    Value &valid)>;
} // namespace

/// The flat spatial index iz * h * w + iy * w + ix of an input element, an
/// i64: increasing in the reference kernel's scan order of a window.
static Value flatIndex(OpBuilder &b, Location l, const VolumeGeometry &g,
                       ValueRange position) {
  Value flat = position[0];
  for (int d = 1; d < 3; ++d)
    flat = b.create<arith::AddIOp>(
        l,
        b.create<arith::MulIOp>(l, flat,
                                b.create<arith::ConstantIndexOp>(l, g.in[d])),
        position[d]);
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), flat);
}

/// The input gradient of a pool, [n, id, ih, iw, c]: for each input element
/// the sum over the windows that contain it of `contribution`. A
/// linalg.generic over the input elements and the window taps (dims 5 to
/// 7) that would cover them (pools have no dilation).
static Value gatherWindows(NodeLowering &ctx, const VolumeGeometry &g,
                           int64_t n, int64_t c, int32_t dtype,
                           WindowValueFn contribution) {
  OpBuilder &b = ctx.b;
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // A dummy input over the taps gives the loop its extent.
  Value taps = ctx.empty({g.window[0], g.window[1], g.window[2]}, dtype);
  SmallVector<AffineMap> maps = {
      AffineMap::get(8, 0, {dim(5), dim(6), dim(7)}, b.getContext()),
      AffineMap::get(8, 0, {dim(0), dim(1), dim(2), dim(3), dim(4)},
                     b.getContext())};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = ctx.filled({n, g.in[0], g.in[1], g.in[2], c}, dtype,
                          ctx.scalar(dtype, 0));
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
        // The window whose tap t lands on position p along d:
        // p + before - t = o * stride.
        auto windowAt = [&](int d, Value &valid) -> Value {
          Value shifted = nb.create<arith::SubIOp>(
              l,
              nb.create<arith::AddIOp>(l, index(1 + d), constant(g.before[d])),
              index(5 + d));
          Value stride = constant(g.stride(d));
          Value o = nb.create<arith::DivSIOp>(l, shifted, stride);
          Value exact = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              nb.create<arith::RemSIOp>(l, shifted, stride), constant(0));
          Value nonNegative = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::sge, shifted, constant(0));
          Value inRange = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt,
                                                   o, constant(g.out[d]));
          valid = nb.create<arith::AndIOp>(
              l, valid,
              nb.create<arith::AndIOp>(
                  l, exact, nb.create<arith::AndIOp>(l, nonNegative, inRange)));
          // A clamped index keeps the reads in bounds when not valid.
          Value clamped = nb.create<arith::MaxSIOp>(l, o, constant(0));
          return nb.create<arith::MinSIOp>(
              l, clamped, constant(std::max<int64_t>(g.out[d] - 1, 0)));
        };
        Value valid = nb.create<arith::ConstantOp>(l, nb.getBoolAttr(true));
        Value z = windowAt(0, valid);
        Value y = windowAt(1, valid);
        Value x = windowAt(2, valid);
        Value value = contribution(nb, l, {index(0), z, y, x, index(4)}, valid);
        Value zero = nb.create<arith::ConstantOp>(l, nb.getFloatAttr(type, 0));
        Value term = nb.create<arith::SelectOp>(l, valid, value, zero);
        nb.create<linalg::YieldOp>(
            l, nb.create<arith::AddFOp>(l, args[1], term).getResult());
      });
  return generic.getResult(0);
}

/// MaxPool3DGrad(orig_input, orig_output, grad): the gradient of each
/// window goes to its first maximum in the reference kernel's scan order
/// (depth, then height, then width); padding never takes part. As in the
/// reference kernel, the maxima are found again from orig_input.
static LogicalResult maxPool3DGrad(NodeLowering &ctx) {
  int32_t inDType = ctx.dtype(0), dtype = ctx.dtype(2);
  if (failed(floatOnly(ctx, inDType)) || failed(floatOnly(ctx, dtype)))
    return failure();
  const std::vector<int64_t> &in = ctx.shape(0);
  FailureOr<VolumeGeometry> g = volumeGeometry(ctx, in, {}, true);
  if (failed(g))
    return failure();
  std::vector<int64_t> outShape = outputShape(*g, in[0], in[4]);
  if (failed(checkBackprop(ctx, 2, outShape)))
    return failure();
  OpBuilder &b = ctx.b;
  // First, the flat spatial index of each window's first maximum (-1 for a
  // window of padding alone).
  Value input = ctx.tensor(0);
  Value best =
      ctx.filled(outShape, inDType,
                 ctx.scalar(inDType, -std::numeric_limits<double>::infinity()));
  Value argBest =
      ctx.filled(outShape, cleave::kInt64, ctx.scalar(cleave::kInt64, -1));
  Value taps = ctx.empty({g->window[0], g->window[1], g->window[2]}, dtype);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineMap outMap = AffineMap::get(
      8, 0, {dim(0), dim(1), dim(2), dim(3), dim(4)}, b.getContext());
  SmallVector<AffineMap> maps = {
      AffineMap::get(8, 0, {dim(5), dim(6), dim(7)}, b.getContext()), outMap,
      outMap};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  const VolumeGeometry geometry = *g;
  auto argmax = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{best.getType(), argBest.getType()}, ValueRange{taps},
      ValueRange{best, argBest}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto index = [&](unsigned d) -> Value {
          return nb.create<linalg::IndexOp>(l, d);
        };
        auto constant = [&](int64_t v) -> Value {
          return nb.create<arith::ConstantIndexOp>(l, v);
        };
        // The input position of tap t of window o along d, clamped into
        // the input; `inside` says whether it is a real element.
        auto position = [&](int d, Value &inside) -> Value {
          Value p = nb.create<arith::SubIOp>(
              l,
              nb.create<arith::AddIOp>(
                  l,
                  nb.create<arith::MulIOp>(l, index(1 + d),
                                           constant(geometry.stride(d))),
                  index(5 + d)),
              constant(geometry.before[d]));
          inside = nb.create<arith::AndIOp>(
              l, inside,
              nb.create<arith::AndIOp>(
                  l,
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, p,
                                           constant(0)),
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, p,
                                           constant(geometry.in[d]))));
          Value low = nb.create<arith::MaxSIOp>(l, p, constant(0));
          return nb.create<arith::MinSIOp>(
              l, low, constant(std::max<int64_t>(geometry.in[d] - 1, 0)));
        };
        Value inside = nb.create<arith::ConstantOp>(l, nb.getBoolAttr(true));
        Value iz = position(0, inside);
        Value iy = position(1, inside);
        Value ix = position(2, inside);
        Value v = nb.create<tensor::ExtractOp>(
            l, input, ValueRange{index(0), iz, iy, ix, index(4)});
        Value flat = flatIndex(nb, l, geometry, {iz, iy, ix});
        // Strictly greater, or the first real element: the scan order
        // keeps the first maximum.
        Value none = nb.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::slt, args[2],
            nb.create<arith::ConstantOp>(l, nb.getI64IntegerAttr(0)));
        Value greater =
            nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, args[1]);
        Value take = nb.create<arith::AndIOp>(
            l, inside, nb.create<arith::OrIOp>(l, none, greater));
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::SelectOp>(l, take, v, args[1]),
                          nb.create<arith::SelectOp>(l, take, flat, args[2])});
      });
  Value argTensor = argmax.getResult(1);
  Value grad = ctx.tensor(2);
  Value dx = gatherWindows(
      ctx, *g, in[0], in[4], dtype,
      [&](OpBuilder &nb, Location l, ValueRange at, Value &valid) -> Value {
        Value chosen = nb.create<tensor::ExtractOp>(l, argTensor, at);
        SmallVector<Value> position;
        for (unsigned d = 1; d <= 3; ++d)
          position.push_back(nb.create<linalg::IndexOp>(l, d));
        Value flat = flatIndex(nb, l, geometry, position);
        valid = nb.create<arith::AndIOp>(
            l, valid,
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, chosen,
                                     flat));
        return nb.create<tensor::ExtractOp>(l, grad, at);
      });
  ctx.setOutput(0, dx, dtype);
  return success();
}

/// AvgPool3DGrad(orig_input_shape, grad): each window's gradient shared by
/// its real elements.
static LogicalResult avgPool3DGrad(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> inShape = ctx.constantInts(0);
  if (failed(inShape))
    return failure();
  int32_t dtype = ctx.dtype(1);
  if (failed(floatOnly(ctx, dtype)))
    return failure();
  FailureOr<VolumeGeometry> g = volumeGeometry(ctx, *inShape, {}, true);
  if (failed(g))
    return failure();
  int64_t n = (*inShape)[0], c = (*inShape)[4];
  std::vector<int64_t> outShape = outputShape(*g, n, c);
  if (failed(checkBackprop(ctx, 1, outShape)))
    return failure();
  Value share =
      divide(ctx, ctx.tensor(1), windowCounts(ctx, *g, dtype), outShape, dtype);
  Value dx = gatherWindows(
      ctx, *g, n, c, dtype,
      [&](OpBuilder &nb, Location l, ValueRange at, Value &) -> Value {
        return nb.create<tensor::ExtractOp>(l, share, at);
      });
  ctx.setOutput(0, dx, dtype);
  return success();
}

LoweringTable cleave::conversion::getVolumeLowerings() {
  return {
      {"Conv3D", conv3D},
      {"Conv3DBackpropInputV2", conv3DBackpropInput},
      {"Conv3DBackpropFilterV2", conv3DBackpropFilter},
      {"MaxPool3D", pool3D<true>},
      {"AvgPool3D", pool3D<false>},
      {"MaxPool3DGrad", maxPool3DGrad},
      {"AvgPool3DGrad", avgPool3DGrad},
  };
}
