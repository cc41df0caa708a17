//===- IOOps.cpp - checkpoint op signatures -------------------------------===//
//
// The ops a tf.compat.v1.train.Saver builds (io_ops.cc): V2 checkpoints
// written and read by tensor name, sharded file names, and the merge of a
// sharded save's parts. Stateful: they touch the file system.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

OpTable cleave::ops::detail::getIOOps() {
  return {
      {"SaveV2",
       {"prefix: string", "tensor_names: string", "shape_and_slices: string",
        "tensors: dtypes"},
       {},
       {"dtypes: list(type)"},
       /*isStateful=*/true},
      {"RestoreV2",
       {"prefix: string", "tensor_names: string", "shape_and_slices: string"},
       {"tensors: dtypes"},
       {"dtypes: list(type) >= 1"},
       /*isStateful=*/true},
      {"MergeV2Checkpoints",
       {"checkpoint_prefixes: string", "destination_prefix: string"},
       {},
       {"delete_old_dirs: bool = true", "allow_missing_files: bool = false"},
       /*isStateful=*/true},
      {"ShardedFilename",
       {"basename: string", "shard: int32", "num_shards: int32"},
       {"filename: string"},
       {}},
      {"ShardedFilespec",
       {"basename: string", "num_shards: int32"},
       {"filename: string"},
       {}},
  };
}

/// SaveV2: a scalar prefix and vectors of names and slices of one length.
static std::string saveV2Shape(InferenceContext &ctx) {
  Shape prefix = ctx.getInputShape(0), names = ctx.getInputShape(1),
        slices = ctx.getInputShape(2);
  if (prefix.hasRank() && prefix.rank() != 0)
    return "Shape must be rank 0 but is rank " + std::to_string(prefix.rank());
  for (const Shape &vector : {names, slices})
    if (vector.hasRank() && vector.rank() != 1)
      return "Shape must be rank 1 but is rank " +
             std::to_string(vector.rank());
  return "";
}

/// MergeV2Checkpoints: a vector of prefixes and a scalar destination.
static std::string mergeV2Shape(InferenceContext &ctx) {
  Shape prefixes = ctx.getInputShape(0), destination = ctx.getInputShape(1);
  if (prefixes.hasRank() && prefixes.rank() != 1)
    return "Shape must be rank 1 but is rank " +
           std::to_string(prefixes.rank());
  if (destination.hasRank() && destination.rank() != 0)
    return "Shape must be rank 0 but is rank " +
           std::to_string(destination.rank());
  return "";
}

ShapeFnTable cleave::ops::detail::getIOShapeFns() {
  return {
      {"SaveV2", saveV2Shape},
      // The restored tensors' shapes are in the checkpoint.
      {"RestoreV2", saveV2Shape},
      {"MergeV2Checkpoints", mergeV2Shape},
      {"ShardedFilename", shapes::scalar},
      {"ShardedFilespec", shapes::scalar},
  };
}
