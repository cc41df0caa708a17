//===- GraphDef.h - GraphDef import and export ------------------*- C++ -*-===//
//
// Lossless translation between TensorFlow graphs and the graph dialect:
// GraphDefs (binary .pb or text .pbtxt), MetaGraphDefs (.meta) and
// SavedModels (saved_model.pb, or its directory). Import -> export gives
// back an equal message, node order and every attr included; what a
// MetaGraphDef or SavedModel holds besides the graph rides along as module
// attributes (`graph.meta_graph`, `graph.saved_model`).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSLATE_GRAPHDEF_H
#define CLEAVE_TRANSLATE_GRAPHDEF_H

#include "cleave/Translate/InputFormat.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
namespace cl {
class OptionCategory;
} // namespace cl
class MemoryBuffer;
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace tensorflow {
class GraphDef;
class MetaGraphDef;
class SavedModel;
} // namespace tensorflow

namespace cleave {

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
  /// SavedModel input: the MetaGraphDef whose tags equal this set is read.
  std::vector<std::string> tags = {"serve"};
  /// Refuse a node whose op is neither registered nor a function of the
  /// library, with TensorFlow's message, as TensorFlow's importer does. Off
  /// by default: such nodes survive a round trip (graphs of other builds'
  /// custom ops), and the tools name them wherever they are run.
  bool strictOps = false;
};

/// Registers the import options shared by every tool that reads graphs
/// (--graphdef-strict-tensors, --graphdef-strict-ops,
/// --graphdef-output-arrays, --graphdef-add-default-attrs, --tags), in
/// getGraphDefImportCategory().
void registerGraphDefImportOptions();
llvm::cl::OptionCategory &getGraphDefImportCategory();
/// The import options as given on the command line (the defaults when
/// registerGraphDefImportOptions was not called).
GraphDefImportOptions getGraphDefImportOptionsFromCL();

/// Parses `buffer` (a GraphDef, MetaGraphDef or SavedModel, text or binary,
/// sniffed) and imports it; of a SavedModel, the MetaGraphDef tagged
/// `options.tags`. Diagnostics go to the context's handler; locations point
/// into the buffer for text input and name the node in both formats.
/// Returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphDef(const llvm::MemoryBuffer &buffer, mlir::MLIRContext *context,
               const GraphDefImportOptions &options = {});

/// Reads the graph in `path` ("-": standard input) as the tools do: MLIR,
/// or a GraphDef, MetaGraphDef or SavedModel in text or binary, told apart
/// by content; a directory is a SavedModel directory (its saved_model.pb or
/// saved_model.pbtxt). A file that cannot be read is reported on stderr as
/// "<tool>: cannot open ..."; parse and import errors go to the context's
/// handler (`sourceMgr` holds an MLIR buffer for its locations). Returns
/// null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
loadGraphFile(llvm::StringRef path, mlir::MLIRContext *context,
              llvm::SourceMgr &sourceMgr, llvm::StringRef tool,
              const GraphDefImportOptions &options = {});

/// Reads the file to import from `path`: the file itself, or for a
/// directory the SavedModel in it. Errors (naming the path) on stderr,
/// prefixed "<tool>: ".
std::unique_ptr<llvm::MemoryBuffer> readGraphInput(llvm::StringRef path,
                                                   llvm::StringRef tool);

/// Parses `buffer` as a SavedModel message (binary or text, told apart as
/// importGraphDef tells them) without importing its graphs, for callers
/// that read its signatures and collections. Errors, naming the buffer, go
/// to the context's handler.
mlir::LogicalResult parseSavedModel(const llvm::MemoryBuffer &buffer,
                                    mlir::MLIRContext *context,
                                    tensorflow::SavedModel &model);

/// Imports an already parsed GraphDef; `filename` names the locations.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphDef(const tensorflow::GraphDef &graphDef,
               mlir::MLIRContext *context, llvm::StringRef filename = "",
               const GraphDefImportOptions &options = {});

/// Exports a module holding a graph.graph and graph.func ops.
mlir::LogicalResult exportGraphDef(mlir::ModuleOp module,
                                   tensorflow::GraphDef &graphDef);

/// Exports the graph into the MetaGraphDef kept from import
/// (`graph.meta_graph`), or into an otherwise empty one.
mlir::LogicalResult exportMetaGraphDef(mlir::ModuleOp module,
                                       tensorflow::MetaGraphDef &meta);

/// Exports the MetaGraphDef back into the SavedModel it was read from, at
/// its place among the others; a graph that was not read from a SavedModel
/// becomes the only MetaGraphDef of a new one, tagged `serve` unless it has
/// tags.
mlir::LogicalResult exportSavedModel(mlir::ModuleOp module,
                                     tensorflow::SavedModel &model);

/// The MetaGraphDef the module was imported from (or `graph.meta_graph`
/// holds), without its graph_def. False when the module has none.
bool getMetaGraphInfo(mlir::ModuleOp module, tensorflow::MetaGraphDef &meta);

/// The messages a graph can be written as.
enum class GraphMessage { GraphDef, MetaGraphDef, SavedModel };

/// The message the module was imported from (GraphDef for MLIR input or a
/// GraphDef file).
GraphMessage getImportedMessage(mlir::ModuleOp module);

/// Exports and writes `kind`: deterministic binary wire format, or text
/// format as TensorFlow's C++ printer writes it.
mlir::LogicalResult writeGraphMessage(mlir::ModuleOp module,
                                      llvm::raw_ostream &os, GraphMessage kind,
                                      bool binary);
/// writeGraphMessage of a GraphDef.
mlir::LogicalResult writeGraphDef(mlir::ModuleOp module, llvm::raw_ostream &os,
                                  bool binary);

/// Registers --import-graphdef and --export-graphdef with mlir-translate's
/// registry.
void registerGraphDefTranslations();

} // namespace cleave

#endif // CLEAVE_TRANSLATE_GRAPHDEF_H
