//===- graph-show.cpp - what a SavedModel or GraphDef holds ---------------===//
//
//   graph-show <SavedModel dir | saved_model.pb | graph.pb(txt) | .meta>
//   [--json]
//
// saved_model_cli show for Cleave: a SavedModel's (or MetaGraphDef's) tag
// sets, signatures with their inputs and outputs (dtype, shape, tensor),
// variables (from its checkpoint when there is one), assets; a GraphDef's
// placeholders, outputs (nodes no other node reads), variables, op
// histogram, functions, and which ops would compile for the CPU.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Tensor/Tensor.h"
#include "cleave/Translate/InputFormat.h"
#include "cleave/tf/graph.pb.h"
#include "cleave/tf/meta_graph.pb.h"
#include "cleave/tf/saved_model.pb.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::OptionCategory showCategory("graph-show options");
static cl::opt<std::string>
    inputPath(cl::Positional,
              cl::desc("<SavedModel directory, saved_model.pb(txt), GraphDef "
                       "or MetaGraphDef (.pb, .pbtxt, .meta)>"),
              cl::Required, cl::cat(showCategory));
static cl::opt<bool> asJson("json", cl::desc("print JSON, for scripts"),
                            cl::init(false), cl::cat(showCategory));

static int fail(const std::string &message) {
  llvm::errs() << "graph-show: " << message << "\n";
  return 1;
}

/// "[2,?]", "<unknown rank>".
static std::string shapeText(const tensorflow::TensorShapeProto &shape) {
  if (shape.unknown_rank())
    return "<unknown rank>";
  std::vector<int64_t> dims;
  for (const auto &dim : shape.dim())
    dims.push_back(dim.size());
  return cleave::shapeString(dims);
}

static json::Value shapeJson(const tensorflow::TensorShapeProto &shape) {
  if (shape.unknown_rank())
    return nullptr;
  json::Array dims;
  for (const auto &dim : shape.dim())
    dims.push_back(dim.size());
  return dims;
}

/// A GraphDef's contents, as lists of facts.
struct GraphSummary {
  int64_t nodes = 0;
  std::vector<std::tuple<std::string, int32_t, std::string, json::Value>>
      placeholders; // name, dtype, shape text, shape json
  std::vector<std::string> outputs;
  std::vector<
      std::tuple<std::string, std::string, int32_t, std::string, json::Value>>
      variables; // name, op, dtype, shape text, shape json
  std::map<std::string, int64_t> ops;
  std::vector<std::string> functions;
  std::map<std::string, int64_t> notCompiled; // op -> count
  /// Ops neither the registry nor the graph's library defines: no tool
  /// can run them.
  std::map<std::string, int64_t> unregistered; // op -> count
};

static GraphSummary summarize(const tensorflow::GraphDef &graph) {
  GraphSummary s;
  s.nodes = graph.node_size();
  llvm::StringSet<> read, functions;
  for (const auto &function : graph.library().function())
    functions.insert(function.signature().name());
  for (const auto &node : graph.node())
    for (const std::string &input : node.input()) {
      llvm::StringRef name(input);
      name.consume_front("^");
      read.insert(name.split(':').first);
    }
  auto attrType = [](const tensorflow::NodeDef &node, const char *key) {
    auto it = node.attr().find(key);
    return it == node.attr().end() ? 0 : int32_t(it->second.type());
  };
  auto attrShape = [](const tensorflow::NodeDef &node,
                      const char *key) -> const tensorflow::TensorShapeProto * {
    auto it = node.attr().find(key);
    return it == node.attr().end() || !it->second.has_shape()
               ? nullptr
               : &it->second.shape();
  };
  for (const auto &node : graph.node()) {
    const std::string &op = node.op();
    ++s.ops[op];
    if (!read.contains(node.name()))
      s.outputs.push_back(node.name());
    if (op == "Placeholder" || op == "PlaceholderWithDefault") {
      const auto *shape = attrShape(node, "shape");
      s.placeholders.emplace_back(
          node.name(), attrType(node, "dtype"),
          shape ? shapeText(*shape) : std::string("<unknown rank>"),
          shape ? shapeJson(*shape) : json::Value(nullptr));
    }
    if (op == "VariableV2" || op == "Variable" || op == "VarHandleOp") {
      const auto *shape = attrShape(node, "shape");
      s.variables.emplace_back(
          node.name(), op, attrType(node, "dtype"),
          shape ? shapeText(*shape) : std::string("<unknown rank>"),
          shape ? shapeJson(*shape) : json::Value(nullptr));
    }
    // Placeholders are fed, not computed.
    bool fed = op == "Placeholder" || op == "PlaceholderWithDefault";
    if (!fed && !cleave::conversion::hasCPULowering(op))
      ++s.notCompiled[op];
    if (!cleave::ops::lookupOp(op) && !functions.contains(op))
      ++s.unregistered[op];
  }
  for (const auto &function : graph.library().function())
    s.functions.push_back(function.signature().name());
  return s;
}

static json::Object graphJson(const GraphSummary &s) {
  json::Array placeholders, variables, outputs(s.outputs),
      functions(s.functions);
  for (const auto &[name, dtype, text, shape] : s.placeholders)
    placeholders.push_back(json::Object{{"name", name},
                                        {"dtype", cleave::dtypeName(dtype)},
                                        {"shape", json::Value(shape)}});
  for (const auto &[name, op, dtype, text, shape] : s.variables)
    variables.push_back(json::Object{{"name", name},
                                     {"op", op},
                                     {"dtype", cleave::dtypeName(dtype)},
                                     {"shape", shape}});
  json::Object ops, notCompiled, unregistered;
  for (const auto &[op, count] : s.ops)
    ops[op] = count;
  for (const auto &[op, count] : s.notCompiled)
    notCompiled[op] = count;
  for (const auto &[op, count] : s.unregistered)
    unregistered[op] = count;
  return json::Object{{"nodes", s.nodes},
                      {"placeholders", std::move(placeholders)},
                      {"outputs", std::move(outputs)},
                      {"variables", std::move(variables)},
                      {"ops", std::move(ops)},
                      {"functions", std::move(functions)},
                      {"without_cpu_lowering", std::move(notCompiled)},
                      {"not_registered", std::move(unregistered)}};
}

static void printGraph(const GraphSummary &s, llvm::raw_ostream &os,
                       const char *indent) {
  os << indent << "graph: " << s.nodes << (s.nodes == 1 ? " node" : " nodes")
     << ", " << s.functions.size()
     << (s.functions.size() == 1 ? " function" : " functions") << "\n";
  os << indent << "placeholders:" << (s.placeholders.empty() ? " none" : "")
     << "\n";
  for (const auto &[name, dtype, text, shape] : s.placeholders)
    os << indent << "  " << name << ": " << cleave::dtypeName(dtype) << " "
       << text << "\n";
  os << indent << "outputs (nodes no other node reads):";
  for (const std::string &name : s.outputs)
    os << " " << name;
  os << "\n";
  if (!s.variables.empty()) {
    os << indent << "variables:\n";
    for (const auto &[name, op, dtype, text, shape] : s.variables)
      os << indent << "  " << name << ": " << cleave::dtypeName(dtype) << " "
         << text << " (" << op << ")\n";
  }
  os << indent << "ops:";
  for (const auto &[op, count] : s.ops)
    os << " " << op << " " << count;
  os << "\n";
  if (!s.functions.empty()) {
    os << indent << "functions:";
    for (const std::string &name : s.functions)
      os << " " << name;
    os << "\n";
  }
  int64_t lowered = s.nodes;
  for (const auto &[op, count] : s.notCompiled)
    lowered -= count;
  os << indent << "compiles for the CPU: " << lowered << " of " << s.nodes
     << " nodes";
  if (!s.notCompiled.empty()) {
    os << "; interpreted:";
    for (const auto &[op, count] : s.notCompiled)
      os << " " << op << " " << count;
  }
  os << "\n";
  if (!s.unregistered.empty()) {
    os << indent << "not registered (no tool runs these):";
    for (const auto &[op, count] : s.unregistered)
      os << " " << op << " " << count;
    os << "\n";
  }
}

/// The variables of a SavedModel's checkpoint, or nothing.
static std::optional<
    std::vector<std::tuple<std::string, int32_t, std::vector<int64_t>>>>
checkpointVariables(const std::string &exportDir) {
  llvm::SmallString<256> prefix(exportDir);
  llvm::sys::path::append(prefix, "variables", "variables");
  if (!llvm::sys::fs::exists(cleave::checkpoint::indexFileName(prefix)))
    return std::nullopt;
  auto reader = cleave::checkpoint::BundleReader::open(prefix);
  if (!reader) {
    llvm::consumeError(reader.takeError());
    return std::nullopt;
  }
  std::vector<std::tuple<std::string, int32_t, std::vector<int64_t>>> out;
  for (const std::string &key : reader->keys())
    if (const auto *entry = reader->lookup(key))
      out.emplace_back(key, entry->dtype, entry->shape);
  return out;
}

static void showMetaGraph(const tensorflow::MetaGraphDef &meta,
                          const std::string &exportDir, llvm::raw_ostream &os,
                          json::Array *metas) {
  std::vector<std::string> tags(meta.meta_info_def().tags().begin(),
                                meta.meta_info_def().tags().end());
  json::Object signatures;
  os << "MetaGraphDef with tags: "
     << (tags.empty() ? std::string("<none>") : llvm::join(tags, ", ")) << "\n";
  std::map<std::string, const tensorflow::SignatureDef *> sorted;
  for (const auto &[key, signature] : meta.signature_def())
    sorted[key] = &signature;
  for (const auto &[key, signature] : sorted) {
    os << "  signature '" << key << "'";
    if (!signature->method_name().empty())
      os << " (" << signature->method_name() << ")";
    os << ":\n";
    json::Object entry{{"method_name", signature->method_name()}};
    for (bool inputs : {true, false}) {
      const auto &map = inputs ? signature->inputs() : signature->outputs();
      os << "    " << (inputs ? "inputs" : "outputs") << ":\n";
      std::map<std::string, const tensorflow::TensorInfo *> infos;
      for (const auto &[name, info] : map)
        infos[name] = &info;
      json::Object side;
      for (const auto &[name, info] : infos) {
        os << "      " << name << ": " << cleave::dtypeName(info->dtype())
           << " " << shapeText(info->tensor_shape()) << " (" << info->name()
           << ")\n";
        side[name] = json::Object{{"dtype", cleave::dtypeName(info->dtype())},
                                  {"shape", shapeJson(info->tensor_shape())},
                                  {"tensor", info->name()}};
      }
      entry[inputs ? "inputs" : "outputs"] = std::move(side);
    }
    signatures[key] = std::move(entry);
  }
  json::Array variables;
  if (auto stored = checkpointVariables(exportDir)) {
    os << "  variables (from variables/variables):\n";
    for (const auto &[name, dtype, shape] : *stored) {
      os << "    " << name << ": " << cleave::dtypeName(dtype) << " "
         << cleave::shapeString(shape) << "\n";
      variables.push_back(json::Object{{"name", name},
                                       {"dtype", cleave::dtypeName(dtype)},
                                       {"shape", json::Array(shape)}});
    }
  }
  // Assets: TensorFlow 2's asset_file_def, and TensorFlow 1's
  // saved_model_assets collection of packed AssetFileDefs.
  std::vector<std::string> assetNames;
  for (const auto &asset : meta.asset_file_def())
    assetNames.push_back(asset.filename());
  if (auto it = meta.collection_def().find("saved_model_assets");
      it != meta.collection_def().end())
    for (const auto &any : it->second.any_list().value()) {
      tensorflow::AssetFileDef asset;
      if (any.UnpackTo(&asset))
        assetNames.push_back(asset.filename());
    }
  json::Array assets;
  if (!assetNames.empty()) {
    os << "  assets:";
    for (const std::string &name : assetNames) {
      os << " " << name;
      assets.push_back(name);
    }
    os << "\n";
  }
  GraphSummary graph = summarize(meta.graph_def());
  printGraph(graph, os, "  ");
  if (metas)
    metas->push_back(
        json::Object{{"tags", json::Array(tags)},
                     {"signatures", std::move(signatures)},
                     {"checkpoint_variables", std::move(variables)},
                     {"assets", std::move(assets)},
                     {"graph", graphJson(graph)}});
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  cleave::hideLibraryOptions({&showCategory});
  cleave::parseToolOptions(argc, argv,
                           "graph-show: what a SavedModel or GraphDef holds\n");
  std::string path = inputPath, exportDir;
  if (llvm::sys::fs::is_directory(path)) {
    exportDir = path;
    for (const char *name : {"saved_model.pb", "saved_model.pbtxt"}) {
      llvm::SmallString<256> file(path);
      llvm::sys::path::append(file, name);
      if (llvm::sys::fs::exists(file)) {
        path = std::string(file);
        break;
      }
    }
    if (path == exportDir)
      return fail("'" + exportDir +
                  "' holds no saved_model.pb or saved_model.pbtxt: not a "
                  "SavedModel (name a GraphDef or MetaGraphDef file instead)");
  } else {
    exportDir = std::string(llvm::sys::path::parent_path(path));
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return fail("cannot open '" + path + "': " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (std::string what = cleave::identifyNonGraph(bytes); !what.empty())
    return fail("'" + path + "' is " + what +
                ", not a GraphDef, MetaGraphDef or SavedModel");
  cleave::InputFormat format = cleave::detectInputFormat(bytes);
  using cleave::InputFormat;
  // A .pbtxt that does not parse looks like MLIR to the sniffer: read it
  // as a GraphDef, so that protobuf's message says where it breaks.
  llvm::StringRef extension = llvm::sys::path::extension(path);
  if (format == InputFormat::MLIR) {
    if (extension == ".mlir")
      return fail("'" + path +
                  "' is MLIR: graph-show reads GraphDefs, "
                  "MetaGraphDefs and SavedModels");
    if (extension != ".pbtxt" && extension != ".pbtext")
      return fail("'" + path +
                  "' is not a GraphDef, MetaGraphDef or SavedModel");
    format = InputFormat::GraphDefText;
  }
  bool binary = format == InputFormat::GraphDefBinary ||
                format == InputFormat::MetaGraphDefBinary ||
                format == InputFormat::SavedModelBinary;
  // Why `message` does not parse ("" when it does), as protobuf says it,
  // without protobuf's own log on stderr.
  auto parse = [&](google::protobuf::Message &message) -> std::string {
    if (binary) {
      google::protobuf::io::CodedInputStream stream(
          reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
      stream.SetTotalBytesLimit(INT32_MAX);
      if (message.ParseFromCodedStream(&stream) &&
          stream.ConsumedEntireMessage())
        return "";
      return "truncated or corrupt protobuf";
    }
    struct FirstError : google::protobuf::io::ErrorCollector {
      std::string text;
      void AddError(int line, int column, const std::string &message) override {
        if (text.empty())
          text = std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                 ": " + message;
      }
    } errors;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    if (parser.ParseFromString(bytes.str(), &message))
      return "";
    return errors.text.empty() ? "it does not parse" : errors.text;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  json::Object result{{"path", path}};
  if (format == InputFormat::SavedModelText ||
      format == InputFormat::SavedModelBinary) {
    tensorflow::SavedModel model;
    if (std::string why = parse(model); !why.empty())
      return fail("'" + path + "' is not a SavedModel: " + why);
    os << "SavedModel " << exportDir << ": " << model.meta_graphs_size()
       << (model.meta_graphs_size() == 1 ? " MetaGraphDef" : " MetaGraphDefs")
       << "\n";
    json::Array metas;
    for (const auto &meta : model.meta_graphs())
      showMetaGraph(meta, exportDir, os, &metas);
    result["kind"] = "SavedModel";
    result["meta_graphs"] = std::move(metas);
  } else if (format == InputFormat::MetaGraphDefText ||
             format == InputFormat::MetaGraphDefBinary) {
    tensorflow::MetaGraphDef meta;
    if (std::string why = parse(meta); !why.empty())
      return fail("'" + path + "' is not a MetaGraphDef: " + why);
    json::Array metas;
    showMetaGraph(meta, exportDir, os, &metas);
    result["kind"] = "MetaGraphDef";
    result["meta_graphs"] = std::move(metas);
  } else {
    tensorflow::GraphDef graph;
    if (std::string why = parse(graph); !why.empty())
      return fail("'" + path + "' is not a GraphDef: " + why);
    GraphSummary summary = summarize(graph);
    os << "GraphDef " << path << "\n";
    printGraph(summary, os, "  ");
    result["kind"] = "GraphDef";
    result["graph"] = graphJson(summary);
  }
  if (asJson)
    llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(result)))
                 << "\n";
  else
    llvm::outs() << text;
  return 0;
}
