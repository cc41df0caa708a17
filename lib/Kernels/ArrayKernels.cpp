//===- ArrayKernels.cpp - constants, shapes, slicing and gathering --------===//

#include "KernelContext.h"

#include "cleave/Ops/CheckNumerics.h"
#include "cleave/Ops/Reverse.h"
#include "cleave/Ops/ShapeInference.h"
#include "cleave/Ops/StridedSlice.h"
#include "cleave/Tensor/TensorList.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

static LogicalResult constKernel(KernelContext &ctx) {
  FailureOr<Tensor> value = ctx.getTensor("value");
  if (failed(value))
    return failure();
  ctx.outputs[0] = *value;
  return success();
}

static LogicalResult placeholder(KernelContext &ctx) {
  return ctx.error() << "You must feed a value for placeholder tensor '"
                     << ctx.node.getName() << "' with dtype "
                     << dtypeName(ctx.getType("dtype").value_or(0));
}

/// Every output is the matching input (Identity, IdentityN, Snapshot, ...).
static LogicalResult forward(KernelContext &ctx) {
  for (size_t i = 0; i < ctx.outputs.size() && i < ctx.inputs.size(); ++i)
    ctx.outputs[i] = ctx.inputs[i];
  return success();
}

/// The input, unless it holds an Inf or a NaN: then TensorFlow's error
/// after the node's message.
template <bool isV2> static LogicalResult checkNumerics(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[0];
  unsigned kinds = 0;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double v = x.getAsDouble(i);
    if (std::isnan(v))
      kinds |= ops::kNotANumber;
    else if (std::isinf(v))
      kinds |= v < 0 ? ops::kNegativeInfinity : ops::kPositiveInfinity;
  }
  if (kinds)
    return ctx.error() << ctx.getString("message").value_or("")
                       << " : Tensor had "
                       << ops::describeNonFinite(kinds, isV2) << " values";
  ctx.outputs[0] = x;
  return success();
}

/// Unique: the distinct values of a vector in the order they first appear,
/// and for each element the index of its value among them. Equal floats
/// are one value (0.0 and -0.0 too); each NaN is its own.
static LogicalResult unique(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[0];
  if (x.rank() != 1)
    return ctx.error() << "unique expects a 1D vector.";
  int64_t n = x.numElements();
  int32_t indexType = ctx.getType("out_idx").value_or(kInt32);
  Tensor idx(indexType, {n});
  std::vector<int64_t> firsts;
  auto number = [&](auto values, auto key) {
    using Key = decltype(key);
    std::unordered_map<Key, int64_t> seen;
    for (int64_t i = 0; i < n; ++i) {
      auto [at, isNew] = seen.try_emplace(Key(values[i]), firsts.size());
      if (isNew)
        firsts.push_back(i);
      idx.setFromDouble(i, double(at->second));
    }
  };
  Tensor y;
  if (x.dtype() == kString) {
    number(x.strings().data(), std::string());
    y = Tensor(kString, {int64_t(firsts.size())});
    for (auto [j, i] : llvm::enumerate(firsts))
      y.strings()[j] = x.strings()[i];
  } else {
    size_t bytes = dtypeSize(x.dtype());
    bool typed = true;
    if (x.dtype() == kBool)
      number(x.data<uint8_t>(), uint8_t());
    else
      typed = visitNumeric(
          x.dtype(), [&](auto tag) { number(x.data<decltype(tag)>(), tag); });
    if (!typed || !bytes)
      return ctx.error() << "dtype " << dtypeName(x.dtype())
                         << " is not supported";
    y = Tensor(x.dtype(), {int64_t(firsts.size())});
    for (auto [j, i] : llvm::enumerate(firsts))
      std::memcpy(y.raw() + j * bytes, x.raw() + i * bytes, bytes);
  }
  ctx.outputs[0] = y;
  ctx.outputs[1] = idx;
  return success();
}

/// Bitcast: the same bytes as another type; a last dimension of the size
/// ratio is added (to a smaller type) or taken away (to a larger one).
static LogicalResult bitcast(KernelContext &ctx) {
  const Tensor &input = ctx.inputs[0];
  int32_t to = ctx.getType("type").value_or(0);
  size_t inSize = dtypeSize(input.dtype()), outSize = dtypeSize(to);
  if (!inSize || !outSize)
    return ctx.error() << "Cannot bitcast from " << dtypeName(input.dtype())
                       << " to " << dtypeName(to)
                       << ": one of the types has no fixed size";
  std::vector<int64_t> shape = input.shape();
  if (inSize > outSize) {
    shape.push_back(int64_t(inSize / outSize));
  } else if (inSize < outSize) {
    if (shape.empty() || shape.back() != int64_t(outSize / inSize))
      return ctx.error() << "Cannot bitcast from " << dtypeName(input.dtype())
                         << " to " << dtypeName(to) << ": shape "
                         << shapeString(input.shape());
    shape.pop_back();
  }
  Tensor out(to, shape);
  std::memcpy(out.raw(), input.raw(), input.byteSize());
  ctx.outputs[0] = out;
  return success();
}

/// MatrixBandPart(input, num_lower, num_upper): each innermost matrix keeps
/// its elements within num_lower diagonals below and num_upper above the
/// main one (a negative count keeps that whole triangle), zeroes the rest.
static LogicalResult matrixBandPart(KernelContext &ctx) {
  const Tensor &input = ctx.inputs[0];
  if (input.rank() < 2)
    return ctx.error() << "input must be at least 2-dim, received shape: "
                       << shapeString(input.shape());
  int64_t rows = input.shape()[input.rank() - 2];
  int64_t cols = input.shape()[input.rank() - 1];
  int64_t bounds[2];
  for (unsigned i : {1u, 2u}) {
    const char *name = i == 1 ? "num_lower" : "num_upper";
    if (!ctx.inputs[i].shape().empty())
      return ctx.error() << name << " must be scalar, got shape "
                         << shapeString(ctx.inputs[i].shape());
    bounds[i - 1] = ctx.inputs[i].getAsInt(0);
    int64_t limit = i == 1 ? rows : cols;
    if (bounds[i - 1] > limit)
      return ctx.error() << name << " must be negative or less or equal to "
                         << (i == 1 ? "number of rows ("
                                    : "number of columns (")
                         << limit << ") got: " << bounds[i - 1];
  }
  if (input.dtype() == kString)
    return ctx.error() << "dtype string is not supported";
  Tensor out(input.dtype(), input.shape());
  size_t size =
      input.numElements() ? input.byteSize() / input.numElements() : 0;
  for (int64_t i = 0; i < input.numElements(); ++i) {
    int64_t m = (i / cols) % rows, n = i % cols;
    bool inBand = (bounds[0] < 0 || m - n <= bounds[0]) &&
                  (bounds[1] < 0 || n - m <= bounds[1]);
    if (inBand)
      std::memcpy(out.raw() + i * size, input.raw() + i * size, size);
  }
  ctx.outputs[0] = out;
  return success();
}

static Tensor vectorOf(int32_t dtype, const std::vector<int64_t> &values) {
  Tensor t(dtype, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == kInt64)
      t.data<int64_t>()[i] = values[i];
    else
      t.data<int32_t>()[i] = int32_t(values[i]);
  }
  return t;
}

static Tensor scalarOf(int32_t dtype, int64_t value) {
  Tensor t(dtype, {});
  if (dtype == kInt64)
    t.data<int64_t>()[0] = value;
  else
    t.data<int32_t>()[0] = int32_t(value);
  return t;
}

static LogicalResult shapeKernel(KernelContext &ctx) {
  ctx.outputs[0] =
      vectorOf(ctx.getType("out_type").value_or(kInt32), ctx.inputs[0].shape());
  return success();
}

/// ShapeN: the shape of each input.
static LogicalResult shapeNKernel(KernelContext &ctx) {
  for (size_t i = 0; i < ctx.inputs.size() && i < ctx.outputs.size(); ++i)
    ctx.outputs[i] = vectorOf(ctx.getType("out_type").value_or(kInt32),
                              ctx.inputs[i].shape());
  return success();
}

static LogicalResult sizeKernel(KernelContext &ctx) {
  ctx.outputs[0] = scalarOf(ctx.getType("out_type").value_or(kInt32),
                            ctx.inputs[0].numElements());
  return success();
}

static LogicalResult rankKernel(KernelContext &ctx) {
  ctx.outputs[0] = scalarOf(kInt32, ctx.inputs[0].rank());
  return success();
}

static LogicalResult reshape(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> shape = toInts(ctx.inputs[1]);
  int64_t known = 1, unknownAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknownAt >= 0)
        return ctx.error() << "Only one input size may be -1, not both "
                           << unknownAt << " and " << i;
      unknownAt = i;
    } else if (shape[i] < 0) {
      return ctx.error() << "Size " << i << " must be non-negative, not "
                         << shape[i];
    } else {
      known *= shape[i];
    }
  }
  if (unknownAt >= 0) {
    if (known == 0 || in.numElements() % known)
      return ctx.error() << "Input to reshape is a tensor with "
                         << in.numElements()
                         << " values, but the requested shape requires a "
                            "multiple of "
                         << known;
    shape[unknownAt] = in.numElements() / known;
  } else if (known != in.numElements()) {
    return ctx.error() << "Input to reshape is a tensor with "
                       << in.numElements()
                       << " values, but the requested shape has " << known;
  }
  ctx.outputs[0] = in.reshaped(shape);
  return success();
}

static LogicalResult expandDims(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  int64_t axis = toInts(ctx.inputs[1]).at(0), rank = in.rank();
  if (axis < -rank - 1 || axis > rank)
    return ctx.error() << "Tried to expand dim index " << axis
                       << " for tensor with " << rank << " dimensions.";
  if (axis < 0)
    axis += rank + 1;
  std::vector<int64_t> shape = in.shape();
  shape.insert(shape.begin() + axis, 1);
  ctx.outputs[0] = in.reshaped(shape);
  return success();
}

static LogicalResult squeeze(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> dims =
      ctx.getIntList("squeeze_dims").value_or(std::vector<int64_t>());
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool listed = llvm::any_of(
        dims, [&](int64_t x) { return x == d || x + in.rank() == d; });
    if (listed && in.shape()[d] != 1)
      return ctx.error() << "Can not squeeze dim[" << d
                         << "], expected a dimension of 1, got "
                         << in.shape()[d];
    if (listed || (dims.empty() && in.shape()[d] == 1))
      continue;
    shape.push_back(in.shape()[d]);
  }
  ctx.outputs[0] = in.reshaped(shape);
  return success();
}

static LogicalResult reverseV2(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0], &axis = ctx.inputs[1];
  if (axis.rank() != 1)
    return ctx.error() << "'dims' must be 1-dimension, not " << axis.rank();
  std::vector<bool> reversed;
  std::string error =
      cleave::ops::reversedDimensions(toInts(axis), in.rank(), reversed);
  if (!error.empty())
    return ctx.error() << error;
  const std::vector<int64_t> &shape = in.shape();
  auto strides = stridesOf(shape);
  ctx.outputs[0] = gather(in, shape, [&](int64_t i) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t at = (i / strides[d]) % shape[d];
      src += (reversed[d] ? shape[d] - 1 - at : at) * strides[d];
    }
    return src;
  });
  return success();
}

static LogicalResult transpose(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> perm = toInts(ctx.inputs[1]);
  if (int64_t(perm.size()) != in.rank())
    return ctx.error() << "transpose expects a vector of size " << in.rank()
                       << ". But input(1) is a vector of size " << perm.size();
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= in.rank() || seen[p])
      return ctx.error() << shapeString(perm) << " is not a valid permutation";
    seen[p] = true;
  }
  ctx.outputs[0] = transposed(in, perm);
  return success();
}

static LogicalResult concatV2(KernelContext &ctx) {
  size_t n = ctx.inputs.size() - 1;
  const Tensor &first = ctx.inputs[0];
  int64_t rank = first.rank(), axis = toInts(ctx.inputs[n]).at(0);
  if (axis < -rank || axis >= rank)
    return ctx.error() << "ConcatOp : Expected concatenating dimensions in the "
                          "range ["
                       << -rank << ", " << rank << "), but got " << axis;
  if (axis < 0)
    axis += rank;
  std::vector<int64_t> outShape = first.shape();
  outShape[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = ctx.inputs[i];
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && (t.rank() != rank || t.shape()[d] != first.shape()[d]))
        return ctx.error() << "ConcatOp : Dimension " << d
                           << " in both shapes must be equal: shape[0] = "
                           << shapeString(first.shape()) << " vs. shape[" << i
                           << "] = " << shapeString(t.shape());
    outShape[axis] += t.shape()[axis];
  }
  Tensor out(first.dtype(), outShape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= outShape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= outShape[d];
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = ctx.inputs[i];
    int64_t chunk = t.shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      copyElements(out, o * outShape[axis] * inner + offset, t, o * chunk,
                   chunk);
    offset += chunk;
  }
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult pack(KernelContext &ctx) {
  const Tensor &first = ctx.inputs[0];
  int64_t rank = first.rank() + 1, axis = ctx.getInt("axis").value_or(0);
  if (axis < -rank || axis >= rank)
    return ctx.error() << "axis = " << axis << " not in [" << -rank << ", "
                       << rank << ")";
  if (axis < 0)
    axis += rank;
  for (const Tensor &t : ctx.inputs)
    if (t.shape() != first.shape())
      return ctx.error()
             << "Shapes of all inputs must match: values[0].shape = "
             << shapeString(first.shape()) << " != " << shapeString(t.shape());
  std::vector<int64_t> outShape = first.shape();
  outShape.insert(outShape.begin() + axis, ctx.inputs.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= outShape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= outShape[d];
  Tensor out(first.dtype(), outShape);
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    for (int64_t o = 0; o < outer; ++o)
      copyElements(out, (o * ctx.inputs.size() + i) * inner, ctx.inputs[i],
                   o * inner, inner);
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult fill(KernelContext &ctx) {
  std::vector<int64_t> dims = toInts(ctx.inputs[0]);
  for (int64_t d : dims)
    if (d < 0)
      return ctx.error() << "dims must be non-negative, got "
                         << shapeString(dims);
  const Tensor &value = ctx.inputs[1];
  if (value.rank() != 0)
    return ctx.error() << "value must be a scalar, got shape "
                       << shapeString(value.shape());
  ctx.outputs[0] = gather(value, dims, [](int64_t) { return 0; });
  return success();
}

static LogicalResult tile(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> multiples = toInts(ctx.inputs[1]);
  if (int64_t(multiples.size()) != in.rank())
    return ctx.error()
           << "Expected multiples argument to be a vector of length "
           << in.rank() << " but got length " << multiples.size();
  std::vector<int64_t> outShape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (multiples[d] < 0)
      return ctx.error() << "Expected multiples[" << d << "] >= 0, but got "
                         << multiples[d];
    outShape.push_back(in.shape()[d] * multiples[d]);
  }
  auto inStrides = stridesOf(in.shape()), outStrides = stridesOf(outShape);
  ctx.outputs[0] = gather(in, outShape, [&](int64_t i) {
    int64_t src = 0;
    for (int64_t d = 0; d < in.rank(); ++d)
      src += (i / outStrides[d]) % outShape[d] % in.shape()[d] * inStrides[d];
    return src;
  });
  return success();
}

/// GatherV2 along a constant axis (batch_dims 0).
static LogicalResult gatherV2(KernelContext &ctx) {
  const Tensor &params = ctx.inputs[0], &indices = ctx.inputs[1];
  int64_t axis = toInts(ctx.inputs[2]).at(0), rank = params.rank();
  if (ctx.getInt("batch_dims").value_or(0) != 0)
    return ctx.error() << "batch_dims other than 0 are not supported yet";
  if (axis < -rank || axis >= rank)
    return ctx.error() << "Expected axis in the range [" << -rank << ", "
                       << rank << "), but got " << axis;
  if (axis < 0)
    axis += rank;
  std::vector<int64_t> idx = toInts(indices);
  int64_t limit = params.shape()[axis];
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= limit)
      return ctx.error() << "indices[" << i << "] = " << idx[i]
                         << " is not in [0, " << limit << ")";
  std::vector<int64_t> outShape(params.shape().begin(),
                                params.shape().begin() + axis);
  outShape.insert(outShape.end(), indices.shape().begin(),
                  indices.shape().end());
  outShape.insert(outShape.end(), params.shape().begin() + axis + 1,
                  params.shape().end());
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= params.shape()[d];
  int64_t n = idx.size();
  ctx.outputs[0] = gather(params, outShape, [&](int64_t i) {
    int64_t in = i % inner, rest = i / inner;
    int64_t k = rest % std::max<int64_t>(n, 1),
            outer = rest / std::max<int64_t>(n, 1);
    return (outer * limit + idx[k]) * inner + in;
  });
  return success();
}

/// The index tuples of a GatherNd/ScatterNd `indices` tensor: [count, depth]
/// row-major, each checked against `shape`'s leading dims with TensorFlow's
/// message (`what` names the shape: "param shape", "shape").
static FailureOr<std::vector<int64_t>>
checkedIndexTuples(KernelContext &ctx, const Tensor &indices,
                   const std::vector<int64_t> &shape, const char *what) {
  int64_t depth = indices.shape().back();
  std::vector<int64_t> tuples = toInts(indices);
  for (size_t start = 0; start < tuples.size(); start += depth)
    for (int64_t d = 0; d < depth; ++d)
      if (tuples[start + d] < 0 || tuples[start + d] >= shape[d]) {
        std::string tuple;
        for (int64_t e = 0; e < depth; ++e)
          tuple += (e ? ", " : "") + std::to_string(tuples[start + e]);
        return ctx.error() << "indices[" << start / std::max<int64_t>(depth, 1)
                           << "] = [" << tuple << "] does not index into "
                           << what << " " << shapeString(shape),
               failure();
      }
  return tuples;
}

/// GatherNd: output[i...] = params[indices[i...], ...].
static LogicalResult gatherNd(KernelContext &ctx) {
  const Tensor &params = ctx.inputs[0], &indices = ctx.inputs[1];
  if (params.rank() < 1 || indices.rank() < 1)
    return ctx.error() << "params and indices must be at least 1-D, got "
                       << shapeString(params.shape()) << " and "
                       << shapeString(indices.shape());
  int64_t depth = indices.shape().back();
  if (depth > params.rank())
    return ctx.error() << "index innermost dimension length must be <= "
                          "params rank; saw: "
                       << depth << " vs. " << params.rank();
  std::vector<int64_t> outShape(indices.shape().begin(),
                                indices.shape().end() - 1);
  outShape.insert(outShape.end(), params.shape().begin() + depth,
                  params.shape().end());
  int64_t outCount = 1;
  for (int64_t d : outShape)
    outCount *= d;
  for (int64_t d = 0; d < depth; ++d)
    if (params.shape()[d] == 0 && outCount > 0)
      return ctx.error() << "Requested more than 0 entries, but params is "
                            "empty.";
  FailureOr<std::vector<int64_t>> tuples =
      checkedIndexTuples(ctx, indices, params.shape(), "param shape");
  if (failed(tuples))
    return failure();
  int64_t inner = 1;
  for (int64_t d = depth; d < params.rank(); ++d)
    inner *= params.shape()[d];
  std::vector<int64_t> strides = stridesOf(params.shape());
  ctx.outputs[0] = gather(params, outShape, [&](int64_t i) {
    // inner > 0 wherever an element exists.
    int64_t row = i / inner, at = i % inner;
    for (int64_t d = 0; d < depth; ++d)
      at += (*tuples)[row * depth + d] * strides[d];
    return at;
  });
  return success();
}

namespace {
/// How a scatter combines an update with the element it lands on.
enum class Combine { Add, Sub, Min, Max, Update };
} // namespace

/// Checks that `updates` has the shape a scatter of `indices` into `shape`
/// takes: the indices' outer dims, then shape's past the index depth.
static LogicalResult checkScatterShapes(KernelContext &ctx,
                                        const Tensor &indices,
                                        const Tensor &updates,
                                        const std::vector<int64_t> &shape) {
  if (indices.rank() < 1)
    return ctx.error() << "Indices shape must have rank at least one. Found:"
                       << shapeString(indices.shape());
  int64_t depth = indices.shape().back();
  if (depth > int64_t(shape.size()))
    return ctx.error() << "Output must have at least " << depth
                       << " dimensions, the indices' innermost length; got "
                       << shapeString(shape);
  std::vector<int64_t> expected(indices.shape().begin(),
                                indices.shape().end() - 1);
  expected.insert(expected.end(), shape.begin() + depth, shape.end());
  if (updates.shape() != expected)
    return ctx.error() << "updates must have shape " << shapeString(expected)
                       << " (indices' outer dims, then shape's after " << depth
                       << "), got " << shapeString(updates.shape());
  return success();
}

/// Combines each row of `updates` into `out` at the row its index tuple
/// names, in order (a repeated tuple sums for Add, the last wins for
/// Update; integers wrap). The tuples are checked.
static LogicalResult scatterInto(KernelContext &ctx, Tensor &out,
                                 const Tensor &indices, const Tensor &updates,
                                 Combine combine) {
  const std::vector<int64_t> &shape = out.shape();
  if (failed(checkScatterShapes(ctx, indices, updates, shape)))
    return failure();
  FailureOr<std::vector<int64_t>> tuples =
      checkedIndexTuples(ctx, indices, shape, "shape");
  if (failed(tuples))
    return failure();
  int64_t depth = indices.shape().back(), rows = 1, inner = 1;
  for (int64_t d = 0; d + 1 < indices.rank(); ++d)
    rows *= indices.shape()[d];
  for (size_t d = depth; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<int64_t> strides = stridesOf(shape);
  auto rowStart = [&](int64_t row) {
    int64_t at = 0;
    for (int64_t d = 0; d < depth; ++d)
      at += (*tuples)[row * depth + d] * strides[d];
    return at;
  };
  if (combine == Combine::Update) {
    size_t bytes = dtypeSize(out.dtype());
    if (!bytes)
      return ctx.error() << "dtype " << dtypeName(out.dtype())
                         << " is not supported";
    for (int64_t row = 0; row < rows; ++row)
      std::memcpy(out.raw() + rowStart(row) * bytes,
                  updates.raw() + row * inner * bytes, inner * bytes);
    return success();
  }
  bool typed = visitNumeric(updates.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *in = updates.data<T>();
    T *values = out.data<T>();
    for (int64_t row = 0; row < rows; ++row) {
      T *target = values + rowStart(row);
      const T *source = in + row * inner;
      for (int64_t j = 0; j < inner; ++j) {
        T &a = target[j];
        T b = source[j];
        switch (combine) {
        case Combine::Add:
          a = wrappingAdd(a, b);
          break;
        case Combine::Sub:
          a = wrappingSub(a, b);
          break;
        // As Eigen's cwiseMin/Max: a NaN update leaves the element.
        case Combine::Min:
          a = b < a ? b : a;
          break;
        case Combine::Max:
          a = a < b ? b : a;
          break;
        case Combine::Update:
          break;
        }
      }
    }
  });
  if (!typed)
    return ctx.error() << "dtype " << dtypeName(updates.dtype())
                       << " is not supported";
  return success();
}

/// ScatterNd: zeros of `shape` with each update added at its index tuple
/// (duplicates sum; integers wrap).
static LogicalResult scatterNd(KernelContext &ctx) {
  Tensor out(ctx.inputs[1].dtype(), toInts(ctx.inputs[2]));
  if (failed(scatterInto(ctx, out, ctx.inputs[0], ctx.inputs[1], Combine::Add)))
    return failure();
  ctx.outputs[0] = out;
  return success();
}

/// TensorScatterUpdate/Add/Sub/Min/Max: a copy of `tensor` with each update
/// combined into the element its index tuple names.
template <Combine combine>
static LogicalResult tensorScatter(KernelContext &ctx) {
  const Tensor &tensor = ctx.inputs[0];
  if (tensor.rank() < 1)
    return ctx.error() << "Shape must be at least rank 1 but is rank 0";
  if (tensor.numElements() == 0 &&
      (ctx.inputs[1].numElements() > 0 || ctx.inputs[2].numElements() > 0))
    return ctx.error() << "Indices and updates specified for empty input";
  Tensor out(tensor.dtype(), tensor.shape());
  std::memcpy(out.raw(), tensor.raw(), tensor.byteSize());
  if (failed(scatterInto(ctx, out, ctx.inputs[1], ctx.inputs[2], combine)))
    return failure();
  ctx.outputs[0] = out;
  return success();
}

/// Slice: `size` elements from `begin` in each dimension (-1: to the end).
static LogicalResult slice(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> begin = toInts(ctx.inputs[1]),
                       size = toInts(ctx.inputs[2]);
  if (int64_t(begin.size()) != in.rank() || int64_t(size.size()) != in.rank())
    return ctx.error() << "Expected begin and size arguments to be 1-D tensors "
                          "of size "
                       << in.rank();
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (size[d] == -1)
      size[d] = in.shape()[d] - begin[d];
    if (begin[d] < 0 || size[d] < 0 || begin[d] + size[d] > in.shape()[d])
      return ctx.error() << "Expected begin[" << d << "] = " << begin[d]
                         << " and size[" << d << "] = " << size[d]
                         << " to fit in dimension " << in.shape()[d];
  }
  auto inStrides = stridesOf(in.shape()), outStrides = stridesOf(size);
  ctx.outputs[0] = gather(in, size, [&](int64_t i) {
    int64_t src = 0;
    for (int64_t d = 0; d < in.rank(); ++d)
      src += ((i / outStrides[d]) % size[d] + begin[d]) * inStrides[d];
    return src;
  });
  return success();
}

/// Pad with zeros; paddings is an [rank, 2] tensor.
static LogicalResult pad(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> paddings = toInts(ctx.inputs[1]);
  if (int64_t(paddings.size()) != 2 * in.rank())
    return ctx.error() << "The first dimension of paddings must be the rank "
                          "of inputs "
                       << in.rank();
  std::vector<int64_t> outShape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (paddings[2 * d] < 0 || paddings[2 * d + 1] < 0)
      return ctx.error() << "Paddings must be non-negative";
    outShape.push_back(in.shape()[d] + paddings[2 * d] + paddings[2 * d + 1]);
  }
  Tensor out(in.dtype(), outShape);
  auto inStrides = stridesOf(in.shape()), outStrides = stridesOf(outShape);
  for (int64_t i = 0; i < in.numElements(); ++i) {
    int64_t dst = 0;
    for (int64_t d = 0; d < in.rank(); ++d)
      dst += ((i / inStrides[d]) % in.shape()[d] + paddings[2 * d]) *
             outStrides[d];
    copyElements(out, dst, in, i, 1);
  }
  ctx.outputs[0] = out;
  return success();
}

/// OneHot: `depth` classes inserted at `axis`; indices outside [0, depth)
/// give rows of off_value.
static LogicalResult oneHot(KernelContext &ctx) {
  const Tensor &indices = ctx.inputs[0], &on = ctx.inputs[2],
               &off = ctx.inputs[3];
  int64_t depth = toInts(ctx.inputs[1]).at(0);
  int64_t axis = ctx.getInt("axis").value_or(-1), rank = indices.rank();
  if (depth < 0)
    return ctx.error() << "depth must be non-negative, got: " << depth;
  if (axis != -1 && (axis < 0 || axis > rank))
    return ctx.error() << "Expected axis to be -1 or between [0, " << rank + 1
                       << ").  But received: " << axis;
  if (on.numElements() != 1 || off.numElements() != 1)
    return ctx.error() << "on_value and off_value must be scalars";
  if (axis == -1)
    axis = rank;
  std::vector<int64_t> shape = indices.shape();
  shape.insert(shape.begin() + axis, depth);
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d)
    inner *= indices.shape()[d];
  Tensor out = gather(on, shape, [](int64_t) { return 0; });
  size_t size = dtypeSize(out.dtype());
  for (int64_t i = 0; i < out.numElements(); ++i) {
    int64_t outer = i / (depth * inner), cls = i / inner % depth,
            in = i % inner;
    if (indices.getAsInt(outer * inner + in) != cls) {
      if (out.dtype() == kString)
        out.strings()[i] = off.strings()[0];
      else
        std::memcpy(out.raw() + i * size, off.raw(), size);
    }
  }
  ctx.outputs[0] = out;
  return success();
}

/// Where: the coordinates of the true (non-zero) elements, row-major.
static LogicalResult where(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  if (in.dtype() == kString || !dtypeSize(in.dtype()))
    return ctx.error() << "unsupported dtype " << dtypeName(in.dtype());
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < in.numElements(); ++i)
    if (in.dtype() == kBool ? in.data<bool>()[i] : in.getAsDouble(i) != 0)
      hits.push_back(i);
  Tensor out(kInt64, {int64_t(hits.size()), in.rank()});
  auto strides = stridesOf(in.shape());
  for (size_t k = 0; k < hits.size(); ++k)
    for (int64_t d = 0; d < in.rank(); ++d)
      out.data<int64_t>()[k * in.rank() + d] =
          hits[k] / strides[d] % in.shape()[d];
  ctx.outputs[0] = out;
  return success();
}

/// BroadcastTo: NumPy broadcasting towards a fixed target shape.
static LogicalResult broadcastTo(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  std::vector<int64_t> target = toInts(ctx.inputs[1]), joined;
  if (!broadcastShape(in.shape(), target, joined))
    return ctx.error() << "Incompatible shapes: " << shapeString(in.shape())
                       << " vs. " << shapeString(target);
  if (joined != target)
    return ctx.error() << "Unable to broadcast tensor of shape "
                       << shapeString(in.shape()) << " to tensor of shape "
                       << shapeString(target);
  std::vector<int64_t> sources = broadcastIndices(in.shape(), target);
  ctx.outputs[0] = gather(in, target, [&](int64_t i) { return sources[i]; });
  return success();
}

/// BroadcastGradientArgs: for each of two shapes, the output dimensions a
/// gradient must be summed over to get back to it (TensorFlow's BCast:
/// none for equal shapes, otherwise every dimension that is 1, or missing,
/// in that shape).
static LogicalResult broadcastGradientArgs(KernelContext &ctx) {
  std::vector<int64_t> s0 = toInts(ctx.inputs[0]), s1 = toInts(ctx.inputs[1]);
  std::vector<int64_t> joined;
  if (!broadcastShape(s0, s1, joined))
    return ctx.error() << "Incompatible shapes: " << shapeString(s0) << " vs. "
                       << shapeString(s1);
  std::vector<int64_t> r0, r1;
  int64_t rank = joined.size();
  auto dimOf = [&](const std::vector<int64_t> &s, int64_t d) {
    int64_t offset = rank - int64_t(s.size());
    return d < offset ? 1 : s[d - offset];
  };
  for (int64_t d = 0; s0 != s1 && d < rank; ++d) {
    if (dimOf(s0, d) == 1)
      r0.push_back(d);
    if (dimOf(s1, d) == 1)
      r1.push_back(d);
  }
  int32_t dt = ctx.inputs[0].dtype();
  ctx.outputs[0] = vectorOf(dt, r0);
  ctx.outputs[1] = vectorOf(dt, r1);
  return success();
}

template <int value> static LogicalResult likeKernel(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  Tensor out(in.dtype(), in.shape());
  // ZerosLike of a TensorList: a list as long, its items zeros (the zero
  // gradient of a list, as TensorFlow's zeros_like for variants).
  if (in.dtype() == kVariant && value == 0) {
    for (int64_t i = 0; i < in.numElements(); ++i) {
      const TensorList *list = in.list(i);
      if (!list)
        continue;
      auto zeros = std::make_shared<TensorList>(*list);
      for (Tensor &item : zeros->items)
        if (item.isValid())
          item = Tensor(item.dtype(), item.shape());
      out.setList(i, std::move(zeros));
    }
    ctx.outputs[0] = out;
    return success();
  }
  for (int64_t i = 0; value && i < out.numElements(); ++i)
    if (!out.setFromDouble(i, value))
      return ctx.error() << "unsupported dtype " << dtypeName(in.dtype());
  ctx.outputs[0] = out;
  return success();
}

/// Cuts `in` along `axis` into pieces of the given sizes.
static void splitAlong(KernelContext &ctx, const Tensor &in, int64_t axis,
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

static LogicalResult split(KernelContext &ctx) {
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

static LogicalResult splitV(KernelContext &ctx) {
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

static LogicalResult unpack(KernelContext &ctx) {
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
static LogicalResult plan(KernelContext &ctx, const std::vector<int64_t> &shape,
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
static std::vector<int64_t>
sliceSources(const std::vector<int64_t> &shape,
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

static LogicalResult stridedSlice(KernelContext &ctx) {
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
static LogicalResult stridedSliceGrad(KernelContext &ctx) {
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

KernelTable cleave::interp::getArrayKernels() {
  return {
      {"Const", constKernel},
      {"Placeholder", placeholder},
      {"PlaceholderWithDefault", forward},
      {"Identity", forward},
      {"IdentityN", forward},
      {"Snapshot", forward},
      {"StopGradient", forward},
      {"PreventGradient", forward},
      {"CheckNumerics", checkNumerics<false>},
      {"CheckNumericsV2", checkNumerics<true>},
      {"Unique", unique},
      {"Bitcast", bitcast},
      {"MatrixBandPart", matrixBandPart},
      {"ReverseV2", reverseV2},
      {"Shape", shapeKernel},
      {"ShapeN", shapeNKernel},
      {"Size", sizeKernel},
      {"Rank", rankKernel},
      {"Reshape", reshape},
      {"ExpandDims", expandDims},
      {"Squeeze", squeeze},
      {"Transpose", transpose},
      {"ConcatV2", concatV2},
      {"Pack", pack},
      {"Fill", fill},
      {"Tile", tile},
      {"GatherV2", gatherV2},
      {"GatherNd", gatherNd},
      {"ScatterNd", scatterNd},
      {"TensorScatterUpdate", tensorScatter<Combine::Update>},
      {"TensorScatterAdd", tensorScatter<Combine::Add>},
      {"TensorScatterSub", tensorScatter<Combine::Sub>},
      {"TensorScatterMin", tensorScatter<Combine::Min>},
      {"TensorScatterMax", tensorScatter<Combine::Max>},
      {"Slice", slice},
      {"Pad", pad},
      {"OneHot", oneHot},
      {"Where", where},
      {"BroadcastTo", broadcastTo},
      {"BroadcastGradientArgs", broadcastGradientArgs},
      {"ZerosLike", likeKernel<0>},
      {"OnesLike", likeKernel<1>},
      {"Split", split},
      {"SplitV", splitV},
      {"Unpack", unpack},
      {"StridedSlice", stridedSlice},
      {"StridedSliceGrad", stridedSliceGrad},
  };
}
