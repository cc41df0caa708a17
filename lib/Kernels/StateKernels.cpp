//===- StateKernels.cpp - variables and optimizer updates -----------------===//
//
// Variables live in the interpreter's State and persist across runs. A ref
// variable (VariableV2) is named by its shared_name or node name; a resource
// handle (VarHandleOp) carries that name as its value.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

/// The variable a Ref input refers to (the VariableV2 node feeding it,
/// through Identity-like nodes).
static FailureOr<std::string> refTarget(KernelContext &ctx, unsigned input) {
  Value v = ctx.node.getDataInputs()[input];
  while (auto producer = v.getDefiningOp<graph::NodeOp>()) {
    StringRef op = producer.getOpType();
    if (op == "VariableV2" || op == "Variable")
      return getVariableName(producer);
    if (op != "Identity" && op != "RefIdentity" && op != "Assign" &&
        op != "AssignAdd" && op != "AssignSub")
      break;
    v = producer.getDataInputs()[0];
  }
  return ctx.error() << "input " << input
                     << " is not a reference to a variable", failure();
}

/// A ref variable's output: its value, or an invalid tensor while it is
/// uninitialized (only Assign may consume that; the executor checks).
static LogicalResult variable(KernelContext &ctx) {
  std::string name = getVariableName(ctx.node);
  auto it = ctx.state.variables.find(name);
  ctx.outputs[0] = it == ctx.state.variables.end() ? Tensor() : it->second;
  return success();
}

namespace {
/// Assign, AssignAdd, AssignSub and ApplyGradientDescent on a ref variable.
enum class Update { Assign, Add, Sub, GradientDescent };
} // namespace

/// old + value or old - value (by `sign`), wrapping.
template <typename T> static T wrappingStep(T old, T value, int64_t sign) {
  return sign > 0 ? wrappingAdd(old, value) : wrappingSub(old, value);
}

/// old + sign * alpha * value over floating-point elements, in double as
/// the interpreter has always computed it (one rounding per element).
template <typename T>
static void floatStep(T *next, const T *old, const T *value, int64_t n,
                      double scale) {
  for (int64_t i = 0; i < n; ++i)
    next[i] = T(double(old[i]) + scale * double(value[i]));
}

template <typename T>
static void integerStep(T *next, const T *old, const T *value, int64_t n,
                        int64_t sign) {
  for (int64_t i = 0; i < n; ++i)
    next[i] = wrappingStep(old[i], value[i], sign);
}

/// The variable's next value: old + value, old - value, or
/// old - alpha * value (alpha is input 1 of the Apply ops). Integers are
/// exact and wrap; an unsupported dtype gives an invalid tensor.
static Tensor applyUpdate(Update kind, const Tensor &old, const Tensor &value,
                          const std::vector<Tensor> &inputs) {
  Tensor next = Tensor::uninitialized(old.dtype(), old.shape());
  double alpha =
      kind == Update::GradientDescent ? inputs[1].getAsDouble(0) : 1.0;
  int64_t sign = kind == Update::Add ? 1 : -1;
  int64_t n = next.numElements();
  switch (old.dtype()) {
  case kFloat:
    floatStep(next.data<float>(), old.data<float>(), value.data<float>(), n,
              sign * alpha);
    break;
  case kDouble:
    floatStep(next.data<double>(), old.data<double>(), value.data<double>(),
              n, sign * alpha);
    break;
  // Integers wrap, as TensorFlow's kernels (two's complement).
  case kInt32:
    integerStep(next.data<int32_t>(), old.data<int32_t>(),
                value.data<int32_t>(), n, sign);
    break;
  case kInt64:
    integerStep(next.data<int64_t>(), old.data<int64_t>(),
                value.data<int64_t>(), n, sign);
    break;
  default:
    return Tensor();
  }
  return next;
}

template <Update kind> static LogicalResult updateRef(KernelContext &ctx) {
  FailureOr<std::string> name = refTarget(ctx, 0);
  if (failed(name))
    return failure();
  Tensor &slot = ctx.state.variables[*name];
  const Tensor &value = ctx.inputs[kind == Update::GradientDescent ? 2 : 1];
  if (kind == Update::Assign) {
    bool validate = ctx.getBool("validate_shape").value_or(true);
    if (validate && slot.isValid() && slot.shape() != value.shape())
      return ctx.error() << "Assign requires shapes of both tensors to match";
    slot = value;
    ctx.outputs[0] = slot;
    return success();
  }
  if (!slot.isValid())
    return ctx.error() << "Attempting to use uninitialized value " << *name;
  if (slot.shape() != value.shape() || slot.dtype() != value.dtype())
    return ctx.error() << "the update's shape or dtype does not match the "
                          "variable's";
  Tensor next = applyUpdate(kind, slot, value, ctx.inputs);
  if (!next.isValid())
    return ctx.error() << "unsupported dtype " << dtypeName(slot.dtype());
  slot = next;
  ctx.outputs[0] = slot;
  return success();
}

static LogicalResult varHandle(KernelContext &ctx) {
  Tensor handle(kResource, {});
  handle.strings()[0] = getVariableName(ctx.node);
  ctx.outputs[0] = handle;
  return success();
}

static LogicalResult readVariable(KernelContext &ctx) {
  const std::string &name = ctx.inputs[0].strings()[0];
  auto it = ctx.state.variables.find(name);
  if (it == ctx.state.variables.end())
    return ctx.error() << "Could not find variable " << name
                       << ". This could mean that the variable has been "
                          "deleted or was never initialized.";
  ctx.outputs[0] = it->second;
  return success();
}

template <Update kind> static LogicalResult updateResource(KernelContext &ctx) {
  const std::string &name = ctx.inputs[0].strings()[0];
  Tensor &slot = ctx.state.variables[name];
  const Tensor &value = ctx.inputs[kind == Update::GradientDescent ? 2 : 1];
  if (kind == Update::Assign) {
    slot = value;
    return success();
  }
  if (!slot.isValid())
    return ctx.error() << "Could not find variable " << name;
  if (slot.shape() != value.shape())
    return ctx.error() << "the update's shape does not match the variable's";
  Tensor next = applyUpdate(kind, slot, value, ctx.inputs);
  if (!next.isValid())
    return ctx.error() << "unsupported dtype " << dtypeName(slot.dtype());
  slot = next;
  return success();
}
/// The name of the variable that input `i` refers to: a resource handle's
/// value, or the VariableV2 behind a Ref input.
static FailureOr<std::string> variableInput(KernelContext &ctx, unsigned i) {
  if (ctx.inputs[i].dtype() == kResource)
    return ctx.inputs[i].strings()[0];
  return refTarget(ctx, i);
}

namespace {
/// Momentum and Adam, as training_ops.cc computes them: `slots` are the
/// variable and its accumulators (var, accum) or (var, m, v), the other
/// inputs scalars and the gradient. Updated in double, stored in the
/// variable's dtype.
enum class Optimizer { Momentum, Adam };
} // namespace

/// The variables of inputs 0 .. count-1 (var and the accumulators), each
/// with a value.
static FailureOr<std::vector<Tensor *>> initializedSlots(KernelContext &ctx,
                                                         unsigned count) {
  std::vector<Tensor *> slots;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<std::string> name = variableInput(ctx, i);
    if (failed(name))
      return failure();
    Tensor &slot = ctx.state.variables[*name];
    if (!slot.isValid())
      return ctx.error() << "Attempting to use uninitialized value " << *name,
             failure();
    slots.push_back(&slot);
  }
  return slots;
}

template <Optimizer kind>
static LogicalResult applyOptimizer(KernelContext &ctx) {
  unsigned numSlots = kind == Optimizer::Momentum ? 2 : 3;
  FailureOr<std::vector<Tensor *>> found = initializedSlots(ctx, numSlots);
  if (failed(found))
    return failure();
  std::vector<Tensor *> &slots = *found;
  const Tensor &grad = ctx.inputs[kind == Optimizer::Momentum ? 3 : 9];
  for (Tensor *slot : slots)
    if (slot->shape() != grad.shape())
      return ctx.error() << "var and grad do not have the same shape: "
                         << shapeString(slot->shape()) << " "
                         << shapeString(grad.shape());
  auto scalar = [&](unsigned i) { return ctx.inputs[i].getAsDouble(0); };
  bool nesterov = ctx.getBool("use_nesterov").value_or(false);
  std::vector<Tensor> next;
  for (Tensor *slot : slots)
    next.push_back(Tensor::uninitialized(slot->dtype(), slot->shape()));
  for (Tensor *slot : slots)
    if (slot->dtype() != grad.dtype())
      return ctx.error() << "var and grad do not have the same dtype: "
                         << dtypeName(slot->dtype()) << " "
                         << dtypeName(grad.dtype());
  // Momentum: lr, momentum. Adam: lr * sqrt(1 - beta2^t) / (1 - beta1^t),
  // beta1, beta2, epsilon.
  double lr, momentum = 0, alpha = 0, beta1 = 0, beta2 = 0, epsilon = 0;
  if (kind == Optimizer::Momentum) {
    lr = scalar(2);
    momentum = scalar(4);
  } else {
    lr = scalar(5);
    alpha = lr * std::sqrt(1 - scalar(4)) / (1 - scalar(3));
    beta1 = scalar(6);
    beta2 = scalar(7);
    epsilon = scalar(8);
  }
  // One element: var, then the accumulators, updated in double.
  auto step = [&](double g, double &var, double &first, double &second) {
    if (kind == Optimizer::Momentum) {
      first = first * momentum + g;
      var -= nesterov ? g * lr + first * momentum * lr : lr * first;
    } else {
      first += (g - first) * (1 - beta1);
      second += (g * g - second) * (1 - beta2);
      double direction = nesterov ? first * beta1 + (1 - beta1) * g : first;
      var -= alpha * direction / (std::sqrt(second) + epsilon);
    }
  };
  // Typed loops for float and double (the element-by-element dispatch
  // cost more than the arithmetic on large variables).
  // The pointers are locals and the count hoisted, so the loops vectorize.
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    const T *__restrict g = grad.data<T>();
    const T *__restrict var = slots[0]->data<T>();
    const T *__restrict first = slots[1]->data<T>();
    T *__restrict nextVar = next[0].data<T>();
    T *__restrict nextFirst = next[1].data<T>();
    int64_t n = grad.numElements();
    if constexpr (kind == Optimizer::Momentum) {
      for (int64_t i = 0; i < n; ++i) {
        double v = var[i], a = first[i], unused = 0;
        step(double(g[i]), v, a, unused);
        nextVar[i] = T(v);
        nextFirst[i] = T(a);
      }
    } else {
      const T *__restrict second = slots[2]->data<T>();
      T *__restrict nextSecond = next[2].data<T>();
      for (int64_t i = 0; i < n; ++i) {
        double v = var[i], m = first[i], s = second[i];
        step(double(g[i]), v, m, s);
        nextVar[i] = T(v);
        nextFirst[i] = T(m);
        nextSecond[i] = T(s);
      }
    }
  };
  if (grad.dtype() == kFloat) {
    typed(float());
  } else if (grad.dtype() == kDouble) {
    typed(double());
  } else {
    for (int64_t i = 0; i < grad.numElements(); ++i) {
      double var = slots[0]->getAsDouble(i), first = slots[1]->getAsDouble(i),
             second = numSlots > 2 ? slots[2]->getAsDouble(i) : 0.0;
      step(grad.getAsDouble(i), var, first, second);
      next[1].setFromDouble(i, first);
      if (numSlots > 2)
        next[2].setFromDouble(i, second);
      if (!next[0].setFromDouble(i, var))
        return ctx.error() << "unsupported dtype " << dtypeName(grad.dtype());
    }
  }
  for (unsigned k = 0; k < numSlots; ++k)
    *slots[k] = next[k];
  if (!ctx.outputs.empty()) // the Ref variants output the variable
    ctx.outputs[0] = next[0];
  return success();
}

/// A copy of `t` that does not share its buffer (a tensor copy does).
static Tensor copyOf(const Tensor &t) {
  Tensor copy = Tensor::uninitialized(t.dtype(), t.shape());
  if (t.byteSize())
    std::memcpy(copy.raw(), t.raw(), t.byteSize());
  return copy;
}

/// The rows `indices` name in a variable of `rows` rows: TensorFlow's
/// error for one out of range.
static LogicalResult checkRows(KernelContext &ctx, const Tensor &indices,
                               int64_t rows, bool sparseApply) {
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    int64_t row = indices.getAsInt(i);
    if (row >= 0 && row < rows)
      continue;
    if (sparseApply)
      return ctx.error() << "Index " << row << " at offset " << i
                         << " in indices is out of range";
    return ctx.error() << "indices[" << i << "] = " << row
                       << " is not in [0, " << rows << ")";
  }
  return success();
}

/// ScatterAdd/Sub and their resource forms: each row of `updates` added
/// to (or taken from) the row of the variable its index names; repeated
/// indices add up.
template <bool subtract, bool resource>
static LogicalResult scatterUpdate(KernelContext &ctx) {
  FailureOr<std::string> name = variableInput(ctx, 0);
  if (failed(name))
    return failure();
  Tensor &slot = ctx.state.variables[*name];
  if (!slot.isValid())
    return ctx.error() << (resource ? "Could not find variable "
                                    : "Attempting to use uninitialized value ")
                       << *name;
  const Tensor &indices = ctx.inputs[1], &updates = ctx.inputs[2];
  const std::vector<int64_t> &shape = slot.shape();
  // updates.shape = indices.shape + params.shape[1:], or a scalar.
  std::vector<int64_t> expected = indices.shape();
  if (!shape.empty())
    expected.insert(expected.end(), shape.begin() + 1, shape.end());
  bool scalarUpdate = updates.shape().empty();
  if (shape.empty() || (!scalarUpdate && updates.shape() != expected))
    return ctx.error()
           << "Must have updates.shape = indices.shape + params.shape[1:] or "
              "updates.shape = [], got updates.shape "
           << shapeString(updates.shape()) << ", indices.shape "
           << shapeString(indices.shape()) << ", params.shape "
           << shapeString(shape);
  if (updates.dtype() != slot.dtype())
    return ctx.error() << "the updates' dtype does not match the variable's";
  if (failed(checkRows(ctx, indices, shape[0], false)))
    return failure();
  int64_t rowSize = shape[0] ? slot.numElements() / shape[0] : 0;
  Tensor next = copyOf(slot);
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    int64_t row = indices.getAsInt(i);
    for (int64_t j = 0; j < rowSize; ++j) {
      double u = updates.getAsDouble(scalarUpdate ? 0 : i * rowSize + j);
      int64_t at = row * rowSize + j;
      next.setFromDouble(at, next.getAsDouble(at) + (subtract ? -u : u));
    }
  }
  slot = next;
  if (!ctx.outputs.empty())
    ctx.outputs[0] = slot;
  return success();
}

/// SparseApplyMomentum: Momentum's update on the rows `indices` names,
/// one gradient row each (training_ops.cc; repeated indices apply in turn).
static LogicalResult sparseApplyMomentum(KernelContext &ctx) {
  FailureOr<std::vector<Tensor *>> found = initializedSlots(ctx, 2);
  if (failed(found))
    return failure();
  std::vector<Tensor *> &slots = *found;
  const Tensor &grad = ctx.inputs[3], &indices = ctx.inputs[4];
  const std::vector<int64_t> &shape = slots[0]->shape();
  if (slots[1]->shape() != shape)
    return ctx.error() << "var and accum do not have the same shape"
                       << shapeString(shape) << " "
                       << shapeString(slots[1]->shape());
  if (shape.empty())
    return ctx.error() << "var must be at least 1 dimensional";
  if (indices.shape().size() != 1)
    return ctx.error() << "indices must be one-dimensional";
  if (grad.shape().empty() || grad.shape()[0] != indices.numElements())
    return ctx.error() << "grad must be the same size as indices in the "
                          "first dimension.";
  if (failed(checkRows(ctx, indices, shape[0], true)))
    return failure();
  double lr = ctx.inputs[2].getAsDouble(0);
  double momentum = ctx.inputs[5].getAsDouble(0);
  bool nesterov = ctx.getBool("use_nesterov").value_or(false);
  int64_t rowSize = slots[0]->numElements() / shape[0];
  Tensor var = copyOf(*slots[0]), accum = copyOf(*slots[1]);
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    int64_t row = indices.getAsInt(i);
    for (int64_t j = 0; j < rowSize; ++j) {
      int64_t at = row * rowSize + j;
      double g = grad.getAsDouble(i * rowSize + j);
      double a = accum.getAsDouble(at) * momentum + g;
      double v = var.getAsDouble(at);
      v -= nesterov ? g * lr + a * momentum * lr : lr * a;
      accum.setFromDouble(at, a);
      var.setFromDouble(at, v);
    }
  }
  *slots[0] = var;
  *slots[1] = accum;
  if (!ctx.outputs.empty())
    ctx.outputs[0] = var;
  return success();
}

KernelTable cleave::interp::getStateKernels() {
  return {
      {"VariableV2", variable},
      {"Variable", variable},
      {"Assign", updateRef<Update::Assign>},
      {"AssignAdd", updateRef<Update::Add>},
      {"AssignSub", updateRef<Update::Sub>},
      {"ApplyGradientDescent", updateRef<Update::GradientDescent>},
      {"VarHandleOp", varHandle},
      {"ReadVariableOp", readVariable},
      {"AssignVariableOp", updateResource<Update::Assign>},
      {"AssignAddVariableOp", updateResource<Update::Add>},
      {"AssignSubVariableOp", updateResource<Update::Sub>},
      {"ApplyMomentum", applyOptimizer<Optimizer::Momentum>},
      {"ResourceApplyMomentum", applyOptimizer<Optimizer::Momentum>},
      {"ApplyAdam", applyOptimizer<Optimizer::Adam>},
      {"ResourceApplyAdam", applyOptimizer<Optimizer::Adam>},
      {"ResourceApplyGradientDescent",
       updateResource<Update::GradientDescent>},
      {"ScatterAdd", scatterUpdate<false, false>},
      {"ScatterSub", scatterUpdate<true, false>},
      {"ResourceScatterAdd", scatterUpdate<false, true>},
      {"ResourceScatterSub", scatterUpdate<true, true>},
      {"SparseApplyMomentum", sparseApplyMomentum},
      {"ResourceSparseApplyMomentum", sparseApplyMomentum},
  };
}
