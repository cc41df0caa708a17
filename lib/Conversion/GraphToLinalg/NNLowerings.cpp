//===- NNLowerings.cpp - neural-network ops to linalg ---------------------===//
//
// Bias, softmax, cross-entropy and batch normalization as element-wise maps
// and reductions over the class or channel dimension, computed as the
// reference kernels do (softmax shifted by the row maximum; batch
// statistics as the mean, then the mean squared deviation from it).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

namespace {

LogicalResult floatOnly(NodeLowering &ctx, unsigned input) {
  if (!isFloatDType(ctx.dtype(input)))
    return ctx.error() << "dtype " << cleave::dtypeName(ctx.dtype(input))
                       << " is not supported";
  return success();
}

/// The channel dimension of a BiasAdd-like op.
int64_t channelDim(NodeLowering &ctx, int64_t rank) {
  bool nchw = ctx.getString("data_format").value_or("NHWC") == "NCHW";
  return nchw ? 1 : rank - 1;
}

/// `bias` [C] reshaped to broadcast along `channel` of a rank-`rank` tensor.
Value biasView(NodeLowering &ctx, Value bias, int64_t c, int64_t channel,
               int64_t rank, int32_t dtype) {
  std::vector<int64_t> shape(rank - channel, 1);
  shape[0] = c;
  return ctx.reshape(bias, {c}, shape, dtype);
}

LogicalResult biasAdd(NodeLowering &ctx) {
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

LogicalResult biasAddGrad(NodeLowering &ctx) {
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

/// The pieces every softmax shares, over the last dimension of `logits`:
/// shifted = logits - max, and log(sum(exp(shifted))), the latter shaped
/// [rows..., 1] to broadcast against the logits.
struct SoftmaxParts {
  Value shifted, logSum;
};

SoftmaxParts softmaxParts(NodeLowering &ctx, Value logits,
                          const std::vector<int64_t> &shape, int32_t dtype) {
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

template <bool isLog> LogicalResult softmax(NodeLowering &ctx) {
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
LogicalResult sparseSoftmaxCrossEntropy(NodeLowering &ctx) {
  if (failed(floatOnly(ctx, 0)))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  if (shape.size() != 2 || ctx.shape(1).size() != 1 ||
      ctx.shape(1)[0] != shape[0])
    return ctx.error() << "logits must be 2-D and labels 1-D with the same "
                          "batch size";
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
LogicalResult softmaxCrossEntropy(NodeLowering &ctx) {
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

FailureOr<BatchNormGeometry> batchNormGeometry(NodeLowering &ctx,
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
Value channelSums(NodeLowering &ctx, Value value,
                  const std::vector<int64_t> &shape,
                  const BatchNormGeometry &g, int32_t dtype) {
  return ctx.reduce(value, shape, dtype, g.axes, ctx.scalar(dtype, 0),
                    [](OpBuilder &b, Location loc, ValueRange args) {
                      return b.create<arith::AddFOp>(loc, args[1], args[0])
                          .getResult();
                    });
}

/// An elementwise map over per-channel [C] tensors.
Value channelMap(NodeLowering &ctx, ArrayRef<Value> operands, int64_t c,
                 int32_t dtype, NodeLowering::ElementFn body) {
  return ctx.map(operands, {c}, dtype, body);
}

Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::AddFOp>(loc, x, y);
}
Value subF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::SubFOp>(loc, x, y);
}
Value mulF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::MulFOp>(loc, x, y);
}
Value divF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::DivFOp>(loc, x, y);
}

/// 1 / sqrt(variance + epsilon), per channel.
Value inverseStd(NodeLowering &ctx, Value variance, int64_t c, int32_t dtype,
                 double epsilon) {
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
LogicalResult fusedBatchNorm(NodeLowering &ctx) {
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
LogicalResult fusedBatchNormGrad(NodeLowering &ctx) {
  FailureOr<BatchNormGeometry> g = batchNormGeometry(ctx, 1);
  if (failed(g))
    return failure();
  int32_t dtype = g->dtype;
  const std::vector<int64_t> &shape = g->shape;
  int64_t c = g->c;
  bool training = g->training;
  if (ctx.shape(0) != shape)
    return ctx.error() << "x and y_backprop must have the same shape";
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

} // namespace

LoweringTable cleave::conversion::getNNLowerings() {
  return {
      {"BiasAdd", biasAdd},
      {"BiasAddGrad", biasAddGrad},
      {"Softmax", softmax<false>},
      {"LogSoftmax", softmax<true>},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseSoftmaxCrossEntropy},
      {"SoftmaxCrossEntropyWithLogits", softmaxCrossEntropy},
      {"FusedBatchNormV3", fusedBatchNorm},
      {"FusedBatchNormGradV3", fusedBatchNormGrad},
  };
}
