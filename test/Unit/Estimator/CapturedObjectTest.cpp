//===- CapturedObjectTest.cpp - TPUEstimator's _CapturedObject ------------===//

#include "lib/Estimator/CapturedObject.h"

#include "gtest/gtest.h"

#include <string>

using namespace cleave::estimator;

namespace {

TEST(CapturedObjectTest, CapturedOnceThenRead) {
  CapturedObject<std::string> scaffold;
  ASSERT_FALSE(bool(scaffold.capture("init")));
  auto value = scaffold.get();
  ASSERT_TRUE(bool(value));
  EXPECT_EQ(*value, "init");
}

TEST(CapturedObjectTest, InternalErrorsWithTensorFlowsWording) {
  CapturedObject<std::string> scaffold;
  auto early = scaffold.get();
  ASSERT_FALSE(bool(early));
  EXPECT_EQ(llvm::toString(early.takeError()),
            "InternalError: Object is not captured properly before `get`. "
            "Please file bug.");
  ASSERT_FALSE(bool(scaffold.capture("first")));
  EXPECT_EQ(llvm::toString(scaffold.capture("second")),
            "InternalError: Object can capture only once. Please file bug.");
  // The first capture stays.
  EXPECT_EQ(*scaffold.get(), "first");
}

} // namespace
