//===- Resize.h - where resized images read from ----------------*- C++ -*-===//
//
// ResizeBilinear and ResizeNearestNeighbor map each output row (column)
// to input rows as TensorFlow's kernels do (image_resizer_state.h): the
// scale, the legacy and half-pixel coordinate maps, in float as there.
// Their gradients use the same maps, so the reference kernels and the CPU
// lowering (which turns them into constant tensors) share these.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_RESIZE_H
#define CLEAVE_OPS_RESIZE_H

#include <cstdint>
#include <string>
#include <vector>

namespace cleave::ops {

/// TensorFlow's message for the attrs, or "".
std::string checkResizeAttrs(bool alignCorners, bool halfPixelCenters);

/// One output coordinate's two input neighbours and the weight of the
/// upper one (the lower's is 1 - lerp).
struct BilinearTap {
  int64_t lower, upper;
  float lerp;
};

/// For each of `out` coordinates, its neighbours among `in`
/// (compute_interpolation_weights).
std::vector<BilinearTap> bilinearTaps(int64_t in, int64_t out,
                                      bool alignCorners, bool halfPixelCenters);

/// For each of `out` coordinates, the one of `in` it copies.
std::vector<int64_t> nearestSources(int64_t in, int64_t out, bool alignCorners,
                                    bool halfPixelCenters);

} // namespace cleave::ops

#endif // CLEAVE_OPS_RESIZE_H
