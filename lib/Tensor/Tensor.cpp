//===- Tensor.cpp - host tensors ------------------------------------------===//

#include "cleave/Tensor/Tensor.h"
#include "cleave/Tensor/TensorList.h"

#include "cleave/Support/BufferPool.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <new>

using namespace cleave;

size_t cleave::dtypeSize(int32_t dtype) {
  switch (dtype) {
  case kFloat: case kInt32: case kUInt32: return 4;
  case kDouble: case kInt64: case kUInt64: return 8;
  case kInt16: case kUInt16: return 2;
  case kInt8: case kUInt8: case kBool: return 1;
  default: return 0;
  }
}

bool cleave::isFloatDType(int32_t dtype) {
  return dtype == kFloat || dtype == kDouble;
}

bool cleave::isUnsignedDType(int32_t dtype) {
  return dtype == kUInt8 || dtype == kUInt16 || dtype == kUInt32 ||
         dtype == kUInt64;
}

bool cleave::isIntegerDType(int32_t dtype) {
  switch (dtype) {
  case kInt8: case kInt16: case kInt32: case kInt64:
  case kUInt8: case kUInt16: case kUInt32: case kUInt64:
    return true;
  default:
    return false;
  }
}

std::string cleave::dtypeName(int32_t dtype) {
  switch (dtype) {
  case kFloat: return "float";
  case kDouble: return "double";
  case kInt32: return "int32";
  case kInt64: return "int64";
  case kInt16: return "int16";
  case kInt8: return "int8";
  case kUInt8: return "uint8";
  case kUInt16: return "uint16";
  case kUInt32: return "uint32";
  case kUInt64: return "uint64";
  case kBool: return "bool";
  case kString: return "string";
  case kResource: return "resource";
  case kVariant: return "variant";
  // TensorFlow's names for the dtypes Cleave holds no values of (a
  // checkpoint or graph may name them), so that errors read as
  // TensorFlow's do.
  case 8: return "complex64";
  case 11: return "qint8";
  case 12: return "quint8";
  case 13: return "qint32";
  case 14: return "bfloat16";
  case 15: return "qint16";
  case 16: return "quint16";
  case 18: return "complex128";
  case 19: return "half";
  default: return "dtype " + std::to_string(dtype);
  }
}

Tensor::Tensor(int32_t dtype, std::vector<int64_t> shape)
    : Tensor(Uninitialized(), dtype, std::move(shape)) {
  std::memset(buffer_.get(), 0, bytes_);
}

Tensor::Tensor(Uninitialized, int32_t dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  // A size that overflows is no size any allocator can give.
  int64_t n = 1, bytes = dtypeSize(dtype);
  auto fail = [&](int64_t asked) {
    throw TensorAllocationError(dtype, shape_, asked);
  };
  for (int64_t d : shape_)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      fail(-1);
  if (llvm::MulOverflow(bytes, n, bytes))
    fail(-1);
  // Strings, and resource handles (held as the resource's name).
  if (dtype == kString || dtype == kResource) {
    if (n > (int64_t(1) << 32))
      fail(bytes);
    strings_ = std::make_shared<std::vector<std::string>>(n);
  }
  if (dtype == kVariant) {
    if (n > (int64_t(1) << 32))
      fail(bytes);
    lists_ =
        std::make_shared<std::vector<std::shared_ptr<const TensorList>>>(n);
  }
  bytes_ = bytes;
  // From the pool: a step's tensors reuse the last step's blocks.
  char *block = static_cast<char *>(allocateBuffer(bytes_));
  if (!block)
    fail(bytes);
  buffer_ = std::shared_ptr<char>(block, releaseBuffer);
}

Tensor Tensor::uninitialized(int32_t dtype, std::vector<int64_t> shape) {
  return Tensor(Uninitialized(), dtype, std::move(shape));
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

double Tensor::getAsDouble(int64_t i) const {
  if (dtype_ == kBool)
    return data<bool>()[i] ? 1 : 0;
  double value = 0;
  visitNumeric(dtype_, [&](auto tag) {
    value = double(data<decltype(tag)>()[i]);
  });
  return value;
}

int64_t Tensor::getAsInt(int64_t i) const {
  if (dtype_ == kBool)
    return data<bool>()[i] ? 1 : 0;
  if (dtype_ == kFloat || dtype_ == kDouble)
    return int64_t(getAsDouble(i));
  int64_t value = 0;
  visitNumeric(dtype_, [&](auto tag) {
    value = int64_t(data<decltype(tag)>()[i]);
  });
  return value;
}

bool Tensor::setFromDouble(int64_t i, double v) {
  if (dtype_ == kBool) {
    data<bool>()[i] = v != 0;
    return true;
  }
  return visitNumeric(dtype_, [&](auto tag) {
    using T = decltype(tag);
    data<T>()[i] = T(v);
  });
}

/// How a variant element prints: TensorFlow's "<TensorList ...>" summary.
static std::string describeVariant(const TensorList *list) {
  if (!list)
    return "<empty variant>";
  std::string text = "<TensorList of " + std::to_string(list->items.size()) +
                     " " + dtypeName(list->elementDType);
  if (list->elementShape) {
    text += " [";
    for (auto [i, d] : llvm::enumerate(*list->elementShape))
      text += (i ? "," : "") + (d < 0 ? std::string("?") : std::to_string(d));
    text += "]";
  }
  return text + ">";
}

std::string Tensor::toString(int64_t maxElements) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << dtypeName(dtype_) << " [";
  llvm::interleave(shape_, os, ",");
  os << "] ";
  int64_t n = numElements();
  // Nested brackets like numpy, elided past maxElements.
  std::vector<int64_t> strides(shape_.size(), 1);
  for (int64_t d = int64_t(shape_.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape_[d + 1];
  auto element = [&](int64_t i) {
    if (dtype_ == kVariant)
      os << describeVariant(list(i));
    else if (dtype_ == kString)
      os << '"' << (*strings_)[i] << '"';
    else if (dtype_ == kBool)
      os << (data<bool>()[i] ? "true" : "false");
    else if (dtype_ == kFloat || dtype_ == kDouble)
      os << llvm::format("%g", getAsDouble(i));
    else if (dtype_ == kUInt64) // past int64's range: not through getAsInt
      os << data<uint64_t>()[i];
    else
      os << getAsInt(i);
  };
  if (shape_.empty()) {
    element(0);
    return out;
  }
  // Dimension d spans blocks of strides[d] * shape[d] elements.
  for (int64_t i = 0; i < n && i < maxElements; ++i) {
    for (size_t d = 0; d < shape_.size(); ++d)
      if (i % (strides[d] * shape_[d]) == 0)
        os << "[";
    element(i);
    int64_t closing = 0;
    for (size_t d = 0; d < shape_.size(); ++d)
      if ((i + 1) % (strides[d] * shape_[d]) == 0)
        ++closing;
    for (int64_t c = 0; c < closing; ++c)
      os << "]";
    if (i + 1 < n)
      os << ", ";
  }
  if (n > maxElements)
    os << "...";
  if (n == 0)
    os << "[]";
  return out;
}

std::string TensorAllocationError::message() const {
  std::string text = "OOM when allocating tensor with shape" +
                     shapeString(shape) + " and type " + dtypeName(dtype) +
                     " on /job:localhost/replica:0/task:0/device:CPU:0 by "
                     "allocator cpu (";
  if (bytes < 0)
    return text + "its size in bytes overflows 64 bits)";
  return text + std::to_string(bytes) + " bytes)";
}

std::string cleave::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") +
         (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

std::vector<int64_t> cleave::toInts(const Tensor &t) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.numElements(); ++i)
    values.push_back(t.getAsInt(i));
  return values;
}

std::string Tensor::toNumpyString(int64_t begin,
                                  llvm::ArrayRef<int64_t> shape) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (shape.empty()) {
    if (isFloatDType(dtype_))
      os << llvm::format("%g", getAsDouble(begin));
    else if (dtype_ == kString)
      os << "b'" << strings()[begin] << "'";
    else if (dtype_ == kBool)
      os << (getAsInt(begin) ? "True" : "False");
    else
      os << getAsInt(begin);
    return out;
  }
  int64_t inner = 1;
  for (int64_t d : shape.drop_front())
    inner *= d;
  os << "[";
  for (int64_t i = 0; i < shape[0]; ++i)
    os << (i ? " " : "") << toNumpyString(begin + i * inner, shape.drop_front());
  os << "]";
  return out;
}

