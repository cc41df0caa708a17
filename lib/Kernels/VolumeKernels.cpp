//===- VolumeKernels.cpp - 3-D convolution and pooling --------------------===//
//
// Conv3D, its backprops, MaxPool3D, AvgPool3D and their gradients (NN
// family ops, nn_ops.cc): NDHWC windows with TensorFlow's SAME or VALID
// geometry, computed in double as the 2-D kernels; NCDHW nodes are reordered
// to NDHWC and back.
//
//===----------------------------------------------------------------------===//

#include "DataFormat.h"

#include "cleave/Ops/WindowAttrs.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {
/// The NDHWC geometry of a 3-D window: per spatial dimension the input
/// extent, window, stride, dilation, output extent and padding before.
struct Volume {
  int64_t n = 0, c = 0, oc = 0;
  int64_t in[3], k[3], stride[3], dilation[3], out[3], before[3];

  std::vector<int64_t> outputShape() const {
    return {n, out[0], out[1], out[2], oc};
  }
  /// Calls fn(input index, window offset (d, h, w), output index, channel)
  /// for every in-bounds tap of every window, channel by channel.
  template <typename Fn> void forEachTap(Fn &&fn) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t z = 0; z < out[0]; ++z)
        for (int64_t y = 0; y < out[1]; ++y)
          for (int64_t x = 0; x < out[2]; ++x) {
            int64_t o = (((b * out[0] + z) * out[1] + y) * out[2] + x);
            for (int64_t i = 0; i < k[0]; ++i) {
              int64_t iz = z * stride[0] + i * dilation[0] - before[0];
              if (iz < 0 || iz >= in[0])
                continue;
              for (int64_t j = 0; j < k[1]; ++j) {
                int64_t iy = y * stride[1] + j * dilation[1] - before[1];
                if (iy < 0 || iy >= in[1])
                  continue;
                for (int64_t l = 0; l < k[2]; ++l) {
                  int64_t ix = x * stride[2] + l * dilation[2] - before[2];
                  if (ix < 0 || ix >= in[2])
                    continue;
                  int64_t at = (((b * in[0] + iz) * in[1] + iy) * in[2] + ix);
                  fn(at, (i * k[1] + j) * k[2] + l, o);
                }
              }
            }
          }
  }
};
} // namespace

/// Reads the window attrs for an NDHWC input of `inShape` and a window of
/// `window` (from ksize for pools).
static FailureOr<Volume> volumeGeometry(KernelContext &ctx,
                                        const std::vector<int64_t> &inShape,
                                        std::vector<int64_t> window,
                                        int64_t outChannels, bool isPool) {
  std::vector<int64_t> strides =
      ctx.getIntList("strides").value_or(std::vector<int64_t>());
  std::vector<int64_t> dilations =
      ctx.getIntList("dilations").value_or(std::vector<int64_t>(5, 1));
  bool ncdhw = ctx.getString("data_format").value_or("NDHWC") == "NCDHW";
  auto toNDHWC = [&](std::vector<int64_t> v) {
    if (ncdhw && v.size() == 5)
      v = {v[0], v[2], v[3], v[4], v[1]};
    return v;
  };
  strides = toNDHWC(strides);
  dilations = toNDHWC(dilations);
  if (strides.size() != 5 || strides[0] != 1 || strides[4] != 1)
    return ctx.error() << "strides must have 5 entries with batch and depth "
                          "strides of 1",
           failure();
  if (isPool) {
    window = toNDHWC(ctx.getIntList("ksize").value_or(std::vector<int64_t>()));
    if (window.size() != 5 || window[0] != 1 || window[4] != 1)
      return ctx.error() << "ksize must have 5 entries with batch and depth "
                            "sizes of 1",
             failure();
    window = {window[1], window[2], window[3]};
  }
  if (inShape.size() != 5)
    return ctx.error() << "input must be 5-dimensional, got shape "
                       << shapeString(inShape),
           failure();
  std::string padding = ctx.getString("padding").value_or("");
  if (padding != "SAME" && padding != "VALID")
    return ctx.error() << "padding '" << padding
                       << "' is not supported (SAME or VALID)",
           failure();
  // The 2-D ops' geometry (cleave/Ops/WindowAttrs.h), over five dims.
  ops::WindowAttrs attrs;
  attrs.same = padding == "SAME";
  attrs.strides = strides;
  attrs.dilations = isPool ? std::vector<int64_t>(5, 1) : dilations;
  Volume v;
  v.n = inShape[0];
  v.c = inShape[4];
  v.oc = isPool ? v.c : outChannels;
  for (int d = 0; d < 3; ++d) {
    v.in[d] = inShape[1 + d];
    v.k[d] = window[d];
    v.stride[d] = attrs.strides[1 + d];
    v.dilation[d] = attrs.dilations[1 + d];
    if (v.stride[d] < 1 || v.dilation[d] < 1 || v.k[d] < 1)
      return ctx.error() << "strides, dilations and window sizes must be "
                            "positive",
             failure();
    ops::WindowDim w = ops::windowDim(attrs, 1 + d, v.in[d], v.k[d]);
    v.out[d] = w.out;
    v.before[d] = w.before;
  }
  return v;
}

static LogicalResult conv3D(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &filter = ctx.inputs[1];
  if (filter.rank() != 5)
    return ctx.error() << "filter must be 5-dimensional, got shape "
                       << shapeString(filter.shape());
  if (in.rank() == 5 && filter.shape()[3] != in.shape()[4])
    return ctx.error() << "Input depth must be evenly divisible by filter "
                          "depth: "
                       << in.shape()[4] << " vs " << filter.shape()[3];
  FailureOr<Volume> v =
      volumeGeometry(ctx, in.shape(),
                     {filter.shape()[0], filter.shape()[1], filter.shape()[2]},
                     filter.shape()[4], false);
  if (failed(v))
    return failure();
  std::vector<double> sums(v->n * v->out[0] * v->out[1] * v->out[2] * v->oc);
  v->forEachTap([&](int64_t at, int64_t tap, int64_t o) {
    for (int64_t ci = 0; ci < v->c; ++ci) {
      double x = in.getAsDouble(at * v->c + ci);
      for (int64_t co = 0; co < v->oc; ++co)
        sums[o * v->oc + co] +=
            x * filter.getAsDouble((tap * v->c + ci) * v->oc + co);
    }
  });
  Tensor out(in.dtype(), v->outputShape());
  for (size_t i = 0; i < sums.size(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult checkBackprop(KernelContext &ctx, const Tensor &dy,
                                   const Volume &v) {
  if (dy.shape() != v.outputShape())
    return ctx.error() << "out_backprop has shape " << shapeString(dy.shape())
                       << ", but the forward output has shape "
                       << shapeString(v.outputShape());
  return success();
}

static LogicalResult conv3DBackpropInput(KernelContext &ctx) {
  std::vector<int64_t> inShape = toInts(ctx.inputs[0]);
  const Tensor &filter = ctx.inputs[1], &dy = ctx.inputs[2];
  if (filter.rank() != 5)
    return ctx.error() << "filter must be 5-dimensional";
  FailureOr<Volume> v = volumeGeometry(
      ctx, inShape, {filter.shape()[0], filter.shape()[1], filter.shape()[2]},
      filter.shape()[4], false);
  if (failed(v) || failed(checkBackprop(ctx, dy, *v)))
    return failure();
  std::vector<double> sums(Tensor(dy.dtype(), inShape).numElements());
  v->forEachTap([&](int64_t at, int64_t tap, int64_t o) {
    for (int64_t ci = 0; ci < v->c; ++ci)
      for (int64_t co = 0; co < v->oc; ++co)
        sums[at * v->c + ci] +=
            dy.getAsDouble(o * v->oc + co) *
            filter.getAsDouble((tap * v->c + ci) * v->oc + co);
  });
  Tensor out(dy.dtype(), inShape);
  for (size_t i = 0; i < sums.size(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult conv3DBackpropFilter(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &dy = ctx.inputs[2];
  std::vector<int64_t> filterShape = toInts(ctx.inputs[1]);
  if (filterShape.size() != 5)
    return ctx.error() << "filter_sizes must hold 5 dimensions";
  FailureOr<Volume> v = volumeGeometry(
      ctx, in.shape(), {filterShape[0], filterShape[1], filterShape[2]},
      filterShape[4], false);
  if (failed(v) || failed(checkBackprop(ctx, dy, *v)))
    return failure();
  Tensor out(dy.dtype(), filterShape);
  std::vector<double> sums(out.numElements());
  v->forEachTap([&](int64_t at, int64_t tap, int64_t o) {
    for (int64_t ci = 0; ci < v->c; ++ci)
      for (int64_t co = 0; co < v->oc; ++co)
        sums[(tap * v->c + ci) * v->oc + co] +=
            in.getAsDouble(at * v->c + ci) * dy.getAsDouble(o * v->oc + co);
  });
  for (size_t i = 0; i < sums.size(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

/// The in-bounds taps of each pooling window, per output position.
static std::vector<std::vector<int64_t>> windows(const Volume &v) {
  std::vector<std::vector<int64_t>> taps(v.n * v.out[0] * v.out[1] * v.out[2]);
  v.forEachTap([&](int64_t at, int64_t, int64_t o) { taps[o].push_back(at); });
  return taps;
}

/// MaxPool3D and AvgPool3D: padding never takes part, as in TensorFlow.
template <bool isMax> static LogicalResult pool3D(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  FailureOr<Volume> v = volumeGeometry(ctx, in.shape(), {}, 0, true);
  if (failed(v))
    return failure();
  Tensor out(in.dtype(), v->outputShape());
  auto taps = windows(*v);
  for (auto [o, window] : llvm::enumerate(taps))
    for (int64_t c = 0; c < v->c; ++c) {
      double acc = isMax ? -INFINITY : 0;
      for (int64_t at : window) {
        double x = in.getAsDouble(at * v->c + c);
        acc = isMax ? std::max(acc, x) : acc + x;
      }
      out.setFromDouble(o * v->c + c,
                        isMax ? acc : acc / std::max<size_t>(window.size(), 1));
    }
  ctx.outputs[0] = out;
  return success();
}

/// MaxPool3DGrad: each window's gradient to its first maximum.
static LogicalResult maxPool3DGrad(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &grad = ctx.inputs[2];
  FailureOr<Volume> v = volumeGeometry(ctx, in.shape(), {}, 0, true);
  if (failed(v) || failed(checkBackprop(ctx, grad, *v)))
    return failure();
  std::vector<double> sums(in.numElements());
  auto taps = windows(*v);
  for (auto [o, window] : llvm::enumerate(taps))
    for (int64_t c = 0; c < v->c; ++c) {
      int64_t best = -1;
      for (int64_t at : window)
        if (best < 0 ||
            in.getAsDouble(at * v->c + c) > in.getAsDouble(best * v->c + c))
          best = at;
      if (best >= 0)
        sums[best * v->c + c] += grad.getAsDouble(o * v->c + c);
    }
  Tensor out(grad.dtype(), in.shape());
  for (size_t i = 0; i < sums.size(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

/// AvgPool3DGrad: each window's gradient shared by its real elements.
static LogicalResult avgPool3DGrad(KernelContext &ctx) {
  std::vector<int64_t> inShape = toInts(ctx.inputs[0]);
  const Tensor &grad = ctx.inputs[1];
  FailureOr<Volume> v = volumeGeometry(ctx, inShape, {}, 0, true);
  if (failed(v) || failed(checkBackprop(ctx, grad, *v)))
    return failure();
  Tensor out(grad.dtype(), inShape);
  std::vector<double> sums(out.numElements());
  auto taps = windows(*v);
  for (auto [o, window] : llvm::enumerate(taps))
    for (int64_t c = 0; c < v->c; ++c)
      for (int64_t at : window)
        sums[at * v->c + c] +=
            grad.getAsDouble(o * v->c + c) / double(window.size());
  for (size_t i = 0; i < sums.size(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

KernelTable cleave::interp::getVolumeKernels() {
  return {
      {"Conv3D", inDataFormat<conv3D, 5, LayoutRole::Image, LayoutRole::Image>},
      {"Conv3DBackpropInputV2",
       inDataFormat<conv3DBackpropInput, 5, LayoutRole::Image,
                    LayoutRole::ImageShape, LayoutRole::Other,
                    LayoutRole::Image>},
      {"Conv3DBackpropFilterV2",
       inDataFormat<conv3DBackpropFilter, 5, LayoutRole::Other,
                    LayoutRole::Image, LayoutRole::Other, LayoutRole::Image>},
      {"MaxPool3D",
       inDataFormat<pool3D<true>, 5, LayoutRole::Image, LayoutRole::Image>},
      {"AvgPool3D",
       inDataFormat<pool3D<false>, 5, LayoutRole::Image, LayoutRole::Image>},
      {"MaxPool3DGrad",
       inDataFormat<maxPool3DGrad, 5, LayoutRole::Image, LayoutRole::Image,
                    LayoutRole::Image, LayoutRole::Image>},
      {"AvgPool3DGrad",
       inDataFormat<avgPool3DGrad, 5, LayoutRole::Image, LayoutRole::ImageShape,
                    LayoutRole::Image>},
  };
}
