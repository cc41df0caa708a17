//===- InputTest.cpp - input_fn: readers, order, batches ------------------===//

#include "cleave/Estimator/Input.h"

#include "cleave/estimator/job.pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <set>

using namespace cleave;
using namespace cleave::estimator;

namespace {

/// An IDX file of uint8 `values` with dims `dims`, gzipped when asked.
std::string writeIdx(llvm::StringRef name, const std::vector<uint32_t> &dims,
                     const std::vector<uint8_t> &values, bool gzip) {
  std::string bytes = {0, 0, 0x08, char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(char((d >> shift) & 0xFF));
  bytes.append(values.begin(), values.end());
  llvm::SmallString<128> path;
  llvm::sys::fs::createTemporaryFile(name, gzip ? "gz" : "idx", path);
  if (gzip) {
    gzFile file = gzopen(path.c_str(), "wb");
    gzwrite(file, bytes.data(), bytes.size());
    gzclose(file);
  } else {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << bytes;
  }
  return std::string(path);
}

Examples counting(int64_t count) {
  Examples examples;
  examples.count = count;
  Tensor ids(kInt32, {count, 2});
  for (int64_t i = 0; i < count; ++i) {
    ids.data<int32_t>()[2 * i] = int32_t(i);
    ids.data<int32_t>()[2 * i + 1] = int32_t(100 + i);
  }
  examples.columns.emplace_back("id", ids);
  return examples;
}

TEST(InputTest, ReadsIdxPlainAndGzipped) {
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 3 * 2 * 2; ++i)
    pixels.push_back(uint8_t(i * 20));
  for (bool gzip : {false, true}) {
    auto tensor = readIdx(writeIdx("images", {3, 2, 2}, pixels, gzip));
    ASSERT_TRUE(bool(tensor)) << llvm::toString(tensor.takeError());
    EXPECT_EQ(tensor->dtype(), kUInt8);
    EXPECT_EQ(tensor->shape(), (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(tensor->getAsInt(11), 220);
  }
}

TEST(InputTest, RejectsBadIdx) {
  auto truncated = readIdx(writeIdx("short", {3, 2, 2}, {1, 2, 3}, true));
  ASSERT_FALSE(bool(truncated));
  EXPECT_NE(llvm::toString(truncated.takeError())
                .find("the IDX header says 12 elements of 1 bytes, the file "
                      "holds 3 bytes"),
            std::string::npos);
  auto missing = readIdx("/nonexistent/images.gz");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot open"),
            std::string::npos);
}

TEST(InputTest, EmptyIdxWhoseOtherDimensionsOverflow) {
  // No element (a dimension is 0), but the shape does not fit in int64:
  // an error, not a tensor that cannot be made (the estimator fuzzer).
  std::string bytes = {0, 0, 0x08, 4, 0, 0, 0, 0};
  for (int i = 0; i < 3; ++i)
    bytes += std::string("\x7f\xff\xff\xff", 4);
  auto tensor = decodeIdx(bytes, "empty.idx");
  ASSERT_FALSE(bool(tensor));
  EXPECT_EQ(llvm::toString(tensor.takeError()),
            "'empty.idx': IDX dimensions overflow");
}

TEST(InputTest, DatasetTransforms) {
  std::vector<uint8_t> pixels(4 * 4, 255), labels = {0, 2, 1, 2};
  Dataset spec;
  spec.mutable_idx()->set_images(writeIdx("images", {4, 2, 2}, pixels, true));
  spec.mutable_idx()->set_labels(writeIdx("labels", {4}, labels, true));
  spec.set_scale(1.0 / 255);
  spec.set_one_hot(3);
  auto examples = readDataset(spec, "", {"x", "y"});
  ASSERT_TRUE(bool(examples)) << llvm::toString(examples.takeError());
  const Tensor *x = examples->find("x");
  const Tensor *y = examples->find("y");
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->dtype(), kFloat);
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{4, 4}));
  EXPECT_FLOAT_EQ(x->getAsDouble(5), 1.0f);
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(y->getAsDouble(1 * 3 + 2), 1.0);
  EXPECT_EQ(y->getAsDouble(1 * 3 + 1), 0.0);

  spec.set_one_hot(2);
  auto outside = readDataset(spec, "", {"x", "y"});
  ASSERT_FALSE(bool(outside));
  EXPECT_EQ(llvm::toString(outside.takeError()),
            "one_hot: label 2 of example 1 is outside [0, 2)");
  spec.set_one_hot(0);
  spec.add_feature_shape(3);
  auto misfit = readDataset(spec, "", {"x", "y"});
  ASSERT_FALSE(bool(misfit));
  EXPECT_EQ(llvm::toString(misfit.takeError()),
            "feature_shape [3] does not fit input 'x' of shape [4,2,2]");
}

TEST(InputTest, EpochsArePermutationsAndDeterministic) {
  Examples examples = counting(10);
  BatchStream a(examples, 4, /*shuffle=*/true, 7, /*repeat=*/true, false);
  BatchStream b(examples, 4, true, 7, true, false);
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::set<int64_t> seen;
    for (int64_t i = 0; i < 10; ++i) {
      int64_t example = a.exampleAt(epoch * 10 + i);
      EXPECT_EQ(example, b.exampleAt(epoch * 10 + i));
      seen.insert(example);
    }
    EXPECT_EQ(seen.size(), 10u) << "epoch " << epoch;
  }
  // Another seed, another order.
  BatchStream c(examples, 4, true, 8, true, false);
  bool differs = false;
  for (int64_t i = 0; i < 10; ++i)
    differs |= a.exampleAt(i) != c.exampleAt(i);
  EXPECT_TRUE(differs);
}

TEST(InputTest, BatchKIsItsSliceOfTheSequence) {
  Examples examples = counting(10);
  BatchStream stream(examples, 4, true, 3, true, false);
  // Batch 2 holds items 8..11: the last two of epoch 0, the first two of
  // epoch 1; asked for first, it is the same as in order (a resumed run).
  std::optional<Batch> late = llvm::cantFail(stream.get(2));
  ASSERT_TRUE(late);
  for (int64_t row = 0; row < 4; ++row)
    EXPECT_EQ(late->columns[0].second.getAsInt(2 * row),
              stream.exampleAt(8 + row));
  // Replica r of R takes rows [rB/R, (r+1)B/R): the same examples in the
  // same order whatever R is.
  Tensor half = sliceRows(late->columns[0].second, 2, 4);
  EXPECT_EQ(half.getAsInt(0), stream.exampleAt(10));
  EXPECT_EQ(half.getAsInt(1), 100 + stream.exampleAt(10));
}

TEST(InputTest, LastBatchDroppedOrPadded) {
  Examples examples = counting(10);
  BatchStream dropped(examples, 4, false, 0, false, /*padLast=*/false);
  EXPECT_EQ(dropped.getBatchCount(), 2);
  EXPECT_FALSE(llvm::cantFail(dropped.get(2)));
  BatchStream padded(examples, 4, false, 0, false, /*padLast=*/true);
  EXPECT_EQ(padded.getBatchCount(), 3);
  std::optional<Batch> last = llvm::cantFail(padded.get(2));
  ASSERT_TRUE(last);
  EXPECT_EQ(last->validRows, 2);
  EXPECT_EQ(last->columns[0].second.getAsInt(2 * 3), 9);
  EXPECT_FALSE(llvm::cantFail(padded.get(3)));
}

TEST(InputTest, PrefetcherKeepsOrderAndEnds) {
  Examples examples = counting(10);
  BatchStream stream(examples, 3, false, 0, false, false);
  Prefetcher prefetcher(stream, 1, 2);
  std::optional<Batch> first = llvm::cantFail(prefetcher.next());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 1);
  EXPECT_EQ(first->columns[0].second.getAsInt(0), 3);
  std::optional<Batch> second = llvm::cantFail(prefetcher.next());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->index, 2);
  EXPECT_FALSE(llvm::cantFail(prefetcher.next()));
  EXPECT_FALSE(llvm::cantFail(prefetcher.next()));
}

TEST(InputTest, ABatchThatCannotBeAllocatedIsAnError) {
  // What the estimator fuzzer found: examples with an empty dimension
  // whose batch shape overflows, and a batch size no memory holds. Both
  // are errors from the input thread that name the feature, every time
  // after as well, not an abort.
  Examples empty;
  empty.count = 2;
  empty.columns.emplace_back("x", Tensor(kFloat, {2, int64_t(1) << 61, 0}));
  BatchStream overflowing(empty, 5, false, 0, true, false);
  Prefetcher prefetcher(overflowing, 0, 2);
  for (int i = 0; i < 2; ++i) {
    auto batch = prefetcher.next();
    ASSERT_FALSE(bool(batch));
    EXPECT_EQ(llvm::toString(batch.takeError()),
              "input: feature 'x': a batch of 5 examples: OOM when "
              "allocating tensor with shape[5,2305843009213693952,0] and "
              "type float on /job:localhost/replica:0/task:0/device:CPU:0 "
              "by allocator cpu (its size in bytes overflows 64 bits)");
  }
  Examples examples = counting(10);
  BatchStream huge(examples, int64_t(1) << 50, false, 0, true, false);
  auto batch = huge.get(0);
  ASSERT_FALSE(bool(batch));
  EXPECT_NE(llvm::toString(batch.takeError())
                .find("input: feature 'id': a batch of 1125899906842624 "
                      "examples: OOM when allocating tensor with "
                      "shape[1125899906842624,2]"),
            std::string::npos);
}

} // namespace
