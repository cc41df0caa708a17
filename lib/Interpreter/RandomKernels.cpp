//===- RandomKernels.cpp - seeded random number kernels -------------------===//
//
// Reproducible, not TensorFlow's Philox streams: a node's numbers depend on
// its seeds, its name and how often it has run, so an oracle run gives the
// same values every time while successive steps still differ.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/Hashing.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace cleave::interp;

namespace {
enum class Distribution { Uniform, Normal, TruncatedNormal };

template <Distribution kind> LogicalResult random(KernelContext &ctx) {
  std::vector<int64_t> shape = toInts(ctx.inputs[0]);
  for (int64_t d : shape)
    if (d < 0)
      return ctx.error() << "shape must be non-negative";
  int32_t dtype = ctx.getType("dtype").value_or(kFloat);
  if (dtype != kFloat && dtype != kDouble)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  uint64_t &draws = ctx.state.randomDraws[ctx.node.getName()];
  uint64_t seed = llvm::hash_combine(ctx.getInt("seed").value_or(0),
                                     ctx.getInt("seed2").value_or(0),
                                     ctx.node.getName(), draws++);
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
    if (dtype == kFloat)
      out.data<float>()[i] = float(v);
    else
      out.data<double>()[i] = v;
  }
  ctx.outputs[0] = out;
  return success();
}
} // namespace

KernelTable cleave::interp::getRandomKernels() {
  return {
      {"RandomUniform", random<Distribution::Uniform>},
      {"RandomStandardNormal", random<Distribution::Normal>},
      {"TruncatedNormal", random<Distribution::TruncatedNormal>},
  };
}
