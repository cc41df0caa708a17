//===- TensorBundle.cpp - TensorFlow V2 checkpoints -----------------------===//
//
// Reader: the index is parsed whole on open; a tensor's bytes are checked
// (size against dtype and shape, range against the shard, checksum) before
// a tensor is allocated for them. Writer: the same bytes TensorFlow's
// BundleWriter produces, through temporary files renamed into place.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/TensorBundle.h"

#include "cleave/Checkpoint/Crc32c.h"
#include "cleave/Checkpoint/Table.h"
#include "cleave/tf/tensor_bundle.pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>
#include <unordered_map>

using namespace cleave::checkpoint;
using cleave::Tensor;
using llvm::StringRef;

/// Version of the bundle format this code reads and writes
/// (kTensorBundleVersion); bundles that demand a newer consumer are refused.
static constexpr int kBundleVersion = 1;
static constexpr int kBundleMinConsumer = 0;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

static std::string quoted(StringRef key) {
  return "'" + printableKey(key) + "'";
}

/// True for dtypes whose tensors Cleave can hold and store.
static bool isSupportedDtype(int32_t dtype) {
  return dtype == cleave::kString ||
         (dtype != cleave::kResource && cleave::dtypeSize(dtype) != 0);
}

/// The element count of `shape`, or nullopt on a negative dimension or
/// overflow.
static std::optional<int64_t>
checkedNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  }
  return n;
}

static std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  return cleave::shapeString(shape);
}

static void appendFixed32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

static uint32_t loadFixed32(const char *p, bool bigEndian) {
  const auto *u = reinterpret_cast<const unsigned char *>(p);
  if (bigEndian)
    return uint32_t(u[3]) | uint32_t(u[2]) << 8 | uint32_t(u[1]) << 16 |
           uint32_t(u[0]) << 24;
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 |
         uint32_t(u[3]) << 24;
}

/// Extends `crc` with a string length the way TensorFlow checksums it: as
/// the uint32 (or, past 4 GiB, uint64) in the writer's byte order.
static uint32_t extendWithLength(uint32_t crc, uint64_t length,
                                 bool bigEndian) {
  unsigned char bytes[8];
  size_t width = length <= UINT32_MAX ? 4 : 8;
  for (size_t i = 0; i < width; ++i) {
    size_t shift = 8 * (bigEndian ? width - 1 - i : i);
    bytes[i] = static_cast<unsigned char>((length >> shift) & 0xff);
  }
  return extendCrc32c(crc, bytes, width);
}

//===----------------------------------------------------------------------===//
// OrderedCode (the encoding of slice keys)
//===----------------------------------------------------------------------===//

/// Unsigned: a length byte, then the big-endian bytes without leading zeros.
static void writeNumIncreasing(std::string &out, uint64_t value) {
  unsigned char bytes[8];
  int len = 0;
  for (; value > 0; value >>= 8)
    bytes[len++] = static_cast<unsigned char>(value & 0xff);
  out.push_back(static_cast<char>(len));
  while (len > 0)
    out.push_back(static_cast<char>(bytes[--len]));
}

static bool readNumIncreasing(StringRef &in, uint64_t &value) {
  if (in.empty())
    return false;
  size_t len = static_cast<unsigned char>(in[0]);
  if (len > 8 || in.size() < len + 1)
    return false;
  value = 0;
  for (size_t i = 1; i <= len; ++i)
    value = (value << 8) | static_cast<unsigned char>(in[i]);
  in = in.drop_front(len + 1);
  return true;
}

/// A string: 0x00 written as 00 ff, 0xff as ff 00, then the separator 00 01.
static void writeOrderedString(std::string &out, StringRef s) {
  for (char c : s) {
    out.push_back(c);
    if (c == '\0')
      out.push_back('\xff');
    else if (c == '\xff')
      out.push_back('\0');
  }
  out.push_back('\0');
  out.push_back('\1');
}

static bool readOrderedString(StringRef &in, std::string &s) {
  s.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c != '\0' && c != '\xff') {
      s.push_back(c);
      continue;
    }
    if (i + 1 >= in.size())
      return false;
    char next = in[++i];
    if (c == '\0' && next == '\1') {
      in = in.drop_front(i + 1);
      return true;
    }
    if (c == '\0' && next == '\xff')
      s.push_back('\0');
    else if (c == '\xff' && next == '\0')
      s.push_back('\xff');
    else
      return false;
  }
  return false;
}

/// Header bits of the signed encoding of each length (1..10 bytes): the
/// sign bit and length-1 more one bits, over the first two bytes.
static constexpr unsigned char kSignedHeader[11][2] = {
    {0, 0},    {0x80, 0}, {0xc0, 0}, {0xe0, 0},    {0xf0, 0},   {0xf8, 0},
    {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};

/// Signed: the sign bit (1 for >= 0), as many copies of it as bytes follow
/// the first, a delimiter bit, then the two's-complement value, big-endian;
/// n bytes hold values in [-2^(7n-1), 2^(7n-1)).
static void writeSignedNumIncreasing(std::string &out, int64_t value) {
  uint64_t magnitude = value < 0 ? ~static_cast<uint64_t>(value)
                                 : static_cast<uint64_t>(value);
  int bits = 0;
  for (uint64_t m = magnitude; m; m >>= 1)
    ++bits;
  int len = bits / 7 + 1;
  unsigned char buf[10];
  unsigned char sign = value < 0 ? 0xff : 0x00;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i)
    buf[2 + i] = static_cast<unsigned char>(
        (static_cast<uint64_t>(value) >> (56 - 8 * i)) & 0xff);
  unsigned char *begin = buf + 10 - len;
  begin[0] ^= kSignedHeader[len][0];
  if (len > 1)
    begin[1] ^= kSignedHeader[len][1];
  out.append(reinterpret_cast<const char *>(begin), len);
}

static bool readSignedNumIncreasing(StringRef &in, int64_t &value) {
  if (in.empty())
    return false;
  unsigned char flip = (static_cast<unsigned char>(in[0]) & 0x80) ? 0 : 0xff;
  // The length is the number of leading one bits (of the non-negative form).
  size_t len = 0;
  for (size_t bit = 0; bit < 16; ++bit) {
    size_t byte = bit / 8;
    if (byte >= in.size())
      return false;
    unsigned char b = static_cast<unsigned char>(in[byte]) ^ flip;
    if (!(b & (0x80 >> (bit % 8))))
      break;
    ++len;
  }
  if (len == 0 || len > 10 || in.size() < len)
    return false;
  uint64_t x = 0;
  for (size_t i = len > 8 ? len - 8 : 0; i < len; ++i)
    x = (x << 8) | static_cast<unsigned char>(in[i]);
  // Undo the header bits that fall inside the last eight bytes.
  if (len <= 8)
    x ^= uint64_t(kSignedHeader[len][0]) << (8 * (len - 1));
  else if (len == 9)
    x ^= uint64_t(kSignedHeader[9][1]) << 56;
  if (len < 8 && flip)
    x |= ~uint64_t(0) << (8 * len); // sign-extend
  value = static_cast<int64_t>(x);
  // Accept only the canonical encoding.
  std::string check;
  writeSignedNumIncreasing(check, value);
  if (StringRef(check) != in.take_front(len))
    return false;
  in = in.drop_front(len);
  return true;
}

//===----------------------------------------------------------------------===//
// Files written through a temporary name
//===----------------------------------------------------------------------===//

static llvm::Error ioError(StringRef path, const llvm::Twine &what, int err) {
  return llvm::createStringError(
      std::error_code(err, std::generic_category()), "%s: %s: %s",
      path.str().c_str(), what.str().c_str(), std::strerror(err));
}

/// fsyncs a directory so that a rename in it is durable (best effort: some
/// file systems refuse fsync on directories).
static void syncDirectory(StringRef path) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  (void)::fsync(fd);
  ::close(fd);
}

namespace {
/// A file written under a temporary name beside `finalPath` and renamed to
/// it by commit(); removed if never committed.
class AtomicFile {
public:
  static llvm::Expected<AtomicFile> create(StringRef finalPath) {
    AtomicFile file;
    file.finalPath = finalPath.str();
    llvm::SmallString<256> temp;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(
            finalPath + ".tempstate%%%%%%%%%%%%%%%%", file.fd, temp))
      return ioError(finalPath, "cannot create a temporary file",
                     ec.value());
    file.tempPath = temp.str().str();
    return std::move(file);
  }
  AtomicFile() = default;
  AtomicFile(AtomicFile &&o) noexcept { *this = std::move(o); }
  AtomicFile &operator=(AtomicFile &&o) noexcept {
    discard();
    fd = o.fd;
    o.fd = -1;
    finalPath = std::move(o.finalPath);
    tempPath = std::move(o.tempPath);
    pending = std::move(o.pending);
    return *this;
  }
  ~AtomicFile() { discard(); }

  llvm::Error append(StringRef bytes) {
    pending.append(bytes.data(), bytes.size());
    if (pending.size() >= (size_t(1) << 20))
      return flush();
    return llvm::Error::success();
  }

  /// Writes what is buffered, fsyncs, closes and renames into place.
  llvm::Error commit() {
    if (llvm::Error err = flush())
      return err;
    if (::fsync(fd) != 0)
      return ioError(tempPath, "fsync failed", errno);
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0) {
      int err = errno;
      llvm::sys::fs::remove(tempPath);
      return ioError(tempPath, "close failed", err);
    }
    if (::rename(tempPath.c_str(), finalPath.c_str()) != 0) {
      int err = errno;
      llvm::sys::fs::remove(tempPath);
      return ioError(finalPath, "cannot rename " + tempPath + " to it", err);
    }
    syncDirectory(finalPath);
    return llvm::Error::success();
  }

  /// Closes and removes the temporary file.
  void discard() {
    if (fd < 0)
      return;
    ::close(fd);
    fd = -1;
    llvm::sys::fs::remove(tempPath);
  }

private:
  llvm::Error flush() {
    const char *p = pending.data();
    size_t left = pending.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return ioError(tempPath, "write failed", n < 0 ? errno : EIO);
      p += n;
      left -= static_cast<size_t>(n);
    }
    pending.clear();
    return llvm::Error::success();
  }

  int fd = -1;
  std::string finalPath;
  std::string tempPath;
  std::string pending;
};
} // namespace

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

/// Converts and checks an index entry (shape, sizes, slices).
static llvm::Error convertEntry(const tensorflow::BundleEntryProto &proto,
                                BundleEntry &entry) {
  entry.dtype = proto.dtype();
  if (proto.shape().unknown_rank())
    return makeError("its shape has unknown rank");
  for (const auto &dim : proto.shape().dim()) {
    if (dim.size() < 0)
      return makeError("invalid shape (dimension " +
                       llvm::Twine(dim.size()) + ")");
    entry.shape.push_back(dim.size());
  }
  if (!checkedNumElements(entry.shape))
    return makeError("its shape " + shapeText(entry.shape) +
                     " has too many elements");
  entry.shardId = proto.shard_id();
  entry.offset = proto.offset();
  entry.size = proto.size();
  if (entry.offset < 0 || entry.size < 0 || entry.shardId < 0)
    return makeError("negative shard, offset or size");
  entry.maskedCrc32c = proto.crc32c();
  for (const auto &sliceProto : proto.slices()) {
    TensorSliceSpec slice;
    for (const auto &e : sliceProto.extent()) {
      TensorSliceSpec::Extent extent;
      extent.start = e.start();
      extent.length = e.has_length_case() ==
                              tensorflow::TensorSliceProto::Extent::kLength
                          ? e.length()
                          : -1;
      if (extent.start < 0 || (extent.length < 0 && !extent.isFull()))
        return makeError("invalid slice extent (start " +
                         llvm::Twine(extent.start) + ", length " +
                         llvm::Twine(extent.length) + ")");
      slice.extents.push_back(extent);
    }
    if (llvm::Error err = slice.sliceShape(entry.shape).takeError())
      return err;
    entry.slices.push_back(std::move(slice));
  }
  return llvm::Error::success();
}

static void toProto(const TensorSliceSpec &slice,
                    tensorflow::TensorSliceProto &proto) {
  for (const auto &e : slice.extents) {
    auto *extent = proto.add_extent();
    if (!e.isFull()) {
      extent->set_start(e.start);
      extent->set_length(e.length);
    }
  }
}

static void setShape(llvm::ArrayRef<int64_t> shape,
                     tensorflow::TensorShapeProto &proto) {
  proto.Clear();
  for (int64_t d : shape)
    proto.add_dim()->set_size(d);
}

static std::string
headerBytes(int numShards, tensorflow::BundleHeaderProto::Endianness endianness,
            const tensorflow::VersionDef &version) {
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(numShards);
  header.set_endianness(endianness);
  *header.mutable_version() = version;
  return header.SerializeAsString();
}

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

llvm::Expected<TensorSliceSpec> TensorSliceSpec::parse(StringRef text) {
  TensorSliceSpec spec;
  if (text.empty())
    return spec;
  llvm::SmallVector<StringRef> parts;
  text.split(parts, ':');
  for (StringRef part : parts) {
    Extent extent;
    if (part != "-") {
      auto [startText, lengthText] = part.split(',');
      if (startText.getAsInteger(10, extent.start) ||
          lengthText.getAsInteger(10, extent.length) || extent.start < 0 ||
          extent.length < 0)
        return makeError("invalid tensor slice '" + text +
                         "': each dimension is '-' or 'start,length' with "
                         "start >= 0 and length >= 0");
    }
    spec.extents.push_back(extent);
  }
  return spec;
}

TensorSliceSpec TensorSliceSpec::full(size_t rank) {
  TensorSliceSpec spec;
  spec.extents.resize(rank);
  return spec;
}

std::string TensorSliceSpec::toString() const {
  std::string out;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (i)
      out += ':';
    if (extents[i].isFull())
      out += '-';
    else
      out += std::to_string(extents[i].start) + "," +
             std::to_string(extents[i].length);
  }
  return out;
}

bool TensorSliceSpec::isFull() const {
  return llvm::all_of(extents, [](const Extent &e) { return e.isFull(); });
}

llvm::Expected<std::vector<int64_t>>
TensorSliceSpec::sliceShape(llvm::ArrayRef<int64_t> fullShape) const {
  if (extents.size() != fullShape.size())
    return makeError("slice '" + toString() + "' has rank " +
                     llvm::Twine(extents.size()) + " but the tensor " +
                     shapeText(fullShape) + " has rank " +
                     llvm::Twine(fullShape.size()));
  std::vector<int64_t> shape;
  for (size_t d = 0; d < extents.size(); ++d) {
    const Extent &e = extents[d];
    if (e.isFull()) {
      shape.push_back(fullShape[d]);
      continue;
    }
    if (e.start < 0 || e.length < 0 || e.start > fullShape[d] ||
        e.length > fullShape[d] - e.start)
      return makeError("slice '" + toString() + "' leaves the shape " +
                       shapeText(fullShape) + " in dimension " +
                       llvm::Twine(d));
    shape.push_back(e.length);
  }
  return shape;
}

llvm::Expected<std::pair<std::vector<int64_t>, TensorSliceSpec>>
cleave::checkpoint::parseShapeAndSlice(StringRef text) {
  llvm::SmallVector<StringRef> parts;
  text.split(parts, ' ', -1, /*KeepEmpty=*/false);
  if (parts.empty())
    return llvm::createStringError("empty shape_and_slice");
  std::vector<int64_t> shape;
  for (StringRef dim : llvm::ArrayRef<StringRef>(parts).drop_back()) {
    int64_t size;
    if (dim.getAsInteger(10, size) || size < 0)
      return llvm::createStringError("bad dimension '%s' in shape_and_slice "
                                     "'%s'",
                                     dim.str().c_str(), text.str().c_str());
    shape.push_back(size);
  }
  auto slice = TensorSliceSpec::parse(parts.back());
  if (!slice)
    return slice.takeError();
  return std::make_pair(std::move(shape), std::move(*slice));
}

std::string cleave::checkpoint::encodeTensorNameSlice(
    StringRef name, const TensorSliceSpec &slice) {
  std::string key;
  writeNumIncreasing(key, 0);
  writeOrderedString(key, name);
  writeNumIncreasing(key, slice.extents.size());
  for (const auto &e : slice.extents) {
    writeSignedNumIncreasing(key, e.start);
    writeSignedNumIncreasing(key, e.length);
  }
  return key;
}

std::optional<std::pair<std::string, TensorSliceSpec>>
cleave::checkpoint::decodeTensorNameSlice(StringRef key) {
  uint64_t zero, rank;
  std::string name;
  if (!readNumIncreasing(key, zero) || zero != 0 ||
      !readOrderedString(key, name) || !readNumIncreasing(key, rank) ||
      rank == 0 || rank > key.size() / 2)
    return std::nullopt;
  TensorSliceSpec slice;
  for (uint64_t d = 0; d < rank; ++d) {
    TensorSliceSpec::Extent extent;
    if (!readSignedNumIncreasing(key, extent.start) ||
        !readSignedNumIncreasing(key, extent.length))
      return std::nullopt;
    if (extent.length < 0)
      extent = TensorSliceSpec::Extent();
    slice.extents.push_back(extent);
  }
  if (!key.empty())
    return std::nullopt;
  return std::make_pair(std::move(name), std::move(slice));
}

std::string cleave::checkpoint::indexFileName(StringRef prefix) {
  return (prefix + ".index").str();
}

std::string cleave::checkpoint::dataFileName(StringRef prefix, int shard,
                                             int numShards) {
  char suffix[48];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard,
                numShards);
  return (prefix + suffix).str();
}

//===----------------------------------------------------------------------===//
// BundleReader
//===----------------------------------------------------------------------===//

struct BundleReader::Impl {
  std::string prefix;
  std::string indexPath;
  int numShards = 0;
  bool bigEndian = false;
  std::map<std::string, BundleEntry> entries;
  std::unordered_map<int, std::unique_ptr<llvm::MemoryBuffer>> shards;

  /// "<index>: tensor 'key': message".
  llvm::Error entryError(StringRef key, const llvm::Twine &message) const {
    return makeError(indexPath + ": tensor " + quoted(key) + ": " + message);
  }

  llvm::Expected<const llvm::MemoryBuffer *> shard(StringRef key,
                                                   int shardId) {
    auto it = shards.find(shardId);
    if (it != shards.end())
      return it->second.get();
    std::string path = dataFileName(prefix, shardId, numShards);
    auto buffer = llvm::MemoryBuffer::getFile(
        path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer)
      return makeError(path + ": cannot open the data shard of tensor " +
                       quoted(key) + ": " + buffer.getError().message());
    const llvm::MemoryBuffer *result = buffer->get();
    shards.emplace(shardId, std::move(*buffer));
    return result;
  }

  /// Reads the bytes of a whole (not partitioned) entry.
  llvm::Expected<Tensor> readEntry(StringRef key, const BundleEntry &entry);
  llvm::Expected<Tensor> readPartitioned(StringRef key,
                                         const BundleEntry &entry);
};

llvm::Expected<BundleReader> BundleReader::open(StringRef prefix) {
  auto impl = std::make_unique<Impl>();
  impl->prefix = prefix.str();
  impl->indexPath = indexFileName(prefix);
  auto table = TableReader::open(impl->indexPath);
  if (!table)
    return table.takeError();
  llvm::ArrayRef<TableReader::Entry> rows = table->entries();
  if (rows.empty() || !rows.front().first.empty())
    return makeError(impl->indexPath +
                     ": not a tensor bundle: no header entry (empty key)");
  tensorflow::BundleHeaderProto header;
  if (!header.ParseFromString(rows.front().second))
    return makeError(impl->indexPath + ": unable to parse the bundle header");
  if (header.num_shards() < 0)
    return makeError(impl->indexPath + ": invalid shard count " +
                     llvm::Twine(header.num_shards()));
  impl->numShards = header.num_shards();
  switch (header.endianness()) {
  case tensorflow::BundleHeaderProto::LITTLE: impl->bigEndian = false; break;
  case tensorflow::BundleHeaderProto::BIG: impl->bigEndian = true; break;
  default:
    return makeError(impl->indexPath + ": unknown endianness " +
                     llvm::Twine(static_cast<int>(header.endianness())));
  }
  const tensorflow::VersionDef &version = header.version();
  if (version.min_consumer() > kBundleVersion)
    return makeError(impl->indexPath + ": the checkpoint needs a reader of "
                     "format version " + llvm::Twine(version.min_consumer()) +
                     " or newer; this one is version " +
                     llvm::Twine(kBundleVersion));
  if (llvm::is_contained(version.bad_consumers(), kBundleVersion))
    return makeError(impl->indexPath + ": the checkpoint disallows readers "
                     "of format version " + llvm::Twine(kBundleVersion));

  for (const TableReader::Entry &row : rows.drop_front()) {
    tensorflow::BundleEntryProto proto;
    if (!proto.ParseFromString(row.second))
      return impl->entryError(row.first, "unable to parse its entry");
    BundleEntry entry;
    if (llvm::Error err = convertEntry(proto, entry))
      return impl->entryError(row.first, llvm::toString(std::move(err)));
    impl->entries.emplace(row.first, std::move(entry));
  }
  return BundleReader(std::move(impl));
}

BundleReader::BundleReader(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
BundleReader::BundleReader(BundleReader &&) noexcept = default;
BundleReader &BundleReader::operator=(BundleReader &&) noexcept = default;
BundleReader::~BundleReader() = default;

std::vector<std::string> BundleReader::keys() const {
  std::vector<std::string> keys;
  for (const auto &[key, entry] : impl->entries)
    if (key.empty() || key[0] != '\0')
      keys.push_back(key);
  return keys;
}

std::vector<std::string> BundleReader::allKeys() const {
  std::vector<std::string> keys;
  for (const auto &[key, entry] : impl->entries)
    keys.push_back(key);
  return keys;
}

const BundleEntry *BundleReader::lookup(StringRef key) const {
  auto it = impl->entries.find(key.str());
  return it == impl->entries.end() ? nullptr : &it->second;
}

int BundleReader::numShards() const { return impl->numShards; }
bool BundleReader::isBigEndian() const { return impl->bigEndian; }
StringRef BundleReader::prefix() const { return impl->prefix; }

llvm::Expected<Tensor> BundleReader::read(StringRef key) {
  const BundleEntry *entry = lookup(key);
  if (!entry)
    return makeError(impl->indexPath + ": tensor " + quoted(key) +
                     " not found in the checkpoint");
  if (!entry->slices.empty())
    return impl->readPartitioned(key, *entry);
  return impl->readEntry(key, *entry);
}

llvm::Expected<Tensor> BundleReader::readSlice(StringRef key,
                                               const TensorSliceSpec &slice) {
  const BundleEntry *entry = lookup(key);
  if (!entry)
    return makeError(impl->indexPath + ": tensor " + quoted(key) +
                     " not found in the checkpoint");
  if (entry->slices.empty() && slice.isFull())
    return impl->readEntry(key, *entry);
  if (!llvm::is_contained(entry->slices, slice))
    return impl->entryError(key, "has no stored slice '" + slice.toString() +
                                     "'");
  std::string sliceKey = encodeTensorNameSlice(key, slice);
  const BundleEntry *sliceEntry = lookup(sliceKey);
  if (!sliceEntry)
    return impl->entryError(key, "the entry of its slice '" +
                                     slice.toString() + "' is missing");
  auto shape = slice.sliceShape(entry->shape);
  if (!shape)
    return impl->entryError(key, llvm::toString(shape.takeError()));
  if (sliceEntry->dtype != entry->dtype || sliceEntry->shape != *shape ||
      !sliceEntry->slices.empty())
    return impl->entryError(
        key, "the entry of its slice '" + slice.toString() + "' is " +
                 cleave::dtypeName(sliceEntry->dtype) + " " +
                 shapeText(sliceEntry->shape) + ", not " +
                 cleave::dtypeName(entry->dtype) + " " + shapeText(*shape));
  auto tensor = impl->readEntry(key, *sliceEntry);
  if (!tensor)
    return tensor.takeError();
  return std::move(*tensor);
}

llvm::Expected<Tensor> BundleReader::Impl::readEntry(StringRef key,
                                                     const BundleEntry &entry) {
  if (!isSupportedDtype(entry.dtype))
    return entryError(key, "dtype " + cleave::dtypeName(entry.dtype) +
                               " is not supported (Cleave's tensors cannot "
                               "hold it)");
  int64_t numElements = *checkedNumElements(entry.shape);
  bool isString = entry.dtype == cleave::kString;
  size_t elementSize = cleave::dtypeSize(entry.dtype);
  if (!isString) {
    int64_t expected;
    if (__builtin_mul_overflow(numElements, int64_t(elementSize), &expected) ||
        expected != entry.size)
      return entryError(key, "stored size " + llvm::Twine(entry.size) +
                                 " bytes disagrees with " +
                                 cleave::dtypeName(entry.dtype) + " " +
                                 shapeText(entry.shape) + " (" +
                                 llvm::Twine(numElements) + " elements of " +
                                 llvm::Twine(elementSize) + " bytes)");
  } else if (numElements > 0 && entry.size < numElements + 4) {
    // One varint byte per length at least, and the length checksum.
    return entryError(key, "stored size " + llvm::Twine(entry.size) +
                               " bytes is too small for " +
                               llvm::Twine(numElements) + " strings");
  }
  if (entry.shardId >= numShards)
    return entryError(key, "shard " + llvm::Twine(entry.shardId) +
                               " does not exist (the bundle has " +
                               llvm::Twine(numShards) + ")");
  auto shardOr = shard(key, entry.shardId);
  if (!shardOr)
    return shardOr.takeError();
  StringRef file = (*shardOr)->getBuffer();
  std::string path = dataFileName(prefix, entry.shardId, numShards);
  auto dataError = [&](const llvm::Twine &message) {
    return makeError(path + ": tensor " + quoted(key) + ": " + message);
  };
  if (uint64_t(entry.offset) > file.size() ||
      uint64_t(entry.size) > file.size() - uint64_t(entry.offset))
    return dataError("bytes [" + llvm::Twine(entry.offset) + ", " +
                     llvm::Twine(uint64_t(entry.offset) +
                                 uint64_t(entry.size)) +
                     ") lie beyond the end of the shard (" +
                     llvm::Twine(file.size()) + " bytes)");
  StringRef bytes = file.substr(entry.offset, entry.size);
  uint32_t stored = unmaskCrc32c(entry.maskedCrc32c);
  auto checksumError = [&](uint32_t actual) {
    return dataError(llvm::formatv("checksum mismatch (stored {0:x8}, "
                                   "computed {1:x8}); the data file is "
                                   "corrupt",
                                   stored, actual)
                         .str());
  };

  if (!isString) {
    uint32_t actual = crc32c(bytes);
    if (actual != stored)
      return checksumError(actual);
    Tensor tensor = Tensor::uninitialized(entry.dtype, entry.shape);
    if (!bytes.empty())
      std::memcpy(tensor.raw(), bytes.data(), bytes.size());
    if (bigEndian && elementSize > 1) {
      char *p = tensor.raw();
      for (size_t i = 0; i < bytes.size(); i += elementSize)
        std::reverse(p + i, p + i + elementSize);
    }
    return tensor;
  }

  // Strings: varint64 lengths, their masked checksum, the bytes.
  if (numElements == 0 && bytes.empty())
    return Tensor(entry.dtype, entry.shape);
  StringRef rest = bytes;
  std::vector<uint64_t> lengths;
  lengths.reserve(numElements); // numElements <= entry.size <= file size
  uint32_t crc = 0;
  uint64_t totalLength = 0;
  for (int64_t i = 0; i < numElements; ++i) {
    uint64_t length;
    if (!consumeVarint64(rest, length))
      return dataError("corrupt string lengths (element " + llvm::Twine(i) +
                       ")");
    if (length > bytes.size() || totalLength + length > bytes.size())
      return dataError("string lengths exceed the entry's " +
                       llvm::Twine(bytes.size()) + " bytes");
    totalLength += length;
    lengths.push_back(length);
    crc = extendWithLength(crc, length, bigEndian);
  }
  if (rest.size() < 4)
    return dataError("string data end before the length checksum");
  uint32_t storedLengthCrc = loadFixed32(rest.data(), bigEndian);
  if (unmaskCrc32c(storedLengthCrc) != crc)
    return dataError(llvm::formatv("checksum mismatch in the string lengths "
                                   "(stored {0:x8}, computed {1:x8})",
                                   unmaskCrc32c(storedLengthCrc), crc)
                         .str());
  crc = extendCrc32c(crc, rest.data(), 4);
  rest = rest.drop_front(4);
  if (rest.size() != totalLength)
    return dataError("string lengths add up to " + llvm::Twine(totalLength) +
                     " bytes but the entry holds " +
                     llvm::Twine(rest.size()));
  crc = extendCrc32c(crc, rest.data(), rest.size());
  if (crc != stored)
    return checksumError(crc);
  Tensor tensor(entry.dtype, entry.shape);
  for (int64_t i = 0; i < numElements; ++i) {
    tensor.strings()[i].assign(rest.data(), lengths[i]);
    rest = rest.drop_front(lengths[i]);
  }
  return tensor;
}

/// Copies between `full` and `slice`, the part of `full` that starts at
/// `starts` and has `slice`'s shape: into `full` when `intoFull`, else out
/// of it. Row by row (the last dimension is contiguous in both).
static void copySlice(Tensor &full, Tensor &slice,
                      llvm::ArrayRef<int64_t> starts, bool intoFull) {
  llvm::ArrayRef<int64_t> fullShape = full.shape();
  llvm::ArrayRef<int64_t> sliceShape = slice.shape();
  size_t rank = fullShape.size();
  int64_t sliceElements = slice.numElements();
  if (sliceElements == 0)
    return;
  bool isString = full.dtype() == cleave::kString;
  size_t elementSize = cleave::dtypeSize(full.dtype());
  // Row-major strides of the full tensor.
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * fullShape[d];
  int64_t row = rank ? sliceShape[rank - 1] : 1;
  std::vector<int64_t> index(rank, 0);
  for (int64_t inSlice = 0; inSlice < sliceElements; inSlice += row) {
    int64_t inFull = 0;
    for (size_t d = 0; d < rank; ++d)
      inFull += (starts[d] + index[d]) * strides[d];
    if (isString) {
      for (int64_t j = 0; j < row; ++j) {
        std::string &a = full.strings()[inFull + j];
        std::string &b = slice.strings()[inSlice + j];
        (intoFull ? a : b) = intoFull ? b : a;
      }
    } else {
      char *a = full.raw() + inFull * elementSize;
      char *b = slice.raw() + inSlice * elementSize;
      std::memcpy(intoFull ? a : b, intoFull ? b : a, row * elementSize);
    }
    // Next row: count up the outer indices.
    for (size_t d = rank ? rank - 1 : 0; d-- > 0;) {
      if (++index[d] < sliceShape[d])
        break;
      index[d] = 0;
    }
  }
}

static void copySliceInto(Tensor &full, Tensor slice,
                          llvm::ArrayRef<int64_t> starts) {
  copySlice(full, slice, starts, /*intoFull=*/true);
}

llvm::Expected<Tensor>
cleave::checkpoint::extractSlice(const Tensor &full,
                                 const TensorSliceSpec &slice) {
  auto shape = slice.sliceShape(full.shape());
  if (!shape)
    return shape.takeError();
  Tensor part(full.dtype(), *shape);
  std::vector<int64_t> starts;
  for (const TensorSliceSpec::Extent &extent : slice.extents)
    starts.push_back(extent.start);
  Tensor source = full; // shares the elements; only read
  copySlice(source, part, starts, /*intoFull=*/false);
  return part;
}

llvm::Expected<Tensor>
BundleReader::Impl::readPartitioned(StringRef key, const BundleEntry &entry) {
  if (!isSupportedDtype(entry.dtype))
    return entryError(key, "dtype " + cleave::dtypeName(entry.dtype) +
                               " is not supported (Cleave's tensors cannot "
                               "hold it)");
  int64_t total = *checkedNumElements(entry.shape);
  // The slices must cover the tensor exactly once: no overlaps, and their
  // sizes add up to the whole.
  int64_t covered = 0;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < entry.slices.size(); ++i) {
    const TensorSliceSpec &slice = entry.slices[i];
    std::vector<int64_t> shape = *slice.sliceShape(entry.shape);
    covered += *checkedNumElements(shape); // each <= total
    if (covered > total)
      return entryError(key, "its slices overlap or exceed the shape " +
                                 shapeText(entry.shape));
    for (size_t j = 0; j < i; ++j) {
      bool overlap = true;
      for (size_t d = 0; d < shape.size() && overlap; ++d) {
        const auto &a = slice.extents[d];
        const auto &b = entry.slices[j].extents[d];
        int64_t aStart = a.isFull() ? 0 : a.start, aEnd = aStart + shape[d];
        int64_t bStart = b.isFull() ? 0 : b.start,
                bEnd = bStart + shapes[j][d];
        overlap = aStart < bEnd && bStart < aEnd;
      }
      if (overlap)
        return entryError(key, "its slices '" + slice.toString() + "' and '" +
                                   entry.slices[j].toString() + "' overlap");
    }
    shapes.push_back(std::move(shape));
  }
  if (covered != total)
    return entryError(key, "its slices cover " + llvm::Twine(covered) +
                               " of its " + llvm::Twine(total) + " elements");

  // Read every slice (each checked against its shard) before allocating the
  // whole.
  std::vector<Tensor> parts;
  for (const TensorSliceSpec &slice : entry.slices) {
    std::string sliceKey = encodeTensorNameSlice(key, slice);
    auto it = entries.find(sliceKey);
    if (it == entries.end())
      return entryError(key, "the entry of its slice '" + slice.toString() +
                                 "' is missing");
    const BundleEntry &sliceEntry = it->second;
    std::vector<int64_t> shape = *slice.sliceShape(entry.shape);
    if (sliceEntry.dtype != entry.dtype || sliceEntry.shape != shape ||
        !sliceEntry.slices.empty())
      return entryError(key, "the entry of its slice '" + slice.toString() +
                                 "' is " + cleave::dtypeName(sliceEntry.dtype) +
                                 " " + shapeText(sliceEntry.shape) + ", not " +
                                 cleave::dtypeName(entry.dtype) + " " +
                                 shapeText(shape));
    auto part = readEntry(key, sliceEntry);
    if (!part)
      return part.takeError();
    parts.push_back(std::move(*part));
  }
  Tensor full = Tensor::uninitialized(entry.dtype, entry.shape);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<int64_t> starts;
    for (const auto &e : entry.slices[i].extents)
      starts.push_back(e.isFull() ? 0 : e.start);
    copySliceInto(full, parts[i], starts);
  }
  return full;
}

//===----------------------------------------------------------------------===//
// BundleWriter
//===----------------------------------------------------------------------===//

struct BundleWriter::Impl {
  std::string prefix;
  BundleWriterOptions options;
  std::optional<AtomicFile> data;
  /// Set once an I/O error happened or finish() ran; later calls fail.
  std::string brokenBecause;
  int64_t size = 0;
  std::map<std::string, tensorflow::BundleEntryProto> entries;

  llvm::Error broken() const {
    return makeError(indexFileName(prefix) + ": the bundle writer " +
                     brokenBecause);
  }

  llvm::Error append(StringRef bytes) {
    if (llvm::Error err = data->append(bytes)) {
      brokenBecause = "failed: " + llvm::toString(std::move(err));
      data.reset();
      return broken();
    }
    size += bytes.size();
    return llvm::Error::success();
  }

  llvm::Error checkTensor(StringRef key, const Tensor &tensor) const {
    if (!tensor.isValid())
      return makeError(indexFileName(prefix) + ": tensor " + quoted(key) +
                       " is empty (no dtype)");
    if (!isSupportedDtype(tensor.dtype()))
      return makeError(indexFileName(prefix) + ": tensor " + quoted(key) +
                       ": dtype " + cleave::dtypeName(tensor.dtype()) +
                       " is not supported");
    return llvm::Error::success();
  }
};

BundleWriter::BundleWriter(std::string prefix, BundleWriterOptions options)
    : impl(std::make_unique<Impl>()) {
  impl->prefix = std::move(prefix);
  impl->options = options;
  StringRef dir = llvm::sys::path::parent_path(impl->prefix);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      impl->brokenBecause = "cannot create directory " + dir.str() + ": " +
                            ec.message();
      return;
    }
  auto file = AtomicFile::create(dataFileName(impl->prefix, 0, 1));
  if (!file) {
    impl->brokenBecause = "failed: " + llvm::toString(file.takeError());
    return;
  }
  impl->data = std::move(*file);
}

BundleWriter::~BundleWriter() = default;
BundleWriter::BundleWriter(BundleWriter &&) noexcept = default;
BundleWriter &BundleWriter::operator=(BundleWriter &&) noexcept = default;

llvm::Error BundleWriter::add(StringRef key, const Tensor &tensor) {
  Impl &w = *impl;
  if (!w.brokenBecause.empty())
    return w.broken();
  if (key.empty())
    return makeError(indexFileName(w.prefix) +
                     ": the empty key is reserved for the bundle header");
  if (w.entries.count(key.str()))
    return makeError(indexFileName(w.prefix) + ": duplicate tensor " +
                     quoted(key));
  if (llvm::Error err = w.checkTensor(key, tensor))
    return err;

  tensorflow::BundleEntryProto entry;
  entry.set_dtype(static_cast<tensorflow::DataType>(tensor.dtype()));
  setShape(tensor.shape(), *entry.mutable_shape());
  entry.set_shard_id(0);
  entry.set_offset(w.size);
  int64_t start = w.size;
  uint32_t crc = 0;
  if (tensor.dtype() == cleave::kString) {
    std::string lengths;
    for (const std::string &s : tensor.strings()) {
      appendVarint64(lengths, s.size());
      crc = extendWithLength(crc, s.size(), /*bigEndian=*/false);
    }
    std::string lengthCrc;
    appendFixed32(lengthCrc, maskCrc32c(crc));
    crc = extendCrc32c(crc, lengthCrc.data(), 4);
    if (llvm::Error err = w.append(lengths))
      return err;
    if (llvm::Error err = w.append(lengthCrc))
      return err;
    for (const std::string &s : tensor.strings()) {
      crc = extendCrc32c(crc, s.data(), s.size());
      if (llvm::Error err = w.append(s))
        return err;
    }
  } else {
    StringRef bytes(tensor.raw(), tensor.byteSize());
    crc = crc32c(bytes);
    if (llvm::Error err = w.append(bytes))
      return err;
  }
  entry.set_size(w.size - start);
  entry.set_crc32c(maskCrc32c(crc));
  w.entries.emplace(key.str(), std::move(entry));
  return llvm::Error::success();
}

llvm::Error BundleWriter::addSlice(StringRef fullName,
                                   llvm::ArrayRef<int64_t> fullShape,
                                   const TensorSliceSpec &slice,
                                   const Tensor &tensor) {
  Impl &w = *impl;
  if (!w.brokenBecause.empty())
    return w.broken();
  std::string where = indexFileName(w.prefix) + ": tensor " + quoted(fullName);
  if (fullName.empty())
    return makeError(indexFileName(w.prefix) +
                     ": the empty key is reserved for the bundle header");
  if (!checkedNumElements(fullShape))
    return makeError(where + ": invalid shape " + shapeText(fullShape));
  auto sliceShape = slice.sliceShape(fullShape);
  if (!sliceShape)
    return makeError(where + ": " + llvm::toString(sliceShape.takeError()));
  if (llvm::Error err = w.checkTensor(fullName, tensor))
    return err;
  if (tensor.shape() != *sliceShape)
    return makeError(where + ": slice '" + slice.toString() + "' has shape " +
                     shapeText(*sliceShape) + " but the tensor given is " +
                     shapeText(tensor.shape()));
  // A slice that is the whole tensor is stored as the tensor.
  if (slice.isFull() || llvm::ArrayRef<int64_t>(*sliceShape) == fullShape)
    return add(fullName, tensor);

  std::string sliceKey = encodeTensorNameSlice(fullName, slice);
  if (w.entries.count(sliceKey))
    return makeError(where + ": slice '" + slice.toString() +
                     "' was added before");
  auto existing = w.entries.find(fullName.str());
  if (existing != w.entries.end()) {
    const tensorflow::BundleEntryProto &full = existing->second;
    std::vector<int64_t> shape;
    for (const auto &dim : full.shape().dim())
      shape.push_back(dim.size());
    if (full.slices().empty())
      return makeError(where + " was added whole; it cannot also have "
                               "slices");
    if (full.dtype() != tensor.dtype() ||
        llvm::ArrayRef<int64_t>(shape) != fullShape)
      return makeError(where + ": slice '" + slice.toString() + "' is " +
                       cleave::dtypeName(tensor.dtype()) + " of " +
                       shapeText(fullShape) + " but earlier slices are " +
                       cleave::dtypeName(full.dtype()) + " of " +
                       shapeText(shape));
  }
  if (llvm::Error err = add(sliceKey, tensor))
    return err;
  tensorflow::BundleEntryProto &full = w.entries[fullName.str()];
  full.set_dtype(static_cast<tensorflow::DataType>(tensor.dtype()));
  setShape(fullShape, *full.mutable_shape());
  toProto(slice, *full.add_slices());
  return llvm::Error::success();
}

llvm::Error BundleWriter::finish() {
  Impl &w = *impl;
  if (!w.brokenBecause.empty())
    return w.broken();
  w.brokenBecause = "was finished already";
  // Data first: the index, written last, is what makes the bundle visible.
  if (llvm::Error err = w.data->commit()) {
    w.brokenBecause = "failed: " + llvm::toString(std::move(err));
    w.data.reset();
    return w.broken();
  }
  w.data.reset();

  TableOptions tableOptions;
  tableOptions.snappy = w.options.snappyIndex;
  TableWriter table(tableOptions);
  tensorflow::VersionDef version;
  version.set_producer(kBundleVersion);
  version.set_min_consumer(kBundleMinConsumer);
  llvm::cantFail(table.add(
      "", headerBytes(1, tensorflow::BundleHeaderProto::LITTLE, version)));
  for (const auto &[key, entry] : w.entries)
    llvm::cantFail(table.add(key, entry.SerializeAsString()));
  return writeFileAtomically(indexFileName(w.prefix), table.finish());
}

//===----------------------------------------------------------------------===//
// Merging and atomic files
//===----------------------------------------------------------------------===//

llvm::Error cleave::checkpoint::mergeBundles(
    llvm::ArrayRef<std::string> prefixes, StringRef mergedPrefix) {
  int numShards = 0;
  bool seenFirst = false;
  tensorflow::BundleHeaderProto::Endianness endianness =
      tensorflow::BundleHeaderProto::LITTLE;
  tensorflow::VersionDef version;
  std::map<std::string, tensorflow::BundleEntryProto> entries;
  // Input data file -> shard id in the merged bundle, by first use.
  std::vector<std::string> dataFiles;

  for (const std::string &prefix : prefixes) {
    std::string indexPath = indexFileName(prefix);
    auto table = TableReader::open(indexPath);
    if (!table)
      return table.takeError();
    llvm::ArrayRef<TableReader::Entry> rows = table->entries();
    tensorflow::BundleHeaderProto header;
    if (rows.empty() || !rows.front().first.empty() ||
        !header.ParseFromString(rows.front().second))
      return makeError(indexPath +
                       ": not a tensor bundle: no readable header entry");
    numShards += header.num_shards();
    if (!seenFirst) {
      seenFirst = true;
      endianness = header.endianness();
      version = header.version();
    } else if (header.endianness() != endianness) {
      return makeError(indexPath + ": its endianness differs from the other "
                                   "bundles being merged");
    } else if (header.version().SerializeAsString() !=
               version.SerializeAsString()) {
      return makeError(indexPath + ": its format version differs from the "
                                   "other bundles being merged");
    }
    for (const TableReader::Entry &row : rows.drop_front()) {
      auto where = [&] {
        return indexPath + ": tensor " + quoted(row.first);
      };
      tensorflow::BundleEntryProto entry;
      if (!entry.ParseFromString(row.second))
        return makeError(where() + ": unable to parse its entry");
      auto existing = entries.find(row.first);
      if (existing != entries.end()) {
        tensorflow::BundleEntryProto &merged = existing->second;
        if (merged.slices().empty() || entry.slices().empty())
          return makeError(where() + " is in more than one of the bundles "
                                     "being merged");
        if (merged.dtype() != entry.dtype() ||
            merged.shape().SerializeAsString() !=
                entry.shape().SerializeAsString())
          return makeError(where() + ": dtype or shape differs between the "
                                     "bundles being merged");
        for (const auto &slice : entry.slices())
          *merged.add_slices() = slice;
        continue;
      }
      std::string file =
          dataFileName(prefix, entry.shard_id(), header.num_shards());
      auto it = llvm::find(dataFiles, file);
      if (it == dataFiles.end())
        it = dataFiles.insert(dataFiles.end(), file);
      entry.set_shard_id(static_cast<int32_t>(it - dataFiles.begin()));
      entries.emplace(row.first, std::move(entry));
    }
  }

  StringRef dir = llvm::sys::path::parent_path(mergedPrefix);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return makeError(dir + ": cannot create directory: " + ec.message());
  for (size_t i = 0; i < dataFiles.size(); ++i) {
    std::string target =
        dataFileName(mergedPrefix, static_cast<int>(i),
                     static_cast<int>(dataFiles.size()));
    if (std::error_code ec = llvm::sys::fs::rename(dataFiles[i], target))
      return makeError(dataFiles[i] + ": cannot rename to " + target + ": " +
                       ec.message());
  }

  TableWriter table;
  llvm::cantFail(table.add("", headerBytes(numShards, endianness, version)));
  for (const auto &[key, entry] : entries)
    llvm::cantFail(table.add(key, entry.SerializeAsString()));
  if (llvm::Error err =
          writeFileAtomically(indexFileName(mergedPrefix), table.finish()))
    return err;
  for (const std::string &prefix : prefixes)
    if (indexFileName(prefix) != indexFileName(mergedPrefix))
      llvm::sys::fs::remove(indexFileName(prefix));
  return llvm::Error::success();
}

llvm::Error cleave::checkpoint::writeFileAtomically(StringRef path,
                                                    StringRef contents) {
  auto file = AtomicFile::create(path);
  if (!file)
    return file.takeError();
  if (llvm::Error err = file->append(contents))
    return err;
  return file->commit();
}
