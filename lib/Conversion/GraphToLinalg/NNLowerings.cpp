//===- NNLowerings.cpp - neural-network ops to linalg ---------------------===//
//
// Bias, softmax and cross-entropy as element-wise maps and reductions over
// the class dimension, computed as the reference kernels do (shifted by the
// row maximum).
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
    return ctx.error() << "dtype " << interp::dtypeName(ctx.dtype(input))
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

} // namespace

LoweringTable cleave::conversion::getNNLowerings() {
  return {
      {"BiasAdd", biasAdd},
      {"BiasAddGrad", biasAddGrad},
      {"Softmax", softmax<false>},
      {"LogSoftmax", softmax<true>},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseSoftmaxCrossEntropy},
      {"SoftmaxCrossEntropyWithLogits", softmaxCrossEntropy},
  };
}
