//===- StateOps.cpp - variable and optimizer op signatures ----------------===//
//
// Ops from TensorFlow's state_ops.cc (ref variables), resource_variable_ops.cc
// and training_ops.cc. Ops taking a `resource` argument are stateful through
// the parser's resource rule, as in TensorFlow; ref-based updates (Assign,
// Apply*) are not stateful in TensorFlow and are flagged by their Ref args.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

OpTable cleave::ops::detail::getStateOps() {
  return {
      // Ref variables.
      {"VariableV2",
       {},
       {"ref: Ref(dtype)"},
       {"shape: shape", "dtype: type", "container: string = ''",
        "shared_name: string = ''"},
       /*isStateful=*/true},
      {"Variable",
       {},
       {"ref: Ref(dtype)"},
       {"shape: shape", "dtype: type", "container: string = ''",
        "shared_name: string = ''"},
       /*isStateful=*/true},
      {"IsVariableInitialized",
       {"ref: Ref(dtype)"},
       {"is_initialized: bool"},
       {"dtype: type"}},
      {"Assign",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: type", "validate_shape: bool = true", "use_locking: bool = true"}},
      {"AssignAdd",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: numbertype", "use_locking: bool = false"}},
      {"AssignSub",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: numbertype", "use_locking: bool = false"}},

      // Resource variables.
      {"VarHandleOp",
       {},
       {"resource: resource"},
       {"container: string = ''", "shared_name: string = ''",
        "debug_name: string = ''", "dtype: type", "shape: shape",
        "allowed_devices: list(string) = []"},
       /*isStateful=*/true},
      {"ReadVariableOp",
       {"resource: resource"},
       {"value: dtype"},
       {"dtype: type"}},
      {"AssignVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type", "validate_shape: bool = false"}},
      {"AssignAddVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type"}},
      {"AssignSubVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type"}},
      {"VarIsInitializedOp",
       {"resource: resource"},
       {"is_initialized: bool"},
       {}},
      {"DestroyResourceOp",
       {"resource: resource"},
       {},
       {"ignore_lookup_error: bool = true"},
       /*isStateful=*/true},
      {"ResourceGather",
       {"resource: resource", "indices: Tindices"},
       {"output: dtype"},
       {"batch_dims: int = 0", "validate_indices: bool = true", "dtype: type",
        "Tindices: {int32, int64}"}},

      // Optimizer updates (training_ops.cc).
      {"ApplyGradientDescent",
       {"var: Ref(T)", "alpha: T", "delta: T"},
       {"out: Ref(T)"},
       {"T: numbertype", "use_locking: bool = false"}},
      {"ResourceApplyGradientDescent",
       {"var: resource", "alpha: T", "delta: T"},
       {},
       {"T: numbertype", "use_locking: bool = false"}},
      {"ApplyMomentum",
       {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "momentum: T"},
       {"out: Ref(T)"},
       {"T: numbertype", "use_locking: bool = false",
        "use_nesterov: bool = false"}},
      {"ResourceApplyMomentum",
       {"var: resource", "accum: resource", "lr: T", "grad: T", "momentum: T"},
       {},
       {"T: numbertype", "use_locking: bool = false",
        "use_nesterov: bool = false"}},
      {"ApplyAdam",
       {"var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T",
        "beta2_power: T", "lr: T", "beta1: T", "beta2: T", "epsilon: T",
        "grad: T"},
       {"out: Ref(T)"},
       {"T: numbertype", "use_locking: bool = false",
        "use_nesterov: bool = false"}},
      {"ResourceApplyAdam",
       {"var: resource", "m: resource", "v: resource", "beta1_power: T",
        "beta2_power: T", "lr: T", "beta1: T", "beta2: T", "epsilon: T",
        "grad: T"},
       {},
       {"T: numbertype", "use_locking: bool = false",
        "use_nesterov: bool = false"}},

      // Sparse updates (state_ops.cc, resource_variable_ops.cc,
      // training_ops.cc): rows of the variable at `indices`, as an
      // IndexedSlices gradient updates it.
      {"ScatterAdd",
       {"ref: Ref(T)", "indices: Tindices", "updates: T"},
       {"output_ref: Ref(T)"},
       {"T: numbertype", "Tindices: {int32, int64}",
        "use_locking: bool = false"}},
      {"ScatterSub",
       {"ref: Ref(T)", "indices: Tindices", "updates: T"},
       {"output_ref: Ref(T)"},
       {"T: numbertype", "Tindices: {int32, int64}",
        "use_locking: bool = false"}},
      {"ResourceScatterAdd",
       {"resource: resource", "indices: Tindices", "updates: dtype"},
       {},
       {"dtype: numbertype", "Tindices: {int32, int64}"}},
      {"ResourceScatterSub",
       {"resource: resource", "indices: Tindices", "updates: dtype"},
       {},
       {"dtype: numbertype", "Tindices: {int32, int64}"}},
      {"SparseApplyMomentum",
       {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T",
        "indices: Tindices", "momentum: T"},
       {"out: Ref(T)"},
       {"T: numbertype", "Tindices: {int32, int64}",
        "use_locking: bool = false", "use_nesterov: bool = false"}},
      {"ResourceSparseApplyMomentum",
       {"var: resource", "accum: resource", "lr: T", "grad: T",
        "indices: Tindices", "momentum: T"},
       {},
       {"T: numbertype", "Tindices: {int32, int64}",
        "use_locking: bool = false", "use_nesterov: bool = false"}},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// ReadVariableOp / ResourceGather: from the variable's declared shape.
static std::string readVariableShape(InferenceContext &ctx) {
  ctx.setOutput(0, ctx.getResourceShape(0));
  return "";
}

detail::ShapeFnTable cleave::ops::detail::getStateShapeFns() {
  return {
      {"ReadVariableOp", readVariableShape},
      {"VariableV2", shapes::fromShapeAttr},
      {"Variable", shapes::fromShapeAttr},
      {"IsVariableInitialized", shapes::scalar},
      {"Assign", shapes::unchanged},
      {"AssignAdd", shapes::unchanged},
      {"AssignSub", shapes::unchanged},
      {"VarHandleOp", shapes::scalar},
      {"VarIsInitializedOp", shapes::scalar},
      {"AssignVariableOp", shapes::none},
      {"AssignAddVariableOp", shapes::none},
      {"AssignSubVariableOp", shapes::none},
      {"ApplyGradientDescent", shapes::unchanged},
      {"ApplyMomentum", shapes::unchanged},
      {"ApplyAdam", shapes::unchanged},
      {"ResourceApplyGradientDescent", shapes::none},
      {"ResourceApplyMomentum", shapes::none},
      {"ResourceApplyAdam", shapes::none},
      {"ScatterAdd", shapes::unchanged},
      {"ScatterSub", shapes::unchanged},
      {"ResourceScatterAdd", shapes::none},
      {"ResourceScatterSub", shapes::none},
      {"SparseApplyMomentum", shapes::unchanged},
      {"ResourceSparseApplyMomentum", shapes::none},
  };
}

//===----------------------------------------------------------------------===//
// Gradients (resource_variable_ops.py)
//===----------------------------------------------------------------------===//

/// A read's gradient is the gradient of the variable (its handle).
static std::string readVariableGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.getOutputGrad(0));
  return "";
}

detail::GradFnTable cleave::ops::detail::getStateGradFns() {
  return {{"ReadVariableOp", readVariableGrad}};
}
