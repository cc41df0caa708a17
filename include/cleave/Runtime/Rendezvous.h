//===- Rendezvous.h - channels and collectives between replicas -*- C++ -*-===//
//
// CleaveRuntimeSupport, beneath the interpreter and compiled code, which
// both send, receive and meet in collectives through it. When a run has
// replicas or host nodes beside a cluster, parts of the graph run on
// threads of their own: each replica, each cluster (the device side) and
// each node that waits on the host for the device. Kernels still run one at a
// time: a thread holds the ExecutionLock while it computes and lets go of it
// only to wait, so the interpreter's state needs no other locking. Channels
// carry the tensors of host transfers, keyed by (key, replica); collectives
// meet all replicas of a group. Every wait ends: by its message, by
// cancellation (another part failed), or by the channel timeout.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_RENDEZVOUS_H
#define CLEAVE_RUNTIME_RENDEZVOUS_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cleave::runtime {

class CrossProcessReduce;

/// Spins (pausing) while `busy` holds, at most `limit`; returns whether it
/// stopped holding. Worth it only while every thread has a core of its
/// own: the other side is then running and usually done within
/// microseconds, sooner than a futex sleep and wakeup.
bool spinWhile(llvm::function_ref<bool()> busy,
               std::chrono::microseconds limit);

/// One lock for all kernel execution, held recursively by the thread that
/// runs kernels (function calls nest) and released in full while it waits.
class ExecutionLock {
public:
  void acquire();
  void release();
  /// Releases every level this thread holds; returns how many.
  unsigned releaseAll();
  void reacquire(unsigned depth);

  /// Whether a thread that finds the lock held spins briefly before it
  /// blocks (as Rendezvous::setSpinWaits says for waits).
  void setSpinning(bool spin) { spinning = spin; }

private:
  /// Waits (holding `guard`) until no thread holds the lock.
  void waitUntilFree(std::unique_lock<std::mutex> &guard);

  std::mutex mutex;
  std::condition_variable available;
  std::thread::id owner;
  unsigned depth = 0;
  /// depth > 0, for spinning threads (which read it unlocked).
  std::atomic<bool> held{false};
  std::atomic<bool> spinning{false};
};

/// Releases the lock for the lifetime of the object.
class UnlockedScope {
public:
  explicit UnlockedScope(ExecutionLock &lock)
      : lock(lock), depth(lock.releaseAll()) {}
  ~UnlockedScope() { lock.reacquire(depth); }

private:
  ExecutionLock &lock;
  unsigned depth;
};

/// The replica the calling thread runs (-1 outside any replica).
int64_t getCurrentReplica();
/// Sets the calling thread's replica for the lifetime of the object.
class ReplicaScope {
public:
  explicit ReplicaScope(int64_t replica);
  ~ReplicaScope();

private:
  int64_t previous;
};

/// The persistent queues of each replica: what the host enqueues for the
/// device (InfeedEnqueueTuple) and what the device enqueues for the host
/// (OutfeedEnqueueTuple).
inline constexpr llvm::StringLiteral kInfeedQueue = "infeed";
inline constexpr llvm::StringLiteral kOutfeedQueue = "outfeed";

/// What the parts of a run may send: the keys of host-transfer channels
/// and the names of persistent queues ("infeed", "outfeed").
struct SendCensus {
  llvm::StringSet<> channels;
  llvm::StringSet<> queues;
  /// The units of the run's graph that send on channels, each with its
  /// name and the channels it (or what it calls) sends on. Each runs once
  /// per run; once every sender of a channel has finished
  /// (Rendezvous::finished), nothing more can arrive on it.
  struct Sender {
    std::string name;
    std::vector<std::string> channels;
  };
  std::map<const void *, Sender> senders;
};

class Rendezvous {
public:
  explicit Rendezvous(ExecutionLock &lock) : lock(lock) {}

  /// The processes whose replicas a cross-replica sum over all replicas
  /// also sums over (null: this process's alone); kept across runs.
  void setCrossProcess(CrossProcessReduce *reduce) { crossProcess = reduce; }
  CrossProcessReduce *getCrossProcess() const { return crossProcess; }

  /// Starts a run: no messages, not cancelled, waits end after `timeout`
  /// seconds, nothing known of the senders.
  void reset(double timeoutSeconds);
  double getTimeout() const { return timeout; }

  /// Tells what the run can send, when the runner knows all of it: a
  /// receive on an empty channel or queue nothing of the run sends on then
  /// fails at once, naming it, instead of waiting out the timeout (a
  /// deadlock known beforehand), and so does one on a channel whose
  /// senders have all finished. Without a census, receives wait.
  void setSendCensus(SendCensus census);
  /// Says that `unit` ran (or was skipped, dead) and sends no more; a
  /// unit the census does not name as a sender is ignored.
  void finished(const void *unit);

  /// Queues `values` on channel (key, replica). Never waits. Channels of
  /// the `persistent` kind (infeed and outfeed queues) keep what is not
  /// received across runs, as TensorFlow's device queues do; the others
  /// start empty each run.
  void send(llvm::StringRef key, int64_t replica, std::vector<Tensor> values,
            bool persistent = false);
  /// Appends what `other`'s persistent queues hold to this one's, and
  /// empties them.
  void takeQueuesFrom(Rendezvous &other);
  /// The next message of channel (key, replica); on timeout or
  /// cancellation, nullopt with `error` saying why (empty when cancelled:
  /// whoever cancelled reported the cause).
  std::optional<std::vector<Tensor>> recv(llvm::StringRef key, int64_t replica,
                                          std::string &error,
                                          bool persistent = false);

  /// All `groupSize` members of `group` of collective `op` contribute
  /// `value` (rounds counted per member, so loops and steps line up); the
  /// last one to arrive computes `combine` over the contributions, in
  /// member order, and every member gets the result.
  std::optional<Tensor>
  combine(const void *op, int64_t group, int64_t member, int64_t groupSize,
          Tensor value,
          const std::function<Tensor(std::vector<Tensor> &)> &reduce,
          std::string &error);

  /// Whether waiters spin briefly before they block (see
  /// spinUntilChanged). Host programs turn it on: each of their replicas
  /// runs on one thread. The executor runs more threads than replicas
  /// (clusters and host waits have their own), so spinning would take
  /// their cores.
  void setSpinWaits(bool spin) {
    spinWaits = spin;
    lock.setSpinning(spin);
  }

  /// Whether a waiter should spin before it blocks now: spinning is on
  /// and every running replica has a core.
  bool shouldSpin() const;

  /// How many replicas run side by side (0 outside replicate regions),
  /// counted as the regions start and end.
  void addReplicasRunning(int delta) { replicasRunning += delta; }
  unsigned getReplicasRunning() const { return replicasRunning; }

  /// Wakes every waiter, which then fails. The first call records the
  /// calling thread's replica: where the failure happened.
  void cancel();
  bool isCancelled();
  /// The replica that cancelled first (-1: none, or outside replicas).
  int64_t getCanceller();

private:
  struct Round {
    std::vector<Tensor> inputs;
    unsigned arrived = 0, taken = 0;
    bool done = false;
    Tensor result;
  };

  /// Before blocking, a waiter spins briefly while every replica has a
  /// core of its own: the other side is then running and usually arrives
  /// within microseconds, and a futex sleep and wakeup would cost more.
  /// `seen` is the count of changes when the waiter last looked (under
  /// `mutex`), so a change made since ends the spin at once.
  void spinUntilChanged(uint64_t seen);
  /// Marks a change waiters look for (under `mutex`), and wakes them.
  void notifyChanged();

  ExecutionLock &lock;
  CrossProcessReduce *crossProcess = nullptr;
  std::mutex mutex;
  std::condition_variable changed;
  /// Counts the changes, for spinning waiters (which read it unlocked).
  std::atomic<uint64_t> changes{0};
  std::atomic<bool> spinWaits{false};
  double timeout = 300;
  bool cancelled = false;
  int64_t canceller = -1;
  std::atomic<int> replicasRunning{0};
  using Channels = std::map<std::pair<std::string, int64_t>,
                            std::deque<std::vector<Tensor>>>;
  Channels channels, queues;
  std::optional<SendCensus> census;
  /// Per channel of the census, how many of its senders have not finished.
  llvm::StringMap<unsigned> runningSenders;
  std::set<const void *> finishedSenders;
  /// Whether the census names senders (read unlocked by finished()).
  std::atomic<bool> tracksSenders{false};
  /// Why nothing more can arrive on channel `key`, if so (under `mutex`).
  std::optional<std::string> whyNothingMore(llvm::StringRef key);
  std::map<std::pair<const void *, int64_t>, std::map<int64_t, Round>> rounds;
  std::map<std::tuple<const void *, int64_t, int64_t>, int64_t> nextRound;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_RENDEZVOUS_H
