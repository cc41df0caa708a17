//===- TensorNames.h - "node:port" tensor names -----------------*- C++ -*-===//
//
// How feeds, fetches and pass options name a node's output, as TensorFlow's
// ParseTensorName: "node:1", or "node" for output 0.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_TENSORNAMES_H
#define CLEAVE_DIALECT_GRAPH_UTILS_TENSORNAMES_H

#include "llvm/ADT/StringRef.h"

#include <utility>

namespace cleave::graph {

/// Splits "node:port" into the node's name and the port; a name without a
/// numeric port after its last ':' is the whole node name, port 0.
std::pair<llvm::StringRef, unsigned> splitTensorName(llvm::StringRef name);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_UTILS_TENSORNAMES_H
