//===- NumpyStringTest.cpp - tensors printed as numpy prints them ---------===//

#include "cleave/Tensor/Tensor.h"

#include "gtest/gtest.h"

using namespace cleave;

namespace {

TEST(NumpyStringTest, ScalarsVectorsAndMatrices) {
  Tensor scalar(kFloat, {});
  scalar.setFromDouble(0, 0.25);
  EXPECT_EQ(scalar.toNumpyString(), "0.25");
  Tensor vector(kInt64, {3});
  for (int i = 0; i < 3; ++i)
    vector.setFromDouble(i, i - 1);
  EXPECT_EQ(vector.toNumpyString(), "[-1 0 1]");
  Tensor matrix(kFloat, {2, 2});
  for (int i = 0; i < 4; ++i)
    matrix.setFromDouble(i, i + 0.5);
  EXPECT_EQ(matrix.toNumpyString(), "[[0.5 1.5] [2.5 3.5]]");
  // A row of it, as graph-estimator predict prints one example.
  EXPECT_EQ(matrix.toNumpyString(2, {2}), "[2.5 3.5]");
  Tensor flags(kBool, {2});
  flags.setFromDouble(1, 1);
  EXPECT_EQ(flags.toNumpyString(), "[False True]");
}

} // namespace
