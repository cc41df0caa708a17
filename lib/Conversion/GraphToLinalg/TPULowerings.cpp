//===- TPULowerings.cpp - collectives and host transfers as runtime calls -===//
//
// Collectives and host transfers are not computations on the replica's own
// values: the compiled code hands its buffers to the runtime that runs the
// replicas (cleave_cpu_cross_replica_sum, cleave_cpu_host_transfer;
// cleave/Target/CPU/CompiledCollectives.h), which meets the other replicas or the
// host side and writes what they answer into fresh buffers. So a replica's
// device computation compiles whole, all-reduces and host computes
// included, as XLA compiles them into the program. A failure there (a
// group that names no such replica, a peer that never arrives) sets the
// status; the runtime's message follows the node's name.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Dialect/Graph/Transforms/ShapeRefinement.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

static constexpr llvm::StringLiteral kCrossReplicaSum =
    "cleave_cpu_cross_replica_sum";
static constexpr llvm::StringLiteral kHostTransfer = "cleave_cpu_host_transfer";

/// CrossReplicaSum(input, group_assignment): group_assignment must be a
/// compile-time constant (it is one in TensorFlow's graphs: XLA needs it
/// to build the all-reduce). The runtime checks it, as the interpreter
/// does, where a replica runs the code.
static LogicalResult crossReplicaSum(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype != cleave::kFloat && dtype != cleave::kDouble &&
      dtype != cleave::kInt32 && dtype != cleave::kUInt32)
    return ctx.error() << "CrossReplicaSum of " << cleave::dtypeName(dtype)
                       << " has no CPU lowering",
           failure();
  FailureOr<std::vector<int64_t>> groups = ctx.constantInts(1);
  if (failed(groups))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;

  Value input = ctx.bufferAddress(ctx.tensor(0));
  // The group table and its shape, as constants (one element at least:
  // an empty table still needs an address).
  std::vector<int64_t> groupsShape = ctx.shape(1);
  cleave::Tensor groupIds(cleave::kInt32,
                          {std::max<int64_t>(groups->size(), 1)});
  for (auto [i, id] : llvm::enumerate(*groups))
    groupIds.data<int32_t>()[i] = static_cast<int32_t>(id);
  cleave::Tensor groupDims(cleave::kInt64,
                           {std::max<int64_t>(groupsShape.size(), 1)});
  llvm::copy(groupsShape, groupDims.data<int64_t>());
  Value groupTable = ctx.bufferAddress(ctx.constantTensor(groupIds));
  Value groupTableShape = ctx.bufferAddress(ctx.constantTensor(groupDims));
  RankedTensorType resultType = ctx.tensorType(shape, dtype);
  Value result = b.create<memref::AllocOp>(
      loc, MemRefType::get(resultType.getShape(), resultType.getElementType()));
  Value output = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, result);
  // The node identifies the rendezvous round: every replica runs the same
  // compiled function of the same graph, in this process.
  auto int64 = [&](int64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  };
  Value node = int64(reinterpret_cast<intptr_t>(ctx.node.getOperation()));
  Type i64 = b.getI64Type(), index = b.getIndexType();
  Value code =
      b.create<func::CallOp>(
           loc,
           ctx.declareRuntimeFunction(
               kCrossReplicaSum,
               {i64, index, index, i64, i64, index, index, i64}, {i64}),
           ValueRange{node, input, output, int64(count), int64(dtype),
                      groupTable, groupTableShape, int64(groupsShape.size())})
          .getResult(0);
  ctx.setStatusFromRuntime(code);
  ctx.setOutput(0,
                b.create<bufferization::ToTensorOp>(loc, resultType, result,
                                                    /*restrict=*/true,
                                                    /*writable=*/true),
                dtype);
  return success();
}

/// The types `host_func` of a host compute's `host_mlir_module` returns
/// for the shapes this compilation sends; nullopt without a module, or
/// when it does not parse (a TensorFlow-written one holds the tf dialect)
/// or infer.
static std::optional<SmallVector<Type>> inferFromHostModule(NodeLowering &ctx) {
  std::optional<std::string> text = ctx.getString("host_mlir_module");
  if (!text || text->empty())
    return std::nullopt;
  MLIRContext *context = ctx.node.getContext();
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(*text, context);
  auto hostFunc =
      module ? module->lookupSymbol<graph::FuncOp>("host_func") : nullptr;
  if (!hostFunc)
    return std::nullopt;
  SmallVector<Type> argTypes;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    argTypes.push_back(ctx.tensorType(ctx.shape(i), ctx.dtype(i)));
  // The host function's arguments keep the graph's element types.
  for (auto [type, declared] :
       llvm::zip(argTypes, hostFunc.getArgumentTypes()))
    if (auto tensor = dyn_cast<TensorType>(declared))
      type = RankedTensorType::get(cast<RankedTensorType>(type).getShape(),
                                   tensor.getElementType());
  return graph::inferFunctionResultTypes(hostFunc, argTypes);
}

/// The shape result `i` of a host transfer has: its shape function's
/// (XlaRecvFromHost's `shape`), else a static result type, else what the
/// host compute's `host_mlir_module` infers for the shapes sent. The host
/// computes the value, so nothing else tells the device its shape.
static std::optional<std::vector<int64_t>>
transferResultShape(NodeLowering &ctx, unsigned i,
                    std::optional<SmallVector<Type>> &fromHostModule) {
  if (auto shape = ctx.outputShape(i))
    return shape;
  auto staticShape = [](Type t) -> std::optional<std::vector<int64_t>> {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || !ranked.hasStaticShape())
      return std::nullopt;
    return std::vector<int64_t>(ranked.getShape().begin(),
                                ranked.getShape().end());
  };
  if (auto shape = staticShape(ctx.node.getOutputs()[i].getType()))
    return shape;
  if (!fromHostModule)
    fromHostModule = inferFromHostModule(ctx);
  if (fromHostModule && i < fromHostModule->size())
    return staticShape((*fromHostModule)[i]);
  return std::nullopt;
}

/// _XlaHostComputeMlir, XlaSendToHost, XlaRecvFromHost, and the infeed
/// and outfeed queues' device ends (InfeedDequeue[Tuple],
/// OutfeedEnqueue[Tuple]): the replica's compiled code sends its values to
/// the host side and waits for the host's answer through the runtime
/// (cleave_cpu_host_transfer), which reads the channel keys from the node
/// or takes the replica's queue. The values travel as
/// `address, dtype, rank, dims...` descriptors in one i64 array.
static LogicalResult hostTransfer(NodeLowering &ctx) {
  if (failed(ctx.inferShapes()))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto int64 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  };
  SmallVector<Value> inputWords, outputWords;
  auto describe = [&](SmallVector<Value> &words, Value address, int32_t dtype,
                      ArrayRef<int64_t> shape) {
    words.push_back(b.create<arith::IndexCastOp>(loc, b.getI64Type(), address));
    words.push_back(int64(dtype));
    words.push_back(int64(shape.size()));
    for (int64_t d : shape)
      words.push_back(int64(d));
  };
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    describe(inputWords, ctx.bufferAddress(ctx.tensor(i)), ctx.dtype(i),
             ctx.shape(i));
  SmallVector<Value> results;
  SmallVector<std::pair<RankedTensorType, int32_t>> resultTypes;
  std::optional<SmallVector<Type>> fromHostModule;
  for (unsigned i = 0, e = ctx.node.getOutputs().size(); i < e; ++i) {
    std::optional<std::vector<int64_t>> shape =
        transferResultShape(ctx, i, fromHostModule);
    if (!shape)
      return ctx.error() << "the shape of result " << i
                         << " (what the host sends back) is not known at "
                            "compile time",
             failure();
    int32_t dtype = graph::typeToDataType(
        getElementTypeOrSelf(ctx.node.getOutputs()[i].getType()));
    RankedTensorType type = ctx.tensorType(*shape, dtype);
    Value buffer = b.create<memref::AllocOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()));
    describe(outputWords,
             b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer),
             dtype, *shape);
    results.push_back(buffer);
    resultTypes.push_back({type, dtype});
  }
  // The descriptors, on the stack.
  auto table = [&](ArrayRef<Value> words) -> Value {
    auto type = MemRefType::get({std::max<int64_t>(words.size(), 1)},
                                b.getI64Type());
    Value array = b.create<memref::AllocaOp>(loc, type);
    for (auto [k, word] : llvm::enumerate(words))
      b.create<memref::StoreOp>(
          loc, word, array,
          ValueRange{b.create<arith::ConstantIndexOp>(loc, k)});
    return b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, array);
  };
  Value inputs = table(inputWords), outputs = table(outputWords);
  Value node = int64(reinterpret_cast<intptr_t>(ctx.node.getOperation()));
  Type i64 = b.getI64Type(), index = b.getIndexType();
  Value code = b.create<func::CallOp>(
                    loc,
                    ctx.declareRuntimeFunction(
                        kHostTransfer, {i64, index, i64, index, i64}, {i64}),
                    ValueRange{node, inputs, int64(ctx.getNumInputs()), outputs,
                               int64(results.size())})
                   .getResult(0);
  ctx.setStatusFromRuntime(code);
  for (auto [i, buffer] : llvm::enumerate(results))
    ctx.setOutput(i,
                  b.create<bufferization::ToTensorOp>(
                      loc, resultTypes[i].first, buffer, /*restrict=*/true,
                      /*writable=*/true),
                  resultTypes[i].second);
  return success();
}

LoweringTable cleave::conversion::getTPULowerings() {
  return {{"CrossReplicaSum", crossReplicaSum},
          {"_XlaHostComputeMlir", hostTransfer},
          {"XlaSendToHost", hostTransfer},
          {"XlaRecvFromHost", hostTransfer},
          {"InfeedDequeueTuple", hostTransfer},
          {"InfeedDequeue", hostTransfer},
          {"OutfeedEnqueueTuple", hostTransfer},
          {"OutfeedEnqueue", hostTransfer}};
}
