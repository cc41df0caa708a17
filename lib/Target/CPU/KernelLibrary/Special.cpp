//===- Special.cpp - special functions for compiled code ------------------===//
//
// Compiled Erfc, Lgamma, Digamma, Zeta and Polygamma call the functions the
// reference kernels call, so both give the same bits.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/SpecialFunctions.h"
#include "cleave/Target/CPU/KernelLibrary.h"

extern "C" double cleave_cpu_special(int64_t function, double x, double y) {
  return cleave::special::evaluate(cleave::special::Function(function), x, y);
}
