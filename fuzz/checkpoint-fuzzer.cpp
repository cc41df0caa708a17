//===- checkpoint-fuzzer.cpp - libFuzzer target for the bundle reader -----===//
//
// An input is a checkpoint: a 4-byte little-endian length, that many bytes
// of `.index`, and the rest as the one data shard. Both are written to a
// private directory and read with BundleReader: every tensor is looked up
// and read. Bad input must give errors only.
//
// Mutations would almost always break a block checksum and stop at it, so
// inputs whose first byte is odd get their index blocks' checksums
// recomputed first (the footer's handles, and the handles in an
// uncompressed index block): the fuzzer then reaches the entries behind
// them. Even inputs keep their checksums, so the checks are fuzzed too.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Checkpoint/Crc32c.h"
#include "cleave/Checkpoint/Table.h"
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

/// Reads a block handle (two varints) from the front of `in`.
static bool readHandle(llvm::StringRef &in, uint64_t &offset, uint64_t &size) {
  return checkpoint::consumeVarint64(in, offset) &&
         checkpoint::consumeVarint64(in, size);
}

/// Rewrites the checksum after the block at `offset` of `size` bytes, when
/// the block and its 5-byte trailer lie inside `table`.
static bool fixBlock(std::string &table, uint64_t offset, uint64_t size) {
  if (offset > table.size() || size > table.size() - offset ||
      table.size() - offset - size < 5)
    return false;
  uint32_t crc = checkpoint::maskCrc32c(
      checkpoint::crc32c(llvm::StringRef(table).substr(offset, size + 1)));
  for (int i = 0; i < 4; ++i)
    table[offset + size + 1 + i] = char(crc >> (8 * i));
  return true;
}

/// Recomputes the checksums of the metaindex and index blocks and of the
/// data blocks an uncompressed index block names.
static void fixChecksums(std::string &table) {
  if (table.size() < checkpoint::kTableFooterSize)
    return;
  llvm::StringRef footer =
      llvm::StringRef(table).take_back(checkpoint::kTableFooterSize);
  uint64_t metaOffset, metaSize, indexOffset, indexSize;
  if (!readHandle(footer, metaOffset, metaSize) ||
      !readHandle(footer, indexOffset, indexSize))
    return;
  fixBlock(table, metaOffset, metaSize);
  if (!fixBlock(table, indexOffset, indexSize) ||
      table[indexOffset + indexSize] != 0 || indexSize < 4)
    return;
  // Entries: shared, non-shared and value lengths, the key's new bytes, the
  // value (a handle); then the restart array and its count.
  llvm::StringRef block = llvm::StringRef(table).substr(indexOffset, indexSize);
  uint32_t restarts = uint8_t(block[indexSize - 4]) |
                      uint8_t(block[indexSize - 3]) << 8 |
                      uint8_t(block[indexSize - 2]) << 16 |
                      uint32_t(uint8_t(block[indexSize - 1])) << 24;
  if (restarts > (indexSize - 4) / 4)
    return;
  llvm::StringRef entries = block.drop_back(4 + 4 * uint64_t(restarts));
  while (!entries.empty()) {
    uint64_t shared, unshared, valueSize;
    if (!checkpoint::consumeVarint64(entries, shared) ||
        !checkpoint::consumeVarint64(entries, unshared) ||
        !checkpoint::consumeVarint64(entries, valueSize) ||
        unshared > entries.size() || valueSize > entries.size() - unshared)
      return;
    llvm::StringRef value = entries.substr(unshared, valueSize);
    entries = entries.drop_front(unshared + valueSize);
    uint64_t offset, size;
    if (readHandle(value, offset, size))
      fixBlock(table, offset, size);
  }
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
  std::string index = rest.take_front(indexSize).str();
  if (data[0] & 1)
    fixChecksums(index);
  writeFile(checkpoint::indexFileName(prefix), index);
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
