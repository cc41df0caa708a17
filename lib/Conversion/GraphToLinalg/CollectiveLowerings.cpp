//===- CollectiveLowerings.cpp - cross-replica sums as runtime calls ------===//
//
// A collective is not a computation on the replica's own values: the
// compiled code hands its buffer to the runtime that runs the replicas
// (cleave_cpu_cross_replica_sum, cleave/Target/CPU/Collectives.h), which
// meets the other replicas and writes the sum into a fresh buffer. So a
// replica's device computation compiles whole, collectives included, as
// XLA compiles an all-reduce into the program. A failure there (a group
// that names no such replica, a replica that never arrives) sets the
// status; the runtime's message follows the node's name.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

namespace {

constexpr llvm::StringLiteral kCrossReplicaSum = "cleave_cpu_cross_replica_sum";

/// The runtime function, declared in the module on first use.
func::FuncOp declareCrossReplicaSum(NodeLowering &ctx) {
  auto module =
      ctx.b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (auto callee = module.lookupSymbol<func::FuncOp>(kCrossReplicaSum))
    return callee;
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  Type i64 = top.getI64Type(), index = top.getIndexType();
  auto callee = top.create<func::FuncOp>(
      ctx.loc, kCrossReplicaSum,
      top.getFunctionType({i64, index, index, i64, i64, index, index, i64},
                          {i64}));
  callee.setPrivate();
  return callee;
}

/// The address of a tensor's buffer, read-only, as compiled code passes
/// pointers to the kernel library.
Value bufferAddress(NodeLowering &ctx, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = ctx.b.create<bufferization::ToMemrefOp>(
      ctx.loc, MemRefType::get(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
  return ctx.b.create<memref::ExtractAlignedPointerAsIndexOp>(ctx.loc, buffer);
}

/// CrossReplicaSum(input, group_assignment): group_assignment must be a
/// compile-time constant (it is one in TensorFlow's graphs: XLA needs it
/// to build the all-reduce). The runtime checks it, as the interpreter
/// does, where a replica runs the code.
LogicalResult crossReplicaSum(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype != interp::kFloat && dtype != interp::kDouble &&
      dtype != interp::kInt32 && dtype != interp::kUInt32)
    return ctx.error() << "CrossReplicaSum of " << interp::dtypeName(dtype)
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

  Value input = bufferAddress(ctx, ctx.tensor(0));
  // The group table and its shape, as constants (one element at least:
  // an empty table still needs an address).
  std::vector<int64_t> groupsShape = ctx.shape(1);
  interp::Tensor groupIds(interp::kInt32,
                          {std::max<int64_t>(groups->size(), 1)});
  for (auto [i, id] : llvm::enumerate(*groups))
    groupIds.data<int32_t>()[i] = static_cast<int32_t>(id);
  interp::Tensor groupDims(interp::kInt64,
                           {std::max<int64_t>(groupsShape.size(), 1)});
  llvm::copy(groupsShape, groupDims.data<int64_t>());
  Value groupTable = bufferAddress(ctx, ctx.constantTensor(groupIds));
  Value groupTableShape = bufferAddress(ctx, ctx.constantTensor(groupDims));
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
  Value code =
      b.create<func::CallOp>(
           loc, declareCrossReplicaSum(ctx),
           ValueRange{node, input, output, int64(count), int64(dtype),
                      groupTable, groupTableShape, int64(groupsShape.size())})
          .getResult(0);
  // The first failure stays: a later one would hide the cause.
  Value status = ctx.getStatus();
  Value zero = int64(0);
  Value failedHere = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, code, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, status, zero));
  // The runtime says what went wrong: the message is completed at run time.
  ctx.setStatus(b.create<arith::SelectOp>(loc, failedHere,
                                          int64(ctx.addError("")), status));
  ctx.setOutput(0,
                b.create<bufferization::ToTensorOp>(loc, resultType, result,
                                                    /*restrict=*/true,
                                                    /*writable=*/true),
                dtype);
  return success();
}

} // namespace

LoweringTable cleave::conversion::getCollectiveLowerings() {
  return {{"CrossReplicaSum", crossReplicaSum}};
}
