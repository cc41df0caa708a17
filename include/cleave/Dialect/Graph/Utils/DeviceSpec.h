//===- DeviceSpec.h - TensorFlow device names -------------------*- C++ -*-===//
//
// A node's `device` field as TensorFlow's DeviceSpec reads and writes it:
// "/job:worker/replica:0/task:1/device:CPU:0", with any part left out, and
// the short forms "/cpu:0" and "/CPU:0". Device setters merge specs field
// by field (the node's own fields win), so passes that place nodes do too.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_DEVICESPEC_H
#define CLEAVE_DIALECT_GRAPH_UTILS_DEVICESPEC_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace cleave::graph {

struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int64_t> replica, task;
  std::optional<std::string> deviceType; ///< "CPU", "GPU", "TPU", ...
  std::optional<int64_t> deviceIndex;    ///< unset for "*" or absent

  /// Parses a device string; fails (empty) on text TensorFlow's
  /// DeviceSpec.from_string rejects. "" is the empty spec.
  static std::optional<DeviceSpec> parse(llvm::StringRef text);

  /// DeviceSpec.merge_from: every field `other` sets overrides this one's.
  void mergeFrom(const DeviceSpec &other);

  /// DeviceSpec.to_string: "/job:j/replica:r/task:t/device:TYPE:i", with
  /// the parts that are set.
  std::string str() const;
};

/// The virtual CPU device (graph-run --devices) that runs a node with this
/// `device` field: `/device:CPU:<k>` (of any job, replica and task) is k;
/// no device, another device type or a name that does not parse is CPU 0,
/// where soft placement puts what has no kernel elsewhere.
int64_t getRuntimeCPUDevice(llvm::StringRef device);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_UTILS_DEVICESPEC_H
