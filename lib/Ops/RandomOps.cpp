//===- RandomOps.cpp - random number op signatures ------------------------===//
//
// Ops from TensorFlow's random_ops.cc (stateful: each run draws new numbers),
// stateless_random_ops.cc and stateless_random_ops_v2.cc (pure functions of
// their seed, key and counter inputs).
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

static constexpr const char *kFloatDType =
    "dtype: {half, bfloat16, float, double}";
static constexpr const char *kStatelessDType =
    "dtype: {half, bfloat16, float, double} = DT_FLOAT";

static OpTableEntry randomFloat(const char *name) {
  return {name,
          {"shape: T"},
          {"output: dtype"},
          {"seed: int = 0", "seed2: int = 0", kFloatDType, "T: {int32, int64}"},
          /*isStateful=*/true};
}

static OpTableEntry statelessFloat(const char *name) {
  return {name,
          {"shape: T", "seed: Tseed"},
          {"output: dtype"},
          {kStatelessDType, "T: {int32, int64} = DT_INT32",
           "Tseed: {int32, int64} = DT_INT64"}};
}

static OpTableEntry statelessFloatV2(const char *name) {
  return {name,
          {"shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"},
          {"output: dtype"},
          {kStatelessDType, "Tshape: {int32, int64} = DT_INT32"}};
}

OpTable cleave::ops::detail::getRandomOps() {
  return {
      randomFloat("RandomUniform"),
      randomFloat("RandomStandardNormal"),
      randomFloat("TruncatedNormal"),
      {"RandomUniformInt",
       {"shape: T", "minval: Tout", "maxval: Tout"},
       {"output: Tout"},
       {"seed: int = 0", "seed2: int = 0", "Tout: {int32, int64}",
        "T: {int32, int64}"},
       /*isStateful=*/true},
      {"RandomShuffle",
       {"value: T"},
       {"output: T"},
       {"seed: int = 0", "seed2: int = 0", "T: type"},
       /*isStateful=*/true},

      statelessFloat("StatelessRandomUniform"),
      statelessFloat("StatelessRandomNormal"),
      statelessFloat("StatelessTruncatedNormal"),

      {"StatelessRandomUniformInt",
       {"shape: T", "seed: Tseed", "minval: dtype", "maxval: dtype"},
       {"output: dtype"},
       {"dtype: {int32, int64}", "T: {int32, int64}", "Tseed: {int32, int64}"}},

      statelessFloatV2("StatelessRandomUniformV2"),
      statelessFloatV2("StatelessRandomNormalV2"),
      statelessFloatV2("StatelessTruncatedNormalV2"),
      {"StatelessRandomUniformIntV2",
       {"shape: Tshape", "key: uint64", "counter: uint64", "alg: int32",
        "minval: dtype", "maxval: dtype"},
       {"output: dtype"},
       {"dtype: {int32, int64, uint32, uint64}",
        "Tshape: {int32, int64} = DT_INT32"}},
      // The key/counter/alg helpers depend on the device's RNG, so recent
      // TensorFlow marks them stateful to keep them from being folded.
      {"StatelessRandomGetKeyCounterAlg",
       {"seed: Tseed"},
       {"key: uint64", "counter: uint64", "alg: int32"},
       {"Tseed: {int32, int64} = DT_INT64"},
       /*isStateful=*/true},
      {"StatelessRandomGetKeyCounter",
       {"seed: Tseed"},
       {"key: uint64", "counter: uint64"},
       {"Tseed: {int32, int64} = DT_INT64"},
       /*isStateful=*/true},
      {"StatelessRandomGetAlg", {}, {"alg: int32"}, {}, /*isStateful=*/true},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

static std::string keyCounterShape(InferenceContext &ctx) {
  ctx.setOutput(0, Shape::of({1}));
  ctx.setOutput(1, Shape::of({2}));
  ctx.setOutput(2, Shape::scalar());
  return "";
}

ShapeFnTable cleave::ops::detail::getRandomShapeFns() {
  ShapeFnTable table = {
      {"StatelessRandomGetKeyCounterAlg", keyCounterShape},
      {"StatelessRandomGetKeyCounter", keyCounterShape},
      {"StatelessRandomGetAlg", shapes::scalar},
      {"RandomShuffle", shapes::unchanged},
  };
  for (const char *op :
       {"RandomUniform", "RandomStandardNormal", "TruncatedNormal",
        "RandomUniformInt", "StatelessRandomUniform", "StatelessRandomNormal",
        "StatelessTruncatedNormal", "StatelessRandomUniformInt",
        "StatelessRandomUniformV2", "StatelessRandomNormalV2",
        "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2"})
    table.push_back({op, shapes::fromShapeInputAt<0>});
  return table;
}
