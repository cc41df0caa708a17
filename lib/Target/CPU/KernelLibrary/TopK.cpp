//===- TopK.cpp - TopKV2 for compiled code --------------------------------===//
//
// Compiled TopKV2 calls the selection the reference kernel runs
// (cleave/Support/TopK.h), so both return the same indices for ties.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/TopK.h"
#include "cleave/Target/CPU/KernelLibrary.h"

/// `fn(T{})` for the DataTypes of TopKV2's values (realnumbertype); false
/// for others.
template <typename Fn> static bool visitReal(int64_t dtype, Fn &&fn) {
  switch (dtype) {
  case 1: fn(float{}); return true;
  case 2: fn(double{}); return true;
  case 3: fn(int32_t{}); return true;
  case 4: fn(uint8_t{}); return true;
  case 5: fn(int16_t{}); return true;
  case 6: fn(int8_t{}); return true;
  case 9: fn(int64_t{}); return true;
  case 17: fn(uint16_t{}); return true;
  case 22: fn(uint32_t{}); return true;
  case 23: fn(uint64_t{}); return true;
  default: return false;
  }
}

extern "C" void cleave_cpu_topk(int64_t dtype, int64_t indexType,
                                const void *input, int64_t rows, int64_t n,
                                int64_t k, void *values, void *indices) {
  visitReal(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *in = static_cast<const T *>(input);
    T *out = static_cast<T *>(values);
    switch (indexType) {
    case 5: // int16
      cleave::topK(in, rows, n, k, out, static_cast<int16_t *>(indices));
      break;
    case 9: // int64
      cleave::topK(in, rows, n, k, out, static_cast<int64_t *>(indices));
      break;
    default: // int32
      cleave::topK(in, rows, n, k, out, static_cast<int32_t *>(indices));
    }
  });
}
