//===- KernelLibrary.h - library kernels compiled code calls ----*- C++ -*-===//
//
// The functions the CPU pipeline calls instead of generating loops, where a
// library is faster (matrix products: OpenBLAS sgemm/dgemm), and the
// run-time settings they share (threads). They are plain C functions, so
// that JIT-compiled code (whose symbols the JIT resolves to these) and
// object files from graph-compile (linked with Cleave::CleaveCPUKernels)
// call them alike. Pointers travel as integers: compiled code passes the
// aligned pointers of its buffers as `index` values.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_KERNELLIBRARY_H
#define CLEAVE_TARGET_CPU_KERNELLIBRARY_H

#include <cstddef>
#include <cstdint>

extern "C" {

/// C = A·B + beta·C in row-major storage, A (transposed when `transA`) of
/// M rows and K columns, B (transposed when `transB`) of K rows and N
/// columns; `ld*` are the row strides of the stored matrices.
void cleave_cpu_sgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc);
void cleave_cpu_dgemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                      int64_t k, const double *a, int64_t lda, const double *b,
                      int64_t ldb, double beta, double *c, int64_t ldc);

/// The allocation functions of compiled code (MLIR's generic allocation
/// functions): 64-byte aligned blocks, large ones kept for reuse, so that
/// a step does not fault in fresh pages for every temporary.
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *pointer);
}

namespace cleave::cpu {

/// A function of the kernel library and its address, for the JIT.
struct KernelSymbol {
  const char *name;
  void *address;
};

/// Every function above.
const KernelSymbol *getKernelSymbols(size_t &count);

/// The number of threads the library kernels (and generated parallel
/// loops) use; 0 means every core.
void setKernelThreads(int threads);
int getKernelThreads();

} // namespace cleave::cpu

#endif // CLEAVE_TARGET_CPU_KERNELLIBRARY_H
