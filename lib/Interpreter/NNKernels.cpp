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

void store(Tensor &t, int64_t i, double v) {
  if (t.dtype() == kFloat)
    t.data<float>()[i] = float(v);
  else
    t.data<double>()[i] = v;
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
    store(out, i, value.getAsDouble(i) + bias.getAsDouble((i / inner) % c));
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
    store(out, i, sums[i]);
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
  for (int64_t row = 0; classes && row < logits.numElements() / classes; ++row) {
    double maxV = -INFINITY, sum = 0;
    for (int64_t j = 0; j < classes; ++j)
      maxV = std::max(maxV, logits.getAsDouble(row * classes + j));
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(logits.getAsDouble(row * classes + j) - maxV);
    for (int64_t j = 0; j < classes; ++j) {
      double shifted = logits.getAsDouble(row * classes + j) - maxV;
      store(out, row * classes + j,
            isLog ? shifted - std::log(sum) : std::exp(shifted) / sum);
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
  Tensor loss(logits.dtype(), {batch}), backprop(logits.dtype(), logits.shape());
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
    store(loss, b, logSum - (logits.getAsDouble(b * classes + label) - maxV));
    for (int64_t j = 0; j < classes; ++j) {
      double p = std::exp(logits.getAsDouble(b * classes + j) - maxV - logSum);
      store(backprop, b * classes + j, p - (j == label ? 1 : 0));
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
    store(out, i, features.getAsDouble(i) > 0 ? grads.getAsDouble(i) : 0);
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
  };
}
