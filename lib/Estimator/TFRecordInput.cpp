//===- TFRecordInput.cpp - TFRecord files of tf.train.Example -------------===//
//
// The input_fn most TensorFlow models have: tf.data.TFRecordDataset over
// files of serialized tf.train.Example protos, parsed with
// tf.io.parse_example and FixedLenFeature specs.
//
//===----------------------------------------------------------------------===//

#include "cleave/Estimator/Input.h"

#include "cleave/Checkpoint/TFRecord.h"
#include "cleave/Estimator/Job.h"
#include "cleave/tf/example.pb.h"
#include "cleave/tf/types.pb.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <type_traits>

using namespace cleave;
using namespace cleave::estimator;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// A FixedLenFeature spec resolved: the list kind it reads, the dtype of
/// what it gives, its elements per example.
struct FeatureColumn {
  const FixedLenFeature *spec;
  tensorflow::Feature::KindCase kind;
  int32_t readType, castType;
  int64_t elements = 1;
  // The values as the Examples hold them, by kind.
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};
} // namespace

static std::optional<int32_t> parseDType(llvm::StringRef name) {
  if (name == "float32" || name == "float")
    return kFloat;
  if (name == "float64" || name == "double")
    return kDouble;
  if (name == "int32")
    return kInt32;
  if (name == "int64")
    return kInt64;
  if (name == "string")
    return kString;
  return std::nullopt;
}

static llvm::StringRef kindName(tensorflow::Feature::KindCase kind) {
  switch (kind) {
  case tensorflow::Feature::kFloatList:
    return "float";
  case tensorflow::Feature::kInt64List:
    return "int64";
  case tensorflow::Feature::kBytesList:
    return "string";
  default:
    return "none";
  }
}

llvm::Expected<Examples>
estimator::readTFRecordExamples(const TFRecordFiles &spec,
                                llvm::ArrayRef<std::string> paths) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t f = 0; f < paths.size(); ++f) {
    auto bytes = readMaybeGzipped(paths[f]);
    if (!bytes)
      return bytes.takeError();
    files.emplace_back(f < size_t(spec.files_size()) ? spec.files(f) : paths[f],
                       std::move(*bytes));
  }
  return decodeTFRecordExamples(spec, files);
}

llvm::Expected<Examples> estimator::decodeTFRecordExamples(
    const TFRecordFiles &spec,
    llvm::ArrayRef<std::pair<std::string, std::string>> files) {
  if (spec.features().empty())
    return error("tfrecord: no features (features { key: \"x\" dtype: "
                 "\"float32\" shape: [784] })");
  std::vector<FeatureColumn> columns;
  for (const FixedLenFeature &feature : spec.features()) {
    FeatureColumn column;
    column.spec = &feature;
    auto read = parseDType(feature.dtype());
    if (!read || (*read != kFloat && *read != kInt64 && *read != kString))
      return error("tfrecord: feature '" + feature.key() + "': dtype '" +
                   feature.dtype() +
                   "': a tf.train.Example holds float32, int64 or string "
                   "(`cast` converts what it holds)");
    column.readType = *read;
    column.kind = *read == kFloat   ? tensorflow::Feature::kFloatList
                  : *read == kInt64 ? tensorflow::Feature::kInt64List
                                    : tensorflow::Feature::kBytesList;
    auto cast = feature.cast().empty() ? read : parseDType(feature.cast());
    if (!cast || ((*cast == kString) != (*read == kString)))
      return error("tfrecord: feature '" + feature.key() + "': cannot cast " +
                   feature.dtype() + " to '" + feature.cast() + "'");
    column.castType = *cast;
    for (int64_t d : feature.shape()) {
      if (d < 0)
        return error("tfrecord: feature '" + feature.key() +
                     "': FixedLenFeature needs a fully defined shape");
      column.elements *= d;
    }
    columns.push_back(std::move(column));
  }

  int64_t index = 0;
  for (const auto &[name, bytes] : files) {
    auto records = checkpoint::splitTFRecords(bytes, name);
    if (!records)
      return records.takeError();
    for (llvm::StringRef record : *records) {
      tensorflow::Example example;
      if (!example.ParseFromArray(record.data(), record.size()))
        return error("'" + name + "': record " + llvm::Twine(index) +
                     " is not a serialized tf.train.Example");
      // tf.io.parse_example's messages, the record in place of the name.
      std::string where = "'" + name + "': Name: <unknown>, ";
      const auto &features = example.features().feature();
      for (FeatureColumn &column : columns) {
        const FixedLenFeature &feature = *column.spec;
        auto it = features.find(feature.key());
        if (it == features.end() ||
            it->second.kind_case() == tensorflow::Feature::KIND_NOT_SET) {
          if (!feature.has_default_value())
            return error(where + "Feature: " + feature.key() +
                         " (data type: " + dtypeName(column.readType) +
                         ") is required but could not be found. (example " +
                         llvm::Twine(index) + ")");
          if (column.readType == kString)
            column.strings.resize(column.strings.size() + column.elements);
          else if (column.readType == kFloat)
            column.floats.insert(column.floats.end(), column.elements,
                                 float(feature.default_value()));
          else
            column.ints.insert(column.ints.end(), column.elements,
                               int64_t(feature.default_value()));
          continue;
        }
        const tensorflow::Feature &value = it->second;
        if (value.kind_case() != column.kind)
          return error(where + "Key: " + feature.key() +
                       ", Index: " + llvm::Twine(index) +
                       ".  Data types don't match. Data type: " +
                       kindName(value.kind_case()) +
                       " but expected type: " + dtypeName(column.readType));
        int64_t size = column.kind == tensorflow::Feature::kFloatList
                           ? value.float_list().value_size()
                       : column.kind == tensorflow::Feature::kInt64List
                           ? value.int64_list().value_size()
                           : value.bytes_list().value_size();
        if (size != column.elements) {
          std::string shape = "[";
          for (int i = 0; i < feature.shape_size(); ++i)
            shape += (i ? "," : "") + std::to_string(feature.shape(i));
          return error(where + "Key: " + feature.key() +
                       ", Index: " + llvm::Twine(index) + ".  Number of " +
                       kindName(column.kind) + " values != expected.  " +
                       "Values size: " + llvm::Twine(size) +
                       " but output shape: " + shape + "]");
        }
        if (column.kind == tensorflow::Feature::kFloatList)
          column.floats.insert(column.floats.end(),
                               value.float_list().value().begin(),
                               value.float_list().value().end());
        else if (column.kind == tensorflow::Feature::kInt64List)
          column.ints.insert(column.ints.end(),
                             value.int64_list().value().begin(),
                             value.int64_list().value().end());
        else
          column.strings.insert(column.strings.end(),
                                value.bytes_list().value().begin(),
                                value.bytes_list().value().end());
      }
      ++index;
    }
  }
  if (index == 0)
    return error("tfrecord: the files hold no records");

  Examples examples;
  examples.count = index;
  for (FeatureColumn &column : columns) {
    std::vector<int64_t> shape = {index};
    llvm::append_range(shape, column.spec->shape());
    Tensor tensor(column.castType, shape);
    // Each value in the input's dtype; a cast that cannot hold a value is
    // an error, not a wrap.
    auto cast = [&](const auto &values) -> llvm::Error {
      for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
        auto value = values[i];
        bool integral = std::is_integral_v<decltype(value)> ||
                        (double(value) == std::trunc(double(value)) &&
                         std::abs(double(value)) < 0x1p63);
        if ((column.castType == kInt64 && !integral) ||
            (column.castType == kInt32 &&
             (!integral || double(value) < INT32_MIN ||
              double(value) > INT32_MAX)))
          return error("tfrecord: feature '" + column.spec->key() +
                       "': value " +
                       (integral ? std::to_string(int64_t(value))
                                 : llvm::formatv("{0}", double(value)).str()) +
                       " of example " + llvm::Twine(i / column.elements) +
                       " does not fit " + dtypeName(column.castType));
        if (column.castType == kInt64)
          tensor.data<int64_t>()[i] = int64_t(value);
        else if (column.castType == kInt32)
          tensor.data<int32_t>()[i] = int32_t(value);
        else
          tensor.setFromDouble(i, double(value));
      }
      return llvm::Error::success();
    };
    if (column.castType == kString)
      tensor.strings() = std::move(column.strings);
    else if (llvm::Error failure = column.readType == kFloat
                                       ? cast(column.floats)
                                       : cast(column.ints))
      return std::move(failure);
    examples.columns.emplace_back(column.spec->key(), std::move(tensor));
  }
  return examples;
}
