//===- Allocation.cpp - memref.alloc of compiled code ---------------------===//
//
// MLIR's generic allocation functions (finalize-memref-to-llvm with
// use-generic-functions), served by the buffer pool: temporaries of one
// step are the blocks of the last.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/BufferPool.h"
#include "cleave/Target/CPU/KernelLibrary.h"

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return cleave::allocateBuffer(size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // The CPU pipeline asks for no alignment beyond the pool's.
  return alignment <= cleave::kBufferAlignment ? cleave::allocateBuffer(size)
                                               : nullptr;
}

void _mlir_memref_to_llvm_free(void *pointer) { cleave::releaseBuffer(pointer); }
}
