//===- KernelLibrary.cpp - OpenBLAS behind the compiled code's calls ------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <cblas.h>

#include <thread>

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

static int kernelThreads = 0;

void setKernelThreads(int threads) {
  kernelThreads = threads;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  openblas_set_num_threads(threads > 0 ? threads : (cores > 0 ? cores : 1));
}

int getKernelThreads() { return kernelThreads; }

} // namespace cleave::cpu
