//===- allreduce-bench.cpp - Cleave's cross-process sum, alone ------------===//
//
//   cleave-allreduce-bench FLOATS [REPEATS]
//
// Two processes (this one and a child forked before Gloo starts) meet in a
// scratch directory as a chief and a worker, then sum FLOATS floats
// REPEATS times through the process group trainers use; prints the median
// milliseconds of one sum (bench/distributed.py sets it beside PyTorch's
// gloo all-reduce of the same bytes).
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/ProcessGroup.h"
#include "cleave/Tensor/Tensor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace cleave;

static int runRank(int rank, const std::string &dir, int64_t floats,
                   int repeats) {
  runtime::ProcessGroupOptions options;
  options.rank = rank;
  options.taskNames = {"chief:0", "worker:0"};
  options.storeDirectory = dir;
  options.timeoutSeconds = 60;
  auto group = runtime::ProcessGroup::connect(options);
  if (!group) {
    llvm::errs() << "cleave-allreduce-bench: "
                 << llvm::toString(group.takeError()) << "\n";
    return 1;
  }
  std::vector<float> values(floats, 1.0f);
  std::vector<double> times;
  for (int i = 0; i < repeats + 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error failure =
            (*group)->allReduceSum(values.data(), floats, kFloat)) {
      llvm::errs() << "cleave-allreduce-bench: "
                   << llvm::toString(std::move(failure)) << "\n";
      return 1;
    }
    // The first sums warm the connections up.
    if (i >= 5)
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::sort(times.begin(), times.end());
  if (rank == 0)
    llvm::outs() << llvm::format("%.3f", times[times.size() / 2]) << "\n";
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: cleave-allreduce-bench FLOATS [REPEATS]\n";
    return 2;
  }
  int64_t floats = std::atoll(argv[1]);
  int repeats = argc > 2 ? std::atoi(argv[2]) : 200;
  if (floats <= 0 || repeats <= 0) {
    llvm::errs() << "cleave-allreduce-bench: FLOATS and REPEATS must be "
                    "positive\n";
    return 2;
  }
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("cleave-allreduce", dir)) {
    llvm::errs() << "cleave-allreduce-bench: cannot create a directory\n";
    return 1;
  }
  pid_t child = fork();
  if (child == 0)
    _exit(runRank(1, std::string(dir), floats, repeats));
  int status = runRank(0, std::string(dir), floats, repeats);
  int childStatus = 0;
  waitpid(child, &childStatus, 0);
  llvm::sys::fs::remove_directories(dir);
  return status ? status
                : (WIFEXITED(childStatus) ? WEXITSTATUS(childStatus) : 1);
}
