//===- ThreadCache.cpp - threads kept for the next run's tasks ------------===//

#include "ThreadCache.h"

using namespace cleave::interp;

ThreadCache &ThreadCache::get() {
  // Never destroyed: at exit a kept thread may still be in a task (exit
  // called from a signal handler, e.g. LLVM's on SIGPIPE, in the middle of
  // a run), and joining it would hang the exit. The threads end with the
  // process.
  static ThreadCache *cache = new ThreadCache();
  return *cache;
}

std::future<void> ThreadCache::run(std::function<void()> task) {
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> done = packaged.get_future();
  std::lock_guard<std::mutex> guard(mutex);
  tasks.push_back(std::move(packaged));
  // Each idle thread takes one queued task; more tasks than idle threads
  // get a new thread, as a task may wait for the others.
  if (tasks.size() > idle)
    threads.emplace_back([this] { work(); });
  else
    wake.notify_one();
  return done;
}

void ThreadCache::work() {
  std::unique_lock<std::mutex> guard(mutex);
  while (true) {
    ++idle;
    wake.wait(guard, [&] { return !tasks.empty(); });
    --idle;
    std::packaged_task<void()> task = std::move(tasks.front());
    tasks.pop_front();
    guard.unlock();
    task();
    guard.lock();
  }
}
