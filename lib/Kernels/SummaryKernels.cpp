//===- SummaryKernels.cpp - summary writers -------------------------------===//
//
// The summary-writer ops of summary_ops.cc, Host family ops: a
// SummaryWriter resource names a writer in the run's State;
// CreateSummaryFileWriter opens its event file in logdir (a writer that
// exists is kept, as LookupOrCreate keeps it); WriteScalarSummary and
// WriteSummary append an event, written through at once (max_queue and
// flush_millis are accepted: nothing is queued); CloseSummaryWriter ends it.
// What TensorFlow's host_call writes TensorBoard's summaries with.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Checkpoint/EventFile.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

static LogicalResult summaryWriter(KernelContext &ctx) {
  Tensor handle(kResource, {});
  std::string name = ctx.getString("shared_name").value_or("");
  handle.strings()[0] = name.empty() ? ctx.node.getName().str() : name;
  ctx.outputs[0] = handle;
  return success();
}

/// The one element of input `index`, which must be a scalar.
static FailureOr<const Tensor *> scalarInput(KernelContext &ctx, unsigned index,
                                             StringRef what) {
  const Tensor &t = ctx.inputs[index];
  if (t.rank() != 0)
    return ctx.error() << what << " must be a scalar, got shape "
                       << shapeString(t.shape()),
           failure();
  return &t;
}

static LogicalResult createSummaryFileWriter(KernelContext &ctx) {
  if (!ctx.host.hasFileAccess())
    return ctx.error() << "CreateSummaryFileWriter touches the file system, "
                          "which this run does not allow";
  auto logdir = scalarInput(ctx, 1, "logdir");
  auto suffix = scalarInput(ctx, 4, "filename_suffix");
  if (failed(logdir) || failed(suffix))
    return failure();
  const std::string &name = ctx.inputs[0].strings()[0];
  auto &writer = ctx.state.summaryWriters[name];
  if (writer)
    return success();
  auto created = checkpoint::EventFileWriter::create((*logdir)->strings()[0],
                                                     (*suffix)->strings()[0]);
  if (!created)
    return ctx.error() << llvm::toString(created.takeError());
  writer = std::move(*created);
  return success();
}

/// The writer input 0 names, created before.
static checkpoint::EventFileWriter *lookupWriter(KernelContext &ctx) {
  const std::string &name = ctx.inputs[0].strings()[0];
  auto it = ctx.state.summaryWriters.find(name);
  if (it == ctx.state.summaryWriters.end() || !it->second) {
    ctx.error() << "Resource " << name
                << " of type SummaryWriter does not exist (create it with "
                   "CreateSummaryFileWriter first)";
    return nullptr;
  }
  return it->second.get();
}

static LogicalResult writeScalarSummary(KernelContext &ctx) {
  checkpoint::EventFileWriter *writer = lookupWriter(ctx);
  auto step = scalarInput(ctx, 1, "step");
  auto tag = scalarInput(ctx, 2, "tag");
  auto value = scalarInput(ctx, 3, "value");
  if (!writer || failed(step) || failed(tag) || failed(value))
    return failure();
  if (llvm::Error failure = writer->writeScalars(
          (*step)->getAsInt(0),
          {{(*tag)->strings()[0], (*value)->getAsDouble(0)}}))
    return ctx.error() << llvm::toString(std::move(failure));
  return success();
}

static LogicalResult writeSummary(KernelContext &ctx) {
  checkpoint::EventFileWriter *writer = lookupWriter(ctx);
  auto step = scalarInput(ctx, 1, "step");
  auto tag = scalarInput(ctx, 3, "tag");
  auto metadata = scalarInput(ctx, 4, "summary_metadata");
  if (!writer || failed(step) || failed(tag) || failed(metadata))
    return failure();
  if (ctx.inputs[2].dtype() == kResource || ctx.inputs[2].dtype() == kVariant)
    return ctx.error() << "tensor of type " << dtypeName(ctx.inputs[2].dtype())
                       << " cannot be written to a summary";
  if (llvm::Error failure =
          writer->writeTensor((*step)->getAsInt(0), (*tag)->strings()[0],
                              ctx.inputs[2], (*metadata)->strings()[0]))
    return ctx.error() << llvm::toString(std::move(failure));
  return success();
}

static LogicalResult flushSummaryWriter(KernelContext &ctx) {
  checkpoint::EventFileWriter *writer = lookupWriter(ctx);
  if (!writer)
    return failure();
  if (llvm::Error failure = writer->flush())
    return ctx.error() << llvm::toString(std::move(failure));
  return success();
}

static LogicalResult closeSummaryWriter(KernelContext &ctx) {
  if (failed(flushSummaryWriter(ctx)))
    return failure();
  ctx.state.summaryWriters.erase(ctx.inputs[0].strings()[0]);
  return success();
}

KernelTable cleave::interp::getSummaryKernels() {
  return {
      {"SummaryWriter", summaryWriter},
      {"CreateSummaryFileWriter", createSummaryFileWriter},
      {"WriteScalarSummary", writeScalarSummary},
      {"WriteSummary", writeSummary},
      {"FlushSummaryWriter", flushSummaryWriter},
      {"CloseSummaryWriter", closeSummaryWriter},
  };
}
