//===- Collectives.h - cross-replica operations -----------------*- C++ -*-===//
//
// What CrossReplicaSum and the device side of host transfers do, shared by
// the interpreter's kernels and by compiled code (CPUClusterRunner installs
// them behind the compiled collectives), so that both meet on the same
// rendezvous. Part of CleaveRuntimeSupport.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_COLLECTIVES_H
#define CLEAVE_RUNTIME_COLLECTIVES_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::runtime {

class Rendezvous;

/// Replicas in other processes that a cross-replica sum over all replicas
/// also spans (synchronous training across processes): once the process's
/// own replicas are summed, the sum is all-reduced across the processes,
/// each with the same replicas, so every replica of every process gets the
/// sum over all.
class CrossProcessReduce {
public:
  virtual ~CrossProcessReduce();
  /// Sums `count` elements of `dtype` at `data` over the processes, in
  /// place. False on failure, with `error` naming what failed.
  virtual bool allReduceSum(void *data, int64_t count, int32_t dtype,
                            std::string &error) = 0;
};

/// The sum of `input` over the replicas of the calling thread's group in
/// `groups` (an [groups, size] matrix of replica ids; empty: all
/// `numReplicas` replicas), met on `rendezvous` under `key`
/// (the node, the same in every replica). Outside replicas, `input`. On
/// failure nothing, and `error` says why (empty: another replica failed
/// first and said so).
std::optional<Tensor> crossReplicaSum(Rendezvous &rendezvous, const void *key,
                                      int64_t numReplicas, const Tensor &input,
                                      const Tensor &groups, std::string &error);

/// The same for compiled code, on its buffers: `count` elements of `dtype`
/// at `input`, their sum written to `output` (which may be `input`). The
/// members read each other's inputs and each writes its share of the sum
/// into every member's output, so nothing is copied; the call returns once
/// every member is done. False on failure, as crossReplicaSum.
bool crossReplicaSumInPlace(Rendezvous &rendezvous, const void *key,
                            int64_t numReplicas, const void *input,
                            void *output, int64_t count, int32_t dtype,
                            const Tensor &groups, std::string &error);

/// The device side of a host transfer, in the calling thread's replica (0
/// outside replicas): sends `values` on channel `sendKey` (nothing when it
/// is empty), then receives what arrives on `recvKey` (nothing when it is
/// empty). On failure nothing, and `error` says why (empty: another
/// replica failed first and said so). `persistent`: the keys name the
/// infeed and outfeed queues.
std::optional<std::vector<Tensor>>
sendAndReceiveOnDevice(Rendezvous &rendezvous, llvm::StringRef sendKey,
                       std::vector<Tensor> values, llvm::StringRef recvKey,
                       std::string &error, bool persistent = false);

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_COLLECTIVES_H
