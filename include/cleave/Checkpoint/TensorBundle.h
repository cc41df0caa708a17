//===- TensorBundle.h - TensorFlow V2 checkpoints ---------------*- C++ -*-===//
//
// Reads and writes TensorFlow's tensor bundles, the V2 checkpoint format
// (tensorflow/core/util/tensor_bundle), byte for byte:
//
//   <prefix>.index                   a table (Table.h): key "" holds a
//                                    BundleHeaderProto, every other key a
//                                    tensor's BundleEntryProto
//   <prefix>.data-00000-of-00001     the tensors' bytes, in the order added
//
// A numeric tensor is stored as its raw little-endian elements. A string
// tensor is stored as the varint64 length of each element, the masked
// CRC-32C of those lengths (each taken as a uint32 in memory), then the
// elements' bytes; its entry's checksum covers the lengths (as uint32), the
// stored length checksum and the bytes. A partitioned tensor has an entry
// that lists its slices (dtype, full shape, slices; no data) and one entry
// per slice under a binary key (encodeTensorNameSlice).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_TENSORBUNDLE_H
#define CLEAVE_CHECKPOINT_TENSORBUNDLE_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cleave::checkpoint {

/// A rectangular part of a tensor: per dimension a start and a length, the
/// length -1 (with start 0) meaning the whole dimension, as TensorFlow's
/// TensorSlice.
struct TensorSliceSpec {
  struct Extent {
    int64_t start = 0;
    int64_t length = -1;
    bool isFull() const { return start == 0 && length == -1; }
    bool operator==(const Extent &o) const {
      return start == o.start && length == o.length;
    }
  };
  std::vector<Extent> extents;

  /// Parses TensorFlow's slice syntax: "start,length" or "-" per dimension,
  /// separated by ':' (e.g. "0,2:-"). "" is the slice of a scalar.
  static llvm::Expected<TensorSliceSpec> parse(llvm::StringRef text);
  /// The whole of a tensor of rank `rank`.
  static TensorSliceSpec full(size_t rank);
  /// The slice syntax back ("0,2:-").
  std::string toString() const;
  /// True when every extent is full.
  bool isFull() const;
  /// The shape of this slice of a tensor of shape `fullShape`, or an error
  /// when the ranks differ or an extent leaves the shape.
  llvm::Expected<std::vector<int64_t>>
  sliceShape(llvm::ArrayRef<int64_t> fullShape) const;
  bool operator==(const TensorSliceSpec &o) const {
    return extents == o.extents;
  }
};

/// A saver's shape_and_slice spec, "<full shape> <slice>" (e.g. "10 4
/// 0,5:-"): the full tensor's shape and the slice stored.
llvm::Expected<std::pair<std::vector<int64_t>, TensorSliceSpec>>
parseShapeAndSlice(llvm::StringRef text);

/// The part `slice` of `full` (an error when the slice leaves its shape).
llvm::Expected<cleave::Tensor> extractSlice(const cleave::Tensor &full,
                                            const TensorSliceSpec &slice);

/// The key under which a slice of tensor `name` is stored: TensorFlow's
/// EncodeTensorNameSlice (OrderedCode of 0, the name, the rank and each
/// extent's start and length).
std::string encodeTensorNameSlice(llvm::StringRef name,
                                  const TensorSliceSpec &slice);

/// Inverse of encodeTensorNameSlice; std::nullopt for keys that are not
/// slice keys (tensor names never start with a zero byte).
std::optional<std::pair<std::string, TensorSliceSpec>>
decodeTensorNameSlice(llvm::StringRef key);

/// The metadata of one stored tensor (a BundleEntryProto).
struct BundleEntry {
  /// TensorFlow DataType enum value.
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  int32_t shardId = 0;
  int64_t offset = 0;
  int64_t size = 0;
  /// The masked CRC-32C of the stored bytes, as on disk.
  uint32_t maskedCrc32c = 0;
  /// Non-empty for a partitioned tensor: its stored slices.
  std::vector<TensorSliceSpec> slices;
};

/// `<prefix>.index`.
std::string indexFileName(llvm::StringRef prefix);
/// `<prefix>.data-<shard>-of-<numShards>`, both numbers five digits wide.
std::string dataFileName(llvm::StringRef prefix, int shard, int numShards);

/// Reads a bundle. The index is read and checked whole on open; data shards
/// are mapped when a tensor in them is first read. Every error names the
/// file and, where there is one, the tensor.
class BundleReader {
public:
  /// Opens `<prefix>.index`: checks the table, the header (shard count,
  /// version) and that every entry parses.
  static llvm::Expected<BundleReader> open(llvm::StringRef prefix);

  BundleReader(BundleReader &&) noexcept;
  BundleReader &operator=(BundleReader &&) noexcept;
  ~BundleReader();

  /// Names of the stored tensors in key order: whole tensors and
  /// partitioned ones, not the keys of their slices.
  std::vector<std::string> keys() const;
  /// Every key of the index except the header's, slice keys included.
  std::vector<std::string> allKeys() const;
  /// The entry of `key`, or nullptr when there is none.
  const BundleEntry *lookup(llvm::StringRef key) const;
  /// Reads tensor `key`; a partitioned tensor is assembled from its slices,
  /// which must cover it exactly once. Checks the entry's size against its
  /// dtype and shape and against the shard, and its checksum.
  llvm::Expected<cleave::Tensor> read(llvm::StringRef key);
  /// Reads one stored slice of partitioned tensor `key` (one of
  /// lookup(key)->slices).
  llvm::Expected<cleave::Tensor> readSlice(llvm::StringRef key,
                                           const TensorSliceSpec &slice);

  int numShards() const;
  /// True when the data are big-endian (BundleHeaderProto.endianness);
  /// numbers are swapped on read.
  bool isBigEndian() const;
  llvm::StringRef prefix() const;

private:
  struct Impl;
  explicit BundleReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Options of BundleWriter.
struct BundleWriterOptions {
  /// Compress index blocks with Snappy (where that saves 1/8), as
  /// TensorFlow 1.0 and 1.1 did; later releases write them uncompressed and
  /// read both.
  bool snappyIndex = false;
};

/// Writes a one-shard bundle. Data go to a temporary file beside the final
/// one; finish() fsyncs it and renames it into place, then writes the index
/// the same way, so a crash never leaves a partial checkpoint under the
/// final names (the index, written last, is what makes it visible).
/// Destroying an unfinished writer removes its temporary files.
class BundleWriter {
public:
  explicit BundleWriter(std::string prefix, BundleWriterOptions options = {});
  ~BundleWriter();
  BundleWriter(BundleWriter &&) noexcept;
  BundleWriter &operator=(BundleWriter &&) noexcept;

  /// Appends tensor `key`. Keys must be unique and not empty; the data file
  /// holds tensors in the order they are added.
  llvm::Error add(llvm::StringRef key, const cleave::Tensor &tensor);
  /// Appends one slice of partitioned tensor `fullName` of shape
  /// `fullShape`: records the slice in the full tensor's entry and stores
  /// `tensor` (of the slice's shape) under the slice's key. A slice that
  /// covers the whole tensor is stored as the tensor itself, as TensorFlow
  /// does.
  llvm::Error addSlice(llvm::StringRef fullName,
                       llvm::ArrayRef<int64_t> fullShape,
                       const TensorSliceSpec &slice,
                       const cleave::Tensor &tensor);
  /// Writes the index and moves both files into place.
  llvm::Error finish();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Merges bundles written separately (one per device or worker) into one
/// bundle at `mergedPrefix`, as TensorFlow's MergeV2Checkpoints: data files
/// are renamed to `mergedPrefix.data-i-of-N`, entries get their new shard
/// ids, the slices of a tensor partitioned across the inputs are combined,
/// and the input index files are deleted.
llvm::Error mergeBundles(llvm::ArrayRef<std::string> prefixes,
                         llvm::StringRef mergedPrefix);

/// Writes `contents` to `path` atomically: a temporary file in the same
/// directory, fsync, rename, fsync of the directory.
llvm::Error writeFileAtomically(llvm::StringRef path,
                                llvm::StringRef contents);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_TENSORBUNDLE_H
