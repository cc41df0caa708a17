//===- ProcessGroup.h - collectives across processes over Gloo --*- C++ -*-===//
//
// The trainers of a cluster, one process each, as one Gloo context: they
// meet through a file store in a directory all of them share (the model
// directory, as TensorFlow requires; a new attempt's subdirectory each
// time, announced by rank 0), connect over TCP, and then sum
// buffers across all of them (a cross-replica sum over every process's
// replicas) or wait for each other. A failure (a peer that died, a
// collective past its timeout) is an error naming the collective and, when
// it can be told, the task that is gone.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_PROCESSGROUP_H
#define CLEAVE_RUNTIME_PROCESSGROUP_H

#include "cleave/Runtime/Collectives.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gloo {
class Context;
namespace rendezvous {
class Store;
} // namespace rendezvous
} // namespace gloo

namespace cleave::runtime {

class Heartbeat;

struct ProcessGroupOptions {
  /// This process's rank, and the names of all ranks' tasks ("chief:0",
  /// "worker:0", ...), in rank order.
  int rank = 0;
  std::vector<std::string> taskNames;
  /// The shared directory the ranks meet in (created when missing): the
  /// chief opens a new attempt in it at each connect, so processes
  /// restarted after a failure meet afresh.
  std::string storeDirectory;
  /// The address this process's TCP device binds to.
  std::string hostname = "127.0.0.1";
  /// How long each collective (and each message) may take.
  double timeoutSeconds = 60;
  /// How long meeting the others may take (none: timeoutSeconds). A
  /// server waiting for a client to come uses a long one.
  std::optional<double> connectTimeoutSeconds;
};

/// Removes the subdirectories of `directory` named by a number below
/// `number`: meetings that are over (earlier attempts, earlier steps).
void removeMeetingsBefore(llvm::StringRef directory, int64_t number);

class ProcessGroup : public CrossProcessReduce {
public:
  /// Meets the other ranks and connects to every one of them. The process
  /// ignores SIGPIPE from then on (a peer's closed connection is the
  /// collective's error, not the end of the process).
  static llvm::Expected<std::unique_ptr<ProcessGroup>>
  connect(const ProcessGroupOptions &options);
  ~ProcessGroup() override;

  int getRank() const;
  int getSize() const;

  /// Sums `count` elements of `dtype` at `data` over every rank, in place
  /// (ring all-reduce). Calls are matched in order across the ranks.
  bool allReduceSum(void *data, int64_t count, int32_t dtype,
                    std::string &error) override;
  llvm::Error allReduceSum(void *data, int64_t count, int32_t dtype);
  /// Returns once every rank has called it.
  llvm::Error barrier();

  /// Point to point: sends `bytes` to rank `peer`, where the matching
  /// receive takes them (messages between two ranks keep their order).
  /// `what` names the message in errors.
  llvm::Error send(int peer, llvm::ArrayRef<char> bytes, llvm::StringRef what);
  /// The next message from rank `peer`, waiting at most `timeoutSeconds`
  /// (none: the group's timeout).
  llvm::Expected<std::vector<char>>
  receive(int peer, llvm::StringRef what,
          std::optional<double> timeoutSeconds = std::nullopt);

private:
  ProcessGroup(ProcessGroupOptions options,
               std::shared_ptr<gloo::Context> context);
  /// Connects through `store` within `timeoutSeconds` (Gloo's exceptions
  /// pass through).
  static std::unique_ptr<ProcessGroup> meet(const ProcessGroupOptions &options,
                                            llvm::StringRef attempt,
                                            gloo::rendezvous::Store &store,
                                            double timeoutSeconds);
  /// What a failed collective says: Gloo's message, and the tasks whose
  /// heartbeat stopped.
  std::string describeFailure(llvm::StringRef what, llvm::StringRef message);

  ProcessGroupOptions options;
  std::shared_ptr<gloo::Context> context;
  /// The file of rank `rank`'s heartbeat.
  std::string getAlivePath(int rank) const;

  std::string aliveDirectory;
  std::unique_ptr<Heartbeat> heartbeat;
  std::mutex mutex;
  uint32_t nextTag = 0;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_PROCESSGROUP_H
