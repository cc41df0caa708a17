//===- Table.cpp - LevelDB-format sorted tables ---------------------------===//
//
// Writer: the same decisions as TensorFlow's TableBuilder, so that the
// files are byte-identical. Reader: whole-file, every size checked against
// the bytes that are there before it is used.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/Table.h"

#include "cleave/Checkpoint/Crc32c.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <snappy.h>

#include <algorithm>

using namespace cleave::checkpoint;
using llvm::StringRef;

static constexpr size_t kBlockTrailerSize = 5;
static constexpr size_t kMaxHandleSize = 20; // two varint64s
static constexpr char kNoCompression = 0;
static constexpr char kSnappyCompression = 1;

static void appendFixed32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

static uint32_t loadFixed32(const char *p) {
  const auto *u = reinterpret_cast<const unsigned char *>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 |
         uint32_t(u[3]) << 24;
}

/// A varint of at most 5 bytes that fits 32 bits (block entry fields).
static bool consumeVarint32(StringRef &in, uint32_t &value) {
  StringRef saved = in;
  uint64_t v;
  if (!consumeVarint64(in, v) || saved.size() - in.size() > 5 ||
      v > UINT32_MAX) {
    in = saved;
    return false;
  }
  value = static_cast<uint32_t>(v);
  return true;
}

namespace {
/// Position and size of a block in the file.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
  void encodeTo(std::string &out) const {
    appendVarint64(out, offset);
    appendVarint64(out, size);
  }
};

/// One block being built: prefix-compressed entries and restart points.
class BlockBuilder {
public:
  explicit BlockBuilder(int restartInterval)
      : restartInterval(restartInterval) {
    restarts.push_back(0);
  }
  bool empty() const { return buffer.empty(); }
  size_t sizeEstimate() const {
    return buffer.size() + restarts.size() * 4 + 4;
  }
  void add(StringRef key, StringRef value) {
    size_t shared = 0;
    if (counter < restartInterval) {
      size_t limit = std::min(lastKey.size(), key.size());
      while (shared < limit && lastKey[shared] == key[shared])
        ++shared;
    } else {
      restarts.push_back(static_cast<uint32_t>(buffer.size()));
      counter = 0;
    }
    appendVarint64(buffer, shared);
    appendVarint64(buffer, key.size() - shared);
    appendVarint64(buffer, value.size());
    buffer.append(key.data() + shared, key.size() - shared);
    buffer.append(value.data(), value.size());
    lastKey.assign(key.data(), key.size());
    ++counter;
  }
  /// The finished block; the builder must be reset before reuse.
  const std::string &finish() {
    for (uint32_t r : restarts)
      appendFixed32(buffer, r);
    appendFixed32(buffer, static_cast<uint32_t>(restarts.size()));
    return buffer;
  }
  void reset() {
    buffer.clear();
    restarts.assign(1, 0);
    counter = 0;
    lastKey.clear();
  }

private:
  int restartInterval;
  std::string buffer;
  std::vector<uint32_t> restarts;
  int counter = 0;
  std::string lastKey;
};
} // namespace

/// A short key k with start <= k < limit (TensorFlow's
/// FindShortestSeparator): unchanged when one is a prefix of the other or
/// the first differing byte cannot be incremented below limit's.
static void shortenToSeparator(std::string &start, StringRef limit) {
  size_t common = 0;
  size_t n = std::min(start.size(), limit.size());
  while (common < n && start[common] == limit[common])
    ++common;
  if (common >= n)
    return;
  auto byte = static_cast<uint8_t>(start[common]);
  if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[common])) {
    start[common] = static_cast<char>(byte + 1);
    start.resize(common + 1);
  }
}

/// A short key >= key (FindShortSuccessor): the first byte that is not
/// 0xff, incremented, and nothing after it.
static void shortenToSuccessor(std::string &key) {
  for (size_t i = 0; i < key.size(); ++i) {
    auto byte = static_cast<uint8_t>(key[i]);
    if (byte != 0xff) {
      key[i] = static_cast<char>(byte + 1);
      key.resize(i + 1);
      return;
    }
  }
}

void cleave::checkpoint::appendVarint64(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

bool cleave::checkpoint::consumeVarint64(StringRef &in, uint64_t &value) {
  uint64_t result = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    auto byte = static_cast<uint8_t>(in[i]);
    if (i == 9 && byte > 1)
      return false; // more than 64 bits
    result |= uint64_t(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      value = result;
      in = in.drop_front(i + 1);
      return true;
    }
  }
  return false;
}

std::string cleave::checkpoint::printableKey(StringRef key) {
  std::string out;
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(llvm::hexdigit(u >> 4, /*LowerCase=*/true));
      out.push_back(llvm::hexdigit(u & 15, /*LowerCase=*/true));
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// TableWriter
//===----------------------------------------------------------------------===//

struct TableWriter::Impl {
  explicit Impl(TableOptions options)
      : options(options), dataBlock(options.restartInterval),
        indexBlock(/*restartInterval=*/1) {}

  TableOptions options;
  std::string file;
  BlockBuilder dataBlock;
  BlockBuilder indexBlock;
  std::string lastKey;
  uint64_t numEntries = 0;
  /// The handle of the last data block written, waiting for the first key
  /// of the next block to choose its index key.
  bool pendingIndexEntry = false;
  BlockHandle pendingHandle;

  void writeRawBlock(StringRef contents, char type, BlockHandle &handle) {
    handle.offset = file.size();
    handle.size = contents.size();
    file.append(contents.data(), contents.size());
    uint32_t crc = extendCrc32c(0, contents.data(), contents.size());
    crc = extendCrc32c(crc, &type, 1);
    file.push_back(type);
    appendFixed32(file, maskCrc32c(crc));
  }

  void writeBlock(BlockBuilder &block, BlockHandle &handle) {
    const std::string &raw = block.finish();
    if (options.snappy) {
      std::string compressed;
      snappy::Compress(raw.data(), raw.size(), &compressed);
      if (compressed.size() < raw.size() - raw.size() / 8) {
        writeRawBlock(compressed, kSnappyCompression, handle);
        block.reset();
        return;
      }
    }
    writeRawBlock(raw, kNoCompression, handle);
    block.reset();
  }

  void flush() {
    if (dataBlock.empty())
      return;
    writeBlock(dataBlock, pendingHandle);
    pendingIndexEntry = true;
  }

  void addPendingIndexEntry() {
    std::string handle;
    pendingHandle.encodeTo(handle);
    indexBlock.add(lastKey, handle);
    pendingIndexEntry = false;
  }
};

TableWriter::TableWriter(TableOptions options)
    : impl(std::make_unique<Impl>(options)) {}
TableWriter::~TableWriter() = default;
TableWriter::TableWriter(TableWriter &&) noexcept = default;
TableWriter &TableWriter::operator=(TableWriter &&) noexcept = default;

llvm::Error TableWriter::add(StringRef key, StringRef value) {
  Impl &r = *impl;
  if (r.numEntries > 0) {
    if (key <= StringRef(r.lastKey))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "table keys must be strictly increasing: '%s' after '%s'",
          printableKey(key).c_str(), printableKey(r.lastKey).c_str());
    // An entry of twice the block size or more gets a block of its own.
    if (key.size() + value.size() >= 2 * r.options.blockSize)
      r.flush();
  }
  if (r.pendingIndexEntry) {
    shortenToSeparator(r.lastKey, key);
    r.addPendingIndexEntry();
  }
  r.lastKey.assign(key.data(), key.size());
  ++r.numEntries;
  r.dataBlock.add(key, value);
  if (r.dataBlock.sizeEstimate() >= r.options.blockSize)
    r.flush();
  return llvm::Error::success();
}

std::string TableWriter::finish() {
  Impl &r = *impl;
  r.flush();
  BlockHandle metaindexHandle, indexHandle;
  BlockBuilder metaindexBlock(r.options.restartInterval);
  r.writeBlock(metaindexBlock, metaindexHandle);
  if (r.pendingIndexEntry) {
    shortenToSuccessor(r.lastKey);
    r.addPendingIndexEntry();
  }
  r.writeBlock(r.indexBlock, indexHandle);

  std::string footer;
  metaindexHandle.encodeTo(footer);
  indexHandle.encodeTo(footer);
  footer.resize(2 * kMaxHandleSize, '\0');
  appendFixed32(footer, static_cast<uint32_t>(kTableMagicNumber & 0xffffffffu));
  appendFixed32(footer, static_cast<uint32_t>(kTableMagicNumber >> 32));
  r.file += footer;

  std::string result = std::move(r.file);
  impl = std::make_unique<Impl>(r.options);
  return result;
}

//===----------------------------------------------------------------------===//
// TableReader
//===----------------------------------------------------------------------===//

namespace {

class TableParser {
public:
  TableParser(StringRef contents, StringRef fileName)
      : contents(contents), fileName(fileName) {}

  llvm::Error parse(std::vector<TableReader::Entry> &entries);

private:
  template <typename... Ts>
  llvm::Error error(const char *format, Ts &&...args) const {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        (fileName + ": " + llvm::formatv(format, std::forward<Ts>(args)...)
                               .str())
            .str());
  }

  llvm::Error decodeHandle(StringRef &in, BlockHandle &handle,
                           StringRef what) const;
  /// Checks the trailer of the block at `handle` and returns its contents,
  /// decompressed into `storage` when needed.
  llvm::Error readBlock(const BlockHandle &handle, StringRef what,
                        std::string &storage, StringRef &block) const;
  /// Calls `fn(key, value)` for each entry of `block` in order.
  llvm::Error forEachEntry(
      StringRef block, StringRef what,
      llvm::function_ref<llvm::Error(const std::string &, StringRef)> fn) const;

  StringRef contents;
  StringRef fileName;
  /// Bytes before the footer: blocks live there.
  uint64_t blockArea = 0;
};

llvm::Error TableParser::decodeHandle(StringRef &in, BlockHandle &handle,
                                      StringRef what) const {
  if (!consumeVarint64(in, handle.offset) || !consumeVarint64(in, handle.size))
    return error("corrupt index: bad block handle for the {0}", what);
  // offset + size + trailer <= blockArea, without overflow.
  if (handle.offset > blockArea ||
      handle.size > blockArea - handle.offset ||
      blockArea - handle.offset - handle.size < kBlockTrailerSize)
    return error("corrupt index: the {0} at offset {1} of {2} bytes lies "
                 "outside the file ({3} bytes)",
                 what, handle.offset, handle.size, contents.size());
  return llvm::Error::success();
}

llvm::Error TableParser::readBlock(const BlockHandle &handle, StringRef what,
                                   std::string &storage,
                                   StringRef &block) const {
  StringRef raw = contents.substr(handle.offset, handle.size);
  const char *trailer = contents.data() + handle.offset + handle.size;
  uint32_t stored = unmaskCrc32c(loadFixed32(trailer + 1));
  uint32_t actual = extendCrc32c(0, raw.data(), raw.size() + 1);
  if (stored != actual)
    return error("checksum mismatch in the {0} at offset {1} (stored "
                 "{2:x8}, computed {3:x8})",
                 what, handle.offset, stored, actual);
  switch (trailer[0]) {
  case kNoCompression:
    block = raw;
    return llvm::Error::success();
  case kSnappyCompression: {
    // Validation walks the data without writing it, so the length it
    // vouches for is the real output size.
    size_t length = 0;
    if (!snappy::IsValidCompressedBuffer(raw.data(), raw.size()) ||
        !snappy::GetUncompressedLength(raw.data(), raw.size(), &length))
      return error("corrupt Snappy data in the {0} at offset {1}", what,
                   handle.offset);
    storage.resize(length);
    if (!snappy::RawUncompress(raw.data(), raw.size(), storage.data()))
      return error("corrupt Snappy data in the {0} at offset {1}", what,
                   handle.offset);
    block = storage;
    return llvm::Error::success();
  }
  default:
    return error("unknown compression type {0} of the {1} at offset {2}",
                 static_cast<int>(static_cast<unsigned char>(trailer[0])),
                 what, handle.offset);
  }
}

llvm::Error TableParser::forEachEntry(
    StringRef block, StringRef what,
    llvm::function_ref<llvm::Error(const std::string &, StringRef)> fn) const {
  if (block.size() < 4)
    return error("corrupt {0}: {1} bytes cannot hold its restart count", what,
                 block.size());
  uint32_t numRestarts = loadFixed32(block.data() + block.size() - 4);
  if (numRestarts > (block.size() - 4) / 4)
    return error("corrupt {0}: {1} restart points do not fit in {2} bytes",
                 what, numRestarts, block.size());
  size_t restartsAt = block.size() - 4 - size_t(numRestarts) * 4;
  std::vector<uint32_t> restarts(numRestarts);
  for (uint32_t i = 0; i < numRestarts; ++i)
    restarts[i] = loadFixed32(block.data() + restartsAt + 4 * i);

  StringRef data = block.take_front(restartsAt);
  if (numRestarts == 0 && !data.empty())
    return error("corrupt {0}: entries but no restart points", what);
  StringRef rest = data;
  std::string key;
  size_t nextRestart = 0;
  while (!rest.empty()) {
    size_t entryOffset = data.size() - rest.size();
    uint32_t shared, unshared, valueSize;
    if (!consumeVarint32(rest, shared) || !consumeVarint32(rest, unshared) ||
        !consumeVarint32(rest, valueSize) ||
        uint64_t(unshared) + valueSize > rest.size() || shared > key.size())
      return error("corrupt {0}: bad entry at offset {1}", what, entryOffset);
    // A restart point must start an entry that stores its whole key.
    bool isRestart =
        nextRestart < restarts.size() && restarts[nextRestart] == entryOffset;
    if (nextRestart < restarts.size() && restarts[nextRestart] < entryOffset)
      return error("corrupt {0}: restart point {1} is not at an entry", what,
                   restarts[nextRestart]);
    if (isRestart) {
      if (shared != 0)
        return error("corrupt {0}: the entry at restart point {1} shares "
                     "key bytes",
                     what, entryOffset);
      ++nextRestart;
    }
    key.resize(shared);
    key.append(rest.data(), unshared);
    StringRef value = rest.substr(unshared, valueSize);
    rest = rest.drop_front(uint64_t(unshared) + valueSize);
    if (llvm::Error err = fn(key, value))
      return err;
  }
  // Every restart point names an entry (an empty block has restart 0).
  if (nextRestart < restarts.size() &&
      !(data.empty() && restarts.size() == 1 && restarts[0] == 0))
    return error("corrupt {0}: restart point {1} is not at an entry", what,
                 restarts[nextRestart]);
  return llvm::Error::success();
}

llvm::Error TableParser::parse(std::vector<TableReader::Entry> &entries) {
  if (contents.size() < kTableFooterSize)
    return error("truncated table: {0} bytes, less than the {1}-byte footer",
                 contents.size(), kTableFooterSize);
  blockArea = contents.size() - kTableFooterSize;
  StringRef footer = contents.drop_front(blockArea);
  uint64_t magic = uint64_t(loadFixed32(footer.data() + 40)) |
                   uint64_t(loadFixed32(footer.data() + 44)) << 32;
  if (magic != kTableMagicNumber)
    return error("not a TensorFlow table (bad footer magic {0:x16}); the "
                 "file may be truncated or not an index file",
                 magic);
  StringRef handles = footer.take_front(2 * kMaxHandleSize);
  BlockHandle metaindexHandle, indexHandle;
  if (llvm::Error err =
          decodeHandle(handles, metaindexHandle, "metaindex block"))
    return err;
  if (llvm::Error err = decodeHandle(handles, indexHandle, "index block"))
    return err;

  std::string indexStorage;
  StringRef indexBlock;
  if (llvm::Error err =
          readBlock(indexHandle, "index block", indexStorage, indexBlock))
    return err;

  std::string previousIndexKey;
  bool haveIndexKey = false;
  return forEachEntry(
      indexBlock, "index block",
      [&](const std::string &indexKey, StringRef handleBytes) -> llvm::Error {
        if (haveIndexKey && indexKey <= previousIndexKey)
          return error("corrupt index block: keys out of order ('{0}' after "
                       "'{1}')",
                       printableKey(indexKey), printableKey(previousIndexKey));
        previousIndexKey = indexKey;
        haveIndexKey = true;
        BlockHandle handle;
        if (llvm::Error err = decodeHandle(handleBytes, handle, "data block"))
          return err;
        std::string storage;
        StringRef block;
        if (llvm::Error err = readBlock(handle, "data block", storage, block))
          return err;
        std::string what =
            llvm::formatv("data block at offset {0}", handle.offset).str();
        return forEachEntry(
            block, what,
            [&](const std::string &key, StringRef value) -> llvm::Error {
              if (!entries.empty() && key <= entries.back().first)
                return error("keys out of order: '{0}' after '{1}'",
                             printableKey(key),
                             printableKey(entries.back().first));
              if (key > indexKey)
                return error("keys out of order: '{0}' is past its index "
                             "key '{1}'",
                             printableKey(key), printableKey(indexKey));
              entries.emplace_back(key, value.str());
              return llvm::Error::success();
            });
      });
}

} // namespace

llvm::Expected<TableReader> TableReader::parse(StringRef contents,
                                               StringRef fileName) {
  TableReader reader;
  if (llvm::Error err =
          TableParser(contents, fileName).parse(reader.entries_))
    return std::move(err);
  return reader;
}

llvm::Expected<TableReader> TableReader::open(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s",
                                   path.str().c_str(),
                                   buffer.getError().message().c_str());
  return parse((*buffer)->getBuffer(), path);
}

const std::string *TableReader::lookup(StringRef key) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), key,
      [](const Entry &e, StringRef k) { return StringRef(e.first) < k; });
  if (it == entries_.end() || it->first != key)
    return nullptr;
  return &it->second;
}
