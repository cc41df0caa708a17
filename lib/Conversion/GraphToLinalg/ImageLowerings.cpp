//===- ImageLowerings.cpp - LRN and resizing on the CPU -------------------===//
//
// LRN and LRNGrad: the window of channels is a reduction over the channels
// padded by the radius. The resize ops: the coordinate maps of
// cleave/Ops/Resize.h, computed at compile time (sizes are static), become
// constant tensors the generated loops read; the gradients gather, for
// each input pixel, the output pixels that read it (their number is small
// and known), instead of scattering.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Kernels/ImageAttrs.h"
#include "cleave/Ops/Resize.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

//===----------------------------------------------------------------------===//
// LRN
//===----------------------------------------------------------------------===//

static Value f32Constant(OpBuilder &b, Location loc, double v) {
  return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(float(v)));
}

/// The sum of `value` ([N, H, W, C] float) over the channels within
/// `radius` of each channel.
static Value windowSum(NodeLowering &ctx, Value value,
                       const std::vector<int64_t> &shape, int64_t radius) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  std::vector<int64_t> paddedShape = shape;
  paddedShape[3] += 2 * radius;
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)),
      high(4, b.getIndexAttr(0));
  low[3] = high[3] = b.getIndexAttr(radius);
  Value padded =
      b.create<tensor::PadOp>(loc, ctx.tensorType(paddedShape, kFloat), value,
                              low, high, f32Constant(b, loc, 0));
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < 5; ++i)
    d.push_back(getAffineDimExpr(i, context));
  // The window is a fifth loop of 2 * radius + 1 steps.
  Value window = ctx.empty({2 * radius + 1}, kFloat);
  Value sums = ctx.filled(shape, kFloat, f32Constant(b, loc, 0));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{sums.getType()}, ValueRange{padded, window},
      ValueRange{sums},
      SmallVector<AffineMap>{
          AffineMap::get(5, 0, {d[0], d[1], d[2], d[3] + d[4]}, context),
          AffineMap::get(5, 0, {d[4]}, context),
          AffineMap::get(5, 0, {d[0], d[1], d[2], d[3]}, context)},
      SmallVector<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::AddFOp>(l, args[2], args[0])});
      });
  return generic.getResult(0);
}

/// bias + alpha * the windowed sum of squares.
static Value lrnNorms(NodeLowering &ctx, Value x,
                      const std::vector<int64_t> &shape,
                      const interp::LRNParams &p) {
  Value squares =
      ctx.map({x}, shape, kFloat,
              [](OpBuilder &b, Location l, ValueRange args) -> Value {
                return b.create<arith::MulFOp>(l, args[0], args[0]);
              });
  return ctx.map(
      {windowSum(ctx, squares, shape, p.radius)}, shape, kFloat,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        return b.create<arith::AddFOp>(
            l, f32Constant(b, l, p.bias),
            b.create<arith::MulFOp>(l, f32Constant(b, l, p.alpha), args[0]));
      });
}

static LogicalResult requireRank4Float(NodeLowering &ctx, unsigned input) {
  if (ctx.shape(input).size() != 4)
    return ctx.error() << "input must be 4-dimensional", failure();
  if (ctx.dtype(input) != kFloat)
    return ctx.error() << "dtype " << dtypeName(ctx.dtype(input))
                       << " is not supported",
           failure();
  return success();
}

/// LRN: x / norm^beta.
static LogicalResult lrn(NodeLowering &ctx) {
  if (failed(requireRank4Float(ctx, 0)))
    return failure();
  const std::vector<int64_t> &shape = ctx.shape(0);
  interp::LRNParams p = interp::readLRNParams(ctx);
  Value x = ctx.tensor(0);
  Value norms = lrnNorms(ctx, x, shape, p);
  ctx.setOutput(
      0,
      ctx.map({x, norms}, shape, kFloat,
              [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                Value scale = b.create<math::PowFOp>(l, args[1],
                                                     f32Constant(b, l, p.beta));
                return b.create<arith::DivFOp>(l, args[0], scale);
              }),
      kFloat);
  return success();
}

/// LRNGrad(dy, x, y): dy norm^-beta - 2 alpha beta x * window-sum(dy y /
/// norm), as the reference kernel.
static LogicalResult lrnGrad(NodeLowering &ctx) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(requireRank4Float(ctx, i)))
      return failure();
  const std::vector<int64_t> &shape = ctx.shape(1);
  if (ctx.shape(0) != shape || ctx.shape(2) != shape)
    return ctx.error() << "input_grads, input_image, and out_image should "
                          "have the same shape";
  interp::LRNParams p = interp::readLRNParams(ctx);
  Value dy = ctx.tensor(0), x = ctx.tensor(1), y = ctx.tensor(2);
  Value norms = lrnNorms(ctx, x, shape, p);
  Value terms =
      ctx.map({dy, y, norms}, shape, kFloat,
              [](OpBuilder &b, Location l, ValueRange args) -> Value {
                return b.create<arith::DivFOp>(
                    l, b.create<arith::MulFOp>(l, args[0], args[1]), args[2]);
              });
  Value sums = windowSum(ctx, terms, shape, p.radius);
  ctx.setOutput(
      0,
      ctx.map({dy, x, norms, sums}, shape, kFloat,
              [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                Value direct = b.create<arith::MulFOp>(
                    l, args[0],
                    b.create<math::PowFOp>(l, args[2],
                                           f32Constant(b, l, -p.beta)));
                Value spread = b.create<arith::MulFOp>(
                    l, f32Constant(b, l, 2 * p.alpha * p.beta),
                    b.create<arith::MulFOp>(l, args[1], args[3]));
                return b.create<arith::SubFOp>(l, direct, spread);
              }),
      kFloat);
  return success();
}

//===----------------------------------------------------------------------===//
// Resizing
//===----------------------------------------------------------------------===//

/// The resize attrs, checked.
static FailureOr<std::pair<bool, bool>> resizeAttrs(NodeLowering &ctx) {
  bool align, halfPixel;
  if (std::string error = interp::readResizeAttrs(ctx, align, halfPixel);
      !error.empty())
    return ctx.error() << error, failure();
  return std::make_pair(align, halfPixel);
}

/// A constant int64 or float tensor.
static Value constantOf(NodeLowering &ctx, int32_t dtype,
                        std::vector<int64_t> shape,
                        const std::vector<double> &values) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(i, values[i]);
  return ctx.constantTensor(t);
}

/// Element `at` of a constant index table, as an index.
static Value indexAt(OpBuilder &b, Location loc, Value table, ValueRange at) {
  return b.create<arith::IndexCastOp>(
      loc, b.getIndexType(), b.create<tensor::ExtractOp>(loc, table, at));
}

/// The output [height, width] of a resize: size is a compile-time
/// constant, as its shape.
static FailureOr<std::pair<int64_t, int64_t>> resizeSize(NodeLowering &ctx) {
  if (ctx.shape(0).size() != 4)
    return ctx.error() << "input must be 4-dimensional"
                       << cleave::shapeString(ctx.shape(0)),
           failure();
  FailureOr<std::vector<int64_t>> size = ctx.constantInts(1);
  if (failed(size))
    return failure();
  if (ctx.shape(1).size() != 1 || size->size() != 2)
    return ctx.error() << "shape_t must be 1-dimensional with two elements"
                       << cleave::shapeString(ctx.shape(1)),
           failure();
  return std::make_pair((*size)[0], (*size)[1]);
}

/// ResizeBilinear (float results, lerps in float as TensorFlow's kernel)
/// and ResizeNearestNeighbor (a gather).
template <bool isBilinear> static LogicalResult resize(NodeLowering &ctx) {
  auto attrs = resizeAttrs(ctx);
  if (failed(attrs))
    return failure();
  auto size = resizeSize(ctx);
  if (failed(size))
    return failure();
  auto [align, halfPixel] = *attrs;
  auto [height, width] = *size;
  if (height <= 0 || width <= 0)
    return ctx.error() << "output dimensions must be positive";
  const std::vector<int64_t> &in = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  Type elementType = ctx.elementType(dtype);
  if (!elementType || !elementType.isIntOrFloat() || dtype == kBool)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  std::vector<int64_t> out = {in[0], height, width, in[3]};
  if ((in[1] == 0 || in[2] == 0) && in[0] * in[3] > 0)
    return ctx.error() << "input image must be of non-zero size";
  int32_t outType = isBilinear ? kFloat : dtype;
  OpBuilder &b = ctx.b;
  Value images = ctx.tensor(0);
  // The tables, one entry per output row (column).
  std::vector<double> yLow, yHigh, yLerp, xLow, xHigh, xLerp;
  if (isBilinear) {
    for (const ops::BilinearTap &t :
         ops::bilinearTaps(in[1], height, align, halfPixel)) {
      yLow.push_back(t.lower);
      yHigh.push_back(t.upper);
      yLerp.push_back(t.lerp);
    }
    for (const ops::BilinearTap &t :
         ops::bilinearTaps(in[2], width, align, halfPixel)) {
      xLow.push_back(t.lower);
      xHigh.push_back(t.upper);
      xLerp.push_back(t.lerp);
    }
  } else {
    for (int64_t s : ops::nearestSources(in[1], height, align, halfPixel))
      yLow.push_back(double(s));
    for (int64_t s : ops::nearestSources(in[2], width, align, halfPixel))
      xLow.push_back(double(s));
  }
  Value yLowT = constantOf(ctx, kInt64, {height}, yLow),
        xLowT = constantOf(ctx, kInt64, {width}, xLow);
  Value yHighT, xHighT, yLerpT, xLerpT;
  if (isBilinear) {
    yHighT = constantOf(ctx, kInt64, {height}, yHigh);
    xHighT = constantOf(ctx, kInt64, {width}, xHigh);
    yLerpT = constantOf(ctx, kFloat, {height}, yLerp);
    xLerpT = constantOf(ctx, kFloat, {width}, xLerp);
  }
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{ctx.tensorType(out, outType)}, ValueRange{},
      ValueRange{ctx.empty(out, outType)},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(4)},
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        Value batch = nb.create<linalg::IndexOp>(l, 0),
              y = nb.create<linalg::IndexOp>(l, 1),
              x = nb.create<linalg::IndexOp>(l, 2),
              c = nb.create<linalg::IndexOp>(l, 3);
        auto pixel = [&](Value row, Value col) -> Value {
          return nb.create<tensor::ExtractOp>(l, images,
                                              ValueRange{batch, row, col, c});
        };
        if (!isBilinear) {
          nb.create<linalg::YieldOp>(
              l, pixel(indexAt(nb, l, yLowT, y), indexAt(nb, l, xLowT, x)));
          return;
        }
        Value top = indexAt(nb, l, yLowT, y),
              bottom = indexAt(nb, l, yHighT, y),
              left = indexAt(nb, l, xLowT, x),
              right = indexAt(nb, l, xHighT, x);
        Value yl = nb.create<tensor::ExtractOp>(l, yLerpT, ValueRange{y});
        Value xl = nb.create<tensor::ExtractOp>(l, xLerpT, ValueRange{x});
        auto value = [&](Value row, Value col) {
          return ctx.convertElement(nb, l, pixel(row, col), dtype, kFloat);
        };
        auto lerp = [&](Value from, Value to, Value t) -> Value {
          return nb.create<arith::AddFOp>(
              l, from,
              nb.create<arith::MulFOp>(l, nb.create<arith::SubFOp>(l, to, from),
                                       t));
        };
        Value upper = lerp(value(top, left), value(top, right), xl);
        Value lower = lerp(value(bottom, left), value(bottom, right), xl);
        nb.create<linalg::YieldOp>(l, lerp(upper, lower, yl));
      });
  ctx.setOutput(0, generic.getResult(0), outType);
  return success();
}

/// For each of `in` input coordinates, the output coordinates that read it
/// and with what weight: a [in, width] table of sources (0 beyond the
/// list) and of weights (0 there); `width` is the longest list, at least 1.
struct Readers {
  std::vector<double> sources, weights;
  int64_t width = 1;
};

static Readers readersOf(int64_t in, int64_t out, bool bilinear, bool align,
                         bool halfPixel) {
  std::vector<std::vector<std::pair<int64_t, double>>> lists(in);
  if (bilinear) {
    auto taps = ops::bilinearTaps(in, out, align, halfPixel);
    for (int64_t o = 0; o < out; ++o) {
      lists[taps[o].lower].push_back({o, 1.0f - taps[o].lerp});
      lists[taps[o].upper].push_back({o, taps[o].lerp});
    }
  } else {
    auto sources = ops::nearestSources(in, out, align, halfPixel);
    for (int64_t o = 0; o < out; ++o)
      lists[sources[o]].push_back({o, 1});
  }
  Readers r;
  for (const auto &list : lists)
    r.width = std::max<int64_t>(r.width, list.size());
  r.sources.assign(in * r.width, 0);
  r.weights.assign(in * r.width, 0);
  for (int64_t i = 0; i < in; ++i)
    for (auto [k, entry] : llvm::enumerate(lists[i])) {
      r.sources[i * r.width + k] = double(entry.first);
      r.weights[i * r.width + k] = entry.second;
    }
  return r;
}

/// ResizeBilinearGrad(grads, original) and ResizeNearestNeighborGrad(grads,
/// size): each input pixel sums the gradient of the output pixels that read
/// it, weighted as they read it (products in float for bilinear, as
/// TensorFlow's kernel, summed in the result's type).
template <bool isBilinear> static LogicalResult resizeGrad(NodeLowering &ctx) {
  auto attrs = resizeAttrs(ctx);
  if (failed(attrs))
    return failure();
  auto [align, halfPixel] = *attrs;
  const std::vector<int64_t> &grads = ctx.shape(0);
  if (grads.size() != 4)
    return ctx.error() << "input_grad must be 4-dimensional"
                       << cleave::shapeString(grads);
  std::vector<int64_t> out;
  int32_t dtype;
  if (isBilinear) {
    const std::vector<int64_t> &original = ctx.shape(1);
    if (original.size() != 4)
      return ctx.error() << "original_image must be 4-dimensional"
                         << cleave::shapeString(original);
    if (original[0] != grads[0] || original[3] != grads[3])
      return ctx.error() << "original_image and input_grad must have the same "
                            "batch size and depth";
    out = original;
    dtype = ctx.dtype(1);
  } else {
    FailureOr<std::vector<int64_t>> size = ctx.constantInts(1);
    if (failed(size))
      return failure();
    if (size->size() != 2)
      return ctx.error() << "shape_t must be 1-dimensional with two elements"
                         << cleave::shapeString(ctx.shape(1));
    out = {grads[0], (*size)[0], (*size)[1], grads[3]};
    dtype = ctx.dtype(0);
    if (out[1] < 0 || out[2] < 0)
      return ctx.error() << "output dimensions must be non-negative";
  }
  Type elementType = ctx.elementType(dtype);
  if (!elementType || !elementType.isIntOrFloat() || dtype == kBool)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  Readers ys = readersOf(out[1], grads[1], isBilinear, align, halfPixel);
  Readers xs = readersOf(out[2], grads[2], isBilinear, align, halfPixel);
  int32_t weightType = isBilinear ? kFloat : dtype;
  Value ySources = constantOf(ctx, kInt64, {out[1], ys.width}, ys.sources),
        xSources = constantOf(ctx, kInt64, {out[2], xs.width}, xs.sources),
        yWeights = constantOf(ctx, weightType, {out[1], ys.width}, ys.weights),
        xWeights = constantOf(ctx, weightType, {out[2], xs.width}, xs.weights);
  OpBuilder &b = ctx.b;
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < 6; ++i)
    d.push_back(getAffineDimExpr(i, context));
  Value gradTensor = ctx.tensor(0);
  Value zeros = ctx.filled(out, dtype, ctx.scalar(dtype, 0));
  // Loops (b, i, j, c, p, q): output pixel (b, i, j, c) sums over the p-th
  // reader row and the q-th reader column.
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{zeros.getType()}, ValueRange{yWeights, xWeights},
      ValueRange{zeros},
      SmallVector<AffineMap>{
          AffineMap::get(6, 0, {d[1], d[4]}, context),
          AffineMap::get(6, 0, {d[2], d[5]}, context),
          AffineMap::get(6, 0, {d[0], d[1], d[2], d[3]}, context)},
      SmallVector<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::reduction, utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value batch = nb.create<linalg::IndexOp>(l, 0),
              i = nb.create<linalg::IndexOp>(l, 1),
              j = nb.create<linalg::IndexOp>(l, 2),
              c = nb.create<linalg::IndexOp>(l, 3),
              p = nb.create<linalg::IndexOp>(l, 4),
              q = nb.create<linalg::IndexOp>(l, 5);
        Value row = indexAt(nb, l, ySources, ValueRange{i, p});
        Value col = indexAt(nb, l, xSources, ValueRange{j, q});
        Value g = nb.create<tensor::ExtractOp>(l, gradTensor,
                                               ValueRange{batch, row, col, c});
        Value weight;
        Value product;
        if (isBilinear) {
          // (g * y weight) * x weight in float, TensorFlow's order.
          product = ctx.convertElement(
              nb, l,
              nb.create<arith::MulFOp>(
                  l, nb.create<arith::MulFOp>(l, g, args[0]), args[1]),
              kFloat, dtype);
        } else {
          weight =
              isFloatDType(dtype)
                  ? nb.create<arith::MulFOp>(l, args[0], args[1]).getResult()
                  : nb.create<arith::MulIOp>(l, args[0], args[1]).getResult();
          product = isFloatDType(dtype)
                        ? nb.create<arith::MulFOp>(l, g, weight).getResult()
                        : nb.create<arith::MulIOp>(l, g, weight).getResult();
        }
        Value sum =
            isFloatDType(dtype)
                ? nb.create<arith::AddFOp>(l, args[2], product).getResult()
                : nb.create<arith::AddIOp>(l, args[2], product).getResult();
        nb.create<linalg::YieldOp>(l, sum);
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

LoweringTable cleave::conversion::getImageLowerings() {
  return {
      {"LRN", lrn},
      {"LRNGrad", lrnGrad},
      {"ResizeBilinear", resize<true>},
      {"ResizeNearestNeighbor", resize<false>},
      {"ResizeBilinearGrad", resizeGrad<true>},
      {"ResizeNearestNeighborGrad", resizeGrad<false>},
  };
}
