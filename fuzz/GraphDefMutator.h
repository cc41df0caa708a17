//===- GraphDefMutator.h - structural mutations of a GraphDef ---*- C++ -*-===//
//
// Byte mutations rarely leave a GraphDef parseable, so the code behind the
// parser (passes, functions, control flow, kernels) sees few variants. These
// mutations change the graph as a careless or hostile writer would, and
// keep it a GraphDef: an op swapped for another registered one, an input
// deleted, duplicated or pointed elsewhere, an output index made negative
// or huge, a dtype or a shape dimension changed, a node copied into a
// function body, attrs swapped, dropped or set to edge values. The
// libFuzzer targets use them as their custom mutator; graphdef-mutate (for
// scripts/mutation-sweep.py) applies them to files.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_FUZZ_GRAPHDEFMUTATOR_H
#define CLEAVE_FUZZ_GRAPHDEFMUTATOR_H

#include <cstdint>
#include <random>
#include <string>

namespace tensorflow {
class GraphDef;
} // namespace tensorflow

namespace cleave::fuzz {

/// Applies one structural mutation, picked with `rng`, to `graph` (its
/// top-level nodes or a function body). Returns its name, for logs.
const char *mutateGraphDef(tensorflow::GraphDef &graph, std::mt19937_64 &rng);

/// Parses `text` as a text GraphDef, applies `steps` mutations and prints
/// it back into `text`. False (and `text` unchanged) when it does not
/// parse.
bool mutateGraphDefText(std::string &text, uint64_t seed, unsigned steps);

} // namespace cleave::fuzz

#endif // CLEAVE_FUZZ_GRAPHDEFMUTATOR_H
