//===- RandomLowerings.cpp - TensorFlow's random numbers as runtime calls -===//
//
// Compiled random ops call the generator the reference interpreter runs
// (cleave_cpu_random; cleave/Support/Philox.h), so compiled and interpreted
// runs draw the same bits. Seeds and keys may be computed at run time; the
// shape, the algorithm of the V2 ops and the dtype are compile-time
// constants, as XLA needs them. A stateful node reads and writes its place
// in its stream as a variable (cleave/Kernels/RandomState.h), so that its
// numbers move on across runs, compiled or interpreted.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Kernels/RandomState.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;
using cleave::random::Distribution;
using cleave::random::ElementType;

static constexpr llvm::StringLiteral kRandom = "cleave_cpu_random";

namespace {
/// Where a node's generator comes from.
enum class Seeding {
  Stateful, ///< the seed and seed2 attrs, moved on by earlier runs
  V1,       ///< a seed pair input, scrambled (cleave_cpu_random's seeding 1)
  V2,       ///< key, counter and algorithm inputs (seeding 0)
};
} // namespace

static Value int64Constant(NodeLowering &ctx, int64_t value) {
  return ctx.b.create<arith::ConstantOp>(ctx.loc,
                                         ctx.b.getI64IntegerAttr(value));
}

/// Element `i` of integer input `input` as an i64 (a constant when it is
/// known), extended as its dtype's signedness says.
static Value int64Element(NodeLowering &ctx, unsigned input, int64_t i) {
  if (const std::optional<cleave::Tensor> &known = ctx.input(input).constant)
    return int64Constant(ctx, known->getAsInt(i));
  OpBuilder &b = ctx.b;
  SmallVector<Value> indices;
  if (!ctx.shape(input).empty())
    indices.push_back(b.create<arith::ConstantIndexOp>(ctx.loc, i));
  Value element =
      b.create<tensor::ExtractOp>(ctx.loc, ctx.tensor(input), indices);
  if (element.getType().isInteger(64))
    return element;
  if (isUnsignedDType(ctx.dtype(input)))
    return b.create<arith::ExtUIOp>(ctx.loc, b.getI64Type(), element);
  return b.create<arith::ExtSIOp>(ctx.loc, b.getI64Type(), element);
}

/// RNG_ALG_PHILOX, the algorithm of TensorFlow's CPU kernels.
static cleave::Tensor philoxAlgorithm() {
  cleave::Tensor alg(cleave::kInt32, {});
  alg.data<int32_t>()[0] = 1;
  return alg;
}

/// Fails unless input `input` has shape `shape`, with TensorFlow's message
/// naming it as `what`.
static LogicalResult requireShape(NodeLowering &ctx, unsigned input,
                                  StringRef what,
                                  const std::vector<int64_t> &shape) {
  if (ctx.shape(input) == shape)
    return success();
  return ctx.error() << what << " must have shape "
                     << cleave::shapeString(shape) << ", not "
                     << cleave::shapeString(ctx.shape(input)),
         failure();
}

/// The [low, high) of an integer fill from inputs `first` and `first + 1`;
/// an empty range is the node's error, at compile time where both are
/// known, else at run time.
static FailureOr<std::pair<Value, Value>>
lowerRange(NodeLowering &ctx, unsigned first, int32_t dtype) {
  for (unsigned i : {first, first + 1})
    if (!ctx.shape(i).empty())
      return ctx.error() << (i == first ? "minval" : "maxval")
                         << " must be 0-D, got shape "
                         << cleave::shapeString(ctx.shape(i)),
             failure();
  bool isUnsigned = isUnsignedDType(dtype);
  const std::optional<cleave::Tensor> &low = ctx.input(first).constant;
  const std::optional<cleave::Tensor> &high = ctx.input(first + 1).constant;
  if (low && high) {
    int64_t lo = low->getAsInt(0), hi = high->getAsInt(0);
    if (isUnsigned ? uint64_t(lo) >= uint64_t(hi) : lo >= hi)
      return ctx.error() << "Need minval < maxval, got " << lo << " >= " << hi,
             failure();
  }
  Value lo = int64Element(ctx, first, 0), hi = int64Element(ctx, first + 1, 0);
  if (!low || !high) {
    OpBuilder &b = ctx.b;
    Value empty = b.create<arith::CmpIOp>(
        ctx.loc,
        isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge, lo,
        hi);
    ctx.setStatusFromRuntime(
        b.create<arith::ExtUIOp>(ctx.loc, b.getI64Type(), empty),
        "Need minval < maxval");
  }
  return std::make_pair(lo, hi);
}

template <Distribution distribution, Seeding seeding>
static LogicalResult lowerRandom(NodeLowering &ctx) {
  constexpr bool integer = distribution == Distribution::UniformInt;
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  int32_t dtype =
      ctx.getType(integer && seeding == Seeding::Stateful ? "Tout" : "dtype")
          .value_or(cleave::kFloat);
  std::optional<ElementType> element = interp::getRandomElementType(dtype);
  if (!element || integer != (*element == ElementType::Int32 ||
                              *element == ElementType::Int64))
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " has no CPU lowering",
           failure();
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({0});
  if (failed(shape))
    return failure();
  int64_t count = 1;
  for (int64_t d : *shape)
    count *= d;

  // The generator: key and counter (seeding 0) or a seed pair (1), and
  // the blocks to skip.
  Value seedingKind = int64Constant(ctx, seeding == Seeding::V1 ? 1 : 0);
  Value a, bValue, c, skip = int64Constant(ctx, 0);
  std::string stateName;
  if constexpr (seeding == Seeding::Stateful) {
    random::Philox generator = interp::getStatefulGenerator(
        ctx.getInt("seed").value_or(0), ctx.getInt("seed2").value_or(0),
        ctx.node.getName());
    std::array<uint64_t, 2> counter = generator.getPackedCounter();
    a = int64Constant(ctx, int64_t(generator.getPackedKey()));
    bValue = int64Constant(ctx, int64_t(counter[0]));
    c = int64Constant(ctx, int64_t(counter[1]));
    stateName = interp::getRandomStateVariable(ctx.node.getName());
    FailureOr<LoweredValue> drawn =
        ctx.readVariableOr(stateName, cleave::Tensor(cleave::kUInt64, {}));
    if (failed(drawn))
      return failure();
    skip = b.create<tensor::ExtractOp>(loc, drawn->tensor, ValueRange{});
  } else if constexpr (seeding == Seeding::V1) {
    if (failed(requireShape(ctx, 1, "seed", {2})))
      return failure();
    a = int64Element(ctx, 1, 0);
    bValue = int64Element(ctx, 1, 1);
    c = int64Constant(ctx, 0);
  } else {
    FailureOr<std::vector<int64_t>> alg = ctx.constantInts(3);
    if (failed(alg))
      return failure();
    if (alg->size() != 1 || ((*alg)[0] != 1 && (*alg)[0] != 3))
      return ctx.error() << "Unsupported algorithm id: "
                         << (alg->empty() ? 0 : (*alg)[0]),
             failure();
    if (failed(requireShape(ctx, 1, "key", {1})))
      return failure();
    if (ctx.shape(2).size() != 1 || ctx.shape(2)[0] < 2)
      return ctx.error() << "counter must be a vector of at least 2 "
                            "elements, not of shape "
                         << cleave::shapeString(ctx.shape(2)),
             failure();
    a = int64Element(ctx, 1, 0);
    bValue = int64Element(ctx, 2, 0);
    c = int64Element(ctx, 2, 1);
  }
  Value low = int64Constant(ctx, 0), high = int64Constant(ctx, 0);
  if constexpr (integer) {
    unsigned first = seeding == Seeding::Stateful ? 1
                     : seeding == Seeding::V1     ? 2
                                                  : 4;
    FailureOr<std::pair<Value, Value>> range = lowerRange(ctx, first, dtype);
    if (failed(range))
      return failure();
    std::tie(low, high) = *range;
  }

  RankedTensorType type = ctx.tensorType(*shape, dtype);
  Value buffer = b.create<memref::AllocOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()));
  Type i64 = b.getI64Type();
  b.create<func::CallOp>(
      loc,
      ctx.declareRuntimeFunction(
          kRandom,
          {i64, i64, i64, i64, i64, i64, i64, b.getIndexType(), i64, i64, i64},
          {}),
      ValueRange{int64Constant(ctx, int64_t(distribution)),
                 int64Constant(ctx, int64_t(*element)), seedingKind, a, bValue,
                 c, skip,
                 b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer),
                 int64Constant(ctx, count), low, high});
  ctx.setOutput(0,
                b.create<bufferization::ToTensorOp>(loc, type, buffer,
                                                    /*restrict=*/true,
                                                    /*writable=*/true),
                dtype);
  if constexpr (seeding == Seeding::Stateful) {
    Value next = b.create<arith::AddIOp>(
        loc, skip,
        int64Constant(ctx, count * int64_t(random::kBlocksReservedPerOutput)));
    ctx.writeVariable(
        stateName,
        b.create<tensor::FromElementsOp>(loc, RankedTensorType::get({}, i64),
                                         ValueRange{next}),
        cleave::kUInt64, {});
  }
  return success();
}

/// StatelessRandomGetKeyCounter[Alg]: the scrambled seed, computed at
/// compile time (the seed is a constant wherever TensorFlow's Python API
/// builds these; the V1 ops take seeds computed at run time).
static LogicalResult getKeyCounter(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> seed = ctx.constantInts(0);
  if (failed(seed))
    return failure();
  if (failed(requireShape(ctx, 0, "seed", {2})))
    return failure();
  random::Philox generator = random::Philox::fromStatelessSeed(
      uint64_t((*seed)[0]), uint64_t((*seed)[1]));
  cleave::Tensor key(cleave::kUInt64, {1}), counter(cleave::kUInt64, {2});
  key.data<uint64_t>()[0] = generator.getPackedKey();
  std::array<uint64_t, 2> packed = generator.getPackedCounter();
  std::copy(packed.begin(), packed.end(), counter.data<uint64_t>());
  ctx.setConstantOutput(0, key);
  ctx.setConstantOutput(1, counter);
  if (ctx.node.getOutputs().size() == 3)
    ctx.setConstantOutput(2, philoxAlgorithm());
  return success();
}

static LogicalResult getAlg(NodeLowering &ctx) {
  ctx.setConstantOutput(0, philoxAlgorithm());
  return success();
}

bool cleave::conversion::isRandomStateVariable(StringRef variable) {
  return variable.ends_with(interp::getRandomStateVariable(""));
}

std::string cleave::conversion::getRandomStateVariableOf(graph::NodeOp node) {
  StringRef op = node.getOpType();
  if (op == "RandomUniform" || op == "RandomStandardNormal" ||
      op == "TruncatedNormal" || op == "RandomUniformInt")
    return interp::getRandomStateVariable(node.getName());
  return "";
}

LoweringTable cleave::conversion::getRandomLowerings() {
  using D = Distribution;
  using S = Seeding;
  return {
      {"RandomUniform", lowerRandom<D::Uniform, S::Stateful>},
      {"RandomStandardNormal", lowerRandom<D::Normal, S::Stateful>},
      {"TruncatedNormal", lowerRandom<D::TruncatedNormal, S::Stateful>},
      {"RandomUniformInt", lowerRandom<D::UniformInt, S::Stateful>},
      {"StatelessRandomUniform", lowerRandom<D::Uniform, S::V1>},
      {"StatelessRandomNormal", lowerRandom<D::Normal, S::V1>},
      {"StatelessTruncatedNormal", lowerRandom<D::TruncatedNormal, S::V1>},
      {"StatelessRandomUniformInt", lowerRandom<D::UniformInt, S::V1>},
      {"StatelessRandomUniformV2", lowerRandom<D::Uniform, S::V2>},
      {"StatelessRandomNormalV2", lowerRandom<D::Normal, S::V2>},
      {"StatelessTruncatedNormalV2", lowerRandom<D::TruncatedNormal, S::V2>},
      {"StatelessRandomUniformIntV2", lowerRandom<D::UniformInt, S::V2>},
      {"StatelessRandomGetKeyCounter", getKeyCounter},
      {"StatelessRandomGetKeyCounterAlg", getKeyCounter},
      {"StatelessRandomGetAlg", getAlg},
  };
}
