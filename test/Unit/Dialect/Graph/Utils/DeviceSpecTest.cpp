//===- DeviceSpecTest.cpp - TensorFlow device names -----------------------===//
//
// DeviceSpec against what TensorFlow's DeviceSpec.from_string, merge_from
// and to_string give for the same strings.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"

#include <gtest/gtest.h>

using cleave::graph::DeviceSpec;

namespace {

std::string roundTrip(llvm::StringRef text) {
  std::optional<DeviceSpec> spec = DeviceSpec::parse(text);
  return spec ? spec->str() : "<invalid>";
}

TEST(DeviceSpecTest, ParsesFullAndShortForms) {
  EXPECT_EQ(roundTrip("/job:worker/replica:0/task:1/device:CPU:0"),
            "/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(roundTrip("/device:CPU:3"), "/device:CPU:3");
  // The legacy short forms name the same devices.
  EXPECT_EQ(roundTrip("/CPU:0"), "/device:CPU:0");
  EXPECT_EQ(roundTrip("/cpu:1"), "/device:CPU:1");
  EXPECT_EQ(roundTrip("/gpu:2"), "/device:GPU:2");
  EXPECT_EQ(roundTrip("/device:GPU:*"), "/device:GPU:*");
  EXPECT_EQ(roundTrip("/job:ps"), "/job:ps");
  EXPECT_EQ(roundTrip(""), "");
}

TEST(DeviceSpecTest, RejectsMalformedNames) {
  for (const char *text : {"CPU-zero", "/device:CPU:x", "/replica:a",
                           "/task:-1", "/job:", "/device::0", "/cpu:0:1"})
    EXPECT_FALSE(DeviceSpec::parse(text).has_value()) << text;
}

TEST(DeviceSpecTest, MergeLetsTheOtherSpecsFieldsWin) {
  // A device setter: the worker device, with the node's own fields on top.
  DeviceSpec worker = *DeviceSpec::parse("/job:worker/task:0/device:CPU:1");
  worker.mergeFrom(*DeviceSpec::parse("/device:CPU:3"));
  EXPECT_EQ(worker.str(), "/job:worker/task:0/device:CPU:3");

  DeviceSpec ps = *DeviceSpec::parse("/device:CPU:0");
  ps.mergeFrom(*DeviceSpec::parse("/job:ps/task:2"));
  EXPECT_EQ(ps.str(), "/job:ps/task:2/device:CPU:0");

  // A type without an index keeps the index it had.
  DeviceSpec typed = *DeviceSpec::parse("/device:CPU:2");
  typed.mergeFrom(*DeviceSpec::parse("/device:GPU:*"));
  EXPECT_EQ(typed.str(), "/device:GPU:2");

  DeviceSpec empty;
  empty.mergeFrom(DeviceSpec());
  EXPECT_EQ(empty.str(), "");
}

} // namespace
