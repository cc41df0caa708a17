//===- TPUKernels.cpp - replication, host transfers, collectives ----------===//
//
// A flat graph tagged by graph-replicate (or TensorFlow) with
// num_replicas = 1 runs as written: TPUReplicatedInput/Output pass their
// single value through and the metadata is a no-op. Several replicas run
// once graph-cluster-formation made a graph.replicate of them (graph-run
// does so); the flat form refuses them by name.
//
// Host transfers meet on the interpreter's rendezvous, keyed by (key,
// replica): the device side (_XlaHostComputeMlir, XlaSendToHost) in the
// replica it runs in, the host side by its device ordinal.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Ops/Partitioning.h"
#include "cleave/Runtime/Collectives.h"
#include "cleave/Runtime/Rendezvous.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;
using namespace cleave::runtime;

static LogicalResult refuseReplicas(KernelContext &ctx, int64_t n) {
  return ctx.error() << "this " << ctx.node.getOpType() << " has " << n
                     << " replicas, which run once graph-cluster-formation "
                        "formed the replicated computation (graph-run does)";
}

static LogicalResult replicatedInput(KernelContext &ctx) {
  if (ctx.inputs.size() != 1)
    return refuseReplicas(ctx, ctx.inputs.size());
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

static LogicalResult replicatedOutput(KernelContext &ctx) {
  if (ctx.outputs.size() != 1)
    return refuseReplicas(ctx, ctx.outputs.size());
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

static LogicalResult replicateMetadata(KernelContext &ctx) {
  int64_t n = ctx.getInt("num_replicas").value_or(1);
  if (n != 1)
    return refuseReplicas(ctx, n);
  return success();
}

/// The partition grid of a TPUPartitioned{Input,Output}[V2] node, as its
/// shape function reads it.
static std::vector<int64_t> partitionGrid(KernelContext &ctx, int64_t rank,
                                          int64_t numCores) {
  std::optional<std::vector<int64_t>> dims = ctx.getIntList("partition_dims");
  llvm::SmallVector<int64_t> grid = cleave::ops::getPartitionGrid(
      dims ? std::optional<llvm::ArrayRef<int64_t>>(*dims) : std::nullopt,
      ctx.getInt("partition_dim").value_or(0), rank, numCores);
  return std::vector<int64_t>(grid.begin(), grid.end());
}

/// Calls `copy(part, partIndex, wholeIndex)` for each element of a value of
/// shape `whole` tiled row-major into `grid` parts of shape `partShape`.
template <typename CopyFn>
static void forEachTiledElement(const std::vector<int64_t> &whole,
                                const std::vector<int64_t> &grid,
                                const std::vector<int64_t> &partShape,
                                CopyFn copy) {
  int64_t rank = whole.size(), count = 1;
  for (int64_t d : whole)
    count *= d;
  auto wholeStrides = stridesOf(whole), partStrides = stridesOf(partShape),
       gridStrides = stridesOf(grid);
  for (int64_t i = 0; i < count; ++i) {
    int64_t part = 0, inPart = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t index = i / wholeStrides[d] % whole[d];
      part += index / partShape[d] * gridStrides[d];
      inPart += index % partShape[d] * partStrides[d];
    }
    copy(part, inPart, i);
  }
}

static LogicalResult refusePartitionedResource(KernelContext &ctx) {
  return ctx.error() << ctx.node.getOpType()
                     << " of resource handles (a variable partitioned over "
                        "the cores of a replica) is not supported; "
                        "partition the variable's value instead";
}

/// TPUPartitionedInput[V2]: the value whose parts the cores hold. Cleave
/// runs a replica's computation whole, so it assembles the parts.
static LogicalResult partitionedInput(KernelContext &ctx) {
  const Tensor &first = ctx.inputs[0];
  if (first.dtype() == kResource)
    return refusePartitionedResource(ctx);
  if (ctx.getBool("is_packed").value_or(false))
    return ctx.error() << "a packed TPUPartitionedInputV2 (one value standing "
                          "for every core's part) is not supported";
  for (auto [i, part] : llvm::enumerate(ctx.inputs))
    if (part.shape() != first.shape())
      return ctx.error() << "input " << i << " has shape "
                         << shapeString(part.shape()) << ", input 0 has "
                         << shapeString(first.shape())
                         << ": the parts of a partitioned value are alike";
  std::vector<int64_t> grid =
      partitionGrid(ctx, first.rank(), ctx.inputs.size());
  if (grid.empty()) {
    ctx.outputs[0] = first;
    return success();
  }
  int64_t numParts = cleave::ops::countParts(grid);
  if ((int64_t)grid.size() != first.rank() ||
      numParts != (int64_t)ctx.inputs.size())
    return ctx.error() << "partition grid " << shapeString(grid) << " needs "
                       << numParts << " parts of rank " << grid.size()
                       << ", got " << ctx.inputs.size() << " of shape "
                       << shapeString(first.shape());
  std::vector<int64_t> whole = first.shape();
  for (size_t d = 0; d < whole.size(); ++d)
    whole[d] *= grid[d];
  Tensor out(first.dtype(), whole);
  forEachTiledElement(whole, grid, first.shape(),
                      [&](int64_t part, int64_t inPart, int64_t i) {
                        copyElements(out, i, ctx.inputs[part], inPart, 1);
                      });
  ctx.outputs[0] = out;
  return success();
}

/// TPUPartitionedOutput[V2]: the parts of a value, one a core.
static LogicalResult partitionedOutput(KernelContext &ctx) {
  const Tensor &whole = ctx.inputs[0];
  if (whole.dtype() == kResource)
    return refusePartitionedResource(ctx);
  int64_t numSplits = ctx.outputs.size();
  std::vector<int64_t> grid = partitionGrid(ctx, whole.rank(), numSplits);
  if (grid.size() != (size_t)whole.rank() ||
      cleave::ops::countParts(grid) != numSplits)
    return ctx.error() << "partition grid " << shapeString(grid)
                       << " does not split a value of shape "
                       << shapeString(whole.shape()) << " into " << numSplits
                       << " parts";
  std::vector<int64_t> partShape = whole.shape();
  for (size_t d = 0; d < partShape.size(); ++d) {
    if (grid[d] < 1 || partShape[d] % grid[d] != 0)
      return ctx.error() << "Number of ways to split should evenly divide the "
                            "split dimension, but got split_dim "
                         << d << " (size = " << partShape[d]
                         << ") and num_split " << grid[d];
    partShape[d] /= grid[d];
  }
  for (Tensor &out : ctx.outputs)
    out = Tensor(whole.dtype(), partShape);
  forEachTiledElement(whole.shape(), grid, partShape,
                      [&](int64_t part, int64_t inPart, int64_t i) {
                        copyElements(ctx.outputs[part], inPart, whole, i, 1);
                      });
  return success();
}

/// A serialized CompilationResultProto; compilation always succeeds here,
/// and the proto of an OK status is empty.
static LogicalResult compilationResult(KernelContext &ctx) {
  ctx.outputs[0] = Tensor(kString, {});
  return success();
}
/// The replica a device-side transfer runs in (0 without replication).
static int64_t deviceReplica() {
  return std::max<int64_t>(getCurrentReplica(), 0);
}

/// Receives `count` tensors of `dtypes` on (key, replica) into the outputs.
static LogicalResult receive(KernelContext &ctx, StringRef key, int64_t replica,
                             ArrayRef<int32_t> dtypes,
                             bool persistent = false) {
  std::string error;
  auto values =
      ctx.host.getRendezvous().recv(key, replica, error, persistent);
  if (!values) {
    if (error.empty())
      return failure(); // cancelled: the cause is reported where it happened
    return ctx.error() << error;
  }
  if (values->size() != dtypes.size())
    return ctx.error() << "expected " << dtypes.size()
                       << " tensors on channel '" << key << "' for replica "
                       << replica << ", but " << values->size() << " arrived";
  for (auto [i, t] : llvm::enumerate(*values))
    if (dtypes[i] > 0 && t.dtype() != dtypes[i])
      return ctx.error() << "tensor " << i << " on channel '" << key
                         << "' is " << dtypeName(t.dtype()) << ", expected "
                         << dtypeName(dtypes[i]);
  for (auto [i, t] : llvm::enumerate(*values))
    ctx.outputs[i] = std::move(t);
  return success();
}

static std::vector<int32_t> typeListAttr(KernelContext &ctx, StringRef name) {
  std::vector<int32_t> dtypes;
  if (auto list = dyn_cast_or_null<ArrayAttr>(ctx.getAttr(name)))
    for (Attribute a : list)
      if (auto t = dyn_cast<TypeAttr>(a))
        dtypes.push_back(cleave::graph::typeToDataType(t.getValue()));
  return dtypes;
}

/// Device side: sends the inputs to the host, then waits for its answer.
static LogicalResult hostCompute(KernelContext &ctx) {
  std::string sendKey = ctx.getString("send_key").value_or("");
  std::string recvKey = ctx.getString("recv_key").value_or("");
  int64_t replica = deviceReplica();
  if (!sendKey.empty())
    ctx.host.getRendezvous().send(sendKey, replica, ctx.inputs);
  if (recvKey.empty())
    return success();
  return receive(ctx, recvKey, replica, typeListAttr(ctx, "Toutputs"));
}

static LogicalResult sendToHost(KernelContext &ctx) {
  ctx.host.getRendezvous().send(*ctx.getString("key"), deviceReplica(),
                                       ctx.inputs);
  return success();
}

/// Host side: the replica is the device ordinal, an attr (V1) or the
/// input after the dynamic key (V2).
template <bool isV2> static int64_t hostReplica(KernelContext &ctx) {
  if (isV2)
    return ctx.inputs.back().getAsInt(0);
  return ctx.getInt("device_ordinal").value_or(0);
}

template <bool isV2> static LogicalResult recvAtHost(KernelContext &ctx) {
  return receive(ctx, *ctx.getString("key"), hostReplica<isV2>(ctx),
                 typeListAttr(ctx, "Toutputs"));
}

template <bool isV2> static LogicalResult sendFromHost(KernelContext &ctx) {
  int64_t replica = hostReplica<isV2>(ctx);
  // The values, without the dynamic key (and ordinal).
  std::vector<Tensor> values(ctx.inputs.begin(),
                             ctx.inputs.end() - (isV2 ? 2 : 1));
  ctx.host.getRendezvous().send(*ctx.getString("key"), replica,
                                       std::move(values));
  return success();
}

/// The compiled program's key: what the host transfers of one program
/// share. One program runs here, so any three strings do.
static LogicalResult programKey(KernelContext &ctx) {
  Tensor key(kString, {3});
  key.strings() = {"cleave", "interpreter", ""};
  ctx.outputs[0] = key;
  return success();
}

/// The replica, whatever the placeholder's logical_core: a replica's cores
/// run as one computation here, so their host transfers share its
/// channels.
static LogicalResult deviceOrdinal(KernelContext &ctx) {
  Tensor ordinal(kInt64, {});
  ordinal.data<int64_t>()[0] = deviceReplica();
  ctx.outputs[0] = ordinal;
  return success();
}

/// Infeed and outfeed: one queue each per replica, kept across runs. The
/// host side names the replica by `device_ordinal` (-1: the one it runs
/// in).
static constexpr llvm::StringLiteral kInfeed = cleave::runtime::kInfeedQueue,
                                     kOutfeed = cleave::runtime::kOutfeedQueue;

static int64_t feedReplica(KernelContext &ctx) {
  int64_t ordinal = ctx.getInt("device_ordinal").value_or(-1);
  return ordinal >= 0 ? ordinal : deviceReplica();
}

/// The dtypes (and shapes, where the op declares them) the queue holds.
static LogicalResult checkShapes(KernelContext &ctx, StringRef queue) {
  auto shapes = dyn_cast_or_null<ArrayAttr>(ctx.getAttr("shapes"));
  if (!shapes)
    if (auto one = ctx.getAttr("shape"))
      shapes = ArrayAttr::get(ctx.node.getContext(), {one});
  if (!shapes)
    return success();
  for (auto [i, attr] : llvm::enumerate(shapes)) {
    auto shape = dyn_cast<cleave::graph::ShapeAttr>(attr);
    const Tensor &t = i < ctx.outputs.size() ? ctx.outputs[i] : ctx.inputs[i];
    if (!shape || shape.getUnknownRank())
      continue;
    // The element type does not matter here.
    Type declared = cleave::graph::getTensorType(
        IntegerType::get(ctx.node.getContext(), 8), shape);
    if (!fitsShape(t, declared))
      return ctx.error() << "tensor " << i << " of the " << queue
                         << " has shape " << shapeString(t.shape()) << ", but "
                         << ctx.node.getOpType() << " declares "
                         << shapeString(shape.getDims());
  }
  return success();
}

/// Its `shape` is what the device allocates (compiled code, XLA): a value
/// of another shape is an error here too.
static LogicalResult recvFromHost(KernelContext &ctx) {
  std::string key = *ctx.getString("key");
  if (failed(receive(ctx, key, deviceReplica(), {*ctx.getType("Toutput")})))
    return failure();
  return checkShapes(ctx, "channel '" + key + "'");
}

static LogicalResult infeedEnqueue(KernelContext &ctx) {
  if (failed(checkShapes(ctx, "infeed")))
    return failure();
  ctx.host.getRendezvous().send(kInfeed, feedReplica(ctx), ctx.inputs,
                                       /*persistent=*/true);
  return success();
}

static LogicalResult infeedDequeue(KernelContext &ctx) {
  std::vector<int32_t> dtypes = typeListAttr(ctx, "dtypes");
  if (dtypes.empty())
    if (auto dtype = ctx.getType("dtype"))
      dtypes.push_back(*dtype);
  if (failed(receive(ctx, kInfeed, deviceReplica(), dtypes,
                     /*persistent=*/true)))
    return failure();
  return checkShapes(ctx, "infeed");
}

static LogicalResult outfeedEnqueue(KernelContext &ctx) {
  ctx.host.getRendezvous().send(kOutfeed, deviceReplica(), ctx.inputs,
                                       /*persistent=*/true);
  return success();
}

static LogicalResult outfeedDequeue(KernelContext &ctx) {
  if (failed(receive(ctx, kOutfeed, feedReplica(ctx),
                     typeListAttr(ctx, "dtypes"), /*persistent=*/true)))
    return failure();
  return checkShapes(ctx, "outfeed");
}

static LogicalResult crossReplicaSumKernel(KernelContext &ctx) {
  // In a function the computation calls (a device loop's body), the
  // replicas are those running.
  auto replicate = ctx.node->getParentOfType<cleave::graph::ReplicateOp>();
  Rendezvous &rendezvous = ctx.host.getRendezvous();
  int64_t numReplicas =
      replicate ? replicate.getN()
                : std::max<int64_t>(1, rendezvous.getReplicasRunning());
  std::string error;
  std::optional<Tensor> sum =
      crossReplicaSum(rendezvous, ctx.node.getOperation(), numReplicas,
                      ctx.inputs[0], ctx.inputs[1], error);
  if (!sum)
    return error.empty() ? failure() : (ctx.error() << error, failure());
  ctx.outputs[0] = std::move(*sum);
  return success();
}

KernelTable cleave::interp::getTPUKernels() {
  return {
      {"TPUReplicatedInput", replicatedInput},
      {"TPUReplicatedOutput", replicatedOutput},
      {"TPUReplicateMetadata", replicateMetadata},
      {"TPUPartitionedInput", partitionedInput},
      {"TPUPartitionedInputV2", partitionedInput},
      {"TPUPartitionedOutput", partitionedOutput},
      {"TPUPartitionedOutputV2", partitionedOutput},
      {"TPUCompilationResult", compilationResult},
      {"_XlaHostComputeMlir", hostCompute},
      {"XlaSendToHost", sendToHost},
      {"XlaRecvFromHost", recvFromHost},
      {"_XlaRecvAtHost", recvAtHost<false>},
      {"_XlaRecvAtHostV2", recvAtHost<true>},
      {"_XlaSendFromHost", sendFromHost<false>},
      {"_XlaSendFromHostV2", sendFromHost<true>},
      {"_XlaCompileMlirPlaceholderProgramKey", programKey},
      {"_TPUDeviceOrdinalPlaceholder", deviceOrdinal},
      {"CrossReplicaSum", crossReplicaSumKernel},
      {"InfeedEnqueueTuple", infeedEnqueue},
      {"InfeedDequeueTuple", infeedDequeue},
      {"InfeedDequeue", infeedDequeue},
      {"OutfeedEnqueueTuple", outfeedEnqueue},
      {"OutfeedEnqueue", outfeedEnqueue},
      {"OutfeedDequeueTuple", outfeedDequeue},
  };
}
