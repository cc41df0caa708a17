//===- Npy.cpp - NumPy .npy files as tensors ------------------------------===//

#include "cleave/Tensor/Npy.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <cstring>

using namespace cleave;

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

bool cleave::readNpy(llvm::StringRef bytes, Tensor &tensor,
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

bool cleave::isNpyDType(int32_t dtype) { return npyDescr(dtype) != nullptr; }

std::string cleave::writeNpy(const Tensor &tensor) {
  assert(isNpyDType(tensor.dtype()) && "no .npy descr for this dtype");
  std::string header = "{'descr': '";
  header += npyDescr(tensor.dtype());
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
