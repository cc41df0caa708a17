//===- Random.cpp - TensorFlow's random numbers for compiled code ---------===//
//
// Compiled random ops call the generator the reference interpreter runs
// (cleave/Support/Philox.h), so both produce the same bits; the groups of a
// large tensor are split among OpenMP's threads (each group's numbers depend
// only on its index).
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/Philox.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include <omp.h>

#include <algorithm>

using namespace cleave::random;

/// Groups below this many per thread are not worth a thread.
static constexpr int64_t kMinGroupsPerThread = 1 << 12;

extern "C" void cleave_cpu_random(int64_t distribution, int64_t element,
                                  int64_t seeding, int64_t a, int64_t b,
                                  int64_t c, int64_t skip, void *out,
                                  int64_t count, int64_t low, int64_t high) {
  Philox base =
      seeding == 1
          ? Philox::fromStatelessSeed(uint64_t(a), uint64_t(b))
          : Philox::fromKeyCounter(uint64_t(a), uint64_t(b), uint64_t(c));
  base.skip(uint64_t(skip));
  RandomFill fill{Distribution(distribution), ElementType(element), low, high};
  int64_t groups = getNumGroups(fill, count);
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  int64_t parts = std::clamp<int64_t>(groups / kMinGroupsPerThread, 1, threads);
  if (parts == 1) {
    fillRandom(base, fill, out, count, 0, groups);
    return;
  }
  int64_t perPart = (groups + parts - 1) / parts;
#pragma omp parallel for schedule(static)
  for (int64_t part = 0; part < parts; ++part)
    fillRandom(base, fill, out, count, part * perPart,
               std::min(groups, (part + 1) * perPart));
}
