//===- CheckpointState.cpp - the `checkpoint` file of a directory ---------===//

#include "cleave/Checkpoint/CheckpointState.h"

#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/tf/checkpoint_state.pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

using namespace cleave::checkpoint;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

namespace {
/// Keeps the first text-format error with its (1-based) position.
class FirstError : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string &message) override {
    if (text.empty())
      text = std::to_string(line + 1) + ":" + std::to_string(column + 1) +
             ": " + message;
  }
  std::string text;
};
} // namespace

static std::string statePath(StringRef dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, kCheckpointStateFileName);
  return path.str().str();
}

/// True for "<base>.data-NNNNN-of-NNNNN".
static bool isDataFileOf(StringRef name, StringRef base) {
  if (!name.consume_front(base) || !name.consume_front(".data-"))
    return false;
  auto digits = [](StringRef s) {
    return s.size() == 5 && llvm::all_of(s, llvm::isDigit);
  };
  auto [shard, count] = name.split("-of-");
  return digits(shard) && digits(count);
}

llvm::Expected<CheckpointState>
cleave::checkpoint::parseCheckpointState(StringRef text, StringRef fileName) {
  tensorflow::CheckpointState proto;
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &proto))
    return makeError(fileName + ":" + errors.text);
  CheckpointState state;
  state.modelCheckpointPath = proto.model_checkpoint_path();
  state.allModelCheckpointPaths.assign(
      proto.all_model_checkpoint_paths().begin(),
      proto.all_model_checkpoint_paths().end());
  state.allModelCheckpointTimestamps.assign(
      proto.all_model_checkpoint_timestamps().begin(),
      proto.all_model_checkpoint_timestamps().end());
  state.lastPreservedTimestamp = proto.last_preserved_timestamp();
  return state;
}

std::string
cleave::checkpoint::printCheckpointState(const CheckpointState &state) {
  tensorflow::CheckpointState proto;
  proto.set_model_checkpoint_path(state.modelCheckpointPath);
  for (const std::string &path : state.allModelCheckpointPaths)
    proto.add_all_model_checkpoint_paths(path);
  for (double t : state.allModelCheckpointTimestamps)
    proto.add_all_model_checkpoint_timestamps(t);
  proto.set_last_preserved_timestamp(state.lastPreservedTimestamp);
  std::string text;
  google::protobuf::TextFormat::PrintToString(proto, &text);
  return text;
}

llvm::Expected<std::optional<CheckpointState>>
cleave::checkpoint::readCheckpointState(StringRef dir) {
  std::string path = statePath(dir);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    if (buffer.getError() == std::errc::no_such_file_or_directory)
      return std::nullopt;
    return makeError(path + ": cannot read: " + buffer.getError().message());
  }
  auto state = parseCheckpointState((*buffer)->getBuffer(), path);
  if (!state)
    return state.takeError();
  return std::optional<CheckpointState>(std::move(*state));
}

llvm::Error cleave::checkpoint::writeCheckpointState(
    StringRef dir, const CheckpointState &state) {
  std::string path = statePath(dir);
  if (resolveCheckpointPath(dir, state.modelCheckpointPath) == path)
    return makeError(path + ": the checkpoint '" + state.modelCheckpointPath +
                     "' conflicts with the checkpoint state file; use "
                     "another prefix");
  return writeFileAtomically(path, printCheckpointState(state));
}

std::string cleave::checkpoint::resolveCheckpointPath(StringRef dir,
                                                      StringRef path) {
  if (llvm::sys::path::is_absolute(path) || dir.empty())
    return path.str();
  llvm::SmallString<256> resolved(dir);
  llvm::sys::path::append(resolved, path);
  return resolved.str().str();
}

llvm::Expected<std::optional<std::string>>
cleave::checkpoint::latestCheckpoint(StringRef dir) {
  auto state = readCheckpointState(dir);
  if (!state)
    return state.takeError();
  if (!*state || (*state)->modelCheckpointPath.empty())
    return std::nullopt;
  std::string prefix =
      resolveCheckpointPath(dir, (*state)->modelCheckpointPath);
  if (!llvm::sys::fs::exists(indexFileName(prefix)))
    return std::nullopt;
  return std::optional<std::string>(prefix);
}

llvm::Error cleave::checkpoint::removeCheckpoint(StringRef prefix) {
  StringRef dir = llvm::sys::path::parent_path(prefix);
  StringRef base = llvm::sys::path::filename(prefix);
  std::vector<std::string> doomed = {indexFileName(prefix),
                                     (prefix + ".meta").str()};
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.empty() ? "." : dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (isDataFileOf(name, base))
      doomed.push_back(it->path());
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return makeError((dir.empty() ? StringRef(".") : dir) +
                     ": cannot list: " + ec.message());
  for (const std::string &path : doomed) {
    std::error_code removed = llvm::sys::fs::remove(path);
    if (removed && removed != std::errc::no_such_file_or_directory)
      return makeError(path + ": cannot delete: " + removed.message());
  }
  return llvm::Error::success();
}

llvm::Error cleave::checkpoint::recordCheckpoint(StringRef dir,
                                                 StringRef prefix,
                                                 unsigned maxToKeep,
                                                 double timestamp,
                                                 bool relativePaths) {
  auto existing = readCheckpointState(dir);
  if (!existing)
    return existing.takeError();
  CheckpointState old = existing->value_or(CheckpointState());
  bool haveTimestamps = old.allModelCheckpointTimestamps.size() ==
                        old.allModelCheckpointPaths.size();

  // As TensorFlow's update_checkpoint_state: a relative prefix in a
  // relative directory is recorded relative to that directory (the state
  // file's paths are read relative to it), an absolute one as it is.
  // With relativePaths (Saver's save_relative_paths, as an Estimator's
  // Scaffold makes it), a prefix in the directory is recorded by its name.
  std::string recorded = prefix.str();
  if (relativePaths || (!llvm::sys::path::is_absolute(dir) &&
                        !llvm::sys::path::is_absolute(prefix))) {
    std::string within = dir.rtrim('/').str() + "/";
    if (dir != "." && StringRef(recorded).starts_with(within))
      recorded = recorded.substr(within.size());
  }
  std::string resolved = resolveCheckpointPath(dir, recorded);
  CheckpointState state;
  state.lastPreservedTimestamp = old.lastPreservedTimestamp;
  if (maxToKeep > 0) {
    for (size_t i = 0; i < old.allModelCheckpointPaths.size(); ++i) {
      const std::string &path = old.allModelCheckpointPaths[i];
      if (resolveCheckpointPath(dir, path) == resolved)
        continue; // saved again under the same name: it moves to the end
      state.allModelCheckpointPaths.push_back(path);
      if (haveTimestamps)
        state.allModelCheckpointTimestamps.push_back(
            old.allModelCheckpointTimestamps[i]);
    }
  }
  state.modelCheckpointPath = recorded;
  state.allModelCheckpointPaths.push_back(recorded);
  if (haveTimestamps)
    state.allModelCheckpointTimestamps.push_back(timestamp);
  else
    state.allModelCheckpointTimestamps.clear();

  std::vector<std::string> expired;
  if (maxToKeep > 0) {
    while (state.allModelCheckpointPaths.size() > maxToKeep) {
      expired.push_back(state.allModelCheckpointPaths.front());
      state.allModelCheckpointPaths.erase(
          state.allModelCheckpointPaths.begin());
      if (!state.allModelCheckpointTimestamps.empty())
        state.allModelCheckpointTimestamps.erase(
            state.allModelCheckpointTimestamps.begin());
    }
  }
  // The state first: it never names a checkpoint whose files are gone.
  if (llvm::Error err = writeCheckpointState(dir, state))
    return err;
  for (const std::string &path : expired)
    if (llvm::Error err = removeCheckpoint(resolveCheckpointPath(dir, path)))
      return err;
  return llvm::Error::success();
}
