//===- Freezing.h - variables to constants, as freeze_graph -----*- C++ -*-===//
//
// TensorFlow's freeze_graph: every variable the requested outputs read
// becomes a Const holding its value, resource reads become Identity, and
// the graph is pruned to what the outputs need.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_FREEZING_H
#define CLEAVE_RUNTIME_FREEZING_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tensorflow {
class GraphDef;
} // namespace tensorflow

namespace cleave::runtime {

/// Freezes `graph` in place: keeps the nodes that `outputs` (node names,
/// "node:port" accepted) need, in their order, with variables (VariableV2,
/// Variable, VarHandleOp) replaced by Consts of `values` (keyed as the
/// interpreter keys variables: shared_name, else node name) and
/// ReadVariableOp by Identity. Errors: an output that does not exist, a
/// needed variable without a value, a needed node that updates a variable
/// (a frozen graph has none).
llvm::Error freezeGraphDef(tensorflow::GraphDef &graph,
                           const llvm::StringMap<cleave::Tensor> &values,
                           llvm::ArrayRef<std::string> outputs);

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_FREEZING_H
