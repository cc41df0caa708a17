//===- DataOps.cpp - container and input pipeline op signatures -----------===//
//
// TensorArrays (data_flow_ops.cc), TensorLists (list_ops.cc), lookup tables
// (lookup_ops.cc), tf.data (dataset_ops.cc) and ParseExample
// (parsing_ops.cc). TensorArray and table ops take a resource handle and are
// stateful by the parser's resource rule; TensorLists are plain variants.
//
//===----------------------------------------------------------------------===//

#include "OpTables.h"

using namespace cleave::ops::detail;

namespace {
constexpr const char *kUnknownShape = "element_shape: shape = "
                                      "{ unknown_rank: true }";
constexpr const char *kOutputTypes = "output_types: list(type) >= 1";
constexpr const char *kOutputShapes = "output_shapes: list(shape) >= 1";
constexpr const char *kMetadata = "metadata: string = ''";
} // namespace

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
