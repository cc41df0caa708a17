//===- Tensor.cpp - host tensors of the reference interpreter -------------===//

#include "cleave/Interpreter/Tensor.h"

#include "cleave/Support/BufferPool.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <new>

using namespace cleave::interp;

size_t cleave::interp::dtypeSize(int32_t dtype) {
  switch (dtype) {
  case kFloat: case kInt32: case kUInt32: return 4;
  case kDouble: case kInt64: case kUInt64: return 8;
  case kInt16: case kUInt16: return 2;
  case kInt8: case kUInt8: case kBool: return 1;
  default: return 0;
  }
}

std::string cleave::interp::dtypeName(int32_t dtype) {
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
  case 21: return "variant";
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
  for (int64_t d : shape_)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      throw std::bad_alloc();
  if (llvm::MulOverflow(bytes, n, bytes))
    throw std::bad_alloc();
  // Strings, and resource handles (held as the resource's name).
  if (dtype == kString || dtype == kResource) {
    if (n > (int64_t(1) << 32))
      throw std::bad_alloc();
    strings_ = std::make_shared<std::vector<std::string>>(n);
  }
  bytes_ = bytes;
  // From the pool: a step's tensors reuse the last step's blocks.
  char *block = static_cast<char *>(allocateBuffer(bytes_));
  if (!block)
    throw std::bad_alloc();
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
    if (dtype_ == kString)
      os << '"' << (*strings_)[i] << '"';
    else if (dtype_ == kBool)
      os << (data<bool>()[i] ? "true" : "false");
    else if (dtype_ == kFloat || dtype_ == kDouble)
      os << llvm::format("%g", getAsDouble(i));
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

std::string cleave::interp::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") +
         (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

static const char *npyDescr(int32_t dtype) {
  switch (dtype) {
  case kFloat: return "<f4";
  case kDouble: return "<f8";
  case kInt32: return "<i4";
  case kInt64: return "<i8";
  case kInt16: return "<i2";
  case kInt8: return "|i1";
  case kUInt8: return "|u1";
  case kUInt16: return "<u2";
  case kUInt32: return "<u4";
  case kUInt64: return "<u8";
  case kBool: return "|b1";
  default: return nullptr;
  }
}

bool cleave::interp::readNpy(llvm::StringRef bytes, Tensor &tensor,
                             std::string &error) {
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10) {
    error = "not a .npy file";
    return false;
  }
  uint8_t major = bytes[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8) |
                (uint8_t(bytes[10]) << 16) | (uint32_t(uint8_t(bytes[11])) << 24);
    offset = 12;
  }
  if (bytes.size() < offset + headerLen) {
    error = "truncated .npy header";
    return false;
  }
  llvm::StringRef header = bytes.substr(offset, headerLen);
  auto field = [&](llvm::StringRef key) {
    size_t at = header.find(("'" + key + "'").str());
    if (at == llvm::StringRef::npos)
      return llvm::StringRef();
    return header.drop_front(at + key.size() + 2).ltrim(" :");
  };
  llvm::StringRef descr = field("descr");
  if (!descr.consume_front("'")) {
    error = ".npy header has no descr";
    return false;
  }
  descr = descr.take_until([](char c) { return c == '\''; });
  int32_t dtype = 0;
  for (int32_t dt : {kFloat, kDouble, kInt32, kInt64, kInt16, kInt8, kUInt8,
                     kUInt16, kUInt32, kUInt64, kBool})
    if (descr == npyDescr(dt) ||
        (descr.size() == 3 && descr.drop_front() ==
                                  llvm::StringRef(npyDescr(dt)).drop_front() &&
         dtypeSize(dt) == 1))
      dtype = dt;
  if (!dtype) {
    error = "unsupported .npy dtype '" + descr.str() + "'";
    return false;
  }
  if (field("fortran_order").starts_with("True")) {
    error = "Fortran-ordered .npy files are not supported";
    return false;
  }
  llvm::StringRef shapeText = field("shape");
  if (!shapeText.consume_front("(")) {
    error = ".npy header has no shape";
    return false;
  }
  shapeText = shapeText.take_until([](char c) { return c == ')'; });
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  shapeText.split(parts, ',', -1, false);
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0) {
      error = "malformed .npy shape";
      return false;
    }
    shape.push_back(d);
  }
  // The payload's size is checked before anything is allocated: the shape
  // is the file's word, the bytes are what is there.
  int64_t needed = dtypeSize(dtype);
  for (int64_t d : shape)
    if (llvm::MulOverflow(needed, d, needed)) {
      error = "malformed .npy shape: too many elements";
      return false;
    }
  llvm::StringRef payload = bytes.drop_front(offset + headerLen);
  if (payload.size() != uint64_t(needed)) {
    error = ".npy payload has " + std::to_string(payload.size()) +
            " bytes, the shape needs " + std::to_string(needed);
    return false;
  }
  tensor = Tensor(dtype, shape);
  if (!payload.empty()) // an empty tensor has no buffer to copy into
    std::memcpy(tensor.raw(), payload.data(), payload.size());
  return true;
}

std::string cleave::interp::writeNpy(const Tensor &tensor) {
  std::string header = "{'descr': '";
  header += npyDescr(tensor.dtype()) ? npyDescr(tensor.dtype()) : "|V1";
  header += "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < tensor.shape().size(); ++d)
    header += (d ? ", " : "") + std::to_string(tensor.shape()[d]);
  if (tensor.rank() == 1)
    header += ","; // a 1-tuple, as Python writes it
  header += "), }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(tensor.raw(), tensor.byteSize());
  return out;
}
