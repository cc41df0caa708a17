//===- SliceKernels.cpp - splitting and strided slicing -------------------===//

#include "Kernels.h"

#include "cleave/Ops/ShapeInference.h"
#include "cleave/Ops/StridedSlice.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {
/// Cuts `in` along `axis` into pieces of the given sizes.
void splitAlong(KernelContext &ctx, const Tensor &in, int64_t axis,
                const std::vector<int64_t> &sizes) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < in.rank(); ++d)
    inner *= in.shape()[d];
  int64_t dim = in.shape()[axis], offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> shape = in.shape();
    shape[axis] = sizes[k];
    int64_t piece = sizes[k];
    ctx.outputs[k] = gather(in, shape, [&](int64_t i) {
      int64_t outer = i / (piece * inner), rest = i % (piece * inner);
      return outer * dim * inner + offset + rest;
    });
    offset += sizes[k] * inner;
  }
}

LogicalResult split(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[1];
  int64_t axis = toInts(ctx.inputs[0]).at(0), n = ctx.outputs.size();
  if (!ops::normalizeAxis(axis, in.rank()))
    return ctx.error() << "-input rank(-" << in.rank()
                       << ") <= split_dim < input rank (" << in.rank()
                       << "), but got " << toInts(ctx.inputs[0]).at(0);
  int64_t dim = in.shape()[axis];
  if (dim % n)
    return ctx.error() << "Number of ways to split should evenly divide the "
                          "split dimension, but got split_dim "
                       << axis << " (size = " << dim << ") and num_split "
                       << n;
  splitAlong(ctx, in, axis, std::vector<int64_t>(n, dim / n));
  return success();
}

LogicalResult splitV(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> sizes = toInts(ctx.inputs[1]);
  int64_t axis = toInts(ctx.inputs[2]).at(0);
  if (!ops::normalizeAxis(axis, in.rank()))
    return ctx.error() << "-input rank(-" << in.rank()
                       << ") <= split_dim < input rank (" << in.rank()
                       << "), but got " << toInts(ctx.inputs[2]).at(0);
  if (sizes.size() != ctx.outputs.size())
    return ctx.error() << "Length of size_splits should be equal to the "
                          "value of num_split but got "
                       << sizes.size() << " and " << ctx.outputs.size();
  int64_t dim = in.shape()[axis], known = 0, unknownAt = -1;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    if (s == -1) {
      if (unknownAt >= 0)
        return ctx.error() << "There can only be one -1 in the input.";
      unknownAt = i;
    } else {
      known += s;
    }
  }
  if ((unknownAt < 0 && known != dim) || (unknownAt >= 0 && known > dim))
    return ctx.error() << "Determined shape must either match input shape "
                          "along split_dim exactly if fully specified, or be "
                          "less than the size of the input along split_dim "
                          "if not fully specified.  Got: "
                       << known;
  if (unknownAt >= 0)
    sizes[unknownAt] = dim - known;
  splitAlong(ctx, in, axis, sizes);
  return success();
}

LogicalResult unpack(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  int64_t axis = ctx.getInt("axis").value_or(0);
  if (!ops::normalizeAxis(axis, in.rank()))
    return ctx.error() << "axis = " << ctx.getInt("axis").value_or(0)
                       << " not in [" << -in.rank() << ", " << in.rank()
                       << ")";
  int64_t n = ctx.outputs.size();
  if (in.shape()[axis] != n)
    return ctx.error() << "Input shape axis " << axis << " must equal " << n
                       << ", got shape " << shapeString(in.shape());
  splitAlong(ctx, in, axis, std::vector<int64_t>(n, 1));
  std::vector<int64_t> shape = in.shape();
  shape.erase(shape.begin() + axis);
  for (Tensor &out : ctx.outputs)
    out = out.reshaped(shape);
  return success();
}

/// Plans the slice of StridedSlice (inputs 1-3) over `shape`.
LogicalResult plan(KernelContext &ctx, const std::vector<int64_t> &shape,
                   cleave::ops::StridedSlicePlan &result) {
  cleave::ops::StridedSliceMasks masks;
  masks.begin = ctx.getInt("begin_mask").value_or(0);
  masks.end = ctx.getInt("end_mask").value_or(0);
  masks.ellipsis = ctx.getInt("ellipsis_mask").value_or(0);
  masks.newAxis = ctx.getInt("new_axis_mask").value_or(0);
  masks.shrinkAxis = ctx.getInt("shrink_axis_mask").value_or(0);
  std::string error = cleave::ops::planStridedSlice(
      shape, toInts(ctx.inputs[1]), toInts(ctx.inputs[2]),
      toInts(ctx.inputs[3]), masks, result);
  if (!error.empty())
    return ctx.error() << error;
  return success();
}

/// The flat input index of each element of the planned slice.
std::vector<int64_t> sliceSources(const std::vector<int64_t> &shape,
                                  const cleave::ops::StridedSlicePlan &plan) {
  std::vector<int64_t> sizes(plan.sizes.begin(), plan.sizes.end());
  auto inStrides = stridesOf(shape), outStrides = stridesOf(sizes);
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  std::vector<int64_t> sources(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < sizes.size(); ++d)
      src += (plan.begin[d] + (i / outStrides[d]) % sizes[d] * plan.strides[d]) *
             inStrides[d];
    sources[i] = src;
  }
  return sources;
}

LogicalResult stridedSlice(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  cleave::ops::StridedSlicePlan p;
  if (failed(plan(ctx, in.shape(), p)))
    return failure();
  std::vector<int64_t> sources = sliceSources(in.shape(), p);
  ctx.outputs[0] = gather(
      in, std::vector<int64_t>(p.outputShape.begin(), p.outputShape.end()),
      [&](int64_t i) { return sources[i]; });
  return success();
}

/// The gradient of StridedSlice: `dy` scattered into zeros of `shape`.
LogicalResult stridedSliceGrad(KernelContext &ctx) {
  std::vector<int64_t> shape = toInts(ctx.inputs[0]);
  const Tensor &dy = ctx.inputs[4];
  cleave::ops::StridedSlicePlan p;
  if (failed(plan(ctx, shape, p)))
    return failure();
  std::vector<int64_t> sources = sliceSources(shape, p);
  std::vector<int64_t> expected(p.outputShape.begin(), p.outputShape.end());
  if (dy.shape() != expected)
    return ctx.error() << "shape of dy was " << shapeString(dy.shape())
                       << " instead of " << shapeString(expected);
  Tensor out(dy.dtype(), shape);
  size_t size = dtypeSize(dy.dtype());
  for (size_t i = 0; i < sources.size(); ++i)
    std::memcpy(out.raw() + sources[i] * size, dy.raw() + i * size, size);
  ctx.outputs[0] = out;
  return success();
}
} // namespace

KernelTable cleave::interp::getSliceKernels() {
  return {
      {"Split", split},
      {"SplitV", splitV},
      {"Unpack", unpack},
      {"StridedSlice", stridedSlice},
      {"StridedSliceGrad", stridedSliceGrad},
  };
}
