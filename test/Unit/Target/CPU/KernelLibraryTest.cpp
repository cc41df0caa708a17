//===- KernelLibraryTest.cpp - the library kernels compiled code calls ----===//
//
// cleave_cpu_conv2d_f32 against a direct loop over every geometry the
// compiled code can pass: strides, dilations, input views with padding
// between rows and images, channel counts below, at and above oneDNN's
// blocks, and accumulation onto the output (beta). The op tests check the
// convolution ops end to end; these reach the geometries they do not.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct ConvCase {
  int64_t n, h, w, c, kh, kw, f, strideH, strideW, dilationH, dilationW;
  // Extra elements after each pixel row and each image: an input view.
  int64_t rowPad = 0, imagePad = 0;
  float beta = 0;
};

std::string describe(const ConvCase &k) {
  return "n=" + std::to_string(k.n) + " h=" + std::to_string(k.h) +
         " w=" + std::to_string(k.w) + " c=" + std::to_string(k.c) +
         " kh=" + std::to_string(k.kh) + " kw=" + std::to_string(k.kw) +
         " f=" + std::to_string(k.f) + " stride=" + std::to_string(k.strideH) +
         "x" + std::to_string(k.strideW) +
         " dilation=" + std::to_string(k.dilationH) + "x" +
         std::to_string(k.dilationW) + " rowPad=" + std::to_string(k.rowPad) +
         " imagePad=" + std::to_string(k.imagePad) +
         " beta=" + std::to_string(k.beta);
}

/// Runs the library convolution and a direct loop in double precision on
/// the same random data; expects agreement within float rounding.
void checkConvolution(const ConvCase &k, std::mt19937 &rng) {
  SCOPED_TRACE(describe(k));
  int64_t oh = (k.h - (k.kh - 1) * k.dilationH - 1) / k.strideH + 1;
  int64_t ow = (k.w - (k.kw - 1) * k.dilationW - 1) / k.strideW + 1;
  ASSERT_GT(oh, 0);
  ASSERT_GT(ow, 0);
  int64_t strideW = k.c, strideH = k.w * k.c + k.rowPad;
  int64_t strideN = k.h * strideH + k.imagePad;
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> in(k.n * strideN), filter(k.kh * k.kw * k.c * k.f),
      out(k.n * oh * ow * k.f);
  for (float &v : in)
    v = value(rng);
  for (float &v : filter)
    v = value(rng);
  for (float &v : out)
    v = value(rng);
  std::vector<float> before = out;
  cleave_cpu_conv2d_f32(in.data(), k.n, strideN, strideH, strideW, k.c,
                        filter.data(), k.kh, k.kw, k.f, out.data(), oh, ow,
                        k.strideH, k.strideW, k.dilationH, k.dilationW,
                        k.beta);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t o = 0; o < k.f; ++o) {
          double sum = 0, magnitude = 0;
          for (int64_t i = 0; i < k.kh; ++i)
            for (int64_t j = 0; j < k.kw; ++j)
              for (int64_t ch = 0; ch < k.c; ++ch) {
                double term =
                    double(in[b * strideN +
                              (y * k.strideH + i * k.dilationH) * strideH +
                              (x * k.strideW + j * k.dilationW) * strideW +
                              ch]) *
                    filter[((i * k.kw + j) * k.c + ch) * k.f + o];
                sum += term;
                magnitude += std::fabs(term);
              }
          int64_t index = ((b * oh + y) * ow + x) * k.f + o;
          double expected = sum + double(k.beta) * before[index];
          ASSERT_NEAR(out[index], expected, 1e-5 * (magnitude + 1))
              << "at output [" << b << ", " << y << ", " << x << ", " << o
              << "]";
        }
}

TEST(KernelLibraryTest, ConvolutionMatchesDirectLoop) {
  std::mt19937 rng(7);
  for (const ConvCase &k : std::vector<ConvCase>{
           // The CNN's shapes, scaled down: 1 input channel, then blocks.
           {4, 12, 12, 1, 5, 5, 32, 1, 1, 1, 1},
           {3, 9, 9, 32, 5, 5, 64, 1, 1, 1, 1},
           // A filter gradient as the lowering forms it: a large window.
           {8, 10, 10, 16, 7, 7, 24, 1, 1, 1, 1},
           // Channels off the blocks, strides, dilations, non-square.
           {2, 11, 7, 3, 3, 2, 5, 2, 1, 1, 1},
           {2, 13, 13, 9, 3, 3, 17, 2, 3, 1, 2},
           {1, 15, 12, 20, 3, 2, 8, 1, 2, 3, 2},
           // Input views (padding between rows and images), a 1x1 window
           // that is not a plain matrix because of them.
           {3, 8, 6, 10, 3, 3, 12, 1, 1, 1, 1, 5, 7},
           {2, 5, 5, 8, 1, 1, 8, 1, 1, 1, 1, 3, 0},
           // Accumulation onto the output.
           {2, 7, 7, 8, 3, 3, 16, 1, 1, 1, 1, 0, 0, 1.0f},
           {2, 7, 7, 5, 3, 3, 6, 2, 2, 1, 1, 2, 0, 0.5f},
           // A plain matrix product (1x1 over contiguous pixels).
           {2, 4, 4, 6, 1, 1, 9, 1, 1, 1, 1, 0, 0, 1.0f}})
    checkConvolution(k, rng);
}

TEST(KernelLibraryTest, ConvolutionRunsConcurrently) {
  // Replicas call the library from their own threads at once.
  // (GoogleTest records failures from any thread.)
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      std::mt19937 rng(100 + t);
      for (int repeat = 0; repeat < 3; ++repeat)
        checkConvolution({2, 9, 9, 16, 3, 3, 16, 1, 1, 1, 1}, rng);
    });
  for (std::thread &thread : threads)
    thread.join();
}

TEST(KernelLibraryTest, OneDnnRunsOnTheCompiledCodesOpenMP) {
  // oneDNN is built against libgomp; its GOMP_* calls must bind to libomp,
  // which the compiled loops use, or two pools of threads compete for
  // the cores.
  void *entry = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  ASSERT_NE(entry, nullptr);
  Dl_info info;
  ASSERT_NE(dladdr(entry, &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libomp"), std::string::npos)
      << "GOMP_parallel comes from " << info.dli_fname;
}

} // namespace
