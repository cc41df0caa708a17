//===- NNKernels.cpp - neural-network kernels -----------------------------===//
//
// Float and double only, computed in double: the interpreter is an oracle.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace cleave::interp;

namespace {
bool isFloating(const Tensor &t) {
  return t.dtype() == kFloat || t.dtype() == kDouble;
}

LogicalResult biasAdd(KernelContext &ctx) {
  const Tensor &value = ctx.inputs[0], &bias = ctx.inputs[1];
  if (!isFloating(value) || value.dtype() != bias.dtype())
    return ctx.error() << "BiasAdd supports float and double";
  bool nchw = ctx.getString("data_format").value_or("NHWC") == "NCHW";
  if (value.rank() < 2 || bias.rank() != 1)
    return ctx.error() << "Input tensor must be at least 2D and bias a vector";
  int64_t channel = nchw ? 1 : value.rank() - 1;
  int64_t c = value.shape()[channel];
  if (bias.shape()[0] != c)
    return ctx.error() << "Must provide as many biases as the channel "
                          "dimension of the input tensor: "
                       << bias.shape()[0] << " vs. " << c;
  int64_t inner = 1;
  for (int64_t d = channel + 1; d < value.rank(); ++d)
    inner *= value.shape()[d];
  Tensor out(value.dtype(), value.shape());
  for (int64_t i = 0; i < value.numElements(); ++i)
    out.setFromDouble(i,
                      value.getAsDouble(i) + bias.getAsDouble((i / inner) % c));
  ctx.outputs[0] = out;
  return success();
}

LogicalResult biasAddGrad(KernelContext &ctx) {
  const Tensor &grad = ctx.inputs[0];
  bool nchw = ctx.getString("data_format").value_or("NHWC") == "NCHW";
  int64_t channel = nchw ? 1 : grad.rank() - 1;
  int64_t c = grad.shape()[channel], inner = 1;
  for (int64_t d = channel + 1; d < grad.rank(); ++d)
    inner *= grad.shape()[d];
  std::vector<double> sums(c, 0);
  for (int64_t i = 0; i < grad.numElements(); ++i)
    sums[(i / inner) % c] += grad.getAsDouble(i);
  Tensor out(grad.dtype(), {c});
  for (int64_t i = 0; i < c; ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

/// Softmax or log-softmax over the last dimension.
template <bool isLog> LogicalResult softmax(KernelContext &ctx) {
  const Tensor &logits = ctx.inputs[0];
  if (!isFloating(logits) || logits.rank() < 1)
    return ctx.error() << "logits must be a floating tensor of rank >= 1";
  int64_t classes = logits.shape().back();
  Tensor out(logits.dtype(), logits.shape());
  for (int64_t row = 0; classes && row < logits.numElements() / classes;
       ++row) {
    double maxV = -INFINITY, sum = 0;
    for (int64_t j = 0; j < classes; ++j)
      maxV = std::max(maxV, logits.getAsDouble(row * classes + j));
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(logits.getAsDouble(row * classes + j) - maxV);
    for (int64_t j = 0; j < classes; ++j) {
      double shifted = logits.getAsDouble(row * classes + j) - maxV;
      out.setFromDouble(row * classes + j, isLog ? shifted - std::log(sum)
                                                 : std::exp(shifted) / sum);
    }
  }
  ctx.outputs[0] = out;
  return success();
}

LogicalResult sparseSoftmaxCrossEntropy(KernelContext &ctx) {
  const Tensor &logits = ctx.inputs[0], &labels = ctx.inputs[1];
  if (logits.rank() != 2 || labels.rank() != 1 ||
      labels.shape()[0] != logits.shape()[0])
    return ctx.error() << "logits must be 2-D and labels 1-D with the same "
                          "batch size";
  int64_t batch = logits.shape()[0], classes = logits.shape()[1];
  Tensor loss(logits.dtype(), {batch}),
      backprop(logits.dtype(), logits.shape());
  for (int64_t b = 0; b < batch; ++b) {
    int64_t label = labels.getAsInt(b);
    if (label < 0 || label >= classes)
      return ctx.error() << "Received a label value of " << label
                         << " which is outside the valid range of [0, "
                         << classes << ").";
    double maxV = -INFINITY, sum = 0;
    for (int64_t j = 0; j < classes; ++j)
      maxV = std::max(maxV, logits.getAsDouble(b * classes + j));
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(logits.getAsDouble(b * classes + j) - maxV);
    double logSum = std::log(sum);
    loss.setFromDouble(b, logSum -
                              (logits.getAsDouble(b * classes + label) - maxV));
    for (int64_t j = 0; j < classes; ++j) {
      double p = std::exp(logits.getAsDouble(b * classes + j) - maxV - logSum);
      backprop.setFromDouble(b * classes + j, p - (j == label ? 1 : 0));
    }
  }
  ctx.outputs[0] = loss;
  ctx.outputs[1] = backprop;
  return success();
}

LogicalResult reluGrad(KernelContext &ctx) {
  const Tensor &grads = ctx.inputs[0], &features = ctx.inputs[1];
  if (grads.shape() != features.shape())
    return ctx.error() << "gradients and features must have the same shape";
  Tensor out(grads.dtype(), grads.shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFromDouble(i,
                      features.getAsDouble(i) > 0 ? grads.getAsDouble(i) : 0);
  ctx.outputs[0] = out;
  return success();
}
/// Window geometry of Conv2D and pooling in NHWC: output size and the
/// padding before the first element, as TensorFlow's GetWindowedOutputSize.
struct Window {
  int64_t out, padBefore;
};

Window window(int64_t in, int64_t size, int64_t stride, int64_t dilation,
              bool same) {
  int64_t effective = (size - 1) * dilation + 1;
  if (!same)
    return {in < effective ? 0 : (in - effective + stride) / stride, 0};
  int64_t out = (in + stride - 1) / stride;
  int64_t pad = std::max<int64_t>((out - 1) * stride + effective - in, 0);
  return {out, pad / 2};
}

/// Reads the NHWC window attrs; fails with a message on bad values.
LogicalResult windowAttrs(KernelContext &ctx, std::vector<int64_t> &strides,
                          bool &same) {
  if (ctx.getString("data_format").value_or("NHWC") != "NHWC")
    return ctx.error() << "only NHWC is supported by the interpreter";
  strides = ctx.getIntList("strides").value_or(std::vector<int64_t>());
  if (strides.size() != 4 || strides[0] != 1 || strides[3] != 1)
    return ctx.error() << "strides must have 4 entries with batch and depth "
                          "strides of 1";
  std::string padding = ctx.getString("padding").value_or("");
  if (padding != "SAME" && padding != "VALID")
    return ctx.error() << "padding '" << padding
                       << "' is not supported (SAME or VALID)";
  same = padding == "SAME";
  return success();
}

LogicalResult conv2D(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &filter = ctx.inputs[1];
  std::vector<int64_t> strides;
  bool same;
  if (failed(windowAttrs(ctx, strides, same)))
    return failure();
  auto dilations =
      ctx.getIntList("dilations").value_or(std::vector<int64_t>{1, 1, 1, 1});
  if (in.rank() != 4 || filter.rank() != 4 || !isFloating(in))
    return ctx.error() << "input and filter must be 4-D float tensors";
  int64_t n = in.shape()[0], h = in.shape()[1], w = in.shape()[2],
          c = in.shape()[3];
  int64_t kh = filter.shape()[0], kw = filter.shape()[1],
          fc = filter.shape()[2], oc = filter.shape()[3];
  if (fc != c)
    return ctx.error() << "input depth " << c
                       << " does not match the filter's input depth " << fc
                       << " (grouped convolutions are not supported yet)";
  Window wh = window(h, kh, strides[1], dilations[1], same);
  Window ww = window(w, kw, strides[2], dilations[2], same);
  Tensor out(in.dtype(), {n, wh.out, ww.out, oc});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < wh.out; ++y)
      for (int64_t x = 0; x < ww.out; ++x)
        for (int64_t o = 0; o < oc; ++o) {
          double acc = 0;
          for (int64_t i = 0; i < kh; ++i) {
            int64_t iy = y * strides[1] + i * dilations[1] - wh.padBefore;
            if (iy < 0 || iy >= h)
              continue;
            for (int64_t j = 0; j < kw; ++j) {
              int64_t ix = x * strides[2] + j * dilations[2] - ww.padBefore;
              if (ix < 0 || ix >= w)
                continue;
              for (int64_t k = 0; k < c; ++k)
                acc += in.getAsDouble(((b * h + iy) * w + ix) * c + k) *
                       filter.getAsDouble(((i * kw + j) * c + k) * oc + o);
            }
          }
          out.setFromDouble(((b * wh.out + y) * ww.out + x) * oc + o, acc);
        }
  ctx.outputs[0] = out;
  return success();
}

template <bool isMax> LogicalResult pool(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> strides;
  bool same;
  if (failed(windowAttrs(ctx, strides, same)))
    return failure();
  auto ksize = ctx.getIntList("ksize").value_or(std::vector<int64_t>());
  if (ksize.size() != 4 || ksize[0] != 1 || ksize[3] != 1)
    return ctx.error() << "ksize must have 4 entries with batch and depth "
                          "sizes of 1";
  if (in.rank() != 4 || !isFloating(in))
    return ctx.error() << "input must be a 4-D float tensor";
  int64_t n = in.shape()[0], h = in.shape()[1], w = in.shape()[2],
          c = in.shape()[3];
  Window wh = window(h, ksize[1], strides[1], 1, same);
  Window ww = window(w, ksize[2], strides[2], 1, same);
  Tensor out(in.dtype(), {n, wh.out, ww.out, c});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < wh.out; ++y)
      for (int64_t x = 0; x < ww.out; ++x)
        for (int64_t k = 0; k < c; ++k) {
          // Padding never takes part: max ignores it, the average divides
          // by the number of real elements, as in TensorFlow.
          double acc = isMax ? -INFINITY : 0;
          int64_t count = 0;
          for (int64_t i = 0; i < ksize[1]; ++i) {
            int64_t iy = y * strides[1] + i - wh.padBefore;
            if (iy < 0 || iy >= h)
              continue;
            for (int64_t j = 0; j < ksize[2]; ++j) {
              int64_t ix = x * strides[2] + j - ww.padBefore;
              if (ix < 0 || ix >= w)
                continue;
              double v = in.getAsDouble(((b * h + iy) * w + ix) * c + k);
              acc = isMax ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          out.setFromDouble(((b * wh.out + y) * ww.out + x) * c + k,
                            isMax ? acc : acc / std::max<int64_t>(count, 1));
        }
  ctx.outputs[0] = out;
  return success();
}
} // namespace

KernelTable cleave::interp::getNNKernels() {
  return {
      {"BiasAdd", biasAdd},
      {"BiasAddGrad", biasAddGrad},
      {"Softmax", softmax<false>},
      {"LogSoftmax", softmax<true>},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseSoftmaxCrossEntropy},
      {"ReluGrad", reluGrad},
      {"Conv2D", conv2D},
      {"MaxPool", pool<true>},
      {"AvgPool", pool<false>},
  };
}
