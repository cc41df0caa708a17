//===- checkpoint-fuzzer.cpp - libFuzzer target for the bundle reader -----===//
//
// An input is a checkpoint: a 4-byte little-endian length, that many bytes
// of `.index`, and the rest as the one data shard. Both are written to a
// private directory and read with BundleReader: every tensor is looked up
// and read. Bad input must give errors only.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Checkpoint/TensorBundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace cleave;

static std::string makePrefix() {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("cleave-checkpoint-fuzz", dir))
    abort();
  llvm::sys::path::append(dir, "ckpt");
  return dir.str().str();
}

static void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    abort();
  os << bytes;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string prefix = makePrefix();
  if (size < 4)
    return -1;
  uint32_t indexSize = data[0] | data[1] << 8 | data[2] << 16 |
                       uint32_t(data[3]) << 24;
  llvm::StringRef rest = fuzz::asString(data + 4, size - 4);
  if (indexSize > rest.size())
    return -1;
  writeFile(checkpoint::indexFileName(prefix), rest.take_front(indexSize));
  writeFile(checkpoint::dataFileName(prefix, 0, 1), rest.drop_front(indexSize));
  auto reader = checkpoint::BundleReader::open(prefix);
  if (!reader) {
    llvm::consumeError(reader.takeError());
    return 0;
  }
  for (const std::string &key : reader->keys()) {
    auto tensor = reader->read(key);
    if (!tensor)
      llvm::consumeError(tensor.takeError());
    const checkpoint::BundleEntry *entry = reader->lookup(key);
    if (!entry)
      continue;
    for (const checkpoint::TensorSliceSpec &slice : entry->slices) {
      auto part = reader->readSlice(key, slice);
      if (!part)
        llvm::consumeError(part.takeError());
    }
  }
  return 0;
}
