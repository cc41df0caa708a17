//===- Collectives.h - cross-replica operations -----------------*- C++ -*-===//
//
// What CrossReplicaSum computes, shared by the interpreter's kernel and by
// compiled code (CPUClusterRunner installs it behind the compiled
// collectives), so that both meet on the same rendezvous.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INTERPRETER_COLLECTIVES_H
#define CLEAVE_INTERPRETER_COLLECTIVES_H

#include "cleave/Interpreter/Tensor.h"

#include <optional>
#include <string>

namespace cleave::interp {

class Interpreter;

/// The sum of `input` over the replicas of the calling thread's group in
/// `groups` (an [groups, size] matrix of replica ids; empty: all
/// `numReplicas` replicas), met on `interpreter`'s rendezvous under `key`
/// (the node, the same in every replica). Outside replicas, `input`. On
/// failure nothing, and `error` says why (empty: another replica failed
/// first and said so).
std::optional<Tensor> crossReplicaSum(Interpreter &interpreter,
                                      const void *key, int64_t numReplicas,
                                      const Tensor &input,
                                      const Tensor &groups,
                                      std::string &error);

} // namespace cleave::interp

#endif // CLEAVE_INTERPRETER_COLLECTIVES_H
