//===- TensorNames.cpp - "node:port" tensor names -------------------------===//

#include "cleave/Dialect/Graph/Utils/TensorNames.h"

std::pair<llvm::StringRef, unsigned>
cleave::graph::splitTensorName(llvm::StringRef name) {
  auto [head, tail] = name.rsplit(':');
  unsigned port;
  if (!tail.empty() && !head.empty() && !tail.getAsInteger(10, port))
    return {head, port};
  return {name, 0};
}
