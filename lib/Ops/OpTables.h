//===- OpTables.h - per-family op tables ------------------------*- C++ -*-===//
//
// Private to CleaveOps. Each family file returns its ops as REGISTER_OP-style
// spec strings; OpRegistry.cpp parses them once into OpSpecs. Arg names, arg
// order, attr names and defaults must match TensorFlow exactly: FunctionDef
// bodies name outputs as "node:output_arg_name:index" and GraphDefs omit
// attrs that equal their defaults.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_OPS_OPTABLES_H
#define CLEAVE_LIB_OPS_OPTABLES_H

#include "cleave/Ops/GradientRules.h"
#include "cleave/Ops/OpRegistry.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace cleave::ops::detail {

/// One op as written in a table, e.g.
///   {"AddV2", {"x: T", "y: T"}, {"z: T"}, {"T: {half, float}"}, false}
/// `isStateful` mirrors SetIsStateful() / SetDoNotOptimize() in TensorFlow's
/// registration; the parser adds the implicit rule for resource arguments.
struct OpTableEntry {
  llvm::StringRef name;
  std::vector<llvm::StringRef> inputs;
  std::vector<llvm::StringRef> outputs;
  std::vector<llvm::StringRef> attrs;
  bool isStateful = false;
};

using OpTable = std::vector<OpTableEntry>;

OpTable getArrayOps();       // array_ops.cc
OpTable getMathOps();        // math_ops.cc
OpTable getNNOps();          // nn_ops.cc
OpTable getStateOps();       // state_ops, resource_variable_ops, training
OpTable getControlFlowOps(); // control_flow_ops, no_op, sendrecv_ops
OpTable getFunctionalOps();  // functional_ops, function_ops
OpTable getRandomOps();      // random_ops, stateless_random_ops(_v2)
OpTable getHostOps();        // logging_ops, string_ops, summary
OpTable getTPUOps();         // tpu_replication_ops, tpu_infeed/outfeed
OpTable getDataOps();        // data_flow, list, lookup, dataset, parsing
OpTable getIOOps();          // io_ops: checkpoints

/// Ops whose device support differs from their family's default
/// (DeviceSupport.cpp): host-only ops of device families, and device ops of
/// host families.
std::vector<llvm::StringRef> getDeviceSupportExceptions();

/// (op type, gradient rule) pairs, one table per family file, and the ops
/// each family declares not differentiable.
using GradFnTable = std::vector<std::pair<llvm::StringRef, GradFn>>;
GradFnTable getMathGradFns();
GradFnTable getNNGradFns();
GradFnTable getArrayGradFns();
GradFnTable getStateGradFns();
GradFnTable getControlFlowGradFns();
GradFnTable getHostGradFns();
GradFnTable getTPUGradFns();
GradFnTable getDataGradFns();
std::vector<llvm::StringRef> getNotDifferentiableOps();

/// Helpers the family files' gradient rules share (Gradients.cpp).
namespace grads {
/// TensorFlow's DataType values the rules name.
enum : int32_t { kFloat = 1, kDouble = 2, kInt32 = 3, kInt64 = 9, kBool = 10 };
/// The shapes of inputs 0 and 1 and their BroadcastGradientArgs.
struct BroadcastArgs {
  GradTensor sx, sy, rx, ry;
};
BroadcastArgs broadcastArgs(GradientContext &ctx);
/// Reshape(Sum(grad, axes), shape): a broadcast operand's gradient.
GradTensor sumToShape(GradientContext &ctx, GradTensor grad, GradTensor axes,
                      GradTensor shape);
} // namespace grads

/// Parses one table entry. Fails with a message naming the op and the
/// offending spec; the registry turns that into a fatal error, tests can
/// check it directly.
llvm::Expected<OpSpec> parseOpTableEntry(const OpTableEntry &entry);

} // namespace cleave::ops::detail

#endif // CLEAVE_LIB_OPS_OPTABLES_H
