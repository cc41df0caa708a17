//===- Files.cpp - GraphDef, MetaGraphDef and SavedModel files ------------===//
//
// Which message a file holds (sniffed from its content), parsing it in text
// or binary, choosing a SavedModel's MetaGraphDef by its tags, and wrapping
// the exported graph back into the message it came from. The graph itself
// is imported by Import.cpp; what a MetaGraphDef holds besides it (meta
// info, saver, collections, signatures, assets, object graph) is kept as
// the module attribute `graph.meta_graph`, and a SavedModel's other
// MetaGraphDefs as `graph.saved_model` (with `graph.saved_model_index`, the
// position of the imported one), so that both export unchanged.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/meta_graph.pb.h"
#include "cleave/tf/saved_model.pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "google/protobuf/arena.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

#include <set>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
namespace tf = tensorflow;
namespace pb = google::protobuf;

static constexpr llvm::StringLiteral kMetaGraphAttr = "graph.meta_graph";
static constexpr llvm::StringLiteral kSavedModelAttr = "graph.saved_model";
static constexpr llvm::StringLiteral kSavedModelIndexAttr =
    "graph.saved_model_index";

namespace {
/// Collects what protobuf logs while a message is parsed (invalid UTF-8 in
/// a string field, ...), so that it reaches the user as a note of the one
/// parse error instead of as `[libprotobuf ERROR ...]` lines of its own.
class ProtobufLogCapture {
public:
  ProtobufLogCapture() : previous(pb::SetLogHandler(&record)) {
    captured().clear();
  }
  ~ProtobufLogCapture() { pb::SetLogHandler(previous); }
  static std::vector<std::string> &captured() {
    static std::vector<std::string> messages;
    return messages;
  }

private:
  static void record(pb::LogLevel, const char *, int,
                     const std::string &message) {
    captured().push_back(message);
  }
  pb::LogHandler *previous;
};
} // namespace

/// Adds protobuf's own explanations of a failed parse as notes.
static void attachProtobufNotes(InFlightDiagnostic &diag) {
  for (const std::string &message : ProtobufLogCapture::captured())
    diag.attachNote() << "protobuf: " << message;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
/// Reports text-format parse errors as MLIR diagnostics at their line.
class ParseErrorCollector : public pb::io::ErrorCollector {
public:
  explicit ParseErrorCollector(StringAttr filename) : filename(filename) {}
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string &message) override {
    if (reported++)
      return;
    emitError(FileLineColLoc::get(filename, line + 1, column + 1))
        << "Error parsing Protobuf: " << message;
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string &) override {}
  int reported = 0;

private:
  StringAttr filename;
};
} // namespace

/// Parses `bytes` as `message` (binary or text, as `binary` says), with the
/// text's locations in `tree`. Errors name the file and the message type.
static LogicalResult parseMessage(StringRef bytes, bool binary,
                                  StringAttr filename, pb::Message &message,
                                  pb::TextFormat::ParseInfoTree &tree) {
  // Line 0 for the wire format: its bytes are no source to quote.
  Location fileLoc =
      FileLineColLoc::get(filename, binary ? 0 : 1, binary ? 0 : 1);
  std::string type = message.GetDescriptor()->name();
  ProtobufLogCapture capture;
  if (binary) {
    pb::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    stream.SetRecursionLimit(100);
    if (!message.ParseFromCodedStream(&stream) ||
        !stream.ConsumedEntireMessage()) {
      InFlightDiagnostic diag =
          emitError(fileLoc) << "Could not parse input file: not a valid "
                                "binary "
                             << type << " (truncated or corrupt protobuf)";
      attachProtobufNotes(diag);
      return diag;
    }
    return success();
  }
  pb::TextFormat::Parser parser;
  ParseErrorCollector errors(filename);
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  parser.SetRecursionLimit(100);
  if (!parser.ParseFromString(bytes.str(), &message)) {
    if (!errors.reported) {
      InFlightDiagnostic diag =
          emitError(fileLoc) << "Error parsing Protobuf: could not parse "
                                "input file as a text "
                             << type;
      attachProtobufNotes(diag);
    }
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MetaGraphDef and SavedModel import
//===----------------------------------------------------------------------===//

/// Imports the graph of `meta` and keeps the rest of it on the module.
static OwningOpRef<ModuleOp>
importMetaGraph(const tf::MetaGraphDef &meta, MLIRContext *context,
                StringRef filename, const pb::TextFormat::ParseInfoTree *tree,
                const GraphDefImportOptions &options) {
  const pb::TextFormat::ParseInfoTree *graphTree =
      tree ? tree->GetTreeForNested(
                 tf::MetaGraphDef::descriptor()->FindFieldByName("graph_def"),
                 -1)
           : nullptr;
  OwningOpRef<ModuleOp> module = graphdef::importGraphDefMessage(
      meta.graph_def(), context, filename, graphTree, options);
  if (!module)
    return nullptr;
  tf::MetaGraphDef rest = meta;
  rest.clear_graph_def();
  (*module)->setAttr(kMetaGraphAttr, graphdef::protoToAttr(rest, context));
  return module;
}

static std::string tagSetString(const pb::RepeatedPtrField<std::string> &tags) {
  std::set<std::string> sorted(tags.begin(), tags.end());
  return "{ " + llvm::join(sorted, ", ") + " }";
}

static OwningOpRef<ModuleOp>
importSavedModel(const tf::SavedModel &model, MLIRContext *context,
                 StringRef filename, const pb::TextFormat::ParseInfoTree *tree,
                 const GraphDefImportOptions &options) {
  // As TensorFlow's loader: the MetaGraphDef whose tags, as a set, equal
  // the requested ones.
  std::set<std::string> wanted(options.tags.begin(), options.tags.end());
  int chosen = -1;
  for (auto [i, meta] : llvm::enumerate(model.meta_graphs())) {
    const auto &tags = meta.meta_info_def().tags();
    if (std::set<std::string>(tags.begin(), tags.end()) == wanted) {
      chosen = i;
      break;
    }
  }
  if (chosen < 0) {
    InFlightDiagnostic diag =
        emitError(FileLineColLoc::get(context, filename, 1, 1))
        << "Could not find meta graph def matching supplied tags: { "
        << llvm::join(wanted, ", ") << " }; the SavedModel has ";
    if (model.meta_graphs().empty())
      diag << "no MetaGraphDef";
    else
      diag << "the tag sets "
           << llvm::join(llvm::map_range(model.meta_graphs(),
                                         [](const tf::MetaGraphDef &m) {
                                           return tagSetString(
                                               m.meta_info_def().tags());
                                         }),
                         " ")
           << " (choose one with --tags)";
    return nullptr;
  }
  const pb::TextFormat::ParseInfoTree *metaTree =
      tree ? tree->GetTreeForNested(
                 tf::SavedModel::descriptor()->FindFieldByName("meta_graphs"),
                 chosen)
           : nullptr;
  OwningOpRef<ModuleOp> module = importMetaGraph(
      model.meta_graphs(chosen), context, filename, metaTree, options);
  if (!module)
    return nullptr;
  tf::SavedModel rest = model;
  rest.mutable_meta_graphs()->DeleteSubrange(chosen, 1);
  Builder builder(context);
  (*module)->setAttr(kSavedModelAttr, graphdef::protoToAttr(rest, context));
  (*module)->setAttr(kSavedModelIndexAttr, builder.getI64IntegerAttr(chosen));
  return module;
}

LogicalResult cleave::parseSavedModel(const llvm::MemoryBuffer &buffer,
                                      MLIRContext *context,
                                      tf::SavedModel &model) {
  StringAttr filename = StringAttr::get(context, buffer.getBufferIdentifier());
  InputFormat format = detectInputFormat(buffer.getBuffer());
  if (format != InputFormat::SavedModelBinary &&
      format != InputFormat::SavedModelText)
    return emitError(FileLineColLoc::get(filename, 1, 1))
           << "'" << filename.getValue() << "' is not a SavedModel";
  pb::TextFormat::ParseInfoTree tree;
  return parseMessage(buffer.getBuffer(),
                      format == InputFormat::SavedModelBinary, filename, model,
                      tree);
}

OwningOpRef<ModuleOp>
cleave::importGraphDef(const llvm::MemoryBuffer &buffer, MLIRContext *context,
                       const GraphDefImportOptions &options) {
  context->loadDialect<GraphDialect>();
  StringRef filename = buffer.getBufferIdentifier();
  StringAttr fileAttr = StringAttr::get(context, filename);
  StringRef bytes = buffer.getBuffer();
  if (std::string what = identifyNonGraph(bytes); !what.empty())
    return emitError(FileLineColLoc::get(fileAttr, 0, 0))
               << "'" << filename << "' is " << what
               << ", not a GraphDef, MetaGraphDef or SavedModel",
           nullptr;
  InputFormat format = detectInputFormat(bytes);
  bool binary = format == InputFormat::GraphDefBinary ||
                format == InputFormat::MetaGraphDefBinary ||
                format == InputFormat::SavedModelBinary;
  // An arena makes building and freeing a million-node message cheap.
  pb::Arena arena;
  pb::TextFormat::ParseInfoTree tree;
  const pb::TextFormat::ParseInfoTree *treeOrNull = binary ? nullptr : &tree;
  switch (format) {
  case InputFormat::MetaGraphDefText:
  case InputFormat::MetaGraphDefBinary: {
    auto &meta = *pb::Arena::CreateMessage<tf::MetaGraphDef>(&arena);
    if (failed(parseMessage(bytes, binary, fileAttr, meta, tree)))
      return nullptr;
    return importMetaGraph(meta, context, filename, treeOrNull, options);
  }
  case InputFormat::SavedModelText:
  case InputFormat::SavedModelBinary: {
    auto &model = *pb::Arena::CreateMessage<tf::SavedModel>(&arena);
    if (failed(parseMessage(bytes, binary, fileAttr, model, tree)))
      return nullptr;
    return importSavedModel(model, context, filename, treeOrNull, options);
  }
  default: {
    auto &graphDef = *pb::Arena::CreateMessage<tf::GraphDef>(&arena);
    if (failed(parseMessage(bytes, binary, fileAttr, graphDef, tree)))
      return nullptr;
    return graphdef::importGraphDefMessage(graphDef, context, filename,
                                           treeOrNull, options);
  }
  }
}

//===----------------------------------------------------------------------===//
// Reading files
//===----------------------------------------------------------------------===//

std::unique_ptr<llvm::MemoryBuffer> cleave::readGraphInput(StringRef path,
                                                           StringRef tool) {
  if (path != "-" && llvm::sys::fs::is_directory(path)) {
    // A SavedModel directory, as TensorFlow's loader reads it.
    for (const char *name : {"saved_model.pb", "saved_model.pbtxt"}) {
      llvm::SmallString<256> file(path);
      llvm::sys::path::append(file, name);
      if (!llvm::sys::fs::exists(file))
        continue;
      return readGraphInput(file, tool);
    }
    llvm::errs() << tool << ": SavedModel file does not exist at: " << path
                 << "/{saved_model.pbtxt|saved_model.pb}\n";
    return nullptr;
  }
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!file) {
    llvm::errs() << tool << ": cannot open '" << path
                 << "': " << file.getError().message() << "\n";
    return nullptr;
  }
  if (std::string what = identifyNonGraph((*file)->getBuffer());
      !what.empty()) {
    llvm::errs() << tool << ": '" << path << "' is " << what
                 << ", not a graph (a GraphDef, MetaGraphDef or SavedModel, "
                    "binary or text, or MLIR)\n";
    return nullptr;
  }
  return std::move(*file);
}

OwningOpRef<ModuleOp> cleave::loadGraphFile(
    StringRef path, MLIRContext *context, llvm::SourceMgr &sourceMgr,
    StringRef tool, const GraphDefImportOptions &options) {
  std::unique_ptr<llvm::MemoryBuffer> file = readGraphInput(path, tool);
  if (!file)
    return nullptr;
  if (detectInputFormat(file->getBuffer()) == InputFormat::MLIR) {
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, context);
  }
  return importGraphDef(*file, context, options);
}

//===----------------------------------------------------------------------===//
// Export
//===----------------------------------------------------------------------===//

bool cleave::getMetaGraphInfo(ModuleOp module, tf::MetaGraphDef &meta) {
  auto rest = module->getAttrOfType<DictionaryAttr>(kMetaGraphAttr);
  std::string error;
  return rest && succeeded(graphdef::attrToProto(rest, meta, error));
}

LogicalResult cleave::exportMetaGraphDef(ModuleOp module,
                                         tf::MetaGraphDef &meta) {
  if (auto rest = module->getAttrOfType<DictionaryAttr>(kMetaGraphAttr)) {
    std::string error;
    if (failed(graphdef::attrToProto(rest, meta, error)))
      return module.emitOpError(kMetaGraphAttr) << ": " << error;
  }
  return exportGraphDef(module, *meta.mutable_graph_def());
}

LogicalResult cleave::exportSavedModel(ModuleOp module, tf::SavedModel &model) {
  tf::MetaGraphDef meta;
  if (failed(exportMetaGraphDef(module, meta)))
    return failure();
  auto rest = module->getAttrOfType<DictionaryAttr>(kSavedModelAttr);
  if (!rest) {
    // A graph that was not a SavedModel: one MetaGraphDef, tagged for
    // serving as TensorFlow's simple_save tags it.
    model.set_saved_model_schema_version(1);
    if (meta.meta_info_def().tags().empty())
      meta.mutable_meta_info_def()->add_tags("serve");
    *model.add_meta_graphs() = std::move(meta);
    return success();
  }
  std::string error;
  if (failed(graphdef::attrToProto(rest, model, error)))
    return module.emitOpError(kSavedModelAttr) << ": " << error;
  int64_t index = model.meta_graphs_size();
  if (auto attr = module->getAttrOfType<IntegerAttr>(kSavedModelIndexAttr))
    index = std::clamp<int64_t>(attr.getInt(), 0, index);
  *model.add_meta_graphs() = std::move(meta);
  // Back to the position it was read from.
  for (int64_t i = model.meta_graphs_size() - 1; i > index; --i)
    model.mutable_meta_graphs()->SwapElements(i, i - 1);
  return success();
}

/// Deterministic binary wire format, or text as TensorFlow's C++ printer
/// writes it.
static void serialize(const pb::Message &message, bool binary,
                      std::string &bytes) {
  if (binary) {
    pb::io::StringOutputStream stream(&bytes);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
    coded.Trim();
    return;
  }
  pb::TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(false);
  printer.PrintToString(message, &bytes);
}

/// Exports into a `Message` made in `arena` with `exportFn`, then writes it.
template <typename Message, typename ExportFn>
static LogicalResult exportAndWrite(pb::Arena &arena, ExportFn exportFn,
                                    bool binary, llvm::raw_ostream &os) {
  auto *message = pb::Arena::CreateMessage<Message>(&arena);
  if (failed(exportFn(*message)))
    return failure();
  std::string bytes;
  serialize(*message, binary, bytes);
  os << bytes;
  return success();
}

LogicalResult cleave::writeGraphMessage(ModuleOp module, llvm::raw_ostream &os,
                                        GraphMessage kind, bool binary) {
  pb::Arena arena;
  switch (kind) {
  case GraphMessage::GraphDef:
    return exportAndWrite<tf::GraphDef>(
        arena, [&](tf::GraphDef &m) { return exportGraphDef(module, m); },
        binary, os);
  case GraphMessage::MetaGraphDef:
    return exportAndWrite<tf::MetaGraphDef>(
        arena, [&](tf::MetaGraphDef &m) { return exportMetaGraphDef(module, m); },
        binary, os);
  case GraphMessage::SavedModel:
    return exportAndWrite<tf::SavedModel>(
        arena, [&](tf::SavedModel &m) { return exportSavedModel(module, m); },
        binary, os);
  }
  return failure();
}

LogicalResult cleave::writeGraphDef(ModuleOp module, llvm::raw_ostream &os,
                                    bool binary) {
  return writeGraphMessage(module, os, GraphMessage::GraphDef, binary);
}

GraphMessage cleave::getImportedMessage(ModuleOp module) {
  if (module->hasAttr(kSavedModelAttr))
    return GraphMessage::SavedModel;
  if (module->hasAttr(kMetaGraphAttr))
    return GraphMessage::MetaGraphDef;
  return GraphMessage::GraphDef;
}
