//===- PhiloxTest.cpp - TensorFlow's random numbers -----------------------===//
//
// Known answers: Philox-4x32-10's test vectors (Random123's kat_vectors),
// and numbers TensorFlow's kernels produced (tf.random.uniform with global
// and op seeds, as recorded by OpenVINO's reference tests of its
// TensorFlow-aligned RandomUniform). The stateless ops are tied to them by
// TensorFlow's own test relation: a stateless op seeded with the preimage
// of (seed, 0, seed2, 0) under the scrambling draws what the stateful op
// with seeds (seed, seed2) draws on its first run.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace cleave::random;

namespace {

template <typename T>
std::vector<T> draw(const Philox &generator, Distribution distribution,
                    ElementType element, int64_t count, int64_t low = 0,
                    int64_t high = 0) {
  std::vector<T> out(count);
  RandomFill fill{distribution, element, low, high};
  fillRandom(generator, fill, out.data(), count, 0, getNumGroups(fill, count));
  return out;
}

/// The multiplicative inverse of an odd number modulo 2^32 (Newton).
uint32_t inverse(uint32_t x) {
  uint32_t y = x;
  for (int i = 0; i < 5; ++i)
    y *= 2 - x * y;
  return y;
}

/// The counter that Philox under `key` maps to `value`.
Philox::Block invertPhilox(Philox::Key key, Philox::Block value) {
  const uint32_t multiplierA = 0xD2511F53, multiplierB = 0xCD9E8D57;
  for (int round = 9; round >= 0; --round) {
    uint32_t key0 = key[0] + uint32_t(round) * 0x9E3779B9u;
    uint32_t key1 = key[1] + uint32_t(round) * 0xBB67AE85u;
    uint32_t c0 = value[3] * inverse(multiplierA);
    uint32_t c2 = value[1] * inverse(multiplierB);
    uint32_t high0 = uint32_t((uint64_t(multiplierA) * c0) >> 32);
    uint32_t high2 = uint32_t((uint64_t(multiplierB) * c2) >> 32);
    value = {c0, value[0] ^ high2 ^ key0, c2, value[2] ^ high0 ^ key1};
  }
  return value;
}

/// The stateless generator that draws what stateful seeds (seed, seed2)
/// draw first.
Philox statelessTwin(uint32_t seed, uint32_t seed2) {
  Philox::Block preimage =
      invertPhilox({0x3ec8f720, 0x02461e29}, {seed, 0, seed2, 0});
  return Philox::fromStatelessSeed(
      uint64_t(preimage[0]) | uint64_t(preimage[1]) << 32,
      uint64_t(preimage[2]) | uint64_t(preimage[3]) << 32);
}

} // namespace

TEST(PhiloxTest, KnownAnswerVectors) {
  EXPECT_EQ(Philox({0, 0, 0, 0}, {0, 0}).next(),
            (Philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                   {0xffffffff, 0xffffffff})
                .next(),
            (Philox::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                   {0xa4093822, 0x299f31d0})
                .next(),
            (Philox::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxTest, InversionUndoesTheBijection) {
  Philox::Block counter{1, 2, 3, 4};
  Philox::Key key{5, 6};
  EXPECT_EQ(invertPhilox(key, Philox(counter, key).next()), counter);
}

TEST(PhiloxTest, SkipCarriesAcrossTheCounterWords) {
  Philox skipped({0xffffffff, 0xffffffff, 0xffffffff, 0}, {7, 8});
  skipped.skip(1);
  EXPECT_EQ(skipped.next(), Philox({0, 0, 0, 1}, {7, 8}).next());
  Philox far({0xfffffff0, 0, 0, 0}, {7, 8});
  far.skip((uint64_t(3) << 32) | 0x20);
  EXPECT_EQ(far.next(), Philox({0x10, 4, 0, 0}, {7, 8}).next());
}

TEST(PhiloxTest, StatefulUniformFloatMatchesTensorFlow) {
  // tf.random.set_seed(150); tf.random.uniform([3, 2, 4], seed=10)
  std::vector<float> expected = {
      0.70112360f, 0.30539632f, 0.93931055f, 0.94560349f, 0.11694777f,
      0.50770056f, 0.51971972f, 0.22727466f, 0.99137402f, 0.35519040f,
      0.82692313f, 0.59864855f, 0.31364107f, 0.57481313f, 0.41399086f,
      0.96308255f, 0.37140799f, 0.85253167f, 0.09358585f, 0.08200955f,
      0.23655081f, 0.81056309f, 0.74226606f, 0.76106691f};
  std::vector<float> stateful =
      draw<float>(Philox::fromSeeds(150, 10), Distribution::Uniform,
                  ElementType::Float, 24);
  std::vector<float> stateless = draw<float>(
      statelessTwin(150, 10), Distribution::Uniform, ElementType::Float, 24);
  for (int i = 0; i < 24; ++i) {
    EXPECT_NEAR(stateful[i], expected[i], 5e-8) << "element " << i;
    EXPECT_EQ(stateless[i], stateful[i]) << "element " << i;
  }
}

TEST(PhiloxTest, StatefulUniformDoubleMatchesTensorFlow) {
  // Seeds 12345 and 54321, shape [7, 6]: the first and last rows.
  std::vector<double> out =
      draw<double>(Philox::fromSeeds(12345, 54321), Distribution::Uniform,
                   ElementType::Double, 42);
  double first[] = {0.2921047836089943,  0.1865942500848503,
                    0.006919873589045,   0.6934785411915267,
                    0.24304703848961706, 0.03778989685165657};
  double last[] = {0.7303574589403252, 0.9344756372163827, 0.6340667403806175,
                   0.7051371357116014, 0.5739520844965524, 0.1945947342973824};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(out[i], first[i], 1e-15) << "element " << i;
    EXPECT_NEAR(out[36 + i], last[i], 1e-15) << "element " << 36 + i;
  }
}

TEST(PhiloxTest, StatefulUniformIntMatchesTensorFlow) {
  // tf.random.uniform([7, 6], -100, 250, tf.int32) with seeds 12345, 54321.
  std::vector<int32_t> int32s = {
      -92, 82,  160, 41,  218, 48,  42,  51,  189, -96, -95, -10, -72, 101,
      175, 207, 31,  -60, 126, -45, 131, 245, 77,  -33, 157, 77,  60,  -80,
      79,  72,  -49, 25,  -70, 32,  -3,  -78, 82,  -82, -71, 51,  -24, 100};
  EXPECT_EQ(draw<int32_t>(Philox::fromSeeds(12345, 54321),
                          Distribution::UniformInt, ElementType::Int32, 42,
                          -100, 250),
            int32s);
  EXPECT_EQ(draw<int32_t>(statelessTwin(12345, 54321), Distribution::UniformInt,
                          ElementType::Int32, 42, -100, 250),
            int32s);
  // The same in int64, and [-2600, 3700) with seeds 755, 951 (first row).
  std::vector<int64_t> int64s = {
      230, -4,  26, -12, 23,  195, 74, -53, 121, 206, -99, 9,   249, -70,
      -59, 101, 52, -41, 210, 225, 76, -54, 183, -12, 237, -60, -21, 159,
      134, 147, 37, 116, -13, 100, 53, 182, 143, 228, -57, 93,  230, 195};
  EXPECT_EQ(draw<int64_t>(Philox::fromSeeds(12345, 54321),
                          Distribution::UniformInt, ElementType::Int64, 42,
                          -100, 250),
            int64s);
  std::vector<int64_t> wide =
      draw<int64_t>(Philox::fromSeeds(755, 951), Distribution::UniformInt,
                    ElementType::Int64, 60, -2600, 3700);
  EXPECT_EQ(std::vector<int64_t>(wide.begin(), wide.begin() + 12),
            (std::vector<int64_t>{2116, -1581, 2559, -339, -1660, 519, 90, 2027,
                                  -210, 3330, 1831, -1737}));
}

TEST(PhiloxTest, KeyCounterOfASeedDrawsWhatTheSeedDraws) {
  // StatelessRandomGetKeyCounter + a V2 op == the V1 op on the seed.
  Philox v1 = Philox::fromStatelessSeed(uint64_t(-7), 42);
  std::array<uint64_t, 2> counter = v1.getPackedCounter();
  Philox v2 = Philox::fromKeyCounter(v1.getPackedKey(), counter[0], counter[1]);
  EXPECT_EQ(counter[0], 0u);
  EXPECT_EQ(draw<float>(v1, Distribution::Normal, ElementType::Float, 10),
            draw<float>(v2, Distribution::Normal, ElementType::Float, 10));
}

TEST(PhiloxTest, GroupsDoNotDependOnHowTheFillIsSplit) {
  for (Distribution distribution : {Distribution::Uniform, Distribution::Normal,
                                    Distribution::TruncatedNormal}) {
    for (ElementType element : {ElementType::Float, ElementType::Double}) {
      RandomFill fill{distribution, element};
      Philox base = Philox::fromSeeds(3, 4);
      int64_t count = 1001, groups = getNumGroups(fill, count);
      std::vector<double> whole(count), halves(count);
      fillRandom(base, fill, whole.data(), count, 0, groups);
      fillRandom(base, fill, halves.data(), count, groups / 2, groups);
      fillRandom(base, fill, halves.data(), count, 0, groups / 2);
      EXPECT_EQ(std::memcmp(whole.data(), halves.data(),
                            count * (element == ElementType::Float ? 4 : 8)),
                0)
          << int(distribution) << " " << int(element);
    }
  }
}

TEST(PhiloxTest, NormalsHaveTheirMoments) {
  const int64_t count = 200000;
  auto moments = [](const std::vector<double> &v) {
    double sum = 0, squares = 0, largest = 0;
    for (double x : v) {
      sum += x;
      squares += x * x;
      largest = std::max(largest, std::fabs(x));
    }
    double mean = sum / v.size();
    return std::array<double, 3>{
        mean, std::sqrt(squares / v.size() - mean * mean), largest};
  };
  std::vector<double> normal =
      draw<double>(Philox::fromSeeds(1, 2), Distribution::Normal,
                   ElementType::Double, count);
  std::array<double, 3> m = moments(normal);
  EXPECT_NEAR(m[0], 0, 0.01);
  EXPECT_NEAR(m[1], 1, 0.01);
  EXPECT_GT(m[2], 3.5); // the tails are there
  // Truncated at two standard deviations: sd 0.87962566.
  std::vector<float> truncated =
      draw<float>(Philox::fromSeeds(1, 2), Distribution::TruncatedNormal,
                  ElementType::Float, count);
  m = moments(std::vector<double>(truncated.begin(), truncated.end()));
  EXPECT_NEAR(m[0], 0, 0.01);
  EXPECT_NEAR(m[1], 0.8796, 0.01);
  EXPECT_LT(m[2], 2.0);
}

TEST(PhiloxTest, UniformFloatsStayBelowOne) {
  std::vector<float> out =
      draw<float>(Philox::fromSeeds(9, 9), Distribution::Uniform,
                  ElementType::Float, 100000);
  for (float x : out)
    ASSERT_TRUE(x >= 0.0f && x < 1.0f) << x;
}
