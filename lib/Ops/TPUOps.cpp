//===- TPUOps.cpp - TPU replication and feed op signatures ----------------===//
//
// Ops from TensorFlow's tpu_replication_ops.cc, tpu_infeed_ops.cc,
// tpu_outfeed_ops.cc and tpu_host_compute_ops.cc / host_compute_ops.cc.
// Feeds and host transfers talk to queues and channels, hence stateful.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

#include "cleave/Ops/Partitioning.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

OpTable cleave::ops::detail::getTPUOps() {
  return {
      // Replication. String defaults are double-quoted in TensorFlow's
      // source; the parser accepts both quote styles.
      {"TPUReplicateMetadata",
       {},
       {},
       {"num_replicas: int >= 0", "num_cores_per_replica: int = 1",
        "topology: string = \"\"", "use_tpu: bool = true",
        "device_assignment: list(int) = []",
        "computation_shape: list(int) = []",
        "host_compute_core: list(string) = []",
        "padding_map: list(string) = []",
        "step_marker_location: string = \"STEP_MARK_AT_ENTRY\"",
        "allow_soft_placement: bool = false",
        "use_spmd_for_xla_partitioning: bool = false",
        "use_shardy_partitioner: bool = false",
        "tpu_compile_options_proto: string = \"\""}},
      {"TPUReplicatedInput",
       {"inputs: N * T"},
       {"output: T"},
       {"N: int >= 1", "T: type", "is_mirrored_variable: bool = false",
        "index: int = -1", "is_packed: bool = false"}},
      {"TPUReplicatedOutput",
       {"input: T"},
       {"outputs: num_replicas * T"},
       {"num_replicas: int >= 1", "T: type"}},
      // Model parallelism: a value assembled from (or split into) the parts
      // the cores of one replica hold, tiled over `partition_dims`.
      {"TPUPartitionedInput",
       {"inputs: N * T"},
       {"output: T"},
       {"N: int >= 1", "T: type", "partition_dim: int = 0"}},
      {"TPUPartitionedInputV2",
       {"inputs: N * T"},
       {"output: T"},
       {"N: int >= 1", "T: type", "partition_dims: list(int)",
        "is_packed: bool = false"}},
      {"TPUPartitionedOutput",
       {"inputs: T"},
       {"output: num_splits * T"},
       {"T: type", "num_splits: int >= 1", "partition_dim: int = 0"}},
      {"TPUPartitionedOutputV2",
       {"inputs: T"},
       {"output: num_splits * T"},
       {"T: type", "num_splits: int >= 1", "partition_dims: list(int)"}},
      {"TPUCompilationResult", {}, {"output: string"}, {}},
      {"_TPUReplicate",
       {"inputs: Tinputs", "broadcast_inputs: Tbroadcast_inputs",
        "variables: NumVariables * resource",
        "guaranteed_constants: Tguaranteed_constants"},
       {"outputs: output_types"},
       {"computation: func", "num_replicas: int >= 1",
        "num_cores_per_replica: int = 1", "topology: string = \"\"",
        "use_tpu: bool = true", "device_assignment: list(int) = []",
        "host_compute_core: list(string) = []", "Tinputs: list(type) >= 0",
        "Tbroadcast_inputs: list(type) >= 0", "NumVariables: int >= 0",
        "Tguaranteed_constants: list(type) >= 0",
        "output_types: list(type) >= 0", "padding_map: list(string) = []",
        "step_marker_location: string = \"STEP_MARK_AT_ENTRY\"",
        "allow_soft_placement: bool = false",
        "num_distributed_variables: int = 0",
        "use_spmd_for_xla_partitioning: bool = false",
        "use_shardy_partitioner: bool = false",
        "tpu_compile_options_proto: string = \"\""}},

      // Host transfers: what graph-extract-outside-compilation writes. The
      // device side calls the host (_XlaHostComputeMlir, XlaSendToHost,
      // XlaRecvFromHost); the host side receives and answers, keyed by the
      // program key and, inside a replicate, the replica's device ordinal.
      {"_XlaHostComputeMlir",
       {"inputs: Tinputs"},
       {"outputs: Toutputs"},
       {"Tinputs: list(type) >= 0", "Toutputs: list(type) >= 0",
        "send_key: string", "recv_key: string", "tpu_core: int = 0",
        "host_mlir_module: string = \"\"", "manual_sharding: bool = false"},
       /*isStateful=*/true},
      {"XlaSendToHost",
       {"input: Tinput"},
       {},
       {"Tinput: type", "key: string"},
       /*isStateful=*/true},
      {"XlaRecvFromHost",
       {},
       {"output: Toutput"},
       {"Toutput: type", "shape: shape", "key: string"},
       /*isStateful=*/true},
      {"_XlaRecvAtHost",
       {"dynamic_key: string"},
       {"outputs: Toutputs"},
       {"Toutputs: list(type) >= 0", "key: string", "device_ordinal: int",
        "device_type: string = \"TPU\""},
       /*isStateful=*/true},
      {"_XlaRecvAtHostV2",
       {"dynamic_key: string", "device_ordinal: int64"},
       {"outputs: Toutputs"},
       {"Toutputs: list(type) >= 0", "key: string",
        "device_type: string = \"TPU\""},
       /*isStateful=*/true},
      {"_XlaSendFromHost",
       {"inputs: Tinputs", "dynamic_key: string"},
       {},
       {"Tinputs: list(type) >= 0", "key: string", "device_ordinal: int",
        "device_type: string = \"TPU\""},
       /*isStateful=*/true},
      {"_XlaSendFromHostV2",
       {"inputs: Tinputs", "dynamic_key: string", "device_ordinal: int64"},
       {},
       {"Tinputs: list(type) >= 0", "key: string",
        "device_type: string = \"TPU\""},
       /*isStateful=*/true},
      {"_XlaCompileMlirPlaceholderProgramKey",
       {},
       {"program: string"},
       {},
       /*isStateful=*/true},
      {"_TPUDeviceOrdinalPlaceholder",
       {},
       {"device_ordinal: int64"},
       {"logical_core: int = 0"}},

      // Collectives across replicas.
      {"CrossReplicaSum",
       {"input: T", "group_assignment: int32"},
       {"output: T"},
       {"T: {half, bfloat16, float, double, int32, uint32}"}},

      // Infeed.
      {"InfeedDequeue",
       {},
       {"output: dtype"},
       {"dtype: type", "shape: shape"},
       /*isStateful=*/true},
      {"InfeedDequeueTuple",
       {},
       {"outputs: dtypes"},
       {"dtypes: list(type)", "shapes: list(shape)"},
       /*isStateful=*/true},
      {"InfeedEnqueueTuple",
       {"inputs: dtypes"},
       {},
       {"dtypes: list(type)", "shapes: list(shape)", "layouts: list(int) = []",
        "device_ordinal: int = -1"},
       /*isStateful=*/true},

      // Outfeed.
      {"OutfeedEnqueue",
       {"input: dtype"},
       {},
       {"dtype: type"},
       /*isStateful=*/true},
      {"OutfeedEnqueueTuple",
       {"inputs: dtypes"},
       {},
       {"dtypes: list(type)"},
       /*isStateful=*/true},
      {"OutfeedDequeueTuple",
       {},
       {"outputs: dtypes"},
       {"dtypes: list(type)", "shapes: list(shape)",
        "device_ordinal: int = -1"},
       /*isStateful=*/true},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// The shape all inputs of `op` agree on, into `merged`; the reason when
/// two disagree.
static std::string mergeInputShapes(InferenceContext &ctx, llvm::StringRef op,
                                    Shape &merged) {
  merged = Shape::unknown();
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    std::string error;
    auto next = mergeShapes(merged, ctx.getInputShape(i), error);
    if (!next)
      return "Input " + std::to_string(i) + " of " + op.str() +
             " has a different shape than input 0: " + error;
    merged = *next;
  }
  return "";
}

/// TPUReplicatedInput: the shape every replica's input agrees on (packed
/// inputs hold all replicas at once, so nothing is known).
static std::string replicatedInputShape(InferenceContext &ctx) {
  if (ctx.getBoolAttr("is_packed").value_or(false)) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  Shape out;
  if (std::string error = mergeInputShapes(ctx, "TPUReplicatedInput", out);
      !error.empty())
    return error;
  ctx.setOutput(0, out);
  return "";
}

/// The partition grid of a TPUPartitioned{Input,Output}[V2] node.
static llvm::SmallVector<int64_t>
partitionGrid(InferenceContext &ctx, int64_t rank, int64_t numCores) {
  std::optional<llvm::SmallVector<int64_t>> dims =
      ctx.getIntListAttr("partition_dims");
  return getPartitionGrid(
      dims ? std::optional<llvm::ArrayRef<int64_t>>(*dims) : std::nullopt,
      ctx.getIntAttr("partition_dim").value_or(0), rank, numCores);
}

static std::string partitionedInputShape(InferenceContext &ctx) {
  Shape part;
  if (std::string error = mergeInputShapes(ctx, "the partitioned value", part);
      !error.empty())
    return error;
  int64_t dim = ctx.getIntAttr("partition_dim").value_or(0);
  if (!ctx.getIntListAttr("partition_dims") && part.hasRank() &&
      (dim < -1 || dim >= part.rank()))
    return "partition_dim " + std::to_string(dim) + " out of range [-1, " +
           std::to_string(part.rank()) + ")";
  llvm::SmallVector<int64_t> grid =
      partitionGrid(ctx, part.rank(), ctx.getNumInputs());
  int64_t numParts = countParts(grid);
  bool packed = ctx.getBoolAttr("is_packed").value_or(false);
  if ((!grid.empty() || packed) &&
      (int64_t)ctx.getNumInputs() != (packed ? 1 : numParts))
    return "Expected " + std::to_string(packed ? 1 : numParts) +
           " inputs, got " + std::to_string(ctx.getNumInputs()) + ".";
  if (grid.empty() || !part.hasRank()) {
    ctx.setOutput(0, grid.empty() ? part : Shape::ofRank(grid.size()));
    return "";
  }
  if ((int64_t)grid.size() != part.rank())
    return "partition_dims " + Shape::of(grid).str() + " do not match rank " +
           std::to_string(part.rank()) + " of the input";
  for (auto [d, n] : llvm::enumerate(grid))
    if (part.dims[d] != Shape::kUnknown)
      part.dims[d] *= n;
  ctx.setOutput(0, part);
  return "";
}

static std::string partitionedOutputShape(InferenceContext &ctx) {
  Shape whole = ctx.getInputShape(0);
  if (!whole.hasRank()) {
    for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
      ctx.setOutput(i, whole);
    return "";
  }
  int64_t dim = ctx.getIntAttr("partition_dim").value_or(0);
  if (!ctx.getIntListAttr("partition_dims") && (dim < 0 || dim >= whole.rank()))
    return "partition_dim " + std::to_string(dim) + " out of range [0, " +
           std::to_string(whole.rank()) + ")";
  llvm::SmallVector<int64_t> grid =
      partitionGrid(ctx, whole.rank(), ctx.getNumOutputs());
  if ((int64_t)grid.size() != whole.rank())
    return "partition_dims " + Shape::of(grid).str() + " do not match rank " +
           std::to_string(whole.rank()) + " of the input";
  for (auto [d, n] : llvm::enumerate(grid)) {
    if (n < 1 || (whole.dims[d] != Shape::kUnknown && whole.dims[d] % n != 0))
      return "Number of ways to split should evenly divide the split "
             "dimension, but got split_dim " +
             std::to_string(d) + " (size = " + std::to_string(whole.dims[d]) +
             ") and num_split " + std::to_string(n);
    if (whole.dims[d] != Shape::kUnknown)
      whole.dims[d] /= n;
  }
  if (int64_t numParts = countParts(grid);
      numParts != (int64_t)ctx.getNumOutputs())
    return "Expected " + std::to_string(numParts) + " outputs, got " +
           std::to_string(ctx.getNumOutputs()) + ".";
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, whole);
  return "";
}

static std::string replicatedOutputShape(InferenceContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, ctx.getInputShape(0));
  return "";
}

/// The program key of a compiled computation: a string vector of 3.
static std::string programKeyShape(InferenceContext &ctx) {
  ctx.setOutput(0, Shape::of({3}));
  return "";
}

static std::string shapesAttr(InferenceContext &ctx) {
  return shapes::fromShapeListAttr(ctx, "shapes");
}

ShapeFnTable cleave::ops::detail::getTPUShapeFns() {
  return {
      {"TPUReplicateMetadata", shapes::none},
      {"TPUReplicatedInput", replicatedInputShape},
      {"TPUReplicatedOutput", replicatedOutputShape},
      {"TPUPartitionedInput", partitionedInputShape},
      {"TPUPartitionedInputV2", partitionedInputShape},
      {"TPUPartitionedOutput", partitionedOutputShape},
      {"TPUPartitionedOutputV2", partitionedOutputShape},
      {"TPUCompilationResult", shapes::scalar},
      {"InfeedDequeue", shapes::fromShapeAttr},
      {"InfeedDequeueTuple", shapesAttr},
      {"InfeedEnqueueTuple", shapes::none},
      {"OutfeedEnqueue", shapes::none},
      {"OutfeedEnqueueTuple", shapes::none},
      {"OutfeedDequeueTuple", shapesAttr},
      {"XlaRecvFromHost", shapes::fromShapeAttr},
      {"CrossReplicaSum", shapes::unchanged},
      {"XlaSendToHost", shapes::none},
      {"_XlaSendFromHost", shapes::none},
      {"_XlaSendFromHostV2", shapes::none},
      {"_XlaCompileMlirPlaceholderProgramKey", programKeyShape},
      {"_TPUDeviceOrdinalPlaceholder", shapes::scalar},
  };
}

//===----------------------------------------------------------------------===//
// Gradients (tpu_ops.py)
//===----------------------------------------------------------------------===//

/// The gradient of a cross-replica sum is the cross-replica sum of the
/// gradients, over the same groups; the group assignment gets none.
static std::string crossReplicaSumGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.op("CrossReplicaSum",
                             {ctx.getOutputGrad(0), ctx.getInput(1)}));
  return "";
}

detail::GradFnTable cleave::ops::detail::getTPUGradFns() {
  return {{"CrossReplicaSum", crossReplicaSumGrad}};
}
