//===- TFRecord.cpp - TensorFlow's record files ---------------------------===//

#include "cleave/Checkpoint/TFRecord.h"

#include "cleave/Checkpoint/Crc32c.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"

using namespace cleave;
using namespace cleave::checkpoint;

void checkpoint::writeTFRecord(llvm::raw_ostream &os, llvm::StringRef data) {
  char header[8], crc[4];
  llvm::support::endian::write64le(header, data.size());
  llvm::support::endian::write32le(crc,
                                   maskCrc32c(crc32c({header, sizeof header})));
  os.write(header, sizeof header);
  os.write(crc, sizeof crc);
  os << data;
  llvm::support::endian::write32le(crc, maskCrc32c(crc32c(data)));
  os.write(crc, sizeof crc);
}

llvm::Expected<std::vector<llvm::StringRef>>
checkpoint::splitTFRecords(llvm::StringRef bytes, llvm::StringRef path) {
  using llvm::support::endian::read32le;
  using llvm::support::endian::read64le;
  auto fail = [&](llvm::StringRef what, size_t offset) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + what + " record at " +
                                       llvm::Twine(offset));
  };
  auto matches = [&](llvm::StringRef data, size_t crcAt) {
    return read32le(bytes.data() + crcAt) == maskCrc32c(crc32c(data));
  };
  std::vector<llvm::StringRef> records;
  for (size_t offset = 0; offset < bytes.size();) {
    size_t left = bytes.size() - offset;
    if (left < 12)
      return fail("truncated", offset);
    uint64_t length = read64le(bytes.data() + offset);
    if (!matches(bytes.substr(offset, 8), offset + 8))
      return fail("corrupted", offset);
    if (left - 12 < 4 || length > left - 12 - 4)
      return fail("truncated", offset);
    llvm::StringRef data = bytes.substr(offset + 12, length);
    if (!matches(data, offset + 12 + length))
      return fail("corrupted", offset);
    records.push_back(data);
    offset += 12 + length + 4;
  }
  return records;
}
