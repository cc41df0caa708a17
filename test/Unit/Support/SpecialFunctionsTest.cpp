//===- SpecialFunctionsTest.cpp - Erfc, Lgamma, Digamma, Zeta, Polygamma --===//
//
// Known answers computed with mpmath at 40 digits, rounded to double: the
// implementations must agree to a few units in the last place, across the
// recurrence, the reflection below 0 and the asymptotic series.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/SpecialFunctions.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cleave::special;

namespace {

struct KnownValue {
  double x, y, expected;
};

void expectClose(Function function, std::initializer_list<KnownValue> values,
                 double tolerance) {
  for (const KnownValue &v : values) {
    double got = evaluate(function, v.x, v.y);
    EXPECT_NEAR(got, v.expected, tolerance * std::abs(v.expected))
        << "function " << int64_t(function) << " at (" << v.x << ", " << v.y
        << ")";
  }
}

TEST(SpecialFunctions, Erfc) {
  expectClose(Function::Erfc,
              {{0.1, 0, 0.88753708398171505},
               {3, 0, 2.2090496998585441e-05},
               {26, 0, 5.6631924088561432e-296},
               {-1, 0, 1.8427007929497148}},
              1e-15);
}

TEST(SpecialFunctions, Lgamma) {
  expectClose(Function::Lgamma,
              {{0.37, 0, 0.87694681948487929},
               {2.5, 0, 0.28468287047291918},
               {-2.5, 0, -0.056243716497674054},
               {100.5, 0, 361.43554046777763}},
              1e-14);
}

TEST(SpecialFunctions, Digamma) {
  expectClose(Function::Digamma,
              {{1e-8, 0, -100000000.57721564},
               {0.37, 0, -2.7953014108905641},
               {1.5, 0, 0.03648997397857652},
               {7.25, 0, 1.9104535268837359},
               {123.5, 0, 4.8121871094331432},
               {-2.5, 0, 1.1031566406452431},
               {-0.1, 0, 9.2450730500529481},
               {1e6, 0, 13.815510057964191}},
              1e-14);
  // The poles.
  for (double pole : {0.0, -1.0, -7.0})
    EXPECT_TRUE(std::isnan(digamma(pole))) << pole;
}

TEST(SpecialFunctions, Zeta) {
  expectClose(Function::Zeta,
              {{1.5, 1, 2.6123753486854882},
               {2, 0.3, 12.245364546107732},
               {4.5, 3.25, 0.0076478938025290894},
               {3, -1.5, 0.1181020258208637}},
              1e-14);
  EXPECT_EQ(zeta(1, 2), INFINITY);
  EXPECT_EQ(zeta(2, -3), INFINITY);
  EXPECT_TRUE(std::isnan(zeta(0.5, 1)));
  EXPECT_TRUE(std::isnan(zeta(2.5, -1.5)));
}

TEST(SpecialFunctions, Polygamma) {
  expectClose(Function::Polygamma,
              {{1, 3.2, 0.36632119073140079},
               {1, 0.37, 8.3604738277990975},
               {2, 5.9, -0.034005212064450403},
               {3, 1.3, 2.4010239143089263},
               {4, -0.5, -3.4742498266672253},
               {0, 7.25, 1.9104535268837359}},
              1e-14);
  EXPECT_TRUE(std::isnan(polygamma(1.5, 2)));
  EXPECT_TRUE(std::isnan(polygamma(-1, 2)));
}

} // namespace
