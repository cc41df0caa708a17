//===- ImageAttrs.h - LRN's and the resize ops' attrs -----------*- C++ -*-===//
//
// The attrs of LRN, LRNGrad and the resize ops with TensorFlow's defaults
// and checks, read alike by the reference kernels and the CPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_IMAGEATTRS_H
#define CLEAVE_KERNELS_IMAGEATTRS_H

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Ops/Resize.h"

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

/// A resize op's align_corners and half_pixel_centers; TensorFlow's
/// message when they conflict, or "".
inline std::string readResizeAttrs(NodeAttrReader &attrs, bool &alignCorners,
                                   bool &halfPixelCenters) {
  alignCorners = attrs.getBool("align_corners").value_or(false);
  halfPixelCenters = attrs.getBool("half_pixel_centers").value_or(false);
  return ops::checkResizeAttrs(alignCorners, halfPixelCenters);
}

} // namespace cleave::interp

#endif // CLEAVE_KERNELS_IMAGEATTRS_H
