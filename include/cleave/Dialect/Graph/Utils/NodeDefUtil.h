//===- NodeDefUtil.h - attr defaults and attr validation --------*- C++ -*-===//
//
// TensorFlow's node_def_util for graph.node: the registry's attr defaults as
// attributes (AddDefaultsToNodeDef), and the check that a node's attrs are
// what its op declares (ValidateNodeDef), with TensorFlow's messages.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_NODEDEFUTIL_H
#define CLEAVE_DIALECT_GRAPH_UTILS_NODEDEFUTIL_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Ops/OpRegistry.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave {

/// The default of `attr` as the importer would have represented it, or
/// null when the attr has no default.
mlir::Attribute getDefaultAttr(const ops::AttrSpec &attr,
                               mlir::MLIRContext *context);

/// The value of `node`'s attr `name` as a kernel or a lowering reads it:
/// the node's own (a #graph.placeholder bound through `bindings`, or null
/// when unbound), else the default of the op's registration; null when it
/// has neither.
mlir::Attribute getNodeAttrOrDefault(graph::NodeOp node, llvm::StringRef name,
                                     mlir::DictionaryAttr bindings = {});

/// Typed views of such an attr; empty when it is absent or of another kind.
std::optional<int32_t> attrAsDataType(mlir::Attribute attr);
std::optional<int64_t> attrAsInt(mlir::Attribute attr);
std::optional<bool> attrAsBool(mlir::Attribute attr);
std::optional<double> attrAsFloat(mlir::Attribute attr);
std::optional<std::string> attrAsString(mlir::Attribute attr);
std::optional<std::vector<int64_t>> attrAsIntList(mlir::Attribute attr);

/// A node's attrs as kernels and lowerings read them: getNodeAttrOrDefault
/// (placeholders bound through `bindings`) seen through the typed views.
class NodeAttrReader {
public:
  NodeAttrReader(graph::NodeOp node, mlir::DictionaryAttr bindings = {})
      : attrNode(node), attrBindings(bindings) {}

  mlir::Attribute getAttr(llvm::StringRef name) {
    return getNodeAttrOrDefault(attrNode, name, attrBindings);
  }
  /// The DataType of a `type` attr.
  std::optional<int32_t> getType(llvm::StringRef name) {
    return attrAsDataType(getAttr(name));
  }
  std::optional<int64_t> getInt(llvm::StringRef name) {
    return attrAsInt(getAttr(name));
  }
  std::optional<bool> getBool(llvm::StringRef name) {
    return attrAsBool(getAttr(name));
  }
  std::optional<double> getFloat(llvm::StringRef name) {
    return attrAsFloat(getAttr(name));
  }
  std::optional<std::string> getString(llvm::StringRef name) {
    return attrAsString(getAttr(name));
  }
  std::optional<std::vector<int64_t>> getIntList(llvm::StringRef name) {
    return attrAsIntList(getAttr(name));
  }

private:
  graph::NodeOp attrNode;
  mlir::DictionaryAttr attrBindings;
};

/// Whether `op` makes a variable: VariableV2, Variable (ref variables) or
/// VarHandleOp (a resource variable's handle).
bool isVariableOpType(llvm::StringRef op);

/// Whether `node`'s op is defined: registered, or a function of the graph's
/// library (what TensorFlow's importer accepts).
bool isDefinedOp(graph::NodeOp node);

/// The variable a VariableV2/VarHandleOp node stands for: its shared_name,
/// or its node name when that is empty (the namespace the interpreter's
/// State and compiled code share).
std::string getVariableName(graph::NodeOp node);

/// The dims of the node's `shape` attr when every one is known.
std::optional<std::vector<int64_t>> getKnownShapeAttr(graph::NodeOp node);

/// Adds the defaults of the attrs a node of a registered op lacks (what a
/// producer that stripped defaults left out).
void addDefaultAttrs(graph::NodeOp node);

/// Checks a node of a registered op against its signature, as
/// TensorFlow's ValidateNodeDef: every attr present or defaulted, of the
/// declared kind, with an allowed value, and as many data inputs as the
/// signature gives. Placeholders (in function bodies) are not checked.
/// Emits the error on the node; unregistered ops always pass.
mlir::LogicalResult validateNodeDef(graph::NodeOp node);

/// The DataType each data input of `node` must carry, as its signature and
/// attrs give them (0 where any is allowed: a placeholder attr, an
/// unregistered op); empty when the count does not match. Call after
/// validateNodeDef.
llvm::SmallVector<int32_t> getExpectedInputDTypes(graph::NodeOp node);

/// validateNodeDef for every node under `root` (graph bodies, function
/// bodies, clusters): what a pass that reads inputs by position runs first,
/// so that a malformed node (a Switch with one input) is an error naming it
/// instead of a read past its operands. Fails at the first bad node.
mlir::LogicalResult validateNodeDefs(mlir::Operation *root);

/// Creates a node of registered op `opType` as TensorFlow's Python op
/// wrappers do: the type and length attrs of its inputs (T, N, Tidx, ...)
/// are inferred from `inputs` unless `attrs` gives them, every other attr
/// with a default is written, and the results are typed from the signature.
/// `controls` become control inputs. Fails with `error` when the op is
/// unknown or its attrs do not determine its outputs.
mlir::FailureOr<graph::NodeOp>
createRegisteredNode(mlir::OpBuilder &builder, mlir::Location loc,
                     llvm::StringRef opType, llvm::StringRef name,
                     mlir::ValueRange inputs, mlir::ValueRange controls,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs,
                     llvm::StringRef device, std::string &error);

} // namespace cleave

#endif // CLEAVE_DIALECT_GRAPH_UTILS_NODEDEFUTIL_H
