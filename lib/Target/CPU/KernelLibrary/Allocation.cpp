//===- Allocation.cpp - memref.alloc of compiled code ---------------------===//
//
// MLIR's generic allocation functions (finalize-memref-to-llvm with
// use-generic-functions), served by the buffer pool: temporaries of one
// step are the blocks of the last.
//
// Compiled code does not check what its allocations return, so a buffer
// the pool cannot give must not come back as null. Inside
// callReportingOutOfMemory the allocation jumps back to the call instead
// (longjmp: compiled code has no destructors to skip, and its frames hold
// no resources but the buffers recorded here).
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/BufferPool.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
/// The call of compiled code this thread is in.
struct GuardedCall {
  std::jmp_buf failed;
  /// Buffers the call allocated and has not freed.
  std::vector<void *> held;
  size_t failedBytes = 0;
};
} // namespace
static thread_local GuardedCall *guardedCall = nullptr;

static void *allocate(size_t size) {
  void *buffer = cleave::allocateBuffer(size);
  GuardedCall *call = guardedCall;
  if (buffer) {
    if (call)
      call->held.push_back(buffer);
    return buffer;
  }
  if (call) {
    call->failedBytes = size ? size : 1;
    std::longjmp(call->failed, 1);
  }
  std::fprintf(stderr,
               "cleave: OOM when allocating a buffer of %zu bytes in "
               "compiled code\n",
               size);
  std::abort();
}

// Not inlined into the caller's frame: the setjmp context stays small, and
// nothing of the caller is live across the jump.
#if defined(__clang__)
__attribute__((noinline, no_sanitize("function")))
#endif
static bool
runUntilJump(GuardedCall &call, void (*entry)(void **), void **args) {
  if (setjmp(call.failed))
    return false;
  entry(args);
  return true;
}

size_t cleave::cpu::callReportingOutOfMemory(void (*entry)(void **),
                                             void **args) {
  GuardedCall call;
  GuardedCall *outer = guardedCall;
  guardedCall = &call;
  bool finished = runUntilJump(call, entry, args);
  guardedCall = outer;
  if (finished)
    return 0;
  for (void *buffer : call.held)
    cleave::releaseBuffer(buffer);
  return call.failedBytes;
}

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) { return allocate(size); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // The CPU pipeline asks for no alignment beyond the pool's.
  if (alignment > cleave::kBufferAlignment) {
    std::fprintf(stderr,
                 "cleave: compiled code asked for %zu-byte "
                 "alignment\n",
                 alignment);
    std::abort();
  }
  return allocate(size);
}

void _mlir_memref_to_llvm_free(void *pointer) {
  if (GuardedCall *call = guardedCall)
    for (size_t i = call->held.size(); i-- > 0;)
      if (call->held[i] == pointer) {
        call->held[i] = call->held.back();
        call->held.pop_back();
        break;
      }
  cleave::releaseBuffer(pointer);
}
}
