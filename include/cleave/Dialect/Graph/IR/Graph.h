//===- Graph.h - the graph dialect ------------------------------*- C++ -*-===//
//
// The `graph` dialect: a lossless IR of TensorFlow GraphDefs. See
// include/cleave/Dialect/Graph/IR/*.td for the definitions and docs/Dialect.md for a tour.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPH_H
#define CLEAVE_DIALECT_GRAPH_IR_GRAPH_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "cleave/Dialect/Graph/IR/GraphDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cleave/Dialect/Graph/IR/GraphTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cleave/Dialect/Graph/IR/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "cleave/Dialect/Graph/IR/GraphOps.h.inc"

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace cleave::graph {

/// The MLIR element type of a TensorFlow DataType enum value: builtin types
/// where MLIR has one, dialect types otherwise, `!graph.ref<T>` for the
/// `_REF` values and `!graph.dtype<N>` for values this build does not know.
mlir::Type dataTypeToType(mlir::MLIRContext *ctx, int32_t dataType);

/// The DataType enum value of an element type made by dataTypeToType; -1 for
/// a type that is no TensorFlow dtype (including `!graph.unknown`).
int32_t typeToDataType(mlir::Type type);

/// The element type used to store values of `dtype` in a DenseElementsAttr
/// (e.g. i8 for `!graph.quantized<qint8>`), or null when it has none.
mlir::Type getStorageType(mlir::Type dtype);

/// `tensor<*xT>`, or a ranked tensor when `shape` is known.
mlir::TensorType getTensorType(mlir::Type elementType, ShapeAttr shape = {});

/// The TensorFlow name of a dtype ("float", "int32", "string", "float_ref"),
/// as TensorFlow prints it in messages.
std::string getDataTypeName(mlir::Type dtype);

/// A node as the flat graph that GraphDef export writes has it. A
/// graph.cluster or graph.replicate keeps some folded into its attributes
/// (TPUReplicateMetadata, TPUReplicatedInput/Output); the functions below
/// unfold them.
struct FlatNode {
  llvm::StringRef name, opType, device;
  mlir::DictionaryAttr attrs;
  /// Its data inputs, then its control inputs.
  llvm::SmallVector<mlir::Value> inputs;
};

/// The cluster's TPUReplicateMetadata.
FlatNode getMetadataNode(ClusterOp cluster);

/// The replicate region's TPUReplicatedInput nodes (one per block argument)
/// and TPUReplicatedOutput nodes (one per yielded value that had one), each
/// with its share of the trailing control operands.
void getReplicatedNodes(ReplicateOp replicate,
                        llvm::SmallVectorImpl<FlatNode> &inputs,
                        llvm::SmallVectorImpl<FlatNode> &outputs);

/// An error on `node`, named as TensorFlow names nodes in its messages
/// ("Node '<name>': ...").
mlir::InFlightDiagnostic nodeError(NodeOp node);

/// The name of the library function `node` calls: the `f` of a
/// PartitionedCall or StatefulPartitionedCall (empty when it has none), else
/// the node's op type (which names a function when the node is a call).
llvm::StringRef getCalleeName(NodeOp node);

/// The most replicas a replicated computation may have: each replica is a
/// thread and a copy of the state (the largest TPU pods have a few
/// thousand cores).
constexpr int64_t kMaxReplicas = 1 << 16;

/// The library functions `node` calls, each with the attr that names it:
/// its func and list(func) attrs (If and Case branches, While's cond and
/// body, a call's `f`), and ("", op type) when the op type names a
/// function of the module. Names of missing functions are listed too.
llvm::SmallVector<std::pair<llvm::StringRef, llvm::StringRef>>
getCalledFunctions(NodeOp node);

/// A new library function named `base` (or `base_<k>`, the first that is
/// free) over arguments `arg<i>` of `argTypes`, whose body `build` fills and
/// whose results (`result<i>`) it returns. Fails with a diagnostic at `loc`
/// when a type has no TensorFlow dtype.
mlir::FailureOr<FuncOp> buildLibraryFunction(
    mlir::ModuleOp module, llvm::StringRef base,
    llvm::ArrayRef<mlir::Type> argTypes,
    llvm::function_ref<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
        mlir::OpBuilder &, llvm::ArrayRef<mlir::Value>)>
        build,
    mlir::Location loc);

/// Clones `nodes` at the builder's insertion point, their operands mapped
/// through `mapping`, which gains their results. Operands are mapped once
/// all are cloned, so cycles (v1 loops) and any node order are fine.
void cloneNodes(mlir::OpBuilder &builder, llvm::ArrayRef<NodeOp> nodes,
                mlir::IRMapping &mapping);

/// cloneNodes into the body of a function being built: control inputs from
/// outside the function are dropped (the node that calls the function
/// carries them).
void cloneNodesIntoFunction(mlir::OpBuilder &builder,
                            llvm::ArrayRef<NodeOp> nodes,
                            mlir::IRMapping &mapping);

/// The body of each top-level graph and of each function with a body.
llvm::SmallVector<mlir::Block *> getGraphBodies(mlir::ModuleOp module);

/// The most elements getConstantInts lists.
constexpr int64_t kMaxConstantInts = 1 << 16;

/// The elements of `value` when a Const node produces it as an integer
/// (not bool) tensor of at most kMaxConstantInts elements.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value value);

/// What a value names in the flat graph that GraphDef export writes: output
/// `port` of node `node`, or its control token.
struct FlatValue {
  llvm::StringRef node;
  unsigned port = 0;
  bool isControl = false;
};

/// The flat name of `value`. Values that graph.cluster and graph.replicate
/// define stand for a folded node (TPUReplicatedInput/Output, the metadata)
/// or pass a node's output through; both resolve to that node. Function
/// arguments have no node: nullopt.
std::optional<FlatValue> getFlatValue(mlir::Value value);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPH_H
