//===- npy-fuzzer.cpp - libFuzzer target for the .npy reader --------------===//
//
// graph-run reads feeds from .npy files; a bad file must give an error, and
// what reads must write back and read again to the same tensor.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Tensor/Npy.h"
#include "cleave/Tensor/Tensor.h"

using namespace cleave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cleave::Tensor tensor;
  std::string error;
  if (!cleave::readNpy(fuzz::asString(data, size), tensor, error))
    return 0;
  std::string again = cleave::writeNpy(tensor);
  cleave::Tensor reread;
  if (!cleave::readNpy(again, reread, error) ||
      reread.dtype() != tensor.dtype() || reread.shape() != tensor.shape() ||
      reread.byteSize() != tensor.byteSize())
    abort(); // what writeNpy writes, readNpy must read back
  return 0;
}
