//===- CompiledCollectives.h - what compiled collectives call ---*- C++ -*-===//
//
// Compiled code sums across replicas and talks to the host by calling
// cleave_cpu_cross_replica_sum and cleave_cpu_host_transfer
// (KernelLibrary.h). The replicas and the host meet wherever the program
// that runs them says: it installs a Collectives object on each thread
// that runs a replica's compiled code (the interpreter's rendezvous, for
// graph-run). Without one, compiled code runs as one replica: a sum is its
// input, and a host transfer fails (no host runs beside it).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_COMPILEDCOLLECTIVES_H
#define CLEAVE_TARGET_CPU_COMPILEDCOLLECTIVES_H

#include <cstdint>
#include <vector>

namespace cleave::cpu {

/// Status codes of the compiled collectives.
enum CollectiveStatus : int64_t {
  kCollectiveOk = 0,
  /// This replica's call failed; the Collectives object says why.
  kCollectiveFailed = 1,
  /// Another replica failed first and reported it.
  kCollectiveCancelled = 2,
  /// No Collectives object is installed: nothing runs the host side.
  kCollectiveNoRuntime = 3,
};

class Collectives {
public:
  virtual ~Collectives();
  /// out = the sum of `in` (`count` elements of TensorFlow DataType
  /// `dtype`) over the calling replica's group of `groups`
  /// (group_assignment: int32 replica ids, row-major, of shape
  /// `groupsShape`; no elements: every replica). `op` identifies the node,
  /// the same in every replica.
  virtual CollectiveStatus
  crossReplicaSum(const void *op, const void *in, void *out, int64_t count,
                  int32_t dtype, const int32_t *groups,
                  std::vector<int64_t> groupsShape) = 0;
  /// The device side of a host transfer of node `op` (its attrs name the
  /// channels): sends `numInputs` tensors, then receives `numOutputs`.
  /// Each tensor is described by `address, dtype, rank, dims...` in
  /// `inputs` / `outputs`, one after the other.
  virtual CollectiveStatus hostTransfer(const void *op, const int64_t *inputs,
                                        int64_t numInputs,
                                        const int64_t *outputs,
                                        int64_t numOutputs) = 0;
};

/// Installs `collectives` for the compiled code the calling thread runs
/// while the scope lives.
class CollectivesScope {
public:
  explicit CollectivesScope(Collectives *collectives);
  ~CollectivesScope();
  CollectivesScope(const CollectivesScope &) = delete;
  CollectivesScope &operator=(const CollectivesScope &) = delete;

private:
  Collectives *previous;
};

} // namespace cleave::cpu

#endif // CLEAVE_TARGET_CPU_COMPILEDCOLLECTIVES_H
