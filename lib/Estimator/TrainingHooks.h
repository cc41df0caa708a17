//===- TrainingHooks.h - Estimator's log lines and hooks --------*- C++ -*-===//
//
// What runs between training steps on the host: TensorFlow's training log
// (LoggingTensorHook's and StepCounterHook's lines every
// log_step_count_steps, or one live line on a terminal) and the job's
// training_hooks (LoggingTensorHook, StepCounterHook, NanTensorHook,
// StopAtStepHook) with TensorFlow's checks.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_TRAININGHOOKS_H
#define CLEAVE_LIB_ESTIMATOR_TRAININGHOOKS_H

#include "Support.h"

#include "cleave/Estimator/Job.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cleave::estimator {

/// TensorFlow's training log: LoggingTensorHook's "loss = ..., step = ...
/// (... sec)" and StepCounterHook's "global_step/sec: ..." every
/// log_step_count_steps, or one live line on a terminal.
class TrainingLog {
public:
  TrainingLog(llvm::raw_ostream *os, bool live, int64_t everySteps,
              int64_t firstStep, int64_t lastStep)
      : os(os), live(live && os), everySteps(everySteps), firstStep(firstStep),
        lastStep(lastStep), start(std::chrono::steady_clock::now()),
        lastLog(start), lastLogStep(firstStep) {}

  void info(const llvm::Twine &line) {
    if (!os)
      return;
    clear();
    *os << "INFO: " << line << "\n";
    os->flush();
  }

  /// After the run that took the step from `step` to `step + steps`.
  /// `shownStep` is the step the line names: the global step the run
  /// read (before its update off the device; after a launch on it).
  void stepsDone(int64_t step, int64_t steps, const std::string &loss,
                 int64_t shownStep) {
    if (!os)
      return;
    int64_t done = step + steps;
    auto now = std::chrono::steady_clock::now();
    if (live) {
      if (now - lastDrawn < std::chrono::milliseconds(100) && done < lastStep)
        return;
      lastDrawn = now;
      double seconds = secondsSince(start);
      double rate = seconds > 0 ? (done - firstStep) / seconds : 0;
      *os << "\r\033[K"
          << llvm::formatv("step {0}/{1}, {2:f1} steps/s, loss = {3}", done,
                           lastStep, rate, loss);
      if (rate > 0 && done < lastStep)
        *os << llvm::formatv(", {0:f0} s left", (lastStep - done) / rate);
      drawn = true;
      os->flush();
      return;
    }
    // As the hooks trigger: at the first step and every everySteps.
    bool due = step == firstStep || done - lastLogStep >= everySteps;
    if (!due)
      return;
    double elapsed = std::chrono::duration<double>(now - lastLog).count();
    if (step == firstStep) {
      info("loss = " + loss + ", step = " + llvm::Twine(shownStep));
    } else {
      info(llvm::formatv("loss = {0}, step = {1} ({2:f3} sec)", loss, shownStep,
                         elapsed)
               .str());
      info(llvm::formatv("global_step/sec: {0}",
                         llvm::format("%g", (done - lastLogStep) / elapsed))
               .str());
    }
    lastLog = now;
    lastLogStep = done;
  }

  void clear() {
    if (drawn)
      *os << "\r\033[K";
    drawn = false;
  }

private:
  llvm::raw_ostream *os;
  bool live;
  int64_t everySteps, firstStep, lastStep;
  std::chrono::steady_clock::time_point start, lastLog, lastDrawn;
  int64_t lastLogStep;
  bool drawn = false;
};
/// The job's training_hooks: LoggingTensorHook, StepCounterHook,
/// NanTensorHook and StopAtStepHook, with TensorFlow's checks; or its
/// evaluation_hooks and prediction_hooks, which log tensors of each step
/// (LoggingTensorHook; the other kinds are training's).
struct TrainingHooks {
  std::optional<int64_t> lastStep;
  bool failOnNanLoss = true;
  struct Logging {
    std::vector<std::pair<std::string, std::string>> tensors; // sorted tags
    int64_t every;
    std::chrono::steady_clock::time_point last;
    bool logged = false;
  };
  std::vector<Logging> logging;
  struct Counter {
    int64_t every, lastStep;
    std::chrono::steady_clock::time_point last;
  };
  std::vector<Counter> counters;

  static llvm::Expected<TrainingHooks> create(const Job &job, bool onDevice,
                                              int64_t step) {
    return create(job.training_hooks(), "training_hooks", onDevice, step);
  }

  /// The hooks of job field `field` (training_hooks, evaluation_hooks or
  /// prediction_hooks).
  static llvm::Expected<TrainingHooks>
  create(const google::protobuf::RepeatedPtrField<Hook> &specs,
         llvm::StringRef field, bool onDevice, int64_t step) {
    TrainingHooks hooks;
    auto now = std::chrono::steady_clock::now();
    bool training = field == "training_hooks";
    for (const Hook &hook : specs) {
      if (!training && hook.kind_case() != Hook::kLogging &&
          hook.kind_case() != Hook::KIND_NOT_SET)
        return makeError(
            field + ": only logging hooks (LoggingTensorHook) run in " +
            (field == "evaluation_hooks" ? "evaluation" : "prediction") +
            "; step counters, NaN checks and stop-at-step "
            "hooks are training_hooks");
      switch (hook.kind_case()) {
      case Hook::kLogging: {
        const LoggingTensorHook &spec = hook.logging();
        if (spec.every_n_iter() <= 0)
          return makeError(field + ".logging: invalid every_n_iter=" +
                           llvm::Twine(spec.every_n_iter()) + ".");
        if (onDevice)
          return makeError(field + ".logging: " + field +
                           " must not capture any TPU Tensor inside the "
                           "model_fn (log device tensors with host_call)");
        Logging logging{{}, spec.every_n_iter(), now};
        for (const NamedTensor &tensor : spec.tensors())
          logging.tensors.emplace_back(tensor.key(), tensor.tensor());
        llvm::sort(logging.tensors);
        hooks.logging.push_back(std::move(logging));
        break;
      }
      case Hook::kStepCounter:
        if (hook.step_counter().every_n_steps() <= 0)
          return makeError("training_hooks.step_counter: every_n_steps must be "
                           "positive");
        hooks.counters.push_back(
            {hook.step_counter().every_n_steps(), step, now});
        break;
      case Hook::kNanTensor:
        hooks.failOnNanLoss = hook.nan_tensor().fail_on_nan_loss();
        break;
      case Hook::kStopAtStep: {
        const StopAtStepHook &stop = hook.stop_at_step();
        if (stop.num_steps() && stop.last_step())
          return makeError("training_hooks.stop_at_step: Only one of num_steps "
                           "or last_step can be specified.");
        if (!stop.num_steps() && !stop.last_step())
          return makeError("training_hooks.stop_at_step: One of num_steps or "
                           "last_step must be specified.");
        int64_t last =
            stop.last_step() ? stop.last_step() : step + stop.num_steps();
        hooks.lastStep = std::min(hooks.lastStep.value_or(last), last);
        break;
      }
      case Hook::KIND_NOT_SET:
        return makeError(field + ": a hook without a kind");
      }
    }
    return hooks;
  }

  /// The tensors the hooks log after the step that starts at `step`.
  std::vector<std::string> fetchesAt(int64_t step) const {
    std::vector<std::string> fetches;
    for (const Logging &logging : this->logging)
      if (step % logging.every == 0)
        for (const auto &[tag, tensor] : logging.tensors)
          fetches.push_back(tensor);
    return fetches;
  }

  /// LoggingTensorHook's line: "tag = value, ... (x sec)".
  void logTensors(int64_t step, llvm::ArrayRef<Tensor> values,
                  TrainingLog &log) {
    size_t next = 0;
    auto now = std::chrono::steady_clock::now();
    for (Logging &logging : this->logging) {
      if (step % logging.every != 0)
        continue;
      std::string line;
      for (const auto &[tag, tensor] : logging.tensors)
        line += (line.empty() ? "" : ", ") + tag + " = " +
                formatValue(values[next++]);
      if (logging.logged)
        line += llvm::formatv(
            " ({0:f3} sec)",
            std::chrono::duration<double>(now - logging.last).count());
      log.info(line);
      logging.last = now;
      logging.logged = true;
    }
  }

  /// StepCounterHook's "global_step/sec: ..." every every_n_steps.
  void countSteps(int64_t step, TrainingLog &log) {
    auto now = std::chrono::steady_clock::now();
    for (Counter &counter : counters) {
      if (step - counter.lastStep < counter.every)
        continue;
      double seconds =
          std::chrono::duration<double>(now - counter.last).count();
      log.info(
          llvm::formatv("global_step/sec: {0}",
                        llvm::format("%g", (step - counter.lastStep) / seconds))
              .str());
      counter.lastStep = step;
      counter.last = now;
    }
  }
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_TRAININGHOOKS_H
