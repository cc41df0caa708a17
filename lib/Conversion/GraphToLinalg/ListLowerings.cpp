//===- ListLowerings.cpp - TensorLists as buffers -------------------------===//
//
// TensorFlow 2's loops accumulate into TensorLists. In compiled code a list
// of a static element shape and a bounded length is a buffer of `capacity`
// items and a length (LoweredValue::List), as XLA's lowering of the list
// ops keeps them: TensorListReserve and TensorListFromTensor make lists
// whose length is their capacity, EmptyTensorList one of length 0 bounded
// by max_num_elements; SetItem and PushBack write an item in place once
// bufferized, GetItem and PopBack read one, Stack is the buffer. Items
// never set read as zeros, as the interpreter reads them when the element
// shape is known. Indices are checked at run time with the interpreter's
// messages (cleave_cpu_list_check); what only the compiler can know (shapes,
// dtypes, bounds) is checked here, also with its messages. A list whose
// element shape is not fully known at compile time, or that a loop grows
// without a bound, does not compile: its cluster runs interpreted.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Target/CPU/KernelLibrary.h"
#include "cleave/Tensor/TensorList.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

using List = LoweredValue::List;
using Shape = ElementShape;

static constexpr llvm::StringLiteral kListCheck = "cleave_cpu_list_check";

/// The element_shape input `i` (a compile-time constant).
static FailureOr<Shape> elementShapeInput(NodeLowering &ctx, unsigned i) {
  FailureOr<std::vector<int64_t>> values = ctx.constantInts(i);
  if (failed(values))
    return failure();
  if (ctx.shape(i).empty() && values->size() == 1 && (*values)[0] == -1)
    return Shape();
  return Shape(*values);
}

/// Whether the static `shape` has the partly known `declared` shape.
static bool hasShape(ArrayRef<int64_t> shape, const Shape &declared) {
  if (!declared)
    return true;
  if (declared->size() != shape.size())
    return false;
  for (auto [d, s] : llvm::zip(*declared, shape))
    if (d >= 0 && d != s)
      return false;
  return true;
}

/// The fully known element shape of a new list.
static FailureOr<std::vector<int64_t>> staticElementShape(NodeLowering &ctx,
                                                          const Shape &shape) {
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return ctx.error() << "a TensorList compiles when its element shape is "
                          "fully known, but it is "
                       << elementShapeString(shape),
           failure();
  return *shape;
}

/// The list input `i`, checked against the op's element_dtype.
static FailureOr<List> listInput(NodeLowering &ctx, unsigned i) {
  const LoweredValue &value = ctx.input(i);
  if (!value.list)
    return ctx.error() << "input " << i
                       << " is not a TensorList made in compiled code",
           failure();
  std::optional<int32_t> dtype = ctx.getType("element_dtype");
  if (dtype && *dtype != value.list->elementDType)
    return ctx.error() << "Invalid data types; op elements "
                       << dtypeName(*dtype) << " but list elements "
                       << dtypeName(value.list->elementDType),
           failure();
  return *value.list;
}

/// The list input `list` of an op that also takes the element shape it
/// expects (input `shape`), checked to agree.
static FailureOr<List> listWithOpShape(NodeLowering &ctx, unsigned list,
                                       unsigned shape) {
  FailureOr<List> value = listInput(ctx, list);
  FailureOr<Shape> opShape = elementShapeInput(ctx, shape);
  if (failed(value) || failed(opShape))
    return failure();
  if (!hasShape(value->elementShape, *opShape))
    return ctx.error() << "Incompatible shapes for the list and the op: "
                       << shapeString(value->elementShape) << " vs. "
                       << elementShapeString(*opShape),
           failure();
  return value;
}

static Value i64Constant(NodeLowering &ctx, int64_t v) {
  return ctx.b.create<arith::ConstantOp>(ctx.loc, ctx.b.getI64IntegerAttr(v));
}

/// The list's length as an i64.
static Value lengthOf(NodeLowering &ctx, const List &list) {
  return list.fixedLength ? i64Constant(ctx, list.capacity) : list.length;
}

/// Scalar input `i` (an index) as an i64.
static Value scalarInput(NodeLowering &ctx, unsigned i) {
  Value element =
      ctx.b.create<tensor::ExtractOp>(ctx.loc, ctx.tensor(i), ValueRange{});
  if (element.getType().isInteger(64))
    return element;
  return ctx.b.create<arith::ExtSIOp>(ctx.loc, ctx.b.getI64Type(), element);
}

/// Checks `check` at run time (KernelLibrary.h), failing the node with the
/// interpreter's message.
static void checkAtRunTime(NodeLowering &ctx, cpu::ListCheck check,
                           Value index, Value size) {
  Type i64 = ctx.b.getI64Type();
  ctx.declareRuntimeFunction(kListCheck, {i64, i64, i64}, {i64});
  Value code = ctx.b
                   .create<func::CallOp>(
                       ctx.loc, kListCheck, TypeRange{i64},
                       ValueRange{i64Constant(ctx, check), index, size})
                   .getResult(0);
  ctx.setStatusFromRuntime(code);
}

/// `index` clamped to the buffer's rows, as an index value, so that a
/// failed check still reads and writes inside the buffer.
static Value clampedRow(NodeLowering &ctx, const List &list, Value index) {
  OpBuilder &b = ctx.b;
  Value zero = i64Constant(ctx, 0);
  Value last = i64Constant(ctx, std::max<int64_t>(list.capacity - 1, 0));
  Value low = b.create<arith::MaxSIOp>(ctx.loc, index, zero);
  Value row = b.create<arith::MinSIOp>(ctx.loc, low, last);
  return b.create<arith::IndexCastOp>(ctx.loc, b.getIndexType(), row);
}

/// The sizes, offsets and strides of row `row` of the buffer.
static void rowSlice(NodeLowering &ctx, const List &list, Value row,
                     SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes,
                     SmallVectorImpl<OpFoldResult> &strides) {
  offsets.push_back(row);
  sizes.push_back(ctx.b.getIndexAttr(1));
  strides.push_back(ctx.b.getIndexAttr(1));
  for (int64_t d : list.elementShape) {
    offsets.push_back(ctx.b.getIndexAttr(0));
    sizes.push_back(ctx.b.getIndexAttr(d));
    strides.push_back(ctx.b.getIndexAttr(1));
  }
}

static std::vector<int64_t> rowShape(const List &list) {
  std::vector<int64_t> shape = {1};
  llvm::append_range(shape, list.elementShape);
  return shape;
}

static std::vector<int64_t> bufferShape(const List &list) {
  std::vector<int64_t> shape = {list.capacity};
  llvm::append_range(shape, list.elementShape);
  return shape;
}

/// Item `index` of the list's buffer (zeros for a list without room).
static Value readRow(NodeLowering &ctx, const List &list, Value buffer,
                     Value index) {
  if (list.capacity == 0)
    return ctx.filled(list.elementShape, list.elementDType,
                      ctx.scalar(list.elementDType, 0));
  SmallVector<OpFoldResult> offsets, sizes, strides;
  rowSlice(ctx, list, clampedRow(ctx, list, index), offsets, sizes, strides);
  Value row = ctx.b.create<tensor::ExtractSliceOp>(
      ctx.loc, ctx.tensorType(rowShape(list), list.elementDType), buffer,
      offsets, sizes, strides);
  return ctx.reshape(row, rowShape(list), list.elementShape,
                     list.elementDType);
}

/// The buffer with item `index` replaced by `item`.
static Value writeRow(NodeLowering &ctx, const List &list, Value buffer,
                      Value index, Value item) {
  if (list.capacity == 0)
    return buffer;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  rowSlice(ctx, list, clampedRow(ctx, list, index), offsets, sizes, strides);
  Value row = ctx.reshape(item, list.elementShape, rowShape(list),
                          list.elementDType);
  return ctx.b.create<tensor::InsertSliceOp>(ctx.loc, row, buffer, offsets,
                                             sizes, strides);
}

static void setList(NodeLowering &ctx, unsigned output, Value buffer,
                    List list) {
  LoweredValue value;
  value.tensor = buffer;
  value.dtype = cleave::kVariant;
  value.list = std::move(list);
  ctx.setOutput(output, value);
}

/// A new list of `capacity` items, all zeros.
static LogicalResult newList(NodeLowering &ctx, int64_t capacity,
                             bool fixedLength) {
  FailureOr<Shape> declared = elementShapeInput(ctx, 0);
  if (failed(declared))
    return failure();
  FailureOr<std::vector<int64_t>> shape = staticElementShape(ctx, *declared);
  if (failed(shape))
    return failure();
  List list;
  list.elementDType = ctx.getType("element_dtype").value_or(0);
  list.elementShape = *shape;
  list.capacity = capacity;
  list.fixedLength = fixedLength;
  if (!fixedLength)
    list.length = i64Constant(ctx, 0);
  if (!ctx.elementType(list.elementDType))
    return ctx.error() << "a TensorList of "
                       << dtypeName(list.elementDType)
                       << " items has no CPU lowering",
           failure();
  Value buffer = ctx.filled(bufferShape(list), list.elementDType,
                            ctx.scalar(list.elementDType, 0));
  setList(ctx, 0, buffer, std::move(list));
  return success();
}

/// TensorListReserve(element_shape, num_elements): a list of num_elements
/// items not set yet.
static LogicalResult tensorListReserve(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> count = ctx.constantInts(1);
  if (failed(count))
    return failure();
  if (!ctx.shape(1).empty())
    return ctx.error() << "The num_elements to reserve must be a tensor size "
                          "1, but got "
                       << shapeString(ctx.shape(1));
  if ((*count)[0] < 0)
    return ctx.error() << "The num_elements to reserve must be a non "
                          "negative number, but got "
                       << (*count)[0];
  return newList(ctx, (*count)[0], /*fixedLength=*/true);
}

/// EmptyTensorList(element_shape, max_num_elements): an empty list that
/// grows up to its bound.
static LogicalResult emptyTensorList(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> bound = ctx.constantInts(1);
  if (failed(bound))
    return failure();
  if ((*bound)[0] < 0)
    return ctx.error() << "a TensorList compiles when its length is bounded, "
                          "but max_num_elements is "
                       << (*bound)[0];
  return newList(ctx, (*bound)[0], /*fixedLength=*/false);
}

/// TensorListFromTensor(tensor, element_shape): the rows of the tensor.
static LogicalResult tensorListFromTensor(NodeLowering &ctx) {
  const std::vector<int64_t> &shape = ctx.shape(0);
  if (shape.empty())
    return ctx.error() << "Tensor must be at least a vector, but saw shape: "
                       << shapeString(shape);
  FailureOr<Shape> declared = elementShapeInput(ctx, 1);
  if (failed(declared))
    return failure();
  List list;
  list.elementDType = ctx.dtype(0);
  list.elementShape.assign(shape.begin() + 1, shape.end());
  list.capacity = shape[0];
  if (!hasShape(list.elementShape, *declared))
    return ctx.error() << "Specified a list with shape "
                       << elementShapeString(*declared) << " from a tensor with shape "
                       << shapeString(shape);
  setList(ctx, 0, ctx.tensor(0), std::move(list));
  return success();
}

/// TensorListGetItem(list, index, element_shape).
static LogicalResult tensorListGetItem(NodeLowering &ctx) {
  FailureOr<List> list = listWithOpShape(ctx, 0, 2);
  if (failed(list))
    return failure();
  Value index = scalarInput(ctx, 1);
  checkAtRunTime(ctx, cpu::kListRead, index, lengthOf(ctx, *list));
  ctx.setOutput(0, readRow(ctx, *list, ctx.input(0).tensor, index),
                list->elementDType);
  return success();
}

/// TensorListSetItem(list, index, item).
static LogicalResult tensorListSetItem(NodeLowering &ctx) {
  FailureOr<List> list = listInput(ctx, 0);
  if (failed(list))
    return failure();
  if (ctx.getBool("resize_if_index_out_of_bounds").value_or(false))
    return ctx.error() << "a compiled TensorList keeps its capacity, so "
                          "resize_if_index_out_of_bounds has no CPU lowering",
           failure();
  if (ctx.dtype(2) != list->elementDType ||
      ctx.shape(2) != list->elementShape)
    return ctx.error() << "Tried to set a tensor with incompatible shape at "
                          "a list index. Item element shape: "
                       << shapeString(ctx.shape(2))
                       << " list shape: " << shapeString(list->elementShape);
  Value index = scalarInput(ctx, 1);
  checkAtRunTime(ctx, cpu::kListWrite, index, lengthOf(ctx, *list));
  Value buffer =
      writeRow(ctx, *list, ctx.input(0).tensor, index, ctx.tensor(2));
  setList(ctx, 0, buffer, *list);
  return success();
}

/// TensorListStack(list, element_shape; num_elements): the buffer, when the
/// list's length is its capacity.
static LogicalResult tensorListStack(NodeLowering &ctx) {
  FailureOr<List> list = listWithOpShape(ctx, 0, 1);
  if (failed(list))
    return failure();
  int64_t expected = ctx.getInt("num_elements").value_or(-1);
  if (list->fixedLength) {
    if (expected != -1 && expected != list->capacity)
      return ctx.error() << "Operation expected a list with " << expected
                         << " elements but got a list with " << list->capacity
                         << " elements.";
  } else if (expected == list->capacity) {
    checkAtRunTime(ctx, cpu::kListStack, i64Constant(ctx, expected),
                   list->length);
  } else {
    return ctx.error() << "TensorListStack of a list that grows compiles "
                          "when num_elements is its bound ("
                       << list->capacity << "), but it is " << expected,
           failure();
  }
  ctx.setOutput(0, ctx.input(0).tensor, list->elementDType);
  return success();
}

/// TensorListPushBack(list, item).
static LogicalResult tensorListPushBack(NodeLowering &ctx) {
  FailureOr<List> list = listInput(ctx, 0);
  if (failed(list))
    return failure();
  if (ctx.dtype(1) != list->elementDType ||
      ctx.shape(1) != list->elementShape)
    return ctx.error() << "Tried to append a tensor with incompatible shape "
                          "to a list. Op element shape: "
                       << shapeString(ctx.shape(1))
                       << " list shape: " << shapeString(list->elementShape);
  if (list->fixedLength)
    return ctx.error() << "a compiled TensorList grows up to a bound, and "
                          "one made by TensorListReserve or "
                          "TensorListFromTensor has none",
           failure();
  checkAtRunTime(ctx, cpu::kListPush, list->length,
                 i64Constant(ctx, list->capacity));
  Value buffer =
      writeRow(ctx, *list, ctx.input(0).tensor, list->length, ctx.tensor(1));
  List grown = *list;
  grown.length = ctx.b.create<arith::AddIOp>(ctx.loc, list->length,
                                             i64Constant(ctx, 1));
  setList(ctx, 0, buffer, grown);
  return success();
}

/// TensorListPopBack(list, element_shape) -> (list, item).
static LogicalResult tensorListPopBack(NodeLowering &ctx) {
  FailureOr<List> list = listWithOpShape(ctx, 0, 1);
  if (failed(list))
    return failure();
  Value length = lengthOf(ctx, *list);
  checkAtRunTime(ctx, cpu::kListPop, i64Constant(ctx, 0), length);
  Value last =
      ctx.b.create<arith::SubIOp>(ctx.loc, length, i64Constant(ctx, 1));
  Value item = readRow(ctx, *list, ctx.input(0).tensor, last);
  List shrunk = *list;
  shrunk.fixedLength = false;
  shrunk.length = ctx.b.create<arith::MaxSIOp>(ctx.loc, last,
                                               i64Constant(ctx, 0));
  setList(ctx, 0, ctx.input(0).tensor, shrunk);
  ctx.setOutput(1, item, list->elementDType);
  return success();
}

/// TensorListLength(list) -> int32.
static LogicalResult tensorListLength(NodeLowering &ctx) {
  FailureOr<List> list = listInput(ctx, 0);
  if (failed(list))
    return failure();
  if (list->fixedLength) {
    Tensor length(kInt32, {});
    length.data<int32_t>()[0] = int32_t(list->capacity);
    ctx.setConstantOutput(0, length);
    return success();
  }
  Value length = ctx.b.create<arith::TruncIOp>(ctx.loc, ctx.b.getI32Type(),
                                               list->length);
  ctx.setOutput(0, ctx.b.create<tensor::FromElementsOp>(
                       ctx.loc, ctx.tensorType({}, kInt32), length),
                kInt32);
  return success();
}

/// TensorListElementShape(list): known at compile time.
static LogicalResult tensorListElementShape(NodeLowering &ctx) {
  FailureOr<List> list = listInput(ctx, 0);
  if (failed(list))
    return failure();
  ctx.setConstantOutput(
      0, elementShapeTensor(ctx.getType("shape_type").value_or(kInt32),
                            list->elementShape));
  return success();
}

LoweringTable cleave::conversion::getListLowerings() {
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
