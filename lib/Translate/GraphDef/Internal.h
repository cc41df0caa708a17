//===- Internal.h - shared pieces of GraphDef import/export -----*- C++ -*-===//
//
// Conversions between protobuf messages and MLIR attributes, and the input
// string rendering that import and export must agree on.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_TRANSLATE_GRAPHDEF_INTERNAL_H
#define CLEAVE_LIB_TRANSLATE_GRAPHDEF_INTERNAL_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/OutputArgs.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "google/protobuf/text_format.h"

#include <string>

namespace cleave::graphdef {

/// Converts AttrValue to an attribute. On failure returns null and sets
/// `error` to a message (without the node name, which the caller adds).
mlir::Attribute importAttrValue(const tensorflow::AttrValue &value,
                                mlir::MLIRContext *ctx, std::string &error,
                                std::string *warning = nullptr,
                                bool strictTensors = false);
/// The inverse of importAttrValue.
mlir::LogicalResult exportAttrValue(mlir::Attribute attr,
                                    tensorflow::AttrValue &value,
                                    std::string &error);

/// Converts an attr map (NodeDef.attr, FunctionDef.attr, ...).
mlir::DictionaryAttr importAttrMap(
    const google::protobuf::Map<std::string, tensorflow::AttrValue> &map,
    mlir::MLIRContext *ctx, std::string &error, std::string *warning = nullptr,
    bool strictTensors = false);
mlir::LogicalResult
exportAttrMap(mlir::DictionaryAttr dict,
              google::protobuf::Map<std::string, tensorflow::AttrValue> &map,
              std::string &error);

graph::ShapeAttr importShape(const tensorflow::TensorShapeProto &shape,
                             mlir::MLIRContext *ctx, std::string &error);
void exportShape(graph::ShapeAttr shape, tensorflow::TensorShapeProto &proto);

graph::TensorAttr importTensor(const tensorflow::TensorProto &tensor,
                               mlir::MLIRContext *ctx, std::string &error,
                               std::string *warning, bool strictTensors);
mlir::LogicalResult exportTensor(graph::TensorAttr attr,
                                 tensorflow::TensorProto &tensor,
                                 std::string &error);

/// Any message as a dictionary, field by field (names as in the .proto,
/// enums by name, repeated fields as arrays, maps as arrays of {key, value}).
/// Used for the parts of a GraphDef that Cleave keeps but does not
/// interpret: OpDef signatures, debug info, full types.
mlir::DictionaryAttr protoToAttr(const google::protobuf::Message &message,
                                 mlir::MLIRContext *ctx);
mlir::LogicalResult attrToProto(mlir::DictionaryAttr dict,
                                google::protobuf::Message &message,
                                std::string &error);

/// The string export writes for input `value` of a node: "x", "x:1", "^x"
/// at the top level; "arg", "node:out_arg:idx", "^node" in function bodies.
std::string renderInput(mlir::Value value, bool inFunction);

/// Whether `spelling`, as written in a GraphDef, names the same producer and
/// port as `value` (so that export may write it instead of renderInput).
bool spellingMatches(llvm::StringRef spelling, mlir::Value value,
                     bool inFunction);

/// Imports a parsed GraphDef; `tree` (may be null) holds where a text
/// GraphDef wrote each node, for diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphDefMessage(const tensorflow::GraphDef &graphDef,
                      mlir::MLIRContext *context, llvm::StringRef filename,
                      const google::protobuf::TextFormat::ParseInfoTree *tree,
                      const GraphDefImportOptions &options);

} // namespace cleave::graphdef

#endif // CLEAVE_LIB_TRANSLATE_GRAPHDEF_INTERNAL_H
