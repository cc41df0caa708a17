//===- Crc32c.h - CRC-32C (Castagnoli) checksums ----------------*- C++ -*-===//
//
// The checksum TensorFlow's checkpoints and tables store: CRC-32C with the
// reflected polynomial 0x82F63B78, initial value and final XOR ~0, so that
// crc32c("123456789") == 0xE3069283. Stored values are "masked" (rotated and
// offset) so that a checksum of bytes that embed checksums stays useful.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_CRC32C_H
#define CLEAVE_CHECKPOINT_CRC32C_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace cleave::checkpoint {

/// The CRC-32C of `A + data[0, size)` where `crc` is the CRC-32C of some
/// string A (0 for the empty string). Uses the SSE4.2 instruction when the
/// CPU has it, tables otherwise; both give the same value.
uint32_t extendCrc32c(uint32_t crc, const void *data, size_t size);

/// The CRC-32C of `bytes`.
inline uint32_t crc32c(llvm::StringRef bytes) {
  return extendCrc32c(0, bytes.data(), bytes.size());
}

/// The masked form TensorFlow stores on disk: rotate right by 15 bits and
/// add 0xa282ead8.
inline uint32_t maskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// The inverse of maskCrc32c.
inline uint32_t unmaskCrc32c(uint32_t masked) {
  uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

/// The table-driven implementation alone (for tests comparing it with the
/// hardware one).
uint32_t extendCrc32cPortable(uint32_t crc, const void *data, size_t size);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_CRC32C_H
