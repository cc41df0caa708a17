//===- Table.h - LevelDB-format sorted tables (SSTables) --------*- C++ -*-===//
//
// The immutable string -> string table that TensorFlow uses for a
// checkpoint's `.index` file (tensorflow/core/lib/io/table*.cc, LevelDB's
// format). A file is a run of blocks, each followed by a one-byte
// compression type (0 none, 1 Snappy) and the masked CRC-32C of the block
// and that byte; then a metaindex block (empty), an index block mapping a
// separator key per data block to that block's (offset, size), and a
// 48-byte footer: the two block handles as varints, zero padding to 40
// bytes, and the magic 0xdb4775248b80fb57 as two little-endian 32-bit words.
//
// Inside a block, entries are (shared key bytes, unshared key bytes, value
// size) as varints, the unshared key suffix and the value; every
// `restartInterval` entries one stores its whole key (a restart point), and
// the block ends with the restart offsets and their count as fixed32.
//
// TableWriter reproduces TensorFlow's TableBuilder byte for byte (block
// cut-off, separator and successor keys, the 1/8 rule for compression).
// TableReader reads a whole table and checks every size, offset, varint,
// checksum and the key order before it trusts or allocates anything.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_TABLE_H
#define CLEAVE_CHECKPOINT_TABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cleave::checkpoint {

/// The last 8 bytes of every table file (little-endian on disk).
constexpr uint64_t kTableMagicNumber = 0xdb4775248b80fb57ull;
/// Size of a table's footer.
constexpr size_t kTableFooterSize = 48;

/// How TableWriter cuts and stores blocks; the defaults are TensorFlow's
/// (tensorflow/core/lib/io/table_options.h) except for compression, which
/// BundleWriter turns off as TensorFlow 1.2 and later do.
struct TableOptions {
  /// A data block is closed once its estimated size reaches this many bytes.
  size_t blockSize = 262144;
  /// Keys between restart points in data blocks (the index block uses 1).
  int restartInterval = 16;
  /// Compress each block with Snappy where that saves at least 1/8.
  bool snappy = false;
};

/// Builds a table in memory, byte-compatible with TensorFlow's TableBuilder.
class TableWriter {
public:
  explicit TableWriter(TableOptions options = {});
  ~TableWriter();
  TableWriter(TableWriter &&) noexcept;
  TableWriter &operator=(TableWriter &&) noexcept;

  /// Appends an entry. Keys must be strictly increasing (bytewise, as
  /// unsigned bytes); anything else is an error and leaves the table as it
  /// was.
  llvm::Error add(llvm::StringRef key, llvm::StringRef value);

  /// Writes the last data block, the metaindex and index blocks and the
  /// footer, and returns the whole file. The writer is empty afterwards.
  std::string finish();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// A whole table, read and checked.
class TableReader {
public:
  using Entry = std::pair<std::string, std::string>;

  /// Parses the bytes of a table file. `fileName` names the file in error
  /// messages. Fails, never crashes, on truncated or corrupt input: a bad
  /// footer or magic, a block handle outside the file, a checksum mismatch,
  /// an unknown compression type, bad Snappy data, malformed entries or
  /// restart points, and keys that are not strictly increasing.
  static llvm::Expected<TableReader> parse(llvm::StringRef contents,
                                           llvm::StringRef fileName);

  /// Reads and parses the file at `path`.
  static llvm::Expected<TableReader> open(llvm::StringRef path);

  /// All entries in key order.
  llvm::ArrayRef<Entry> entries() const { return entries_; }

  /// The value stored under `key`, or nullptr.
  const std::string *lookup(llvm::StringRef key) const;

private:
  std::vector<Entry> entries_;
};

/// Appends `value` as a little-endian base-128 varint (at most 10 bytes).
void appendVarint64(std::string &out, uint64_t value);

/// Reads a varint from the front of `in` and drops it from `in`; false,
/// leaving `in` as it was, when it is truncated or longer than 10 bytes.
bool consumeVarint64(llvm::StringRef &in, uint64_t &value);

/// `key` with bytes outside printable ASCII written as \xx escapes, for
/// messages (slice keys of partitioned tensors are binary).
std::string printableKey(llvm::StringRef key);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_TABLE_H
