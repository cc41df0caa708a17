//===- ReplicatedComputation.h - replicated computations --------*- C++ -*-===//
//
// The attributes TensorFlow's tpu.replicate() writes, the name uniquing of
// Graph.unique_name, and the feed/fetch rule of TPUReplicateContext.AddOp,
// shared by graph-replicate, graph-cluster-formation, the gradient pass and
// graph-run.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_REPLICATEDCOMPUTATION_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_REPLICATEDCOMPUTATION_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace cleave::graph {

/// The cluster a node belongs to.
inline constexpr llvm::StringLiteral kTPUReplicateAttr = "_tpu_replicate";
/// The host (outside-compilation) scope of a node inside a cluster.
inline constexpr llvm::StringLiteral kOutsideCompilationAttr =
    "_xla_outside_compilation";

/// Graph.unique_name over a block's node names: a name, or any name scope
/// ("a" of "a/b"), already used gets the first free "_<k>" suffix.
/// Comparison ignores case, as TensorFlow's does.
class NameUniquer {
public:
  /// Marks every node name in `block` (nested regions included) and its
  /// scopes as used.
  explicit NameUniquer(mlir::Block &block);
  /// `name` if free, else `name_<k>`; the result is marked as used.
  std::string unique(llvm::StringRef name);
  bool isUsed(llvm::StringRef name) const;

private:
  void markUsed(llvm::StringRef name);
  llvm::StringMap<int> namesInUse;
};

/// The value of string attr `name` of `node`, or "" when absent.
llvm::StringRef getStringTFAttr(NodeOp node, llvm::StringRef name);

/// `node`'s attrs with `name` set to `value` (removed when `value` is null).
void setTFAttr(NodeOp node, llvm::StringRef name, mlir::Attribute value);

/// The dtype of a tensor or ref value: a ref's referenced type
/// (TensorFlow's base_dtype).
mlir::Type getElementTypeOf(mlir::Value value);

/// Python's name of a dtype ("tf.float32"), as TensorFlow's messages print it.
std::string getPythonDTypeName(mlir::Type elementType);

/// Why TensorFlow's session would refuse to feed output `port` of `node`
/// (or fetch `node`), whose graph was tagged by tpu.replicate(): nodes of a
/// replicated computation can be fed or fetched only when outside-compiled
/// and the computation has a single replica. Empty when allowed.
std::optional<std::string> getReplicationFeedError(NodeOp node,
                                                   unsigned port);
std::optional<std::string> getReplicationFetchError(NodeOp node);

/// TensorFlow's messages for a node of a replicated computation that a run
/// fetches (`nodeName`) or feeds (`tensorName`).
std::string getNotFetchableMessage(llvm::StringRef nodeName);
std::string getNotFeedableMessage(llvm::StringRef tensorName);

/// Calls `fn` on every node of a formed replicated computation (a
/// graph.cluster or graph.replicate region), including the nodes that
/// auto-clustering moved into the functions of `_XlaCompiledKernel` calls:
/// they are still the computation's.
void forEachNodeOfComputation(mlir::Operation *region,
                              llvm::function_ref<void(NodeOp)> fn);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_REPLICATEDCOMPUTATION_H
