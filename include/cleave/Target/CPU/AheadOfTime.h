//===- AheadOfTime.h - graphs to object files, as tfcompile -----*- C++ -*-===//
//
// Compiles the part of a graph that a set of feeds, fetches and targets
// needs into a native object file and a C++ header declaring a class with
// typed buffers for the feeds, fetches and variables and a Run() method, as
// TensorFlow's tfcompile does. The generated code needs neither MLIR nor
// the interpreter at run time: the object calls only malloc, free and
// libm.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_AHEADOFTIME_H
#define CLEAVE_TARGET_CPU_AHEADOFTIME_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/StringMap.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::cpu {

struct AheadOfTimeOptions {
  /// Placeholders fed, each with the shape to compile for (empty: the
  /// placeholder's own, which must be fully known).
  struct Feed {
    std::string name;
    std::optional<std::vector<int64_t>> shape;
  };
  std::vector<Feed> feeds;
  /// Tensors returned (node or node:port) and nodes run for their effects.
  std::vector<std::string> fetches, targets;
  /// The class, with its namespaces ("cleave::MlpStep").
  std::string className;
  /// The C symbol of the compiled function; the buffers' initial variable
  /// values are `<function>_variable<k>`.
  std::string function;
  /// The variables' values at the start by variable name (shared_name, or
  /// the node's name), baked into the object; graph-compile takes them from
  /// the interpreter running the graph's initializers. Variables without one
  /// start as zeros of the shape their VariableV2/VarHandleOp declares.
  const llvm::StringMap<Tensor> *initialVariables = nullptr;
  /// What the header names as its source.
  std::string sourceName;
};

/// Writes the object file to `object` and the header to `header`. Errors
/// (an op without a CPU lowering, a shape that is not fully known, ...)
/// are emitted as diagnostics on the graph's nodes.
mlir::LogicalResult compileAheadOfTime(mlir::ModuleOp graph,
                                       const AheadOfTimeOptions &options,
                                       llvm::raw_pwrite_stream &object,
                                       llvm::raw_ostream &header);

} // namespace cleave::cpu

#endif // CLEAVE_TARGET_CPU_AHEADOFTIME_H
