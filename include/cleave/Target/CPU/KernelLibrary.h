//===- KernelLibrary.h - library kernels compiled code calls ----*- C++ -*-===//
//
// The functions the CPU pipeline calls instead of generating loops, where a
// library is faster (matrix products: OpenBLAS sgemm/dgemm; convolutions:
// oneDNN's direct kernels), and the run-time settings they share
// (threads). They are plain C functions, so that JIT-compiled code (whose
// symbols the JIT resolves to these) and object files from graph-compile
// (linked with Cleave::CleaveCPUKernels) call them alike. Pointers travel
// as integers: compiled code passes the aligned pointers of its buffers as
// `index` values.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_KERNELLIBRARY_H
#define CLEAVE_TARGET_CPU_KERNELLIBRARY_H

#include <cstddef>
#include <cstdint>
#include <string>

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

/// out = conv(in, filter) + beta·out: a VALID convolution (padding is
/// already in `in`) of n NHWC images of c channels, read with the given
/// element strides (channels contiguous), with a contiguous HWCF filter of
/// kh x kw x c x f, into a contiguous [n, oh, ow, f] output.
void cleave_cpu_conv2d_f32(const float *in, int64_t n, int64_t inStrideN,
                           int64_t inStrideH, int64_t inStrideW, int64_t c,
                           const float *filter, int64_t kh, int64_t kw,
                           int64_t f, float *out, int64_t oh, int64_t ow,
                           int64_t strideH, int64_t strideW,
                           int64_t dilationH, int64_t dilationW, float beta);

/// out = the cross-replica sum of `in` (`count` elements of TensorFlow
/// DataType `dtype`) over the caller's group of `groups` (group_assignment:
/// int32 replica ids of shape `groupsShape`, `groupsRank` dims; no
/// elements: all replicas), as the Collectives installed on the calling
/// thread compute it (cleave/Target/CPU/CompiledCollectives.h); `op` identifies the
/// node. Without any, out = in. Returns a CollectiveStatus.
int64_t cleave_cpu_cross_replica_sum(int64_t op, const void *in, void *out,
                                     int64_t count, int64_t dtype,
                                     const int32_t *groups,
                                     const int64_t *groupsShape,
                                     int64_t groupsRank);

/// The device side of host transfer node `op` (_XlaHostComputeMlir,
/// XlaSendToHost, XlaRecvFromHost): sends `numInputs` tensors and receives
/// `numOutputs`, each described by `address, dtype, rank, dims...` in
/// `inputs` / `outputs`, through the Collectives installed on the calling
/// thread. Returns a CollectiveStatus.
int64_t cleave_cpu_host_transfer(int64_t op, const int64_t *inputs,
                                 int64_t numInputs, const int64_t *outputs,
                                 int64_t numOutputs);

/// Fills `out` (`count` elements) with TensorFlow's random numbers
/// (cleave/Support/Philox.h): `distribution` and `element` are
/// cleave::random::Distribution and ElementType. The generator is Philox
/// with key `a` and the 128-bit counter c:b (`seeding` 0), or the one a
/// stateless op's seed pair (a, b) gives (`seeding` 1), moved on by `skip`
/// blocks. Integers are drawn from [low, high), which is not empty.
void cleave_cpu_random(int64_t distribution, int64_t element, int64_t seeding,
                       int64_t a, int64_t b, int64_t c, int64_t skip, void *out,
                       int64_t count, int64_t low, int64_t high);

/// The special function `function` (cleave::special::Function: Erfc,
/// Lgamma, Digamma, Zeta, Polygamma) of x (and y), as the reference
/// kernels compute it (cleave/Support/SpecialFunctions.h).
double cleave_cpu_special(int64_t function, double x, double y);

/// TopKV2: the k largest of each of `rows` rows of n elements of DataType
/// `dtype`, and their indices (DataType `indexType`: int16, int32, int64),
/// into rows of k (cleave/Support/TopK.h).
void cleave_cpu_topk(int64_t dtype, int64_t indexType, const void *input,
                     int64_t rows, int64_t n, int64_t k, void *values,
                     void *indices);

/// A compiled TensorList's run-time check `check` (cleave::cpu::ListCheck)
/// of `index` against `size`: 0 when it holds; otherwise 1, and the
/// interpreter's message for it is kept for takeErrorDetail.
int64_t cleave_cpu_list_check(int64_t check, int64_t index, int64_t size);

/// The threads of compiled code and the library kernels, for programs that
/// link graph-compile's objects: cleave::cpu::setKernelThreads and
/// configureKernelThreads below, as C functions (the generated class calls
/// the second when it is constructed).
void cleave_cpu_set_threads(int threads);
void cleave_cpu_configure_threads();

/// The allocation functions of compiled code (MLIR's generic allocation
/// functions), from the buffer pool (cleave/Support/BufferPool.h).
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

/// What cleave_cpu_list_check checks: an index to read or write in
/// [0, length), a push below the bound (index: the length, size: the
/// bound), a pop from a list that is not empty (size: the length), a stack
/// of the expected length (index: expected, size: the length).
enum ListCheck : int64_t {
  kListRead,
  kListWrite,
  kListPush,
  kListPop,
  kListStack
};

/// The message the calling thread's last failed check recorded, cleared;
/// empty when none.
std::string takeErrorDetail();

/// The threads of compiled code's parallel loops and of the library
/// kernels: OpenMP's pool (OpenBLAS runs single-threaded inside it); 0
/// means every core.
void setKernelThreads(int threads);
/// setKernelThreads(0) unless threads were set already, so that OpenBLAS's
/// own threads are off (the JIT calls this).
void configureKernelThreads();
/// The calling thread's compiled code uses 1/`parts` of those threads (at
/// least one): replicas that run compiled code side by side share the
/// cores instead of each starting a team of all of them.
void shareKernelThreads(unsigned parts);
/// The calling thread's kernel threads sleep as soon as a parallel loop
/// ends instead of spinning for more work (OpenMP's blocktime 0): where
/// other threads compute meanwhile (replicas), spinning takes their cores.
void stopKernelThreadSpinning();

/// Calls compiled code `entry(args)` so that a buffer it cannot get ends
/// the call instead of the process: its allocation jumps back here, the
/// buffers the call still holds are released (compiled code holds nothing
/// else), and the result is the size it asked for. 0 when the call ran to
/// its end. Compiled code that cannot get a buffer outside such a call (an
/// object file's caller, a kernel thread) reports it and aborts.
size_t callReportingOutOfMemory(void (*entry)(void **), void **args);

} // namespace cleave::cpu

#endif // CLEAVE_TARGET_CPU_KERNELLIBRARY_H
