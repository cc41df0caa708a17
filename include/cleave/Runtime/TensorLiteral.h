//===- TensorLiteral.h - tensors written as nested lists --------*- C++ -*-===//
//
// How a command line writes a tensor: `3.5`, `[[1, 2], [3, 4]]`, `true`,
// `"a string"` or a bare word for a string tensor, nested as numpy prints
// arrays; the shape is the nesting.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_TENSORLITERAL_H
#define CLEAVE_RUNTIME_TENSORLITERAL_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/Support/Error.h"

namespace cleave::runtime {

/// A tensor of `dtype` holding the literal `text`. Errors say what is
/// wrong with the text ("ragged literal: rows of different lengths",
/// "'x' is not a number").
llvm::Expected<Tensor> parseTensorLiteral(llvm::StringRef text, int32_t dtype);

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_TENSORLITERAL_H
