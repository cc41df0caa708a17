//===- ControlFlowLowerings.cpp - control_flow_ops to linalg --------------===//
//
// Compiled clusters hold functional control flow only (If, While, calls:
// FunctionalLowerings.cpp); the v1 loop and switch ops are functionalized
// or stay outside clusters. What remains is NoOp, which orders nodes
// through control edges and computes nothing.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

static LogicalResult noOp(NodeLowering &) { return success(); }

LoweringTable cleave::conversion::getControlFlowLowerings() {
  return {
      {"NoOp", noOp},
  };
}
