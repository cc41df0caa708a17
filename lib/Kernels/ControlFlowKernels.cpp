//===- ControlFlowKernels.cpp - control_flow_ops --------------------------===//
//
// The executor runs the v1 control flow itself (lib/Executor/Executor.cpp):
// Switch and Merge decide which values are dead, and it moves values into
// and out of loop frames. The kernels here only pass the value on.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

/// Enter, Exit, NextIteration, LoopCond: the input, in the frame the
/// executor gives the output.
static LogicalResult passThrough(KernelContext &ctx) {
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

static LogicalResult noOp(KernelContext &) { return success(); }

KernelTable cleave::interp::getControlFlowKernels() {
  return {
      {"NoOp", noOp},
      {"Enter", passThrough},
      {"Exit", passThrough},
      {"NextIteration", passThrough},
      {"LoopCond", passThrough},
  };
}
