//===- CheckpointState.h - the `checkpoint` file of a directory -*- C++ -*-===//
//
// TensorFlow keeps, beside the checkpoints in a directory, a text-format
// CheckpointState in a file named `checkpoint`: the newest checkpoint's
// prefix and the prefixes still kept, oldest first. Savers rewrite it
// atomically after each save and delete checkpoints beyond the last K
// (tf.train.Saver(max_to_keep=K)); tf.train.latest_checkpoint reads it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_CHECKPOINTSTATE_H
#define CLEAVE_CHECKPOINT_CHECKPOINTSTATE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::checkpoint {

/// Name of the state file inside a checkpoint directory.
constexpr llvm::StringLiteral kCheckpointStateFileName = "checkpoint";

/// A CheckpointState message (tensorflow/core/protobuf/checkpoint_state.proto).
/// Paths are prefixes as stored: relative ones are relative to the
/// directory that holds the state file.
struct CheckpointState {
  /// The newest checkpoint.
  std::string modelCheckpointPath;
  /// The checkpoints kept, oldest first; the last is modelCheckpointPath.
  std::vector<std::string> allModelCheckpointPaths;
  /// Seconds since the epoch, parallel to allModelCheckpointPaths (may be
  /// empty: older writers leave it out).
  std::vector<double> allModelCheckpointTimestamps;
  /// Time of the last checkpoint kept by keep_checkpoint_every_n_hours.
  double lastPreservedTimestamp = 0;
};

/// Parses the text format; `fileName` names the file in errors.
llvm::Expected<CheckpointState> parseCheckpointState(llvm::StringRef text,
                                                     llvm::StringRef fileName);

/// The text format, as TensorFlow writes it
/// (`model_checkpoint_path: "..."` lines).
std::string printCheckpointState(const CheckpointState &state);

/// Reads `<dir>/checkpoint`; std::nullopt when the file does not exist.
llvm::Expected<std::optional<CheckpointState>>
readCheckpointState(llvm::StringRef dir);

/// Writes `<dir>/checkpoint` atomically (temporary file, fsync, rename).
llvm::Error writeCheckpointState(llvm::StringRef dir,
                                 const CheckpointState &state);

/// `path` made absolute against `dir` when it is relative.
std::string resolveCheckpointPath(llvm::StringRef dir, llvm::StringRef path);

/// The newest checkpoint's prefix in `dir` (resolved against `dir`), as
/// tf.train.latest_checkpoint: std::nullopt when there is no state file,
/// it names no checkpoint, or that checkpoint's index file is missing.
llvm::Expected<std::optional<std::string>>
latestCheckpoint(llvm::StringRef dir);

/// Deletes a checkpoint's files: `<prefix>.index`, every
/// `<prefix>.data-NNNNN-of-NNNNN` and `<prefix>.meta`. Files that are not
/// there are no error.
llvm::Error removeCheckpoint(llvm::StringRef prefix);

/// Records checkpoint `prefix`, just written, in `<dir>/checkpoint` the way
/// tf.train.Saver.save does: it becomes the newest (moved to the end if it
/// was listed), and with `maxToKeep` > 0 the oldest beyond the last
/// `maxToKeep` are dropped from the list and their files deleted, after the
/// new state is written. With `maxToKeep` == 0 nothing is deleted and the
/// state lists only the newest checkpoint (Saver's max_to_keep=0/None).
/// The list so far comes from the existing state file. With
/// `relativePaths` (Saver's save_relative_paths), a prefix inside `dir` is
/// recorded relative to it.
llvm::Error recordCheckpoint(llvm::StringRef dir, llvm::StringRef prefix,
                             unsigned maxToKeep, double timestamp,
                             bool relativePaths = false);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_CHECKPOINTSTATE_H
