//===- Input.h - input_fn: datasets read, shuffled and batched --*- C++ -*-===//
//
// What a TPUEstimator input_fn built with tf.data gives the training loop,
// for the readers a job names: IDX files (MNIST, Fashion-MNIST; gzipped or
// not) and .npy files, cast and scaled, reshaped, labels one-hot encoded,
// shuffled with a seed, repeated and cut into fixed-size batches.
//
// The order is deterministic and independent of the replica count: the
// examples form an endless sequence of epochs, epoch e in the order of
// its own seeded permutation, and global batch k is items [kB, (k+1)B) of
// that sequence; replica r of R takes rows [rB/R, (r+1)B/R) of it. A run
// resumed at global batch k (from global_step) sees the batches an
// uninterrupted run would.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ESTIMATOR_INPUT_H
#define CLEAVE_ESTIMATOR_INPUT_H

#include "cleave/Tensor/Tensor.h"

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cleave::estimator {

class Dataset;
class TFRecordFiles;

/// A dataset read whole: one tensor per key, examples along dimension 0.
struct Examples {
  std::vector<std::pair<std::string, Tensor>> columns;
  int64_t count = 0;

  const Tensor *find(llvm::StringRef key) const;
};

/// The keys the readers give their columns: IDX images go to
/// `featureKey`, IDX labels to `labelKey`; .npy files name their own.
struct InputKeys {
  std::string featureKey, labelKey;
};

/// Reads the dataset `spec` describes (paths relative to `baseDir`) and
/// applies its per-example transforms (cast, scale, reshape, one-hot).
/// Errors name the file and what is wrong with it.
llvm::Expected<Examples> readDataset(const Dataset &spec,
                                     llvm::StringRef baseDir,
                                     const InputKeys &keys);

/// The whole file, gunzipped when it starts with gzip's magic bytes.
/// Errors name the file.
llvm::Expected<std::string> readMaybeGzipped(llvm::StringRef path);

/// The Examples of TFRecord files (`tf.data.TFRecordDataset` then
/// `tf.io.parse_example` with the FixedLenFeature specs of `spec`), in file
/// order: one column per feature, examples along dimension 0, each of the
/// feature's shape, cast as the spec says. `files` holds each file's name
/// (for errors) and bytes (gunzipped); readTFRecordExamples reads them
/// from `paths`.
llvm::Expected<Examples> decodeTFRecordExamples(
    const TFRecordFiles &spec,
    llvm::ArrayRef<std::pair<std::string, std::string>> files);
llvm::Expected<Examples>
readTFRecordExamples(const TFRecordFiles &spec,
                     llvm::ArrayRef<std::string> paths);

/// Reads an IDX file (gzip-compressed or not) as a uint8 tensor (the
/// format's other element types as int32, float or double).
llvm::Expected<Tensor> readIdx(llvm::StringRef path);
/// The same for the bytes of an IDX file (gzipped or not); `path` names
/// them in errors.
llvm::Expected<Tensor> decodeIdx(llvm::StringRef bytes, llvm::StringRef path);

/// One global batch: the columns in the dataset's key order.
struct Batch {
  /// Global batch index since the start of training.
  int64_t index = 0;
  std::vector<std::pair<std::string, Tensor>> columns;
  /// Rows that hold real examples; the rest (a padded last batch) repeat
  /// the last one.
  int64_t validRows = 0;
};

/// The global batches of a dataset, in the order the header describes.
class BatchStream {
public:
  /// `padLast`: a last partial batch (no repeat) is padded to `batchSize`
  /// (prediction, as TPUEstimator pads); otherwise it is dropped.
  BatchStream(const Examples &examples, int64_t batchSize, bool shuffle,
              uint64_t seed, bool repeat, bool padLast);

  /// The batch with global index `index`, or nullopt past the end; an
  /// error names the feature whose batch cannot be allocated.
  llvm::Expected<std::optional<Batch>> get(int64_t index) const;
  /// Example number `position` of the endless (or single) sequence.
  int64_t exampleAt(int64_t position) const;
  /// Batches in one pass without repeat (nullopt with repeat).
  std::optional<int64_t> getBatchCount() const;

  int64_t getBatchSize() const { return batchSize; }

private:
  const Examples &examples;
  int64_t batchSize;
  bool shuffle, repeat, padLast;
  uint64_t seed;
  /// The permutation of each epoch drawn so far.
  mutable std::mutex permutationsMutex;
  mutable std::vector<std::vector<int64_t>> permutations;
};

/// Rows [begin, end) of every column of `batch` (a trainer's share of a
/// global batch); the valid rows are those of the share.
Batch sliceBatch(const Batch &batch, int64_t begin, int64_t end);

/// Rows [begin, end) of dimension `axis` of `tensor`.
Tensor sliceRows(const Tensor &tensor, int64_t begin, int64_t end,
                 int64_t axis = 0);

/// The tensors stacked along dimension 0 (they agree in dtype and in the
/// other dimensions).
Tensor concatRows(llvm::ArrayRef<Tensor> tensors);

/// Prepares the batches of a stream on a host thread, up to `depth` ahead
/// of the consumer, from `first` on.
class Prefetcher {
public:
  Prefetcher(const BatchStream &stream, int64_t first, int64_t depth);
  ~Prefetcher();
  /// The next batch in order; nullopt at the end of the input. The end,
  /// or the error that ended it, is what every later call returns.
  llvm::Expected<std::optional<Batch>> next();

private:
  void produce();

  /// A batch, the end (no batch, no error), or the error that ends it.
  struct Prepared {
    std::optional<Batch> batch;
    std::string error;
  };

  const BatchStream &stream;
  int64_t nextIndex;
  size_t depth;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Prepared> ready;
  bool stopping = false;
  std::thread worker;
};

} // namespace cleave::estimator

#endif // CLEAVE_ESTIMATOR_INPUT_H
