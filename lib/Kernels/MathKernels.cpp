//===- MathKernels.cpp - element-wise, reduction and matrix kernels -------===//

#include "KernelContext.h"

#include "cleave/Ops/Einsum.h"
#include "cleave/Ops/ElementwiseOps.h"
#include "cleave/Ops/SegmentChecks.h"
#include "cleave/Support/SpecialFunctions.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

bool cleave::broadcastShape(const std::vector<int64_t> &a,
                            const std::vector<int64_t> &b,
                            std::vector<int64_t> &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

std::vector<int64_t>
cleave::interp::broadcastIndices(const std::vector<int64_t> &in,
                                 const std::vector<int64_t> &out) {
  int64_t n = 1;
  for (int64_t d : out)
    n *= d;
  std::vector<int64_t> indices(n);
  size_t offset = out.size() - in.size();
  std::vector<int64_t> index(out.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d)
      src = src * in[d] + (in[d] == 1 ? 0 : index[d + offset]);
    indices[flat] = src;
    for (int64_t d = int64_t(out.size()) - 1; d >= 0; --d) {
      if (++index[d] < out[d])
        break;
      index[d] = 0;
    }
  }
  return indices;
}

/// visitNumeric as a LogicalResult, for kernels that report unsupported
/// dtypes.
template <typename Fn>
static LogicalResult dispatchNumeric(int32_t dt, Fn &&fn) {
  return success(visitNumeric(dt, std::forward<Fn>(fn)));
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
  MulNoNan,
  DivNoNan,
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
  NotEqual
};
} // namespace

static bool isComparison(Binary op) { return op >= Binary::Less; }

template <typename T> static T wrappingNeg(T x) {
  if constexpr (kWraps<T>)
    return wrappingSub(T(0), x);
  else
    return -x; // -0.0 for 0.0
}

/// INT_MIN / -1, which overflows (undefined in C++, a trap on x86): its
/// quotient wraps to INT_MIN and its remainder is 0, as in XLA and in
/// compiled code (MathLowerings.cpp).
template <typename T> static bool overflowsDivision(T x, T y) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return x == std::numeric_limits<T>::min() && y == T(-1);
  return false;
}

template <typename T> static bool apply(Binary op, T x, T y, T &r, bool &b) {
  switch (op) {
  case Binary::Add:
    r = wrappingAdd(x, y);
    return true;
  case Binary::Sub:
    r = wrappingSub(x, y);
    return true;
  case Binary::Mul:
    r = wrappingMul(x, y);
    return true;
  case Binary::Div:
  case Binary::RealDiv:
    if constexpr (std::is_integral_v<T>) {
      if (y == 0)
        return false;
    }
    r = overflowsDivision(x, y) ? x : x / y;
    return true;
  case Binary::DivNoNan:
    r = y == T(0) ? T(0) : overflowsDivision(x, y) ? x : T(x / y);
    return true;
  case Binary::FloorDiv:
    if constexpr (std::is_integral_v<T>) {
      if (y == 0)
        return false;
      if (overflowsDivision(x, y)) {
        r = x;
        return true;
      }
      T q = x / y;
      if constexpr (std::is_signed_v<T>)
        if ((x % y != 0) && ((x < 0) != (y < 0)))
          --q;
      r = q;
    } else {
      r = std::floor(x / y);
    }
    return true;
  case Binary::MulNoNan:
    // 0 where y is 0, even where x is infinite or NaN.
    r = y == T(0) ? T(0) : wrappingMul(x, y);
    return true;
  case Binary::TruncateDiv:
    // Towards zero: C's division (TruncateDiv).
    if constexpr (std::is_integral_v<T>) {
      if (y == 0)
        return false;
      r = overflowsDivision(x, y) ? x : T(x / y);
    } else {
      r = std::trunc(x / y);
    }
    return true;
  case Binary::TruncateMod:
    // With the dividend's sign: C's remainder (Mod, TruncateMod).
    if constexpr (std::is_integral_v<T>) {
      if (y == 0)
        return false;
      r = overflowsDivision(x, y) ? T(0) : T(x % y);
    } else {
      r = std::fmod(x, y);
    }
    return true;
  case Binary::FloorMod:
    if constexpr (std::is_integral_v<T>) {
      if (y == 0)
        return false;
      T m = overflowsDivision(x, y) ? T(0) : T(x % y);
      if constexpr (std::is_signed_v<T>)
        if (m != 0 && ((m < 0) != (y < 0)))
          m += y;
      r = m;
    } else {
      T m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0)))
        m += y;
      r = m;
    }
    return true;
  case Binary::Max:
    r = x > y ? x : y;
    return true;
  case Binary::Min:
    r = x < y ? x : y;
    return true;
  case Binary::Pow:
    if constexpr (std::is_integral_v<T>) {
      // Exact, by squaring, wrapping as TensorFlow's integer kernel does;
      // it refuses negative exponents (binaryKernel says so).
      if constexpr (std::is_signed_v<T>)
        if (y < 0)
          return false;
      uint64_t result = 1, base = uint64_t(x);
      for (uint64_t e = uint64_t(y); e; e >>= 1) {
        if (e & 1)
          result *= base;
        base *= base;
      }
      r = T(result);
    } else {
      r = T(std::pow(double(x), double(y)));
    }
    return true;
  case Binary::SquaredDifference:
    r = wrappingMul(wrappingSub(x, y), wrappingSub(x, y));
    return true;
  case Binary::Atan2:
    r = T(std::atan2(double(x), double(y)));
    return true;
  case Binary::Zeta:
    r = T(special::zeta(double(x), double(y)));
    return true;
  case Binary::Polygamma:
    r = T(special::polygamma(double(x), double(y)));
    return true;
  case Binary::Less:
    b = x < y;
    return true;
  case Binary::LessEqual:
    b = x <= y;
    return true;
  case Binary::Greater:
    b = x > y;
    return true;
  case Binary::GreaterEqual:
    b = x >= y;
    return true;
  case Binary::Equal:
    b = x == y;
    return true;
  case Binary::NotEqual:
    b = x != y;
    return true;
  }
  return false;
}

static LogicalResult binaryKernel(KernelContext &ctx, Binary op) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  if (a.dtype() != b.dtype())
    return ctx.error() << "inputs have different dtypes, "
                       << dtypeName(a.dtype()) << " and "
                       << dtypeName(b.dtype());
  std::vector<int64_t> shape;
  if (!broadcastShape(a.shape(), b.shape(), shape))
    return ctx.error() << "Incompatible shapes: " << shapeString(a.shape())
                       << " vs. " << shapeString(b.shape());
  Tensor out(isComparison(op) ? kBool : a.dtype(), shape);
  auto ia = broadcastIndices(a.shape(), shape);
  auto ib = broadcastIndices(b.shape(), shape);
  bool refused = false; // a division by zero, a negative integer power
  LogicalResult typed = dispatchNumeric(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *x = a.data<T>(), *y = b.data<T>();
    for (size_t i = 0; i < ia.size(); ++i) {
      T r{};
      bool c = false;
      if (!apply(op, x[ia[i]], y[ib[i]], r, c)) {
        refused = true;
        return;
      }
      if (isComparison(op))
        out.data<bool>()[i] = c;
      else
        out.data<T>()[i] = r;
    }
  });
  if (failed(typed)) {
    if (a.dtype() == kBool && (op == Binary::Equal || op == Binary::NotEqual)) {
      for (size_t i = 0; i < ia.size(); ++i)
        out.data<bool>()[i] = (a.data<bool>()[ia[i]] ==
                               b.data<bool>()[ib[i]]) == (op == Binary::Equal);
    } else {
      return ctx.error() << "dtype " << dtypeName(a.dtype())
                         << " is not supported";
    }
  }
  if (refused)
    return ctx.error() << (op == Binary::Pow
                               ? "Integers to negative integer powers are "
                                 "not allowed"
                               : "Integer division by zero");
  ctx.outputs[0] = out;
  return success();
}

template <Binary op> static LogicalResult binary(KernelContext &ctx) {
  return binaryKernel(ctx, op);
}

namespace {
using Unary = ops::UnaryOp;
} // namespace

template <typename T> static T applyUnary(Unary op, T x) {
  switch (op) {
  case Unary::Neg:
    return wrappingNeg(x);
  case Unary::Square:
    return wrappingMul(x, x);
  case Unary::Sqrt:
    return T(std::sqrt(double(x)));
  case Unary::Rsqrt:
    return T(1 / std::sqrt(double(x)));
  case Unary::Exp:
    return T(std::exp(double(x)));
  case Unary::Log:
    return T(std::log(double(x)));
  case Unary::Log1p:
    return T(std::log1p(double(x)));
  case Unary::Abs:
    return x < 0 ? wrappingNeg(x) : x;
  case Unary::Sign:
    return T(x > 0 ? 1 : (x < 0 ? -1 : 0));
  case Unary::Sigmoid:
    return T(1 / (1 + std::exp(-double(x))));
  case Unary::Tanh:
    return T(std::tanh(double(x)));
  case Unary::Reciprocal:
    return T(1 / double(x));
  case Unary::Floor:
    return T(std::floor(double(x)));
  case Unary::Relu:
    return x > 0 ? x : T(0);
  case Unary::Relu6:
    return x < 0 ? T(0) : (x > 6 ? T(6) : x);
  case Unary::Elu:
    return x > 0 ? x : T(std::expm1(double(x)));
  case Unary::Ceil:
    return T(std::ceil(double(x)));
  // Both round half to even (the default rounding mode), as TensorFlow's.
  case Unary::Rint:
  case Unary::Round:
    return T(std::nearbyint(double(x)));
  case Unary::Expm1:
    return T(std::expm1(double(x)));
  case Unary::Erf:
    return T(std::erf(double(x)));
  case Unary::Erfc:
    return T(special::erfc(double(x)));
  case Unary::Lgamma:
    return T(special::lgamma(double(x)));
  case Unary::Digamma:
    return T(special::digamma(double(x)));
  case Unary::Sin:
    return T(std::sin(double(x)));
  case Unary::Cos:
    return T(std::cos(double(x)));
  case Unary::Tan:
    return T(std::tan(double(x)));
  case Unary::Asin:
    return T(std::asin(double(x)));
  case Unary::Acos:
    return T(std::acos(double(x)));
  case Unary::Atan:
    return T(std::atan(double(x)));
  case Unary::Sinh:
    return T(std::sinh(double(x)));
  case Unary::Cosh:
    return T(std::cosh(double(x)));
  case Unary::Asinh:
    return T(std::asinh(double(x)));
  case Unary::Acosh:
    return T(std::acosh(double(x)));
  case Unary::Atanh:
    return T(std::atanh(double(x)));
  case Unary::Softplus:
    if constexpr (std::is_floating_point_v<T>) {
      // As TensorFlow's kernel: x where exp(x) might overflow, exp(x) where
      // 1 + exp(x) rounds to 1, in between log(exp(x) + 1).
      const double threshold =
          std::log(double(std::numeric_limits<T>::epsilon())) + 2;
      double v = double(x);
      return T(v > -threshold  ? v
               : v < threshold ? std::exp(v)
                               : std::log(std::exp(v) + 1));
    }
    return x;
  case Unary::Softsign:
    return T(double(x) / (1 + std::abs(double(x))));
  case Unary::LogicalNot:
    return T(x == T(0));
  case Unary::Identity:
    return x;
  }
  return x;
}

/// Ops TensorFlow computes in floating point only: its op definitions of
/// Tan, Asin, Acos and Atan allow integers, but no CPU kernel takes them
/// (nor do the special functions, which take floats only).
static constexpr bool isFloatOnly(Unary op) {
  return op == Unary::Tan || op == Unary::Asin || op == Unary::Acos ||
         op == Unary::Atan || op == Unary::Erfc || op == Unary::Lgamma ||
         op == Unary::Digamma;
}

template <Unary op>
LogicalResult cleave::interp::unaryKernel(KernelContext &ctx) {
  const Tensor &a = ctx.inputs[0];
  if (isFloatOnly(op) && a.dtype() != kFloat && a.dtype() != kDouble)
    return ctx.error() << "dtype " << dtypeName(a.dtype())
                       << " is not supported";
  Tensor out(a.dtype(), a.shape());
  if (failed(dispatchNumeric(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < a.numElements(); ++i)
          out.data<T>()[i] = applyUnary(op, a.data<T>()[i]);
      })))
    return ctx.error() << "dtype " << dtypeName(a.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

// The activations' table is NNKernels.cpp's.
template LogicalResult
cleave::interp::unaryKernel<Unary::Relu>(KernelContext &);
template LogicalResult
cleave::interp::unaryKernel<Unary::Relu6>(KernelContext &);
template LogicalResult cleave::interp::unaryKernel<Unary::Elu>(KernelContext &);
template LogicalResult
cleave::interp::unaryKernel<Unary::Softplus>(KernelContext &);
template LogicalResult
cleave::interp::unaryKernel<Unary::Softsign>(KernelContext &);

namespace {
using Classify = ops::ClassifyOp;
} // namespace

template <Classify kind> static LogicalResult classify(KernelContext &ctx) {
  const Tensor &x = ctx.inputs[0];
  Tensor out(kBool, x.shape());
  for (int64_t i = 0; i < out.numElements(); ++i) {
    double v = x.getAsDouble(i);
    out.data<bool>()[i] = kind == Classify::IsNan   ? std::isnan(v)
                          : kind == Classify::IsInf ? std::isinf(v)
                                                    : std::isfinite(v);
  }
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult logicalNot(KernelContext &ctx) {
  Tensor out(kBool, ctx.inputs[0].shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.data<bool>()[i] = !ctx.inputs[0].data<bool>()[i];
  ctx.outputs[0] = out;
  return success();
}

template <bool isAnd> static LogicalResult logical(KernelContext &ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  std::vector<int64_t> shape;
  if (!broadcastShape(a.shape(), b.shape(), shape))
    return ctx.error() << "Incompatible shapes: " << shapeString(a.shape())
                       << " vs. " << shapeString(b.shape());
  Tensor out(kBool, shape);
  auto ia = broadcastIndices(a.shape(), shape);
  auto ib = broadcastIndices(b.shape(), shape);
  for (size_t i = 0; i < ia.size(); ++i) {
    bool x = a.data<bool>()[ia[i]], y = b.data<bool>()[ib[i]];
    out.data<bool>()[i] = isAnd ? (x && y) : (x || y);
  }
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult addN(KernelContext &ctx) {
  Tensor out(ctx.inputs[0].dtype(), ctx.inputs[0].shape());
  for (const Tensor &t : ctx.inputs)
    if (t.shape() != out.shape())
      return ctx.error() << "Inputs to operation AddN must have the same size "
                            "and shape: "
                         << shapeString(out.shape())
                         << " != " << shapeString(t.shape());
  if (failed(dispatchNumeric(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (const Tensor &t : ctx.inputs)
          for (int64_t i = 0; i < out.numElements(); ++i)
            out.data<T>()[i] = wrappingAdd(out.data<T>()[i], t.data<T>()[i]);
      })))
    return ctx.error() << "dtype " << dtypeName(out.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult cast(KernelContext &ctx) {
  auto dst = ctx.getType("DstT");
  if (!dst || !dtypeSize(*dst))
    return ctx.error() << "unsupported DstT";
  const Tensor &in = ctx.inputs[0];
  Tensor out(*dst, in.shape());
  // Element by element in C++'s own conversions from the source type (a
  // detour through int64 or double would wrap uint64 values above
  // INT64_MAX and round large integers twice).
  auto convertFrom = [&](auto dstTag) {
    using T = decltype(dstTag);
    bool typed = visitNumeric(in.dtype(), [&](auto srcTag) {
      using S = decltype(srcTag);
      for (int64_t i = 0; i < in.numElements(); ++i)
        out.data<T>()[i] = T(in.data<S>()[i]);
    });
    if (!typed) // bool
      for (int64_t i = 0; i < in.numElements(); ++i)
        out.data<T>()[i] = T(in.getAsInt(i));
  };
  if (failed(dispatchNumeric(*dst, convertFrom))) {
    if (*dst != kBool)
      return ctx.error() << "unsupported DstT";
    for (int64_t i = 0; i < in.numElements(); ++i)
      out.data<bool>()[i] = in.getAsDouble(i) != 0;
  }
  ctx.outputs[0] = out;
  return success();
}

namespace {
using Reduce = ops::ReduceOp;
} // namespace

template <Reduce op> static LogicalResult reduce(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  int64_t rank = in.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : toInts(ctx.inputs[1])) {
    if (axis < -rank || axis >= rank)
      return ctx.error() << "Invalid reduction dimension (" << axis
                         << " for input with " << rank << " dimension(s)";
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  bool keepDims = ctx.getBool("keep_dims").value_or(false);
  std::vector<int64_t> outShape, keptShape;
  for (int64_t d = 0; d < rank; ++d) {
    keptShape.push_back(reduced[d] ? 1 : in.shape()[d]);
    if (!reduced[d])
      outShape.push_back(in.shape()[d]);
    else if (keepDims)
      outShape.push_back(1);
  }
  Tensor out(in.dtype(), outShape);
  int64_t n = in.numElements(), m = out.numElements();
  std::vector<int64_t> count(m, 0);
  if (failed(dispatchNumeric(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        // Floats accumulate in double: in float, a sum of a billion 2.25s
        // stops growing at 2^26, where TensorFlow's tree reduction gives
        // 4.5e9. Integers wrap in their own type, as TensorFlow's do.
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
        std::vector<Acc> acc(m, op == Reduce::Prod  ? Acc(1)
                                : op == Reduce::Max ? Acc(
                                      std::numeric_limits<T>::lowest())
                                : op == Reduce::Min
                                    ? Acc(std::numeric_limits<T>::max())
                                    : Acc(0));
        const T *x = in.data<T>();
        // Each input element's output element, counted along as the
        // index advances (no table of n targets: n may be a billion).
        std::vector<int64_t> index(rank, 0);
        for (int64_t i = 0; i < n; ++i) {
          int64_t t = 0;
          for (int64_t d = 0; d < rank; ++d)
            t = t * keptShape[d] + (reduced[d] ? 0 : index[d]);
          for (int64_t d = rank - 1; d >= 0; --d) {
            if (++index[d] < in.shape()[d])
              break;
            index[d] = 0;
          }
          Acc &r = acc[t];
          ++count[t];
          switch (op) {
          case Reduce::Sum:
          case Reduce::Mean:
            r = kWraps<T> ? Acc(wrappingAdd(T(r), x[i])) : Acc(r + x[i]);
            break;
          case Reduce::Prod:
            r = kWraps<T> ? Acc(wrappingMul(T(r), x[i])) : Acc(r * x[i]);
            break;
          case Reduce::Max:
            r = std::max(r, Acc(x[i]));
            break;
          case Reduce::Min:
            r = std::min(r, Acc(x[i]));
            break;
          }
        }
        T *o = out.data<T>();
        for (int64_t i = 0; i < m; ++i)
          o[i] = op == Reduce::Mean && count[i] ? T(acc[i] / Acc(count[i]))
                                                : T(acc[i]);
      })))
    return ctx.error() << "dtype " << dtypeName(in.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// All and Any: Min and Max of the bools as bytes.
template <Reduce op> static LogicalResult boolReduce(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  if (in.dtype() != kBool)
    return ctx.error() << "dtype " << dtypeName(in.dtype())
                       << " is not supported";
  Tensor bytes(kUInt8, in.shape());
  for (int64_t i = 0; i < in.numElements(); ++i)
    bytes.data<uint8_t>()[i] = in.data<bool>()[i];
  ctx.inputs[0] = bytes;
  if (failed(reduce<op>(ctx)))
    return failure();
  const Tensor &reduced = ctx.outputs[0];
  Tensor out(kBool, reduced.shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.data<bool>()[i] = reduced.data<uint8_t>()[i] != 0;
  ctx.outputs[0] = out;
  return success();
}

/// Cumsum and Cumprod along `axis`; `exclusive` leaves each element out
/// of its own result, `reverse` scans from the end.
template <bool isProduct> static LogicalResult scan(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  if (ctx.inputs[1].rank() != 0)
    return ctx.error() << "ScanOp: axis must be a scalar, not "
                       << shapeString(ctx.inputs[1].shape());
  int64_t rank = in.rank(), axis = toInts(ctx.inputs[1]).at(0);
  if (axis < -rank || axis >= rank)
    return ctx.error() << "ScanOp: Expected scan axis in the range [" << -rank
                       << ", " << rank << "), but got " << axis;
  if (axis < 0)
    axis += rank;
  bool exclusive = ctx.getBool("exclusive").value_or(false);
  bool reverse = ctx.getBool("reverse").value_or(false);
  int64_t outer = 1, inner = 1, size = in.shape()[axis];
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis)
      outer *= in.shape()[d];
    if (d > axis)
      inner *= in.shape()[d];
  }
  Tensor out(in.dtype(), in.shape());
  if (failed(dispatchNumeric(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *x = in.data<T>();
        T *o = out.data<T>();
        for (int64_t i = 0; i < outer; ++i)
          for (int64_t j = 0; j < inner; ++j) {
            T acc = isProduct ? T(1) : T(0);
            for (int64_t step = 0; step < size; ++step) {
              int64_t k = reverse ? size - 1 - step : step;
              int64_t at = (i * size + k) * inner + j;
              if (exclusive)
                o[at] = acc;
              acc = isProduct ? wrappingMul(acc, x[at])
                              : wrappingAdd(acc, x[at]);
              if (!exclusive)
                o[at] = acc;
            }
          }
      })))
    return ctx.error() << "dtype " << dtypeName(in.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

template <bool isMax> static LogicalResult argReduce(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  int64_t rank = in.rank(), axis = toInts(ctx.inputs[1]).at(0);
  if (axis < -rank || axis >= rank)
    return ctx.error() << "Expected dimension in the range [" << -rank << ", "
                       << rank << "), but got " << axis;
  if (axis < 0)
    axis += rank;
  if (in.shape()[axis] == 0)
    return ctx.error() << "Reduction axis " << axis << " is empty in shape "
                       << shapeString(in.shape());
  std::vector<int64_t> outShape;
  int64_t outer = 1, inner = 1, size = in.shape()[axis];
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis)
      outShape.push_back(in.shape()[d]);
    if (d < axis)
      outer *= in.shape()[d];
    if (d > axis)
      inner *= in.shape()[d];
  }
  int32_t outType = ctx.getType("output_type").value_or(kInt64);
  Tensor out(outType, outShape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < size; ++k) {
        double v = in.getAsDouble((o * size + k) * inner + i);
        double b = in.getAsDouble((o * size + best) * inner + i);
        if (isMax ? v > b : v < b)
          best = k;
      }
      if (outType == kInt32)
        out.data<int32_t>()[o * inner + i] = best;
      else
        out.data<int64_t>()[o * inner + i] = best;
    }
  ctx.outputs[0] = out;
  return success();
}

static LogicalResult matMul(KernelContext &ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error() << "In[0] and In[1] must be matrices";
  bool ta = ctx.getBool("transpose_a").value_or(false);
  bool tb = ctx.getBool("transpose_b").value_or(false);
  int64_t m = a.shape()[ta ? 1 : 0], k = a.shape()[ta ? 0 : 1];
  int64_t kb = b.shape()[tb ? 1 : 0], n = b.shape()[tb ? 0 : 1];
  if (k != kb)
    return ctx.error() << "Matrix size-incompatible: In[0]: "
                       << shapeString(a.shape())
                       << ", In[1]: " << shapeString(b.shape());
  Tensor out(a.dtype(), {m, n});
  if (failed(dispatchNumeric(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *x = a.data<T>(), *y = b.data<T>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            // Accumulate in double for floats: the oracle should be exact.
            double acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += double(x[ta ? p * m + i : i * k + p]) *
                     double(y[tb ? j * k + p : p * n + j]);
            out.data<T>()[i * n + j] = T(acc);
          }
      })))
    return ctx.error() << "dtype " << dtypeName(a.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}
/// SelectV2: broadcast of condition, then and else.
static LogicalResult selectV2(KernelContext &ctx) {
  const Tensor &c = ctx.inputs[0], &t = ctx.inputs[1], &e = ctx.inputs[2];
  std::vector<int64_t> te, shape;
  if (!broadcastShape(t.shape(), e.shape(), te) ||
      !broadcastShape(c.shape(), te, shape))
    return ctx.error() << "condition, then and else shapes are not "
                          "broadcastable: "
                       << shapeString(c.shape()) << ", "
                       << shapeString(t.shape()) << ", "
                       << shapeString(e.shape());
  auto ic = broadcastIndices(c.shape(), shape);
  auto it = broadcastIndices(t.shape(), shape);
  auto ie = broadcastIndices(e.shape(), shape);
  Tensor out(t.dtype(), shape);
  for (size_t i = 0; i < ic.size(); ++i) {
    const Tensor &src = c.data<bool>()[ic[i]] ? t : e;
    int64_t j = c.data<bool>()[ic[i]] ? it[i] : ie[i];
    copyElements(out, i, src, j, 1);
  }
  ctx.outputs[0] = out;
  return success();
}

/// Select: as SelectV2, except that a vector condition picks whole rows of
/// higher-rank operands.
static LogicalResult select(KernelContext &ctx) {
  Tensor &c = ctx.inputs[0];
  if (c.rank() == 1 && ctx.inputs[1].rank() > 1) {
    std::vector<int64_t> shape(ctx.inputs[1].rank(), 1);
    shape[0] = c.shape()[0];
    c = c.reshaped(shape);
  }
  return selectV2(ctx);
}

static LogicalResult range(KernelContext &ctx) {
  double start = ctx.inputs[0].getAsDouble(0),
         limit = ctx.inputs[1].getAsDouble(0),
         delta = ctx.inputs[2].getAsDouble(0);
  // As StrCat prints numbers: 1, not 1.000000e+00.
  auto text = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return std::string(buffer);
  };
  if (delta == 0)
    return ctx.error() << "Requires delta != 0: " << text(delta);
  if (delta > 0 && start > limit)
    return ctx.error() << "Requires start <= limit when delta > 0: "
                       << text(start) << "/" << text(limit);
  if (delta < 0 && start < limit)
    return ctx.error() << "Requires start >= limit when delta < 0: "
                       << text(start) << "/" << text(limit);
  // In the inputs' type, as TensorFlow's kernel: the length, and each
  // element the previous one plus delta (floats accumulate its rounding).
  Tensor out;
  LogicalResult typed = dispatchNumeric(ctx.inputs[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T first = ctx.inputs[0].data<T>()[0], last = ctx.inputs[1].data<T>()[0],
      step = ctx.inputs[2].data<T>()[0];
    int64_t n;
    if constexpr (std::is_integral_v<T>) {
      auto magnitude = [](int64_t v) { return v < 0 ? -v : v; };
      n = (magnitude(int64_t(last) - int64_t(first)) + magnitude(step) - 1) /
          magnitude(step);
    } else {
      n = int64_t(std::ceil(std::fabs((last - first) / step)));
    }
    out = Tensor(ctx.inputs[0].dtype(), {n});
    T value = first;
    for (int64_t i = 0; i < n; ++i) {
      out.data<T>()[i] = value;
      value = wrappingAdd(value, step);
    }
  });
  if (failed(typed))
    return ctx.error() << "dtype " << dtypeName(ctx.inputs[0].dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// ClipByValue(t, min, max): min(max... as TensorFlow's functor computes it,
/// max(min(t, max), min); the bounds are scalars or of t's shape.
static LogicalResult clipByValue(KernelContext &ctx) {
  const Tensor &t = ctx.inputs[0], &low = ctx.inputs[1], &high = ctx.inputs[2];
  for (const Tensor *bound : {&low, &high})
    if (!bound->shape().empty() && bound->shape() != t.shape())
      return ctx.error() << "clip_value_min and clip_value_max must be "
                            "either scalars or have the same shape as t";
  if (low.dtype() != t.dtype() || high.dtype() != t.dtype())
    return ctx.error() << "inputs have different dtypes";
  Tensor out(t.dtype(), t.shape());
  bool lowScalar = low.shape().empty(), highScalar = high.shape().empty();
  LogicalResult typed = dispatchNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      T lo = low.data<T>()[lowScalar ? 0 : i];
      T hi = high.data<T>()[highScalar ? 0 : i];
      T v = t.data<T>()[i];
      v = hi < v ? hi : v;
      out.data<T>()[i] = v < lo ? lo : v;
    }
  });
  if (failed(typed))
    return ctx.error() << "dtype " << dtypeName(t.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// LinSpace(start, stop, num): num evenly spaced values from start to stop,
/// computed in the output type as TensorFlow's kernel does (start + step *
/// i, the last one stop itself).
static LogicalResult linSpace(KernelContext &ctx) {
  static const char *names[] = {"start", "stop", "num"};
  for (unsigned i = 0; i < 3; ++i)
    if (!ctx.inputs[i].shape().empty())
      return ctx.error() << names[i] << " must be a scalar, not shape "
                         << shapeString(ctx.inputs[i].shape());
  int64_t num = ctx.inputs[2].getAsInt(0);
  if (num <= 0)
    return ctx.error() << "Requires num > 0: " << num;
  int32_t dtype = ctx.inputs[0].dtype();
  Tensor out(dtype, {num});
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    T start = ctx.inputs[0].data<T>()[0], stop = ctx.inputs[1].data<T>()[0];
    T *values = out.data<T>();
    T step = num > 1 ? (stop - start) / T(num - 1) : T(0);
    for (int64_t i = 0; i + 1 < num; ++i)
      values[i] = start + step * T(i);
    values[num - 1] = num > 1 ? stop : start;
  };
  if (dtype == kFloat)
    fill(float{});
  else if (dtype == kDouble)
    fill(double{});
  else
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

namespace {
/// The gradient helpers that take the forward output y and dy:
/// SigmoidGrad, TanhGrad, RsqrtGrad, SqrtGrad and ReciprocalGrad.
enum class OutputGrad { Sigmoid, Tanh, Rsqrt, Sqrt, Reciprocal };
} // namespace

template <OutputGrad kind> static LogicalResult outputGrad(KernelContext &ctx) {
  const Tensor &y = ctx.inputs[0], &dy = ctx.inputs[1];
  if (y.shape() != dy.shape())
    return ctx.error() << "y and dy must have the same shape: "
                       << shapeString(y.shape()) << " vs. "
                       << shapeString(dy.shape());
  Tensor out(y.dtype(), y.shape());
  for (int64_t i = 0; i < y.numElements(); ++i) {
    double v = y.getAsDouble(i), g = dy.getAsDouble(i), r = 0;
    switch (kind) {
    case OutputGrad::Sigmoid:
      r = g * v * (1 - v);
      break;
    case OutputGrad::Tanh:
      r = g * (1 - v * v);
      break;
    case OutputGrad::Rsqrt:
      r = -0.5 * g * v * v * v;
      break;
    case OutputGrad::Sqrt:
      r = 0.5 * g / v;
      break;
    case OutputGrad::Reciprocal:
      r = -g * v * v;
      break;
    }
    out.setFromDouble(i, r);
  }
  ctx.outputs[0] = out;
  return success();
}

/// BatchMatMulV2: matrix products over broadcast batch dimensions, with
/// adjoints (transposes, for real dtypes).
static LogicalResult batchMatMul(KernelContext &ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  if (a.rank() < 2 || b.rank() < 2)
    return ctx.error() << "In[0] and In[1] must have rank >= 2, but are "
                       << shapeString(a.shape()) << " and "
                       << shapeString(b.shape());
  bool adjA = ctx.getBool("adj_x").value_or(false);
  bool adjB = ctx.getBool("adj_y").value_or(false);
  int64_t ra = a.rank(), rb = b.rank();
  int64_t m = a.shape()[ra - (adjA ? 1 : 2)],
          k = a.shape()[ra - (adjA ? 2 : 1)];
  int64_t kb = b.shape()[rb - (adjB ? 1 : 2)],
          n = b.shape()[rb - (adjB ? 2 : 1)];
  std::vector<int64_t> batchA(a.shape().begin(), a.shape().end() - 2),
      batchB(b.shape().begin(), b.shape().end() - 2), batch;
  if (!broadcastShape(batchA, batchB, batch))
    return ctx.error() << "In[0] and In[1] must have compatible batch "
                          "dimensions: "
                       << shapeString(a.shape()) << " vs. "
                       << shapeString(b.shape());
  if (k != kb)
    return ctx.error() << "Matrix size-incompatible: In[0]: "
                       << shapeString(a.shape())
                       << ", In[1]: " << shapeString(b.shape());
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  Tensor out(a.dtype(), shape);
  std::vector<int64_t> ia = broadcastIndices(batchA, batch),
                       ib = broadcastIndices(batchB, batch);
  for (size_t p = 0; p < ia.size(); ++p) {
    int64_t baseA = ia[p] * m * k, baseB = ib[p] * k * n, baseOut = p * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        // Accumulate in double: the oracle should be exact.
        double acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += a.getAsDouble(baseA + (adjA ? q * m + i : i * k + q)) *
                 b.getAsDouble(baseB + (adjB ? j * k + q : q * n + j));
        if (!out.setFromDouble(baseOut + i * n + j, acc))
          return ctx.error()
                 << "dtype " << dtypeName(a.dtype()) << " is not supported";
      }
  }
  ctx.outputs[0] = out;
  return success();
}

/// UnsortedSegmentSum: output[segment_ids[i], ...] += data[i, ...].
static LogicalResult unsortedSegmentSum(KernelContext &ctx) {
  const Tensor &data = ctx.inputs[0], &ids = ctx.inputs[1];
  std::vector<int64_t> segment = toInts(ids);
  std::vector<int64_t> numSegments = toInts(ctx.inputs[2]);
  if (numSegments.size() != 1 || numSegments[0] < 0)
    return ctx.error() << "num_segments must be a non-negative scalar";
  int64_t n = numSegments[0];
  if (ids.rank() > data.rank() ||
      !std::equal(ids.shape().begin(), ids.shape().end(), data.shape().begin()))
    return ctx.error() << "data.shape = " << shapeString(data.shape())
                       << " does not start with segment_ids.shape = "
                       << shapeString(ids.shape());
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), data.shape().begin() + ids.rank(),
               data.shape().end());
  Tensor out(data.dtype(), shape);
  int64_t inner = 1;
  for (size_t d = 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (size_t i = 0; i < segment.size(); ++i)
    if (segment[i] >= n)
      return ctx.error() << "segment_ids[" << i << "] = " << segment[i]
                         << " is out of range [0, " << n << ")";
  // Sums in the data's type, integers wrapping, as TensorFlow's kernel.
  LogicalResult typed = dispatchNumeric(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *in = data.data<T>();
    T *sums = out.data<T>();
    for (size_t i = 0; i < segment.size(); ++i) {
      // Rows with a negative segment id are dropped, as TensorFlow does.
      if (segment[i] < 0)
        continue;
      for (int64_t j = 0; j < inner; ++j)
        sums[segment[i] * inner + j] =
            wrappingAdd(sums[segment[i] * inner + j], in[i * inner + j]);
    }
  });
  if (failed(typed))
    return ctx.error() << "dtype " << dtypeName(data.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// Einsum: out[output labels] = the sum over the other labels of the
/// product of the inputs' elements (cleave/Ops/Einsum.h), floats summed in
/// double, integers wrapping.
static LogicalResult einsum(KernelContext &ctx) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &t : ctx.inputs)
    shapes.push_back(t.shape());
  ops::EinsumPlan plan;
  if (std::string error =
          ops::planEinsum(ctx.getString("equation").value_or(""), shapes, plan);
      !error.empty())
    return ctx.error() << error;
  int32_t dtype = ctx.inputs[0].dtype();
  size_t labels = plan.labelSizes.size();
  std::vector<int64_t> outShape = plan.outputShape();
  Tensor out(dtype, outShape);
  // Each label's step in each input (summed over a diagonal's dims; 0 where
  // broadcast) and in the output.
  std::vector<std::vector<int64_t>> steps(ctx.inputs.size(),
                                          std::vector<int64_t>(labels, 0));
  for (auto [i, t] : llvm::enumerate(ctx.inputs)) {
    std::vector<int64_t> strides = stridesOf(t.shape());
    for (auto [axis, label] : llvm::enumerate(plan.inputLabels[i]))
      if (!plan.broadcast[i][axis])
        steps[i][label] += strides[axis];
  }
  // A label the output repeats steps along its diagonal; the rest of the
  // output stays 0.
  std::vector<int64_t> outSteps(labels, 0), outStrides = stridesOf(outShape);
  for (auto [axis, label] : llvm::enumerate(plan.outputLabels))
    outSteps[label] += outStrides[axis];
  int64_t total = 1;
  for (int64_t size : plan.labelSizes)
    total *= size;
  LogicalResult typed = dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    std::vector<Acc> sums(out.numElements(), Acc(0));
    std::vector<int64_t> index(labels, 0);
    for (int64_t n = 0; n < total; ++n) {
      Acc product = Acc(1);
      for (auto [i, t] : llvm::enumerate(ctx.inputs)) {
        int64_t at = 0;
        for (size_t l = 0; l < labels; ++l)
          at += index[l] * steps[i][l];
        product = wrappingMul(product, Acc(t.data<T>()[at]));
      }
      int64_t to = 0;
      for (size_t l = 0; l < labels; ++l)
        to += index[l] * outSteps[l];
      sums[to] = wrappingAdd(sums[to], product);
      // The next combination of labels (the last one fastest).
      for (size_t l = labels; l-- > 0;) {
        if (++index[l] < plan.labelSizes[l])
          break;
        index[l] = 0;
      }
    }
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.data<T>()[i] = T(sums[i]);
  });
  if (failed(typed) || dtype == kBool)
    return ctx.error() << "dtype " << dtypeName(dtype) << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

/// Bincount: bins[v] sums the weights of the elements of arr equal to v
/// (counts them without weights), for v < size; larger values are left
/// out, negative ones an error.
static LogicalResult bincount(KernelContext &ctx) {
  const Tensor &arr = ctx.inputs[0], &weights = ctx.inputs[2];
  if (ctx.inputs[1].rank() != 0)
    return ctx.error() << "Shape must be rank 0 but is rank "
                       << ctx.inputs[1].rank();
  int64_t size = ctx.inputs[1].getAsInt(0);
  if (size < 0)
    return ctx.error() << "size (" << size << ") must be non-negative";
  bool weighted = weights.numElements() > 0;
  if (weighted && weights.shape() != arr.shape())
    return ctx.error() << "weights must be the same shape as arr or a "
                          "length-0 tensor; got weights shape "
                       << shapeString(weights.shape()) << " and arr shape "
                       << shapeString(arr.shape());
  const int32_t *values = arr.data<int32_t>();
  for (int64_t i = 0; i < arr.numElements(); ++i)
    if (values[i] < 0)
      return ctx.error() << "Input arr must be non-negative!";
  Tensor bins(weights.dtype(), {size});
  LogicalResult typed = dispatchNumeric(weights.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *out = bins.data<T>();
    for (int64_t i = 0; i < arr.numElements(); ++i)
      if (values[i] < size)
        out[values[i]] =
            wrappingAdd(out[values[i]], weighted ? weights.data<T>()[i] : T(1));
  });
  if (failed(typed))
    return ctx.error() << "dtype " << dtypeName(weights.dtype())
                       << " is not supported";
  ctx.outputs[0] = bins;
  return success();
}

namespace {
/// The reduction of a sorted-segment op.
enum class SegmentReduce { Sum, Mean, Prod, Max, Min };
} // namespace

/// SegmentSum/Mean/Prod/Max/Min: rows of data with equal (sorted) ids
/// reduced into output row id; the rows' count is the last id + 1, and an
/// id no row has gets the reduction's identity (0 for Mean), as
/// TensorFlow's SegmentReductionOp.
template <SegmentReduce op>
static LogicalResult segmentReduce(KernelContext &ctx) {
  const Tensor &data = ctx.inputs[0], &ids = ctx.inputs[1];
  std::vector<int64_t> segment = toInts(ids);
  int64_t rows = 0;
  if (std::string error =
          ops::checkSortedSegments(data.shape(), ids.shape(), segment, rows);
      !error.empty())
    return ctx.error() << error;
  std::vector<int64_t> shape = data.shape();
  shape[0] = rows;
  Tensor out(data.dtype(), shape);
  int64_t inner = rows ? out.numElements() / rows : 0;
  LogicalResult typed = dispatchNumeric(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *in = data.data<T>();
    T *result = out.data<T>();
    T identity = op == SegmentReduce::Prod  ? T(1)
                 : op == SegmentReduce::Max ? std::numeric_limits<T>::lowest()
                 : op == SegmentReduce::Min ? std::numeric_limits<T>::max()
                                            : T(0);
    std::fill(result, result + out.numElements(), identity);
    std::vector<int64_t> counts(rows, 0);
    for (size_t i = 0; i < segment.size(); ++i) {
      T *to = result + segment[i] * inner;
      const T *from = in + i * inner;
      ++counts[segment[i]];
      for (int64_t j = 0; j < inner; ++j) {
        switch (op) {
        case SegmentReduce::Sum:
        case SegmentReduce::Mean:
          to[j] = wrappingAdd(to[j], from[j]);
          break;
        case SegmentReduce::Prod:
          to[j] = wrappingMul(to[j], from[j]);
          break;
        case SegmentReduce::Max:
          to[j] = to[j] < from[j] ? from[j] : to[j];
          break;
        case SegmentReduce::Min:
          to[j] = from[j] < to[j] ? from[j] : to[j];
          break;
        }
      }
    }
    if (op == SegmentReduce::Mean)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; counts[r] && j < inner; ++j)
          result[r * inner + j] = T(result[r * inner + j] / T(counts[r]));
  });
  if (failed(typed))
    return ctx.error() << "dtype " << dtypeName(data.dtype())
                       << " is not supported";
  ctx.outputs[0] = out;
  return success();
}

KernelTable cleave::interp::getMathKernels() {
  return {
      {"UnsortedSegmentSum", unsortedSegmentSum},
      {"Einsum", einsum},
      {"Bincount", bincount},
      {"SegmentSum", segmentReduce<SegmentReduce::Sum>},
      {"SegmentMean", segmentReduce<SegmentReduce::Mean>},
      {"SegmentProd", segmentReduce<SegmentReduce::Prod>},
      {"SegmentMax", segmentReduce<SegmentReduce::Max>},
      {"SegmentMin", segmentReduce<SegmentReduce::Min>},
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
      {"Zeta", binary<Binary::Zeta>},
      {"Polygamma", binary<Binary::Polygamma>},
      {"Less", binary<Binary::Less>},
      {"LessEqual", binary<Binary::LessEqual>},
      {"Greater", binary<Binary::Greater>},
      {"GreaterEqual", binary<Binary::GreaterEqual>},
      {"Equal", binary<Binary::Equal>},
      {"NotEqual", binary<Binary::NotEqual>},
      {"LogicalAnd", logical<true>},
      {"LogicalOr", logical<false>},
      {"LogicalNot", logicalNot},
      {"Neg", unaryKernel<Unary::Neg>},
      {"Square", unaryKernel<Unary::Square>},
      {"Sqrt", unaryKernel<Unary::Sqrt>},
      {"Rsqrt", unaryKernel<Unary::Rsqrt>},
      {"Exp", unaryKernel<Unary::Exp>},
      {"Log", unaryKernel<Unary::Log>},
      {"Log1p", unaryKernel<Unary::Log1p>},
      {"Abs", unaryKernel<Unary::Abs>},
      {"Sign", unaryKernel<Unary::Sign>},
      {"Sigmoid", unaryKernel<Unary::Sigmoid>},
      {"Tanh", unaryKernel<Unary::Tanh>},
      {"Reciprocal", unaryKernel<Unary::Reciprocal>},
      {"Floor", unaryKernel<Unary::Floor>},
      {"AddN", addN},
      {"Cast", cast},
      {"Sum", reduce<Reduce::Sum>},
      {"Cumsum", scan<false>},
      {"Cumprod", scan<true>},
      {"Mean", reduce<Reduce::Mean>},
      {"Prod", reduce<Reduce::Prod>},
      {"Max", reduce<Reduce::Max>},
      {"All", boolReduce<Reduce::Min>},
      {"Any", boolReduce<Reduce::Max>},
      {"Min", reduce<Reduce::Min>},
      {"ArgMax", argReduce<true>},
      {"ArgMin", argReduce<false>},
      {"MatMul", matMul},
      {"Select", select},
      {"SelectV2", selectV2},
      {"Range", range},
      {"LinSpace", linSpace},
      {"ClipByValue", clipByValue},
      {"SigmoidGrad", outputGrad<OutputGrad::Sigmoid>},
      {"TanhGrad", outputGrad<OutputGrad::Tanh>},
      {"RsqrtGrad", outputGrad<OutputGrad::Rsqrt>},
      {"SqrtGrad", outputGrad<OutputGrad::Sqrt>},
      {"ReciprocalGrad", outputGrad<OutputGrad::Reciprocal>},
      {"BatchMatMulV2", batchMatMul},
      {"Ceil", unaryKernel<Unary::Ceil>},
      {"Rint", unaryKernel<Unary::Rint>},
      {"Round", unaryKernel<Unary::Round>},
      {"Expm1", unaryKernel<Unary::Expm1>},
      {"Erf", unaryKernel<Unary::Erf>},
      {"Erfc", unaryKernel<Unary::Erfc>},
      {"Lgamma", unaryKernel<Unary::Lgamma>},
      {"Digamma", unaryKernel<Unary::Digamma>},
      {"Sin", unaryKernel<Unary::Sin>},
      {"Cos", unaryKernel<Unary::Cos>},
      {"Tan", unaryKernel<Unary::Tan>},
      {"Asin", unaryKernel<Unary::Asin>},
      {"Acos", unaryKernel<Unary::Acos>},
      {"Atan", unaryKernel<Unary::Atan>},
      {"Sinh", unaryKernel<Unary::Sinh>},
      {"Cosh", unaryKernel<Unary::Cosh>},
      {"Asinh", unaryKernel<Unary::Asinh>},
      {"Acosh", unaryKernel<Unary::Acosh>},
      {"Atanh", unaryKernel<Unary::Atanh>},
      {"IsNan", classify<Classify::IsNan>},
      {"IsInf", classify<Classify::IsInf>},
      {"IsFinite", classify<Classify::IsFinite>},
  };
}
