//===- ReplicationKernels.cpp - tpu.replicate()'s ops, one replica --------===//
//
// A graph tagged by graph-replicate (or TensorFlow) with num_replicas = 1
// runs as written: TPUReplicatedInput/Output pass their single value
// through and the metadata is a no-op. Running N > 1 replicas is the
// runtime's job, so the reference interpreter refuses it by name.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

using namespace mlir;
using namespace cleave::interp;

namespace {
LogicalResult refuseReplicas(KernelContext &ctx, int64_t n) {
  return ctx.error() << "the reference interpreter runs a single replica, "
                        "but this "
                     << ctx.node.getOpType() << " has " << n
                     << " (run the replicated graph with the runtime)";
}

LogicalResult replicatedInput(KernelContext &ctx) {
  if (ctx.inputs.size() != 1)
    return refuseReplicas(ctx, ctx.inputs.size());
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

LogicalResult replicatedOutput(KernelContext &ctx) {
  if (ctx.outputs.size() != 1)
    return refuseReplicas(ctx, ctx.outputs.size());
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

LogicalResult replicateMetadata(KernelContext &ctx) {
  int64_t n = ctx.getInt("num_replicas").value_or(1);
  if (n != 1)
    return refuseReplicas(ctx, n);
  return success();
}

/// A serialized CompilationResultProto; compilation always succeeds here,
/// and the proto of an OK status is empty.
LogicalResult compilationResult(KernelContext &ctx) {
  ctx.outputs[0] = Tensor(kString, {});
  return success();
}
} // namespace

KernelTable cleave::interp::getReplicationKernels() {
  return {
      {"TPUReplicatedInput", replicatedInput},
      {"TPUReplicatedOutput", replicatedOutput},
      {"TPUReplicateMetadata", replicateMetadata},
      {"TPUCompilationResult", compilationResult},
  };
}
