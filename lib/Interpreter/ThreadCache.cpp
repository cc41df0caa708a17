//===- ThreadCache.cpp - threads kept for the next run's tasks ------------===//

#include "ThreadCache.h"

using namespace cleave::interp;

ThreadCache &ThreadCache::get() {
  static ThreadCache cache;
  return cache;
}

ThreadCache::~ThreadCache() {
  {
    std::lock_guard<std::mutex> guard(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &thread : threads)
    thread.join();
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
    wake.wait(guard, [&] { return stopping || !tasks.empty(); });
    --idle;
    if (tasks.empty())
      return; // stopping
    std::packaged_task<void()> task = std::move(tasks.front());
    tasks.pop_front();
    guard.unlock();
    task();
    guard.lock();
  }
}
