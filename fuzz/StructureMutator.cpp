//===- StructureMutator.cpp - libFuzzer's custom mutator for GraphDefs ----===//
//
// Linked into the targets that take text GraphDefs and run the deep code
// (passes, interpreter): most mutations are structural (GraphDefMutator.h),
// so the graph still parses and reaches the passes; a quarter are
// libFuzzer's own byte mutations, which reach values and syntax the
// structural ones do not.
//
//===----------------------------------------------------------------------===//

#include "GraphDefMutator.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 4 == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  if (!cleave::fuzz::mutateGraphDefText(text, rng(), 1 + rng() % 3) ||
      text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
