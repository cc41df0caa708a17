//===- TPUOps.cpp - TPU replication and feed op signatures ----------------===//
//
// Ops from TensorFlow's tpu_replication_ops.cc, tpu_infeed_ops.cc and
// tpu_outfeed_ops.cc. Feeds talk to the device queues, hence stateful.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

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

namespace {
/// TPUReplicatedInput: the shape every replica's input agrees on (packed
/// inputs hold all replicas at once, so nothing is known).
std::string replicatedInputShape(InferenceContext &ctx) {
  if (ctx.getBoolAttr("is_packed").value_or(false)) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  Shape out = Shape::unknown();
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    std::string error;
    auto merged = mergeShapes(out, ctx.getInputShape(i), error);
    if (!merged)
      return "Input " + std::to_string(i) +
             " of TPUReplicatedInput has a different shape than input 0: " +
             error;
    out = *merged;
  }
  ctx.setOutput(0, out);
  return "";
}

std::string replicatedOutputShape(InferenceContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, ctx.getInputShape(0));
  return "";
}

std::string shapesAttr(InferenceContext &ctx) {
  return shapes::fromShapeListAttr(ctx, "shapes");
}
} // namespace

ShapeFnTable cleave::ops::detail::getTPUShapeFns() {
  return {
      {"TPUReplicateMetadata", shapes::none},
      {"TPUReplicatedInput", replicatedInputShape},
      {"TPUReplicatedOutput", replicatedOutputShape},
      {"TPUCompilationResult", shapes::scalar},
      {"InfeedDequeue", shapes::fromShapeAttr},
      {"InfeedDequeueTuple", shapesAttr},
      {"InfeedEnqueueTuple", shapes::none},
      {"OutfeedEnqueue", shapes::none},
      {"OutfeedEnqueueTuple", shapes::none},
      {"OutfeedDequeueTuple", shapesAttr},
  };
}
