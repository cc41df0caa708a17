//===- EventFile.cpp - TensorBoard's event files --------------------------===//

#include "cleave/Checkpoint/EventFile.h"

#include "cleave/Checkpoint/TFRecord.h"
#include "cleave/tf/event.pb.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <chrono>
#include <unistd.h>

using namespace cleave;
using namespace cleave::checkpoint;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

llvm::Expected<std::unique_ptr<EventFileWriter>>
EventFileWriter::create(llvm::StringRef logDir, llvm::StringRef suffix) {
  if (std::error_code ec = llvm::sys::fs::create_directories(logDir))
    return error("cannot create '" + logDir + "': " + ec.message());
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  // TensorFlow's name; the count keeps two writers of one process and
  // second apart.
  static std::atomic<int64_t> count{0};
  llvm::SmallString<256> path(logDir);
  std::string name;
  llvm::raw_string_ostream(name)
      << "events.out.tfevents." << llvm::format("%010lld", (long long)now())
      << "." << host << "." << ::getpid() << "." << count++ << suffix;
  llvm::sys::path::append(path, name);
  std::error_code ec;
  auto os = std::make_unique<llvm::raw_fd_ostream>(path, ec,
                                                   llvm::sys::fs::OF_Append);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  std::unique_ptr<EventFileWriter> writer(
      new EventFileWriter(logDir.str(), std::string(path), std::move(os)));
  tensorflow::Event version;
  version.set_wall_time(now());
  version.set_file_version("brain.Event:2");
  if (llvm::Error failure = writer->write(version.SerializeAsString()))
    return std::move(failure);
  return writer;
}

llvm::Error EventFileWriter::write(const std::string &event) {
  writeTFRecord(*os, event);
  return flush();
}

llvm::Error EventFileWriter::flush() {
  os->flush();
  if (os->has_error()) {
    std::error_code ec = os->error();
    os->clear_error();
    return error("cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error EventFileWriter::writeScalars(
    int64_t step, llvm::ArrayRef<std::pair<std::string, double>> scalars) {
  tensorflow::Event event;
  event.set_wall_time(now());
  event.set_step(step);
  for (const auto &[tag, value] : scalars) {
    auto *entry = event.mutable_summary()->add_value();
    entry->set_tag(tag);
    entry->set_simple_value(float(value));
  }
  return write(event.SerializeAsString());
}

llvm::Error EventFileWriter::writeTensor(int64_t step, llvm::StringRef tag,
                                         const Tensor &tensor,
                                         llvm::StringRef metadata) {
  tensorflow::Event event;
  event.set_wall_time(now());
  event.set_step(step);
  auto *entry = event.mutable_summary()->add_value();
  entry->set_tag(tag.str());
  if (!metadata.empty() && !entry->mutable_metadata()->ParseFromArray(
                               metadata.data(), metadata.size()))
    return error("summary_metadata is not a serialized SummaryMetadata");
  tensorflow::TensorProto &proto = *entry->mutable_tensor();
  proto.set_dtype(tensorflow::DataType(tensor.dtype()));
  for (int64_t d : tensor.shape())
    proto.mutable_tensor_shape()->add_dim()->set_size(d);
  if (tensor.dtype() == kString) {
    for (const std::string &value : tensor.strings())
      proto.add_string_val(value);
  } else {
    proto.set_tensor_content(std::string(tensor.raw(), tensor.byteSize()));
  }
  return write(event.SerializeAsString());
}

llvm::Expected<std::vector<std::vector<std::pair<std::string, double>>>>
checkpoint::readEventScalars(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  auto records = splitTFRecords((*buffer)->getBuffer(), path);
  if (!records)
    return records.takeError();
  std::vector<std::vector<std::pair<std::string, double>>> events;
  for (llvm::StringRef record : *records) {
    tensorflow::Event event;
    if (!event.ParseFromArray(record.data(), int(record.size())))
      return error("'" + path + "': a record is not a tensorflow.Event");
    if (!event.has_summary())
      continue;
    std::vector<std::pair<std::string, double>> scalars;
    for (const tensorflow::Summary::Value &value : event.summary().value())
      if (value.value_case() == tensorflow::Summary::Value::kSimpleValue)
        scalars.emplace_back(value.tag(), value.simple_value());
    if (!scalars.empty())
      events.push_back(std::move(scalars));
  }
  return events;
}
