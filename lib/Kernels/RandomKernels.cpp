//===- RandomKernels.cpp - TensorFlow's random number kernels -------------===//
//
// TensorFlow's numbers (cleave/Support/Philox.h): a stateful node draws from
// its seeds' generator, moved on by what its earlier runs drew
// (cleave/Kernels/RandomState.h); a stateless node's numbers are a function
// of its seed (V1) or its key, counter and algorithm (V2) inputs.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Kernels/RandomState.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;
using cleave::random::Distribution;
using cleave::random::Philox;
using cleave::random::RandomFill;

std::string cleave::interp::getRandomStateVariable(StringRef nodeName) {
  return (nodeName + ":random_state").str();
}

Philox cleave::interp::getStatefulGenerator(int64_t seed, int64_t seed2,
                                            StringRef nodeName) {
  if (seed == 0 && seed2 == 0) {
    // FNV-1a of the name: the same in every process.
    uint64_t hash = 0xcbf29ce484222325;
    for (char c : nodeName)
      hash = (hash ^ uint8_t(c)) * 0x100000001b3;
    return Philox::fromSeeds(hash, 0);
  }
  return Philox::fromSeeds(uint64_t(seed), uint64_t(seed2));
}

std::optional<random::ElementType>
cleave::interp::getRandomElementType(int32_t dtype) {
  switch (dtype) {
  case kFloat:
    return random::ElementType::Float;
  case kDouble:
    return random::ElementType::Double;
  case kInt32:
  case kUInt32:
    return random::ElementType::Int32;
  case kInt64:
  case kUInt64:
    return random::ElementType::Int64;
  default:
    return std::nullopt;
  }
}

/// The output for the shape in input 0, filled from `generator`; integer
/// fills take their range from inputs `rangeInputs` (minval, maxval).
static LogicalResult fill(KernelContext &ctx, const Philox &generator,
                          Distribution distribution, int32_t dtype,
                          std::optional<unsigned> rangeInput = std::nullopt) {
  const Tensor &shapeTensor = ctx.inputs[0];
  if (shapeTensor.shape().size() != 1)
    return ctx.error() << "shape must be a vector of {int32,int64}, got shape "
                       << shapeString(shapeTensor.shape());
  std::vector<int64_t> shape = toInts(shapeTensor);
  for (int64_t d : shape)
    if (d < 0)
      return ctx.error() << "Dimension " << d << " must be >= 0";
  std::optional<random::ElementType> element = getRandomElementType(dtype);
  bool integer = distribution == Distribution::UniformInt;
  if (!element || integer != (*element == random::ElementType::Int32 ||
                              *element == random::ElementType::Int64))
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  RandomFill spec{distribution, *element};
  if (rangeInput) {
    for (unsigned i : {*rangeInput, *rangeInput + 1})
      if (!ctx.inputs[i].shape().empty())
        return ctx.error() << (i == *rangeInput ? "minval" : "maxval")
                           << " must be 0-D, got shape "
                           << shapeString(ctx.inputs[i].shape());
    spec.low = toInts(ctx.inputs[*rangeInput])[0];
    spec.high = toInts(ctx.inputs[*rangeInput + 1])[0];
    bool empty = isUnsignedDType(dtype)
                     ? uint64_t(spec.low) >= uint64_t(spec.high)
                     : spec.low >= spec.high;
    if (empty)
      return ctx.error() << "Need minval < maxval, got " << spec.low
                         << " >= " << spec.high;
  }
  Tensor out(dtype, shape);
  int64_t count = out.numElements();
  random::fillRandom(generator, spec, out.raw(), count, 0,
                     random::getNumGroups(spec, count));
  ctx.outputs[0] = std::move(out);
  return success();
}

/// Stateful ops: the seeds' generator, moved on by what earlier runs drew.
template <Distribution distribution>
static LogicalResult stateful(KernelContext &ctx) {
  bool integer = distribution == Distribution::UniformInt;
  Philox generator =
      getStatefulGenerator(ctx.getInt("seed").value_or(0),
                           ctx.getInt("seed2").value_or(0), ctx.node.getName());
  std::string stateName = getRandomStateVariable(ctx.node.getName());
  uint64_t drawn = 0;
  if (auto it = ctx.state.variables.find(stateName);
      it != ctx.state.variables.end() && it->second.isValid())
    drawn = it->second.data<uint64_t>()[0];
  generator.skip(drawn);
  int32_t dtype = ctx.getType(integer ? "Tout" : "dtype").value_or(kFloat);
  if (failed(fill(ctx, generator, distribution, dtype,
                  integer ? std::optional<unsigned>(1) : std::nullopt)))
    return failure();
  Tensor next(kUInt64, {});
  next.data<uint64_t>()[0] = drawn + uint64_t(ctx.outputs[0].numElements()) *
                                         random::kBlocksReservedPerOutput;
  ctx.state.variables[stateName] = std::move(next);
  return success();
}

/// A V1 op's seed input: two integers.
static FailureOr<Philox> fromSeedInput(KernelContext &ctx, unsigned input) {
  const Tensor &seed = ctx.inputs[input];
  if (seed.shape() != std::vector<int64_t>{2})
    return ctx.error() << "seed must have shape [2], not "
                       << shapeString(seed.shape()),
           failure();
  std::vector<int64_t> seeds = toInts(seed);
  return Philox::fromStatelessSeed(uint64_t(seeds[0]), uint64_t(seeds[1]));
}

/// A V2 op's key, counter and algorithm inputs (from `first` on).
static FailureOr<Philox> fromKeyCounterInputs(KernelContext &ctx,
                                              unsigned first) {
  const Tensor &key = ctx.inputs[first];
  const Tensor &counter = ctx.inputs[first + 1];
  const Tensor &alg = ctx.inputs[first + 2];
  if (!alg.shape().empty())
    return ctx.error() << "alg must be a scalar, got shape "
                       << shapeString(alg.shape()),
           failure();
  // Philox (1) and the device's choice (3), which is Philox on CPUs.
  int64_t algorithm = toInts(alg)[0];
  if (algorithm != 1 && algorithm != 3)
    return ctx.error() << "Unsupported algorithm id: " << algorithm, failure();
  if (key.shape() != std::vector<int64_t>{1})
    return ctx.error() << "key must have shape [1], not "
                       << shapeString(key.shape()),
           failure();
  if (counter.shape().size() != 1 || counter.shape()[0] < 2)
    return ctx.error() << "counter must be a vector of at least 2 elements, "
                          "not of shape "
                       << shapeString(counter.shape()),
           failure();
  const uint64_t *c = counter.data<uint64_t>();
  return Philox::fromKeyCounter(key.data<uint64_t>()[0], c[0], c[1]);
}

template <Distribution distribution>
static LogicalResult statelessV1(KernelContext &ctx) {
  FailureOr<Philox> generator = fromSeedInput(ctx, 1);
  if (failed(generator))
    return failure();
  bool integer = distribution == Distribution::UniformInt;
  return fill(ctx, *generator, distribution,
              ctx.getType("dtype").value_or(kFloat),
              integer ? std::optional<unsigned>(2) : std::nullopt);
}

template <Distribution distribution>
static LogicalResult statelessV2(KernelContext &ctx) {
  FailureOr<Philox> generator = fromKeyCounterInputs(ctx, 1);
  if (failed(generator))
    return failure();
  bool integer = distribution == Distribution::UniformInt;
  return fill(ctx, *generator, distribution,
              ctx.getType("dtype").value_or(kFloat),
              integer ? std::optional<unsigned>(4) : std::nullopt);
}

/// StatelessRandomGetKeyCounter[Alg]: the V1 seed scrambled into the key
/// and counter the V2 ops take, so that V1(seed) == V2(key, counter).
static LogicalResult getKeyCounter(KernelContext &ctx) {
  FailureOr<Philox> generator = fromSeedInput(ctx, 0);
  if (failed(generator))
    return failure();
  Tensor key(kUInt64, {1}), counter(kUInt64, {2});
  key.data<uint64_t>()[0] = generator->getPackedKey();
  std::array<uint64_t, 2> packed = generator->getPackedCounter();
  std::copy(packed.begin(), packed.end(), counter.data<uint64_t>());
  ctx.outputs[0] = key;
  ctx.outputs[1] = counter;
  if (ctx.outputs.size() == 3) {
    Tensor alg(kInt32, {});
    alg.data<int32_t>()[0] = 1; // RNG_ALG_PHILOX, the CPU's
    ctx.outputs[2] = alg;
  }
  return success();
}

static LogicalResult getAlg(KernelContext &ctx) {
  Tensor alg(kInt32, {});
  alg.data<int32_t>()[0] = 1;
  ctx.outputs[0] = alg;
  return success();
}

KernelTable cleave::interp::getRandomKernels() {
  return {
      {"RandomUniform", stateful<Distribution::Uniform>},
      {"RandomStandardNormal", stateful<Distribution::Normal>},
      {"TruncatedNormal", stateful<Distribution::TruncatedNormal>},
      {"RandomUniformInt", stateful<Distribution::UniformInt>},
      {"StatelessRandomUniform", statelessV1<Distribution::Uniform>},
      {"StatelessRandomNormal", statelessV1<Distribution::Normal>},
      {"StatelessTruncatedNormal", statelessV1<Distribution::TruncatedNormal>},
      {"StatelessRandomUniformInt", statelessV1<Distribution::UniformInt>},
      {"StatelessRandomUniformV2", statelessV2<Distribution::Uniform>},
      {"StatelessRandomNormalV2", statelessV2<Distribution::Normal>},
      {"StatelessTruncatedNormalV2",
       statelessV2<Distribution::TruncatedNormal>},
      {"StatelessRandomUniformIntV2", statelessV2<Distribution::UniformInt>},
      {"StatelessRandomGetKeyCounter", getKeyCounter},
      {"StatelessRandomGetKeyCounterAlg", getKeyCounter},
      {"StatelessRandomGetAlg", getAlg},
  };
}
