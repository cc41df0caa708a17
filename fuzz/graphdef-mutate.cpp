//===- graphdef-mutate.cpp - mutants of a text GraphDef for the sweep -----===//
//
//   graphdef-mutate IN OUT SEED [STEPS]
//
// Writes IN with STEPS (default 1) structural mutations (GraphDefMutator.h)
// drawn from SEED to OUT, and prints the mutations' names. Exit 1 when IN
// is not a text GraphDef. scripts/mutation-sweep.py runs the tools on what
// it writes.
//
//===----------------------------------------------------------------------===//

#include "GraphDefMutator.h"

#include "cleave/tf/graph.pb.h"

#include "google/protobuf/text_format.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    std::cerr << "usage: graphdef-mutate IN OUT SEED [STEPS]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "graphdef-mutate: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  tensorflow::GraphDef graph;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  if (!parser.ParseFromString(buffer.str(), &graph)) {
    std::cerr << "graphdef-mutate: " << argv[1] << " is not a text GraphDef\n";
    return 1;
  }
  std::mt19937_64 rng(std::strtoull(argv[3], nullptr, 10));
  unsigned steps = argc == 5 ? unsigned(std::atoi(argv[4])) : 1;
  for (unsigned i = 0; i < steps; ++i)
    std::cout << cleave::fuzz::mutateGraphDef(graph, rng) << "\n";
  std::string text;
  google::protobuf::TextFormat::PrintToString(graph, &text);
  std::ofstream out(argv[2]);
  out << text;
  return out ? 0 : 1;
}
