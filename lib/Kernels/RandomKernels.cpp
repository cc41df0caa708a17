//===- RandomKernels.cpp - seeded random number kernels -------------------===//
//
// Reproducible, not TensorFlow's Philox streams: a stateful node's numbers
// depend on its seeds, its name and how often it has run, so an oracle run
// gives the same values every time while successive steps still differ; a
// stateless node's numbers depend only on its seed inputs.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "llvm/ADT/Hashing.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {
enum class Distribution { Uniform, Normal, TruncatedNormal };
} // namespace

/// Fills a tensor of the shape in input 0 with numbers drawn from `seed`.
template <Distribution kind>
static LogicalResult fill(KernelContext &ctx, uint64_t seed) {
  std::vector<int64_t> shape = toInts(ctx.inputs[0]);
  for (int64_t d : shape)
    if (d < 0)
      return ctx.error() << "shape must be non-negative, got "
                         << shapeString(shape);
  int32_t dtype = ctx.getType("dtype").value_or(kFloat);
  if (dtype != kFloat && dtype != kDouble)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Tensor out(dtype, shape);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    double v;
    if (kind == Distribution::Uniform) {
      v = uniform(engine);
    } else {
      do
        v = normal(engine);
      while (kind == Distribution::TruncatedNormal && std::fabs(v) > 2);
    }
    // A float rounding of a uniform draw must stay below 1.
    if (dtype == kFloat)
      out.data<float>()[i] = std::min(float(v), kind == Distribution::Uniform
                                                    ? std::nextafter(1.0f, 0.0f)
                                                    : float(v));
    else
      out.data<double>()[i] = v;
  }
  ctx.outputs[0] = out;
  return success();
}

/// Stateful ops: new numbers on every run of the node.
template <Distribution kind> static LogicalResult random(KernelContext &ctx) {
  uint64_t &draws = ctx.state.nodeRuns[ctx.node.getName()];
  return fill<kind>(ctx, llvm::hash_combine(ctx.getInt("seed").value_or(0),
                                            ctx.getInt("seed2").value_or(0),
                                            ctx.node.getName(), draws++));
}

/// Stateless ops: a pure function of their seed inputs (the seed pair of
/// the V1 ops, key and counter of the V2 ops).
template <Distribution kind, unsigned firstSeed, unsigned lastSeed>
static LogicalResult stateless(KernelContext &ctx) {
  uint64_t seed = 0;
  for (unsigned i = firstSeed; i <= lastSeed; ++i)
    for (int64_t v : toInts(ctx.inputs[i]))
      seed = llvm::hash_combine(seed, v);
  return fill<kind>(ctx, seed);
}

/// StatelessRandomGetKeyCounter(Alg): a key and counter from a seed pair.
static LogicalResult getKeyCounter(KernelContext &ctx) {
  std::vector<int64_t> seed = toInts(ctx.inputs[0]);
  if (seed.size() != 2)
    return ctx.error() << "seed must have shape [2], not "
                       << shapeString(ctx.inputs[0].shape());
  Tensor key(kUInt64, {1}), counter(kUInt64, {2});
  key.data<uint64_t>()[0] = uint64_t(seed[0]);
  counter.data<uint64_t>()[1] = uint64_t(seed[1]);
  ctx.outputs[0] = key;
  ctx.outputs[1] = counter;
  if (ctx.outputs.size() == 3) {
    Tensor alg(kInt32, {});
    alg.data<int32_t>()[0] = 1; // RNG_ALG_PHILOX, the CPU default
    ctx.outputs[2] = alg;
  }
  return success();
}

KernelTable cleave::interp::getRandomKernels() {
  return {
      {"RandomUniform", random<Distribution::Uniform>},
      {"RandomStandardNormal", random<Distribution::Normal>},
      {"TruncatedNormal", random<Distribution::TruncatedNormal>},
      {"StatelessRandomUniform", stateless<Distribution::Uniform, 1, 1>},
      {"StatelessRandomNormal", stateless<Distribution::Normal, 1, 1>},
      {"StatelessTruncatedNormal",
       stateless<Distribution::TruncatedNormal, 1, 1>},
      {"StatelessRandomUniformV2", stateless<Distribution::Uniform, 1, 3>},
      {"StatelessRandomNormalV2", stateless<Distribution::Normal, 1, 3>},
      {"StatelessTruncatedNormalV2",
       stateless<Distribution::TruncatedNormal, 1, 3>},
      {"StatelessRandomGetKeyCounter", getKeyCounter},
      {"StatelessRandomGetKeyCounterAlg", getKeyCounter},
  };
}
