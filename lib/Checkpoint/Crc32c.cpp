//===- Crc32c.cpp - CRC-32C, table-driven and SSE4.2 ----------------------===//
//
// The portable path processes eight bytes per step with eight 256-entry
// tables ("slicing by 8"); on x86-64 CPUs with SSE4.2 the crc32 instruction
// does the same work, chosen once at run time.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/Crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CLEAVE_CRC32C_HAVE_SSE42 1
#endif

using namespace cleave::checkpoint;

/// Reflected Castagnoli polynomial.
static constexpr uint32_t kPolynomial = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

static constexpr Tables buildTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][i] = c;
  }
  // t[k][i]: the CRC of byte i followed by k zero bytes.
  for (int k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i)
      t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}

static constexpr Tables kTables = buildTables();

static uint64_t loadLittleEndian64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

#ifdef CLEAVE_CRC32C_HAVE_SSE42
__attribute__((target("sse4.2"))) static uint32_t
extendHardware(uint32_t crc, const unsigned char *p, size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  for (; n > 0; --n)
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return ~static_cast<uint32_t>(c);
}

static bool cpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

uint32_t cleave::checkpoint::extendCrc32cPortable(uint32_t crc,
                                                  const void *data,
                                                  size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint32_t c = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word = loadLittleEndian64(p) ^ c;
    c = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^
        kTables[5][(word >> 16) & 0xff] ^ kTables[4][(word >> 24) & 0xff] ^
        kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
        kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
  }
  for (; size > 0; --size)
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
  return ~c;
}

uint32_t cleave::checkpoint::extendCrc32c(uint32_t crc, const void *data,
                                          size_t size) {
#ifdef CLEAVE_CRC32C_HAVE_SSE42
  if (cpuHasSse42())
    return extendHardware(crc, static_cast<const unsigned char *>(data), size);
#endif
  return extendCrc32cPortable(crc, data, size);
}
