//===- ListKernels.cpp - TensorList kernels -------------------------------===//
//
// The TensorList ops of TensorFlow 2's control flow (list_ops.cc): a list
// is the TensorList held by a DT_VARIANT scalar (cleave/Tensor/TensorList.h).
// Each op builds a new list; items share their buffers. An item not set
// yet (TensorListReserve) reads as zeros where the element shape is fully
// known, as in TensorFlow. Data family ops, in their own file.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Tensor/TensorList.h"

#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

using Shape = ElementShape;

/// An element_shape input: -1 (a scalar) is an unknown rank.
static Shape shapeFromTensor(const Tensor &t) {
  std::vector<int64_t> values = toInts(t);
  if (t.rank() == 0)
    return values.at(0) == -1 ? Shape() : Shape(values);
  return values;
}

/// Merges two partial shapes; nothing when they conflict.
static std::optional<Shape> merged(const Shape &a, const Shape &b) {
  if (!a)
    return b;
  if (!b)
    return a;
  if (a->size() != b->size())
    return std::nullopt;
  std::vector<int64_t> out = *a;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0)
      out[i] = (*b)[i];
    else if ((*b)[i] >= 0 && (*b)[i] != out[i])
      return std::nullopt;
  }
  return Shape(out);
}

static bool fullyDefined(const Shape &shape) {
  return shape && llvm::all_of(*shape, [](int64_t d) { return d >= 0; });
}

/// The list an input holds, checked: its element dtype must be the op's.
static FailureOr<const TensorList *> inputList(KernelContext &ctx,
                                               unsigned input) {
  const Tensor &t = ctx.inputs[input];
  if (t.dtype() != kVariant || t.numElements() != 1 || !t.list(0))
    return ctx.error() << "Input handle is not a list. Saw: '" << t.toString(4)
                       << "'",
           failure();
  const TensorList *list = t.list(0);
  std::optional<int32_t> dtype = ctx.getType("element_dtype");
  if (dtype && *dtype != list->elementDType)
    return ctx.error() << "Invalid data types; op elements "
                       << dtypeName(*dtype) << " but list elements "
                       << dtypeName(list->elementDType),
           failure();
  return list;
}

static Tensor handleOf(std::shared_ptr<const TensorList> list) {
  Tensor handle(kVariant, {});
  handle.setList(0, std::move(list));
  return handle;
}

/// An item as read: set ones as they are, unset ones zeros of the element
/// shape (merged with the op's), which must then be fully defined.
static FailureOr<Tensor> readItem(KernelContext &ctx, const TensorList &list,
                                  int64_t index, const Shape &opShape) {
  const Tensor &item = list.items[index];
  if (item.isValid())
    return item;
  std::optional<Shape> shape = merged(list.elementShape, opShape);
  if (!shape || !fullyDefined(*shape))
    return ctx.error() << "Trying to read an uninitialized tensor but "
                          "element_shape is not fully defined: "
                       << elementShapeString(shape ? *shape : list.elementShape)
                       << " and no previous set item defines it",
           failure();
  return Tensor(list.elementDType, **shape);
}

/// Whether `item` fits the list's element shape.
static bool fits(const TensorList &list, const Tensor &item) {
  return item.dtype() == list.elementDType &&
         merged(list.elementShape, item.shape()).has_value();
}

static LogicalResult emptyTensorList(KernelContext &ctx) {
  auto list = std::make_shared<TensorList>();
  list->elementDType = ctx.getType("element_dtype").value_or(0);
  list->elementShape = shapeFromTensor(ctx.inputs[0]);
  list->maxElements = ctx.inputs[1].getAsInt(0);
  ctx.outputs[0] = handleOf(std::move(list));
  return success();
}

static LogicalResult tensorListReserve(KernelContext &ctx) {
  if (ctx.inputs[1].rank() != 0)
    return ctx.error() << "The num_elements to reserve must be a tensor size "
                          "1, but got "
                       << shapeString(ctx.inputs[1].shape());
  int64_t count = ctx.inputs[1].getAsInt(0);
  if (count < 0)
    return ctx.error() << "The num_elements to reserve must be a non "
                          "negative number, but got "
                       << count;
  auto list = std::make_shared<TensorList>();
  list->elementDType = ctx.getType("element_dtype").value_or(0);
  list->elementShape = shapeFromTensor(ctx.inputs[0]);
  list->items.resize(count);
  ctx.outputs[0] = handleOf(std::move(list));
  return success();
}

/// TensorListFromTensor: the rows of a tensor of rank 1 or more.
static LogicalResult tensorListFromTensor(KernelContext &ctx) {
  const Tensor &t = ctx.inputs[0];
  if (t.rank() < 1)
    return ctx.error() << "Tensor must be at least a vector, but saw shape: "
                       << shapeString(t.shape());
  std::vector<int64_t> rowShape(t.shape().begin() + 1, t.shape().end());
  Shape declared = shapeFromTensor(ctx.inputs[1]);
  if (!merged(declared, rowShape))
    return ctx.error() << "Specified a list with shape " << elementShapeString(declared)
                       << " from a tensor with shape "
                       << shapeString(t.shape());
  auto list = std::make_shared<TensorList>();
  list->elementDType = t.dtype();
  list->elementShape = declared;
  int64_t rows = t.shape()[0];
  int64_t rowElements = 1;
  for (int64_t d : rowShape)
    rowElements *= d;
  size_t bytes = dtypeSize(t.dtype());
  for (int64_t r = 0; r < rows; ++r) {
    Tensor row(t.dtype(), rowShape);
    if (t.dtype() == kString)
      for (int64_t i = 0; i < rowElements; ++i)
        row.strings()[i] = t.strings()[r * rowElements + i];
    else
      std::memcpy(row.raw(), t.raw() + r * rowElements * bytes,
                  rowElements * bytes);
    list->items.push_back(row);
  }
  ctx.outputs[0] = handleOf(std::move(list));
  return success();
}

static LogicalResult tensorListGetItem(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  int64_t index = ctx.inputs[1].getAsInt(0);
  int64_t size = (*list)->items.size();
  if (index < 0 || index >= size)
    return ctx.error() << "Trying to access element " << index
                       << " in a list with " << size << " elements.";
  FailureOr<Tensor> item =
      readItem(ctx, **list, index, shapeFromTensor(ctx.inputs[2]));
  if (failed(item))
    return failure();
  ctx.outputs[0] = *item;
  return success();
}

static LogicalResult tensorListSetItem(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  int64_t index = ctx.inputs[1].getAsInt(0);
  int64_t size = (*list)->items.size();
  bool resize = ctx.getBool("resize_if_index_out_of_bounds").value_or(false);
  if (index < 0 || (index >= size && !resize))
    return ctx.error() << "Trying to modify element " << index
                       << " in a list with " << size << " elements.";
  const Tensor &item = ctx.inputs[2];
  if (!fits(**list, item))
    return ctx.error() << "Tried to set a tensor with incompatible shape at "
                          "a list index. Item element shape: "
                       << shapeString(item.shape())
                       << " list shape: " << elementShapeString((*list)->elementShape);
  auto out = std::make_shared<TensorList>(**list);
  if (index >= size)
    out->items.resize(index + 1);
  out->items[index] = item;
  ctx.outputs[0] = handleOf(std::move(out));
  return success();
}

/// TensorListStack: the items stacked along a new first dimension.
static LogicalResult tensorListStack(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  const TensorList &l = **list;
  int64_t expected = ctx.getInt("num_elements").value_or(-1);
  if (expected != -1 && expected != int64_t(l.items.size()))
    return ctx.error() << "Operation expected a list with " << expected
                       << " elements but got a list with " << l.items.size()
                       << " elements.";
  Shape opShape = shapeFromTensor(ctx.inputs[1]);
  std::optional<Shape> shape = merged(l.elementShape, opShape);
  if (!shape)
    return ctx.error() << "Incompatible shapes for the list and the op: "
                       << elementShapeString(l.elementShape) << " vs. "
                       << elementShapeString(opShape);
  // The items' shape: a set item's, or the (then fully known) element shape.
  std::optional<std::vector<int64_t>> itemShape;
  for (const Tensor &item : l.items)
    if (item.isValid()) {
      itemShape = item.shape();
      break;
    }
  if (!itemShape) {
    if (!fullyDefined(*shape))
      return ctx.error() << "Tried to stack elements of an empty list with "
                            "non-fully-defined element_shape: "
                         << elementShapeString(*shape);
    itemShape = **shape;
  }
  std::vector<int64_t> outShape = {int64_t(l.items.size())};
  outShape.insert(outShape.end(), itemShape->begin(), itemShape->end());
  Tensor out(l.elementDType, outShape);
  int64_t itemElements = 1;
  for (int64_t d : *itemShape)
    itemElements *= d;
  size_t bytes = dtypeSize(l.elementDType);
  for (auto [r, item] : llvm::enumerate(l.items)) {
    if (!item.isValid())
      continue; // zeros
    if (item.shape() != *itemShape)
      return ctx.error() << "Tried to stack list which only contains "
                            "tensors of different shapes: "
                         << shapeString(item.shape()) << " vs. "
                         << shapeString(*itemShape);
    if (l.elementDType == kString)
      for (int64_t i = 0; i < itemElements; ++i)
        out.strings()[r * itemElements + i] = item.strings()[i];
    else
      std::memcpy(out.raw() + r * itemElements * bytes, item.raw(),
                  itemElements * bytes);
  }
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult tensorListPushBack(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  const Tensor &item = ctx.inputs[1];
  if (!fits(**list, item))
    return ctx.error() << "Tried to append a tensor with incompatible shape "
                          "to a list. Op element shape: "
                       << shapeString(item.shape())
                       << " list shape: " << elementShapeString((*list)->elementShape);
  int64_t size = (*list)->items.size(), bound = (*list)->maxElements;
  if (bound != -1 && size >= bound)
    return ctx.error() << "Tried to push item into a full list list size: "
                       << size << " max_num_elements: " << bound;
  auto out = std::make_shared<TensorList>(**list);
  out->items.push_back(item);
  ctx.outputs[0] = handleOf(std::move(out));
  return success();
}

static LogicalResult tensorListPopBack(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  if ((*list)->items.empty())
    return ctx.error() << "Trying to pop from an empty list.";
  FailureOr<Tensor> item = readItem(ctx, **list, (*list)->items.size() - 1,
                                    shapeFromTensor(ctx.inputs[1]));
  if (failed(item))
    return failure();
  auto out = std::make_shared<TensorList>(**list);
  out->items.pop_back();
  ctx.outputs[0] = handleOf(std::move(out));
  ctx.outputs[1] = *item;
  return success();
}

static LogicalResult tensorListLength(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  Tensor length(kInt32, {});
  length.data<int32_t>()[0] = int32_t((*list)->items.size());
  ctx.outputs[0] = length;
  return success();
}

/// TensorListElementShape: the element shape, -1 for unknown dims, a -1
/// scalar for an unknown rank.
static LogicalResult tensorListElementShape(KernelContext &ctx) {
  FailureOr<const TensorList *> list = inputList(ctx, 0);
  if (failed(list))
    return failure();
  ctx.outputs[0] = elementShapeTensor(
      ctx.getType("shape_type").value_or(kInt32), (*list)->elementShape);
  return success();
}

KernelTable cleave::interp::getListKernels() {
  return {
      {"EmptyTensorList", emptyTensorList},
      {"TensorListReserve", tensorListReserve},
      {"TensorListFromTensor", tensorListFromTensor},
      {"TensorListGetItem", tensorListGetItem},
      {"TensorListSetItem", tensorListSetItem},
      {"TensorListStack", tensorListStack},
      {"TensorListPushBack", tensorListPushBack},
      {"TensorListPopBack", tensorListPopBack},
      {"TensorListLength", tensorListLength},
      {"TensorListElementShape", tensorListElementShape},
  };
}
