//===- StateLowerings.cpp - variables and optimizer updates ---------------===//
//
// A variable is a value threaded through the function: reads see its value
// at entry or after the last update in node order, updates compute the next
// value with element-wise maps, and the runtime stores the final value
// back. Reference variables (VariableV2) and resource variables
// (VarHandleOp) share the namespace of their shared_name or node name, as in
// the reference interpreter.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

/// VariableV2, VarHandleOp: a name; the value is read where it is used.
template <bool isResource> static LogicalResult variable(NodeLowering &ctx) {
  LoweredValue value;
  value.variable = getVariableName(ctx.node);
  value.dtype = isResource ? int32_t(cleave::kResource)
                           : ctx.getType("dtype").value_or(0);
  ctx.setOutput(0, std::move(value));
  return success();
}

static LogicalResult readVariable(NodeLowering &ctx) {
  FailureOr<LoweredValue> value = ctx.readVariable(0);
  if (failed(value))
    return failure();
  LoweredValue read = *value;
  read.variable.clear();
  ctx.setOutput(0, std::move(read));
  return success();
}

/// Output 0 of the Ref ops: the variable after the update.
static void setRefOutput(NodeLowering &ctx, StringRef name, Value next,
                         int32_t dtype, ArrayRef<int64_t> shape) {
  if (ctx.node.getOutputs().empty())
    return;
  LoweredValue out;
  out.tensor = next;
  out.dtype = dtype;
  out.shape.assign(shape.begin(), shape.end());
  out.variable = name.str();
  ctx.setOutput(0, std::move(out));
}

/// Assign and AssignVariableOp: the value becomes the variable.
static LogicalResult assign(NodeLowering &ctx) {
  const std::string &name = ctx.input(0).variable;
  if (name.empty())
    return ctx.error() << "input 0 is not a reference to a variable";
  bool validate = ctx.getBool("validate_shape").value_or(true) &&
                  ctx.input(0).dtype != cleave::kResource;
  if (validate) {
    if (std::optional<TensorSpec> current = ctx.variableSpec(name);
        current && current->shape != ctx.shape(1))
      return ctx.error() << "Assign requires shapes of both tensors to match. "
                            "lhs shape= "
                         << cleave::shapeString(current->shape)
                         << " rhs shape= " << cleave::shapeString(ctx.shape(1));
  }
  Value value = ctx.tensor(1);
  ctx.writeVariable(name, value, ctx.dtype(1), ctx.shape(1));
  setRefOutput(ctx, name, value, ctx.dtype(1), ctx.shape(1));
  return success();
}

/// The variable's current value, checked against the update's shape.
static FailureOr<LoweredValue>
updatedVariable(NodeLowering &ctx, unsigned input,
                const std::vector<int64_t> &shape) {
  FailureOr<LoweredValue> current = ctx.readVariable(input);
  if (failed(current))
    return failure();
  if (current->shape != shape)
    return ctx.error() << "var and grad do not have the same shape: "
                       << cleave::shapeString(current->shape) << " "
                       << cleave::shapeString(shape),
           failure();
  return current;
}

/// AssignAdd/AssignSub and their resource forms: var +/-= value.
template <bool isAdd> static LogicalResult assignUpdate(NodeLowering &ctx) {
  FailureOr<LoweredValue> current = updatedVariable(ctx, 0, ctx.shape(1));
  if (failed(current))
    return failure();
  int32_t dtype = current->dtype;
  bool isFloat = isFloatDType(dtype);
  Value next = ctx.map({current->tensor, ctx.tensor(1)}, current->shape, dtype,
                       [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                         if (isFloat)
                           return isAdd ? b.create<arith::AddFOp>(loc, args[0],
                                                                  args[1])
                                              .getResult()
                                        : b.create<arith::SubFOp>(loc, args[0],
                                                                  args[1])
                                              .getResult();
                         return isAdd ? b.create<arith::AddIOp>(loc, args[0],
                                                                args[1])
                                            .getResult()
                                      : b.create<arith::SubIOp>(loc, args[0],
                                                                args[1])
                                            .getResult();
                       });
  ctx.writeVariable(current->variable, next, dtype, current->shape);
  setRefOutput(ctx, current->variable, next, dtype, current->shape);
  return success();
}

/// ApplyGradientDescent(var, alpha, delta): var -= alpha * delta.
static LogicalResult applyGradientDescent(NodeLowering &ctx) {
  FailureOr<LoweredValue> var = updatedVariable(ctx, 0, ctx.shape(2));
  if (failed(var))
    return failure();
  int32_t dtype = var->dtype;
  if (!isFloatDType(dtype))
    return ctx.error() << "unsupported dtype " << cleave::dtypeName(dtype);
  Value next = ctx.map({var->tensor, ctx.tensor(1), ctx.tensor(2)}, var->shape,
                       dtype, [](OpBuilder &b, Location loc, ValueRange args) {
                         Value step =
                             b.create<arith::MulFOp>(loc, args[1], args[2]);
                         return b.create<arith::SubFOp>(loc, args[0], step)
                             .getResult();
                       });
  ctx.writeVariable(var->variable, next, dtype, var->shape);
  setRefOutput(ctx, var->variable, next, dtype, var->shape);
  return success();
}

/// ApplyMomentum(var, accum, lr, grad, momentum):
///   accum = accum * momentum + grad
///   var -= lr * accum   (nesterov: var -= grad * lr + accum * momentum * lr)
static LogicalResult applyMomentum(NodeLowering &ctx) {
  const std::vector<int64_t> &shape = ctx.shape(3);
  FailureOr<LoweredValue> var = updatedVariable(ctx, 0, shape);
  FailureOr<LoweredValue> accum =
      failed(var) ? var : updatedVariable(ctx, 1, shape);
  if (failed(accum))
    return failure();
  int32_t dtype = var->dtype;
  if (!isFloatDType(dtype))
    return ctx.error() << "unsupported dtype " << cleave::dtypeName(dtype);
  bool nesterov = ctx.getBool("use_nesterov").value_or(false);
  Value lr = ctx.tensor(2), grad = ctx.tensor(3), momentum = ctx.tensor(4);
  Value nextAccum = ctx.map(
      {accum->tensor, momentum, grad}, shape, dtype,
      [](OpBuilder &b, Location loc, ValueRange args) {
        return b
            .create<arith::AddFOp>(
                loc, b.create<arith::MulFOp>(loc, args[0], args[1]), args[2])
            .getResult();
      });
  Value nextVar = ctx.map(
      {var->tensor, nextAccum, lr, grad, momentum}, shape, dtype,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value step;
        if (nesterov) {
          Value g = b.create<arith::MulFOp>(loc, args[3], args[2]);
          Value a = b.create<arith::MulFOp>(
              loc, b.create<arith::MulFOp>(loc, args[1], args[4]), args[2]);
          step = b.create<arith::AddFOp>(loc, g, a);
        } else {
          step = b.create<arith::MulFOp>(loc, args[2], args[1]);
        }
        return b.create<arith::SubFOp>(loc, args[0], step).getResult();
      });
  ctx.writeVariable(accum->variable, nextAccum, dtype, shape);
  ctx.writeVariable(var->variable, nextVar, dtype, shape);
  setRefOutput(ctx, var->variable, nextVar, dtype, shape);
  return success();
}

/// ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
/// grad), as training_ops.cc:
///   alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
///   m += (grad - m) * (1 - beta1);  v += (grad^2 - v) * (1 - beta2)
///   var -= alpha * m / (sqrt(v) + epsilon)
static LogicalResult applyAdam(NodeLowering &ctx) {
  const std::vector<int64_t> &shape = ctx.shape(9);
  FailureOr<LoweredValue> var = updatedVariable(ctx, 0, shape);
  FailureOr<LoweredValue> m = failed(var) ? var : updatedVariable(ctx, 1, shape);
  FailureOr<LoweredValue> v = failed(m) ? m : updatedVariable(ctx, 2, shape);
  if (failed(v))
    return failure();
  int32_t dtype = var->dtype;
  if (!isFloatDType(dtype))
    return ctx.error() << "unsupported dtype " << cleave::dtypeName(dtype);
  bool nesterov = ctx.getBool("use_nesterov").value_or(false);
  Type type = ctx.elementType(dtype);
  Value grad = ctx.tensor(9);
  auto oneMinus = [&](OpBuilder &b, Location loc, Value x) {
    Value one = b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 1));
    return b.create<arith::SubFOp>(loc, one, x).getResult();
  };
  Value nextM = ctx.map(
      {m->tensor, grad, ctx.tensor(6)}, shape, dtype,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value delta = b.create<arith::SubFOp>(loc, args[1], args[0]);
        return b
            .create<arith::AddFOp>(
                loc, args[0],
                b.create<arith::MulFOp>(loc, delta, oneMinus(b, loc, args[2])))
            .getResult();
      });
  Value nextV = ctx.map(
      {v->tensor, grad, ctx.tensor(7)}, shape, dtype,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value g2 = b.create<arith::MulFOp>(loc, args[1], args[1]);
        Value delta = b.create<arith::SubFOp>(loc, g2, args[0]);
        return b
            .create<arith::AddFOp>(
                loc, args[0],
                b.create<arith::MulFOp>(loc, delta, oneMinus(b, loc, args[2])))
            .getResult();
      });
  Value nextVar = ctx.map(
      {var->tensor, nextM, nextV, ctx.tensor(3), ctx.tensor(4), ctx.tensor(5),
       ctx.tensor(6), ctx.tensor(8), grad},
      shape, dtype, [&](OpBuilder &b, Location loc, ValueRange args) {
        Value beta1Power = args[3], beta2Power = args[4], lr = args[5],
              beta1 = args[6], epsilon = args[7], g = args[8];
        Value alpha = b.create<arith::DivFOp>(
            loc,
            b.create<arith::MulFOp>(
                loc, lr,
                b.create<math::SqrtOp>(loc, oneMinus(b, loc, beta2Power))),
            oneMinus(b, loc, beta1Power));
        Value step = args[1];
        if (nesterov)
          step = b.create<arith::AddFOp>(
              loc, b.create<arith::MulFOp>(loc, args[1], beta1),
              b.create<arith::MulFOp>(loc, oneMinus(b, loc, beta1), g));
        Value denom = b.create<arith::AddFOp>(
            loc, b.create<math::SqrtOp>(loc, args[2]), epsilon);
        Value update = b.create<arith::DivFOp>(
            loc, b.create<arith::MulFOp>(loc, alpha, step), denom);
        return b.create<arith::SubFOp>(loc, args[0], update).getResult();
      });
  ctx.writeVariable(m->variable, nextM, dtype, shape);
  ctx.writeVariable(v->variable, nextV, dtype, shape);
  ctx.writeVariable(var->variable, nextVar, dtype, shape);
  setRefOutput(ctx, var->variable, nextVar, dtype, shape);
  return success();
}

LoweringTable cleave::conversion::getStateLowerings() {
  return {
      {"VariableV2", variable<false>},
      {"Variable", variable<false>},
      {"VarHandleOp", variable<true>},
      {"ReadVariableOp", readVariable},
      {"Assign", assign},
      {"AssignVariableOp", assign},
      {"AssignAdd", assignUpdate<true>},
      {"AssignSub", assignUpdate<false>},
      {"AssignAddVariableOp", assignUpdate<true>},
      {"AssignSubVariableOp", assignUpdate<false>},
      {"ApplyGradientDescent", applyGradientDescent},
      {"ResourceApplyGradientDescent", applyGradientDescent},
      {"ApplyMomentum", applyMomentum},
      {"ResourceApplyMomentum", applyMomentum},
      {"ApplyAdam", applyAdam},
      {"ResourceApplyAdam", applyAdam},
  };
}
