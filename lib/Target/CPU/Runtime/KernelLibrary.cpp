//===- KernelLibrary.cpp - OpenBLAS behind the compiled code's calls ------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <cblas.h>

#include <atomic>
#include <mutex>
#include <thread>

// LLVM's OpenMP runtime (libomp), which runs the compiled parallel loops.
extern "C" void omp_set_num_threads(int threads);
extern "C" void kmp_set_blocktime(int milliseconds);

extern "C" {

void cleave_cpu_sgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
              ldb, beta, c, ldc);
}

void cleave_cpu_dgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const double *a, int64_t lda, const double *b,
                      int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb,
              beta, c, ldc);
}
}

namespace cleave::cpu {

const KernelSymbol *getKernelSymbols(size_t &count) {
  static const KernelSymbol symbols[] = {
      {"cleave_cpu_sgemm", reinterpret_cast<void *>(&cleave_cpu_sgemm)},
      {"cleave_cpu_dgemm", reinterpret_cast<void *>(&cleave_cpu_dgemm)},
      {"cleave_cpu_conv2d_f32",
       reinterpret_cast<void *>(&cleave_cpu_conv2d_f32)},
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
  };
  count = sizeof(symbols) / sizeof(symbols[0]);
  return symbols;
}

static std::atomic<int> kernelThreads{0};
static std::atomic<bool> threadsConfigured{false};

void setKernelThreads(int threads) {
  kernelThreads = threads;
  threadsConfigured = true;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  int count = threads > 0 ? threads : (cores > 0 ? cores : 1);
  openblas_set_num_threads(count);
  omp_set_num_threads(count);
  // OpenMP's threads sleep as soon as a loop ends instead of spinning for
  // 200 ms: a library call (OpenBLAS's own threads) usually comes next and
  // needs the cores.
  kmp_set_blocktime(0);
}

int getKernelThreads() { return kernelThreads; }

void configureKernelThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!threadsConfigured)
      setKernelThreads(0);
  });
}

} // namespace cleave::cpu
