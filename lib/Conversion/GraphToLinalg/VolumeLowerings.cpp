//===- VolumeLowerings.cpp - 3-D convolution and pooling on the CPU -------===//
//
// Conv3D, MaxPool3D and AvgPool3D in NDHWC: the input padded as TensorFlow's
// SAME geometry pads it (cleave/Ops/WindowAttrs.h), then linalg's 3-D
// convolution and pooling ops; the average divides by the real elements of
// each window. The backprops and NCDHW run on the reference kernels.
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
  int64_t window[3], out[3], before[3], after[3];
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
    g.window[d] = window[d];
    g.out[d] = w.out;
    g.before[d] = w.before;
    g.after[d] = w.after;
  }
  return g;
}

/// The input padded spatially with `value`.
static Value padded(NodeLowering &ctx, Value input,
                    const std::vector<int64_t> &shape, const VolumeGeometry &g,
                    Value value, int32_t dtype) {
  OpBuilder &b = ctx.b;
  std::vector<int64_t> out = shape;
  SmallVector<OpFoldResult> low(5, b.getIndexAttr(0)),
      high(5, b.getIndexAttr(0));
  bool any = false;
  for (int d = 0; d < 3; ++d) {
    out[1 + d] += g.before[d] + g.after[d];
    low[1 + d] = b.getIndexAttr(g.before[d]);
    high[1 + d] = b.getIndexAttr(g.after[d]);
    any |= g.before[d] || g.after[d];
  }
  if (!any)
    return input;
  return b.create<tensor::PadOp>(ctx.loc, ctx.tensorType(out, dtype), input,
                                 low, high, value);
}

static LogicalResult conv3D(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0), &filter = ctx.shape(1);
  int32_t dtype = ctx.dtype(0);
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  if (filter.size() != 5)
    return ctx.error() << "filter must be 5-dimensional, got shape "
                       << cleave::shapeString(filter);
  if (in.size() == 5 && filter[3] != in[4])
    return ctx.error() << "Input depth must be evenly divisible by filter "
                          "depth: "
                       << in[4] << " vs " << filter[3];
  FailureOr<VolumeGeometry> g =
      volumeGeometry(ctx, in, {filter[0], filter[1], filter[2]}, false);
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  Value input = padded(ctx, ctx.tensor(0), in, *g, ctx.scalar(dtype, 0), dtype);
  std::vector<int64_t> outShape = {in[0], g->out[0], g->out[1], g->out[2],
                                   filter[4]};
  Value init = ctx.filled(outShape, dtype, ctx.scalar(dtype, 0));
  const std::vector<int64_t> &s = g->attrs.strides, &d = g->attrs.dilations;
  auto conv = b.create<linalg::Conv3DNdhwcDhwcfOp>(
      ctx.loc, TypeRange{init.getType()}, ValueRange{input, ctx.tensor(1)},
      ValueRange{init}, b.getI64TensorAttr({s[1], s[2], s[3]}),
      b.getI64TensorAttr({d[1], d[2], d[3]}));
  ctx.setOutput(0, conv.getResult(0), dtype);
  return success();
}

/// MaxPool3D (padding the lowest value, so it never wins) and AvgPool3D
/// (sums over zero padding, divided by each window's real elements).
template <bool isMax> static LogicalResult pool3D(NodeLowering &ctx) {
  const std::vector<int64_t> &in = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  FailureOr<VolumeGeometry> g = volumeGeometry(ctx, in, {}, true);
  if (failed(g))
    return failure();
  OpBuilder &b = ctx.b;
  double lowest = -std::numeric_limits<double>::infinity();
  Value padValue = ctx.scalar(dtype, isMax ? lowest : 0);
  Value input = padded(ctx, ctx.tensor(0), in, *g, padValue, dtype);
  std::vector<int64_t> outShape = {in[0], g->out[0], g->out[1], g->out[2],
                                   in[4]};
  Value init = ctx.filled(outShape, dtype, padValue);
  Value window = ctx.empty({g->window[0], g->window[1], g->window[2]}, dtype);
  const std::vector<int64_t> &s = g->attrs.strides;
  auto strides = b.getI64TensorAttr({s[1], s[2], s[3]});
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
  if (!isMax) {
    // The real elements of each window, a constant [1, od, oh, ow, 1].
    Tensor counts(dtype, {1, g->out[0], g->out[1], g->out[2], 1});
    int64_t at = 0;
    for (int64_t z = 0; z < g->out[0]; ++z)
      for (int64_t y = 0; y < g->out[1]; ++y)
        for (int64_t x = 0; x < g->out[2]; ++x) {
          int64_t count = 1, pos[3] = {z, y, x};
          for (int d = 0; d < 3; ++d) {
            int64_t first = pos[d] * s[1 + d] - g->before[d];
            int64_t last = first + g->window[d];
            count *= std::max<int64_t>(
                std::min(last, in[1 + d]) - std::max<int64_t>(first, 0), 0);
          }
          counts.setFromDouble(at++, double(std::max<int64_t>(count, 1)));
        }
    result = ctx.map({result, ctx.constantTensor(counts)}, outShape, dtype,
                     [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                       return nb.create<arith::DivFOp>(l, args[0], args[1]);
                     });
  }
  ctx.setOutput(0, result, dtype);
  return success();
}

LoweringTable cleave::conversion::getVolumeLowerings() {
  return {
      {"Conv3D", conv3D},
      {"MaxPool3D", pool3D<true>},
      {"AvgPool3D", pool3D<false>},
  };
}
