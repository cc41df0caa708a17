//===- ShapeInferenceTest.cpp - unit tests of the shape helpers -----------===//

#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/ShapeInference.h"

#include "gtest/gtest.h"

using namespace cleave::ops;

namespace {

TEST(ShapeInferenceTest, BroadcastFollowsNumPy) {
  std::string error;
  auto out = broadcastShapes(Shape::of({3, 1}), Shape::of({4}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({3, 4}));
  out = broadcastShapes(Shape::of({-1, 10}), Shape::of({10}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({-1, 10}));
  out = broadcastShapes(Shape::of({2}), Shape::unknown(), error);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->hasRank());
  EXPECT_FALSE(broadcastShapes(Shape::of({2}), Shape::of({3}), error));
  EXPECT_EQ(error, "Dimensions must be equal, but are 2 and 3");
}

TEST(ShapeInferenceTest, MergeKeepsTheMostSpecific) {
  std::string error;
  auto out = mergeShapes(Shape::of({-1, 4}), Shape::of({3, -1}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({3, 4}));
  EXPECT_FALSE(mergeShapes(Shape::of({3}), Shape::of({3, 1}), error));
  EXPECT_FALSE(mergeShapes(Shape::of({3}), Shape::of({4}), error));
}

TEST(ShapeInferenceTest, PrintsLikeTensorFlow) {
  EXPECT_EQ(Shape::of({2, -1}).str(), "[2,?]");
  EXPECT_EQ(Shape::scalar().str(), "[]");
  EXPECT_EQ(Shape::unknown().str(), "?");
}

TEST(ShapeInferenceTest, ShapeFunctionsBelongToRegisteredOps) {
  // The table is checked against the registry on first use.
  EXPECT_NE(lookupShapeFn("MatMul"), nullptr);
  EXPECT_NE(lookupShapeFn("AddV2"), nullptr);
  EXPECT_EQ(lookupShapeFn("NotARealOp"), nullptr);
  EXPECT_EQ(lookupShapeFn("SymbolicGradient"), nullptr);
}

} // namespace
