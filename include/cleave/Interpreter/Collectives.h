//===- Collectives.h - cross-replica operations -----------------*- C++ -*-===//
//
// What CrossReplicaSum and the device side of host transfers do, shared by
// the interpreter's kernels and by compiled code (CPUClusterRunner installs
// them behind the compiled collectives), so that both meet on the same
// rendezvous.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INTERPRETER_COLLECTIVES_H
#define CLEAVE_INTERPRETER_COLLECTIVES_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

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

/// The device side of a host transfer, in the calling thread's replica (0
/// outside replicas): sends `values` on channel `sendKey` (nothing when it
/// is empty), then receives what arrives on `recvKey` (nothing when it is
/// empty). On failure nothing, and `error` says why (empty: another
/// replica failed first and said so).
std::optional<std::vector<Tensor>>
sendAndReceiveOnDevice(Interpreter &interpreter, llvm::StringRef sendKey,
                       std::vector<Tensor> values, llvm::StringRef recvKey,
                       std::string &error);

/// Stops every wait of the current run: what a replica's compiled code does
/// when it fails (compiled code does not stop at a failed call, as the
/// interpreter stops at a failed kernel).
void cancelWaits(Interpreter &interpreter);

} // namespace cleave::interp

#endif // CLEAVE_INTERPRETER_COLLECTIVES_H
