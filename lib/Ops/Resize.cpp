//===- Resize.cpp - where resized images read from ------------------------===//

#include "cleave/Ops/Resize.h"

#include <algorithm>
#include <cmath>

using namespace cleave::ops;

std::string cleave::ops::checkResizeAttrs(bool alignCorners,
                                          bool halfPixelCenters) {
  if (alignCorners && halfPixelCenters)
    return "If half_pixel_centers is True, align_corners must be False.";
  return "";
}

/// CalculateResizeScale: input coordinates per output coordinate.
static float resizeScale(int64_t in, int64_t out, bool alignCorners) {
  return alignCorners && out > 1 ? float(in - 1) / float(out - 1)
                                 : float(in) / float(out);
}

std::vector<BilinearTap> cleave::ops::bilinearTaps(int64_t in, int64_t out,
                                                   bool alignCorners,
                                                   bool halfPixelCenters) {
  float scale = resizeScale(in, out, alignCorners);
  std::vector<BilinearTap> taps(out);
  for (int64_t i = 0; i < out; ++i) {
    // HalfPixelScaler or LegacyScaler.
    float at =
        halfPixelCenters ? (float(i) + 0.5f) * scale - 0.5f : float(i) * scale;
    float below = std::floor(at);
    taps[i].lower = std::max<int64_t>(int64_t(below), 0);
    taps[i].upper = std::min<int64_t>(int64_t(std::ceil(at)), in - 1);
    taps[i].lerp = at - below;
  }
  return taps;
}

std::vector<int64_t> cleave::ops::nearestSources(int64_t in, int64_t out,
                                                 bool alignCorners,
                                                 bool halfPixelCenters) {
  float scale = resizeScale(in, out, alignCorners);
  std::vector<int64_t> sources(out);
  for (int64_t i = 0; i < out; ++i) {
    // HalfPixelScalerForNN (no -0.5) or LegacyScaler.
    float at = halfPixelCenters ? (float(i) + 0.5f) * scale : float(i) * scale;
    int64_t source =
        alignCorners ? int64_t(std::round(at)) : int64_t(std::floor(at));
    source = std::min(source, in - 1);
    if (halfPixelCenters)
      source = std::max<int64_t>(source, 0);
    sources[i] = source;
  }
  return sources;
}
