//===- Convolution.cpp - convolutions as matrix products ------------------===//
//
// A convolution of NHWC images with an HWCF filter is a matrix product once
// the input windows are laid out as rows (im2col): row (n, y, x) holds the
// window of output position (y, x) of image n, in the filter's (kh, kw, c)
// order, so that the HWCF filter is the [kh*kw*c, f] right-hand matrix as
// it is stored. Images are taken in groups whose rows fit a bounded
// buffer; each group is one sgemm into its rows of the output, the groups
// shared among the threads.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <omp.h>

#include <algorithm>
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
  // Groups of images whose rows fit the buffer, at least one per thread
  // when there are enough images: then each thread lays out and multiplies
  // its own groups; otherwise the groups go one by one, each product on
  // all threads.
  int threads = omp_get_max_threads();
  int64_t group = std::clamp<int64_t>(
      kMaxColumnFloats / (rowsPerImage * depth), 1, (n + threads - 1) / threads);
  int64_t groups = (n + group - 1) / group;
  // A window row (kw pixels of c channels) is one contiguous run of the
  // input when pixels are adjacent and undilated.
  bool contiguousRows = dilationW == 1 && inStrideW == c;
  auto convolveGroup = [&](int64_t index, float *columns) {
    int64_t first = index * group, images = std::min(group, n - first);
    float *row = columns;
    for (int64_t b = first; b < first + images; ++b)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t i = 0; i < kh; ++i) {
            const float *pixel = in + b * inStrideN +
                                 (y * strideH + i * dilationH) * inStrideH +
                                 x * strideW * inStrideW;
            if (contiguousRows) {
              std::copy(pixel, pixel + kw * c, row);
              row += kw * c;
              continue;
            }
            for (int64_t j = 0; j < kw; ++j, row += c)
              std::copy(pixel + j * dilationW * inStrideW,
                        pixel + j * dilationW * inStrideW + c, row);
          }
    cleave_cpu_sgemm(0, 0, images * rowsPerImage, f, depth, columns, depth,
                     filter, f, beta, out + first * rowsPerImage * f, f);
  };
  size_t columnFloats = group * rowsPerImage * depth;
  if (groups >= threads && threads > 1) {
#pragma omp parallel
    {
      std::unique_ptr<float[]> columns(new float[columnFloats]);
#pragma omp for schedule(static)
      for (int64_t index = 0; index < groups; ++index)
        convolveGroup(index, columns.get());
    }
    return;
  }
  std::unique_ptr<float[]> columns(new float[columnFloats]);
  for (int64_t index = 0; index < groups; ++index)
    convolveGroup(index, columns.get());
}
