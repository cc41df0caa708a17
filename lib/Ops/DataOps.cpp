//===- DataOps.cpp - container and input pipeline op signatures -----------===//
//
// TensorArrays (data_flow_ops.cc), TensorLists (list_ops.cc), lookup tables
// (lookup_ops.cc), tf.data (dataset_ops.cc) and ParseExample
// (parsing_ops.cc). TensorArray and table ops take a resource handle and are
// stateful by the parser's resource rule; TensorLists are plain variants.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

static constexpr const char *kUnknownShape = "element_shape: shape = "
                                             "{ unknown_rank: true }";
static constexpr const char *kOutputTypes = "output_types: list(type) >= 1";
static constexpr const char *kOutputShapes = "output_shapes: list(shape) >= 1";
static constexpr const char *kMetadata = "metadata: string = ''";

OpTable cleave::ops::detail::getDataOps() {
  return {
      // TensorArray (v1 control flow's dynamic arrays).
      {"TensorArrayV3",
       {"size: int32"},
       {"handle: resource", "flow: float"},
       {"dtype: type", kUnknownShape, "dynamic_size: bool = false",
        "clear_after_read: bool = true",
        "identical_element_shapes: bool = false",
        "tensor_array_name: string = ''"},
       /*isStateful=*/true},
      {"TensorArrayGradV3",
       {"handle: resource", "flow_in: float"},
       {"grad_handle: resource", "flow_out: float"},
       {"source: string"},
       /*isStateful=*/true},
      {"TensorArrayWriteV3",
       {"handle: resource", "index: int32", "value: T", "flow_in: float"},
       {"flow_out: float"},
       {"T: type"}},
      {"TensorArrayReadV3",
       {"handle: resource", "index: int32", "flow_in: float"},
       {"value: dtype"},
       {"dtype: type"}},
      {"TensorArrayGatherV3",
       {"handle: resource", "indices: int32", "flow_in: float"},
       {"value: dtype"},
       {"dtype: type", kUnknownShape}},
      {"TensorArrayScatterV3",
       {"handle: resource", "indices: int32", "value: T", "flow_in: float"},
       {"flow_out: float"},
       {"T: type"}},
      {"TensorArraySizeV3",
       {"handle: resource", "flow_in: float"},
       {"size: int32"},
       {}},
      {"TensorArrayCloseV3", {"handle: resource"}, {}, {}},

      // TensorList (v2 control flow's dynamic arrays).
      {"EmptyTensorList",
       {"element_shape: shape_type", "max_num_elements: int32"},
       {"handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListReserve",
       {"element_shape: shape_type", "num_elements: int32"},
       {"handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListFromTensor",
       {"tensor: element_dtype", "element_shape: shape_type"},
       {"output_handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListGetItem",
       {"input_handle: variant", "index: int32", "element_shape: int32"},
       {"item: element_dtype"},
       {"element_dtype: type"}},
      {"TensorListSetItem",
       {"input_handle: variant", "index: int32", "item: element_dtype"},
       {"output_handle: variant"},
       {"element_dtype: type", "resize_if_index_out_of_bounds: bool = false"}},
      {"TensorListStack",
       {"input_handle: variant", "element_shape: int32"},
       {"tensor: element_dtype"},
       {"element_dtype: type", "num_elements: int = -1"}},
      {"TensorListPushBack",
       {"input_handle: variant", "tensor: element_dtype"},
       {"output_handle: variant"},
       {"element_dtype: type"}},
      {"TensorListPopBack",
       {"input_handle: variant", "element_shape: int32"},
       {"output_handle: variant", "tensor: element_dtype"},
       {"element_dtype: type"}},
      {"TensorListLength", {"input_handle: variant"}, {"length: int32"}, {}},
      {"TensorListElementShape",
       {"input_handle: variant"},
       {"element_shape: shape_type"},
       {"shape_type: {int32, int64}"}},

      // Lookup tables.
      {"HashTableV2",
       {},
       {"table_handle: resource"},
       {"container: string = ''", "shared_name: string = ''",
        "use_node_name_sharing: bool = false", "key_dtype: type",
        "value_dtype: type"},
       /*isStateful=*/true},
      {"InitializeTableV2",
       {"table_handle: resource", "keys: Tkey", "values: Tval"},
       {},
       {"Tkey: type", "Tval: type"}},
      {"LookupTableFindV2",
       {"table_handle: resource", "keys: Tin", "default_value: Tout"},
       {"values: Tout"},
       {"Tin: type", "Tout: type"}},
      {"LookupTableImportV2",
       {"table_handle: resource", "keys: Tin", "values: Tout"},
       {},
       {"Tin: type", "Tout: type"}},
      {"LookupTableSizeV2", {"table_handle: resource"}, {"size: int64"}, {}},

      // tf.data. Source datasets are SetDoNotOptimize() (stateful) so that
      // constant folding leaves their variant outputs alone.
      {"TensorDataset",
       {"components: Toutput_types"},
       {"handle: variant"},
       {"Toutput_types: list(type) >= 1", kOutputShapes, kMetadata},
       /*isStateful=*/true},
      {"TensorSliceDataset",
       {"components: Toutput_types"},
       {"handle: variant"},
       {"Toutput_types: list(type) >= 1", kOutputShapes,
        "is_files: bool = false", kMetadata,
        "replicate_on_split: bool = false"},
       /*isStateful=*/true},
      {"MapDataset",
       {"input_dataset: variant", "other_arguments: Targuments"},
       {"handle: variant"},
       {"f: func", "Targuments: list(type) >= 0", kOutputTypes, kOutputShapes,
        "use_inter_op_parallelism: bool = true",
        "preserve_cardinality: bool = false", "force_synchronous: bool = false",
        kMetadata}},
      {"BatchDatasetV2",
       {"input_dataset: variant", "batch_size: int64", "drop_remainder: bool"},
       {"handle: variant"},
       {"parallel_copy: bool = false", kOutputTypes, kOutputShapes, kMetadata}},
      {"RepeatDataset",
       {"input_dataset: variant", "count: int64"},
       {"handle: variant"},
       {kOutputTypes, kOutputShapes, kMetadata}},
      {"IteratorV2",
       {},
       {"handle: resource"},
       {"shared_name: string", "container: string", kOutputTypes,
        kOutputShapes},
       /*isStateful=*/true},
      {"MakeIterator", {"dataset: variant", "iterator: resource"}, {}, {}},
      {"IteratorGetNext",
       {"iterator: resource"},
       {"components: output_types"},
       {kOutputTypes, kOutputShapes}},

      // Parsing.
      {"ParseExample",
       {"serialized: string", "names: string", "sparse_keys: Nsparse * string",
        "dense_keys: Ndense * string", "dense_defaults: Tdense"},
       {"sparse_indices: Nsparse * int64", "sparse_values: sparse_types",
        "sparse_shapes: Nsparse * int64", "dense_values: Tdense"},
       {"Nsparse: int >= 0", "Ndense: int >= 0",
        "sparse_types: list({float, int64, string}) >= 0",
        "Tdense: list({float, int64, string}) >= 0",
        "dense_shapes: list(shape) >= 0"}},
  };
}

//===----------------------------------------------------------------------===//
// TensorList shape functions and gradients (list_ops.cc, list_ops.py)
//===----------------------------------------------------------------------===//

/// An element_shape input as a shape: a constant -1 scalar is an unknown
/// rank, -1 in a vector an unknown dimension.
static Shape elementShapeInput(InferenceContext &ctx, unsigned index) {
  Shape input = ctx.getInputShape(index);
  auto values = ctx.getConstantInput(index);
  if (!values || (input.hasRank() && input.rank() == 0))
    return Shape::unknown();
  Shape shape = Shape::of({});
  for (int64_t d : *values)
    shape.dims.push_back(d < 0 ? Shape::kUnknown : d);
  return shape;
}

/// The list handle: a scalar.
static std::string listHandleShape(InferenceContext &ctx) {
  ctx.setOutput(0, Shape::scalar());
  return "";
}

static std::string listGetItemShape(InferenceContext &ctx) {
  ctx.setOutput(0, elementShapeInput(ctx, 2));
  return "";
}

static std::string listStackShape(InferenceContext &ctx) {
  Shape element = elementShapeInput(ctx, 1);
  if (!element.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t count = ctx.getIntAttr("num_elements").value_or(-1);
  Shape out = Shape::of({count < 0 ? Shape::kUnknown : count});
  out.dims.append(element.dims.begin(), element.dims.end());
  ctx.setOutput(0, out);
  return "";
}

static std::string listPopBackShape(InferenceContext &ctx) {
  ctx.setOutput(0, Shape::scalar());
  ctx.setOutput(1, elementShapeInput(ctx, 1));
  return "";
}

ShapeFnTable cleave::ops::detail::getDataShapeFns() {
  return {
      {"EmptyTensorList", listHandleShape},
      {"TensorListReserve", listHandleShape},
      {"TensorListFromTensor", listHandleShape},
      {"TensorListSetItem", listHandleShape},
      {"TensorListPushBack", listHandleShape},
      {"TensorListGetItem", listGetItemShape},
      {"TensorListStack", listStackShape},
      {"TensorListPopBack", listPopBackShape},
      {"TensorListLength", shapes::scalar},
      // A vector, or a -1 scalar for an unknown rank: not known here.
      {"TensorListElementShape", shapes::none},
  };
}

/// The element dtype attr a list op's gradient repeats.
static GradAttr elementDType(int32_t dtype) {
  return GradAttr::dtype("element_dtype", dtype);
}

/// TensorListStack: the gradient's rows as a list.
static std::string listStackGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor rowShape =
      ctx.op("Slice",
             {ctx.op("Shape", {grad}), ctx.intVector({1}, "Slice/begin"),
              ctx.intVector({-1}, "Slice/size")},
             {GradAttr::dtype("Index", grads::kInt32)});
  ctx.setInputGrad(0, ctx.op("TensorListFromTensor", {grad, rowShape},
                             {elementDType(ctx.getDType(grad)),
                              GradAttr::dtype("shape_type", grads::kInt32)}));
  return "";
}

/// TensorListFromTensor: the list's gradient stacked.
static std::string listFromTensorGrad(GradientContext &ctx) {
  GradTensor tensor = ctx.getInput(0);
  GradTensor rowShape =
      ctx.op("Slice",
             {ctx.op("Shape", {tensor}), ctx.intVector({1}, "Slice/begin"),
              ctx.intVector({-1}, "Slice/size")},
             {GradAttr::dtype("Index", grads::kInt32)});
  ctx.setInputGrad(0,
                   ctx.op("TensorListStack", {ctx.getOutputGrad(0), rowShape},
                          {elementDType(ctx.getDType(tensor))}));
  return "";
}

/// TensorListGetItem: a list of the input's length with only the item's
/// gradient set (the rest read as zeros).
static std::string listGetItemGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), list = ctx.getInput(0);
  int32_t dtype = ctx.getDType(grad);
  GradTensor elementShape =
      ctx.op("TensorListElementShape", {list},
             {GradAttr::dtype("shape_type", grads::kInt32)});
  GradTensor length = ctx.op("TensorListLength", {list});
  GradTensor reserved = ctx.op(
      "TensorListReserve", {elementShape, length},
      {elementDType(dtype), GradAttr::dtype("shape_type", grads::kInt32)});
  ctx.setInputGrad(0, ctx.op("TensorListSetItem",
                             {reserved, ctx.getInput(1), grad},
                             {elementDType(dtype)}));
  return "";
}

/// TensorListSetItem: the list's gradient with the item's place zeroed;
/// the item's gradient read from that place.
static std::string listSetItemGrad(GradientContext &ctx) {
  if (ctx.getBoolAttr("resize_if_index_out_of_bounds").value_or(false))
    return "TensorListSetItem with resize_if_index_out_of_bounds has no "
           "gradient (as in TensorFlow)";
  GradTensor grad = ctx.getOutputGrad(0), item = ctx.getInput(2);
  int32_t dtype = ctx.getDType(item);
  GradTensor zeros = ctx.op("ZerosLike", {item}, {}, "zeros_like");
  ctx.setInputGrad(0,
                   ctx.op("TensorListSetItem", {grad, ctx.getInput(1), zeros},
                          {elementDType(dtype)}));
  ctx.setInputGrad(2, ctx.op("TensorListGetItem",
                             {grad, ctx.getInput(1), ctx.op("Shape", {item})},
                             {elementDType(dtype)}));
  return "";
}

/// TensorListPushBack: pop the pushed item's gradient off the list's.
static std::string listPushBackGrad(GradientContext &ctx) {
  GradTensor item = ctx.getInput(1);
  auto popped = ctx.addNode("TensorListPopBack",
                            {ctx.getOutputGrad(0), ctx.op("Shape", {item})},
                            {elementDType(ctx.getDType(item))});
  if (popped.size() != 2)
    return "";
  ctx.setInputGrad(0, popped[0]);
  ctx.setInputGrad(1, popped[1]);
  return "";
}

/// TensorListPopBack: push the popped item's gradient back.
static std::string listPopBackGrad(GradientContext &ctx) {
  GradTensor item = ctx.getOutput(1);
  GradTensor itemGrad = ctx.hasOutputGrad(1)
                            ? ctx.getOutputGrad(1)
                            : ctx.op("ZerosLike", {item}, {}, "zeros_like");
  // No gradient for the rest of the list: zeros as long as it (TensorFlow
  // pushes onto an empty list, which loses the items' places).
  GradTensor listGrad =
      ctx.hasOutputGrad(0)
          ? ctx.getOutputGrad(0)
          : ctx.op("ZerosLike", {ctx.getOutput(0)}, {}, "zeros_like_1");
  ctx.setInputGrad(0, ctx.op("TensorListPushBack", {listGrad, itemGrad},
                             {elementDType(ctx.getDType(item))}));
  return "";
}

GradFnTable cleave::ops::detail::getDataGradFns() {
  return {
      {"TensorListStack", listStackGrad},
      {"TensorListFromTensor", listFromTensorGrad},
      {"TensorListGetItem", listGetItemGrad},
      {"TensorListSetItem", listSetItemGrad},
      {"TensorListPushBack", listPushBackGrad},
      {"TensorListPopBack", listPopBackGrad},
  };
}
