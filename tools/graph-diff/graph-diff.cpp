//===- graph-diff.cpp - compare two graphs as protobuf messages -----------===//
//
//   graph-diff a.pbtxt b.pb     exit 0 when equal, 1 with a report otherwise
//   ... | graph-diff a.pbtxt -  (`-` reads standard input)
//   graph-diff --ignore-node-order a.pbtxt b.pbtxt
//
// Each file may be a GraphDef, MetaGraphDef or SavedModel, text or binary
// (sniffed); both must hold the same kind. Messages are compared field by
// field with repeated-field order significant and map fields as maps,
// exactly what "lossless" means for Cleave's round trips. With
// --ignore-node-order, GraphDef.node is compared as a map keyed by name:
// node order carries no meaning, and regions (graph.cluster) reorder it.
//
//===----------------------------------------------------------------------===//

#include "cleave/Translate/InputFormat.h"
#include "cleave/Version.h"
#include "cleave/tf/graph.pb.h"
#include "cleave/tf/meta_graph.pb.h"
#include "cleave/tf/saved_model.pb.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "llvm/Config/llvm-config.h"

#include <fstream>
#include <memory>
#include <iostream>
#include <sstream>

namespace pb = google::protobuf;

/// The message `bytes` hold, as the importer tells them apart.
static std::unique_ptr<pb::Message> newMessage(cleave::InputFormat format,
                                               bool &binary) {
  using cleave::InputFormat;
  binary = format == InputFormat::GraphDefBinary ||
           format == InputFormat::MetaGraphDefBinary ||
           format == InputFormat::SavedModelBinary;
  switch (format) {
  case InputFormat::MetaGraphDefText:
  case InputFormat::MetaGraphDefBinary:
    return std::make_unique<tensorflow::MetaGraphDef>();
  case InputFormat::SavedModelText:
  case InputFormat::SavedModelBinary:
    return std::make_unique<tensorflow::SavedModel>();
  default:
    return std::make_unique<tensorflow::GraphDef>();
  }
}

static std::unique_ptr<pb::Message> load(const char *path) {
  std::stringstream buffer;
  if (std::string(path) == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "graph-diff: cannot open '" << path << "'\n";
      return nullptr;
    }
    buffer << in.rdbuf();
  }
  std::string bytes = buffer.str();
  if (std::string what = cleave::identifyNonGraph(bytes); !what.empty()) {
    std::cerr << "graph-diff: '" << path << "' is " << what
              << ", not a graph (a GraphDef, MetaGraphDef or SavedModel, "
                 "binary or text)\n";
    return nullptr;
  }
  bool binary;
  std::unique_ptr<pb::Message> message =
      newMessage(cleave::detectInputFormat(bytes), binary);
  bool ok;
  if (binary) {
    pb::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    ok = message->ParseFromCodedStream(&stream) &&
         stream.ConsumedEntireMessage();
  } else {
    ok = pb::TextFormat::ParseFromString(bytes, message.get());
  }
  if (!ok) {
    std::cerr << "graph-diff: '" << path << "' is not a "
              << message->GetDescriptor()->name() << "\n";
    return nullptr;
  }
  return message;
}

static constexpr const char *kUsage =
    "usage: graph-diff [--ignore-node-order] <a> <b>  (GraphDefs, "
    "MetaGraphDefs or SavedModels, .pb or .pbtxt)\n"
    "Prints the differences of two protos and exits 1 when there are "
    "some, 0 when they are equal, 2 when one cannot be read.\n";

int main(int argc, char **argv) {
  if (argc == 2 &&
      (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << "Cleave " << CLEAVE_VERSION << " (" << CLEAVE_GIT_HASH
              << ")\n  LLVM and MLIR " << LLVM_VERSION_STRING << "\n";
    return 0;
  }
  bool ignoreNodeOrder =
      argc == 4 && std::string(argv[1]) == "--ignore-node-order";
  if (argc != 3 && !ignoreNodeOrder) {
    std::cerr << kUsage;
    return 2;
  }
  const char *pathA = argv[argc - 2], *pathB = argv[argc - 1];
  std::unique_ptr<pb::Message> a = load(pathA), b = load(pathB);
  if (!a || !b)
    return 2;
  if (a->GetDescriptor() != b->GetDescriptor()) {
    std::cout << "'" << pathA << "' is a " << a->GetDescriptor()->name()
              << ", '" << pathB << "' a " << b->GetDescriptor()->name() << "\n";
    return 1;
  }
  pb::util::MessageDifferencer differ;
  if (ignoreNodeOrder)
    differ.TreatAsMap(
        tensorflow::GraphDef::descriptor()->FindFieldByName("node"),
        tensorflow::NodeDef::descriptor()->FindFieldByName("name"));
  std::string report;
  differ.ReportDifferencesToString(&report);
  if (differ.Compare(*a, *b))
    return 0;
  std::cout << report;
  return 1;
}
