//===- BufferPool.h - reused blocks for tensors and compiled code -*- C++ -*-===//
//
// Steps allocate the same tensors every time. Fresh pages from the system
// cost a fault and zeroing each, so large blocks go back to a pool when
// released and serve the next request of the same size. Blocks are 64-byte
// aligned. Thread-safe; no LLVM or MLIR, so that programs linking
// graph-compile's objects need only this and the kernel library.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_BUFFERPOOL_H
#define CLEAVE_SUPPORT_BUFFERPOOL_H

#include <cstddef>

namespace cleave {

/// The alignment of every block.
constexpr size_t kBufferAlignment = 64;

/// A block of `bytes` (uninitialized), or null when memory is exhausted.
void *allocateBuffer(size_t bytes);

/// Returns a block from allocateBuffer (null is ignored).
void releaseBuffer(void *block);

} // namespace cleave

#endif // CLEAVE_SUPPORT_BUFFERPOOL_H
