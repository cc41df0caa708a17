//===- Philox.cpp - TensorFlow's random number generators -----------------===//

#include "cleave/Support/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace cleave::random;

// The round multipliers and the key schedule's increments (the golden ratio
// and sqrt(3) - 1 in 32 bits).
static constexpr uint32_t kMultiplierA = 0xD2511F53;
static constexpr uint32_t kMultiplierB = 0xCD9E8D57;
static constexpr uint32_t kKeyIncrementA = 0x9E3779B9;
static constexpr uint32_t kKeyIncrementB = 0xBB67AE85;

Philox Philox::fromSeeds(uint64_t seed, uint64_t seed2) {
  return Philox({0, 0, uint32_t(seed2), uint32_t(seed2 >> 32)},
                {uint32_t(seed), uint32_t(seed >> 32)});
}

Philox Philox::fromStatelessSeed(uint64_t seed0, uint64_t seed1) {
  Block mix = Philox({uint32_t(seed0), uint32_t(seed0 >> 32), uint32_t(seed1),
                      uint32_t(seed1 >> 32)},
                     {0x3ec8f720, 0x02461e29})
                  .next();
  return Philox({0, 0, mix[2], mix[3]}, {mix[0], mix[1]});
}

Philox Philox::fromKeyCounter(uint64_t key, uint64_t counterLow,
                              uint64_t counterHigh) {
  return Philox({uint32_t(counterLow), uint32_t(counterLow >> 32),
                 uint32_t(counterHigh), uint32_t(counterHigh >> 32)},
                {uint32_t(key), uint32_t(key >> 32)});
}

uint64_t Philox::getPackedKey() const {
  return uint64_t(key[0]) | uint64_t(key[1]) << 32;
}

std::array<uint64_t, 2> Philox::getPackedCounter() const {
  return {uint64_t(counter[0]) | uint64_t(counter[1]) << 32,
          uint64_t(counter[2]) | uint64_t(counter[3]) << 32};
}

Philox::Block Philox::next() {
  Block block = counter;
  Key roundKey = key;
  for (int round = 0; round < 10; ++round) {
    uint64_t productA = uint64_t(kMultiplierA) * block[0];
    uint64_t productB = uint64_t(kMultiplierB) * block[2];
    block = {
        uint32_t(productB >> 32) ^ block[1] ^ roundKey[0], uint32_t(productB),
        uint32_t(productA >> 32) ^ block[3] ^ roundKey[1], uint32_t(productA)};
    roundKey[0] += kKeyIncrementA;
    roundKey[1] += kKeyIncrementB;
  }
  skip(1);
  return block;
}

void Philox::skip(uint64_t blocks) {
  uint32_t low = uint32_t(blocks);
  uint32_t high = uint32_t(blocks >> 32);
  counter[0] += low;
  if (counter[0] < low)
    ++high;
  counter[1] += high;
  if (counter[1] < high && ++counter[2] == 0)
    ++counter[3];
}

//===----------------------------------------------------------------------===//
// Bits to numbers
//===----------------------------------------------------------------------===//

/// A float in [0, 1) from 23 random mantissa bits.
static float toFloat(uint32_t bits) {
  uint32_t value = (127u << 23) | (bits & 0x7fffffu);
  float result;
  std::memcpy(&result, &value, sizeof(result));
  return result - 1.0f;
}

/// A double in [0, 1) from 52 random mantissa bits (20 of `high`).
static double toDouble(uint32_t high, uint32_t low) {
  uint64_t value = (uint64_t(1023) << 52) | (uint64_t(high & 0xfffffu) << 32) |
                   uint64_t(low);
  double result;
  std::memcpy(&result, &value, sizeof(result));
  return result - 1.0;
}

// Box-Muller as TensorFlow writes it: u1 kept off zero, and the angle
// computed in double for floats too (2.0f * M_PI is a double).
static void boxMuller(uint32_t x0, uint32_t x1, float &f0, float &f1) {
  float u1 = std::max(toFloat(x0), 1.0e-7f);
  float angle = float(2.0f * M_PI * toFloat(x1));
  float radius = std::sqrt(-2.0f * std::log(u1));
  sincosf(angle, &f0, &f1);
  f0 *= radius;
  f1 *= radius;
}

static void boxMuller(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3,
                      double &d0, double &d1) {
  double u1 = std::max(toDouble(x0, x1), 1.0e-7);
  double angle = 2 * M_PI * toDouble(x2, x3);
  double radius = std::sqrt(-2.0 * std::log(u1));
  sincos(angle, &d0, &d1);
  d0 *= radius;
  d1 *= radius;
}

namespace {
/// One 32-bit sample at a time (TensorFlow's SingleSampleAdapter), for
/// the rejection of truncated normals.
class SingleSamples {
public:
  explicit SingleSamples(Philox &generator) : generator(generator) {}
  uint32_t operator()() {
    if (used == 4) {
      block = generator.next();
      used = 0;
    }
    return block[used++];
  }

private:
  Philox &generator;
  Philox::Block block{};
  int used = 4;
};
} // namespace

/// Writes one group of outputs (at most `size` of them) from `generator`.
template <typename T>
static void fillGroup(Philox &generator, const RandomFill &fill, T *out,
                      int64_t size) {
  T values[4];
  int64_t groupSize = 0;
  switch (fill.distribution) {
  case Distribution::Uniform: {
    Philox::Block b = generator.next();
    if constexpr (std::is_same_v<T, float>) {
      for (int i = 0; i < 4; ++i)
        values[i] = toFloat(b[i]);
      groupSize = 4;
    } else if constexpr (std::is_same_v<T, double>) {
      values[0] = toDouble(b[0], b[1]);
      values[1] = toDouble(b[2], b[3]);
      groupSize = 2;
    }
    break;
  }
  case Distribution::Normal: {
    Philox::Block b = generator.next();
    if constexpr (std::is_same_v<T, float>) {
      boxMuller(b[0], b[1], values[0], values[1]);
      boxMuller(b[2], b[3], values[2], values[3]);
      groupSize = 4;
    } else if constexpr (std::is_same_v<T, double>) {
      boxMuller(b[0], b[1], b[2], b[3], values[0], values[1]);
      groupSize = 2;
    }
    break;
  }
  case Distribution::TruncatedNormal: {
    // Normals until a group's worth lie within two standard deviations.
    SingleSamples samples(generator);
    if constexpr (std::is_same_v<T, float>) {
      while (groupSize < 4) {
        uint32_t x0 = samples(), x1 = samples();
        float f[2];
        boxMuller(x0, x1, f[0], f[1]);
        for (int i = 0; i < 2 && groupSize < 4; ++i)
          if (std::fabs(f[i]) < 2.0f)
            values[groupSize++] = f[i];
      }
    } else if constexpr (std::is_same_v<T, double>) {
      while (groupSize < 2) {
        uint32_t x0 = samples(), x1 = samples(), x2 = samples(), x3 = samples();
        double d[2];
        boxMuller(x0, x1, x2, x3, d[0], d[1]);
        for (int i = 0; i < 2 && groupSize < 2; ++i)
          if (std::fabs(d[i]) < 2.0)
            values[groupSize++] = d[i];
      }
    }
    break;
  }
  case Distribution::UniformInt: {
    // TensorFlow's modulo (slightly biased unless the range is a power of
    // two), added in unsigned arithmetic: the range may exceed the type's
    // positive half. An empty range is the caller's error; it gives `low`
    // rather than a division by zero.
    Philox::Block b = generator.next();
    if constexpr (std::is_same_v<T, int32_t>) {
      uint32_t range = uint32_t(fill.high) - uint32_t(fill.low);
      for (int i = 0; i < 4; ++i)
        values[i] = int32_t(uint32_t(fill.low) + (range ? b[i] % range : 0));
      groupSize = 4;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      uint64_t range = uint64_t(fill.high) - uint64_t(fill.low);
      for (int i = 0; i < 2; ++i) {
        uint64_t bits = uint64_t(b[2 * i]) | uint64_t(b[2 * i + 1]) << 32;
        values[i] = int64_t(uint64_t(fill.low) + (range ? bits % range : 0));
      }
      groupSize = 2;
    }
    break;
  }
  }
  std::copy(values, values + std::min(groupSize, size), out);
}

int64_t cleave::random::getGroupSize(const RandomFill &fill) {
  bool wide =
      fill.element == ElementType::Double || fill.element == ElementType::Int64;
  return wide ? 2 : 4;
}

int64_t cleave::random::getNumGroups(const RandomFill &fill, int64_t count) {
  int64_t size = getGroupSize(fill);
  return (count + size - 1) / size;
}

template <typename T>
static void fillGroups(const Philox &base, const RandomFill &fill, T *out,
                       int64_t count, int64_t beginGroup, int64_t endGroup) {
  int64_t size = getGroupSize(fill);
  // A truncated normal's group may reject samples: each starts at its own
  // reserve of blocks, so that its numbers do not depend on its neighbours.
  uint64_t blocksPerGroup = fill.distribution == Distribution::TruncatedNormal
                                ? uint64_t(size) * kBlocksReservedPerOutput / 4
                                : 1;
  Philox generator = base;
  generator.skip(uint64_t(beginGroup) * blocksPerGroup);
  for (int64_t group = beginGroup; group < endGroup; ++group) {
    if (blocksPerGroup != 1) {
      generator = base;
      generator.skip(uint64_t(group) * blocksPerGroup);
    }
    fillGroup(generator, fill, out + group * size,
              std::min(size, count - group * size));
  }
}

void cleave::random::fillRandom(const Philox &base, const RandomFill &fill,
                                void *out, int64_t count, int64_t beginGroup,
                                int64_t endGroup) {
  switch (fill.element) {
  case ElementType::Float:
    return fillGroups(base, fill, static_cast<float *>(out), count, beginGroup,
                      endGroup);
  case ElementType::Double:
    return fillGroups(base, fill, static_cast<double *>(out), count, beginGroup,
                      endGroup);
  case ElementType::Int32:
    return fillGroups(base, fill, static_cast<int32_t *>(out), count,
                      beginGroup, endGroup);
  case ElementType::Int64:
    return fillGroups(base, fill, static_cast<int64_t *>(out), count,
                      beginGroup, endGroup);
  }
}
