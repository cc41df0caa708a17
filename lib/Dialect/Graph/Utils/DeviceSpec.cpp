//===- DeviceSpec.cpp - TensorFlow device names ---------------------------===//

#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace cleave::graph;
using llvm::StringRef;

static std::optional<int64_t> parseIndex(StringRef text) {
  int64_t value;
  if (text.getAsInteger(10, value) || value < 0)
    return std::nullopt;
  return value;
}

std::optional<DeviceSpec> DeviceSpec::parse(StringRef text) {
  DeviceSpec spec;
  llvm::SmallVector<StringRef> parts;
  text.split(parts, '/', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    llvm::SmallVector<StringRef, 3> fields;
    part.split(fields, ':');
    StringRef key = fields[0];
    if (fields.size() == 2 && key == "job" && !fields[1].empty()) {
      spec.job = fields[1].str();
    } else if (fields.size() == 2 && (key == "replica" || key == "task")) {
      auto index = parseIndex(fields[1]);
      if (!index)
        return std::nullopt;
      (key == "replica" ? spec.replica : spec.task) = index;
    } else if (fields.size() == 3 && key == "device" && !fields[1].empty()) {
      spec.deviceType = fields[1].str();
      if (fields[2] != "*") {
        spec.deviceIndex = parseIndex(fields[2]);
        if (!spec.deviceIndex)
          return std::nullopt;
      }
    } else if (fields.size() == 2 &&
               (key.equals_insensitive("cpu") ||
                key.equals_insensitive("gpu") || key == "TPU")) {
      // The legacy short form: "/cpu:0", "/GPU:1".
      spec.deviceType = key.upper();
      if (fields[1] != "*") {
        spec.deviceIndex = parseIndex(fields[1]);
        if (!spec.deviceIndex)
          return std::nullopt;
      }
    } else if (fields.size() == 2 && key == "device" && !fields[1].empty()) {
      spec.deviceType = fields[1].str(); // "/device:CPU", no index
    } else {
      return std::nullopt;
    }
  }
  return spec;
}

void DeviceSpec::mergeFrom(const DeviceSpec &other) {
  if (other.job)
    job = other.job;
  if (other.replica)
    replica = other.replica;
  if (other.task)
    task = other.task;
  if (other.deviceType)
    deviceType = other.deviceType;
  if (other.deviceIndex)
    deviceIndex = other.deviceIndex;
}

std::string DeviceSpec::str() const {
  std::string text;
  if (job)
    text += "/job:" + *job;
  if (replica)
    text += "/replica:" + std::to_string(*replica);
  if (task)
    text += "/task:" + std::to_string(*task);
  if (deviceType)
    text += "/device:" + *deviceType + ":" +
            (deviceIndex ? std::to_string(*deviceIndex) : std::string("*"));
  return text;
}

int64_t cleave::graph::getRuntimeCPUDevice(StringRef device) {
  std::optional<DeviceSpec> spec = DeviceSpec::parse(device);
  if (spec && spec->deviceType && *spec->deviceType == "CPU" &&
      spec->deviceIndex)
    return *spec->deviceIndex;
  return 0;
}
