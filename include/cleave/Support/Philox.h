//===- Philox.h - TensorFlow's random number generators ---------*- C++ -*-===//
//
// TensorFlow's random ops draw from Philox-4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11) with TensorFlow's layout of
// key and counter, and turn its bits into numbers as TensorFlow's
// distributions do (tensorflow/core/lib/random/random_distributions.h):
// floats from the mantissa bits, normals by Box-Muller, truncated normals by
// rejection, integers by a modulo. A tensor is filled in groups of outputs,
// group g from the generator skipped g blocks ahead (TensorFlow's
// FillPhiloxRandom), so any split of the groups among threads gives the same
// numbers. The reference interpreter and compiled code (through the kernel
// library) both call fillRandom, so they produce the same bits. No LLVM or
// MLIR: programs linking graph-compile's objects use it too.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_PHILOX_H
#define CLEAVE_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace cleave::random {

/// Philox-4x32-10: a 128-bit counter encrypted under a 64-bit key.
class Philox {
public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  Philox(Block counter, Key key) : counter(counter), key(key) {}

  /// A stateful op's generator (TensorFlow's PhiloxRandom(seed, seed2)):
  /// `seed` is the key, `seed2` the upper half of the counter.
  static Philox fromSeeds(uint64_t seed, uint64_t seed2);
  /// A stateless V1 op's generator from its seed pair, scrambled as
  /// TensorFlow's GenerateKey does (so that either seed may be weak).
  static Philox fromStatelessSeed(uint64_t seed0, uint64_t seed1);
  /// A V2 op's generator from its key and counter inputs.
  static Philox fromKeyCounter(uint64_t key, uint64_t counterLow,
                               uint64_t counterHigh);

  /// The key and counter as StatelessRandomGetKeyCounter returns them.
  uint64_t getPackedKey() const;
  std::array<uint64_t, 2> getPackedCounter() const;

  /// The block at the counter; the counter moves on by one.
  Block next();
  /// Moves the counter on by `blocks`.
  void skip(uint64_t blocks);

private:
  Block counter;
  Key key;
};

enum class Distribution { Uniform, Normal, TruncatedNormal, UniformInt };
enum class ElementType { Float, Double, Int32, Int64 };

/// What to fill: a distribution of an element type; UniformInt draws from
/// [low, high), which must not be empty.
struct RandomFill {
  Distribution distribution = Distribution::Uniform;
  ElementType element = ElementType::Float;
  int64_t low = 0, high = 0;
};

/// The outputs one group holds (one block's worth, or more for truncated
/// normals, which reject samples).
int64_t getGroupSize(const RandomFill &fill);
/// The groups a tensor of `count` elements takes (the last may be partial).
int64_t getNumGroups(const RandomFill &fill, int64_t count);

/// Fills groups [beginGroup, endGroup) of `out`, a buffer of `count`
/// elements, from `base`.
void fillRandom(const Philox &base, const RandomFill &fill, void *out,
                int64_t count, int64_t beginGroup, int64_t endGroup);

/// Blocks a stateful op reserves per output on each run: the generator
/// moves on by count * this (TensorFlow's ReserveRandomOutputs(n, 256)),
/// enough for the rejections of a truncated normal.
constexpr uint64_t kBlocksReservedPerOutput = 256;

} // namespace cleave::random

#endif // CLEAVE_SUPPORT_PHILOX_H
