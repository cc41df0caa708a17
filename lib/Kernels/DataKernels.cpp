//===- DataKernels.cpp - TensorArray kernels -------------------------------===//
//
// TensorArrays of v1 control flow. The handle is a resource tensor naming
// the array in the interpreter's State; the float `flow` value only orders
// the reads after the writes, as in TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

static Tensor flowScalar() { return Tensor(kFloat, {}); }

static LogicalResult tensorArray(KernelContext &ctx) {
  int64_t size = toInts(ctx.inputs[0]).at(0);
  if (size < 0)
    return ctx.error() << "Size should be >= 0.";
  uint64_t run = ctx.state.nodeRuns[ctx.node.getName()]++;
  std::string name = ctx.node.getName().str() + "#" + std::to_string(run);
  TensorArray &array = ctx.state.tensorArrays[name];
  array.dtype = ctx.getType("dtype").value_or(0);
  array.dynamicSize = ctx.getBool("dynamic_size").value_or(false);
  array.elements.assign(size, Tensor());
  Tensor handle(kResource, {});
  handle.strings()[0] = name;
  ctx.outputs[0] = handle;
  ctx.outputs[1] = flowScalar();
  return success();
}

static FailureOr<TensorArray *> lookupArray(KernelContext &ctx) {
  const std::string &name = ctx.inputs[0].strings()[0];
  auto it = ctx.state.tensorArrays.find(name);
  if (it == ctx.state.tensorArrays.end())
    return ctx.error() << "TensorArray " << name
                       << " was not found (closed, or never created)",
           failure();
  return &it->second;
}

static LogicalResult writeElement(KernelContext &ctx, TensorArray &array,
                                  int64_t index, const Tensor &value) {
  if (value.dtype() != array.dtype)
    return ctx.error() << "TensorArray dtype is " << dtypeName(array.dtype)
                       << " but Op is trying to write dtype "
                       << dtypeName(value.dtype()) << ".";
  if (index < 0)
    return ctx.error() << "Tried to write to index " << index
                       << " but array size is: " << array.elements.size();
  if (index >= int64_t(array.elements.size())) {
    if (!array.dynamicSize)
      return ctx.error() << "Tried to write to index " << index
                         << " but array is not resizeable and size is: "
                         << array.elements.size();
    array.elements.resize(index + 1);
  }
  if (array.elements[index].isValid())
    return ctx.error() << "Could not write to TensorArray index " << index
                       << " because it has already been written to.";
  array.elements[index] = value;
  return success();
}

static FailureOr<Tensor> readElement(KernelContext &ctx, TensorArray &array,
                                     int64_t index) {
  if (index < 0 || index >= int64_t(array.elements.size()))
    return ctx.error() << "Tried to read from index " << index
                       << " but array size is: " << array.elements.size(),
           failure();
  if (!array.elements[index].isValid())
    return ctx.error() << "Could not read from TensorArray index " << index
                       << " because it has not yet been written to.",
           failure();
  return array.elements[index];
}

static LogicalResult write(KernelContext &ctx) {
  FailureOr<TensorArray *> array = lookupArray(ctx);
  if (failed(array) ||
      failed(writeElement(ctx, **array, toInts(ctx.inputs[1]).at(0),
                          ctx.inputs[2])))
    return failure();
  ctx.outputs[0] = flowScalar();
  return success();
}

static LogicalResult read(KernelContext &ctx) {
  FailureOr<TensorArray *> array = lookupArray(ctx);
  if (failed(array))
    return failure();
  FailureOr<Tensor> value = readElement(ctx, **array, toInts(ctx.inputs[1]).at(0));
  if (failed(value))
    return failure();
  ctx.outputs[0] = *value;
  return success();
}

/// Gather: the elements at `indices`, stacked (they must share a shape).
static LogicalResult gatherArray(KernelContext &ctx) {
  FailureOr<TensorArray *> array = lookupArray(ctx);
  if (failed(array))
    return failure();
  std::vector<int64_t> indices = toInts(ctx.inputs[1]);
  std::vector<Tensor> elements;
  for (int64_t index : indices) {
    FailureOr<Tensor> value = readElement(ctx, **array, index);
    if (failed(value))
      return failure();
    if (!elements.empty() && value->shape() != elements[0].shape())
      return ctx.error() << "TensorArray has inconsistent shapes. Index 0 has "
                            "shape: "
                         << shapeString(elements[0].shape()) << " but index "
                         << index << " has shape: "
                         << shapeString(value->shape());
    elements.push_back(*value);
  }
  std::vector<int64_t> elementShape;
  if (!elements.empty())
    elementShape = elements[0].shape();
  std::vector<int64_t> shape = {int64_t(indices.size())};
  shape.insert(shape.end(), elementShape.begin(), elementShape.end());
  Tensor out((*array)->dtype, shape);
  for (size_t i = 0; i < elements.size(); ++i) {
    int64_t n = elements[i].numElements();
    copyElements(out, i * n, elements[i], 0, n);
  }
  ctx.outputs[0] = out;
  return success();
}

/// Scatter: row i of `value` to index indices[i].
static LogicalResult scatterArray(KernelContext &ctx) {
  FailureOr<TensorArray *> array = lookupArray(ctx);
  if (failed(array))
    return failure();
  std::vector<int64_t> indices = toInts(ctx.inputs[1]);
  const Tensor &value = ctx.inputs[2];
  if (value.rank() < 1 || value.shape()[0] != int64_t(indices.size()))
    return ctx.error() << "Expected len(indices) == values.shape[0], but saw: "
                       << indices.size() << " vs. "
                       << (value.rank() ? value.shape()[0] : 0);
  std::vector<int64_t> rowShape(value.shape().begin() + 1, value.shape().end());
  int64_t rowSize = 1;
  for (int64_t d : rowShape)
    rowSize *= d;
  for (size_t i = 0; i < indices.size(); ++i) {
    Tensor row = gather(value, rowShape,
                        [&](int64_t j) { return int64_t(i) * rowSize + j; });
    if (failed(writeElement(ctx, **array, indices[i], row)))
      return failure();
  }
  ctx.outputs[0] = flowScalar();
  return success();
}

static LogicalResult size(KernelContext &ctx) {
  FailureOr<TensorArray *> array = lookupArray(ctx);
  if (failed(array))
    return failure();
  Tensor out(kInt32, {});
  out.data<int32_t>()[0] = int32_t((*array)->elements.size());
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult close(KernelContext &ctx) {
  ctx.state.tensorArrays.erase(ctx.inputs[0].strings()[0]);
  return success();
}

KernelTable cleave::interp::getDataKernels() {
  return {
      {"TensorArrayV3", tensorArray},
      {"TensorArrayWriteV3", write},
      {"TensorArrayReadV3", read},
      {"TensorArrayGatherV3", gatherArray},
      {"TensorArrayScatterV3", scatterArray},
      {"TensorArraySizeV3", size},
      {"TensorArrayCloseV3", close},
  };
}
