//===- EventWriter.cpp - TensorBoard event files of scalars ---------------===//

#include "EventWriter.h"

#include "cleave/Checkpoint/Crc32c.h"
#include "cleave/tf/event.pb.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <unistd.h>

using namespace cleave;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One TFRecord: length, masked CRC of the length, data, masked CRC of
/// the data.
static void writeRecord(llvm::raw_ostream &os, const std::string &data) {
  char header[8];
  llvm::support::endian::write64le(header, data.size());
  char crc[4];
  llvm::support::endian::write32le(
      crc, checkpoint::maskCrc32c(checkpoint::crc32c({header, 8})));
  os.write(header, 8);
  os.write(crc, 4);
  os << data;
  llvm::support::endian::write32le(
      crc, checkpoint::maskCrc32c(checkpoint::crc32c(data)));
  os.write(crc, 4);
}

llvm::Error estimator::writeScalarEvents(
    llvm::StringRef dir, int64_t step,
    llvm::ArrayRef<std::pair<std::string, double>> scalars) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create '" + dir + "': " + ec.message());
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  llvm::SmallString<256> path(dir);
  // The pid keeps two evaluations within one second apart.
  llvm::sys::path::append(path, "events.out.tfevents." +
                                    llvm::Twine(int64_t(now)) + "." + host +
                                    "." + llvm::Twine(::getpid()));
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  tensorflow::Event version;
  version.set_wall_time(now);
  version.set_file_version("brain.Event:2");
  writeRecord(os, version.SerializeAsString());
  tensorflow::Event event;
  event.set_wall_time(now);
  event.set_step(step);
  for (const auto &[tag, value] : scalars) {
    auto *entry = event.mutable_summary()->add_value();
    entry->set_tag(tag);
    entry->set_simple_value(float(value));
  }
  writeRecord(os, event.SerializeAsString());
  os.close();
  if (os.has_error())
    return error("cannot write '" + path + "': " + os.error().message());
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>>
estimator::readRecords(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer)
    return error("cannot open '" + path + "': " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  std::vector<std::string> records;
  while (!bytes.empty()) {
    if (bytes.size() < 12)
      return error("'" + path + "': truncated record header");
    uint64_t length = llvm::support::endian::read64le(bytes.data());
    if (checkpoint::maskCrc32c(checkpoint::crc32c(bytes.take_front(8))) !=
        llvm::support::endian::read32le(bytes.data() + 8))
      return error("'" + path + "': corrupted record length");
    bytes = bytes.drop_front(12);
    if (bytes.size() < length + 4)
      return error("'" + path + "': truncated record");
    llvm::StringRef data = bytes.take_front(length);
    if (checkpoint::maskCrc32c(checkpoint::crc32c(data)) !=
        llvm::support::endian::read32le(bytes.data() + length))
      return error("'" + path + "': corrupted record data");
    records.push_back(data.str());
    bytes = bytes.drop_front(length + 4);
  }
  return records;
}
