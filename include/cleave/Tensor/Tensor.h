//===- Tensor.h - host tensors ----------------------------------*- C++ -*-===//
//
// A dense, immutable-by-convention tensor: a TensorFlow dtype, a shape and a
// shared buffer. Copies share the buffer; kernels build new tensors. The
// value type every layer above shares: the interpreter, checkpoints, the
// runtime and compiled code's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TENSOR_TENSOR_H
#define CLEAVE_TENSOR_TENSOR_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace cleave {

struct TensorList;

/// DataType enum values Cleave holds values of (types.proto).
enum DType : int32_t {
  kFloat = 1, kDouble = 2, kInt32 = 3, kUInt8 = 4, kInt16 = 5, kInt8 = 6,
  kString = 7, kInt64 = 9, kBool = 10, kUInt16 = 17, kUInt32 = 22,
  kUInt64 = 23, kResource = 20, kVariant = 21,
};

/// Bytes per element, 0 for dtypes Cleave holds no values of.
size_t dtypeSize(int32_t dtype);

/// Calls `fn(T{})` with the C++ element type of a numeric dtype (bool is
/// not numeric here); false for other dtypes. The one dtype switch that
/// element access and the kernels share.
template <typename Fn> bool visitNumeric(int32_t dtype, Fn &&fn) {
  switch (dtype) {
  case kFloat: fn(float{}); return true;
  case kDouble: fn(double{}); return true;
  case kInt32: fn(int32_t{}); return true;
  case kInt64: fn(int64_t{}); return true;
  case kInt16: fn(int16_t{}); return true;
  case kInt8: fn(int8_t{}); return true;
  case kUInt8: fn(uint8_t{}); return true;
  case kUInt16: fn(uint16_t{}); return true;
  case kUInt32: fn(uint32_t{}); return true;
  case kUInt64: fn(uint64_t{}); return true;
  default: return false;
  }
}
/// float and double.
bool isFloatDType(int32_t dtype);
/// The unsigned integer dtypes.
bool isUnsignedDType(int32_t dtype);
/// The integer dtypes, signed and unsigned (not bool).
bool isIntegerDType(int32_t dtype);

/// TensorFlow's name ("float", "int32") for messages.
std::string dtypeName(int32_t dtype);

/// What a tensor's constructor throws when its buffer cannot be had: the
/// memory is short, or the size overflows. Kernels and compiled code let it
/// pass; whoever runs them turns it into the node's error, TensorFlow's
/// ResourceExhausted ("OOM when allocating tensor with shape[...]").
class TensorAllocationError : public std::bad_alloc {
public:
  TensorAllocationError(int32_t dtype, std::vector<int64_t> shape,
                        int64_t bytes)
      : dtype(dtype), shape(std::move(shape)), bytes(bytes) {}
  const char *what() const noexcept override {
    return "cannot allocate a tensor";
  }
  /// TensorFlow's message, with the bytes asked for (or that their count
  /// overflows).
  std::string message() const;

  int32_t dtype;
  std::vector<int64_t> shape;
  /// -1 when the size overflows int64.
  int64_t bytes;
};

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor (empty strings for DT_STRING).
  Tensor(int32_t dtype, std::vector<int64_t> shape);
  /// A tensor whose elements are to be written (by compiled code); strings
  /// are empty.
  static Tensor uninitialized(int32_t dtype, std::vector<int64_t> shape);

  int32_t dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return shape_.size(); }
  int64_t numElements() const;
  bool isValid() const { return dtype_ != 0; }

  template <typename T> T *data() { return reinterpret_cast<T *>(raw()); }
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(raw());
  }
  char *raw() { return buffer_.get(); }
  const char *raw() const { return buffer_.get(); }
  size_t byteSize() const { return bytes_; }
  std::vector<std::string> &strings() { return *strings_; }
  const std::vector<std::string> &strings() const { return *strings_; }
  /// Element i of a DT_VARIANT tensor: the TensorList it holds, or null
  /// (cleave/Tensor/TensorList.h; lists are values, shared when copied).
  const TensorList *list(int64_t i) const { return (*lists_)[i].get(); }
  std::shared_ptr<const TensorList> sharedList(int64_t i) const {
    return (*lists_)[i];
  }
  void setList(int64_t i, std::shared_ptr<const TensorList> list) {
    (*lists_)[i] = std::move(list);
  }

  /// The same elements with another shape of equal size.
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// Element i converted to double (numeric dtypes only).
  double getAsDouble(int64_t i) const;
  /// Element i converted to int64 (integer and bool dtypes).
  int64_t getAsInt(int64_t i) const;
  /// Sets element i of a numeric or bool tensor, converting from double;
  /// false for other dtypes.
  bool setFromDouble(int64_t i, double value);

  /// "[2,3]" style shape and values as numpy prints them, e.g.
  /// "float [2,2] [[1, 2], [3, 4]]".
  std::string toString(int64_t maxElements = 64) const;
  /// The elements from flat index `begin` in the layout of `shape`, as
  /// numpy's str() prints an array: "[0.5 1]", "[[1 2] [3 4]]", a scalar
  /// bare (strings as b'...').
  std::string toNumpyString(int64_t begin, llvm::ArrayRef<int64_t> shape) const;
  /// The whole tensor so.
  std::string toNumpyString() const { return toNumpyString(0, shape_); }

private:
  int32_t dtype_ = 0;
  std::vector<int64_t> shape_;
  struct Uninitialized {};
  Tensor(Uninitialized, int32_t dtype, std::vector<int64_t> shape);

  /// The elements, 64-byte aligned, from the buffer pool; shared by copies
  /// of the tensor.
  std::shared_ptr<char> buffer_;
  size_t bytes_ = 0;
  std::shared_ptr<std::vector<std::string>> strings_;
  std::shared_ptr<std::vector<std::shared_ptr<const TensorList>>> lists_;
};

/// "[2,?,3]" as TensorFlow prints shapes in messages (negative dims, and
/// MLIR's dynamic size, print as "?").
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Elements of `t` as int64 (integer tensors), for shapes and axes.
std::vector<int64_t> toInts(const Tensor &t);

/// NumPy broadcasting of two shapes; false when incompatible.
bool broadcastShape(const std::vector<int64_t> &a,
                    const std::vector<int64_t> &b, std::vector<int64_t> &out);

} // namespace cleave

#endif // CLEAVE_TENSOR_TENSOR_H
