//===- KernelLibrary.cpp - OpenBLAS behind the compiled code's calls ------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

// One pool of threads: OpenMP's, which runs the compiled parallel loops.
// OpenBLAS runs single-threaded inside it, on a block of the product per
// thread; its own pthreads would compete with OpenMP's for the cores (on
// two cores, compiled steps ran at half speed with both pools awake).

/// Products below this many multiply-adds run on one thread: splitting
/// costs more than it gains.
static constexpr int64_t kMinParallelWork = int64_t(1) << 20;

/// C = op(A)·op(B) + beta·C split into blocks of C's rows (or columns, for
/// few rows), one per thread, each a single-threaded GEMM.
template <typename T, typename Gemm>
static void parallelGemm(Gemm gemm, int64_t transA, int64_t transB, int64_t m,
                         int64_t n, int64_t k, const T *a, int64_t lda,
                         const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {
  auto call = [&](int64_t rows, int64_t cols, const T *blockA,
                  const T *blockB, T *blockC) {
    gemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
         transB ? CblasTrans : CblasNoTrans, rows, cols, k, T(1), blockA, lda,
         blockB, ldb, beta, blockC, ldc);
  };
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || m * n * k < kMinParallelWork) {
    call(m, n, a, b, c);
    return;
  }
  // Blocks of whole cache lines of C.
  constexpr int64_t kQuantum = 16;
  bool splitRows = m >= n || m >= threads * kQuantum * 4;
  int64_t extent = splitRows ? m : n;
  int64_t block = (extent + threads - 1) / threads;
  block = (block + kQuantum - 1) / kQuantum * kQuantum;
  int64_t blocks = (extent + block - 1) / block;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < blocks; ++i) {
    int64_t first = i * block, size = std::min(block, extent - first);
    if (splitRows)
      call(size, n, transA ? a + first : a + first * lda, b, c + first * ldc);
    else
      call(m, size, a, transB ? b + first * ldb : b + first, c + first);
  }
}

extern "C" {

void cleave_cpu_sgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc) {
  parallelGemm<float>(cblas_sgemm, transA, transB, m, n, k, a, lda, b, ldb,
                      beta, c, ldc);
}

void cleave_cpu_dgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const double *a, int64_t lda, const double *b,
                      int64_t ldb, double beta, double *c, int64_t ldc) {
  parallelGemm<double>(cblas_dgemm, transA, transB, m, n, k, a, lda, b, ldb,
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
      {"cleave_cpu_cross_replica_sum",
       reinterpret_cast<void *>(&cleave_cpu_cross_replica_sum)},
      {"cleave_cpu_host_transfer",
       reinterpret_cast<void *>(&cleave_cpu_host_transfer)},
      {"cleave_cpu_random", reinterpret_cast<void *>(&cleave_cpu_random)},
      {"cleave_cpu_special", reinterpret_cast<void *>(&cleave_cpu_special)},
      {"cleave_cpu_topk", reinterpret_cast<void *>(&cleave_cpu_topk)},
      {"cleave_cpu_list_check",
       reinterpret_cast<void *>(&cleave_cpu_list_check)},
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

static std::atomic<bool> threadsConfigured{false};
static std::atomic<int> kernelThreads{1};

void setKernelThreads(int threads) {
  threadsConfigured = true;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  kernelThreads = threads > 0 ? threads : (cores > 0 ? cores : 1);
  omp_set_num_threads(kernelThreads);
  openblas_set_num_threads(1);
}

void stopKernelThreadSpinning() { kmp_set_blocktime(0); }

void shareKernelThreads(unsigned parts) {
  configureKernelThreads();
  omp_set_num_threads(std::max(1, kernelThreads / int(std::max(1u, parts))));
}

void configureKernelThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!threadsConfigured)
      setKernelThreads(0);
  });
}

} // namespace cleave::cpu

void cleave_cpu_set_threads(int threads) {
  cleave::cpu::setKernelThreads(threads);
}

void cleave_cpu_configure_threads() { cleave::cpu::configureKernelThreads(); }
