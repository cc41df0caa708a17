//===- SpecialFunctions.cpp - Erfc, Lgamma, Digamma, Zeta, Polygamma ------===//
//
// Digamma and Zeta are Cephes' algorithms as Eigen has them (recurrence to
// x >= 10 and the asymptotic series; Euler-Maclaurin summation), so values
// agree with TensorFlow's to the rounding of the last digits.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/SpecialFunctions.h"

#include <cmath>
#include <limits>

using namespace cleave::special;

static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
static constexpr double kInfinity = std::numeric_limits<double>::infinity();
static constexpr double kPi = 3.14159265358979323846;
static constexpr double kEpsilon = std::numeric_limits<double>::epsilon() / 2;

double cleave::special::erfc(double x) { return std::erfc(x); }

double cleave::special::lgamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

double cleave::special::digamma(double x) {
  bool negative = false;
  double reflection = 0;
  if (x <= 0) {
    // ψ(1 - x) - ψ(x) = π / tan(πx), about the nearest integer.
    negative = true;
    double floor = std::floor(x);
    if (floor == x)
      return kNaN;
    double fraction = x - floor;
    if (fraction != 0.5) {
      if (fraction > 0.5)
        fraction = x - (floor + 1);
      reflection = kPi / std::tan(kPi * fraction);
    }
    x = 1 - x;
  }
  // ψ(x + 1) = ψ(x) + 1/x up to x >= 10, then the asymptotic series.
  double shifted = x, sum = 0;
  while (shifted < 10) {
    sum += 1 / shifted;
    shifted += 1;
  }
  double series = 0;
  if (shifted < 1e17) {
    static constexpr double kCoefficients[] = {
        8.33333333333333333333E-2, -2.10927960927960927961E-2,
        7.57575757575757575758E-3, -4.16666666666666666667E-3,
        3.96825396825396825397E-3, -8.33333333333333333333E-3,
        8.33333333333333333333E-2};
    double z = 1 / (shifted * shifted), poly = 0;
    for (double c : kCoefficients)
      poly = poly * z + c;
    series = z * poly;
  }
  double y = std::log(shifted) - 0.5 / shifted - series - sum;
  return negative ? y - reflection : y;
}

double cleave::special::zeta(double x, double q) {
  if (x == 1)
    return kInfinity;
  if (x < 1)
    return kNaN;
  if (q <= 0) {
    if (q == std::floor(q))
      return kInfinity;
    if (x != std::floor(x))
      return kNaN; // q^-x is not real.
  }
  // Euler-Maclaurin: the first terms summed, the tail by the integral and
  // Bernoulli corrections.
  static constexpr double kBernoulli[] = {12.0,
                                          -720.0,
                                          30240.0,
                                          -1209600.0,
                                          47900160.0,
                                          -1.8924375803183791606e9,
                                          7.47242496e10,
                                          -2.950130727918164224e12,
                                          1.1646782814350067249e14,
                                          -4.5979787224074726105e15,
                                          1.8152105401943546773e17,
                                          -7.1661652561756670113e18};
  double s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEpsilon)
      return s;
  }
  double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double factor = 1, k = 0;
  for (double bernoulli : kBernoulli) {
    factor *= x + k;
    b /= w;
    double t = factor * b / bernoulli;
    s += t;
    if (std::fabs(t / s) < kEpsilon)
      break;
    k += 1;
    factor *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

double cleave::special::polygamma(double n, double x) {
  if (n != std::floor(n) || n < 0)
    return kNaN;
  if (n == 0)
    return digamma(x);
  // ψ⁽ⁿ⁾(x) = (-1)^(n+1) n! ζ(n + 1, x).
  double factorial = std::exp(lgamma(n + 1));
  double sign = std::fmod(n, 2) == 0 ? -1 : 1;
  return sign * factorial * zeta(n + 1, x);
}

double cleave::special::evaluate(Function function, double x, double y) {
  switch (function) {
  case Function::Erfc:
    return erfc(x);
  case Function::Lgamma:
    return lgamma(x);
  case Function::Digamma:
    return digamma(x);
  case Function::Zeta:
    return zeta(x, y);
  case Function::Polygamma:
    return polygamma(x, y);
  }
  return kNaN;
}
