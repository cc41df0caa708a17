//===- Input.cpp - input_fn: datasets read, shuffled and batched ----------===//

#include "cleave/Estimator/Input.h"

#include "cleave/Tensor/Npy.h"
#include "cleave/estimator/job.pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <zlib.h>

#include <cstring>
#include <random>

using namespace cleave;
using namespace cleave::estimator;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

const Tensor *Examples::find(llvm::StringRef key) const {
  for (const auto &[name, tensor] : columns)
    if (name == key)
      return &tensor;
  return nullptr;
}

static std::string resolvePath(llvm::StringRef path, llvm::StringRef baseDir) {
  if (path.empty() || llvm::sys::path::is_absolute(path) || baseDir.empty())
    return path.str();
  llvm::SmallString<256> full(baseDir);
  llvm::sys::path::append(full, path);
  return std::string(full);
}

/// `bytes`, gunzipped when they start with gzip's magic bytes; `path`
/// names them in errors.
static llvm::Expected<std::string> maybeGunzip(llvm::StringRef bytes,
                                               llvm::StringRef path) {
  if (!bytes.starts_with("\x1f\x8b"))
    return bytes.str();
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    return error("cannot inflate '" + path + "'");
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  stream.avail_in = bytes.size();
  std::string out;
  char chunk[1 << 16];
  int status;
  do {
    stream.next_out = reinterpret_cast<Bytef *>(chunk);
    stream.avail_out = sizeof(chunk);
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) {
      std::string why = stream.msg ? stream.msg : "truncated data";
      inflateEnd(&stream);
      return error("'" + path + "' is not valid gzip data: " + why);
    }
    out.append(chunk, sizeof(chunk) - stream.avail_out);
  } while (status != Z_STREAM_END && stream.avail_in > 0);
  inflateEnd(&stream);
  if (status != Z_STREAM_END)
    return error("'" + path + "' is not valid gzip data: truncated data");
  return out;
}

llvm::Expected<std::string> estimator::readMaybeGzipped(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot open '" + path + "': " + buffer.getError().message());
  return maybeGunzip((*buffer)->getBuffer(), path);
}

llvm::Expected<Tensor> estimator::readIdx(llvm::StringRef path) {
  auto bytes = readMaybeGzipped(path);
  if (!bytes)
    return bytes.takeError();
  return decodeIdx(*bytes, path);
}

llvm::Expected<Tensor> estimator::decodeIdx(llvm::StringRef file,
                                            llvm::StringRef path) {
  auto bytes = maybeGunzip(file, path);
  if (!bytes)
    return bytes.takeError();
  const auto *data = reinterpret_cast<const unsigned char *>(bytes->data());
  auto bigEndian = [&](size_t offset) {
    return uint32_t(data[offset]) << 24 | uint32_t(data[offset + 1]) << 16 |
           uint32_t(data[offset + 2]) << 8 | uint32_t(data[offset + 3]);
  };
  if (bytes->size() < 4 || data[0] != 0 || data[1] != 0)
    return error("'" + path + "' is not an IDX file (no 0x0000 magic)");
  int32_t dtype;
  size_t elementSize;
  switch (data[2]) {
  case 0x08:
    dtype = kUInt8;
    elementSize = 1;
    break;
  case 0x09:
    dtype = kInt8;
    elementSize = 1;
    break;
  case 0x0B:
    dtype = kInt16;
    elementSize = 2;
    break;
  case 0x0C:
    dtype = kInt32;
    elementSize = 4;
    break;
  case 0x0D:
    dtype = kFloat;
    elementSize = 4;
    break;
  case 0x0E:
    dtype = kDouble;
    elementSize = 8;
    break;
  default:
    return error("'" + path + "': unknown IDX element type 0x" +
                 llvm::utohexstr(data[2]));
  }
  unsigned rank = data[3];
  if (rank == 0 || bytes->size() < 4 + 4 * size_t(rank))
    return error("'" + path + "': truncated IDX header");
  std::vector<int64_t> shape;
  // `count` elements; `nonzero`, the product of the dimensions that are
  // not 0, must fit too (a tensor's shape must, even when empty).
  uint64_t count = 1;
  int64_t nonzero = 1;
  for (unsigned i = 0; i < rank; ++i) {
    shape.push_back(bigEndian(4 + 4 * i));
    if (__builtin_mul_overflow(count, uint64_t(shape.back()), &count) ||
        (shape.back() &&
         __builtin_mul_overflow(nonzero, shape.back(), &nonzero)))
      return error("'" + path + "': IDX dimensions overflow");
  }
  size_t header = 4 + 4 * size_t(rank);
  if (count > (bytes->size() - header) / elementSize ||
      bytes->size() - header != count * elementSize)
    return error("'" + path + "': the IDX header says " + llvm::Twine(count) +
                 " elements of " + llvm::Twine(elementSize) +
                 " bytes, the file holds " +
                 llvm::Twine(bytes->size() - header) + " bytes");
  Tensor tensor(dtype, shape);
  // IDX stores multi-byte elements big-endian.
  const unsigned char *source = data + header;
  auto *target = reinterpret_cast<unsigned char *>(tensor.raw());
  for (uint64_t i = 0; i < count; ++i)
    for (size_t b = 0; b < elementSize; ++b)
      target[i * elementSize + b] =
          source[i * elementSize + (elementSize - 1 - b)];
  return tensor;
}

static llvm::Expected<Tensor> readNpyFile(llvm::StringRef path) {
  auto bytes = readMaybeGzipped(path);
  if (!bytes)
    return bytes.takeError();
  Tensor tensor;
  std::string why;
  if (!readNpy(*bytes, tensor, why))
    return error("'" + path + "': " + why);
  return tensor;
}

static Tensor castToFloat(const Tensor &tensor, double scale) {
  Tensor result(kFloat, tensor.shape());
  float *out = result.data<float>();
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    out[i] = float(tensor.getAsDouble(i) * scale);
  return result;
}

llvm::Expected<Examples> estimator::readDataset(const Dataset &spec,
                                                llvm::StringRef baseDir,
                                                const InputKeys &keys) {
  Examples examples;
  if (spec.has_idx()) {
    if (spec.idx().images().empty())
      return error("idx: no images file");
    auto images = readIdx(resolvePath(spec.idx().images(), baseDir));
    if (!images)
      return images.takeError();
    examples.columns.emplace_back(keys.featureKey, std::move(*images));
    if (!spec.idx().labels().empty()) {
      auto labels = readIdx(resolvePath(spec.idx().labels(), baseDir));
      if (!labels)
        return labels.takeError();
      if (labels->rank() != 1)
        return error("'" + spec.idx().labels() + "': labels of rank " +
                     llvm::Twine(labels->rank()) + ", expected 1");
      Tensor asInt(kInt32, labels->shape());
      for (int64_t i = 0, e = labels->numElements(); i < e; ++i)
        asInt.data<int32_t>()[i] = int32_t(labels->getAsInt(i));
      examples.columns.emplace_back(keys.labelKey, std::move(asInt));
    }
  } else if (spec.has_tfrecord()) {
    std::vector<std::string> paths;
    for (const std::string &file : spec.tfrecord().files())
      paths.push_back(resolvePath(file, baseDir));
    auto read = readTFRecordExamples(spec.tfrecord(), paths);
    if (!read)
      return read.takeError();
    examples = std::move(*read);
  } else if (spec.has_npy()) {
    for (const auto &file : spec.npy().file()) {
      auto tensor = readNpyFile(resolvePath(file.path(), baseDir));
      if (!tensor)
        return tensor.takeError();
      if (tensor->rank() == 0)
        return error("'" + file.path() +
                     "' holds a scalar: examples go along dimension 0");
      examples.columns.emplace_back(file.key(), std::move(*tensor));
    }
  }
  if (examples.columns.empty())
    return error("the dataset names no files (idx, npy or tfrecord)");

  examples.count = examples.columns.front().second.shape()[0];
  if (examples.count == 0)
    return error("input '" + examples.columns.front().first +
                 "' holds no examples");
  for (const auto &[key, tensor] : examples.columns)
    if (tensor.shape()[0] != examples.count)
      return error("input '" + key + "' holds " +
                   llvm::Twine(tensor.shape()[0]) + " examples, '" +
                   examples.columns.front().first + "' holds " +
                   llvm::Twine(examples.count));
  if (spec.take() > 0 && spec.take() < examples.count) {
    examples.count = spec.take();
    for (auto &[key, tensor] : examples.columns)
      tensor = sliceRows(tensor, 0, examples.count);
  }

  for (auto &[key, tensor] : examples.columns) {
    if (key == keys.featureKey) {
      if (spec.has_scale())
        tensor = castToFloat(tensor, spec.scale());
      std::vector<int64_t> shape = tensor.shape();
      if (spec.feature_shape_size()) {
        shape = {examples.count};
        llvm::append_range(shape, spec.feature_shape());
      } else if (spec.has_idx() && tensor.rank() > 2) {
        // Images as rows, as a dense layer takes them.
        shape = {examples.count, tensor.numElements() / examples.count};
      }
      int64_t elements = 1;
      for (int64_t d : shape)
        elements *= d;
      if (elements != tensor.numElements())
        return error("feature_shape " +
                     shapeString(llvm::ArrayRef<int64_t>(shape).drop_front()) +
                     " does not fit input '" + key + "' of shape " +
                     shapeString(tensor.shape()));
      tensor = tensor.reshaped(shape);
    } else if (key == keys.labelKey && spec.one_hot() > 0) {
      int64_t depth = spec.one_hot();
      if (tensor.rank() != 1)
        return error("one_hot: labels '" + key + "' have rank " +
                     llvm::Twine(tensor.rank()) + ", expected 1");
      Tensor encoded(kFloat, {examples.count, depth});
      for (int64_t i = 0; i < examples.count; ++i) {
        int64_t label = tensor.getAsInt(i);
        if (label < 0 || label >= depth)
          return error("one_hot: label " + llvm::Twine(label) + " of example " +
                       llvm::Twine(i) + " is outside [0, " +
                       llvm::Twine(depth) + ")");
        encoded.data<float>()[i * depth + label] = 1;
      }
      tensor = std::move(encoded);
    }
  }
  return examples;
}

Tensor estimator::sliceRows(const Tensor &tensor, int64_t begin, int64_t end,
                            int64_t axis) {
  std::vector<int64_t> shape = tensor.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  int64_t rows = shape[axis];
  shape[axis] = end - begin;
  Tensor result(tensor.dtype(), shape);
  size_t element = dtypeSize(tensor.dtype());
  size_t chunk = size_t(end - begin) * inner * element;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(result.raw() + o * chunk,
                tensor.raw() + (o * rows + begin) * inner * element, chunk);
  return result;
}

Tensor estimator::concatRows(llvm::ArrayRef<Tensor> tensors) {
  if (tensors.size() == 1)
    return tensors.front();
  std::vector<int64_t> shape = tensors.front().shape();
  shape[0] = 0;
  for (const Tensor &part : tensors)
    shape[0] += part.shape()[0];
  Tensor all(tensors.front().dtype(), shape);
  if (all.dtype() == kString) {
    size_t next = 0;
    for (const Tensor &part : tensors)
      for (const std::string &value : part.strings())
        all.strings()[next++] = value;
    return all;
  }
  size_t offset = 0;
  for (const Tensor &part : tensors) {
    std::memcpy(all.raw() + offset, part.raw(), part.byteSize());
    offset += part.byteSize();
  }
  return all;
}

BatchStream::BatchStream(const Examples &examples, int64_t batchSize,
                         bool shuffle, uint64_t seed, bool repeat, bool padLast)
    : examples(examples), batchSize(batchSize), shuffle(shuffle),
      repeat(repeat), padLast(padLast), seed(seed) {}

std::optional<int64_t> BatchStream::getBatchCount() const {
  if (repeat)
    return std::nullopt;
  return padLast ? (examples.count + batchSize - 1) / batchSize
                 : examples.count / batchSize;
}

int64_t BatchStream::exampleAt(int64_t position) const {
  int64_t count = examples.count;
  int64_t epoch = position / count, offset = position % count;
  if (!shuffle)
    return offset;
  std::lock_guard<std::mutex> lock(permutationsMutex);
  while (int64_t(permutations.size()) <= epoch) {
    // Fisher-Yates over a fully specified generator, so the order is the
    // same with every standard library; each epoch has its own stream.
    std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + permutations.size());
    std::vector<int64_t> order(count);
    for (int64_t i = 0; i < count; ++i)
      order[i] = i;
    for (int64_t i = count - 1; i > 0; --i) {
      uint64_t bound = uint64_t(i) + 1, limit = UINT64_MAX - UINT64_MAX % bound;
      uint64_t draw;
      do
        draw = random();
      while (draw >= limit);
      std::swap(order[i], order[draw % bound]);
    }
    permutations.push_back(std::move(order));
  }
  return permutations[epoch][offset];
}

llvm::Expected<std::optional<Batch>> BatchStream::get(int64_t index) const {
  int64_t first = index * batchSize;
  int64_t available = batchSize;
  if (!repeat) {
    if (first >= examples.count)
      return std::nullopt;
    available = std::min(batchSize, examples.count - first);
    if (available < batchSize && !padLast)
      return std::nullopt;
  }
  Batch batch;
  batch.index = index;
  batch.validRows = available;
  // Each column's tensor first: a batch size too large for memory (or for
  // int64) is the job's error, not an abort in the input thread.
  std::vector<size_t> rowBytes;
  size_t allRowBytes = 0;
  for (const auto &[key, column] : examples.columns) {
    std::vector<int64_t> shape = column.shape();
    rowBytes.push_back(column.byteSize() / std::max<int64_t>(1, shape[0]));
    allRowBytes += rowBytes.back();
    shape[0] = batchSize;
    try {
      batch.columns.emplace_back(key,
                                 Tensor::uninitialized(column.dtype(), shape));
    } catch (const TensorAllocationError &failure) {
      return error("input: feature '" + key + "': a batch of " +
                   llvm::Twine(batchSize) + " examples: " + failure.message());
    }
  }
  // Row by row (padding repeats the last example), so no per-row table as
  // large as the batch is needed; empty rows have nothing to copy.
  for (int64_t row = 0; allRowBytes && row < batchSize; ++row) {
    int64_t source = exampleAt(first + std::min(row, available - 1));
    for (size_t c = 0; c < rowBytes.size(); ++c)
      std::memcpy(batch.columns[c].second.raw() + row * rowBytes[c],
                  examples.columns[c].second.raw() + source * rowBytes[c],
                  rowBytes[c]);
  }
  return batch;
}

Batch estimator::sliceBatch(const Batch &batch, int64_t begin, int64_t end) {
  Batch share;
  share.index = batch.index;
  share.validRows =
      std::clamp<int64_t>(batch.validRows - begin, 0, end - begin);
  for (const auto &[key, column] : batch.columns)
    share.columns.emplace_back(key, sliceRows(column, begin, end));
  return share;
}

Prefetcher::Prefetcher(const BatchStream &stream, int64_t first, int64_t depth)
    : stream(stream), nextIndex(first), depth(std::max<int64_t>(1, depth)) {
  worker = std::thread([this] { produce(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  worker.join();
}

void Prefetcher::produce() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return stopping || ready.size() < depth; });
      if (stopping)
        return;
    }
    Prepared prepared;
    auto batch = stream.get(nextIndex++);
    if (batch)
      prepared.batch = std::move(*batch);
    else
      prepared.error = llvm::toString(batch.takeError());
    bool end = !prepared.batch;
    {
      std::lock_guard<std::mutex> lock(mutex);
      ready.push_back(std::move(prepared));
    }
    changed.notify_all();
    if (end)
      return;
  }
}

llvm::Expected<std::optional<Batch>> Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return !ready.empty(); });
  // The end, or the error, stays at the front for later calls.
  if (!ready.front().batch) {
    if (!ready.front().error.empty())
      return error(ready.front().error);
    return std::nullopt;
  }
  std::optional<Batch> batch = std::move(ready.front().batch);
  ready.pop_front();
  changed.notify_all();
  return batch;
}
