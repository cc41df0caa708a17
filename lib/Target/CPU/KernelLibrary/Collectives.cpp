//===- Collectives.cpp - compiled code's cross-replica calls --------------===//

#include "cleave/Target/CPU/CompiledCollectives.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include <cstring>

using namespace cleave::cpu;

static thread_local Collectives *installed = nullptr;

/// Bytes of an element of the dtypes compiled cross-replica sums take:
/// DT_DOUBLE (2), else DT_FLOAT, DT_INT32, DT_UINT32.
static int64_t elementBytes(int64_t dtype) { return dtype == 2 ? 8 : 4; }

Collectives::~Collectives() = default;

CollectivesScope::CollectivesScope(Collectives *collectives)
    : previous(installed) {
  installed = collectives;
}

CollectivesScope::~CollectivesScope() { installed = previous; }

extern "C" int64_t cleave_cpu_cross_replica_sum(int64_t op, const void *in,
                                                void *out, int64_t count,
                                                int64_t dtype,
                                                const int32_t *groups,
                                                const int64_t *groupsShape,
                                                int64_t groupsRank) {
  if (!installed) {
    std::memcpy(out, in, count * elementBytes(dtype));
    return kCollectiveOk;
  }
  return installed->crossReplicaSum(
      reinterpret_cast<const void *>(op), in, out, count,
      static_cast<int32_t>(dtype), groups,
      std::vector<int64_t>(groupsShape, groupsShape + groupsRank));
}

extern "C" int64_t cleave_cpu_host_transfer(int64_t op, const int64_t *inputs,
                                            int64_t numInputs,
                                            const int64_t *outputs,
                                            int64_t numOutputs) {
  if (!installed)
    return kCollectiveNoRuntime;
  return installed->hostTransfer(reinterpret_cast<const void *>(op), inputs,
                                 numInputs, outputs, numOutputs);
}
