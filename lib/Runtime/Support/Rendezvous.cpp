//===- Rendezvous.cpp - channels and collectives between replicas ---------===//

#include "cleave/Runtime/Rendezvous.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace cleave;
using namespace cleave::runtime;

//===----------------------------------------------------------------------===//
// ExecutionLock
//===----------------------------------------------------------------------===//

bool cleave::runtime::spinWhile(llvm::function_ref<bool()> busy,
                                std::chrono::microseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (busy()) {
    for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__)
      _mm_pause();
#endif
    }
    if (std::chrono::steady_clock::now() > end)
      return false;
  }
  return true;
}

void ExecutionLock::waitUntilFree(std::unique_lock<std::mutex> &guard) {
  if (depth > 0 && spinning) {
    guard.unlock();
    spinWhile([&] { return held.load(std::memory_order_acquire); },
              std::chrono::microseconds(20));
    guard.lock();
  }
  available.wait(guard, [&] { return depth == 0; });
}

void ExecutionLock::acquire() {
  std::unique_lock<std::mutex> guard(mutex);
  if (depth > 0 && owner == std::this_thread::get_id()) {
    ++depth;
    return;
  }
  waitUntilFree(guard);
  owner = std::this_thread::get_id();
  depth = 1;
  held = true;
}

void ExecutionLock::release() {
  std::lock_guard<std::mutex> guard(mutex);
  if (--depth == 0) {
    owner = {};
    held = false;
    available.notify_one();
  }
}

unsigned ExecutionLock::releaseAll() {
  std::lock_guard<std::mutex> guard(mutex);
  if (depth == 0 || owner != std::this_thread::get_id())
    return 0;
  unsigned depthHeld = depth;
  depth = 0;
  owner = {};
  held = false;
  available.notify_one();
  return depthHeld;
}

void ExecutionLock::reacquire(unsigned depthHeld) {
  if (depthHeld == 0)
    return;
  std::unique_lock<std::mutex> guard(mutex);
  waitUntilFree(guard);
  owner = std::this_thread::get_id();
  depth = depthHeld;
  held = true;
}

//===----------------------------------------------------------------------===//
// The current replica
//===----------------------------------------------------------------------===//

static thread_local int64_t currentReplica = -1;

int64_t cleave::runtime::getCurrentReplica() { return currentReplica; }

ReplicaScope::ReplicaScope(int64_t replica) : previous(currentReplica) {
  currentReplica = replica;
}

ReplicaScope::~ReplicaScope() { currentReplica = previous; }

//===----------------------------------------------------------------------===//
// Rendezvous
//===----------------------------------------------------------------------===//

void Rendezvous::notifyChanged() {
  changes.fetch_add(1, std::memory_order_release);
  changed.notify_all();
}

bool Rendezvous::shouldSpin() const {
  static const unsigned cores =
      std::max(1u, std::thread::hardware_concurrency());
  return spinWaits && replicasRunning > 1 && unsigned(replicasRunning) <= cores;
}

void Rendezvous::spinUntilChanged(uint64_t seen) {
  if (!shouldSpin())
    return;
  // About the cost of a futex sleep and wakeup, a few times over.
  spinWhile([&] { return changes.load(std::memory_order_acquire) == seen; },
            std::chrono::microseconds(50));
}

void Rendezvous::reset(double timeoutSeconds) {
  std::lock_guard<std::mutex> guard(mutex);
  timeout = timeoutSeconds;
  cancelled = false;
  canceller = -1;
  channels.clear();
  rounds.clear();
  nextRound.clear();
  census.reset();
  runningSenders.clear();
  finishedSenders.clear();
  tracksSenders = false;
}

void Rendezvous::setSendCensus(SendCensus sent) {
  std::lock_guard<std::mutex> guard(mutex);
  census = std::move(sent);
  runningSenders.clear();
  finishedSenders.clear();
  for (auto &[unit, sender] : census->senders)
    for (const std::string &key : sender.channels)
      ++runningSenders[key];
  tracksSenders = !census->senders.empty();
}

void Rendezvous::finished(const void *unit) {
  if (!tracksSenders.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> guard(mutex);
  if (!census)
    return;
  auto it = census->senders.find(unit);
  // Finished senders stay in the census: the message names them.
  if (it == census->senders.end() || !finishedSenders.insert(unit).second)
    return;
  for (const std::string &key : it->second.channels)
    --runningSenders[key];
  notifyChanged();
}

std::optional<std::string> Rendezvous::whyNothingMore(llvm::StringRef key) {
  if (!census)
    return std::nullopt;
  if (!census->channels.contains(key))
    return std::string("no node of this run sends on it");
  auto running = runningSenders.find(key);
  if (running == runningSenders.end() || running->second != 0)
    return std::nullopt;
  std::vector<std::string> names;
  for (auto &[unit, sender] : census->senders)
    if (llvm::is_contained(sender.channels, key))
      names.push_back(sender.name);
  llvm::sort(names); // the census is keyed by address
  return "every node of this run that sends on it (" +
         llvm::join(names, ", ") + ") has finished";
}

void Rendezvous::send(llvm::StringRef key, int64_t replica,
                      std::vector<Tensor> values, bool persistent) {
  std::lock_guard<std::mutex> guard(mutex);
  (persistent ? queues : channels)[{key.str(), replica}].push_back(
      std::move(values));
  notifyChanged();
}

void Rendezvous::takeQueuesFrom(Rendezvous &other) {
  if (&other == this)
    return;
  std::scoped_lock guard(mutex, other.mutex);
  for (auto &[channel, messages] : other.queues) {
    auto &mine = queues[channel];
    for (std::vector<Tensor> &message : messages)
      mine.push_back(std::move(message));
  }
  other.queues.clear();
  notifyChanged();
}

static std::string describeTimeout(double seconds) {
  char text[32];
  snprintf(text, sizeof(text), "%g", seconds);
  return std::string(text) + " s (see --channel-timeout)";
}

std::optional<std::vector<Tensor>> Rendezvous::recv(llvm::StringRef key,
                                                    int64_t replica,
                                                    std::string &error,
                                                    bool persistent) {
  error.clear();
  auto id = std::make_pair(key.str(), replica);
  Channels &source = persistent ? queues : channels;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (true) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> guard(mutex);
      if (cancelled)
        return error.clear(), std::nullopt;
      auto &queue = source[id];
      if (!queue.empty()) {
        std::vector<Tensor> values = std::move(queue.front());
        queue.pop_front();
        return values;
      }
      std::optional<std::string> why;
      if (persistent && census && !census->queues.contains(key))
        error = "the " + key.str() + " queue of replica " +
                std::to_string(replica) +
                " is empty, and no node of this run enqueues to it: the "
                "dequeue would wait forever";
      else if (!persistent && (why = whyNothingMore(key)))
        error = "nothing can arrive on channel '" + key.str() +
                "' for replica " + std::to_string(replica) + ": " + *why +
                ", so the receive would wait forever";
      if (!error.empty()) {
        // The run fails here: the other parts stop waiting (and say
        // nothing more), as after cancel().
        canceller = getCurrentReplica();
        cancelled = true;
        notifyChanged();
        return std::nullopt;
      }
      seen = changes.load(std::memory_order_relaxed);
    }
    // Wait without the execution lock, so that the sender can run.
    UnlockedScope unlocked(lock);
    spinUntilChanged(seen);
    std::unique_lock<std::mutex> guard(mutex);
    bool woken = changed.wait_until(guard, deadline, [&] {
      return cancelled || !source[id].empty() ||
             (!persistent && whyNothingMore(key));
    });
    if (!woken) {
      error = "nothing arrived on channel '" + key.str() + "' for replica " +
              std::to_string(replica) + " within " + describeTimeout(timeout) +
              ": the other side never sent it (a deadlock, or it failed)";
      return std::nullopt;
    }
  }
}

std::optional<Tensor>
Rendezvous::combine(const void *op, int64_t group, int64_t member,
                    int64_t groupSize, Tensor value,
                    const std::function<Tensor(std::vector<Tensor> &)> &reduce,
                    std::string &error) {
  std::unique_lock<std::mutex> guard(mutex);
  int64_t round = nextRound[{op, group, member}]++;
  auto roundKey = std::make_pair(op, group);
  Round &r = rounds[roundKey][round];
  if (r.inputs.empty())
    r.inputs.resize(groupSize);
  r.inputs[member] = std::move(value);
  if (++r.arrived == groupSize) {
    // The last member combines, still holding the execution lock.
    r.result = reduce(r.inputs);
    r.done = true;
    notifyChanged();
  } else {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(timeout);
    uint64_t seen = changes.load(std::memory_order_relaxed);
    guard.unlock();
    UnlockedScope unlocked(lock);
    spinUntilChanged(seen);
    std::unique_lock<std::mutex> waiting(mutex);
    bool woken = changed.wait_until(waiting, deadline, [&] {
      return cancelled || rounds[roundKey][round].done;
    });
    if (cancelled)
      return error.clear(), std::nullopt;
    if (!woken) {
      error = "replica " + std::to_string(member) +
              " waited for the other replicas of its group within " +
              describeTimeout(timeout) + ", but not all of them arrived";
      return std::nullopt;
    }
  }
  if (!guard.owns_lock())
    guard.lock();
  Round &done = rounds[roundKey][round];
  Tensor result = done.result;
  if (++done.taken == groupSize)
    rounds[roundKey].erase(round);
  return result;
}

void Rendezvous::cancel() {
  std::lock_guard<std::mutex> guard(mutex);
  if (!cancelled)
    canceller = getCurrentReplica();
  cancelled = true;
  notifyChanged();
}

int64_t Rendezvous::getCanceller() {
  std::lock_guard<std::mutex> guard(mutex);
  return canceller;
}

bool Rendezvous::isCancelled() {
  std::lock_guard<std::mutex> guard(mutex);
  return cancelled;
}
