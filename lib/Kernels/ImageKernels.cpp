//===- ImageKernels.cpp - local response normalization and resizing -------===//
//
// LRN and LRNGrad (nn_ops.cc), computed in double as the other NN kernels;
// ResizeBilinear, ResizeNearestNeighbor and their gradients (image_ops.cc),
// with the coordinate maps of cleave/Ops/Resize.h that the CPU lowering
// shares. NN family ops, in their own file.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Kernels/ImageAttrs.h"
#include "cleave/Ops/Resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

/// bias + alpha * the sum of squares of the channels within the radius of
/// each element, for the rows of `depth` channels of `x`.
static std::vector<double> lrnNorms(const Tensor &x, const LRNParams &p) {
  int64_t depth = x.shape().back(), count = x.numElements();
  std::vector<double> norms(count);
  for (int64_t row = 0; depth && row < count / depth; ++row)
    for (int64_t d = 0; d < depth; ++d) {
      double sum = 0;
      for (int64_t k = std::max<int64_t>(0, d - p.radius);
           k < std::min(depth, d + p.radius + 1); ++k) {
        double v = x.getAsDouble(row * depth + k);
        sum += v * v;
      }
      norms[row * depth + d] = p.bias + p.alpha * sum;
    }
  return norms;
}

/// LRN: each element over its norm to the beta.
static LogicalResult lrn(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[0];
  if (x.rank() != 4)
    return ctx.error() << "input must be 4-dimensional";
  if (x.dtype() != kFloat)
    return ctx.error() << "dtype " << dtypeName(x.dtype())
                       << " is not supported";
  LRNParams p = readLRNParams(ctx);
  std::vector<double> norms = lrnNorms(x, p);
  Tensor out(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i)
    out.setFromDouble(i, x.getAsDouble(i) / std::pow(norms[i], p.beta));
  ctx.outputs[0] = out;
  return success();
}

/// LRNGrad(dy, x, y): element k of a row gets dy_k norm_k^-beta, less
/// 2 alpha beta x_k times the sum over the channels j within the radius of
/// dy_j y_j / norm_j (TensorFlow's LRNGradOp).
static LogicalResult lrnGrad(KernelContext &ctx) {
  const Tensor &dy = ctx.inputs[0], &x = ctx.inputs[1], &y = ctx.inputs[2];
  if (dy.rank() != 4 || x.rank() != 4 || y.rank() != 4)
    return ctx.error() << "inputs must be 4-dimensional, got input_grads "
                       << shapeString(dy.shape()) << ", input_image "
                       << shapeString(x.shape()) << " and out_image "
                       << shapeString(y.shape());
  if (dy.shape() != x.shape() || y.shape() != x.shape())
    return ctx.error() << "input_grads, input_image, and out_image should "
                          "have the same shape, got "
                       << shapeString(dy.shape()) << ", "
                       << shapeString(x.shape()) << " and "
                       << shapeString(y.shape());
  if (x.dtype() != kFloat)
    return ctx.error() << "dtype " << dtypeName(x.dtype())
                       << " is not supported";
  LRNParams p = readLRNParams(ctx);
  std::vector<double> norms = lrnNorms(x, p);
  int64_t depth = x.shape().back(), count = x.numElements();
  Tensor out(x.dtype(), x.shape());
  for (int64_t row = 0; depth && row < count / depth; ++row)
    for (int64_t k = 0; k < depth; ++k) {
      int64_t at = row * depth + k;
      double sum = 0;
      for (int64_t j = std::max<int64_t>(0, k - p.radius);
           j < std::min(depth, k + p.radius + 1); ++j) {
        int64_t other = row * depth + j;
        sum += dy.getAsDouble(other) * y.getAsDouble(other) / norms[other];
      }
      out.setFromDouble(at, dy.getAsDouble(at) * std::pow(norms[at], -p.beta) -
                                2 * p.alpha * p.beta * x.getAsDouble(at) * sum);
    }
  ctx.outputs[0] = out;
  return success();
}

/// The resize attrs, checked.
static FailureOr<std::pair<bool, bool>> resizeAttrs(KernelContext &ctx) {
  bool align, halfPixel;
  if (std::string error = interp::readResizeAttrs(ctx, align, halfPixel);
      !error.empty())
    return ctx.error() << error, failure();
  return std::make_pair(align, halfPixel);
}

/// The [height, width] of a resize's `size` input, checked.
static FailureOr<std::pair<int64_t, int64_t>>
resizeSize(KernelContext &ctx, const Tensor &images, const Tensor &size) {
  if (images.rank() != 4)
    return ctx.error() << "input must be 4-dimensional"
                       << shapeString(images.shape()),
           failure();
  if (size.rank() != 1)
    return ctx.error() << "shape_t must be 1-dimensional"
                       << shapeString(size.shape()),
           failure();
  if (size.numElements() != 2)
    return ctx.error() << "shape_t must have two elements"
                       << shapeString(size.shape()),
           failure();
  int64_t height = size.getAsInt(0), width = size.getAsInt(1);
  if (height <= 0 || width <= 0)
    return ctx.error() << "output dimensions must be positive", failure();
  return std::make_pair(height, width);
}

/// ResizeBilinear and ResizeNearestNeighbor: each output pixel from its
/// input neighbours (bilinear: in float, as TensorFlow's kernel; nearest:
/// a copy).
template <bool isBilinear> static LogicalResult resize(KernelContext &ctx) {
  const Tensor &images = ctx.inputs[0];
  auto attrs = resizeAttrs(ctx);
  if (failed(attrs))
    return failure();
  auto size = resizeSize(ctx, images, ctx.inputs[1]);
  if (failed(size))
    return failure();
  auto [align, halfPixel] = *attrs;
  auto [height, width] = *size;
  int64_t batch = images.shape()[0], inHeight = images.shape()[1],
          inWidth = images.shape()[2], channels = images.shape()[3];
  Tensor out(isBilinear ? kFloat : images.dtype(),
             {batch, height, width, channels});
  if (out.numElements() == 0) {
    ctx.outputs[0] = out;
    return success();
  }
  if (inHeight == 0 || inWidth == 0)
    return ctx.error() << "input image must be of non-zero size";
  auto in = [&](int64_t b, int64_t y, int64_t x, int64_t c) {
    return ((b * inHeight + y) * inWidth + x) * channels + c;
  };
  int64_t at = 0;
  if constexpr (isBilinear) {
    auto ys = ops::bilinearTaps(inHeight, height, align, halfPixel);
    auto xs = ops::bilinearTaps(inWidth, width, align, halfPixel);
    for (int64_t b = 0; b < batch; ++b)
      for (const ops::BilinearTap &y : ys)
        for (const ops::BilinearTap &x : xs)
          for (int64_t c = 0; c < channels; ++c) {
            auto value = [&](int64_t row, int64_t col) {
              return float(images.getAsDouble(in(b, row, col, c)));
            };
            float top =
                value(y.lower, x.lower) +
                (value(y.lower, x.upper) - value(y.lower, x.lower)) * x.lerp;
            float bottom =
                value(y.upper, x.lower) +
                (value(y.upper, x.upper) - value(y.upper, x.lower)) * x.lerp;
            out.data<float>()[at++] = top + (bottom - top) * y.lerp;
          }
  } else {
    auto ys = ops::nearestSources(inHeight, height, align, halfPixel);
    auto xs = ops::nearestSources(inWidth, width, align, halfPixel);
    size_t bytes = dtypeSize(images.dtype());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t y : ys)
        for (int64_t x : xs) {
          std::memcpy(out.raw() + at * bytes,
                      images.raw() + in(b, y, x, 0) * bytes, channels * bytes);
          at += channels;
        }
  }
  ctx.outputs[0] = out;
  return success();
}

/// ResizeBilinearGrad(grads, original) and ResizeNearestNeighborGrad(grads,
/// size): each gradient pixel added to the input pixels its output pixel
/// read, with the weights it read them with.
template <bool isBilinear> static LogicalResult resizeGrad(KernelContext &ctx) {
  const Tensor &grads = ctx.inputs[0];
  auto attrs = resizeAttrs(ctx);
  if (failed(attrs))
    return failure();
  auto [align, halfPixel] = *attrs;
  if (grads.rank() != 4)
    return ctx.error() << "input_grad must be 4-dimensional, got "
                       << shapeString(grads.shape());
  int64_t batch = grads.shape()[0], height = grads.shape()[1],
          width = grads.shape()[2], channels = grads.shape()[3];
  int64_t inHeight, inWidth;
  int32_t dtype;
  if constexpr (isBilinear) {
    const Tensor &original = ctx.inputs[1];
    if (original.rank() != 4)
      return ctx.error() << "original_image must be 4-dimensional, got "
                         << shapeString(original.shape());
    if (original.shape()[0] != batch || original.shape()[3] != channels)
      return ctx.error() << "original_image and input_grad must have the same "
                            "batch size and depth, got original_image "
                         << shapeString(original.shape()) << " and input_grad "
                         << shapeString(grads.shape());
    inHeight = original.shape()[1];
    inWidth = original.shape()[2];
    dtype = original.dtype();
  } else {
    const Tensor &size = ctx.inputs[1];
    if (size.rank() != 1 || size.numElements() != 2)
      return ctx.error() << "shape_t must be 1-dimensional with two elements"
                         << shapeString(size.shape());
    inHeight = size.getAsInt(0);
    inWidth = size.getAsInt(1);
    if (inHeight < 0 || inWidth < 0)
      return ctx.error() << "output dimensions must be non-negative";
    dtype = grads.dtype();
  }
  Tensor out(dtype, {batch, inHeight, inWidth, channels});
  // Each product in float, as TensorFlow's kernel (and the lowering)
  // compute it, summed in double.
  std::vector<double> sums(out.numElements(), 0.0);
  auto in = [&](int64_t b, int64_t y, int64_t x, int64_t c) {
    return ((b * inHeight + y) * inWidth + x) * channels + c;
  };
  if (out.numElements() > 0 && grads.numElements() > 0) {
    int64_t at = 0;
    if constexpr (isBilinear) {
      auto ys = ops::bilinearTaps(inHeight, height, align, halfPixel);
      auto xs = ops::bilinearTaps(inWidth, width, align, halfPixel);
      for (int64_t b = 0; b < batch; ++b)
        for (const ops::BilinearTap &y : ys)
          for (const ops::BilinearTap &x : xs)
            for (int64_t c = 0; c < channels; ++c) {
              float g = float(grads.getAsDouble(at++));
              float yIn = 1.0f - y.lerp, xIn = 1.0f - x.lerp;
              sums[in(b, y.lower, x.lower, c)] += g * yIn * xIn;
              sums[in(b, y.lower, x.upper, c)] += g * yIn * x.lerp;
              sums[in(b, y.upper, x.lower, c)] += g * y.lerp * xIn;
              sums[in(b, y.upper, x.upper, c)] += g * y.lerp * x.lerp;
            }
    } else {
      auto ys = ops::nearestSources(inHeight, height, align, halfPixel);
      auto xs = ops::nearestSources(inWidth, width, align, halfPixel);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t y : ys)
          for (int64_t x : xs)
            for (int64_t c = 0; c < channels; ++c)
              sums[in(b, y, x, c)] += grads.getAsDouble(at++);
    }
  }
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFromDouble(i, sums[i]);
  ctx.outputs[0] = out;
  return success();
}

KernelTable cleave::interp::getImageKernels() {
  return {
      {"LRN", lrn},
      {"LRNGrad", lrnGrad},
      {"ResizeBilinear", resize<true>},
      {"ResizeNearestNeighbor", resize<false>},
      {"ResizeBilinearGrad", resizeGrad<true>},
      {"ResizeNearestNeighborGrad", resizeGrad<false>},
  };
}
