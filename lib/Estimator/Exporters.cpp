//===- Exporters.cpp - EvalSpec's exporters -------------------------------===//
//
// tensorflow/estimator's exporter.py: LatestExporter, BestExporter (with
// the best earlier evaluation read from the event files) and
// FinalExporter, with their garbage collection and messages.
//
//===----------------------------------------------------------------------===//

#include "Exporters.h"

#include "Support.h"

#include "cleave/Checkpoint/EventFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Path.h"

using namespace cleave;
using namespace cleave::estimator;

static std::optional<double> lookup(const Metrics &metrics,
                                    llvm::StringRef key) {
  for (const auto &[name, value] : metrics)
    if (name == key)
      return value;
  return std::nullopt;
}

/// Whether an evaluation read back from an event file (float32 values) is
/// `result`, global_step aside.
static bool isSameEvaluation(const Metrics &fromEvents, const Metrics &result) {
  size_t compared = 0;
  for (const auto &[name, value] : result) {
    if (name == "global_step")
      continue;
    auto logged = lookup(fromEvents, name);
    if (!logged || float(*logged) != float(value))
      return false;
    ++compared;
  }
  return compared == size_t(llvm::count_if(fromEvents, [](const auto &entry) {
           return entry.first != "global_step";
         }));
}

llvm::Expected<std::string>
ExporterRunner::exportTo(Estimator &estimator, llvm::StringRef exportPath,
                         llvm::StringRef checkpoint) {
  ExportOptions options;
  options.exportDirBase = exportPath.str();
  options.checkpoint = checkpoint.str();
  options.asText = spec.as_text();
  return estimator.exportSavedModel(options);
}

void ExporterRunner::collectGarbage(llvm::StringRef exportPath,
                                    std::optional<int64_t> keep) {
  if (!keep)
    return;
  std::vector<std::pair<int64_t, std::string>> versions;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(exportPath, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    int64_t version;
    if (name.size() == 10 &&
        llvm::all_of(name, [](char c) { return llvm::isDigit(c); }) &&
        !name.getAsInteger(10, version))
      versions.emplace_back(version, it->path());
  }
  llvm::sort(versions);
  for (size_t i = 0; i + size_t(*keep) < versions.size(); ++i)
    if (std::error_code removed =
            llvm::sys::fs::remove_directories(versions[i].second))
      log.warning("Can not delete " + versions[i].second +
                  " recursively: " + removed.message());
}

llvm::Expected<bool> ExporterRunner::isBetter(const Metrics &best,
                                              const Metrics &current) {
  const BestExporter &options = spec.best();
  if (options.metric().empty()) {
    // _loss_smaller.
    auto bestLoss = lookup(best, "loss");
    if (!bestLoss)
      return makeError(
          "best_eval_result cannot be empty or no loss is found in "
          "it.");
    auto currentLoss = lookup(current, "loss");
    if (!currentLoss)
      return makeError(
          "current_eval_result cannot be empty or no loss is found "
          "in it.");
    return *bestLoss > *currentLoss;
  }
  auto bestValue = lookup(best, options.metric());
  if (!bestValue)
    return makeError("best_eval_result cannot be empty or no " +
                     options.metric() + " is found in it.");
  auto currentValue = lookup(current, options.metric());
  if (!currentValue)
    return makeError("current_eval_result cannot be empty or no " +
                     options.metric() + " is found in it.");
  return options.higher_is_better() ? *currentValue > *bestValue
                                    : *currentValue < *bestValue;
}

llvm::Expected<std::optional<Metrics>>
ExporterRunner::readBestFromEvents(llvm::StringRef modelDir) {
  std::string pattern = spec.best().has_event_file_pattern()
                            ? spec.best().event_file_pattern()
                            : "eval/*.tfevents.*";
  // gfile.Glob over the pattern's last component.
  llvm::SmallString<256> full(modelDir);
  llvm::sys::path::append(full, pattern);
  llvm::StringRef dir = llvm::sys::path::parent_path(full);
  auto glob = llvm::GlobPattern::create(llvm::sys::path::filename(full));
  if (!glob)
    return makeError(
        "eval_spec.exporters '" + spec.name() +
        "': event_file_pattern: " + llvm::toString(glob.takeError()));
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (glob->match(llvm::sys::path::filename(it->path())))
      files.push_back(it->path());
  llvm::sort(files);
  std::optional<Metrics> found;
  for (const std::string &file : files) {
    auto events = checkpoint::readEventScalars(file);
    if (!events)
      return events.takeError();
    for (Metrics &event : *events) {
      bool better = !found;
      if (found) {
        auto compared = isBetter(*found, event);
        if (!compared)
          return compared.takeError();
        better = *compared;
      }
      if (better)
        found = std::move(event);
    }
  }
  return found;
}

llvm::Expected<std::string> ExporterRunner::run(Estimator &estimator,
                                                llvm::StringRef exportPath,
                                                llvm::StringRef checkpoint,
                                                const Metrics &result,
                                                bool isFinal) {
  std::optional<int64_t> keep;
  switch (spec.kind_case()) {
  case Exporter::kFinal: {
    if (!isFinal)
      return "";
    log.info("Performing the final export in the end of training.");
    return exportTo(estimator, exportPath, checkpoint);
  }
  case Exporter::kLatest: {
    auto exported = exportTo(estimator, exportPath, checkpoint);
    if (!exported)
      return exported.takeError();
    if (!spec.latest().keep_all())
      keep = spec.latest().has_exports_to_keep()
                 ? spec.latest().exports_to_keep()
                 : 5;
    collectGarbage(exportPath, keep);
    return exported;
  }
  default:
    break;
  }
  // BestExporter. An evaluation without the compared metric is an error
  // at once, not after the first export.
  std::string key =
      spec.best().metric().empty() ? "loss" : spec.best().metric();
  if (!lookup(result, key))
    return makeError("current_eval_result cannot be empty or no " + key +
                     " is found in it.");
  const std::string &modelDir = estimator.getSettings().modelDir;
  if (loadedModelDir != modelDir) {
    log.info("Loading best metric from event files.");
    loadedModelDir = modelDir;
    auto loaded = readBestFromEvents(modelDir);
    if (!loaded)
      return loaded.takeError();
    best = std::move(*loaded);
  }
  // The first export: the events already hold this evaluation.
  bool better = !best || (!hasExported && isSameEvaluation(*best, result));
  if (!better) {
    auto compared = isBetter(*best, result);
    if (!compared)
      return compared.takeError();
    better = *compared;
  }
  if (!better)
    return "";
  log.info("Performing best model export.");
  best = result;
  auto exported = exportTo(estimator, exportPath, checkpoint);
  if (!exported)
    return exported.takeError();
  if (!spec.best().keep_all())
    keep =
        spec.best().has_exports_to_keep() ? spec.best().exports_to_keep() : 5;
  collectGarbage(exportPath, keep);
  hasExported = true;
  return exported;
}
