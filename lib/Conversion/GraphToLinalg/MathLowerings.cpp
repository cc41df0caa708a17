//===- MathLowerings.cpp - math ops to linalg -----------------------------===//
//
// Element-wise ops become one linalg.generic each (broadcast operands read
// through their indexing maps, never materialized), reductions a generic
// with reduction iterators, matrix products linalg.matmul and its
// transposed forms. Element semantics follow the reference kernels; where
// those fail at run time (integer division by zero, a negative integer
// power) compiled code gives XLA's values instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Ops/Einsum.h"
#include "cleave/Ops/ElementwiseOps.h"
#include "cleave/Ops/SegmentChecks.h"
#include "cleave/Ops/ShapeInference.h"
#include "cleave/Support/SpecialFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

namespace {
/// Scalar arithmetic on one element type, as the kernels compute it.
struct Arith {
  OpBuilder &b;
  Location loc;
  int32_t dtype;
  Type type;

  Arith(OpBuilder &b, Location loc, int32_t dtype, Type type)
      : b(b), loc(loc), dtype(dtype), type(type) {}

  bool isFloat() const { return isFloatDType(dtype); }
  bool isUnsigned() const { return isUnsignedDType(dtype); }

  Value c(double v) {
    if (isFloat())
      return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, v));
    return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, int64_t(v)));
  }
  Value add(Value x, Value y) {
    return isFloat() ? b.create<arith::AddFOp>(loc, x, y).getResult()
                     : b.create<arith::AddIOp>(loc, x, y).getResult();
  }
  Value sub(Value x, Value y) {
    return isFloat() ? b.create<arith::SubFOp>(loc, x, y).getResult()
                     : b.create<arith::SubIOp>(loc, x, y).getResult();
  }
  Value mul(Value x, Value y) {
    return isFloat() ? b.create<arith::MulFOp>(loc, x, y).getResult()
                     : b.create<arith::MulIOp>(loc, x, y).getResult();
  }
  Value fdiv(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y);
  }
  Value cmp(arith::CmpFPredicate f, arith::CmpIPredicate s,
            arith::CmpIPredicate u, Value x, Value y) {
    if (isFloat())
      return b.create<arith::CmpFOp>(loc, f, x, y);
    if (type.isInteger(1) || isUnsigned())
      return b.create<arith::CmpIOp>(loc, u, x, y);
    return b.create<arith::CmpIOp>(loc, s, x, y);
  }
  Value lt(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
               arith::CmpIPredicate::ult, x, y);
  }
  Value gt(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
               arith::CmpIPredicate::ugt, x, y);
  }
  Value eq(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
               arith::CmpIPredicate::eq, x, y);
  }
  Value max(Value x, Value y) { return select(gt(x, y), x, y); }
  Value min(Value x, Value y) { return select(lt(x, y), x, y); }

  /// Integer division and remainder that never trap: by zero gives -1 (and
  /// x for the remainder), INT_MIN / -1 gives INT_MIN, as in XLA.
  Value safeDivisor(Value x, Value y, Value &isZero, Value &overflows) {
    isZero = eq(y, c(0));
    overflows = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
    if (!isUnsigned()) {
      APInt minValue = APInt::getSignedMinValue(type.getIntOrFloatBitWidth());
      Value minConst = b.create<arith::ConstantOp>(
          loc, b.getIntegerAttr(type, minValue));
      overflows = b.create<arith::AndIOp>(loc, eq(x, minConst), eq(y, c(-1)));
    }
    Value unsafe = b.create<arith::OrIOp>(loc, isZero, overflows);
    return select(unsafe, c(1), y);
  }
  Value idiv(Value x, Value y, bool floor) {
    Value isZero, overflows;
    Value divisor = safeDivisor(x, y, isZero, overflows);
    Value q;
    if (isUnsigned())
      q = b.create<arith::DivUIOp>(loc, x, divisor);
    else
      q = b.create<arith::DivSIOp>(loc, x, divisor);
    if (floor && !isUnsigned()) {
      // Round towards negative infinity: one less where the division was
      // inexact and the signs differ. (arith.floordivsi has no LLVM
      // lowering without arith-expand.)
      Value r = b.create<arith::RemSIOp>(loc, x, divisor);
      Value inexact = b.create<arith::XOrIOp>(
          loc, eq(r, c(0)),
          b.create<arith::ConstantOp>(loc, b.getBoolAttr(true)));
      Value signsDiffer =
          b.create<arith::XOrIOp>(loc, lt(x, c(0)), lt(divisor, c(0)));
      q = select(b.create<arith::AndIOp>(loc, inexact, signsDiffer),
                 sub(q, c(1)), q);
    }
    q = select(overflows, x, q);
    return select(isZero, c(-1), q);
  }
  Value irem(Value x, Value y) {
    Value isZero, overflows;
    Value divisor = safeDivisor(x, y, isZero, overflows);
    Value r = isUnsigned()
                  ? b.create<arith::RemUIOp>(loc, x, divisor).getResult()
                  : b.create<arith::RemSIOp>(loc, x, divisor).getResult();
    r = select(overflows, c(0), r);
    return select(isZero, x, r);
  }
  /// The remainder with the divisor's sign (FloorMod).
  Value floorMod(Value x, Value y) {
    Value r = isFloat() ? b.create<arith::RemFOp>(loc, x, y).getResult()
                        : irem(x, y);
    if (isUnsigned())
      return r;
    Value zero = c(0);
    Value nonZero = b.create<arith::XOrIOp>(
        loc, eq(r, zero), b.create<arith::ConstantOp>(loc, b.getBoolAttr(true)));
    Value signsDiffer = b.create<arith::XOrIOp>(loc, lt(r, zero), lt(y, zero));
    Value adjust = b.create<arith::AndIOp>(loc, nonZero, signsDiffer);
    return select(adjust, add(r, y), r);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

static LogicalResult unsupportedDType(NodeLowering &ctx, int32_t dtype) {
  return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                     << " is not supported";
}

namespace {
using Unary = ops::UnaryOp;
} // namespace

/// The special functions call the kernel library in double precision, as
/// the reference kernels compute them (cleave/Support/SpecialFunctions.h).
static constexpr llvm::StringLiteral kSpecial = "cleave_cpu_special";

static void declareSpecial(NodeLowering &ctx) {
  Type i64 = ctx.b.getI64Type(), f64 = ctx.b.getF64Type();
  ctx.declareRuntimeFunction(kSpecial, {i64, f64, f64}, {f64});
}

/// `function` of x (and y), in x's float type; declareSpecial first.
static Value callSpecial(OpBuilder &b, Location loc, special::Function function,
                         Value x, Value y = nullptr) {
  Type type = x.getType(), f64 = b.getF64Type();
  auto widened = [&](Value v) -> Value {
    return type.isF64() ? v : b.create<arith::ExtFOp>(loc, f64, v);
  };
  Value which =
      b.create<arith::ConstantIntOp>(loc, int64_t(function), /*width=*/64);
  Value second =
      y ? widened(y) : b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(0));
  Value result = b.create<func::CallOp>(loc, kSpecial, TypeRange{f64},
                                        ValueRange{which, widened(x), second})
                     .getResult(0);
  return type.isF64() ? result : b.create<arith::TruncFOp>(loc, type, result);
}

static bool isSpecial(Unary op) {
  return op == Unary::Erfc || op == Unary::Lgamma || op == Unary::Digamma;
}

static bool needsFloat(Unary op) {
  switch (op) {
  case Unary::Neg: case Unary::Square: case Unary::Abs: case Unary::Sign:
  case Unary::Reciprocal: case Unary::Relu: case Unary::Relu6:
  case Unary::LogicalNot: case Unary::Identity: case Unary::Round:
    return false;
  default:
    return true;
  }
}

static Value applyUnary(Arith &a, Unary op, Value x) {
  OpBuilder &b = a.b;
  Location loc = a.loc;
  switch (op) {
  case Unary::Neg:
    return a.isFloat() ? b.create<arith::NegFOp>(loc, x).getResult()
                       : a.sub(a.c(0), x);
  case Unary::Square:
    return a.mul(x, x);
  case Unary::Sqrt:
    return b.create<math::SqrtOp>(loc, x);
  case Unary::Rsqrt:
    return a.fdiv(a.c(1), b.create<math::SqrtOp>(loc, x));
  case Unary::Exp:
    return b.create<math::ExpOp>(loc, x);
  case Unary::Log:
    return b.create<math::LogOp>(loc, x);
  case Unary::Log1p:
    return b.create<math::Log1pOp>(loc, x);
  case Unary::Abs:
    return a.select(a.lt(x, a.c(0)), a.sub(a.c(0), x), x);
  case Unary::Sign:
    return a.select(a.gt(x, a.c(0)), a.c(1),
                    a.select(a.lt(x, a.c(0)), a.c(-1), a.c(0)));
  case Unary::Sigmoid: {
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
    return a.fdiv(a.c(1), a.add(a.c(1), e));
  }
  case Unary::Tanh:
    return b.create<math::TanhOp>(loc, x);
  case Unary::Reciprocal:
    return a.isFloat() ? a.fdiv(a.c(1), x) : a.idiv(a.c(1), x, false);
  case Unary::Floor:
    return b.create<math::FloorOp>(loc, x);
  case Unary::Relu:
    return a.select(a.gt(x, a.c(0)), x, a.c(0));
  case Unary::Relu6:
    return a.select(a.lt(x, a.c(0)), a.c(0),
                    a.select(a.gt(x, a.c(6)), a.c(6), x));
  case Unary::Elu:
    return a.select(a.gt(x, a.c(0)), x, b.create<math::ExpM1Op>(loc, x));
  case Unary::LogicalNot:
    return b.create<arith::XOrIOp>(
        loc, x, b.create<arith::ConstantOp>(loc, b.getBoolAttr(true)));
  case Unary::Identity:
    return x;
  case Unary::Ceil:
    return b.create<math::CeilOp>(loc, x);
  // Both round half to even, as TensorFlow's; an integer is its own.
  case Unary::Rint:
  case Unary::Round:
    return a.isFloat() ? b.create<math::RoundEvenOp>(loc, x).getResult() : x;
  case Unary::Expm1:
    return b.create<math::ExpM1Op>(loc, x);
  case Unary::Erf:
    return b.create<math::ErfOp>(loc, x);
  case Unary::Erfc:
    return callSpecial(b, loc, special::Function::Erfc, x);
  case Unary::Lgamma:
    return callSpecial(b, loc, special::Function::Lgamma, x);
  case Unary::Digamma:
    return callSpecial(b, loc, special::Function::Digamma, x);
  case Unary::Sin:
    return b.create<math::SinOp>(loc, x);
  case Unary::Cos:
    return b.create<math::CosOp>(loc, x);
  case Unary::Tan:
    return b.create<math::TanOp>(loc, x);
  case Unary::Asin:
    return b.create<math::AsinOp>(loc, x);
  case Unary::Acos:
    return b.create<math::AcosOp>(loc, x);
  case Unary::Atan:
    return b.create<math::AtanOp>(loc, x);
  case Unary::Sinh:
    return b.create<math::SinhOp>(loc, x);
  case Unary::Cosh:
    return b.create<math::CoshOp>(loc, x);
  case Unary::Asinh:
    return b.create<math::AsinhOp>(loc, x);
  case Unary::Acosh:
    return b.create<math::AcoshOp>(loc, x);
  case Unary::Atanh:
    return b.create<math::AtanhOp>(loc, x);
  case Unary::Softplus: {
    // TensorFlow's three ranges (see the reference kernel).
    double epsilon = x.getType().isF64() ? 0x1p-52 : 0x1p-23;
    double threshold = std::log(epsilon) + 2;
    Value e = b.create<math::ExpOp>(loc, x);
    Value middle = b.create<math::LogOp>(loc, a.add(e, a.c(1)));
    Value low = a.select(a.lt(x, a.c(threshold)), e, middle);
    return a.select(a.gt(x, a.c(-threshold)), x, low);
  }
  case Unary::Softsign: {
    Value magnitude = b.create<math::AbsFOp>(loc, x);
    return a.fdiv(x, a.add(a.c(1), magnitude));
  }
  }
  llvm_unreachable("unknown unary op");
}

static LogicalResult unaryElementwise(NodeLowering &ctx, Unary op) {
  int32_t dtype = ctx.dtype(0);
  if ((needsFloat(op) && !isFloatDType(dtype)) ||
      (op == Unary::LogicalNot) != (dtype == kBool))
    return unsupportedDType(ctx, dtype);
  if (isSpecial(op))
    declareSpecial(ctx);
  Value x = ctx.tensor(0);
  Type type = ctx.elementType(dtype);
  ctx.setOutput(0,
                ctx.map({x}, ctx.shape(0), dtype,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          Arith a(b, loc, dtype, type);
                          return applyUnary(a, op, args[0]);
                        }),
                dtype);
  return success();
}

template <Unary op> static LogicalResult unary(NodeLowering &ctx) {
  return unaryElementwise(ctx, op);
}

namespace {
using Classify = ops::ClassifyOp;
} // namespace

/// IsNan, IsInf, IsFinite: a bool per element of a float tensor.
template <Classify kind> static LogicalResult classify(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (!isFloatDType(dtype))
    return unsupportedDType(ctx, dtype);
  Type type = ctx.elementType(dtype);
  ctx.setOutput(
      0,
      ctx.map({ctx.tensor(0)}, ctx.shape(0), kBool,
              [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                using FP = arith::CmpFPredicate;
                Value x = args[0];
                if (kind == Classify::IsNan)
                  return b.create<arith::CmpFOp>(loc, FP::UNO, x, x);
                Value inf = b.create<arith::ConstantOp>(
                    loc, b.getFloatAttr(type, INFINITY));
                Value magnitude = b.create<math::AbsFOp>(loc, x);
                // Ordered: NaN is neither infinite nor finite.
                return b.create<arith::CmpFOp>(
                    loc, kind == Classify::IsInf ? FP::OEQ : FP::ONE,
                    magnitude, inf);
              }),
      kBool);
  return success();
}

namespace {
enum class Binary {
  Add,
  Sub,
  Mul,
  Div,
  RealDiv,
  FloorDiv,
  FloorMod,
  TruncateDiv,
  TruncateMod,
  DivNoNan,
  MulNoNan,
  Max,
  Min,
  Pow,
  SquaredDifference,
  Atan2,
  Zeta,
  Polygamma,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  Equal,
  NotEqual,
  LogicalAnd,
  LogicalOr,
  // Gradient helpers: (y, dy) of y = f(x).
  SigmoidGrad,
  TanhGrad,
  RsqrtGrad,
  SqrtGrad,
  ReciprocalGrad,
  // (dy, x) of relu-like ops.
  ReluGrad,
  Relu6Grad,
  EluGrad,
  SoftplusGrad,
  SoftsignGrad
};
} // namespace

static bool isComparison(Binary op) {
  return op >= Binary::Less && op <= Binary::NotEqual;
}
static bool isLogical(Binary op) {
  return op == Binary::LogicalAnd || op == Binary::LogicalOr;
}
static bool needsFloat(Binary op) {
  // ReluGrad and Relu6Grad take every real type, as TensorFlow's kernels.
  return op == Binary::Atan2 || op == Binary::Zeta || op == Binary::Polygamma ||
         (op >= Binary::SigmoidGrad && op != Binary::ReluGrad &&
          op != Binary::Relu6Grad);
}

static Value applyBinary(Arith &a, Binary op, Value x, Value y) {
  OpBuilder &b = a.b;
  Location loc = a.loc;
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  switch (op) {
  case Binary::Add:
    return a.add(x, y);
  case Binary::Sub:
    return a.sub(x, y);
  case Binary::Mul:
    return a.mul(x, y);
  case Binary::Div:
  case Binary::RealDiv:
    return a.isFloat() ? a.fdiv(x, y) : a.idiv(x, y, false);
  case Binary::FloorDiv:
    return a.isFloat() ? b.create<math::FloorOp>(loc, a.fdiv(x, y)).getResult()
                       : a.idiv(x, y, true);
  case Binary::FloorMod:
    return a.floorMod(x, y);
  case Binary::TruncateDiv:
    return a.isFloat() ? b.create<math::TruncOp>(loc, a.fdiv(x, y)).getResult()
                       : a.idiv(x, y, false);
  case Binary::TruncateMod:
    return a.isFloat() ? b.create<arith::RemFOp>(loc, x, y).getResult()
                       : a.irem(x, y);
  case Binary::MulNoNan:
    return a.select(a.eq(y, a.c(0)), a.c(0), a.mul(x, y));
  case Binary::DivNoNan: {
    Value q = a.isFloat() ? a.fdiv(x, y) : a.idiv(x, y, false);
    return a.select(a.eq(y, a.c(0)), a.c(0), q);
  }
  case Binary::Max:
    return a.max(x, y);
  case Binary::Min:
    return a.min(x, y);
  case Binary::Pow: {
    if (a.isFloat())
      return b.create<math::PowFOp>(loc, x, y);
    // Integers: exact, by squaring over the exponent's bits (branch-free),
    // wrapping like TensorFlow's kernel. A negative exponent, an error in
    // the reference kernel, gives XLA's value: 1 for x = 1, +-1 for
    // x = -1, else 0.
    unsigned bits = a.type.getIntOrFloatBitWidth();
    Value one = a.c(1), zero = a.c(0);
    Value result = one, base = x, exponent = y;
    for (unsigned k = 0; k < bits; ++k) {
      Value odd = b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ne,
          b.create<arith::AndIOp>(loc, exponent, one), zero);
      result = a.select(odd, a.mul(result, base), result);
      base = a.mul(base, base);
      exponent = b.create<arith::ShRUIOp>(loc, exponent, one);
    }
    if (a.isUnsigned())
      return result;
    Value yOdd = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne, b.create<arith::AndIOp>(loc, y, one),
        zero);
    Value minusOne = a.c(-1);
    Value negative = a.select(
        a.eq(x, one), one,
        a.select(a.eq(x, minusOne), a.select(yOdd, minusOne, one), zero));
    return a.select(a.lt(y, zero), negative, result);
  }
  case Binary::SquaredDifference: {
    Value d = a.sub(x, y);
    return a.mul(d, d);
  }
  case Binary::Less:
    return a.lt(x, y);
  case Binary::LessEqual:
    return a.cmp(FP::OLE, IP::sle, IP::ule, x, y);
  case Binary::Greater:
    return a.gt(x, y);
  case Binary::GreaterEqual:
    return a.cmp(FP::OGE, IP::sge, IP::uge, x, y);
  case Binary::Equal:
    return a.eq(x, y);
  case Binary::NotEqual:
    return a.cmp(FP::UNE, IP::ne, IP::ne, x, y);
  case Binary::LogicalAnd:
    return b.create<arith::AndIOp>(loc, x, y);
  case Binary::LogicalOr:
    return b.create<arith::OrIOp>(loc, x, y);
  case Binary::SigmoidGrad: // dy * y * (1 - y)
    return a.mul(a.mul(y, x), a.sub(a.c(1), x));
  case Binary::TanhGrad: // dy * (1 - y * y)
    return a.mul(y, a.sub(a.c(1), a.mul(x, x)));
  case Binary::RsqrtGrad: // -0.5 * dy * y^3
    return a.mul(a.mul(a.mul(a.mul(a.c(-0.5), y), x), x), x);
  case Binary::SqrtGrad: // 0.5 * dy / y
    return a.fdiv(a.mul(a.c(0.5), y), x);
  case Binary::ReciprocalGrad: // -dy * y * y
    return a.mul(a.mul(b.create<arith::NegFOp>(loc, y), x), x);
  case Binary::ReluGrad: // dy where x > 0
    return a.select(a.gt(y, a.c(0)), x, a.c(0));
  case Binary::Relu6Grad: {
    Value inside = b.create<arith::AndIOp>(loc, a.gt(y, a.c(0)),
                                           a.lt(y, a.c(6)));
    return a.select(inside, x, a.c(0));
  }
  case Binary::EluGrad: // dy where y > 0, else dy * (y + 1); y = elu(x)
    return a.select(a.gt(y, a.c(0)), x, a.mul(x, a.add(y, a.c(1))));
  case Binary::SoftplusGrad: // dy / (exp(-x) + 1)
    return a.fdiv(x, a.add(b.create<math::ExpOp>(
                               loc, b.create<arith::NegFOp>(loc, y)),
                           a.c(1)));
  case Binary::SoftsignGrad: { // dy / (1 + |x|)^2
    Value d = a.add(b.create<math::AbsFOp>(loc, y), a.c(1));
    return a.fdiv(x, a.mul(d, d));
  }
  case Binary::Atan2:
    return b.create<math::Atan2Op>(loc, x, y);
  case Binary::Zeta:
    return callSpecial(b, loc, special::Function::Zeta, x, y);
  case Binary::Polygamma:
    return callSpecial(b, loc, special::Function::Polygamma, x, y);
  }
  llvm_unreachable("unknown binary op");
}

static LogicalResult binaryElementwise(NodeLowering &ctx, Binary op) {
  int32_t dtype = ctx.dtype(0);
  if (dtype != ctx.dtype(1))
    return ctx.error() << "inputs have different dtypes, "
                       << cleave::dtypeName(dtype) << " and "
                       << cleave::dtypeName(ctx.dtype(1));
  bool boolOk = isLogical(op) || op == Binary::Equal || op == Binary::NotEqual;
  if ((dtype == kBool && !boolOk) || (isLogical(op) && dtype != kBool) ||
      (needsFloat(op) && !isFloatDType(dtype)))
    return unsupportedDType(ctx, dtype);
  std::vector<int64_t> shape;
  if (op >= Binary::SigmoidGrad) {
    // The gradient helpers take equal shapes.
    if (ctx.shape(0) != ctx.shape(1))
      return ctx.error() << "y and dy must have the same shape: "
                         << cleave::shapeString(ctx.shape(0)) << " vs. "
                         << cleave::shapeString(ctx.shape(1));
    shape = ctx.shape(0);
  } else {
    FailureOr<std::vector<int64_t>> joined = ctx.broadcastShapes({0, 1});
    if (failed(joined))
      return failure();
    shape = *joined;
  }
  if (op == Binary::Zeta || op == Binary::Polygamma)
    declareSpecial(ctx);
  int32_t outType = isComparison(op) ? kBool : dtype;
  Type type = ctx.elementType(dtype);
  ctx.setOutput(0,
                ctx.map({ctx.tensor(0), ctx.tensor(1)}, shape, outType,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          Arith a(b, loc, dtype, type);
                          return applyBinary(a, op, args[0], args[1]);
                        }),
                outType);
  return success();
}

template <Binary op> static LogicalResult binary(NodeLowering &ctx) {
  return binaryElementwise(ctx, op);
}

static LogicalResult addN(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  SmallVector<Value> operands;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    if (ctx.shape(i) != ctx.shape(0))
      return ctx.error() << "Inputs to operation AddN must have the same "
                            "size and shape: "
                         << cleave::shapeString(ctx.shape(0))
                         << " != " << cleave::shapeString(ctx.shape(i));
    operands.push_back(ctx.tensor(i));
  }
  Type type = ctx.elementType(dtype);
  ctx.setOutput(0,
                ctx.map(operands, ctx.shape(0), dtype,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          Arith a(b, loc, dtype, type);
                          Value sum = args[0];
                          for (Value v : args.drop_front())
                            sum = a.add(sum, v);
                          return sum;
                        }),
                dtype);
  return success();
}

static LogicalResult cast(NodeLowering &ctx) {
  std::optional<int32_t> dst = ctx.getType("DstT");
  if (!dst || !ctx.elementType(*dst))
    return ctx.error() << "unsupported DstT";
  int32_t src = ctx.dtype(0);
  ctx.setOutput(0,
                ctx.map({ctx.tensor(0)}, ctx.shape(0), *dst,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          return ctx.convertElement(b, loc, args[0], src, *dst);
                        }),
                *dst);
  return success();
}

/// SelectV2: condition, then and else broadcast together.
static LogicalResult selectV2(NodeLowering &ctx) {
  std::vector<int64_t> te, shape;
  if (!cleave::broadcastShape(ctx.shape(1), ctx.shape(2), te) ||
      !cleave::broadcastShape(ctx.shape(0), te, shape))
    return ctx.error() << "condition, then and else shapes are not "
                          "broadcastable: "
                       << cleave::shapeString(ctx.shape(0)) << ", "
                       << cleave::shapeString(ctx.shape(1)) << ", "
                       << cleave::shapeString(ctx.shape(2));
  int32_t dtype = ctx.dtype(1);
  ctx.setOutput(
      0,
      ctx.map({ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)}, shape, dtype,
              [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                return b.create<arith::SelectOp>(loc, args[0], args[1],
                                                 args[2]);
              }),
      dtype);
  return success();
}

/// Select: equal shapes, a vector condition that picks rows, or a scalar
/// condition that picks a whole operand.
static LogicalResult select(NodeLowering &ctx) {
  const std::vector<int64_t> &c = ctx.shape(0), &t = ctx.shape(1);
  if (t != ctx.shape(2))
    return ctx.error() << "'then' and 'else' must have the same size.  but "
                          "received: "
                       << cleave::shapeString(t) << " vs. "
                       << cleave::shapeString(ctx.shape(2));
  bool rows = c.size() == 1 && t.size() > 1;
  if (!rows && !c.empty() && c != t)
    return ctx.error() << "'condition', 'then' and 'else' must have the same "
                          "size, or 'condition' must be a vector of the "
                          "first dimension of the others";
  if (rows && c[0] != t[0])
    return ctx.error() << "Number of batches of 'then' must match size of "
                          "'condition': "
                       << c[0] << " vs. " << t[0];
  int32_t dtype = ctx.dtype(1);
  Value cond = ctx.tensor(0);
  if (rows) {
    // The condition as [n, 1, ..., 1] broadcasts over the rows.
    std::vector<int64_t> expanded(t.size(), 1);
    expanded[0] = c[0];
    cond = ctx.reshape(cond, c, expanded, kBool);
  }
  ctx.setOutput(0,
                ctx.map({cond, ctx.tensor(1), ctx.tensor(2)}, t, dtype,
                        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                          return b.create<arith::SelectOp>(loc, args[0],
                                                           args[1], args[2]);
                        }),
                dtype);
  return success();
}

namespace {
//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

using Reduce = ops::ReduceOp;
} // namespace

/// The largest (or lowest) value of an element type, as a constant.
static Value extreme(OpBuilder &b, Location loc, Type type, int32_t dtype,
                     bool largest) {
  if (auto f = dyn_cast<FloatType>(type)) {
    APFloat v = APFloat::getLargest(f.getFloatSemantics(), !largest);
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, v));
  }
  unsigned bits = type.getIntOrFloatBitWidth();
  APInt v = isUnsignedDType(dtype)
                ? (largest ? APInt::getMaxValue(bits) : APInt::getMinValue(bits))
                : (largest ? APInt::getSignedMaxValue(bits)
                           : APInt::getSignedMinValue(bits));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, v));
}

/// Normalized, sorted reduction axes; TensorFlow's error otherwise.
static FailureOr<std::vector<int64_t>>
reductionAxes(NodeLowering &ctx, unsigned input, int64_t rank) {
  FailureOr<std::vector<int64_t>> axes = ctx.constantInts(input);
  if (failed(axes))
    return failure();
  std::vector<int64_t> result;
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return ctx.error() << "Invalid reduction dimension (" << axis
                         << " for input with " << rank << " dimension(s)",
             failure();
    int64_t d = axis < 0 ? axis + rank : axis;
    if (!llvm::is_contained(result, d))
      result.push_back(d);
  }
  llvm::sort(result);
  return result;
}

/// What a reduction over `axes` leaves of `shape`.
static std::vector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> axes) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (!llvm::is_contained(axes, d))
      out.push_back(shape[d]);
  return out;
}

/// Output 0 = `result`, a reduction of `shape` over `axes`, with the
/// reduced axes kept as 1s where keep_dims asks.
static void setReductionOutput(NodeLowering &ctx, Value result,
                               ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                               int32_t dtype) {
  if (ctx.getBool("keep_dims").value_or(false)) {
    std::vector<int64_t> kept(shape.begin(), shape.end());
    for (int64_t d : axes)
      kept[d] = 1;
    result = ctx.reshape(result, reducedShape(shape, axes), kept, dtype);
  }
  ctx.setOutput(0, result, dtype);
}

template <Reduce op> static LogicalResult reduce(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  FailureOr<std::vector<int64_t>> axes = reductionAxes(ctx, 1, rank);
  if (failed(axes))
    return failure();
  Type type = ctx.elementType(dtype);
  std::vector<int64_t> outShape = reducedShape(shape, *axes);
  // Sums and products of float and half accumulate in double, as the
  // reference kernels do: in float, a sum of a billion 2.25s stops growing
  // at 2^26 (each addend is below half an ulp of the running sum), where
  // TensorFlow's tree reduction gives 4.5e9.
  bool widen = op != Reduce::Max && op != Reduce::Min &&
               isFloatDType(dtype) && dtype != kDouble;
  int32_t accDtype = widen ? kDouble : dtype;
  Type accType = ctx.elementType(accDtype);
  // Max and Min start from the extreme the first element replaces.
  Value init = op == Reduce::Max   ? extreme(ctx.b, ctx.loc, type, dtype, false)
               : op == Reduce::Min ? extreme(ctx.b, ctx.loc, type, dtype, true)
                                   : ctx.scalar(accDtype, op == Reduce::Prod);
  Value result = ctx.reduce(
      ctx.tensor(0), shape, accDtype, *axes, init,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Arith a(b, loc, accDtype, accType);
        Value x = args[0], acc = args[1];
        if (widen)
          x = b.create<arith::ExtFOp>(loc, accType, x);
        switch (op) {
        case Reduce::Sum:
        case Reduce::Mean:
          return a.add(acc, x);
        case Reduce::Prod:
          return a.mul(acc, x);
        case Reduce::Max:
          return a.select(a.lt(acc, x), x, acc);
        case Reduce::Min:
          return a.select(a.lt(x, acc), x, acc);
        }
        llvm_unreachable("unknown reduction");
      });
  int64_t count = 1;
  for (int64_t d : *axes)
    count *= shape[d];
  if (op == Reduce::Mean && count > 0)
    result = ctx.map({result}, outShape, accDtype,
                     [&](OpBuilder &b, Location loc, ValueRange args) {
                       Arith a(b, loc, accDtype, accType);
                       return a.isFloat() ? a.fdiv(args[0], a.c(count))
                                          : a.idiv(args[0], a.c(count), false);
                     });
  if (widen)
    result = ctx.map({result}, outShape, dtype,
                     [&](OpBuilder &b, Location loc, ValueRange args) {
                       return b.create<arith::TruncFOp>(loc, type, args[0])
                           .getResult();
                     });
  setReductionOutput(ctx, result, shape, *axes, dtype);
  return success();
}

/// `axis` of a rank-`rank` operand, counted from 0, or TensorFlow's error
/// "<expected> in the range [-rank, rank), but got <axis>".
static FailureOr<int64_t> normalizeAxis(NodeLowering &ctx, int64_t axis,
                                        int64_t rank, StringRef expected) {
  int64_t normalized = axis;
  if (!ops::normalizeAxis(normalized, rank))
    return ctx.error() << expected << " in the range [" << -rank << ", "
                       << rank << "), but got " << axis,
           failure();
  return normalized;
}

/// ArgMax/ArgMin: the first index of the extreme along one axis.
template <bool isMax> static LogicalResult argReduce(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  FailureOr<std::vector<int64_t>> axisValues = ctx.constantInts(1);
  if (failed(axisValues))
    return failure();
  if (axisValues->size() != 1)
    return ctx.error() << "dimension must be a scalar";
  FailureOr<int64_t> normalized =
      normalizeAxis(ctx, axisValues->front(), rank, "Expected dimension");
  if (failed(normalized))
    return failure();
  int64_t axis = *normalized;
  if (shape[axis] == 0)
    return ctx.error() << "Reduction axis " << axis << " is empty in shape "
                       << cleave::shapeString(shape);
  int32_t outType = ctx.getType("output_type").value_or(kInt64);
  std::vector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  OpBuilder &b = ctx.b;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d == axis ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (d != axis) {
      outShape.push_back(shape[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  Type type = ctx.elementType(dtype);
  Value best = ctx.filled(outShape, dtype,
                          extreme(b, ctx.loc, type, dtype, !isMax));
  Value index = ctx.filled(outShape, outType, ctx.scalar(outType, 0));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), outMap,
                                 outMap};
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{best.getType(), index.getType()},
      ValueRange{ctx.tensor(0)}, ValueRange{best, index}, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        Arith a(nb, loc, dtype, type);
        Value x = args[0], bestValue = args[1], bestIndex = args[2];
        Value k = nb.create<linalg::IndexOp>(loc, axis);
        Value kCast = nb.create<arith::IndexCastOp>(
            loc, ctx.elementType(outType), k);
        // The first element always wins; later ones only when strictly
        // better, as the reference kernel.
        Value first = nb.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, k,
            nb.create<arith::ConstantIndexOp>(loc, 0));
        Value better = isMax ? a.gt(x, bestValue) : a.lt(x, bestValue);
        Value take = nb.create<arith::OrIOp>(loc, first, better);
        nb.create<linalg::YieldOp>(
            loc, ValueRange{a.select(take, x, bestValue),
                            nb.create<arith::SelectOp>(loc, take, kCast,
                                                       bestIndex)});
      });
  ctx.setOutput(0, generic.getResult(1), outType);
  return success();
}

/// Cumsum and Cumprod: a loop along `axis`, one slice (one element thick)
/// per step, each the previous step's result combined with one slice of the
/// input (the slice itself, or the previous one when `exclusive`); the
/// first step is the first slice or the identity. `reverse` walks from the
/// end. Only the result travels through the loop, so it is updated in
/// place once bufferized.
template <bool isProduct> static LogicalResult scan(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  FailureOr<std::vector<int64_t>> axisValues = ctx.constantInts(1);
  if (failed(axisValues))
    return failure();
  if (!ctx.shape(1).empty())
    return ctx.error() << "ScanOp: axis must be a scalar, not "
                       << cleave::shapeString(ctx.shape(1));
  FailureOr<int64_t> normalized = normalizeAxis(
      ctx, axisValues->front(), rank, "ScanOp: Expected scan axis");
  if (failed(normalized))
    return failure();
  int64_t axis = *normalized;
  bool exclusive = ctx.getBool("exclusive").value_or(false);
  bool reverse = ctx.getBool("reverse").value_or(false);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  int64_t size = shape[axis];
  if (size == 0) {
    ctx.setOutput(0, ctx.tensor(0), dtype);
    return success();
  }
  std::vector<int64_t> sliceShape = shape;
  sliceShape[axis] = 1;
  auto index = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  // Position `step` of the walk: from the start, or from the end.
  auto position = [&](Value step) -> Value {
    return reverse ? b.create<arith::SubIOp>(loc, index(size - 1), step)
                         .getResult()
                   : step;
  };
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d : sliceShape)
    sizes.push_back(b.getIndexAttr(d));
  auto offsetsAt = [&](Value at) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[axis] = at;
    return offsets;
  };
  auto sliceOf = [&](Value from, Value at) -> Value {
    return b.create<tensor::ExtractSliceOp>(
        loc, ctx.tensorType(sliceShape, dtype), from, offsetsAt(at), sizes,
        strides);
  };
  auto writeSlice = [&](Value slice, Value into, Value at) -> Value {
    return b.create<tensor::InsertSliceOp>(loc, slice, into, offsetsAt(at),
                                           sizes, strides);
  };
  Value first = position(index(0));
  Value start = exclusive ? ctx.filled(sliceShape, dtype,
                                       ctx.scalar(dtype, isProduct ? 1 : 0))
                          : sliceOf(ctx.tensor(0), first);
  Value init = writeSlice(start, ctx.empty(shape, dtype), first);
  auto loop = b.create<scf::ForOp>(loc, index(1), index(size), index(1),
                                   ValueRange{init});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    Value out = loop.getRegionIterArgs()[0];
    Value at = position(step);
    Value previous =
        position(b.create<arith::SubIOp>(loc, step, index(1)).getResult());
    Value input = sliceOf(ctx.tensor(0), exclusive ? previous : at);
    Value next = ctx.map(
        {sliceOf(out, previous), input}, sliceShape, dtype,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Arith a(nb, l, dtype, ctx.elementType(dtype));
          return isProduct ? a.mul(args[0], args[1]) : a.add(args[0], args[1]);
        });
    b.create<scf::YieldOp>(loc, writeSlice(next, out, at));
  }
  ctx.setOutput(0, loop.getResult(0), dtype);
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

static LogicalResult matMul(NodeLowering &ctx) {
  const std::vector<int64_t> &a = ctx.shape(0), &bShape = ctx.shape(1);
  if (a.size() != 2 || bShape.size() != 2)
    return ctx.error() << "In[0] and In[1] must be matrices";
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  bool ta = ctx.getBool("transpose_a").value_or(false);
  bool tb = ctx.getBool("transpose_b").value_or(false);
  int64_t m = a[ta ? 1 : 0], k = a[ta ? 0 : 1];
  int64_t kb = bShape[tb ? 1 : 0], n = bShape[tb ? 0 : 1];
  if (k != kb)
    return ctx.error() << "Matrix size-incompatible: In[0]: "
                       << cleave::shapeString(a)
                       << ", In[1]: " << cleave::shapeString(bShape);
  Value lhs = ctx.tensor(0), rhs = ctx.tensor(1);
  Value acc = ctx.filled({m, n}, dtype, ctx.scalar(dtype, 0));
  OpBuilder &b = ctx.b;
  Value product;
  if (ta && tb) {
    // Aᵀ·Bᵀ: transpose A, then the B-transposed product.
    Value at = b.create<linalg::TransposeOp>(ctx.loc, lhs,
                                             ctx.empty({m, k}, dtype),
                                             ArrayRef<int64_t>{1, 0})
                   .getResult()[0];
    product = b.create<linalg::MatmulTransposeBOp>(
                   ctx.loc, TypeRange{acc.getType()}, ValueRange{at, rhs},
                   ValueRange{acc})
                  .getResult(0);
  } else if (ta) {
    product = b.create<linalg::MatmulTransposeAOp>(
                   ctx.loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
                   ValueRange{acc})
                  .getResult(0);
  } else if (tb) {
    product = b.create<linalg::MatmulTransposeBOp>(
                   ctx.loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
                   ValueRange{acc})
                  .getResult(0);
  } else {
    product = b.create<linalg::MatmulOp>(ctx.loc, TypeRange{acc.getType()},
                                         ValueRange{lhs, rhs}, ValueRange{acc})
                  .getResult(0);
  }
  ctx.setOutput(0, product, dtype);
  return success();
}

/// BatchMatMulV2: one contraction over broadcast batch dimensions.
static LogicalResult batchMatMul(NodeLowering &ctx) {
  const std::vector<int64_t> &a = ctx.shape(0), &bShape = ctx.shape(1);
  if (a.size() < 2 || bShape.size() < 2)
    return ctx.error() << "In[0] and In[1] must have rank >= 2, but are "
                       << cleave::shapeString(a) << " and "
                       << cleave::shapeString(bShape);
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool)
    return unsupportedDType(ctx, dtype);
  bool adjA = ctx.getBool("adj_x").value_or(false);
  bool adjB = ctx.getBool("adj_y").value_or(false);
  int64_t ra = a.size(), rb = bShape.size();
  int64_t m = a[ra - (adjA ? 1 : 2)], k = a[ra - (adjA ? 2 : 1)];
  int64_t kb = bShape[rb - (adjB ? 1 : 2)], n = bShape[rb - (adjB ? 2 : 1)];
  std::vector<int64_t> batchA(a.begin(), a.end() - 2),
      batchB(bShape.begin(), bShape.end() - 2), batch;
  if (!cleave::broadcastShape(batchA, batchB, batch))
    return ctx.error() << "In[0] and In[1] must have compatible batch "
                          "dimensions: "
                       << cleave::shapeString(a) << " vs. "
                       << cleave::shapeString(bShape);
  if (k != kb)
    return ctx.error() << "Matrix size-incompatible: In[0]: "
                       << cleave::shapeString(a)
                       << ", In[1]: " << cleave::shapeString(bShape);
  OpBuilder &b = ctx.b;
  int64_t nb = batch.size();
  // Loop dims: batch..., i, j, p (p is the contraction).
  int64_t rank = nb + 3;
  auto dim = [&](int64_t d) { return b.getAffineDimExpr(d); };
  auto batchExprs = [&](const std::vector<int64_t> &operandBatch) {
    SmallVector<AffineExpr> exprs;
    int64_t offset = nb - operandBatch.size();
    for (auto [d, size] : llvm::enumerate(operandBatch))
      exprs.push_back(size == 1 && batch[d + offset] != 1
                          ? b.getAffineConstantExpr(0)
                          : dim(d + offset));
    return exprs;
  };
  SmallVector<AffineExpr> lhsExprs = batchExprs(batchA);
  lhsExprs.push_back(adjA ? dim(nb + 2) : dim(nb));
  lhsExprs.push_back(adjA ? dim(nb) : dim(nb + 2));
  SmallVector<AffineExpr> rhsExprs = batchExprs(batchB);
  rhsExprs.push_back(adjB ? dim(nb + 1) : dim(nb + 2));
  rhsExprs.push_back(adjB ? dim(nb + 2) : dim(nb + 1));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < nb + 2; ++d)
    outExprs.push_back(dim(d));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, lhsExprs, b.getContext()),
      AffineMap::get(rank, 0, rhsExprs, b.getContext()),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  std::vector<int64_t> outShape = batch;
  outShape.push_back(m);
  outShape.push_back(n);
  Value acc = ctx.filled(outShape, dtype, ctx.scalar(dtype, 0));
  Type type = ctx.elementType(dtype);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{acc.getType()},
      ValueRange{ctx.tensor(0), ctx.tensor(1)}, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &nested, Location loc, ValueRange args) {
        Arith ar(nested, loc, dtype, type);
        nested.create<linalg::YieldOp>(
            loc, ar.add(args[2], ar.mul(args[0], args[1])));
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

Value cleave::conversion::scatterRows(NodeLowering &ctx, Value initial,
                                      Value rows, int64_t numRows,
                                      int64_t inner, int64_t segments,
                                      int32_t dtype, ScatterCombine combine,
                                      RowTarget target, int64_t errorCode) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value sums = initial
                   ? initial
                   : ctx.filled({segments, inner}, dtype, ctx.scalar(dtype, 0));
  auto index = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value statusOk = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value error =
      b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(errorCode));
  auto loop = b.create<scf::ForOp>(loc, index(0), index(numRows), index(1),
                                   ValueRange{sums, ctx.getStatus()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value row = loop.getInductionVar();
    Value acc = loop.getRegionIterArgs()[0];
    Value status = loop.getRegionIterArgs()[1];
    auto [id, drop, invalid] = target(b, row);
    Value firstError = b.create<arith::AndIOp>(
        loc, invalid,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, status,
                                statusOk));
    status = b.create<arith::SelectOp>(loc, firstError, error, status);
    Value keep = b.create<arith::XOrIOp>(
        loc, b.create<arith::OrIOp>(loc, drop, invalid),
        b.create<arith::ConstantOp>(loc, b.getBoolAttr(true)));
    auto update = b.create<scf::IfOp>(loc, TypeRange{acc.getType()}, keep,
                                      /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard branchGuard(b);
      b.setInsertionPointToStart(update.thenBlock());
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                         b.getIndexAttr(inner)};
      SmallVector<OpFoldResult> ones(2, b.getIndexAttr(1));
      auto rowType = ctx.tensorType({inner}, dtype);
      auto extractRow = [&](Value from, Value at) -> Value {
        return b.create<tensor::ExtractSliceOp>(
            loc, rowType, from, SmallVector<OpFoldResult>{at, b.getIndexAttr(0)},
            sizes, ones);
      };
      Type type = ctx.elementType(dtype);
      Value added =
          combine == ScatterCombine::Update
              ? extractRow(rows, row)
              : ctx.map({extractRow(acc, id), extractRow(rows, row)}, {inner},
                        dtype, [&](OpBuilder &nb, Location l, ValueRange args) {
                          Arith a(nb, l, dtype, type);
                          Value x = args[0], y = args[1];
                          switch (combine) {
                          case ScatterCombine::Add:
                            return a.add(x, y);
                          case ScatterCombine::Sub:
                            return a.sub(x, y);
                          case ScatterCombine::Mul:
                            return a.mul(x, y);
                          // As Eigen's cwiseMin/Max: a NaN update leaves
                          // the element.
                          case ScatterCombine::Min:
                            return a.select(a.lt(y, x), y, x);
                          case ScatterCombine::Max:
                            return a.select(a.lt(x, y), y, x);
                          case ScatterCombine::Update:
                            break;
                          }
                          return y;
                        });
      Value written = b.create<tensor::InsertSliceOp>(
          loc, added, acc, SmallVector<OpFoldResult>{id, b.getIndexAttr(0)},
          sizes, ones);
      b.create<scf::YieldOp>(loc, written);
      b.setInsertionPointToStart(update.elseBlock());
      b.create<scf::YieldOp>(loc, acc);
    }
    b.create<scf::YieldOp>(loc, ValueRange{update.getResult(0), status});
  }
  ctx.setStatus(loop.getResult(1));
  return loop.getResult(0);
}

/// All and Any: the and / or of the bools over the constant axes.
template <bool isAll> static LogicalResult boolReduce(NodeLowering &ctx) {
  int32_t dtype = ctx.dtype(0);
  if (dtype != kBool)
    return unsupportedDType(ctx, dtype);
  const std::vector<int64_t> &shape = ctx.shape(0);
  int64_t rank = shape.size();
  FailureOr<std::vector<int64_t>> axes = reductionAxes(ctx, 1, rank);
  if (failed(axes))
    return failure();
  Value result =
      ctx.reduce(ctx.tensor(0), shape, kBool, *axes, ctx.scalar(kBool, isAll),
                 [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                   if (isAll)
                     return b.create<arith::AndIOp>(loc, args[0], args[1]);
                   return b.create<arith::OrIOp>(loc, args[0], args[1]);
                 });
  setReductionOutput(ctx, result, shape, *axes, kBool);
  return success();
}

/// UnsortedSegmentSum(data, segment_ids, num_segments) (GatherV2's
/// gradient): out[ids[i...], inner] += data[i..., inner], a row of data
/// seen as [rows, inner] at a time (in place once bufferized). A negative
/// id drops its row, as TensorFlow does; an id past num_segments is
/// TensorFlow's error, through the status, and drops its row too.
static LogicalResult unsortedSegmentSum(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> out = ctx.inferredOutputShape({2});
  if (failed(out))
    return failure();
  const std::vector<int64_t> &data = ctx.shape(0), &ids = ctx.shape(1);
  int32_t dtype = ctx.dtype(0), idType = ctx.dtype(1);
  if (ids.size() > data.size() ||
      !std::equal(ids.begin(), ids.end(), data.begin()))
    return ctx.error() << "data.shape = " << cleave::shapeString(data)
                       << " does not start with segment_ids.shape = "
                       << cleave::shapeString(ids);
  if (dtype == cleave::kBool || !ctx.elementType(dtype).isIntOrFloat())
    return ctx.error() << "dtype " << cleave::dtypeName(dtype)
                       << " is not supported";
  int64_t segments = out->front(), rows = 1, inner = 1;
  for (int64_t d : ids)
    rows *= d;
  for (size_t d = ids.size(); d < data.size(); ++d)
    inner *= data[d];
  Location loc = ctx.loc;
  Value flatData = ctx.reshape(ctx.tensor(0), data, {rows, inner}, dtype);
  Value flatIds = ctx.reshape(ctx.tensor(1), ids, {rows}, idType);
  int64_t code = ctx.addError("a segment id (computed at run time) is out of "
                              "range [0, " +
                              std::to_string(segments) + ")");
  Value sums = scatterRows(
      ctx, /*initial=*/nullptr, flatData, rows, inner, segments, dtype,
      ScatterCombine::Add,
      [&](OpBuilder &b, Value row) -> std::array<Value, 3> {
        Value id = b.create<arith::IndexCastOp>(
            loc, b.getIndexType(),
            b.create<tensor::ExtractOp>(loc, flatIds, ValueRange{row}));
        Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
        Value limit = b.create<arith::ConstantIndexOp>(loc, segments);
        return {
            id,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, zero),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, id, limit)};
      },
      code);
  ctx.setOutput(0, ctx.reshape(sums, {segments, inner}, *out, dtype), dtype);
  return success();
}

/// Einsum: one linalg.generic with a loop per label (cleave/Ops/Einsum.h):
/// the output's labels parallel, the others reductions; a label repeated
/// in an input reads the diagonal, a broadcast ellipsis dimension index 0.
/// A label the output repeats (i->ii) gets a loop of its own for each
/// repetition, and the product goes only where the loops agree (zeros
/// elsewhere: TensorFlow's inflation).
static LogicalResult einsum(NodeLowering &ctx) {
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    shapes.push_back(ctx.shape(i));
  ops::EinsumPlan plan;
  if (std::string error =
          ops::planEinsum(ctx.getString("equation").value_or(""), shapes, plan);
      !error.empty())
    return ctx.error() << error;
  int32_t dtype = ctx.dtype(0);
  if (dtype == kBool || !ctx.elementType(dtype) ||
      !ctx.elementType(dtype).isIntOrFloat())
    return unsupportedDType(ctx, dtype);
  OpBuilder &b = ctx.b;
  MLIRContext *context = b.getContext();
  unsigned labels = plan.labelSizes.size();
  // The output's dims: its label's loop at the label's first place, a loop
  // of its own (paired with the label's) at each later one.
  SmallVector<AffineExpr> outExprs;
  SmallVector<std::pair<unsigned, unsigned>> diagonal; // (extra loop, label)
  SmallVector<utils::IteratorType> iterators(labels,
                                             utils::IteratorType::reduction);
  for (auto [axis, label] : llvm::enumerate(plan.outputLabels)) {
    bool repeated = llvm::is_contained(
        ArrayRef<int64_t>(plan.outputLabels).take_front(axis), label);
    unsigned loop = label;
    if (repeated) {
      loop = labels + diagonal.size();
      diagonal.push_back({loop, unsigned(label)});
      iterators.push_back(utils::IteratorType::parallel);
    }
    outExprs.push_back(getAffineDimExpr(loop, context));
    iterators[loop] = utils::IteratorType::parallel;
  }
  unsigned loops = labels + diagonal.size();
  bool reduces = llvm::is_contained(iterators, utils::IteratorType::reduction);
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    SmallVector<AffineExpr> exprs;
    for (auto [axis, label] : llvm::enumerate(plan.inputLabels[i]))
      exprs.push_back(plan.broadcast[i][axis]
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(label, context));
    maps.push_back(AffineMap::get(loops, 0, exprs, context));
    operands.push_back(ctx.tensor(i));
  }
  maps.push_back(AffineMap::get(loops, 0, outExprs, context));
  std::vector<int64_t> outShape = plan.outputShape();
  Value init = ctx.filled(outShape, dtype, ctx.scalar(dtype, 0));
  Type type = ctx.elementType(dtype);
  auto generic = b.create<linalg::GenericOp>(
      ctx.loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Arith a(nb, l, dtype, type);
        Value product = args[0];
        for (size_t i = 1; i + 1 < args.size(); ++i)
          product = a.mul(product, args[i]);
        if (!diagonal.empty()) {
          Value onDiagonal =
              nb.create<arith::ConstantOp>(l, nb.getBoolAttr(true));
          for (auto [loop, label] : diagonal)
            onDiagonal = nb.create<arith::AndIOp>(
                l, onDiagonal,
                nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                         nb.create<linalg::IndexOp>(l, loop),
                                         nb.create<linalg::IndexOp>(l, label)));
          product = a.select(onDiagonal, product, a.c(0));
        }
        // Without a reduction each output element is written once: the
        // destination is not read, so the generic stays fusible.
        nb.create<linalg::YieldOp>(l, reduces ? a.add(args.back(), product)
                                              : product);
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

/// Bincount: size is a compile-time constant (the result's shape); each
/// element of arr below it adds its weight (or 1 without weights) to its
/// bin, one at a time; a negative one is TensorFlow's error, through the
/// status.
static LogicalResult bincount(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> size = ctx.constantInts(1);
  if (failed(size))
    return failure();
  if (!ctx.shape(1).empty())
    return ctx.error() << "Shape must be rank 0 but is rank "
                       << ctx.shape(1).size();
  int64_t bins = size->front();
  if (bins < 0)
    return ctx.error() << "size (" << bins << ") must be non-negative";
  const std::vector<int64_t> &arr = ctx.shape(0), &weights = ctx.shape(2);
  int32_t dtype = ctx.dtype(2);
  int64_t n = 1, weightCount = 1;
  for (int64_t d : arr)
    n *= d;
  for (int64_t d : weights)
    weightCount *= d;
  bool weighted = weightCount > 0;
  if (weighted && weights != arr)
    return ctx.error() << "weights must be the same shape as arr or a "
                          "length-0 tensor; got weights shape "
                       << cleave::shapeString(weights) << " and arr shape "
                       << cleave::shapeString(arr);
  if (!ctx.elementType(dtype) || !ctx.elementType(dtype).isIntOrFloat() ||
      dtype == kBool)
    return unsupportedDType(ctx, dtype);
  Location loc = ctx.loc;
  Value flatArr = ctx.reshape(ctx.tensor(0), arr, {n}, kInt32);
  Value rows = weighted ? ctx.reshape(ctx.tensor(2), weights, {n, 1}, dtype)
                        : ctx.filled({n, 1}, dtype, ctx.scalar(dtype, 1));
  int64_t code = ctx.addError("Input arr must be non-negative!");
  Value result = scatterRows(
      ctx, /*initial=*/nullptr, rows, n, 1, bins, dtype, ScatterCombine::Add,
      [&](OpBuilder &b, Value row) -> std::array<Value, 3> {
        Value id = b.create<arith::IndexCastOp>(
            loc, b.getIndexType(),
            b.create<tensor::ExtractOp>(loc, flatArr, ValueRange{row}));
        Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
        Value limit = b.create<arith::ConstantIndexOp>(loc, bins);
        return {
            id,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, id, limit),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, zero)};
      },
      code);
  ctx.setOutput(0, ctx.reshape(result, {bins, 1}, {bins}, dtype), dtype);
  return success();
}

namespace {
/// The reduction of a sorted-segment op.
enum class SegmentReduce { Sum, Mean, Prod, Max, Min };
} // namespace

/// The value a segment no row has gets: the reduction's identity (0 for
/// Mean), the type's extremes for Max and Min.
static Value segmentIdentity(NodeLowering &ctx, SegmentReduce op,
                             int32_t dtype) {
  Type type = ctx.elementType(dtype);
  OpBuilder &b = ctx.b;
  if (op == SegmentReduce::Sum || op == SegmentReduce::Mean)
    return ctx.scalar(dtype, 0);
  if (op == SegmentReduce::Prod)
    return ctx.scalar(dtype, 1);
  bool isMax = op == SegmentReduce::Max;
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(
        ctx.loc, b.getFloatAttr(floatType, APFloat::getLargest(
                                               floatType.getFloatSemantics(),
                                               /*Negative=*/isMax)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt extreme =
      isUnsignedDType(dtype)
          ? (isMax ? APInt::getMinValue(width) : APInt::getMaxValue(width))
          : (isMax ? APInt::getSignedMinValue(width)
                   : APInt::getSignedMaxValue(width));
  return b.create<arith::ConstantOp>(ctx.loc, b.getIntegerAttr(type, extreme));
}

/// SegmentSum/Mean/Prod/Max/Min: the (sorted) segment ids are a
/// compile-time constant, as the output's shape depends on them (XLA
/// needs them so too); each data row is combined into its segment's row,
/// one at a time, and Mean divides by the constant counts.
template <SegmentReduce op>
static LogicalResult segmentReduce(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> ids = ctx.constantInts(1);
  if (failed(ids))
    return failure();
  const std::vector<int64_t> &data = ctx.shape(0);
  int32_t dtype = ctx.dtype(0);
  int64_t segments = 0;
  if (std::string error =
          ops::checkSortedSegments(data, ctx.shape(1), *ids, segments);
      !error.empty())
    return ctx.error() << error;
  if (dtype == kBool || !ctx.elementType(dtype) ||
      !ctx.elementType(dtype).isIntOrFloat())
    return unsupportedDType(ctx, dtype);
  int64_t rows = data[0], inner = 1;
  for (size_t d = 1; d < data.size(); ++d)
    inner *= data[d];
  std::vector<int64_t> outShape = data;
  outShape[0] = segments;
  Location loc = ctx.loc;
  Value flatData = ctx.reshape(ctx.tensor(0), data, {rows, inner}, dtype);
  Tensor idValues(kInt64, {rows});
  std::copy(ids->begin(), ids->end(), idValues.data<int64_t>());
  Value idTensor = ctx.constantTensor(idValues);
  Value initial =
      ctx.filled({segments, inner}, dtype, segmentIdentity(ctx, op, dtype));
  ScatterCombine combine = op == SegmentReduce::Prod  ? ScatterCombine::Mul
                           : op == SegmentReduce::Max ? ScatterCombine::Max
                           : op == SegmentReduce::Min ? ScatterCombine::Min
                                                      : ScatterCombine::Add;
  Value result = scatterRows(
      ctx, initial, flatData, rows, inner, segments, dtype, combine,
      [&](OpBuilder &b, Value row) -> std::array<Value, 3> {
        Value id = b.create<arith::IndexCastOp>(
            loc, b.getIndexType(),
            b.create<tensor::ExtractOp>(loc, idTensor, ValueRange{row}));
        Value no = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
        return {id, no, no};
      },
      /*errorCode=*/0);
  if (op == SegmentReduce::Mean) {
    // Empty segments keep their 0.
    Tensor counts(dtype, {segments, inner});
    std::vector<int64_t> perSegment(segments, 0);
    for (int64_t id : *ids)
      ++perSegment[id];
    for (int64_t r = 0; r < segments; ++r)
      for (int64_t j = 0; j < inner; ++j)
        counts.setFromDouble(r * inner + j,
                             double(std::max<int64_t>(perSegment[r], 1)));
    Type type = ctx.elementType(dtype);
    result = ctx.map({result, ctx.constantTensor(counts)}, {segments, inner},
                     dtype, [&](OpBuilder &b, Location l, ValueRange args) {
                       Arith a(b, l, dtype, type);
                       return a.isFloat() ? a.fdiv(args[0], args[1])
                                          : a.idiv(args[0], args[1], false);
                     });
  }
  ctx.setOutput(0, ctx.reshape(result, {segments, inner}, outShape, dtype),
                dtype);
  return success();
}

LogicalResult cleave::conversion::lowerUnaryElementwise(NodeLowering &ctx,
                                                      ops::UnaryOp op) {
  return unaryElementwise(ctx, op);
}

LogicalResult cleave::conversion::lowerActivationGrad(NodeLowering &ctx,
                                                    ActivationGrad op) {
  switch (op) {
  case ActivationGrad::Relu:
    return binaryElementwise(ctx, Binary::ReluGrad);
  case ActivationGrad::Relu6:
    return binaryElementwise(ctx, Binary::Relu6Grad);
  case ActivationGrad::Elu:
    return binaryElementwise(ctx, Binary::EluGrad);
  case ActivationGrad::Softplus:
    return binaryElementwise(ctx, Binary::SoftplusGrad);
  case ActivationGrad::Softsign:
    return binaryElementwise(ctx, Binary::SoftsignGrad);
  }
  llvm_unreachable("unknown activation gradient");
}

/// LinSpace(start, stop, num): num must be a compile-time constant (it is
/// the shape); start and stop may be computed. Element i is start + step *
/// i in the output type, the last one stop, as TensorFlow's kernel.
/// ClipByValue(t, min, max): max(min(t, max), min), the bounds scalars or
/// of t's shape, as the reference kernel checks.
static LogicalResult clipByValue(NodeLowering &ctx) {
  const std::vector<int64_t> &shape = ctx.shape(0);
  for (unsigned i : {1u, 2u})
    if (!ctx.shape(i).empty() && ctx.shape(i) != shape)
      return ctx.error() << "clip_value_min and clip_value_max must be either "
                            "scalars or have the same shape as t",
             failure();
  int32_t dtype = ctx.dtype(0);
  Type type = ctx.elementType(dtype);
  if (!type || dtype == cleave::kBool)
    return unsupportedDType(ctx, dtype);
  ctx.setOutput(
      0,
      ctx.map({ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)}, shape, dtype,
              [&](OpBuilder &b, Location loc, ValueRange args) {
                Arith a(b, loc, dtype, type);
                Value v = a.select(a.lt(args[2], args[0]), args[2], args[0]);
                return a.select(a.lt(v, args[1]), args[1], v);
              }),
      dtype);
  return success();
}

static LogicalResult linSpace(NodeLowering &ctx) {
  FailureOr<std::vector<int64_t>> shape = ctx.inferredOutputShape({2});
  if (failed(shape))
    return failure();
  int32_t dtype = ctx.dtype(0);
  if (dtype != cleave::kFloat && dtype != cleave::kDouble)
    return unsupportedDType(ctx, dtype);
  int64_t num = (*shape)[0];
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value start = b.create<tensor::ExtractOp>(loc, ctx.tensor(0), ValueRange{});
  Value stop = b.create<tensor::ExtractOp>(loc, ctx.tensor(1), ValueRange{});
  Type element = ctx.elementType(dtype);
  Value step = b.create<arith::DivFOp>(
      loc, b.create<arith::SubFOp>(loc, stop, start),
      b.create<arith::ConstantOp>(
          loc, b.getFloatAttr(element, double(std::max<int64_t>(num - 1, 1)))));
  Value last = num > 1 ? stop : start;
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{ctx.tensorType(*shape, dtype)}, ValueRange{},
      ValueRange{ctx.empty(*shape, dtype)},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(1)},
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value i = nb.create<linalg::IndexOp>(nloc, 0);
        Value isLast = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::eq, i,
            nb.create<arith::ConstantIndexOp>(nloc, num - 1));
        Value position = nb.create<arith::SIToFPOp>(
            nloc, element,
            nb.create<arith::IndexCastOp>(nloc, nb.getI64Type(), i));
        Value value = nb.create<arith::AddFOp>(
            nloc, start, nb.create<arith::MulFOp>(nloc, step, position));
        nb.create<linalg::YieldOp>(
            nloc,
            nb.create<arith::SelectOp>(nloc, isLast, last, value).getResult());
      });
  ctx.setOutput(0, generic.getResult(0), dtype);
  return success();
}

LoweringTable cleave::conversion::getMathLowerings() {
  return {
      {"Add", binary<Binary::Add>},
      {"AddV2", binary<Binary::Add>},
      {"Sub", binary<Binary::Sub>},
      {"Mul", binary<Binary::Mul>},
      {"Div", binary<Binary::Div>},
      {"RealDiv", binary<Binary::RealDiv>},
      {"FloorDiv", binary<Binary::FloorDiv>},
      {"FloorMod", binary<Binary::FloorMod>},
      {"TruncateDiv", binary<Binary::TruncateDiv>},
      {"MulNoNan", binary<Binary::MulNoNan>},
      {"TruncateMod", binary<Binary::TruncateMod>},
      {"Mod", binary<Binary::TruncateMod>},
      {"DivNoNan", binary<Binary::DivNoNan>},
      {"Maximum", binary<Binary::Max>},
      {"Minimum", binary<Binary::Min>},
      {"Pow", binary<Binary::Pow>},
      {"SquaredDifference", binary<Binary::SquaredDifference>},
      {"Atan2", binary<Binary::Atan2>},
      {"Einsum", einsum},
      {"Bincount", bincount},
      {"SegmentSum", segmentReduce<SegmentReduce::Sum>},
      {"SegmentMean", segmentReduce<SegmentReduce::Mean>},
      {"SegmentProd", segmentReduce<SegmentReduce::Prod>},
      {"SegmentMax", segmentReduce<SegmentReduce::Max>},
      {"SegmentMin", segmentReduce<SegmentReduce::Min>},
      {"Zeta", binary<Binary::Zeta>},
      {"Polygamma", binary<Binary::Polygamma>},
      {"Less", binary<Binary::Less>},
      {"LessEqual", binary<Binary::LessEqual>},
      {"Greater", binary<Binary::Greater>},
      {"GreaterEqual", binary<Binary::GreaterEqual>},
      {"Equal", binary<Binary::Equal>},
      {"NotEqual", binary<Binary::NotEqual>},
      {"LogicalAnd", binary<Binary::LogicalAnd>},
      {"LogicalOr", binary<Binary::LogicalOr>},
      {"LogicalNot", unary<Unary::LogicalNot>},
      {"SigmoidGrad", binary<Binary::SigmoidGrad>},
      {"TanhGrad", binary<Binary::TanhGrad>},
      {"RsqrtGrad", binary<Binary::RsqrtGrad>},
      {"SqrtGrad", binary<Binary::SqrtGrad>},
      {"ReciprocalGrad", binary<Binary::ReciprocalGrad>},
      {"Neg", unary<Unary::Neg>},
      {"Square", unary<Unary::Square>},
      {"Sqrt", unary<Unary::Sqrt>},
      {"Rsqrt", unary<Unary::Rsqrt>},
      {"Exp", unary<Unary::Exp>},
      {"Log", unary<Unary::Log>},
      {"Log1p", unary<Unary::Log1p>},
      {"Abs", unary<Unary::Abs>},
      {"Sign", unary<Unary::Sign>},
      {"Sigmoid", unary<Unary::Sigmoid>},
      {"Tanh", unary<Unary::Tanh>},
      {"Reciprocal", unary<Unary::Reciprocal>},
      {"Floor", unary<Unary::Floor>},
      {"Ceil", unary<Unary::Ceil>},
      {"Rint", unary<Unary::Rint>},
      {"Round", unary<Unary::Round>},
      {"Expm1", unary<Unary::Expm1>},
      {"Erf", unary<Unary::Erf>},
      {"Erfc", unary<Unary::Erfc>},
      {"Lgamma", unary<Unary::Lgamma>},
      {"Digamma", unary<Unary::Digamma>},
      {"Sin", unary<Unary::Sin>},
      {"Cos", unary<Unary::Cos>},
      {"Tan", unary<Unary::Tan>},
      {"Asin", unary<Unary::Asin>},
      {"Acos", unary<Unary::Acos>},
      {"Atan", unary<Unary::Atan>},
      {"Sinh", unary<Unary::Sinh>},
      {"Cosh", unary<Unary::Cosh>},
      {"Asinh", unary<Unary::Asinh>},
      {"Acosh", unary<Unary::Acosh>},
      {"Atanh", unary<Unary::Atanh>},
      {"IsNan", classify<Classify::IsNan>},
      {"IsInf", classify<Classify::IsInf>},
      {"IsFinite", classify<Classify::IsFinite>},
      {"AddN", addN},
      {"Cast", cast},
      {"Select", select},
      {"SelectV2", selectV2},
      {"Sum", reduce<Reduce::Sum>},
      {"Mean", reduce<Reduce::Mean>},
      {"Prod", reduce<Reduce::Prod>},
      {"Max", reduce<Reduce::Max>},
      {"All", boolReduce<true>},
      {"Any", boolReduce<false>},
      {"Min", reduce<Reduce::Min>},
      {"ArgMax", argReduce<true>},
      {"ArgMin", argReduce<false>},
      {"MatMul", matMul},
      {"Cumsum", scan<false>},
      {"Cumprod", scan<true>},
      {"BatchMatMulV2", batchMatMul},
      {"UnsortedSegmentSum", unsortedSegmentSum},
      {"Range", lowerCompileTimeOnly},
      {"LinSpace", linSpace},
      {"ClipByValue", clipByValue},
  };
}
