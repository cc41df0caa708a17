//===- EventFile.h - TensorBoard's event files -----------------*- C++ -*-===//
//
// What tf.summary's file writer writes: in a log directory, a file
// events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix> of TFRecords of
// tensorflow.Event protos, the first its file_version "brain.Event:2".
// TensorBoard reads them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_EVENTFILE_H
#define CLEAVE_CHECKPOINT_EVENTFILE_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cleave::checkpoint {

class EventFileWriter {
public:
  /// Creates `logDir` when missing and starts a new event file in it.
  static llvm::Expected<std::unique_ptr<EventFileWriter>>
  create(llvm::StringRef logDir, llvm::StringRef suffix = "");

  /// One event at `step` with a simple_value per (tag, value), as
  /// WriteScalarSummary and Estimator's evaluation write them.
  llvm::Error
  writeScalars(int64_t step,
               llvm::ArrayRef<std::pair<std::string, double>> scalars);
  /// One event at `step` with `tensor` under `tag`, described by the
  /// serialized SummaryMetadata `metadata` (WriteSummary: what TensorFlow
  /// 2's tf.summary.scalar writes).
  llvm::Error writeTensor(int64_t step, llvm::StringRef tag,
                          const Tensor &tensor, llvm::StringRef metadata);
  llvm::Error flush();

  const std::string &getLogDir() const { return logDir; }
  const std::string &getPath() const { return path; }

private:
  EventFileWriter(std::string logDir, std::string path,
                  std::unique_ptr<llvm::raw_fd_ostream> os)
      : logDir(std::move(logDir)), path(std::move(path)), os(std::move(os)) {}
  llvm::Error write(const std::string &event);

  std::string logDir, path;
  std::unique_ptr<llvm::raw_fd_ostream> os;
};

/// The simple_value scalars of each event with a summary in the event file
/// at `path`, in file order (summary_iterator's view, as BestExporter
/// reads earlier evaluations); events with none are left out.
llvm::Expected<std::vector<std::vector<std::pair<std::string, double>>>>
readEventScalars(llvm::StringRef path);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_EVENTFILE_H
