//===- ControlFlowOps.cpp - dataflow control op signatures ----------------===//
//
// TensorFlow v1 control flow (control_flow_ops.cc), NoOp (no_op.cc) and the
// cross-device transfers that graph partitioning inserts (sendrecv_ops.cc).
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

// _Send/_Recv and their host-memory variants share one set of attrs.
static OpTableEntry send(const char *name) {
  return {name,
          {"tensor: T"},
          {},
          {"T: type", "tensor_name: string", "send_device: string",
           "send_device_incarnation: int", "recv_device: string",
           "client_terminated: bool = false"},
          /*isStateful=*/true};
}

static OpTableEntry recv(const char *name) {
  return {name,
          {},
          {"tensor: tensor_type"},
          {"tensor_type: type", "tensor_name: string", "send_device: string",
           "send_device_incarnation: int", "recv_device: string",
           "client_terminated: bool = false"},
          /*isStateful=*/true};
}

OpTable cleave::ops::detail::getControlFlowOps() {
  return {
      {"NoOp", {}, {}, {}},
      {"ControlTrigger", {}, {}, {}},
      {"Switch",
       {"data: T", "pred: bool"},
       {"output_false: T", "output_true: T"},
       {"T: type"}},
      {"RefSwitch",
       {"data: Ref(T)", "pred: bool"},
       {"output_false: Ref(T)", "output_true: Ref(T)"},
       {"T: type"}},
      {"Merge",
       {"inputs: N * T"},
       {"output: T", "value_index: int32"},
       {"T: type", "N: int >= 1"}},
      {"Enter",
       {"data: T"},
       {"output: T"},
       {"T: type", "frame_name: string", "is_constant: bool = false",
        "parallel_iterations: int = 10"}},
      {"Exit", {"data: T"}, {"output: T"}, {"T: type"}},
      {"NextIteration", {"data: T"}, {"output: T"}, {"T: type"}},
      {"LoopCond", {"input: bool"}, {"output: bool"}, {}},

      send("_Send"),
      recv("_Recv"),
      send("_HostSend"),
      recv("_HostRecv"),
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// Merge: the shape its inputs agree on (unknown dims where they differ),
/// and a scalar value_index.
static std::string mergeShape(InferenceContext &ctx) {
  Shape out = ctx.getNumInputs() ? ctx.getInputShape(0) : Shape::unknown();
  for (unsigned i = 1; i < ctx.getNumInputs(); ++i)
    out = relaxShapes(out, ctx.getInputShape(i));
  ctx.setOutput(0, out);
  ctx.setOutput(1, Shape::scalar());
  return "";
}

detail::ShapeFnTable cleave::ops::detail::getControlFlowShapeFns() {
  return {
      {"Switch", shapes::unchanged},
      {"RefSwitch", shapes::unchanged},
      {"Merge", mergeShape},
      {"Enter", shapes::unchanged},
      {"Exit", shapes::unchanged},
      {"NextIteration", shapes::unchanged},
      {"LoopCond", shapes::unchanged},
      {"NoOp", shapes::none},
      {"ControlTrigger", shapes::none},
  };
}

//===----------------------------------------------------------------------===//
// Gradients (control_flow_grad.py), for conditionals; loops have none yet
//===----------------------------------------------------------------------===//

/// Switch(data, pred): the branch that ran carries the gradient; a Merge of
/// both outputs' gradients forwards it (the other one is dead).
static std::string switchGrad(GradientContext &ctx) {
  auto merged = ctx.addNode(
      "Merge", {ctx.getOutputGrad(0), ctx.getOutputGrad(1)}, {}, "cond_grad");
  if (!merged.empty())
    ctx.setInputGrad(0, merged[0]);
  return "";
}

/// Merge: input i's gradient is the output's, routed through a Switch on
/// value_index == i (TensorFlow's rule outside a cond context).
static std::string mergeGrad(GradientContext &ctx) {
  GradTensor valueIndex = ctx.getOutput(1);
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    GradTensor taken =
        ctx.op("Equal", {valueIndex, ctx.scalar(i, grads::kInt32, "Equal/y")});
    auto routed = ctx.addNode("Switch", {ctx.getOutputGrad(0), taken});
    if (routed.size() == 2)
      ctx.setInputGrad(i, routed[1]);
  }
  return "";
}

detail::GradFnTable cleave::ops::detail::getControlFlowGradFns() {
  return {
      {"Switch", switchGrad}, {"RefSwitch", switchGrad}, {"Merge", mergeGrad}};
}
