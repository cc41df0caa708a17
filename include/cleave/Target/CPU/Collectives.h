//===- Collectives.h - what compiled collectives call -----------*- C++ -*-===//
//
// Compiled code sums across replicas by calling cleave_cpu_cross_replica_sum
// (KernelLibrary.h). The replicas meet wherever the program that runs them
// says: it installs a Collectives object on each thread that runs a
// replica's compiled code (the interpreter's rendezvous, for graph-run).
// Without one, compiled code runs as one replica and a sum is its input.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_COLLECTIVES_H
#define CLEAVE_TARGET_CPU_COLLECTIVES_H

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

#endif // CLEAVE_TARGET_CPU_COLLECTIVES_H
