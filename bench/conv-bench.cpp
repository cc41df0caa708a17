//===- conv-bench.cpp - convolution kernels for the CNN's shapes ----------===//
//
// The three ways to run the CNN step's convolutions that Cleave chose
// between, on the shapes the lowering gives them (NHWC input, HWCF filter,
// VALID: padding is already in the input):
//   - im2col + sgemm: the windows laid out as rows, one OpenBLAS product
//     per group of images on OpenMP's threads (Cleave's kernel before
//     oneDNN);
//   - oneDNN with plain layouts (nhwc / hwio / nhwc): oneDNN's own im2col
//     and GEMM;
//   - cleave_cpu_conv2d_f32 as it is: oneDNN's direct kernel, activations
//     NHWC, weights reordered into oneDNN's blocked layout every call.
// Usage: cleave-conv-bench [repeats]; prints the median of each in ms.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {
struct Shape {
  const char *name;
  int64_t n, h, w, c, kh, kw, f;
  int64_t oh() const { return h - kh + 1; }
  int64_t ow() const { return w - kw + 1; }
  double gflop() const {
    return 2.0 * n * oh() * ow() * f * kh * kw * c / 1e9;
  }
};
} // namespace

static double medianMs(int repeats, const std::function<void()> &run) {
  run(); // warm-up: JIT compilation, first touch of the buffers
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// im2col into one buffer per group of images, a single-threaded sgemm per
/// group, the groups on OpenMP's threads.
static void im2colConvolution(const Shape &s, const float *in,
                              const float *filter, float *out) {
  int64_t oh = s.oh(), ow = s.ow(), depth = s.kh * s.kw * s.c;
  int threads = omp_get_max_threads();
  int64_t group = std::max<int64_t>(1, (s.n + threads - 1) / threads);
  int64_t groups = (s.n + group - 1) / group;
#pragma omp parallel for schedule(static)
  for (int64_t g = 0; g < groups; ++g) {
    int64_t first = g * group, images = std::min(group, s.n - first);
    std::vector<float> rows(images * oh * ow * depth);
    float *row = rows.data();
    for (int64_t b = first; b < first + images; ++b)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t i = 0; i < s.kh; ++i, row += s.kw * s.c) {
            const float *pixel = in + ((b * s.h + y + i) * s.w + x) * s.c;
            std::copy(pixel, pixel + s.kw * s.c, row);
          }
    cleave_cpu_sgemm(0, 0, images * oh * ow, s.f, depth, rows.data(), depth,
                     filter, s.f, 0, out + first * oh * ow * s.f, s.f);
  }
}

namespace {
/// oneDNN's forward convolution on the caller's plain layouts.
struct PlainOneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, dst;

  PlainOneDnn(const Shape &s, float *in, float *filter, float *out) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::desc srcMd({s.n, s.c, s.h, s.w}, dt::f32, tag::nhwc);
    dnnl::memory::desc weightsMd({s.f, s.c, s.kh, s.kw}, dt::f32, tag::hwio);
    dnnl::memory::desc dstMd({s.n, s.f, s.oh(), s.ow()}, dt::f32, tag::nhwc);
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, srcMd, weightsMd, dstMd,
            {1, 1}, {0, 0}, {0, 0}),
        engine);
    conv = dnnl::convolution_forward(pd);
    src = dnnl::memory(srcMd, engine, in);
    weights = dnnl::memory(weightsMd, engine, filter);
    dst = dnnl::memory(dstMd, engine, out);
  }
  void run() {
    conv.execute(stream, {{DNNL_ARG_SRC, src},
                          {DNNL_ARG_WEIGHTS, weights},
                          {DNNL_ARG_DST, dst}});
    stream.wait();
  }
};
} // namespace

int main(int argc, char **argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  cleave::cpu::configureKernelThreads();
  // The CNN step's convolutions at batch 64, as the lowering forms them:
  // the forward ops on padded inputs, the input gradient on the padded
  // output gradient with the flipped filter, the filter gradients on the
  // input seen channels-first with the output gradient as the filter.
  const Shape shapes[] = {
      {"conv1 forward", 64, 32, 32, 1, 5, 5, 32},
      {"conv2 forward", 64, 18, 18, 32, 5, 5, 64},
      {"conv2 input gradient", 64, 18, 18, 64, 5, 5, 32},
      {"conv2 filter gradient", 32, 18, 18, 64, 14, 14, 64},
      {"conv1 filter gradient", 1, 32, 32, 64, 28, 28, 32},
  };
  std::printf("threads %d; median of %d runs, ms (GFLOP/s)\n",
              omp_get_max_threads(), repeats);
  std::printf("%-24s %16s %16s %16s\n", "convolution", "im2col+sgemm",
              "oneDNN plain", "cleave (oneDNN)");
  for (const Shape &s : shapes) {
    std::vector<float> in(s.n * s.h * s.w * s.c), filter(s.kh * s.kw * s.c * s.f),
        out(s.n * s.oh() * s.ow() * s.f);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = float(i % 13) / 13 - 0.5f;
    for (size_t i = 0; i < filter.size(); ++i)
      filter[i] = float(i % 7) / 7 - 0.5f;
    double im2col = medianMs(repeats, [&] {
      im2colConvolution(s, in.data(), filter.data(), out.data());
    });
    PlainOneDnn plain(s, in.data(), filter.data(), out.data());
    double plainMs = medianMs(repeats, [&] { plain.run(); });
    double cleave = medianMs(repeats, [&] {
      cleave_cpu_conv2d_f32(in.data(), s.n, s.h * s.w * s.c, s.w * s.c, s.c,
                            s.c, filter.data(), s.kh, s.kw, s.f, out.data(),
                            s.oh(), s.ow(), 1, 1, 1, 1, 0);
    });
    std::printf("%-24s", s.name);
    for (double ms : {im2col, plainMs, cleave})
      std::printf(" %9.2f (%4.0f)", ms, s.gflop() / ms * 1e3);
    std::printf("\n");
  }
  return 0;
}
