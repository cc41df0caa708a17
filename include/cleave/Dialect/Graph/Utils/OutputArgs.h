//===- OutputArgs.h - the outputs a node's signature gives ------*- C++ -*-===//
//
// How many outputs a node of an op has, and of which types, as its op's
// registration or a library function's signature and the node's attrs say:
// what import, export and the passes that create nodes must agree on.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_OUTPUTARGS_H
#define CLEAVE_DIALECT_GRAPH_UTILS_OUTPUTARGS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace cleave::graph {

/// One output argument of a node: its name and the types of its elements.
struct OutputArg {
  std::string name;
  llvm::SmallVector<mlir::Type> types;
};

/// The output args of a node of `opType` with `attrs`, from the op registry
/// or, for a call of a `graph.func` of `module`, from its signature. Fails with
/// `error` set when the op is known but its attrs do not determine the
/// outputs; returns false (and no error) when the op is unknown.
mlir::FailureOr<bool> resolveOutputArgs(llvm::StringRef opType,
                                        mlir::DictionaryAttr attrs,
                                        mlir::ModuleOp module,
                                        llvm::SmallVectorImpl<OutputArg> &args,
                                        std::string &error);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_UTILS_OUTPUTARGS_H
