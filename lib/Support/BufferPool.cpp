//===- BufferPool.cpp - reused blocks for tensors and compiled code -------===//
//
// Blocks of 64 KiB and more go back to a pool by exact size when released
// (steps repeat the same sizes) and serve the next request of that size;
// the pool holds at most kMaxPooledBytes, beyond which blocks return to the
// system.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/BufferPool.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

static constexpr size_t kMinPooledBytes = 64 * 1024;
static constexpr size_t kMaxPooledBytes = size_t(1) << 30;
/// No machine Cleave runs on has a terabyte for one tensor; a request above
/// that is a size computed from bad input, refused (null) before the
/// allocator sees it (AddressSanitizer's aborts at 2^40 bytes).
static constexpr size_t kMaxBufferBytes = (size_t(1) << 40) - (size_t(1) << 20);

namespace {
class BufferPool {
public:
  void *allocate(size_t size) {
    constexpr size_t align = cleave::kBufferAlignment;
    if (size > kMaxBufferBytes)
      return nullptr;
    // aligned_alloc wants a multiple of the alignment (and a block for 0).
    size_t rounded = std::max<size_t>((size + align - 1) / align * align, align);
    if (size < kMinPooledBytes)
      return std::aligned_alloc(align, rounded);
    std::lock_guard<std::mutex> lock(mutex);
    void *block = nullptr;
    auto it = freeBlocks.find(size);
    if (it != freeBlocks.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      pooledBytes -= size;
    } else {
      block = std::aligned_alloc(align, rounded);
      if (!block) {
        // The free blocks of other sizes may be what memory is short of.
        trimLocked();
        block = std::aligned_alloc(align, rounded);
      }
      if (!block)
        return nullptr;
    }
    liveSizes[block] = size;
    return block;
  }

  void release(void *block) {
    if (!block)
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto live = liveSizes.find(block);
      if (live != liveSizes.end()) {
        size_t size = live->second;
        liveSizes.erase(live);
        if (pooledBytes + size <= kMaxPooledBytes) {
          freeBlocks[size].push_back(block);
          pooledBytes += size;
          return;
        }
      }
    }
    std::free(block);
  }

private:
  /// Gives every free block back to the system (`mutex` held).
  void trimLocked() {
    for (auto &[size, blocks] : freeBlocks)
      for (void *block : blocks)
        std::free(block);
    freeBlocks.clear();
    pooledBytes = 0;
  }

  std::mutex mutex;
  // The sizes of the pooled-size blocks handed out. (Kept here rather than
  // in a header before each block, so that blocks start where the system
  // allocator's do: leak checkers see the pointers to them.)
  std::unordered_map<void *, size_t> liveSizes;
  std::unordered_map<size_t, std::vector<void *>> freeBlocks;
  size_t pooledBytes = 0;
};
} // namespace

// Never destroyed: blocks may be released during static destruction.
static BufferPool &pool() {
  static BufferPool *instance = new BufferPool();
  return *instance;
}

void *cleave::allocateBuffer(size_t bytes) { return pool().allocate(bytes); }

void cleave::releaseBuffer(void *block) { pool().release(block); }
