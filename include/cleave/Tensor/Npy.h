//===- Npy.h - NumPy .npy files as tensors ----------------------*- C++ -*-===//
//
// NumPy's array file format, version 1 and 2 headers, little-endian and C
// order: how graph-run takes feeds and writes fetches.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TENSOR_NPY_H
#define CLEAVE_TENSOR_NPY_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace cleave {

/// Reads a NumPy .npy file (little-endian, C order) into a tensor.
bool readNpy(llvm::StringRef bytes, Tensor &tensor, std::string &error);
/// Whether a .npy file can hold tensors of `dtype` (numbers and bools).
bool isNpyDType(int32_t dtype);
/// Writes a tensor of a dtype isNpyDType accepts as a NumPy .npy file.
std::string writeNpy(const Tensor &tensor);

} // namespace cleave

#endif // CLEAVE_TENSOR_NPY_H
