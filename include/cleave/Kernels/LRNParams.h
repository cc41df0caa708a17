//===- LRNParams.h - LRN's attrs --------------------------------*- C++ -*-===//
//
// LRN and LRNGrad's attrs with TensorFlow's defaults, read alike by the
// reference kernels and the CPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_LRNPARAMS_H
#define CLEAVE_KERNELS_LRNPARAMS_H

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include <cstdint>

namespace cleave::interp {

/// out = in / (bias + alpha * sum of squares within radius)^beta.
struct LRNParams {
  int64_t radius;
  double bias, alpha, beta;
};

inline LRNParams readLRNParams(NodeAttrReader &attrs) {
  return {attrs.getInt("depth_radius").value_or(5),
          attrs.getFloat("bias").value_or(1.0),
          attrs.getFloat("alpha").value_or(1.0),
          attrs.getFloat("beta").value_or(0.5)};
}

} // namespace cleave::interp

#endif // CLEAVE_KERNELS_LRNPARAMS_H
