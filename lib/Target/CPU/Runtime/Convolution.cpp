//===- Convolution.cpp - convolutions as matrix products ------------------===//
//
// A convolution of NHWC images with an HWCF filter is a matrix product once
// the input windows are laid out as rows (im2col): row (n, y, x) holds the
// window of output position (y, x) of image n, in the filter's (kh, kw, c)
// order, so that the HWCF filter is the [kh*kw*c, f] right-hand matrix as
// it is stored. Images are taken in groups whose rows fit a bounded
// buffer; each group is one sgemm into its rows of the output.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace {
// The rows buffer of one group of images, in floats (32 MiB).
constexpr int64_t kMaxColumnFloats = int64_t(8) << 20;
} // namespace

extern "C" void cleave_cpu_conv2d_f32(
    const float *in, int64_t n, int64_t inStrideN, int64_t inStrideH,
    int64_t inStrideW, int64_t c, const float *filter, int64_t kh, int64_t kw,
    int64_t f, float *out, int64_t oh, int64_t ow, int64_t strideH,
    int64_t strideW, int64_t dilationH, int64_t dilationW, float beta) {
  if (n == 0 || oh == 0 || ow == 0 || f == 0)
    return;
  int64_t rowsPerImage = oh * ow;
  int64_t depth = kh * kw * c;
  // A 1x1 window over contiguous pixels: the input is the matrix already.
  if (kh == 1 && kw == 1 && strideH == 1 && strideW == 1 &&
      inStrideW == c && inStrideH == ow * c && inStrideN == oh * ow * c) {
    cleave_cpu_sgemm(0, 0, n * rowsPerImage, f, c, in, c, filter, f, beta,
                     out, f);
    return;
  }
  if (depth == 0) {
    // An empty sum: the output is beta times itself.
    for (int64_t i = 0, e = n * rowsPerImage * f; i < e; ++i)
      out[i] = beta == 0 ? 0 : out[i] * beta;
    return;
  }
  int64_t group = std::clamp<int64_t>(
      kMaxColumnFloats / (rowsPerImage * depth), 1, n);
  std::unique_ptr<float[]> columns(new float[group * rowsPerImage * depth]);
  for (int64_t first = 0; first < n; first += group) {
    int64_t images = std::min(group, n - first);
    float *row = columns.get();
    for (int64_t b = first; b < first + images; ++b)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t i = 0; i < kh; ++i) {
            const float *pixel = in + b * inStrideN +
                                 (y * strideH + i * dilationH) * inStrideH +
                                 x * strideW * inStrideW;
            for (int64_t j = 0; j < kw; ++j, row += c)
              std::memcpy(row, pixel + j * dilationW * inStrideW,
                          c * sizeof(float));
          }
    cleave_cpu_sgemm(0, 0, images * rowsPerImage, f, depth, columns.get(),
                     depth, filter, f, beta, out + first * rowsPerImage * f,
                     f);
  }
}
