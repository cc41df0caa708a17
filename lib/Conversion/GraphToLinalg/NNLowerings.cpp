//===- NNLowerings.cpp - neural-network ops to linalg ---------------------===//
//
// Bias, softmax, cross-entropy and batch normalization as element-wise maps
// and reductions over the class or channel dimension, computed as the
// reference kernels do (softmax shifted by the row maximum; batch
// statistics as the mean, then the mean squared deviation from it).
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
// The activations (Relu, Elu, Softplus, ...) and their gradients are
// element-wise maps built by MathLowerings.cpp's element-wise lowering.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Ops/ElementwiseOps.h"
#include "cleave/Ops/NNShapeChecks.h"
#include "cleave/Ops/WindowAttrs.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

static LogicalResult floatOnly(NodeLowering &ctx, unsigned input) {
  if (!isFloatDType(ctx.dtype(input)))
    return ctx.error() << "dtype " << cleave::dtypeName(ctx.dtype(input))
                       << " is not supported";
  return success();
}

/// The channel dimension of a BiasAdd-like op.
static int64_t channelDim(NodeLowering &ctx, int64_t rank) {
  bool nchw = ctx.getString("data_format").value_or("NHWC") == "NCHW";
  return nchw ? 1 : rank - 1;
}

/// `bias` [C] reshaped to broadcast along `channel` of a rank-`rank` tensor.
static Value biasView(NodeLowering &ctx, Value bias, int64_t c, int64_t channel,
                      int64_t rank, int32_t dtype) {
  std::vector<int64_t> shape(rank - channel, 1);
  shape[0] = c;
  return ctx.reshape(bias, {c}, shape, dtype);
}

static LogicalResult biasAdd(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  int32_t dtype = ctx.dtype(0);
  const std::vector<int64_t> &value = ctx.shape(0);
  int64_t rank = value.size();
  if (rank < 2 || ctx.shape(1).size() != 1)
    return ctx.error() << "Input tensor must be at least 2D and bias a vector";
  int64_t channel = channelDim(ctx, rank), c = value[channel];
  if (ctx.shape(1)[0] != c)
    return ctx.error() << "Must provide as many biases as the channel "
                          "dimension of the input tensor: "
                       << ctx.shape(1)[0] << " vs. " << c;
  Value bias = biasView(ctx, ctx.tensor(1), c, channel, rank, dtype);
  ctx.setOutput(0,
                ctx.map({ctx.tensor(0), bias}, value, dtype,
                        [](OpBuilder &b, Location loc, ValueRange args) {
                          return b.create<arith::AddFOp>(loc, args[0], args[1])
                              .getResult();
                        }),
                dtype);
  return success();
}

static LogicalResult biasAddGrad(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  int32_t dtype = ctx.dtype(0);
  const std::vector<int64_t> &grad = ctx.shape(0);
  int64_t rank = grad.size();
  if (rank < 2)
    return ctx.error() << "Input tensor must be at least 2D";
  int64_t channel = channelDim(ctx, rank);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != channel)
      axes.push_back(d);
  ctx.setOutput(0,
                ctx.reduce(ctx.tensor(0), grad, dtype, axes,
                           ctx.scalar(dtype, 0),
                           [](OpBuilder &b, Location loc, ValueRange args) {
                             return b.create<arith::AddFOp>(loc, args[1],
                                                            args[0])
                                 .getResult();
                           }),
                dtype);
  return success();
}

namespace {
/// The pieces every softmax shares, over the last dimension of `logits`:
/// shifted = logits - max, and log(sum(exp(shifted))), the latter shaped
/// [rows..., 1] to broadcast against the logits.
struct SoftmaxParts {
  Value shifted, logSum;
};
} // namespace

static SoftmaxParts softmaxParts(NodeLowering &ctx, Value logits,
                                 const std::vector<int64_t> &shape,
                                 int32_t dtype) {
  int64_t rank = shape.size();
  std::vector<int64_t> rows(shape.begin(), shape.end() - 1), kept = shape;
  kept.back() = 1;
  Type type = ctx.elementType(dtype);
  Value lowest = ctx.b.create<arith::ConstantOp>(
      ctx.loc, ctx.b.getFloatAttr(
                   type, -std::numeric_limits<double>::infinity()));
  Value max = ctx.reduce(logits, shape, dtype, {rank - 1}, lowest,
                         [](OpBuilder &b, Location loc, ValueRange args) {
                           Value greater = b.create<arith::CmpFOp>(
                               loc, arith::CmpFPredicate::OGT, args[0],
                               args[1]);
                           return b.create<arith::SelectOp>(loc, greater,
                                                            args[0], args[1])
                               .getResult();
                         });
  max = ctx.reshape(max, rows, kept, dtype);
  Value shifted = ctx.map({logits, max}, shape, dtype,
                          [](OpBuilder &b, Location loc, ValueRange args) {
                            return b.create<arith::SubFOp>(loc, args[0],
                                                           args[1])
                                .getResult();
                          });
  Value sum = ctx.reduce(shifted, shape, dtype, {rank - 1},
                         ctx.scalar(dtype, 0),
                         [](OpBuilder &b, Location loc, ValueRange args) {
                           return b.create<arith::AddFOp>(
                                      loc, args[1],
                                      b.create<math::ExpOp>(loc, args[0]))
                               .getResult();
                         });
  Value logSum = ctx.map({sum}, rows, dtype,
                         [](OpBuilder &b, Location loc, ValueRange args) {
                           return b.create<math::LogOp>(loc, args[0])
                               .getResult();
                         });
  return {shifted, ctx.reshape(logSum, rows, kept, dtype)};
}

template <bool isLog> static LogicalResult softmax(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  if (shape.empty())
    return ctx.error() << "logits must be a floating tensor of rank >= 1";
  int32_t dtype = ctx.dtype(0);
  SoftmaxParts parts = softmaxParts(ctx, ctx.tensor(0), shape, dtype);
  ctx.setOutput(
      0,
      ctx.map({parts.shifted, parts.logSum}, shape, dtype,
              [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                Value logP = b.create<arith::SubFOp>(loc, args[0], args[1]);
                if (isLog)
                  return logP;
                return b.create<math::ExpOp>(loc, logP);
              }),
      dtype);
  return success();
}

/// SparseSoftmaxCrossEntropyWithLogits: loss = logSum - shifted[label],
/// backprop = softmax - onehot(label). A label outside [0, classes) gives
/// NaN for its row, as TensorFlow's GPU kernel does, where the reference
/// kernel fails.
static LogicalResult sparseSoftmaxCrossEntropy(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  if (std::string error =
          ops::checkSparseCrossEntropyShapes(shape, ctx.shape(1));
      !error.empty())
    return ctx.error() << error;
  int32_t dtype = ctx.dtype(0), labelType = ctx.dtype(1);
  int64_t batch = shape[0], classes = shape[1];
  SoftmaxParts parts = softmaxParts(ctx, ctx.tensor(0), shape, dtype);
  Type type = ctx.elementType(dtype);
  Value labels = ctx.reshape(ctx.tensor(1), {batch}, {batch, 1}, labelType);
  auto validLabel = [&](OpBuilder &b, Location loc, Value label) {
    Value zero = b.create<arith::ConstantOp>(loc,
                                             b.getIntegerAttr(label.getType(), 0));
    Value top = b.create<arith::ConstantOp>(
        loc, b.getIntegerAttr(label.getType(), classes));
    return b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, label, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, label, top));
  };
  Value nan = ctx.b.create<arith::ConstantOp>(
      ctx.loc,
      ctx.b.getFloatAttr(type, std::numeric_limits<double>::quiet_NaN()));
  Value backprop = ctx.map(
      {parts.shifted, parts.logSum, labels}, shape, dtype,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value p = b.create<math::ExpOp>(
            loc, b.create<arith::SubFOp>(loc, args[0], args[1]));
        Value j = b.create<arith::IndexCastOp>(
            loc, args[2].getType(), b.create<linalg::IndexOp>(loc, 1));
        Value hit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, j,
                                            args[2]);
        Value one = b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 1));
        Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 0));
        Value grad = b.create<arith::SubFOp>(
            loc, p, b.create<arith::SelectOp>(loc, hit, one, zero));
        return b.create<arith::SelectOp>(loc, validLabel(b, loc, args[2]), grad,
                                         nan);
      });
  // loss[b] = logSum[b] - shifted[b, label[b]].
  Value shifted = parts.shifted;
  Value logSum = ctx.reshape(parts.logSum, {batch, 1}, {batch}, dtype);
  Value loss = ctx.map(
      {logSum, ctx.tensor(1)}, {batch}, dtype,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value label = args[1];
        Value valid = validLabel(b, loc, label);
        Value zero = b.create<arith::ConstantOp>(
            loc, b.getIntegerAttr(label.getType(), 0));
        Value safe = b.create<arith::SelectOp>(loc, valid, label, zero);
        Value row = b.create<linalg::IndexOp>(loc, 0);
        Value column = b.create<arith::IndexCastOp>(loc, b.getIndexType(), safe);
        Value picked = b.create<tensor::ExtractOp>(loc, shifted,
                                                   ValueRange{row, column});
        Value value = b.create<arith::SubFOp>(loc, args[0], picked);
        return b.create<arith::SelectOp>(loc, valid, value, nan);
      });
  ctx.setOutput(0, loss, dtype);
  ctx.setOutput(1, backprop, dtype);
  return success();
}

/// SoftmaxCrossEntropyWithLogits with dense labels (broadcast to the
/// logits): loss = sum(labels * (logSum - shifted)), backprop = softmax -
/// labels.
static LogicalResult softmaxCrossEntropy(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  FailureOr<std::vector<int64_t>> shape = ctx.broadcastShapes({0, 1});
  if (failed(shape))
    return failure();
  if (shape->size() != 2)
    return ctx.error() << "logits and labels must be broadcastable to 2-D";
  int32_t dtype = ctx.dtype(0);
  Value logits = ctx.map({ctx.tensor(0)}, *shape, dtype,
                         [](OpBuilder &, Location, ValueRange args) {
                           return args[0];
                         });
  SoftmaxParts parts = softmaxParts(ctx, logits, *shape, dtype);
  Value labels = ctx.tensor(1);
  Value terms = ctx.map(
      {parts.shifted, parts.logSum, labels}, *shape, dtype,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value negLogP = b.create<arith::SubFOp>(loc, args[1], args[0]);
        return b.create<arith::MulFOp>(loc, args[2], negLogP);
      });
  Value loss = ctx.reduce(terms, *shape, dtype, {1}, ctx.scalar(dtype, 0),
                          [](OpBuilder &b, Location loc, ValueRange args) {
                            return b.create<arith::AddFOp>(loc, args[1],
                                                           args[0])
                                .getResult();
                          });
  Value backprop = ctx.map(
      {parts.shifted, parts.logSum, labels}, *shape, dtype,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value p = b.create<math::ExpOp>(
            loc, b.create<arith::SubFOp>(loc, args[0], args[1]));
        return b.create<arith::SubFOp>(loc, p, args[2]);
      });
  ctx.setOutput(0, loss, dtype);
  ctx.setOutput(1, backprop, dtype);
  return success();
}

namespace {
/// What a FusedBatchNorm node computes on: its data's dtype and shape, the
/// channel dimension, the channel count, the reduced axes and how many
/// elements each channel has; training or inference, and epsilon.
struct BatchNormGeometry {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  int64_t channel = 3, c = 0, count = 0;
  std::vector<int64_t> axes;
  bool training = true;
  double epsilon = 0.0001;
};
} // namespace

static FailureOr<BatchNormGeometry> batchNormGeometry(NodeLowering &ctx,
                                                      unsigned xInput) {
  std::string format = ctx.getString("data_format").value_or("NHWC");
  const std::vector<int64_t> &x = ctx.shape(xInput);
  if (x.size() != 4 || (format != "NHWC" && format != "NCHW"))
    return ctx.error() << "input must be 4-dimensional in NHWC or NCHW, got "
                       << cleave::shapeString(x) << " in " << format,
           failure();
  // The reference kernel computes in double; half and mixed precision
  // (float16 x with float32 scale) do not lower yet.
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    if (ctx.dtype(i) != ctx.dtype(xInput))
      return ctx.error() << "dtype " << cleave::dtypeName(ctx.dtype(i))
                         << " of input " << i << " differs from x's "
                         << cleave::dtypeName(ctx.dtype(xInput))
                         << ": mixed precision is not supported",
             failure();
  if (failed(floatOnly(ctx, xInput)))
    return failure();
  BatchNormGeometry g;
  g.dtype = ctx.dtype(xInput);
  g.shape = x;
  g.training = ctx.getBool("is_training").value_or(true);
  g.epsilon = ctx.getFloat("epsilon").value_or(0.0001);
  g.channel = format == "NCHW" ? 1 : 3;
  g.c = x[g.channel];
  g.count = 1;
  for (int64_t d = 0; d < 4; ++d)
    if (d != g.channel) {
      g.axes.push_back(d);
      g.count *= x[d];
    }
  return g;
}

/// Per-channel sums of `value` (shaped like x).
static Value channelSums(NodeLowering &ctx, Value value,
                         const std::vector<int64_t> &shape,
                         const BatchNormGeometry &g, int32_t dtype) {
  return ctx.reduce(value, shape, dtype, g.axes, ctx.scalar(dtype, 0),
                    [](OpBuilder &b, Location loc, ValueRange args) {
                      return b.create<arith::AddFOp>(loc, args[1], args[0])
                          .getResult();
                    });
}

/// An elementwise map over per-channel [C] tensors.
static Value channelMap(NodeLowering &ctx, ArrayRef<Value> operands, int64_t c,
                        int32_t dtype, NodeLowering::ElementFn body) {
  return ctx.map(operands, {c}, dtype, body);
}

static Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::AddFOp>(loc, x, y);
}
static Value subF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::SubFOp>(loc, x, y);
}
static Value mulF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::MulFOp>(loc, x, y);
}
static Value divF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::DivFOp>(loc, x, y);
}

/// 1 / sqrt(variance + epsilon), per channel.
static Value inverseStd(NodeLowering &ctx, Value variance, int64_t c,
                        int32_t dtype, double epsilon) {
  Value eps = ctx.scalar(dtype, epsilon);
  Value one = ctx.scalar(dtype, 1);
  return channelMap(ctx, {variance}, c, dtype,
                    [&](OpBuilder &b, Location loc, ValueRange args) {
                      return divF(b, loc, one,
                                  b.create<math::SqrtOp>(
                                      loc, addF(b, loc, args[0], eps)));
                    });
}

/// FusedBatchNormV3(x, scale, offset, mean, variance): y, batch_mean,
/// batch_variance, reserve_space_1..3, as the reference kernel.
static LogicalResult fusedBatchNorm(NodeLowering &ctx) {
  FailureOr<BatchNormGeometry> g = batchNormGeometry(ctx, 0);
  if (failed(g))
    return failure();
  int32_t dtype = g->dtype;
  const std::vector<int64_t> &shape = g->shape;
  int64_t c = g->c;
  bool training = g->training;
  double factor = ctx.getFloat("exponential_avg_factor").value_or(1.0);
  // The shape function checked scale and offset, and mean and variance
  // where they are read (inference, or a running average): [c] each.
  auto view = [&](Value perChannel) {
    return biasView(ctx, perChannel, c, g->channel, 4, dtype);
  };
  Value x = ctx.tensor(0);
  Value mean, variance;
  if (training) {
    // An empty batch leaves the statistics at 0, as the reference kernel.
    Value count = ctx.scalar(dtype, double(std::max<int64_t>(g->count, 1)));
    auto divideByCount = [&](Value sums) {
      return channelMap(ctx, {sums}, c, dtype,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          return divF(b, loc, args[0], count);
                        });
    };
    mean = divideByCount(channelSums(ctx, x, shape, *g, dtype));
    Value squares = ctx.map({x, view(mean)}, shape, dtype,
                            [](OpBuilder &b, Location loc, ValueRange args) {
                              Value d = subF(b, loc, args[0], args[1]);
                              return mulF(b, loc, d, d);
                            });
    variance = divideByCount(channelSums(ctx, squares, shape, *g, dtype));
  } else {
    mean = ctx.tensor(3);
    variance = ctx.tensor(4);
  }
  Value invStd = inverseStd(ctx, variance, c, dtype, g->epsilon);
  ctx.setOutput(
      0,
      ctx.map({x, view(mean), view(invStd), view(ctx.tensor(1)),
               view(ctx.tensor(2))},
              shape, dtype,
              [](OpBuilder &b, Location loc, ValueRange args) {
                Value normalized =
                    mulF(b, loc, subF(b, loc, args[0], args[1]), args[2]);
                return addF(b, loc, mulF(b, loc, normalized, args[3]),
                            args[4]);
              }),
      dtype);
  Value batchMean = mean, batchVariance = variance;
  if (training) {
    // The unbiased variance for the running average, blended into the
    // running statistics when exponential_avg_factor is not 1.
    if (g->count > 1) {
      Value correction =
          ctx.scalar(dtype, double(g->count) / double(g->count - 1));
      batchVariance = channelMap(ctx, {variance}, c, dtype,
                                 [&](OpBuilder &b, Location loc,
                                     ValueRange args) {
                                   return mulF(b, loc, args[0], correction);
                                 });
    }
    if (factor != 1.0) {
      Value keep = ctx.scalar(dtype, 1 - factor);
      Value take = ctx.scalar(dtype, factor);
      auto blend = [&](Value running, Value batch) {
        return channelMap(ctx, {running, batch}, c, dtype,
                          [&](OpBuilder &b, Location loc, ValueRange args) {
                            return addF(b, loc, mulF(b, loc, keep, args[0]),
                                        mulF(b, loc, take, args[1]));
                          });
      };
      batchMean = blend(ctx.tensor(3), mean);
      batchVariance = blend(ctx.tensor(4), batchVariance);
    }
  }
  ctx.setOutput(1, batchMean, dtype);
  ctx.setOutput(2, batchVariance, dtype);
  ctx.setOutput(3, mean, dtype);
  ctx.setOutput(4, variance, dtype);
  // TensorFlow's CPU kernel gives a dummy scalar.
  ctx.setOutput(5, ctx.filled({}, dtype, ctx.scalar(dtype, 0)), dtype);
  return success();
}

/// FusedBatchNormGradV3(y_backprop, x, scale, reserve_space_1..3): x, scale
/// and offset gradients, from the mean and (biased) variance the forward
/// op saved (training) or was given (inference).
static LogicalResult fusedBatchNormGrad(NodeLowering &ctx) {
  FailureOr<BatchNormGeometry> g = batchNormGeometry(ctx, 1);
  if (failed(g))
    return failure();
  int32_t dtype = g->dtype;
  const std::vector<int64_t> &shape = g->shape;
  int64_t c = g->c;
  bool training = g->training;
  if (ctx.shape(0) != shape)
    return ctx.error() << "x and y_backprop must have same shape, but x has "
                          "shape "
                       << shapeString(shape) << " and y_backprop has shape "
                       << shapeString(ctx.shape(0));
  // The shape function checked scale and the statistics: [c] each.
  auto view = [&](Value perChannel) {
    return biasView(ctx, perChannel, c, g->channel, 4, dtype);
  };
  Value dy = ctx.tensor(0);
  Value invStd = inverseStd(ctx, ctx.tensor(4), c, dtype, g->epsilon);
  Value xhat = ctx.map({ctx.tensor(1), view(ctx.tensor(3)), view(invStd)},
                       shape, dtype,
                       [](OpBuilder &b, Location loc, ValueRange args) {
                         return mulF(b, loc, subF(b, loc, args[0], args[1]),
                                     args[2]);
                       });
  Value sumDy = channelSums(ctx, dy, shape, *g, dtype);
  Value dyXhat = ctx.map({dy, xhat}, shape, dtype,
                         [](OpBuilder &b, Location loc, ValueRange args) {
                           return mulF(b, loc, args[0], args[1]);
                         });
  Value sumDyXhat = channelSums(ctx, dyXhat, shape, *g, dtype);
  // scale * invStd per channel, then dx.
  Value gain = channelMap(ctx, {ctx.tensor(2), invStd}, c, dtype,
                          [](OpBuilder &b, Location loc, ValueRange args) {
                            return mulF(b, loc, args[0], args[1]);
                          });
  Value dx;
  if (training) {
    Value count = ctx.scalar(dtype, double(std::max<int64_t>(g->count, 1)));
    dx = ctx.map({dy, xhat, view(sumDy), view(sumDyXhat), view(gain)}, shape,
                 dtype, [&](OpBuilder &b, Location loc, ValueRange args) {
                   Value centered = addF(b, loc, args[2],
                                         mulF(b, loc, args[1], args[3]));
                   Value g = subF(b, loc, args[0],
                                  divF(b, loc, centered, count));
                   return mulF(b, loc, args[4], g);
                 });
  } else {
    dx = ctx.map({dy, view(gain)}, shape, dtype,
                 [](OpBuilder &b, Location loc, ValueRange args) {
                   return mulF(b, loc, args[1], args[0]);
                 });
  }
  ctx.setOutput(0, dx, dtype);
  ctx.setOutput(1, sumDyXhat, dtype);
  ctx.setOutput(2, sumDy, dtype);
  for (unsigned i : {3u, 4u})
    ctx.setOutput(i, ctx.empty({0}, dtype), dtype);
  return success();
}

namespace {
/// One spatial dimension of a window: output size and the padding before
/// and after the input, as TensorFlow's GetWindowedOutputSize.
struct Window {
  int64_t in = 0, size = 0, stride = 1, dilation = 1;
  int64_t out = 0, padBefore = 0, padAfter = 0;
  int64_t effective() const { return (size - 1) * dilation + 1; }
};
} // namespace

static Window makeWindow(const ops::WindowAttrs &attrs, int dim, int64_t in,
                         int64_t size) {
  ops::WindowDim d = ops::windowDim(attrs, dim, in, size);
  Window w{in, size, attrs.strides[dim], attrs.dilations[dim]};
  w.out = d.out;
  w.padBefore = d.before;
  w.padAfter = d.after;
  return w;
}

namespace {
/// The NHWC geometry of a convolution or pooling node.
struct Geometry {
  int64_t n = 0, c = 0, oc = 0;
  Window h, w;
  std::vector<int64_t> outputShape() const { return {n, h.out, w.out, oc}; }
  std::vector<int64_t> inputShape() const { return {n, h.in, w.in, c}; }
};
} // namespace

/// The window attrs, reordered to NHWC (cleave/Ops/WindowAttrs.h), with
/// TensorFlow's messages.
static FailureOr<ops::WindowAttrs> readWindow(NodeLowering &ctx, bool hasKsize,
                                              bool hasDilations) {
  ops::WindowAttrs attrs;
  std::string error =
      ops::readWindowAttrs(ctx, hasKsize, hasDilations, attrs);
  if (!error.empty())
    return ctx.error() << error, failure();
  return attrs;
}

static FailureOr<Geometry> convGeometry(NodeLowering &ctx,
                                        const std::vector<int64_t> &in,
                                        const std::vector<int64_t> &filter) {
  FailureOr<ops::WindowAttrs> attrs =
      readWindow(ctx, /*hasKsize=*/false, /*hasDilations=*/true);
  if (failed(attrs))
    return failure();
  if (in.size() != 4 || filter.size() != 4)
    return ctx.error() << "input and filter must be 4-D", failure();
  if (filter[2] != in[3])
    return ctx.error() << "input depth " << in[3]
                       << " does not match the filter's input depth "
                       << filter[2]
                       << " (grouped convolutions are not supported yet)",
           failure();
  Geometry g;
  g.n = in[0], g.c = in[3], g.oc = filter[3];
  g.h = makeWindow(*attrs, 1, in[1], filter[0]);
  g.w = makeWindow(*attrs, 2, in[2], filter[1]);
  return g;
}

static FailureOr<Geometry> poolGeometry(NodeLowering &ctx,
                                        const std::vector<int64_t> &in) {
  FailureOr<ops::WindowAttrs> attrs =
      readWindow(ctx, /*hasKsize=*/true, /*hasDilations=*/false);
  if (failed(attrs))
    return failure();
  if (in.size() != 4)
    return ctx.error() << "input must be 4-D", failure();
  Geometry g;
  g.n = in[0], g.c = in[3], g.oc = in[3];
  g.h = makeWindow(*attrs, 1, in[1], attrs->ksize[1]);
  g.w = makeWindow(*attrs, 2, in[2], attrs->ksize[2]);
  return g;
}

static LogicalResult checkShape(NodeLowering &ctx, const char *what,
                                const std::vector<int64_t> &actual,
                                const std::vector<int64_t> &expected) {
  if (actual != expected)
    return ctx.error() << what << " has shape " << cleave::shapeString(actual)
                       << ", but the forward output has shape "
                       << cleave::shapeString(expected);
  return success();
}

/// Pads the spatial dimensions of an NHWC tensor with `value`.
static Value padSpatial(NodeLowering &ctx, Value input, const Geometry &g,
                        int64_t hLow, int64_t hHigh, int64_t wLow,
                        int64_t wHigh, Value value, int32_t dtype) {
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

static LogicalResult floatOnly(NodeLowering &ctx, int32_t dtype) {
  if (!isFloatDType(dtype))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported";
  return success();
}

static LogicalResult conv2D(NodeLowering &ctx) {
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
static LogicalResult conv2DBackpropInput(NodeLowering &ctx) {
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
  // Padding wider than the window (EXPLICIT) makes a side negative: the
  // gradient rows there read only padding and are cut off instead.
  if (hLow < 0 || wLow < 0 || hHigh < 0 || wHigh < 0) {
    int64_t top = std::max<int64_t>(-hLow, 0),
            left = std::max<int64_t>(-wLow, 0);
    int64_t rows = spreadH - top - std::max<int64_t>(-hHigh, 0);
    int64_t cols = spreadW - left - std::max<int64_t>(-wHigh, 0);
    if (rows < 0 || cols < 0)
      return ctx.error() << "unexpected convolution geometry";
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(top),
                                         b.getIndexAttr(left),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(g->n), b.getIndexAttr(rows), b.getIndexAttr(cols),
        b.getIndexAttr(g->oc)};
    SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
    dy = b.create<tensor::ExtractSliceOp>(
        loc, ctx.tensorType({g->n, rows, cols, g->oc}, dtype), dy, offsets,
        sizes, ones);
    hLow = std::max<int64_t>(hLow, 0), wLow = std::max<int64_t>(wLow, 0);
    hHigh = std::max<int64_t>(hHigh, 0), wHigh = std::max<int64_t>(wHigh, 0);
  }
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
static LogicalResult conv2DBackpropFilter(NodeLowering &ctx) {
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
static std::vector<double> windowCounts(const Geometry &g) {
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

static Value countsTensor(NodeLowering &ctx, const Geometry &g, int32_t dtype) {
  cleave::Tensor counts(dtype, {g.h.out, g.w.out, 1});
  for (auto [i, v] : llvm::enumerate(windowCounts(g)))
    counts.setFromDouble(i, v);
  return ctx.constantTensor(counts);
}

template <bool isMax> static LogicalResult pool(NodeLowering &ctx) {
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

namespace {
/// For each input element (b, iy, ix, k): the sum over the windows (y, x)
/// that contain it of `contribution` at (b, y, x, k), which may narrow
/// `valid` to reject a window.
using WindowValueFn = llvm::function_ref<Value(
    OpBuilder &, Location, ValueRange index /* b, y, x, k */, Value &valid)>;
} // namespace

static Value gatherWindows(NodeLowering &ctx, const Geometry &g, int32_t dtype,
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
static LogicalResult maxPoolGrad(NodeLowering &ctx) {
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
static LogicalResult avgPoolGrad(NodeLowering &ctx) {
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

/// The activations are element-wise maps (MathLowerings.cpp).
template <ops::UnaryOp op> static LogicalResult activation(NodeLowering &ctx) {
  return lowerUnaryElementwise(ctx, op);
}
template <ActivationGrad op>
static LogicalResult activationGrad(NodeLowering &ctx) {
  return lowerActivationGrad(ctx, op);
}

/// LeakyRelu(x) and LeakyReluGrad(dy, x): a select on x > 0 of the value
/// passed through (x, or dy) and alpha times it.
template <bool isGrad> static LogicalResult leakyRelu(NodeLowering &ctx) {
  unsigned features = isGrad ? 1 : 0;
  int32_t dtype = ctx.dtype(features);
  if (dtype != kFloat && dtype != kDouble)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  const std::vector<int64_t> &shape = ctx.shape(features);
  if (isGrad && ctx.shape(0) != shape)
    return ctx.error() << "gradients and features must have the same shape: "
                       << shapeString(ctx.shape(0)) << " vs. "
                       << shapeString(shape);
  Type type = ctx.elementType(dtype);
  double alpha = ctx.getFloat("alpha").value_or(0.2);
  ctx.setOutput(
      0,
      ctx.map(
          {ctx.tensor(0), ctx.tensor(features)}, shape, dtype,
          [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
            Value zero =
                b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 0.0));
            Value scaled = b.create<arith::MulFOp>(
                loc, args[0],
                b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, alpha)));
            Value positive = b.create<arith::CmpFOp>(
                loc, arith::CmpFPredicate::OGT, args[1], zero);
            return b.create<arith::SelectOp>(loc, positive, args[0], scaled);
          }),
      dtype);
  return success();
}

/// TopKV2: k is a compile-time constant (the results' shape); the
/// selection calls the kernel library (cleave_cpu_topk), which runs the
/// reference kernel's code, so ties come out in the same order.
static LogicalResult topKV2(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> kValue = ctx.constantInts(1);
  if (failed(kValue))
    return failure();
  if (!ctx.shape(1).empty())
    return ctx.error() << "k must be scalar, got shape "
                       << cleave::shapeString(ctx.shape(1));
  int64_t k = kValue->front();
  const std::vector<int64_t> &input = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  int32_t indexType = ctx.getType("index_type").value_or(cleave::kInt32);
  if (k < 0)
    return ctx.error() << "Need k >= 0, got " << k;
  if (input.empty())
    return ctx.error() << "input must be >= 1-D, got shape "
                       << cleave::shapeString(input);
  int64_t n = input.back(), rows = 1;
  if (n < k)
    return ctx.error() << "input must have at least k columns. Had " << n
                       << ", needed " << k;
  if (dtype == cleave::kBool || !ctx.elementType(dtype) ||
      !ctx.elementType(dtype).isIntOrFloat())
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported";
  for (size_t d = 0; d + 1 < input.size(); ++d)
    rows *= input[d];
  std::vector<int64_t> shape = input;
  shape.back() = k;
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto allocate = [&](int32_t type) -> Value {
    RankedTensorType tensorType = ctx.tensorType(shape, type);
    return b.create<memref::AllocOp>(
        loc,
        MemRefType::get(tensorType.getShape(), tensorType.getElementType()));
  };
  Value values = allocate(dtype), indices = allocate(indexType);
  auto i64 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  };
  Type index = b.getIndexType(), i64Type = b.getI64Type();
  b.create<func::CallOp>(
      loc,
      ctx.declareRuntimeFunction(
          "cleave_cpu_topk",
          {i64Type, i64Type, index, i64Type, i64Type, i64Type, index, index},
          {}),
      ValueRange{
          i64(dtype), i64(indexType), ctx.bufferAddress(ctx.tensor(0)),
          i64(rows), i64(n), i64(k),
          b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, values),
          b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, indices)});
  auto asTensor = [&](Value buffer, int32_t type) -> Value {
    return b.create<bufferization::ToTensorOp>(loc, ctx.tensorType(shape, type),
                                               buffer, /*restrict=*/true,
                                               /*writable=*/true);
  };
  ctx.setOutput(0, asTensor(values, dtype), dtype);
  ctx.setOutput(1, asTensor(indices, indexType), indexType);
  return success();
}

/// InTopKV2: per row, whether fewer than k classes score strictly higher
/// than the target, which must be in range and score a finite value: the
/// target's score and validity per row, then a count over the classes.
static LogicalResult inTopKV2(NodeLowering &ctx) {
  const std::vector<int64_t> &predictions = ctx.shape(0),
                             &targets = ctx.shape(1);
  if (predictions.size() != 2)
    return ctx.error() << "predictions must be 2-dimensional";
  if (targets.size() != 1)
    return ctx.error() << "targets must be 1-dimensional";
  if (!ctx.shape(2).empty())
    return ctx.error() << "k must be 0 D";
  int64_t batch = predictions[0], classes = predictions[1];
  if (targets[0] != batch)
    return ctx.error() << "First dimension of predictions " << batch
                       << " must match length of targets " << targets[0];
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value scores = ctx.tensor(0), targetTensor = ctx.tensor(1);
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  auto asI64 = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return v.getType() == i64 ? v : nb.create<arith::ExtSIOp>(l, i64, v);
  };
  // The target's score per row, NaN where the target is out of range (a
  // NaN target score is never in the top k).
  Value targetScores = ctx.map(
      {targetTensor}, {batch}, cleave::kFloat,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value target = asI64(nb, l, args[0]);
        auto constant = [&](int64_t v) -> Value {
          return nb.create<arith::ConstantOp>(l, nb.getI64IntegerAttr(v));
        };
        Value inside = nb.create<arith::AndIOp>(
            l,
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, target,
                                     constant(0)),
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, target,
                                     constant(classes)));
        Value at = nb.create<arith::IndexCastOp>(
            l, nb.getIndexType(),
            nb.create<arith::SelectOp>(l, inside, target, constant(0)));
        Value row = nb.create<linalg::IndexOp>(l, 0);
        Value score =
            classes
                ? nb.create<tensor::ExtractOp>(l, scores, ValueRange{row, at})
                      .getResult()
                : nb.create<arith::ConstantOp>(l, nb.getFloatAttr(f32, 0))
                      .getResult();
        Value nan = nb.create<arith::ConstantOp>(l, nb.getFloatAttr(f32, NAN));
        Value inf =
            nb.create<arith::ConstantOp>(l, nb.getFloatAttr(f32, INFINITY));
        Value finite =
            nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE,
                                     nb.create<math::AbsFOp>(l, score), inf);
        return nb.create<arith::SelectOp>(
            l, nb.create<arith::AndIOp>(l, inside, finite), score, nan);
      });
  // How many classes score higher, per row.
  MLIRContext *context = b.getContext();
  AffineExpr r = getAffineDimExpr(0, context), c = getAffineDimExpr(1, context);
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value counts = ctx.filled({batch}, cleave::kInt64, zero);
  auto count = b.create<linalg::GenericOp>(
      loc, TypeRange{counts.getType()}, ValueRange{scores, targetScores},
      ValueRange{counts},
      SmallVector<AffineMap>{AffineMap::get(2, 0, {r, c}, context),
                             AffineMap::get(2, 0, {r}, context),
                             AffineMap::get(2, 0, {r}, context)},
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                       utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value higher = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                args[0], args[1]);
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::AddIOp>(
                   l, args[2], nb.create<arith::ExtUIOp>(l, i64, higher))});
      });
  Value k = asI64(
      b, loc, b.create<tensor::ExtractOp>(loc, ctx.tensor(2), ValueRange{}));
  ctx.setOutput(
      0,
      ctx.map({targetScores, count.getResult(0)}, {batch}, cleave::kBool,
              [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                Value valid = nb.create<arith::CmpFOp>(
                    l, arith::CmpFPredicate::ORD, args[0], args[0]);
                return nb.create<arith::AndIOp>(
                    l, valid,
                    nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt,
                                             args[1], k));
              }),
      cleave::kBool);
  return success();
}

/// L2Loss: sum(t^2) / 2 over every element, float accumulating in double
/// as the reference kernel and the reductions do.
static LogicalResult l2Loss(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype != kFloat && dtype != kDouble)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  const std::vector<int64_t> &shape = ctx.shape(0);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    axes.push_back(d);
  Type accType = ctx.elementType(kDouble);
  Value sum =
      ctx.reduce(ctx.tensor(0), shape, kDouble, axes, ctx.scalar(kDouble, 0),
                 [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                   Value x = args[0];
                   if (x.getType() != accType)
                     x = b.create<arith::ExtFOp>(loc, accType, x);
                   return b.create<arith::AddFOp>(
                       loc, args[1], b.create<arith::MulFOp>(loc, x, x));
                 });
  Type type = ctx.elementType(dtype);
  ctx.setOutput(
      0,
      ctx.map(
          {sum}, {}, dtype,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value half = b.create<arith::DivFOp>(
                loc, args[0],
                b.create<arith::ConstantOp>(loc, b.getFloatAttr(accType, 2.0)));
            return type == accType
                       ? half
                       : b.create<arith::TruncFOp>(loc, type, half).getResult();
          }),
      dtype);
  return success();
}

namespace {
/// What an input or the output of a windowed op is, for data_format.
enum class Role { Image, ImageShape, Other };
} // namespace

/// `value` (4-D) with its dimensions permuted: result dim d is perm[d].
static Value permuted(NodeLowering &ctx, Value value, int32_t dtype,
                      ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return ctx.b
      .create<linalg::TransposeOp>(ctx.loc, value, ctx.empty(shape, dtype),
                                   perm)
      .getResult()[0];
}

/// Lowers an NCHW node with the NHWC lowering `nhwc`: image inputs and
/// shape inputs reordered to NHWC, the image output back to NCHW (the
/// attrs are reordered where they are read, readWindow).
template <Lowering nhwc, Role in0, Role in1, Role in2, Role out>
static LogicalResult inDataFormat(NodeLowering &ctx) {
  if (ctx.getString("data_format").value_or("NHWC") != "NCHW")
    return nhwc(ctx);
  const Role roles[] = {in0, in1, in2};
  for (unsigned i = 0; i < ctx.getNumInputs() && i < 3; ++i) {
    LoweredValue value = ctx.input(i);
    if (roles[i] == Role::Image) {
      if (value.shape.size() != 4)
        return ctx.error() << "input " << i << " must be 4-D, got shape "
                           << cleave::shapeString(value.shape);
      value.tensor =
          permuted(ctx, ctx.tensor(i), value.dtype, ops::kNCHWToNHWC);
      value.constant.reset();
      for (int d = 0; d < 4; ++d)
        value.shape[d] = ctx.shape(i)[ops::kNCHWToNHWC[d]];
    } else if (roles[i] == Role::ImageShape) {
      FailureOr<std::vector<int64_t>> shape = ctx.constantInts(i);
      if (failed(shape))
        return failure();
      if (shape->size() != 4)
        return ctx.error() << "input " << i << " must hold 4 dimensions";
      Tensor reordered(value.dtype, {4});
      for (int d = 0; d < 4; ++d)
        reordered.setFromDouble(d, double((*shape)[ops::kNCHWToNHWC[d]]));
      value.tensor = nullptr;
      value.constant = reordered;
    } else {
      continue;
    }
    ctx.replaceInput(i, std::move(value));
  }
  if (failed(nhwc(ctx)))
    return failure();
  if (out == Role::Image) {
    LoweredValue result = ctx.output(0);
    ctx.setOutput(0,
                  permuted(ctx, result.tensor, result.dtype, ops::kNHWCToNCHW),
                  result.dtype);
  }
  return success();
}

LoweringTable cleave::conversion::getNNLowerings() {
  return {
      {"L2Loss", l2Loss},
      {"TopKV2", topKV2},
      {"InTopKV2", inTopKV2},
      {"LeakyRelu", leakyRelu<false>},
      {"LeakyReluGrad", leakyRelu<true>},
      {"Relu", activation<ops::UnaryOp::Relu>},
      {"Relu6", activation<ops::UnaryOp::Relu6>},
      {"Elu", activation<ops::UnaryOp::Elu>},
      {"Softplus", activation<ops::UnaryOp::Softplus>},
      {"Softsign", activation<ops::UnaryOp::Softsign>},
      {"ReluGrad", activationGrad<ActivationGrad::Relu>},
      {"Relu6Grad", activationGrad<ActivationGrad::Relu6>},
      {"EluGrad", activationGrad<ActivationGrad::Elu>},
      {"SoftplusGrad", activationGrad<ActivationGrad::Softplus>},
      {"SoftsignGrad", activationGrad<ActivationGrad::Softsign>},
      {"BiasAdd", biasAdd},
      {"BiasAddGrad", biasAddGrad},
      {"Softmax", softmax<false>},
      {"LogSoftmax", softmax<true>},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseSoftmaxCrossEntropy},
      {"SoftmaxCrossEntropyWithLogits", softmaxCrossEntropy},
      {"FusedBatchNormV3", fusedBatchNorm},
      {"FusedBatchNormGradV3", fusedBatchNormGrad},

      {"Conv2D", inDataFormat<conv2D, Role::Image, Role::Other, Role::Other,
                              Role::Image>},
      {"Conv2DBackpropInput",
       inDataFormat<conv2DBackpropInput, Role::ImageShape, Role::Other,
                    Role::Image, Role::Image>},
      {"Conv2DBackpropFilter",
       inDataFormat<conv2DBackpropFilter, Role::Image, Role::Other, Role::Image,
                    Role::Other>},
      {"MaxPool", inDataFormat<pool<true>, Role::Image, Role::Other,
                               Role::Other, Role::Image>},
      {"AvgPool", inDataFormat<pool<false>, Role::Image, Role::Other,
                               Role::Other, Role::Image>},
      {"MaxPoolGrad", inDataFormat<maxPoolGrad, Role::Image, Role::Image,
                                   Role::Image, Role::Image>},
      {"AvgPoolGrad", inDataFormat<avgPoolGrad, Role::ImageShape, Role::Image,
                                   Role::Other, Role::Image>},
  };
}
