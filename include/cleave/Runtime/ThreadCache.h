//===- ThreadCache.h - threads kept for the next run's tasks ----*- C++ -*-===//
//
// CleaveRuntimeSupport. A replicated step runs a thread per
// replica, per cluster and per host wait; starting them anew each step
// (and each new thread's OpenMP setup) cost more than a small step's
// compiled code. Tasks go to an idle kept thread, or to a new one when
// none is idle, so tasks that wait on each other never starve.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_THREADCACHE_H
#define CLEAVE_RUNTIME_THREADCACHE_H

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace cleave::runtime {

class ThreadCache {
public:
  /// The process's cache (its threads end with the process).
  static ThreadCache &get();

  /// Runs `task` on a kept thread; the future is ready once it returned.
  /// With `spinAfter`, the thread then polls briefly for its next task
  /// before it sleeps (see ThreadCache.cpp): for tasks that come back at a
  /// short, steady interval on a core of their own, such as the replicas
  /// of a small replicated step.
  std::future<void> run(std::function<void()> task, bool spinAfter = false);

private:
  void work();

  struct Task {
    std::packaged_task<void()> run;
    bool spinAfter;
  };

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Task> tasks;
  /// Tasks queued so far, for threads that poll for the next one.
  std::atomic<uint64_t> queued{0};
  /// Threads waiting for a task.
  unsigned idle = 0;
  std::vector<std::thread> threads;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_THREADCACHE_H
