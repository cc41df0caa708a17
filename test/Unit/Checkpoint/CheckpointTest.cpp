//===- CheckpointTest.cpp - TensorFlow V2 checkpoints ---------------------===//
//
// CRC-32C, the table format, tensor bundles (round trips, slices, shards,
// every kind of bad input) and the `checkpoint` state file, plus
// TensorFlow-written checkpoints from the shared corpus read and written
// back byte for byte.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/CheckpointState.h"
#include "cleave/Checkpoint/Crc32c.h"
#include "cleave/Checkpoint/TFRecord.h"
#include "cleave/Checkpoint/Table.h"
#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/tf/tensor_bundle.pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <random>

using namespace cleave::checkpoint;
using cleave::Tensor;

#ifndef CLEAVE_CORPUS_DIR
#define CLEAVE_CORPUS_DIR ""
#endif

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().str();
}

void writeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  ASSERT_FALSE(ec) << path.str();
  out << contents;
}

/// The message of an expected error (empty, and a test failure, if the
/// operation succeeded).
std::string errorText(llvm::Error err) {
  EXPECT_TRUE(bool(err)) << "expected an error";
  return llvm::toString(std::move(err));
}
template <typename T> std::string errorText(llvm::Expected<T> value) {
  EXPECT_FALSE(bool(value)) << "expected an error";
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

/// Length of the block that starts at `offset`: the first n whose trailer
/// (type byte, masked CRC-32C) checks.
size_t blockSizeAt(const std::string &file, size_t offset) {
  for (size_t n = 0; offset + n + 5 <= file.size(); ++n) {
    uint32_t stored = 0;
    std::memcpy(&stored, file.data() + offset + n + 1, 4);
    if (unmaskCrc32c(stored) ==
        extendCrc32c(0, file.data() + offset, n + 1))
      return n;
  }
  ADD_FAILURE() << "no block at offset " << offset;
  return 0;
}

/// Recomputes the trailer of the block [offset, offset + size) after a test
/// changed its bytes.
void resealBlock(std::string &file, size_t offset, size_t size) {
  uint32_t crc = maskCrc32c(extendCrc32c(0, file.data() + offset, size + 1));
  std::memcpy(&file[offset + size + 1], &crc, 4);
}

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t(cleave::kFloat, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

Tensor strings(std::vector<int64_t> shape, std::vector<std::string> values) {
  Tensor t(cleave::kString, std::move(shape));
  t.strings() = std::move(values);
  return t;
}

/// Bytes of a tensor for comparisons (strings joined with their lengths).
std::string contentsOf(const Tensor &t) {
  if (t.dtype() == cleave::kString) {
    std::string out;
    for (const std::string &s : t.strings())
      out += std::to_string(s.size()) + ":" + s + ";";
    return out;
  }
  return std::string(t.raw(), t.byteSize());
}

void expectSameTensor(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_TRUE(contentsOf(a) == contentsOf(b))
      << a.toString() << " vs " << b.toString();
}

/// A fresh directory, removed after the test.
class CheckpointFiles : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cleave-ckpt", path));
    dir = path.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  /// Files in the directory, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end;
         !ec && it != end; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }
  /// Writes a small bundle: "alpha" float [3] and "beta" a string vector.
  std::string writeSmallBundle(llvm::StringRef name = "small",
                               BundleWriterOptions options = {}) {
    std::string prefix = path(name);
    BundleWriter writer(prefix, options);
    EXPECT_FALSE(bool(writer.add("alpha", floats({3}, {1, 2, 3}))));
    EXPECT_FALSE(bool(writer.add("beta", strings({2}, {"x", "yz"}))));
    EXPECT_FALSE(bool(writer.finish()));
    return prefix;
  }
  /// Rewrites entry `key` of the index of `prefix` through `edit`.
  void editEntry(const std::string &prefix, llvm::StringRef key,
                 llvm::function_ref<void(tensorflow::BundleEntryProto &)> edit) {
    std::string index = indexFileName(prefix);
    auto table = TableReader::open(index);
    ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
    TableWriter writer;
    for (const auto &[k, v] : table->entries()) {
      std::string value = v;
      if (k == key) {
        tensorflow::BundleEntryProto entry;
        ASSERT_TRUE(entry.ParseFromString(v));
        edit(entry);
        value = entry.SerializeAsString();
      }
      ASSERT_FALSE(bool(writer.add(k, value)));
    }
    writeFile(index, writer.finish());
  }

  std::string dir;
};

//===----------------------------------------------------------------------===//
// CRC-32C
//===----------------------------------------------------------------------===//

TEST(CheckpointCrc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("a"), 0xC1D04330u);
  // RFC 3720 (iSCSI), appendix B.4.
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, 0), down(32, 0);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down), 0x113FDB5Cu);
  // Extending piece by piece gives the checksum of the whole.
  EXPECT_EQ(extendCrc32c(crc32c("1234"), "56789", 5), 0xE3069283u);
}

TEST(CheckpointCrc32c, HardwareMatchesTables) {
  std::mt19937 rng(7);
  std::string data(4099, '\0');
  for (char &c : data)
    c = static_cast<char>(rng());
  // Every alignment and a spread of lengths, through both paths.
  for (size_t start = 0; start < 9; ++start)
    for (size_t length : {0, 1, 7, 8, 9, 15, 16, 63, 64, 1000, 4090}) {
      uint32_t portable =
          extendCrc32cPortable(0x1234567u, data.data() + start, length);
      EXPECT_EQ(extendCrc32c(0x1234567u, data.data() + start, length),
                portable)
          << "start " << start << " length " << length;
    }
}

TEST(CheckpointCrc32c, MaskAndUnmask) {
  EXPECT_EQ(maskCrc32c(0), 0xa282ead8u);
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(unmaskCrc32c(maskCrc32c(crc)), crc);
    EXPECT_NE(maskCrc32c(crc), crc);
    EXPECT_NE(maskCrc32c(maskCrc32c(crc)), crc);
  }
}

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

TEST(CheckpointTFRecord, RoundTripAndDamage) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  std::vector<std::string> written = {"first", "", std::string(300, 'x')};
  for (const std::string &record : written)
    writeTFRecord(os, record);
  os.flush();
  // 12 bytes of header and 4 of data CRC around each record.
  ASSERT_EQ(bytes.size(), 3 * 16 + 5 + 300u);
  auto records = splitTFRecords(bytes, "r");
  ASSERT_TRUE(bool(records)) << llvm::toString(records.takeError());
  ASSERT_EQ(records->size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ((*records)[i].str(), written[i]);

  // Every flipped byte is caught: the length's CRC, the data's, or a length
  // that runs past the end; never a wrong record.
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] ^= 0x20;
    auto split = splitTFRecords(damaged, "r");
    EXPECT_FALSE(bool(split)) << "byte " << at;
    if (!split)
      llvm::consumeError(split.takeError());
  }
  auto cut = splitTFRecords(llvm::StringRef(bytes).drop_back(1), "r");
  ASSERT_FALSE(bool(cut));
  EXPECT_EQ(llvm::toString(cut.takeError()), "'r': truncated record at 37");
  auto corrupt = splitTFRecords(std::string(1, 'x') + bytes.substr(1), "r");
  ASSERT_FALSE(bool(corrupt));
  EXPECT_EQ(llvm::toString(corrupt.takeError()), "'r': corrupted record at 0");
}

TEST(CheckpointTable, RoundTripAcrossBlocksAndRestarts) {
  for (bool snappy : {false, true}) {
    TableOptions options;
    options.blockSize = 256; // many blocks
    options.restartInterval = 4;
    options.snappy = snappy;
    TableWriter writer(options);
    std::vector<std::pair<std::string, std::string>> expected;
    for (int i = 0; i < 500; ++i) {
      char key[32];
      std::snprintf(key, sizeof(key), "layer_%03d/kernel", i);
      std::string value(i % 37, static_cast<char>('a' + i % 26));
      expected.emplace_back(key, value);
      ASSERT_FALSE(bool(writer.add(key, value)));
    }
    // One entry larger than twice the block size gets its own block.
    expected.emplace_back("zz", std::string(600, 'z'));
    ASSERT_FALSE(bool(writer.add("zz", std::string(600, 'z'))));
    std::string file = writer.finish();
    auto table = TableReader::parse(file, "t.index");
    ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
    ASSERT_EQ(table->entries().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(table->entries()[i], expected[i]);
    ASSERT_NE(table->lookup("layer_250/kernel"), nullptr);
    EXPECT_EQ(*table->lookup("layer_250/kernel"), expected[250].second);
    EXPECT_EQ(table->lookup("layer_250"), nullptr);
  }
}

TEST(CheckpointTable, EmptyTable) {
  std::string file = TableWriter().finish();
  // An empty data-less table: metaindex (8 + 5), index (8 + 5), footer.
  EXPECT_EQ(file.size(), 13u + 13u + kTableFooterSize);
  auto table = TableReader::parse(file, "empty.index");
  ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
  EXPECT_TRUE(table->entries().empty());
}

TEST(CheckpointTable, WriterRejectsKeysOutOfOrder) {
  TableWriter writer;
  ASSERT_FALSE(bool(writer.add("b", "1")));
  EXPECT_EQ(errorText(writer.add("a", "2")),
            "table keys must be strictly increasing: 'a' after 'b'");
  EXPECT_EQ(errorText(writer.add("b", "2")),
            "table keys must be strictly increasing: 'b' after 'b'");
}

TEST(CheckpointTable, ReadsTensorFlowV1Checkpoint) {
  // An old (V1, TensorSliceWriter) checkpoint is a table too.
  std::string path = std::string(CLEAVE_CORPUS_DIR) +
                     "/savedmodel/bad_half_plus_two/00000123/export";
  if (!llvm::sys::fs::exists(path))
    GTEST_SKIP() << "corpus not found: " << path;
  auto table = TableReader::open(path);
  ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
  ASSERT_FALSE(table->entries().empty());
  EXPECT_EQ(table->entries().front().first, ""); // SavedTensorSlices meta
  // Writing the entries again gives TensorFlow's bytes. Its writer stored
  // the blocks uncompressed although Snappy would have saved more than 1/8
  // (a TensorFlow build without Snappy).
  TableWriter writer;
  for (const auto &[key, value] : table->entries())
    ASSERT_FALSE(bool(writer.add(key, value)));
  EXPECT_TRUE(writer.finish() == readFile(path));
}

TEST(CheckpointTable, CorruptTables) {
  TableWriter writer;
  ASSERT_FALSE(bool(writer.add("apple", "1")));
  ASSERT_FALSE(bool(writer.add("banana", "2")));
  std::string good = writer.finish();
  ASSERT_TRUE(bool(TableReader::parse(good, "t.index")));

  EXPECT_EQ(errorText(TableReader::parse(good.substr(0, 20), "t.index")),
            "t.index: truncated table: 20 bytes, less than the 48-byte "
            "footer");
  std::string shortened = good.substr(0, good.size() - 1);
  EXPECT_NE(errorText(TableReader::parse(shortened, "t.index"))
                .find("t.index: not a TensorFlow table (bad footer magic"),
            std::string::npos);

  std::string flipped = good;
  flipped[good.find("banana")] = 'B';
  EXPECT_NE(errorText(TableReader::parse(flipped, "t.index"))
                .find("t.index: checksum mismatch in the data block at "
                      "offset 0"),
            std::string::npos);

  // Keys out of order, with a valid checksum.
  std::string unordered = good;
  size_t dataSize = blockSizeAt(good, 0);
  unordered[good.find("banana")] = 'B';
  resealBlock(unordered, 0, dataSize);
  EXPECT_EQ(errorText(TableReader::parse(unordered, "t.index")),
            "t.index: keys out of order: 'Banana' after 'apple'");

  // An unknown compression type.
  std::string badType = good;
  badType[dataSize] = 7;
  resealBlock(badType, 0, dataSize);
  EXPECT_EQ(errorText(TableReader::parse(badType, "t.index")),
            "t.index: unknown compression type 7 of the data block at "
            "offset 0");

  // A block handle that points past the end of the file.
  std::string badHandle = good;
  badHandle[good.size() - kTableFooterSize + 2] = 0x7f; // index offset
  EXPECT_NE(errorText(TableReader::parse(badHandle, "t.index"))
                .find("lies outside the file"),
            std::string::npos);

  // A restart count larger than the block.
  std::string badRestarts = good;
  badRestarts[dataSize - 4] = 0x40;
  resealBlock(badRestarts, 0, dataSize);
  EXPECT_EQ(errorText(TableReader::parse(badRestarts, "t.index")),
            "t.index: corrupt data block at offset 0: 64 restart points do "
            "not fit in " +
                std::to_string(dataSize) + " bytes");

  // An entry whose value runs past the block.
  std::string badEntry = good;
  badEntry[2] = 0x70; // value size of the first entry
  resealBlock(badEntry, 0, dataSize);
  EXPECT_EQ(errorText(TableReader::parse(badEntry, "t.index")),
            "t.index: corrupt data block at offset 0: bad entry at offset 0");
}

TEST(CheckpointTable, CorruptSnappyBlock) {
  TableOptions options;
  options.snappy = true;
  TableWriter writer(options);
  for (int i = 0; i < 40; ++i)
    ASSERT_FALSE(bool(writer.add("variable_" + std::to_string(100 + i),
                                 std::string(40, 'v'))));
  std::string file = writer.finish();
  size_t dataSize = blockSizeAt(file, 0);
  ASSERT_EQ(file[dataSize], 1) << "the data block should be compressed";
  ASSERT_TRUE(bool(TableReader::parse(file, "s.index")));
  // Garbage instead of Snappy data, with a checksum that matches it.
  for (size_t i = 1; i < dataSize; ++i)
    file[i] = static_cast<char>(0xff);
  resealBlock(file, 0, dataSize);
  EXPECT_EQ(errorText(TableReader::parse(file, "s.index")),
            "s.index: corrupt Snappy data in the data block at offset 0");
}

//===----------------------------------------------------------------------===//
// Slice keys
//===----------------------------------------------------------------------===//

TEST(CheckpointSlices, EncodeTensorNameSlice) {
  auto slice = TensorSliceSpec::parse("0,2:-");
  ASSERT_TRUE(bool(slice));
  // 0, "a" + separator, rank 2, then start/length: 0 -> 80, 2 -> 82,
  // full extent (0, -1) -> 80 7f.
  EXPECT_EQ(encodeTensorNameSlice("a", *slice),
            std::string("\x00" "a\x00\x01" "\x01\x02" "\x80\x82\x80\x7f", 10));
  EXPECT_EQ(slice->toString(), "0,2:-");
  // Zero and 0xff bytes in names are escaped.
  auto decoded = decodeTensorNameSlice(
      encodeTensorNameSlice(std::string("x\0\xffy", 4), *slice));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->first, std::string("x\0\xffy", 4));
  EXPECT_EQ(decoded->second, *slice);
  EXPECT_FALSE(decodeTensorNameSlice("plain").has_value());
}

TEST(CheckpointSlices, SignedNumbersRoundTrip) {
  // OrderedCode's signed encoding at every length, through the slice key.
  std::vector<int64_t> values = {0, 1, 63, 64, -64, -65, 8191, 8192,
                                 int64_t(1) << 49, int64_t(1) << 56,
                                 -(int64_t(1) << 56), INT64_MAX, INT64_MIN};
  for (int bits = 1; bits < 63; ++bits) {
    values.push_back(int64_t(1) << bits);
    values.push_back((int64_t(1) << bits) - 1);
    values.push_back(-(int64_t(1) << bits));
    values.push_back(-(int64_t(1) << bits) - 1);
  }
  for (int64_t v : values) {
    TensorSliceSpec spec;
    spec.extents.push_back({v, 5});
    auto decoded = decodeTensorNameSlice(encodeTensorNameSlice("t", spec));
    ASSERT_TRUE(decoded.has_value()) << v;
    EXPECT_EQ(decoded->second.extents[0].start, v);
  }
  TensorSliceSpec max;
  max.extents.push_back({INT64_MAX, 1});
  std::string key = encodeTensorNameSlice("t", max);
  EXPECT_EQ(key.substr(6, 10),
            std::string("\xff\xc0\x7f\xff\xff\xff\xff\xff\xff\xff", 10));
}

TEST(CheckpointSlices, ParseErrors) {
  EXPECT_EQ(errorText(TensorSliceSpec::parse("0,2:x")),
            "invalid tensor slice '0,2:x': each dimension is '-' or "
            "'start,length' with start >= 0 and length >= 0");
  auto spec = TensorSliceSpec::parse("1,2:-");
  ASSERT_TRUE(bool(spec));
  EXPECT_EQ(errorText(spec->sliceShape({2, 5})),
            "slice '1,2:-' leaves the shape [2,5] in dimension 0");
  EXPECT_EQ(errorText(spec->sliceShape({5})),
            "slice '1,2:-' has rank 2 but the tensor [5] has rank 1");
}

//===----------------------------------------------------------------------===//
// TensorFlow's checkpoints (corpus)
//===----------------------------------------------------------------------===//

std::string corpusPrefix(llvm::StringRef model) {
  return (llvm::Twine(CLEAVE_CORPUS_DIR) + "/savedmodel/" + model +
          "/00000123/variables/variables")
      .str();
}

#define REQUIRE_CORPUS(prefix)                                                 \
  if (!llvm::sys::fs::exists(indexFileName(prefix)))                           \
  GTEST_SKIP() << "corpus not found: " << (prefix)

float readScalar(BundleReader &reader, llvm::StringRef key) {
  auto t = reader.read(key);
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return -1;
  }
  EXPECT_EQ(t->dtype(), cleave::kFloat) << key.str();
  EXPECT_EQ(t->numElements(), 1) << key.str();
  return t->data<float>()[0];
}

TEST(CheckpointCorpus, HalfPlusTwo) {
  std::string prefix = corpusPrefix("saved_model_half_plus_two_cpu");
  REQUIRE_CORPUS(prefix);
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->numShards(), 1);
  // Besides a, b and c this export holds a2 and c2.
  EXPECT_EQ(reader->keys(),
            (std::vector<std::string>{"a", "a2", "b", "c", "c2"}));
  EXPECT_EQ(readScalar(*reader, "a"), 0.5f);
  EXPECT_EQ(readScalar(*reader, "b"), 2.0f);
  EXPECT_EQ(readScalar(*reader, "c"), 3.0f);
  EXPECT_EQ(readScalar(*reader, "a2"), 0.5f);
  EXPECT_EQ(readScalar(*reader, "c2"), 3.0f);
  for (const char *key : {"a", "a2", "b", "c", "c2"})
    std::printf("saved_model_half_plus_two_cpu: %s = %s (offset %lld)\n", key,
                llvm::cantFail(reader->read(key)).toString().c_str(),
                static_cast<long long>(reader->lookup(key)->offset));
}

TEST(CheckpointCorpus, HalfPlusThree) {
  std::string prefix = corpusPrefix("saved_model_half_plus_three");
  REQUIRE_CORPUS(prefix);
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(readScalar(*reader, "a"), 0.5f);
  // The manifest's "same" values do not hold here: this export stored
  // b = 3.0 (y = a*x + c with c = 3 is what it serves).
  EXPECT_EQ(readScalar(*reader, "b"), 3.0f);
  EXPECT_EQ(readScalar(*reader, "c"), 3.0f);
}

TEST(CheckpointCorpus, Counter) {
  std::string prefix = corpusPrefix("saved_model_counter");
  REQUIRE_CORPUS(prefix);
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->keys(), (std::vector<std::string>{"counter"}));
  const BundleEntry *entry = reader->lookup("counter");
  ASSERT_NE(entry, nullptr);
  // Stored as a float scalar (DT_FLOAT), not an integer.
  EXPECT_EQ(entry->dtype, cleave::kFloat);
  EXPECT_TRUE(entry->shape.empty());
  auto counter = reader->read("counter");
  ASSERT_TRUE(bool(counter)) << llvm::toString(counter.takeError());
  std::printf("saved_model_counter: counter = %s\n",
              counter->toString().c_str());
  EXPECT_EQ(counter->toString(), "float [] 0");
}

/// Reads every tensor of `prefix` and writes them again, in the order of
/// their offsets, with BundleWriter; the files must match TensorFlow's.
void expectByteIdenticalRewrite(const std::string &prefix,
                                const std::string &outPrefix) {
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  ASSERT_EQ(reader->numShards(), 1);
  std::vector<std::string> keys = reader->allKeys();
  std::sort(keys.begin(), keys.end(), [&](auto &a, auto &b) {
    return std::make_pair(reader->lookup(a)->offset, a) <
           std::make_pair(reader->lookup(b)->offset, b);
  });
  // Compressed index blocks mean TensorFlow 1.0/1.1 wrote it.
  std::string index = readFile(indexFileName(prefix));
  size_t firstBlock = blockSizeAt(index, 0);
  BundleWriterOptions options;
  options.snappyIndex = index[firstBlock] == 1;
  BundleWriter writer(outPrefix, options);
  for (const std::string &key : keys) {
    const BundleEntry *entry = reader->lookup(key);
    if (!entry->slices.empty())
      continue; // written with its slices
    if (auto slice = decodeTensorNameSlice(key)) {
      const BundleEntry *full = reader->lookup(slice->first);
      auto t = reader->readSlice(slice->first, slice->second);
      ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
      ASSERT_FALSE(bool(
          writer.addSlice(slice->first, full->shape, slice->second, *t)));
      continue;
    }
    auto t = reader->read(key);
    ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
    ASSERT_FALSE(bool(writer.add(key, *t)));
  }
  ASSERT_FALSE(bool(writer.finish()));
  EXPECT_TRUE(readFile(indexFileName(outPrefix)) == index)
      << indexFileName(prefix) << " differs";
  EXPECT_TRUE(readFile(dataFileName(outPrefix, 0, 1)) ==
              readFile(dataFileName(prefix, 0, 1)))
      << dataFileName(prefix, 0, 1) << " differs";
}

TEST_F(CheckpointFiles, CorpusRewritesAreByteIdentical) {
  for (const char *model : {"saved_model_half_plus_two_cpu",
                            "saved_model_half_plus_three",
                            "saved_model_counter"}) {
    std::string prefix = corpusPrefix(model);
    REQUIRE_CORPUS(prefix);
    SCOPED_TRACE(model);
    expectByteIdenticalRewrite(prefix, path(model));
  }
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST_F(CheckpointFiles, EveryDtypeRoundTrips) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (int32_t dtype :
       {cleave::kFloat, cleave::kDouble, cleave::kInt32, cleave::kUInt8,
        cleave::kInt16, cleave::kInt8, cleave::kInt64, cleave::kBool,
        cleave::kUInt16, cleave::kUInt32, cleave::kUInt64}) {
    Tensor t(dtype, {2, 3});
    for (int64_t i = 0; i < 6; ++i)
      t.setFromDouble(i, dtype == cleave::kBool ? i % 2 : (i + 1) * 3);
    tensors.emplace_back(cleave::dtypeName(dtype) + "_matrix", t);
    tensors.emplace_back(cleave::dtypeName(dtype) + "_empty",
                         Tensor(dtype, {2, 0}));
    Tensor scalar(dtype, {});
    scalar.setFromDouble(0, 1);
    tensors.emplace_back(cleave::dtypeName(dtype) + "_scalar", scalar);
  }
  tensors.emplace_back("string_vector",
                       strings({4}, {"", "hello", std::string("\0\xff", 2),
                                     std::string(300, 'q')}));
  tensors.emplace_back("string_empty", strings({0}, {}));
  tensors.emplace_back("string_scalar", strings({}, {"just one"}));

  std::string prefix = path("all/model.ckpt-1");
  BundleWriter writer(prefix);
  for (const auto &[key, t] : tensors)
    ASSERT_FALSE(bool(writer.add(key, t))) << key;
  ASSERT_FALSE(bool(writer.finish()));

  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->keys().size(), tensors.size());
  for (const auto &[key, t] : tensors) {
    SCOPED_TRACE(key);
    auto back = reader->read(key);
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    expectSameTensor(*back, t);
  }
  // TensorFlow's string layout: an empty string tensor is its length
  // checksum alone.
  EXPECT_EQ(reader->lookup("string_empty")->size, 4);
}

TEST_F(CheckpointFiles, SlicedTensorsRoundTrip) {
  // A [4,3] float variable saved in two row partitions and a [2,4] string
  // variable saved in two column partitions.
  Tensor full = floats({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor top = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor bottom = floats({2, 3}, {6, 7, 8, 9, 10, 11});
  Tensor words = strings({2, 4}, {"a", "b", "c", "d", "e", "f", "g", "h"});
  std::string prefix = path("sliced");
  BundleWriter writer(prefix);
  auto spec = [](llvm::StringRef text) {
    return llvm::cantFail(TensorSliceSpec::parse(text));
  };
  ASSERT_FALSE(bool(writer.addSlice("w", {4, 3}, spec("2,2:-"), bottom)));
  ASSERT_FALSE(bool(writer.addSlice("w", {4, 3}, spec("0,2:-"), top)));
  ASSERT_FALSE(bool(writer.addSlice("words", {2, 4}, spec("-:0,1"),
                                    strings({2, 1}, {"a", "e"}))));
  ASSERT_FALSE(bool(writer.addSlice(
      "words", {2, 4}, spec("-:1,3"),
      strings({2, 3}, {"b", "c", "d", "f", "g", "h"}))));
  // A "slice" that is the whole tensor is stored as the tensor.
  ASSERT_FALSE(bool(writer.addSlice("whole", {2}, spec("0,2"),
                                    floats({2}, {5, 6}))));
  EXPECT_NE(errorText(writer.addSlice("w", {4, 3}, spec("0,2:-"), top))
                .find("tensor 'w': slice '0,2:-' was added before"),
            std::string::npos);
  EXPECT_NE(errorText(writer.addSlice("w", {4, 3}, spec("0,3:-"), top))
                .find("slice '0,3:-' has shape [3,3] but the tensor given "
                      "is [2,3]"),
            std::string::npos);
  ASSERT_FALSE(bool(writer.finish()));

  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->keys(), (std::vector<std::string>{"w", "whole", "words"}));
  EXPECT_EQ(reader->allKeys().size(), 7u);
  const BundleEntry *entry = reader->lookup("w");
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->slices.size(), 2u);
  EXPECT_EQ(entry->slices[0].toString(), "2,2:-");
  EXPECT_EQ(entry->slices[1].toString(), "0,2:-");
  auto w = reader->read("w");
  ASSERT_TRUE(bool(w)) << llvm::toString(w.takeError());
  expectSameTensor(*w, full);
  auto wordsBack = reader->read("words");
  ASSERT_TRUE(bool(wordsBack)) << llvm::toString(wordsBack.takeError());
  expectSameTensor(*wordsBack, words);
  auto part = reader->readSlice("w", spec("2,2:-"));
  ASSERT_TRUE(bool(part)) << llvm::toString(part.takeError());
  expectSameTensor(*part, bottom);
  EXPECT_TRUE(reader->lookup("whole")->slices.empty());
  EXPECT_EQ(errorText(reader->readSlice("w", spec("1,2:-"))),
            indexFileName(prefix) + ": tensor 'w': has no stored slice "
                                    "'1,2:-'");
}

TEST_F(CheckpointFiles, MergedShardsRoundTrip) {
  // Two workers write their own bundles; merging gives one two-shard
  // bundle, as MergeV2Checkpoints does.
  std::string part0 = path("tmp/part-0"), part1 = path("tmp/part-1");
  {
    BundleWriter w0(part0);
    ASSERT_FALSE(bool(w0.add("global_step", Tensor(cleave::kInt64, {}))));
    ASSERT_FALSE(bool(w0.addSlice(
        "emb", {4}, llvm::cantFail(TensorSliceSpec::parse("0,2")),
        floats({2}, {1, 2}))));
    ASSERT_FALSE(bool(w0.finish()));
    BundleWriter w1(part1);
    ASSERT_FALSE(bool(w1.add("bias", floats({2}, {7, 8}))));
    ASSERT_FALSE(bool(w1.addSlice(
        "emb", {4}, llvm::cantFail(TensorSliceSpec::parse("2,2")),
        floats({2}, {3, 4}))));
    ASSERT_FALSE(bool(w1.finish()));
  }
  std::string merged = path("model.ckpt-7");
  ASSERT_FALSE(bool(mergeBundles({part0, part1}, merged)));
  EXPECT_FALSE(llvm::sys::fs::exists(indexFileName(part0)));
  EXPECT_TRUE(llvm::sys::fs::exists(dataFileName(merged, 0, 2)));
  EXPECT_TRUE(llvm::sys::fs::exists(dataFileName(merged, 1, 2)));

  auto reader = BundleReader::open(merged);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->numShards(), 2);
  EXPECT_EQ(reader->lookup("bias")->shardId, 1);
  auto emb = reader->read("emb");
  ASSERT_TRUE(bool(emb)) << llvm::toString(emb.takeError());
  expectSameTensor(*emb, floats({4}, {1, 2, 3, 4}));
  auto bias = reader->read("bias");
  ASSERT_TRUE(bool(bias)) << llvm::toString(bias.takeError());
  expectSameTensor(*bias, floats({2}, {7, 8}));
}

TEST_F(CheckpointFiles, WriterIsAtomic) {
  std::string prefix = path("model");
  {
    BundleWriter writer(prefix);
    ASSERT_FALSE(bool(writer.add("x", floats({1}, {1}))));
    // Nothing under the final names until finish().
    for (const std::string &name : listing())
      EXPECT_NE(name.find(".tempstate"), std::string::npos) << name;
  } // abandoned: its temporary file goes too
  EXPECT_TRUE(listing().empty());

  BundleWriter writer(prefix);
  ASSERT_FALSE(bool(writer.add("x", floats({1}, {1}))));
  ASSERT_FALSE(bool(writer.finish()));
  EXPECT_EQ(listing(), (std::vector<std::string>{
                           "model.data-00000-of-00001", "model.index"}));
  EXPECT_EQ(errorText(writer.add("y", floats({1}, {1}))),
            indexFileName(prefix) + ": the bundle writer was finished "
                                    "already");
}

TEST_F(CheckpointFiles, WriterErrors) {
  BundleWriter writer(path("w"));
  EXPECT_EQ(errorText(writer.add("", floats({1}, {1}))),
            path("w.index") +
                ": the empty key is reserved for the bundle header");
  ASSERT_FALSE(bool(writer.add("x", floats({1}, {1}))));
  EXPECT_EQ(errorText(writer.add("x", floats({1}, {1}))),
            path("w.index") + ": duplicate tensor 'x'");
  EXPECT_EQ(errorText(writer.add("h", Tensor(19, {2}))),
            path("w.index") + ": tensor 'h': dtype half is not supported");
  ASSERT_FALSE(bool(writer.finish()));
}

//===----------------------------------------------------------------------===//
// Bad input
//===----------------------------------------------------------------------===//

TEST_F(CheckpointFiles, MissingIndex) {
  std::string prefix = path("nothing");
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            prefix + ".index: cannot read: No such file or directory");
}

TEST_F(CheckpointFiles, TruncatedIndex) {
  std::string prefix = writeSmallBundle();
  std::string index = readFile(indexFileName(prefix));
  writeFile(indexFileName(prefix), index.substr(0, 40));
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            indexFileName(prefix) +
                ": truncated table: 40 bytes, less than the 48-byte footer");
  writeFile(indexFileName(prefix), index.substr(0, index.size() - 10));
  EXPECT_NE(errorText(BundleReader::open(prefix))
                .find(indexFileName(prefix) +
                      ": not a TensorFlow table (bad footer magic"),
            std::string::npos);
}

TEST_F(CheckpointFiles, BadFooterMagic) {
  std::string prefix = writeSmallBundle();
  std::string index = readFile(indexFileName(prefix));
  index.back() = 0;
  writeFile(indexFileName(prefix), index);
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            indexFileName(prefix) +
                ": not a TensorFlow table (bad footer magic "
                "0x004775248b80fb57); the file may be truncated or not an "
                "index file");
}

TEST_F(CheckpointFiles, IndexBlockChecksumMismatch) {
  std::string prefix = writeSmallBundle();
  std::string index = readFile(indexFileName(prefix));
  index[index.find("alpha")] = 'A';
  writeFile(indexFileName(prefix), index);
  std::string text = errorText(BundleReader::open(prefix));
  EXPECT_NE(text.find(indexFileName(prefix) +
                      ": checksum mismatch in the data block at offset 0"),
            std::string::npos)
      << text;
}

TEST_F(CheckpointFiles, BadSnappyIndex) {
  BundleWriterOptions options;
  options.snappyIndex = true;
  std::string prefix = path("snappy");
  BundleWriter writer(prefix, options);
  for (int i = 0; i < 30; ++i)
    ASSERT_FALSE(bool(writer.add("dense/layer_" + std::to_string(10 + i),
                                 floats({1}, {float(i)}))));
  ASSERT_FALSE(bool(writer.finish()));
  std::string index = readFile(indexFileName(prefix));
  size_t dataSize = blockSizeAt(index, 0);
  ASSERT_EQ(index[dataSize], 1) << "the index should be compressed";
  ASSERT_TRUE(bool(BundleReader::open(prefix)));
  for (size_t i = 1; i < dataSize; ++i)
    index[i] = '\xff';
  resealBlock(index, 0, dataSize);
  writeFile(indexFileName(prefix), index);
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            indexFileName(prefix) +
                ": corrupt Snappy data in the data block at offset 0");
}

TEST_F(CheckpointFiles, IndexKeysOutOfOrder) {
  std::string prefix = writeSmallBundle();
  std::string index = readFile(indexFileName(prefix));
  size_t dataSize = blockSizeAt(index, 0);
  index[index.find("beta")] = 'B'; // "Beta" sorts before "alpha"
  resealBlock(index, 0, dataSize);
  writeFile(indexFileName(prefix), index);
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            indexFileName(prefix) +
                ": keys out of order: 'Beta' after 'alpha'");
}

TEST_F(CheckpointFiles, MissingDataShard) {
  std::string prefix = writeSmallBundle();
  ASSERT_FALSE(llvm::sys::fs::remove(dataFileName(prefix, 0, 1)));
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(errorText(reader->read("alpha")),
            dataFileName(prefix, 0, 1) +
                ": cannot open the data shard of tensor 'alpha': No such "
                "file or directory");
}

TEST_F(CheckpointFiles, DataChecksumMismatch) {
  std::string prefix = writeSmallBundle();
  std::string data = readFile(dataFileName(prefix, 0, 1));
  data[5] ^= 1; // inside alpha's 12 bytes
  data[data.size() - 1] = 'Z'; // beta's last string byte
  writeFile(dataFileName(prefix, 0, 1), data);
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  std::string text = errorText(reader->read("alpha"));
  EXPECT_NE(text.find(dataFileName(prefix, 0, 1) +
                      ": tensor 'alpha': checksum mismatch (stored"),
            std::string::npos)
      << text;
  text = errorText(reader->read("beta"));
  EXPECT_NE(text.find(dataFileName(prefix, 0, 1) +
                      ": tensor 'beta': checksum mismatch (stored"),
            std::string::npos)
      << text;
}

TEST_F(CheckpointFiles, EntrySizeDisagreesWithShape) {
  std::string prefix = writeSmallBundle();
  editEntry(prefix, "alpha",
            [](tensorflow::BundleEntryProto &e) { e.set_size(8); });
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(errorText(reader->read("alpha")),
            indexFileName(prefix) +
                ": tensor 'alpha': stored size 8 bytes disagrees with float "
                "[3] (3 elements of 4 bytes)");
  // A shape far too large for the file is refused before any allocation.
  editEntry(prefix, "alpha", [](tensorflow::BundleEntryProto &e) {
    e.mutable_shape()->mutable_dim(0)->set_size(int64_t(1) << 40);
    e.set_size(int64_t(1) << 42);
  });
  reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_NE(errorText(reader->read("alpha")).find("lie beyond the end of "
                                                  "the shard"),
            std::string::npos);
}

TEST_F(CheckpointFiles, EntryBeyondShard) {
  std::string prefix = writeSmallBundle();
  editEntry(prefix, "alpha",
            [](tensorflow::BundleEntryProto &e) { e.set_offset(100); });
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  size_t shardSize = readFile(dataFileName(prefix, 0, 1)).size();
  EXPECT_EQ(errorText(reader->read("alpha")),
            dataFileName(prefix, 0, 1) +
                ": tensor 'alpha': bytes [100, 112) lie beyond the end of "
                "the shard (" +
                std::to_string(shardSize) + " bytes)");
  editEntry(prefix, "alpha",
            [](tensorflow::BundleEntryProto &e) { e.set_shard_id(3); });
  reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(errorText(reader->read("alpha")),
            indexFileName(prefix) + ": tensor 'alpha': shard 3 does not "
                                    "exist (the bundle has 1)");
}

TEST_F(CheckpointFiles, BadStringData) {
  std::string prefix = writeSmallBundle();
  // beta is [varint 1][varint 2][4-byte checksum]["x"]["yz"] at offset 12.
  std::string data = readFile(dataFileName(prefix, 0, 1));
  data[13] = 9; // second length
  writeFile(dataFileName(prefix, 0, 1), data);
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_NE(errorText(reader->read("beta"))
                .find(": tensor 'beta': string lengths exceed the entry's 9 "
                      "bytes"),
            std::string::npos);
  data[13] = 2;
  data[14] ^= 0x10; // the length checksum
  writeFile(dataFileName(prefix, 0, 1), data);
  reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_NE(errorText(reader->read("beta"))
                .find(": tensor 'beta': checksum mismatch in the string "
                      "lengths"),
            std::string::npos);
}

TEST_F(CheckpointFiles, MissingTensor) {
  std::string prefix = writeSmallBundle();
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(reader->lookup("gamma"), nullptr);
  EXPECT_EQ(errorText(reader->read("gamma")),
            indexFileName(prefix) +
                ": tensor 'gamma' not found in the checkpoint");
}

TEST_F(CheckpointFiles, UnsupportedDtype) {
  std::string prefix = writeSmallBundle();
  editEntry(prefix, "alpha", [](tensorflow::BundleEntryProto &e) {
    e.set_dtype(tensorflow::DataType(14)); // DT_BFLOAT16
    e.set_size(6);
  });
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(errorText(reader->read("alpha")),
            indexFileName(prefix) +
                ": tensor 'alpha': dtype bfloat16 is not supported "
                "(Cleave's tensors cannot hold it)");
  // The other tensors stay readable.
  EXPECT_TRUE(bool(reader->read("beta")));
}

TEST_F(CheckpointFiles, UnparsableEntryAndBadSlices) {
  std::string prefix = writeSmallBundle();
  {
    auto table = TableReader::open(indexFileName(prefix));
    ASSERT_TRUE(bool(table));
    TableWriter writer;
    for (const auto &[k, v] : table->entries())
      ASSERT_FALSE(bool(writer.add(k, k == "beta" ? "\xff\xff\xff" : v)));
    writeFile(indexFileName(prefix), writer.finish());
  }
  EXPECT_EQ(errorText(BundleReader::open(prefix)),
            indexFileName(prefix) + ": tensor 'beta': unable to parse its "
                                    "entry");

  // Slices that do not cover the tensor.
  prefix = writeSmallBundle("partial");
  editEntry(prefix, "alpha", [](tensorflow::BundleEntryProto &e) {
    auto *extent = e.add_slices()->add_extent();
    extent->set_start(0);
    extent->set_length(2);
  });
  auto reader = BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  EXPECT_EQ(errorText(reader->read("alpha")),
            indexFileName(prefix) +
                ": tensor 'alpha': its slices cover 2 of its 3 elements");
}

TEST_F(CheckpointFiles, RandomCorruptionGivesErrorsNotCrashes) {
  // Flipped bytes and truncations anywhere in the index or the data: every
  // outcome is a tensor or an error (run under the sanitizers in CI).
  std::string prefix = path("fuzz");
  {
    BundleWriter writer(prefix);
    ASSERT_FALSE(bool(writer.add("alpha", floats({3}, {1, 2, 3}))));
    ASSERT_FALSE(bool(writer.add("beta", strings({2}, {"x", "yz"}))));
    ASSERT_FALSE(bool(writer.addSlice(
        "gamma", {4}, llvm::cantFail(TensorSliceSpec::parse("0,2")),
        floats({2}, {1, 2}))));
    ASSERT_FALSE(bool(writer.addSlice(
        "gamma", {4}, llvm::cantFail(TensorSliceSpec::parse("2,2")),
        floats({2}, {3, 4}))));
    ASSERT_FALSE(bool(writer.finish()));
  }
  const std::string index = readFile(indexFileName(prefix));
  const std::string data = readFile(dataFileName(prefix, 0, 1));
  std::mt19937 rng(2024);
  int errors = 0;
  for (int round = 0; round < 400; ++round) {
    std::string badIndex = index, badData = data;
    std::string &target = round % 3 == 2 ? badData : badIndex;
    if (round % 5 == 4) {
      target.resize(rng() % (target.size() + 1));
    } else {
      for (int flips = 1 + rng() % 3; flips > 0; --flips)
        target[rng() % target.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    writeFile(indexFileName(prefix), badIndex);
    writeFile(dataFileName(prefix, 0, 1), badData);
    auto reader = BundleReader::open(prefix);
    if (!reader) {
      EXPECT_FALSE(llvm::toString(reader.takeError()).empty());
      ++errors;
      continue;
    }
    for (const std::string &key : reader->allKeys()) {
      auto t = reader->read(key);
      if (!t) {
        EXPECT_FALSE(llvm::toString(t.takeError()).empty());
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 300);
}

//===----------------------------------------------------------------------===//
// The `checkpoint` state file
//===----------------------------------------------------------------------===//

TEST(CheckpointStateFile, ReadsTensorFlowsFile) {
  std::string dir =
      std::string(CLEAVE_CORPUS_DIR) + "/savedmodel/bad_half_plus_two/00000123";
  if (!llvm::sys::fs::exists(dir + "/checkpoint"))
    GTEST_SKIP() << "corpus not found: " << dir;
  auto state = readCheckpointState(dir);
  ASSERT_TRUE(bool(state)) << llvm::toString(state.takeError());
  ASSERT_TRUE(state->has_value());
  EXPECT_EQ((*state)->modelCheckpointPath,
            "/tmp/bad_half_plus_two/00000123/export");
  EXPECT_EQ((*state)->allModelCheckpointPaths,
            (std::vector<std::string>{"/tmp/bad_half_plus_two/00000123/export"}));
  // Printing gives TensorFlow's text back.
  EXPECT_EQ(printCheckpointState(**state), readFile(dir + "/checkpoint"));
}

TEST_F(CheckpointFiles, StateWriteAndRead) {
  auto none = readCheckpointState(dir);
  ASSERT_TRUE(bool(none)) << llvm::toString(none.takeError());
  EXPECT_FALSE(none->has_value());

  CheckpointState state;
  state.modelCheckpointPath = "model.ckpt-20";
  state.allModelCheckpointPaths = {"model.ckpt-10", "model.ckpt-20"};
  state.allModelCheckpointTimestamps = {1700000000.25, 1700000100.5};
  ASSERT_FALSE(bool(writeCheckpointState(dir, state)));
  EXPECT_EQ(listing(), (std::vector<std::string>{"checkpoint"}));
  EXPECT_EQ(readFile(path("checkpoint")),
            "model_checkpoint_path: \"model.ckpt-20\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-10\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
            "all_model_checkpoint_timestamps: 1700000000.25\n"
            "all_model_checkpoint_timestamps: 1700000100.5\n");
  auto back = readCheckpointState(dir);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->modelCheckpointPath, "model.ckpt-20");
  EXPECT_EQ((*back)->allModelCheckpointPaths, state.allModelCheckpointPaths);
  EXPECT_EQ((*back)->allModelCheckpointTimestamps,
            state.allModelCheckpointTimestamps);

  // No checkpoint files yet: nothing to restore.
  auto latest = latestCheckpoint(dir);
  ASSERT_TRUE(bool(latest)) << llvm::toString(latest.takeError());
  EXPECT_FALSE(latest->has_value());

  writeFile(path("checkpoint"), "model_checkpoint_path: oops\n");
  EXPECT_EQ(errorText(readCheckpointState(dir)),
            path("checkpoint") +
                ":1:24: Expected string, got: oops");
  state.modelCheckpointPath = "checkpoint";
  EXPECT_NE(errorText(writeCheckpointState(dir, state))
                .find("conflicts with the checkpoint state file"),
            std::string::npos);
}

TEST_F(CheckpointFiles, KeepsTheLastK) {
  // Five saves with max_to_keep=2, each a bundle plus a .meta file.
  for (int step = 1; step <= 5; ++step) {
    std::string name = "model.ckpt-" + std::to_string(step);
    BundleWriter writer(path(name));
    ASSERT_FALSE(bool(writer.add("step", floats({}, {float(step)}))));
    ASSERT_FALSE(bool(writer.finish()));
    writeFile(path(name + ".meta"), "meta");
    ASSERT_FALSE(bool(recordCheckpoint(dir, path(name), 2, 1000.0 + step)));
  }
  EXPECT_EQ(listing(),
            (std::vector<std::string>{
                "checkpoint", "model.ckpt-4.data-00000-of-00001",
                "model.ckpt-4.index", "model.ckpt-4.meta",
                "model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index",
                "model.ckpt-5.meta"}));
  auto state = readCheckpointState(dir);
  ASSERT_TRUE(bool(state) && state->has_value());
  EXPECT_EQ((*state)->modelCheckpointPath, path("model.ckpt-5"));
  EXPECT_EQ((*state)->allModelCheckpointPaths,
            (std::vector<std::string>{path("model.ckpt-4"),
                                      path("model.ckpt-5")}));
  EXPECT_EQ((*state)->allModelCheckpointTimestamps,
            (std::vector<double>{1004, 1005}));
  auto latest = latestCheckpoint(dir);
  ASSERT_TRUE(bool(latest)) << llvm::toString(latest.takeError());
  EXPECT_EQ(latest->value_or(""), path("model.ckpt-5"));
  auto reader = BundleReader::open(**latest);
  ASSERT_TRUE(bool(reader));
  EXPECT_EQ(readScalar(*reader, "step"), 5.0f);

  // Saving under an existing name moves it to the end; relative paths
  // resolve against the directory.
  ASSERT_FALSE(bool(recordCheckpoint(dir, "model.ckpt-4", 2, 2000)));
  state = readCheckpointState(dir);
  ASSERT_TRUE(bool(state) && state->has_value());
  EXPECT_EQ((*state)->allModelCheckpointPaths,
            (std::vector<std::string>{path("model.ckpt-5"), "model.ckpt-4"}));
  latest = latestCheckpoint(dir);
  ASSERT_TRUE(bool(latest));
  EXPECT_EQ(latest->value_or(""), path("model.ckpt-4"));
}

} // namespace
