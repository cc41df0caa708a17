//===- NNKernels.cpp - neural-network kernels -----------------------------===//
//
// Float and double only, computed in double: the interpreter is an oracle.
//
//===----------------------------------------------------------------------===//

#include "DataFormat.h"

#include "cleave/Ops/NNShapeChecks.h"
#include "cleave/Ops/WindowAttrs.h"
#include "cleave/Support/TopK.h"

#include <cmath>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

static bool isFloating(const Tensor &t) {
  return t.dtype() == kFloat || t.dtype() == kDouble;
}

static LogicalResult biasAdd(KernelContext &ctx) {
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

static LogicalResult biasAddGrad(KernelContext &ctx) {
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
template <bool isLog> static LogicalResult softmax(KernelContext &ctx) {
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

static LogicalResult sparseSoftmaxCrossEntropy(KernelContext &ctx) {
  const Tensor &logits = ctx.inputs[0], &labels = ctx.inputs[1];
  if (std::string error =
          ops::checkSparseCrossEntropyShapes(logits.shape(), labels.shape());
      !error.empty())
    return ctx.error() << error;
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

static LogicalResult reluGrad(KernelContext &ctx) {
  const Tensor &grads = ctx.inputs[0], &features = ctx.inputs[1];
  if (grads.shape() != features.shape())
    return ctx.error() << "gradients and features must have the same shape, "
                          "got gradients "
                       << shapeString(grads.shape()) << " and features "
                       << shapeString(ctx.inputs[1].shape());
  Tensor out(grads.dtype(), grads.shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFromDouble(i,
                      features.getAsDouble(i) > 0 ? grads.getAsDouble(i) : 0);
  ctx.outputs[0] = out;
  return success();
}
namespace {
/// Window geometry of Conv2D and pooling in NHWC: output size and the
/// padding before the first element, as TensorFlow's GetWindowedOutputSize.
struct Window {
  int64_t out, padBefore;
};
} // namespace

/// Reads the window attrs, reordered to NHWC (cleave/Ops/WindowAttrs.h);
/// fails with TensorFlow's message on bad values.
static FailureOr<ops::WindowAttrs>
windowAttrs(KernelContext &ctx, bool hasKsize, bool hasDilations) {
  ops::WindowAttrs attrs;
  std::string error =
      ops::readWindowAttrs(ctx, hasKsize, hasDilations, attrs);
  if (!error.empty())
    return ctx.error() << error, failure();
  return attrs;
}

static Window window(const ops::WindowAttrs &attrs, int dim, int64_t in,
                     int64_t size) {
  ops::WindowDim w = ops::windowDim(attrs, dim, in, size);
  return {w.out, w.before};
}

namespace {
/// The geometry of an NHWC convolution or pooling window.
struct Conv {
  int64_t n, h, w, c; // input
  int64_t kh, kw, oc; // window (oc: output channels, convolution only)
  std::vector<int64_t> strides, dilations;
  Window wh, ww; // output height and width

  std::vector<int64_t> outputShape() const { return {n, wh.out, ww.out, oc}; }
  /// Calls fn(inputIndex, filterIndex, outputIndex) for every product of a
  /// convolution (filter [kh, kw, c, oc]); padding taps are skipped.
  template <typename Fn> void forEachTap(Fn &&fn) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t y = 0; y < wh.out; ++y)
        for (int64_t x = 0; x < ww.out; ++x)
          for (int64_t i = 0; i < kh; ++i) {
            int64_t iy = y * strides[1] + i * dilations[1] - wh.padBefore;
            if (iy < 0 || iy >= h)
              continue;
            for (int64_t j = 0; j < kw; ++j) {
              int64_t ix = x * strides[2] + j * dilations[2] - ww.padBefore;
              if (ix < 0 || ix >= w)
                continue;
              for (int64_t k = 0; k < c; ++k)
                for (int64_t o = 0; o < oc; ++o)
                  fn(((b * h + iy) * w + ix) * c + k,
                     ((i * kw + j) * c + k) * oc + o,
                     ((b * wh.out + y) * ww.out + x) * oc + o);
            }
          }
  }
  /// Calls fn(outputIndex, inputIndices) for every pooling window (oc == c);
  /// the indices are the window's in-bounds input elements in scan order.
  template <typename Fn> void forEachWindow(Fn &&fn) const {
    std::vector<int64_t> taps;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t y = 0; y < wh.out; ++y)
        for (int64_t x = 0; x < ww.out; ++x)
          for (int64_t k = 0; k < c; ++k) {
            taps.clear();
            for (int64_t i = 0; i < kh; ++i) {
              int64_t iy = y * strides[1] + i - wh.padBefore;
              for (int64_t j = 0; iy >= 0 && iy < h && j < kw; ++j) {
                int64_t ix = x * strides[2] + j - ww.padBefore;
                if (ix >= 0 && ix < w)
                  taps.push_back(((b * h + iy) * w + ix) * c + k);
              }
            }
            fn(((b * wh.out + y) * ww.out + x) * c + k, taps);
          }
  }
};
} // namespace

/// Reads a convolution's attrs for an input of `inShape` and a filter of
/// `filterShape` ([kh, kw, c, oc]).
static FailureOr<Conv> convGeometry(KernelContext &ctx,
                                    const std::vector<int64_t> &inShape,
                                    const std::vector<int64_t> &filterShape) {
  FailureOr<ops::WindowAttrs> attrs =
      windowAttrs(ctx, /*hasKsize=*/false, /*hasDilations=*/true);
  if (failed(attrs))
    return failure();
  if (inShape.size() != 4 || filterShape.size() != 4)
    return ctx.error() << "input and filter must be 4-D, got input "
                       << shapeString(inShape) << " and filter "
                       << shapeString(filterShape),
           failure();
  Conv g;
  g.strides = attrs->strides;
  g.dilations = attrs->dilations;
  g.n = inShape[0], g.h = inShape[1], g.w = inShape[2], g.c = inShape[3];
  g.kh = filterShape[0], g.kw = filterShape[1], g.oc = filterShape[3];
  if (filterShape[2] != g.c)
    return ctx.error() << "input depth " << g.c
                       << " does not match the filter's input depth "
                       << filterShape[2]
                       << " (grouped convolutions are not supported yet)",
           failure();
  g.wh = window(*attrs, 1, g.h, g.kh);
  g.ww = window(*attrs, 2, g.w, g.kw);
  return g;
}

/// Reads a pooling op's attrs for an input of `inShape`.
static FailureOr<Conv> poolGeometry(KernelContext &ctx,
                                    const std::vector<int64_t> &inShape) {
  FailureOr<ops::WindowAttrs> attrs =
      windowAttrs(ctx, /*hasKsize=*/true, /*hasDilations=*/false);
  if (failed(attrs))
    return failure();
  if (inShape.size() != 4)
    return ctx.error() << "input must be 4-D, got " << shapeString(inShape),
           failure();
  Conv g;
  g.strides = attrs->strides;
  g.dilations = attrs->dilations;
  g.n = inShape[0], g.h = inShape[1], g.w = inShape[2], g.c = inShape[3];
  g.kh = attrs->ksize[1], g.kw = attrs->ksize[2], g.oc = g.c;
  g.wh = window(*attrs, 1, g.h, g.kh);
  g.ww = window(*attrs, 2, g.w, g.kw);
  return g;
}

namespace {
/// Sums in double and stores into a tensor of `dtype` and `shape`.
struct Accumulator {
  std::vector<double> sums;
  explicit Accumulator(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    sums.assign(n, 0);
  }
  Tensor finish(int32_t dtype, const std::vector<int64_t> &shape) const {
    Tensor out(dtype, shape);
    for (size_t i = 0; i < sums.size(); ++i)
      out.setFromDouble(i, sums[i]);
    return out;
  }
};
} // namespace

static LogicalResult conv2D(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &filter = ctx.inputs[1];
  if (!isFloating(in))
    return ctx.error() << "Conv2D supports float and double";
  FailureOr<Conv> g = convGeometry(ctx, in.shape(), filter.shape());
  if (failed(g))
    return failure();
  Accumulator out(g->outputShape());
  g->forEachTap([&](int64_t x, int64_t f, int64_t y) {
    out.sums[y] += in.getAsDouble(x) * filter.getAsDouble(f);
  });
  ctx.outputs[0] = out.finish(in.dtype(), g->outputShape());
  return success();
}

/// Checks that `grad` has the shape the forward op would have produced.
static LogicalResult checkGradShape(KernelContext &ctx, const Tensor &grad,
                                    const std::vector<int64_t> &expected) {
  if (grad.shape() != expected)
    return ctx.error() << "out_backprop has shape " << shapeString(grad.shape())
                       << ", but the forward output has shape "
                       << shapeString(expected);
  return success();
}

static LogicalResult conv2DBackpropInput(KernelContext &ctx) {
  std::vector<int64_t> inShape = toInts(ctx.inputs[0]);
  const Tensor &filter = ctx.inputs[1], &dy = ctx.inputs[2];
  FailureOr<Conv> g = convGeometry(ctx, inShape, filter.shape());
  if (failed(g) || failed(checkGradShape(ctx, dy, g->outputShape())))
    return failure();
  Accumulator dx(inShape);
  g->forEachTap([&](int64_t x, int64_t f, int64_t y) {
    dx.sums[x] += dy.getAsDouble(y) * filter.getAsDouble(f);
  });
  ctx.outputs[0] = dx.finish(dy.dtype(), inShape);
  return success();
}

static LogicalResult conv2DBackpropFilter(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &dy = ctx.inputs[2];
  std::vector<int64_t> filterShape = toInts(ctx.inputs[1]);
  FailureOr<Conv> g = convGeometry(ctx, in.shape(), filterShape);
  if (failed(g) || failed(checkGradShape(ctx, dy, g->outputShape())))
    return failure();
  Accumulator df(filterShape);
  g->forEachTap([&](int64_t x, int64_t f, int64_t y) {
    df.sums[f] += in.getAsDouble(x) * dy.getAsDouble(y);
  });
  ctx.outputs[0] = df.finish(dy.dtype(), filterShape);
  return success();
}

/// MaxPool and AvgPool. Padding never takes part: max ignores it, the
/// average divides by the number of real elements, as in TensorFlow.
template <bool isMax> static LogicalResult pool(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  if (!isFloating(in))
    return ctx.error() << "pooling supports float and double";
  FailureOr<Conv> g = poolGeometry(ctx, in.shape());
  if (failed(g))
    return failure();
  Accumulator out(g->outputShape());
  g->forEachWindow([&](int64_t o, const std::vector<int64_t> &taps) {
    double acc = isMax ? -INFINITY : 0;
    for (int64_t t : taps)
      acc = isMax ? std::max(acc, in.getAsDouble(t)) : acc + in.getAsDouble(t);
    out.sums[o] = isMax ? acc : acc / std::max<size_t>(taps.size(), 1);
  });
  ctx.outputs[0] = out.finish(in.dtype(), g->outputShape());
  return success();
}

/// MaxPoolGrad: each window's gradient goes to its first maximum.
static LogicalResult maxPoolGrad(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &grad = ctx.inputs[2];
  FailureOr<Conv> g = poolGeometry(ctx, in.shape());
  if (failed(g))
    return failure();
  for (auto [name, t] :
       {std::pair<const char *, const Tensor *>{"orig_output", &ctx.inputs[1]},
        {"grad", &grad}})
    if (t->shape() != g->outputShape())
      return ctx.error() << "Expected " << name << " shape to be "
                         << shapeString(g->outputShape()) << ", but got "
                         << shapeString(t->shape());
  Accumulator dx(in.shape());
  g->forEachWindow([&](int64_t o, const std::vector<int64_t> &taps) {
    int64_t best = -1;
    for (int64_t t : taps)
      if (best < 0 || in.getAsDouble(t) > in.getAsDouble(best))
        best = t;
    if (best >= 0)
      dx.sums[best] += grad.getAsDouble(o);
  });
  ctx.outputs[0] = dx.finish(grad.dtype(), in.shape());
  return success();
}

/// AvgPoolGrad: each window's gradient is shared by its real elements.
static LogicalResult avgPoolGrad(KernelContext &ctx) {
  std::vector<int64_t> inShape = toInts(ctx.inputs[0]);
  const Tensor &grad = ctx.inputs[1];
  FailureOr<Conv> g = poolGeometry(ctx, inShape);
  if (failed(g) || failed(checkGradShape(ctx, grad, g->outputShape())))
    return failure();
  Accumulator dx(inShape);
  g->forEachWindow([&](int64_t o, const std::vector<int64_t> &taps) {
    for (int64_t t : taps)
      dx.sums[t] += grad.getAsDouble(o) / taps.size();
  });
  ctx.outputs[0] = dx.finish(grad.dtype(), inShape);
  return success();
}

/// SoftmaxCrossEntropyWithLogits: labels are a distribution per row
/// (broadcast to the logits' shape).
static LogicalResult softmaxCrossEntropy(KernelContext &ctx) {
  const Tensor &logits = ctx.inputs[0], &labels = ctx.inputs[1];
  std::vector<int64_t> shape;
  if (!broadcastShape(logits.shape(), labels.shape(), shape) ||
      shape.size() != 2)
    return ctx.error() << "logits and labels must be broadcastable to a "
                          "2-D shape: logits_size="
                       << shapeString(logits.shape())
                       << " labels_size=" << shapeString(labels.shape());
  std::vector<int64_t> li = broadcastIndices(logits.shape(), shape),
                       ti = broadcastIndices(labels.shape(), shape);
  int64_t batch = shape[0], classes = shape[1];
  Tensor loss(logits.dtype(), {batch}), backprop(logits.dtype(), shape);
  for (int64_t b = 0; b < batch; ++b) {
    auto logit = [&](int64_t j) {
      return logits.getAsDouble(li[b * classes + j]);
    };
    auto label = [&](int64_t j) {
      return labels.getAsDouble(ti[b * classes + j]);
    };
    double maxV = -INFINITY, sum = 0, total = 0;
    for (int64_t j = 0; j < classes; ++j)
      maxV = std::max(maxV, logit(j));
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(logit(j) - maxV);
    double logSum = std::log(sum);
    for (int64_t j = 0; j < classes; ++j) {
      double logP = logit(j) - maxV - logSum;
      total -= label(j) * logP;
      backprop.setFromDouble(b * classes + j, std::exp(logP) - label(j));
    }
    loss.setFromDouble(b, total);
  }
  ctx.outputs[0] = loss;
  ctx.outputs[1] = backprop;
  return success();
}

/// FusedBatchNormV3 over the channel dimension (NHWC or NCHW). Training
/// normalizes with the batch statistics and reports the unbiased variance
/// (blended into the running one by exponential_avg_factor); inference
/// uses the given mean and variance.
static LogicalResult fusedBatchNorm(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[0], &scale = ctx.inputs[1],
               &offset = ctx.inputs[2], &mean = ctx.inputs[3],
               &variance = ctx.inputs[4];
  std::string format = ctx.getString("data_format").value_or("NHWC");
  if (x.rank() != 4 || (format != "NHWC" && format != "NCHW"))
    return ctx.error() << "input must be 4-dimensional in NHWC or NCHW, got "
                       << shapeString(x.shape()) << " in " << format;
  bool training = ctx.getBool("is_training").value_or(true);
  double epsilon = ctx.getFloat("epsilon").value_or(0.0001);
  double factor = ctx.getFloat("exponential_avg_factor").value_or(1.0);
  int64_t channel = format == "NCHW" ? 1 : 3, c = x.shape()[channel];
  int64_t inner = format == "NCHW" ? x.shape()[2] * x.shape()[3] : 1;
  for (const Tensor *t : {&scale, &offset})
    if (t->shape() != std::vector<int64_t>{c})
      return ctx.error() << "scale and offset must have shape [" << c << "]";
  if (!training)
    for (const Tensor *t : {&mean, &variance})
      if (t->shape() != std::vector<int64_t>{c})
        return ctx.error() << "mean and variance must have shape [" << c
                           << "] for inference";
  auto channelOf = [&](int64_t i) { return i / inner % c; };
  int64_t count = x.numElements() / std::max<int64_t>(c, 1);
  std::vector<double> mu(c, 0), var(c, 0);
  if (training) {
    for (int64_t i = 0; i < x.numElements(); ++i)
      mu[channelOf(i)] += x.getAsDouble(i) / count;
    for (int64_t i = 0; i < x.numElements(); ++i) {
      double d = x.getAsDouble(i) - mu[channelOf(i)];
      var[channelOf(i)] += d * d / count;
    }
  } else {
    for (int64_t k = 0; k < c; ++k)
      mu[k] = mean.getAsDouble(k), var[k] = variance.getAsDouble(k);
  }
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t k = channelOf(i);
    y.setFromDouble(i, (x.getAsDouble(i) - mu[k]) /
                               std::sqrt(var[k] + epsilon) *
                               scale.getAsDouble(k) +
                           offset.getAsDouble(k));
  }
  int32_t u = scale.dtype();
  Tensor batchMean(u, {c}), batchVar(u, {c}), savedMean(u, {c}),
      savedVar(u, {c});
  for (int64_t k = 0; k < c; ++k) {
    double reportedVar = var[k], reportedMean = mu[k];
    if (training) {
      reportedVar = count > 1 ? var[k] * count / (count - 1) : var[k];
      if (factor != 1.0 && mean.numElements() == c &&
          variance.numElements() == c) {
        reportedMean = (1 - factor) * mean.getAsDouble(k) + factor * mu[k];
        reportedVar =
            (1 - factor) * variance.getAsDouble(k) + factor * reportedVar;
      }
    }
    batchMean.setFromDouble(k, reportedMean);
    batchVar.setFromDouble(k, reportedVar);
    savedMean.setFromDouble(k, mu[k]);
    savedVar.setFromDouble(k, var[k]);
  }
  ctx.outputs[0] = y;
  ctx.outputs[1] = batchMean;
  ctx.outputs[2] = batchVar;
  ctx.outputs[3] = savedMean;
  ctx.outputs[4] = savedVar;
  ctx.outputs[5] = Tensor(u, {}); // TensorFlow's CPU kernel: a dummy scalar
  return success();
}

/// FusedBatchNormGradV3: the backward pass of FusedBatchNormV3, given the
/// mean and (biased) variance it saved (training) or was given
/// (inference).
static LogicalResult fusedBatchNormGrad(KernelContext &ctx) {
  const Tensor &dy = ctx.inputs[0], &x = ctx.inputs[1], &scale = ctx.inputs[2],
               &mean = ctx.inputs[3], &variance = ctx.inputs[4];
  std::string format = ctx.getString("data_format").value_or("NHWC");
  if (x.rank() != 4 || (format != "NHWC" && format != "NCHW"))
    return ctx.error() << "input must be 4-dimensional in NHWC or NCHW, got "
                       << shapeString(x.shape()) << " in " << format;
  if (dy.shape() != x.shape())
    return ctx.error() << "x and y_backprop must have same shape, but x has "
                          "shape "
                       << shapeString(x.shape()) << " and y_backprop has shape "
                       << shapeString(dy.shape());
  bool training = ctx.getBool("is_training").value_or(true);
  double epsilon = ctx.getFloat("epsilon").value_or(0.0001);
  int64_t channel = format == "NCHW" ? 1 : 3, c = x.shape()[channel];
  int64_t inner = format == "NCHW" ? x.shape()[2] * x.shape()[3] : 1;
  for (const Tensor *t : {&scale, &mean, &variance})
    if (t->shape() != std::vector<int64_t>{c})
      return ctx.error() << "scale, reserve_space_1 and reserve_space_2 must "
                            "have shape ["
                         << c << "]";
  auto channelOf = [&](int64_t i) { return i / inner % c; };
  int64_t count = x.numElements() / std::max<int64_t>(c, 1);
  std::vector<double> sumDy(c, 0), sumDyXhat(c, 0), invStd(c);
  for (int64_t k = 0; k < c; ++k)
    invStd[k] = 1 / std::sqrt(variance.getAsDouble(k) + epsilon);
  auto xhat = [&](int64_t i) {
    int64_t k = channelOf(i);
    return (x.getAsDouble(i) - mean.getAsDouble(k)) * invStd[k];
  };
  for (int64_t i = 0; i < x.numElements(); ++i) {
    sumDy[channelOf(i)] += dy.getAsDouble(i);
    sumDyXhat[channelOf(i)] += dy.getAsDouble(i) * xhat(i);
  }
  Tensor dx(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t k = channelOf(i);
    double g = dy.getAsDouble(i);
    if (training)
      g -= (sumDy[k] + xhat(i) * sumDyXhat[k]) / count;
    dx.setFromDouble(i, scale.getAsDouble(k) * invStd[k] * g);
  }
  int32_t u = scale.dtype();
  Tensor dScale(u, {c}), dOffset(u, {c});
  for (int64_t k = 0; k < c; ++k) {
    dScale.setFromDouble(k, sumDyXhat[k]);
    dOffset.setFromDouble(k, sumDy[k]);
  }
  ctx.outputs[0] = dx;
  ctx.outputs[1] = dScale;
  ctx.outputs[2] = dOffset;
  ctx.outputs[3] = Tensor(u, {0});
  ctx.outputs[4] = Tensor(u, {0});
  return success();
}

/// Relu6Grad and EluGrad: dy where the activation is not saturated.
template <bool isElu> static LogicalResult saturatedGrad(KernelContext &ctx) {
  const Tensor &grads = ctx.inputs[0], &second = ctx.inputs[1];
  if (grads.shape() != second.shape())
    return ctx.error() << "gradients and features must have the same shape, "
                          "got gradients "
                       << shapeString(grads.shape()) << " and features "
                       << shapeString(ctx.inputs[1].shape());
  Tensor out(grads.dtype(), grads.shape());
  for (int64_t i = 0; i < out.numElements(); ++i) {
    double g = grads.getAsDouble(i), v = second.getAsDouble(i);
    // Relu6Grad gets the features, EluGrad the outputs.
    double r = isElu ? (v > 0 ? g : g * (v + 1)) : (v > 0 && v < 6 ? g : 0);
    out.setFromDouble(i, r);
  }
  ctx.outputs[0] = out;
  return success();
}
/// SoftplusGrad: dy * sigmoid(x); SoftsignGrad: dy / (1 + |x|)^2.
template <bool isSoftplus> static LogicalResult softGrad(KernelContext &ctx) {
  const Tensor &grads = ctx.inputs[0], &features = ctx.inputs[1];
  if (grads.shape() != features.shape())
    return ctx.error() << "gradients and features must have the same shape, "
                          "got gradients "
                       << shapeString(grads.shape()) << " and features "
                       << shapeString(ctx.inputs[1].shape());
  Tensor out(grads.dtype(), grads.shape());
  for (int64_t i = 0; i < out.numElements(); ++i) {
    double g = grads.getAsDouble(i), x = features.getAsDouble(i);
    double d = 1 + std::abs(x);
    out.setFromDouble(i, isSoftplus ? g / (std::exp(-x) + 1) : g / (d * d));
  }
  ctx.outputs[0] = out;
  return success();
}

/// LeakyRelu(x) = x where x > 0, else alpha * x; LeakyReluGrad(dy, x) = dy
/// where x > 0, else alpha * dy (TensorFlow's selects, in the input type).
template <bool isGrad> static LogicalResult leakyRelu(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[isGrad ? 1 : 0];
  const Tensor &through = ctx.inputs[0];
  if (isGrad && through.shape() != x.shape())
    return ctx.error() << "gradients and features must have the same shape: "
                       << shapeString(through.shape()) << " vs. "
                       << shapeString(x.shape());
  double alpha = ctx.getFloat("alpha").value_or(0.2);
  Tensor out(x.dtype(), x.shape());
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      T v = through.data<T>()[i];
      out.data<T>()[i] = x.data<T>()[i] > T(0) ? v : v * T(alpha);
    }
  };
  if (x.dtype() == kFloat)
    fill(float{});
  else if (x.dtype() == kDouble)
    fill(double{});
  else
    return ctx.error() << "dtype " << dtypeName(x.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// L2Loss: sum(t^2) / 2, accumulated in double as the reductions are.
static LogicalResult l2Loss(KernelContext &ctx) {
  const Tensor &t = ctx.inputs[0];
  if (t.dtype() != kFloat && t.dtype() != kDouble)
    return ctx.error() << "dtype " << dtypeName(t.dtype())
                       << " is not supported";
  double sum = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getAsDouble(i);
    sum += v * v;
  }
  Tensor out(t.dtype(), {});
  out.setFromDouble(0, sum / 2);
  ctx.outputs[0] = out;
  return success();
}

/// TopKV2: the k largest of each innermost row, in descending order, and
/// their indices (cleave/Support/TopK.h: ties in index order).
static LogicalResult topKV2(KernelContext &ctx) {
  const Tensor &input = ctx.inputs[0], &kTensor = ctx.inputs[1];
  if (kTensor.rank() != 0)
    return ctx.error() << "k must be scalar, got shape "
                       << shapeString(kTensor.shape());
  int64_t k = kTensor.getAsInt(0);
  if (k < 0)
    return ctx.error() << "Need k >= 0, got " << k;
  if (input.rank() < 1)
    return ctx.error() << "input must be >= 1-D, got shape "
                       << shapeString(input.shape());
  int64_t n = input.shape().back();
  if (n < k)
    return ctx.error() << "input must have at least k columns. Had " << n
                       << ", needed " << k;
  std::vector<int64_t> shape = input.shape();
  shape.back() = k;
  int32_t indexType = ctx.getType("index_type").value_or(kInt32);
  Tensor values(input.dtype(), shape), indices(indexType, shape);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < input.rank(); ++d)
    rows *= input.shape()[d];
  bool typed = visitNumeric(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (indexType) {
    case kInt16:
      topK(input.data<T>(), rows, n, k, values.data<T>(),
           indices.data<int16_t>());
      break;
    case kInt64:
      topK(input.data<T>(), rows, n, k, values.data<T>(),
           indices.data<int64_t>());
      break;
    default:
      topK(input.data<T>(), rows, n, k, values.data<T>(),
           indices.data<int32_t>());
    }
  });
  if (!typed)
    return ctx.error() << "dtype " << dtypeName(input.dtype())
                       << " is not supported";
  ctx.outputs[0] = values;
  ctx.outputs[1] = indices;
  return success();
}

/// InTopKV2: whether each row's target class is among its k most likely:
/// fewer than k classes score strictly higher. A target out of range or
/// scoring a non-finite value is not.
static LogicalResult inTopKV2(KernelContext &ctx) {
  const Tensor &predictions = ctx.inputs[0], &targets = ctx.inputs[1];
  if (predictions.rank() != 2)
    return ctx.error() << "predictions must be 2-dimensional";
  if (targets.rank() != 1)
    return ctx.error() << "targets must be 1-dimensional";
  if (ctx.inputs[2].rank() != 0)
    return ctx.error() << "k must be 0 D";
  int64_t batch = predictions.shape()[0], classes = predictions.shape()[1];
  if (targets.shape()[0] != batch)
    return ctx.error() << "First dimension of predictions " << batch
                       << " must match length of targets "
                       << targets.shape()[0];
  int64_t k = ctx.inputs[2].getAsInt(0);
  Tensor out(kBool, {batch});
  const float *scores = predictions.data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t target = targets.getAsInt(b);
    bool inside = false;
    if (target >= 0 && target < classes &&
        std::isfinite(scores[b * classes + target])) {
      float score = scores[b * classes + target];
      int64_t higher = 0;
      for (int64_t c = 0; c < classes; ++c)
        higher += scores[b * classes + c] > score;
      inside = higher < k;
    }
    out.data<bool>()[b] = inside;
  }
  ctx.outputs[0] = out;
  return success();
}

KernelTable cleave::interp::getNNKernels() {
  return {
      {"L2Loss", l2Loss},
      {"TopKV2", topKV2},
      {"InTopKV2", inTopKV2},
      {"LeakyRelu", leakyRelu<false>},
      {"LeakyReluGrad", leakyRelu<true>},
      // Element-wise, computed with the math ops (MathKernels.cpp).
      {"Relu", unaryKernel<ops::UnaryOp::Relu>},
      {"Relu6", unaryKernel<ops::UnaryOp::Relu6>},
      {"Elu", unaryKernel<ops::UnaryOp::Elu>},
      {"Softplus", unaryKernel<ops::UnaryOp::Softplus>},
      {"Softsign", unaryKernel<ops::UnaryOp::Softsign>},
      {"BiasAdd", biasAdd},
      {"BiasAddGrad", biasAddGrad},
      {"Softmax", softmax<false>},
      {"LogSoftmax", softmax<true>},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseSoftmaxCrossEntropy},
      {"SoftmaxCrossEntropyWithLogits", softmaxCrossEntropy},
      {"ReluGrad", reluGrad},
      {"Relu6Grad", saturatedGrad<false>},
      {"EluGrad", saturatedGrad<true>},
      {"SoftplusGrad", softGrad<true>},
      {"SoftsignGrad", softGrad<false>},
      {"Conv2D", inDataFormat<conv2D, 4, LayoutRole::Image, LayoutRole::Image>},
      {"Conv2DBackpropInput",
       inDataFormat<conv2DBackpropInput, 4, LayoutRole::Image,
                    LayoutRole::ImageShape, LayoutRole::Other,
                    LayoutRole::Image>},
      {"Conv2DBackpropFilter",
       inDataFormat<conv2DBackpropFilter, 4, LayoutRole::Other,
                    LayoutRole::Image, LayoutRole::Other, LayoutRole::Image>},
      {"MaxPool",
       inDataFormat<pool<true>, 4, LayoutRole::Image, LayoutRole::Image>},
      {"AvgPool",
       inDataFormat<pool<false>, 4, LayoutRole::Image, LayoutRole::Image>},
      {"MaxPoolGrad",
       inDataFormat<maxPoolGrad, 4, LayoutRole::Image, LayoutRole::Image,
                    LayoutRole::Image, LayoutRole::Image>},
      {"AvgPoolGrad", inDataFormat<avgPoolGrad, 4, LayoutRole::Image,
                                   LayoutRole::ImageShape, LayoutRole::Image>},
      {"FusedBatchNormV3", fusedBatchNorm},
      {"FusedBatchNormGradV3", fusedBatchNormGrad},
  };
}
