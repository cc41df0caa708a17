//===- Exporters.h - EvalSpec's exporters ---------------------*- C++ -*-===//
//
// What train_and_evaluate runs after each evaluation: exporter.py's
// LatestExporter, BestExporter and FinalExporter over
// Estimator::exportSavedModel, and the INFO and WARNING lines they and the
// executor write.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_EXPORTERS_H
#define CLEAVE_LIB_ESTIMATOR_EXPORTERS_H

#include "cleave/Estimator/Estimator.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cleave::estimator {

/// Metrics by name, as evaluate returns them.
using Metrics = std::vector<std::pair<std::string, double>>;

/// TensorFlow's logging lines ("INFO: ...", "WARNING: ..."); null: none.
class InfoLog {
public:
  explicit InfoLog(llvm::raw_ostream *os) : os(os) {}
  void info(const llvm::Twine &line) { print("INFO: ", line); }
  void warning(const llvm::Twine &line) { print("WARNING: ", line); }

private:
  void print(llvm::StringRef level, const llvm::Twine &line) {
    if (!os)
      return;
    *os << level << line << "\n";
    os->flush();
  }
  llvm::raw_ostream *os;
};

/// One of the eval spec's exporters and what it remembers across
/// evaluations.
class ExporterRunner {
public:
  ExporterRunner(Exporter spec, InfoLog &log)
      : spec(std::move(spec)), log(log) {}

  const std::string &getName() const { return spec.name(); }

  /// Exporter.export: the export's directory, or empty when skipped.
  llvm::Expected<std::string> run(Estimator &estimator,
                                  llvm::StringRef exportPath,
                                  llvm::StringRef checkpoint,
                                  const Metrics &result, bool isFinal);

private:
  llvm::Expected<std::string> exportTo(Estimator &estimator,
                                       llvm::StringRef exportPath,
                                       llvm::StringRef checkpoint);
  /// Deletes all but the newest exports_to_keep exports (directories of
  /// ten digits).
  void collectGarbage(llvm::StringRef exportPath, std::optional<int64_t> keep);
  /// compare_fn(best_eval_result, current_eval_result).
  llvm::Expected<bool> isBetter(const Metrics &best, const Metrics &current);
  llvm::Expected<std::optional<Metrics>>
  readBestFromEvents(llvm::StringRef modelDir);

  Exporter spec;
  InfoLog &log;
  // BestExporter's state.
  std::string loadedModelDir;
  std::optional<Metrics> best;
  bool hasExported = false;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_EXPORTERS_H
