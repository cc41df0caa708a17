//===- BufferPool.cpp - reused blocks for tensors and compiled code -------===//
//
// Blocks of 64 KiB and more go back to a pool by exact size when released
// (steps repeat the same sizes) and serve the next request of that size;
// the pool holds at most kMaxPooledBytes, beyond which blocks return to the
// system. The block's size is kept in a header in front of it.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/BufferPool.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

// One alignment unit, so that the block after it stays aligned.
constexpr size_t kHeader = cleave::kBufferAlignment;
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
    constexpr size_t align = cleave::kBufferAlignment;
    size_t total = (kHeader + size + align - 1) / align * align;
    char *base = static_cast<char *>(std::aligned_alloc(align, total));
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

// Never destroyed: blocks may be released during static destruction.
BufferPool &pool() {
  static BufferPool *instance = new BufferPool();
  return *instance;
}

} // namespace

void *cleave::allocateBuffer(size_t bytes) { return pool().allocate(bytes); }

void cleave::releaseBuffer(void *block) { pool().release(block); }
