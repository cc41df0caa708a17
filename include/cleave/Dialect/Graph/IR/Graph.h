//===- Graph.h - the graph dialect ------------------------------*- C++ -*-===//
//
// The `graph` dialect: a lossless IR of TensorFlow GraphDefs. See
// dialects/Graph/IR/*.td for the definitions and docs/Dialect.md for a tour.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPH_H
#define CLEAVE_DIALECT_GRAPH_IR_GRAPH_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
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

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPH_H
