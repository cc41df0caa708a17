//===- graph-diff.cpp - compare two GraphDefs as protobuf messages --------===//
//
//   graph-diff a.pbtxt b.pb     exit 0 when equal, 1 with a report otherwise
//   ... | graph-diff a.pbtxt -  (`-` reads standard input)
//   graph-diff --ignore-node-order a.pbtxt b.pbtxt
//
// Each file may be text or binary (sniffed). Messages are compared field by
// field with repeated-field order significant and map fields as maps,
// exactly what "lossless" means for Cleave's round trips. With
// --ignore-node-order, GraphDef.node is compared as a map keyed by name:
// node order carries no meaning, and regions (graph.cluster) reorder it.
//
//===----------------------------------------------------------------------===//

#include "cleave/tf/graph.pb.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"

#include <fstream>
#include <iostream>
#include <sstream>

namespace pb = google::protobuf;

static bool looksBinary(const std::string &bytes) {
  for (size_t i = 0; i < bytes.size() && i < 4096; ++i) {
    unsigned char c = bytes[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' &&
        c != '\v')
      return true;
  }
  return false;
}

static bool load(const char *path, tensorflow::GraphDef &graph) {
  std::stringstream buffer;
  if (std::string(path) == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "graph-diff: cannot open '" << path << "'\n";
      return false;
    }
    buffer << in.rdbuf();
  }
  std::string bytes = buffer.str();
  bool ok;
  if (looksBinary(bytes)) {
    pb::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    ok = graph.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  } else {
    ok = pb::TextFormat::ParseFromString(bytes, &graph);
  }
  if (!ok)
    std::cerr << "graph-diff: '" << path << "' is not a GraphDef\n";
  return ok;
}

int main(int argc, char **argv) {
  bool ignoreNodeOrder =
      argc == 4 && std::string(argv[1]) == "--ignore-node-order";
  if (argc != 3 && !ignoreNodeOrder) {
    std::cerr << "usage: graph-diff [--ignore-node-order] <a.pb|a.pbtxt> "
                 "<b.pb|b.pbtxt>\n";
    return 2;
  }
  const char *pathA = argv[argc - 2], *pathB = argv[argc - 1];
  tensorflow::GraphDef a, b;
  if (!load(pathA, a) || !load(pathB, b))
    return 2;
  pb::util::MessageDifferencer differ;
  if (ignoreNodeOrder)
    differ.TreatAsMap(
        tensorflow::GraphDef::descriptor()->FindFieldByName("node"),
        tensorflow::NodeDef::descriptor()->FindFieldByName("name"));
  std::string report;
  differ.ReportDifferencesToString(&report);
  if (differ.Compare(a, b))
    return 0;
  std::cout << report;
  return 1;
}
