//===- DelayedNote.h - say that slow work is under way ----------*- C++ -*-===//
//
// Header-only, standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_DELAYEDNOTE_H
#define CLEAVE_SUPPORT_DELAYEDNOTE_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cleave {

/// Calls `say` once, on a thread of its own, if the scope it lives in is
/// still running after `seconds` (at once, on the caller's thread, for 0):
/// work that takes long (a compile, a pass) tells the user what it is
/// doing while it does it, not only afterwards.
class DelayedNote {
public:
  DelayedNote(double seconds, std::function<void()> say) {
    if (seconds <= 0) {
      say();
      return;
    }
    watcher = std::thread([this, seconds, say = std::move(say)] {
      std::unique_lock<std::mutex> lock(mutex);
      if (finished.wait_for(lock, std::chrono::duration<double>(seconds),
                            [this] { return done; }))
        return;
      say();
    });
  }
  ~DelayedNote() { stop(); }
  DelayedNote(const DelayedNote &) = delete;
  DelayedNote &operator=(const DelayedNote &) = delete;

  /// Ends the wait: the work is done.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    finished.notify_all();
    if (watcher.joinable())
      watcher.join();
  }

private:
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watcher;
};

} // namespace cleave

#endif // CLEAVE_SUPPORT_DELAYEDNOTE_H
