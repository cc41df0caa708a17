//===- npy-fuzzer.cpp - libFuzzer target for the .npy reader --------------===//
//
// graph-run reads feeds from .npy files; a bad file must give an error, and
// what reads must write back and read again to the same tensor.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Interpreter/Tensor.h"

using namespace cleave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  interp::Tensor tensor;
  std::string error;
  if (!interp::readNpy(fuzz::asString(data, size), tensor, error))
    return 0;
  std::string again = interp::writeNpy(tensor);
  interp::Tensor reread;
  if (!interp::readNpy(again, reread, error) ||
      reread.dtype() != tensor.dtype() || reread.shape() != tensor.shape() ||
      reread.byteSize() != tensor.byteSize())
    abort(); // what writeNpy writes, readNpy must read back
  return 0;
}
