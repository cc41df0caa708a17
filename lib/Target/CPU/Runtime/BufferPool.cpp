//===- BufferPool.cpp - the allocator of compiled code --------------------===//
//
// Compiled steps allocate the same temporaries every step. Fresh pages from
// the system cost a fault and zeroing per 4 KiB (a tenth of an MLP step),
// so blocks of 64 KiB and more go back to a pool by exact size when freed
// and serve the next request of that size. The pool holds at most
// kMaxPooledBytes; beyond that, blocks return to the system.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kAlignment = 64;
// The block's size, kept in front of it (one alignment unit, so the block
// stays aligned).
constexpr size_t kHeader = kAlignment;
constexpr size_t kMinPooledBytes = 64 * 1024;
constexpr size_t kMaxPooledBytes = size_t(1) << 30;

class BufferPool {
public:
  void *allocate(size_t size) {
    if (size >= kMinPooledBytes) {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = freeBlocks.find(size);
      if (it != freeBlocks.end() && !it->second.empty()) {
        void *block = it->second.back();
        it->second.pop_back();
        pooledBytes -= size;
        return block;
      }
    }
    size_t total = (kHeader + size + kAlignment - 1) / kAlignment * kAlignment;
    char *base = static_cast<char *>(std::aligned_alloc(kAlignment, total));
    if (!base)
      return nullptr;
    *reinterpret_cast<size_t *>(base) = size;
    return base + kHeader;
  }

  void release(void *block) {
    if (!block)
      return;
    char *base = static_cast<char *>(block) - kHeader;
    size_t size = *reinterpret_cast<size_t *>(base);
    if (size >= kMinPooledBytes) {
      std::lock_guard<std::mutex> lock(mutex);
      if (pooledBytes + size <= kMaxPooledBytes) {
        freeBlocks[size].push_back(block);
        pooledBytes += size;
        return;
      }
    }
    std::free(base);
  }

private:
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> freeBlocks;
  size_t pooledBytes = 0;
};

// Never destroyed: compiled code may free blocks during static destruction.
BufferPool &pool() {
  static BufferPool *instance = new BufferPool();
  return *instance;
}

} // namespace

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) { return pool().allocate(size); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // Every block is 64-byte aligned; larger alignments are not requested by
  // the CPU pipeline.
  return alignment <= kAlignment ? pool().allocate(size) : nullptr;
}

void _mlir_memref_to_llvm_free(void *pointer) { pool().release(pointer); }
}
