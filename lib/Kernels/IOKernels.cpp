//===- IOKernels.cpp - checkpoint kernels ---------------------------------===//
//
// What a tf.compat.v1.train.Saver's nodes do (save_restore_v2_ops.cc):
// SaveV2 writes a V2 checkpoint of its inputs by tensor name, RestoreV2
// reads tensors back, MergeV2Checkpoints joins the parts of a sharded save,
// and ShardedFilename/ShardedFilespec name the parts. The files are
// CleaveCheckpoint's, byte for byte what TensorFlow writes; a graph's own
// save/restore_all and save/control_dependency run as in TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Checkpoint/TensorBundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

/// Fails unless the run may touch the file system.
static LogicalResult checkFileAccess(KernelContext &ctx) {
  if (ctx.host.hasFileAccess())
    return success();
  return ctx.error() << ctx.node.getOpType()
                     << " touches the file system, which this run does not "
                        "allow";
}

/// The one string of a prefix input.
static std::optional<std::string> scalarString(const Tensor &t) {
  if (t.dtype() != kString || t.numElements() != 1)
    return std::nullopt;
  return t.strings()[0];
}

/// TensorFlow's ValidateInputs of SaveV2 and RestoreV2: one prefix, and
/// vectors of names and slices of one length (and, for SaveV2, a tensor per
/// name).
static LogicalResult validateSaveRestore(KernelContext &ctx, bool isSave) {
  if (failed(checkFileAccess(ctx)))
    return failure();
  const Tensor &prefix = ctx.inputs[0], &names = ctx.inputs[1],
               &slices = ctx.inputs[2];
  if (prefix.numElements() != 1)
    return ctx.error() << "Input prefix should have a single element, got "
                       << prefix.numElements() << " instead.";
  if (names.rank() != 1 || slices.rank() != 1)
    return ctx.error() << "Input tensor_names and shape_and_slices should be "
                          "an 1-D tensors, got "
                       << shapeString(names.shape()) << " and "
                       << shapeString(slices.shape()) << " instead.";
  if (names.numElements() != slices.numElements())
    return ctx.error() << "tensor_names and shape_and_slices have different "
                          "number of elements: "
                       << names.numElements() << " vs. "
                       << slices.numElements();
  int64_t tensors = isSave ? int64_t(ctx.inputs.size()) - 3
                           : int64_t(ctx.node.getOutputs().size());
  if (tensors != names.numElements())
    return ctx.error() << "Got " << names.numElements() << " tensor names, but "
                       << tensors << " tensors"
                       << (isSave ? " to save" : " to restore");
  return success();
}

static LogicalResult saveV2(KernelContext &ctx) {
  if (failed(validateSaveRestore(ctx, /*isSave=*/true)))
    return failure();
  std::string prefix = ctx.inputs[0].strings()[0];
  const std::vector<std::string> &names = ctx.inputs[1].strings();
  const std::vector<std::string> &slices = ctx.inputs[2].strings();
  checkpoint::BundleWriter writer(prefix);
  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor &tensor = ctx.inputs[3 + i];
    llvm::Error error = llvm::Error::success();
    if (slices[i].empty()) {
      error = writer.add(names[i], tensor);
    } else if (auto spec = checkpoint::parseShapeAndSlice(slices[i])) {
      error = writer.addSlice(names[i], spec->first, spec->second, tensor);
    } else {
      error = spec.takeError();
    }
    if (error)
      return ctx.error() << "tensor_name = " << names[i] << ": "
                         << llvm::toString(std::move(error));
  }
  if (llvm::Error error = writer.finish())
    return ctx.error() << llvm::toString(std::move(error));
  return success();
}

static LogicalResult restoreV2(KernelContext &ctx) {
  if (failed(validateSaveRestore(ctx, /*isSave=*/false)))
    return failure();
  std::string prefix = ctx.inputs[0].strings()[0];
  const std::vector<std::string> &names = ctx.inputs[1].strings();
  const std::vector<std::string> &slices = ctx.inputs[2].strings();
  auto types = dyn_cast_or_null<ArrayAttr>(ctx.getAttr("dtypes"));
  auto reader = checkpoint::BundleReader::open(prefix);
  if (!reader)
    return ctx.error() << llvm::toString(reader.takeError());
  for (size_t i = 0; i < names.size(); ++i) {
    const checkpoint::BundleEntry *entry = reader->lookup(names[i]);
    if (!entry)
      return ctx.error() << "Key " << names[i] << " not found in checkpoint";
    int32_t expected =
        types && i < types.size()
            ? graph::typeToDataType(cast<TypeAttr>(types[i]).getValue())
            : entry->dtype;
    if (entry->dtype != expected)
      return ctx.error() << "tensor_name = " << names[i] << "; expected dtype "
                         << dtypeName(expected)
                         << " does not equal restored dtype "
                         << dtypeName(entry->dtype);
    auto tensor = reader->read(names[i]);
    if (tensor && !slices[i].empty()) {
      auto spec = checkpoint::parseShapeAndSlice(slices[i]);
      if (!spec)
        return ctx.error() << "tensor_name = " << names[i] << ": "
                           << llvm::toString(spec.takeError());
      if (spec->first != tensor->shape())
        return ctx.error() << "tensor_name = " << names[i]
                           << ": the checkpoint holds shape "
                           << shapeString(tensor->shape())
                           << ", the slice's full shape is "
                           << shapeString(spec->first);
      tensor = checkpoint::extractSlice(*tensor, spec->second);
    }
    if (!tensor)
      return ctx.error() << llvm::toString(tensor.takeError());
    ctx.outputs[i] = std::move(*tensor);
  }
  return success();
}

static LogicalResult mergeV2Checkpoints(KernelContext &ctx) {
  if (failed(checkFileAccess(ctx)))
    return failure();
  const Tensor &prefixes = ctx.inputs[0], &destination = ctx.inputs[1];
  if (prefixes.rank() != 1)
    return ctx.error() << "Input checkpoint_prefixes should be an 1-D tensor, "
                          "got "
                       << shapeString(prefixes.shape()) << " instead.";
  if (destination.rank() != 0)
    return ctx.error() << "Input destination_prefix should be a scalar "
                          "tensor, got "
                       << shapeString(destination.shape()) << " instead.";
  std::string merged = destination.strings()[0];
  bool allowMissing = ctx.getBool("allow_missing_files").value_or(false);
  std::vector<std::string> inputs;
  for (const std::string &prefix : prefixes.strings())
    if (!allowMissing ||
        llvm::sys::fs::exists(checkpoint::indexFileName(prefix)))
      inputs.push_back(prefix);
  if (inputs.empty())
    return ctx.error() << "none of the checkpoint_prefixes has an index file";
  if (llvm::Error error = checkpoint::mergeBundles(inputs, merged))
    return ctx.error() << llvm::toString(std::move(error));
  // The parts' directories are temporary: removed when empty, as
  // TensorFlow's DeleteDir (a failure is no error).
  if (ctx.getBool("delete_old_dirs").value_or(true)) {
    llvm::StringRef mergedDir = llvm::sys::path::parent_path(merged);
    for (const std::string &prefix : inputs)
      if (llvm::StringRef dir = llvm::sys::path::parent_path(prefix);
          dir != mergedDir)
        (void)llvm::sys::fs::remove(dir);
  }
  return success();
}

/// The int32 scalar input `index`, or an error naming it.
static std::optional<int32_t> scalarInt(KernelContext &ctx, unsigned index,
                                        llvm::StringRef name) {
  const Tensor &t = ctx.inputs[index];
  if (t.dtype() == kInt32 && t.numElements() == 1)
    return t.data<int32_t>()[0];
  ctx.error() << name << " must be a scalar, got shape "
              << shapeString(t.shape());
  return std::nullopt;
}

/// ShardedFilename: "<basename>-<shard>-of-<num_shards>", five digits each.
static LogicalResult shardedFilename(KernelContext &ctx) {
  std::optional<std::string> basename = scalarString(ctx.inputs[0]);
  if (!basename)
    return ctx.error() << "basename must be a scalar, got shape "
                       << shapeString(ctx.inputs[0].shape());
  std::optional<int32_t> shard = scalarInt(ctx, 1, "shard");
  std::optional<int32_t> shards =
      shard ? scalarInt(ctx, 2, "num_shards") : std::nullopt;
  if (!shards)
    return failure();
  std::string name;
  llvm::raw_string_ostream(name)
      << *basename << llvm::format("-%05d-of-%05d", *shard, *shards);
  ctx.outputs[0] = stringScalar(name);
  return success();
}

/// ShardedFilespec: the glob of every shard, "<basename>-?????-of-<n>".
static LogicalResult shardedFilespec(KernelContext &ctx) {
  std::optional<std::string> basename = scalarString(ctx.inputs[0]);
  if (!basename)
    return ctx.error() << "basename must be a scalar, got shape "
                       << shapeString(ctx.inputs[0].shape());
  std::optional<int32_t> shards = scalarInt(ctx, 1, "num_shards");
  if (!shards)
    return failure();
  std::string name;
  llvm::raw_string_ostream(name)
      << *basename << llvm::format("-\?\?\?\?\?-of-%05d", *shards);
  ctx.outputs[0] = stringScalar(name);
  return success();
}

KernelTable cleave::interp::getIOKernels() {
  return {
      {"SaveV2", saveV2},
      {"RestoreV2", restoreV2},
      {"MergeV2Checkpoints", mergeV2Checkpoints},
      {"ShardedFilename", shardedFilename},
      {"ShardedFilespec", shardedFilespec},
  };
}
