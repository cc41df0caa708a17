//===- ThreadCache.h - threads kept for the next run's tasks ----*- C++ -*-===//
//
// Private to CleaveInterpreter. A replicated step runs a thread per
// replica, per cluster and per host wait; starting them anew each step
// (and each new thread's OpenMP setup) cost more than a small step's
// compiled code. Tasks go to an idle kept thread, or to a new one when
// none is idle, so tasks that wait on each other never starve.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_INTERPRETER_THREADCACHE_H
#define CLEAVE_LIB_INTERPRETER_THREADCACHE_H

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace cleave::interp {

class ThreadCache {
public:
  /// The process's cache (its threads end with the process).
  static ThreadCache &get();

  /// Runs `task` on a kept thread; the future is ready once it returned.
  std::future<void> run(std::function<void()> task);

private:
  void work();

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::packaged_task<void()>> tasks;
  /// Threads waiting for a task.
  unsigned idle = 0;
  std::vector<std::thread> threads;
};

} // namespace cleave::interp

#endif // CLEAVE_LIB_INTERPRETER_THREADCACHE_H
