//===- GraphDef.h - GraphDef import and export ------------------*- C++ -*-===//
//
// Lossless translation between TensorFlow GraphDefs (binary .pb or text
// .pbtxt) and the graph dialect: import -> export gives back an equal
// GraphDef message, node order and every attr included.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSLATE_GRAPHDEF_H
#define CLEAVE_TRANSLATE_GRAPHDEF_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace tensorflow {
class GraphDef;
} // namespace tensorflow

namespace cleave {

/// What a buffer holds, judged by its content (never by a file extension).
enum class InputFormat { GraphDefText, GraphDefBinary, MLIR };

/// Sniffs `buffer`: text that starts (after `#` comments) with a field in
/// protobuf text syntax (`node {`, `versions: {`, but not `module {`) is a
/// text GraphDef; bytes that are not text are a binary GraphDef; anything
/// else is MLIR.
InputFormat detectInputFormat(llvm::StringRef buffer);

struct GraphDefImportOptions {
  /// Treat a tensor whose byte size does not match its shape as an error.
  /// TensorFlow's own importers accept such graphs, so the default keeps the
  /// bytes (losslessly) and warns.
  bool strictTensors = false;
  /// Tensors the caller will fetch ("node" or "node:port"), checked to exist
  /// like TensorFlow's -tf-output-arrays.
  std::vector<std::string> outputArrays;
  /// Fill in the registry defaults of attrs that nodes of registered ops
  /// lack, as TensorFlow's importer does. Off by default: a round trip then
  /// no longer reproduces a file whose producer stripped defaults.
  bool addDefaultAttrs = false;
};

/// Parses `buffer` (text or binary, sniffed) and imports it. Diagnostics go
/// to the context's handler; locations point into the buffer for text input
/// and name the node in both formats. Returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphDef(const llvm::MemoryBuffer &buffer, mlir::MLIRContext *context,
               const GraphDefImportOptions &options = {});

/// Reads the graph in file `path` ("-": standard input) as the tools do:
/// MLIR, or a GraphDef in text or binary, told apart by content. A file that
/// cannot be read is reported on stderr as "<tool>: cannot open ..."; parse
/// and import errors go to the context's handler (`sourceMgr` holds an MLIR
/// buffer for its locations). Returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp> loadGraphFile(llvm::StringRef path,
                                                mlir::MLIRContext *context,
                                                llvm::SourceMgr &sourceMgr,
                                                llvm::StringRef tool);

/// Imports an already parsed GraphDef; `filename` names the locations.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphDef(const tensorflow::GraphDef &graphDef,
               mlir::MLIRContext *context, llvm::StringRef filename = "",
               const GraphDefImportOptions &options = {});

/// Exports a module holding a graph.graph and graph.func ops.
mlir::LogicalResult exportGraphDef(mlir::ModuleOp module,
                                   tensorflow::GraphDef &graphDef);

/// Exports and writes: deterministic binary wire format, or text format as
/// TensorFlow's C++ printer writes it.
mlir::LogicalResult writeGraphDef(mlir::ModuleOp module, llvm::raw_ostream &os,
                                  bool binary);

/// Registers --import-graphdef and --export-graphdef with mlir-translate's
/// registry.
void registerGraphDefTranslations();

} // namespace cleave

#endif // CLEAVE_TRANSLATE_GRAPHDEF_H
