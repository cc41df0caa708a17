//===- AttrConversion.cpp - AttrValue, TensorProto and shapes -------------===//
//
// AttrValue <-> MLIR attribute, TensorShapeProto <-> #graph.shape and
// TensorProto <-> #graph.tensor. Every conversion is exact in both
// directions: what cannot be reproduced from a decoded form is kept raw.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MathExtras.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
namespace tf = tensorflow;

/// Largest tensor (in bytes) the importer expands from a few typed values
/// (TensorFlow's compact form: the last value repeats). One value is a
/// splat and never expanded; several that must fill more than this are an
/// error, so that a tiny proto cannot make the importer build gigabytes
/// (the passes fuzzer's 1-GB quint8 constant took 5 s).
static constexpr int64_t kMaxExpandedTensorBytes = int64_t(1) << 27;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

ShapeAttr graphdef::importShape(const tf::TensorShapeProto &shape,
                                MLIRContext *ctx, std::string &error) {
  SmallVector<int64_t> dims;
  dims.reserve(shape.dim_size());
  bool hasNames = false;
  for (const auto &dim : shape.dim()) {
    if (dim.size() < -1) {
      error = "invalid dimension " + std::to_string(dim.size()) +
              " in shape (sizes must be >= -1)";
      return {};
    }
    dims.push_back(dim.size());
    hasNames |= !dim.name().empty();
  }
  if (shape.unknown_rank() && !dims.empty()) {
    error = "shape has unknown_rank set and also lists dimensions";
    return {};
  }
  // TensorFlow's TensorShape checks: at most 254 dimensions, and an element
  // count that fits int64 (up to the first unknown dimension).
  auto shapeText = [&] {
    std::string text = "[";
    for (auto [i, d] : llvm::enumerate(dims))
      text += (i ? "," : "") + (d < 0 ? std::string("?") : std::to_string(d));
    return text + "]";
  };
  if (dims.size() > 254) {
    error = "Shape " + shapeText() + " has too many dimensions";
    return {};
  }
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 0)
      break;
    if (llvm::MulOverflow(elements, d, elements)) {
      error = "Shape " + shapeText() +
              " is too large (more than 2**63 - 1 entries)";
      return {};
    }
  }
  ArrayAttr names;
  if (hasNames) {
    SmallVector<Attribute> nameAttrs;
    for (const auto &dim : shape.dim())
      nameAttrs.push_back(StringAttr::get(ctx, dim.name()));
    names = ArrayAttr::get(ctx, nameAttrs);
  }
  return ShapeAttr::get(ctx, dims, shape.unknown_rank(), names);
}

void graphdef::exportShape(ShapeAttr shape, tf::TensorShapeProto &proto) {
  if (shape.getUnknownRank())
    proto.set_unknown_rank(true);
  ArrayAttr names = shape.getNames();
  for (auto [i, size] : llvm::enumerate(shape.getDims())) {
    auto *dim = proto.add_dim();
    dim->set_size(size);
    if (names && i < names.size())
      dim->set_name(cast<StringAttr>(names[i]).getValue().str());
  }
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace {
/// How elements of a dtype are held in TensorProto's typed fields.
enum class Field {
  None, Float, Double, Int, Int64, Bool, String, SComplex, DComplex, Half,
  UInt32, UInt64, Float8
};
} // namespace

static Field getValueField(int32_t dt) {
  switch (dt) {
  case tf::DT_FLOAT: return Field::Float;
  case tf::DT_DOUBLE: return Field::Double;
  case tf::DT_INT32: case tf::DT_INT16: case tf::DT_INT8: case tf::DT_UINT8:
  case tf::DT_UINT16: case tf::DT_QINT8: case tf::DT_QUINT8:
  case tf::DT_QINT16: case tf::DT_QUINT16: case tf::DT_QINT32:
  case tf::DT_INT4: case tf::DT_UINT4: case tf::DT_INT2: case tf::DT_UINT2:
    return Field::Int;
  case tf::DT_INT64: return Field::Int64;
  case tf::DT_BOOL: return Field::Bool;
  case tf::DT_STRING: return Field::String;
  case tf::DT_COMPLEX64: return Field::SComplex;
  case tf::DT_COMPLEX128: return Field::DComplex;
  case tf::DT_HALF: case tf::DT_BFLOAT16: return Field::Half;
  case tf::DT_UINT32: return Field::UInt32;
  case tf::DT_UINT64: return Field::UInt64;
  case tf::DT_FLOAT8_E5M2: case tf::DT_FLOAT8_E4M3FN:
  case tf::DT_FLOAT8_E4M3FNUZ: case tf::DT_FLOAT8_E4M3B11FNUZ:
  case tf::DT_FLOAT8_E5M2FNUZ:
    return Field::Float8;
  default: return Field::None;
  }
}

/// Bytes per element in a DenseElementsAttr raw buffer (and in
/// tensor_content) for the storage type; 0 for bool and string, which are
/// handled separately.
static size_t getElementBytes(Type storage) {
  if (auto complex = dyn_cast<ComplexType>(storage))
    return 2 * getElementBytes(complex.getElementType());
  if (storage.isInteger(1) || isa<StringType>(storage))
    return 0;
  return (storage.getIntOrFloatBitWidth() + 7) / 8;
}

static bool isSignedInt(Type storage) {
  auto it = dyn_cast<IntegerType>(storage);
  return it && !it.isUnsigned();
}

/// Number of typed values in the proto's field for `field`.
static int64_t countTypedValues(const tf::TensorProto &t, Field field) {
  switch (field) {
  case Field::Float: return t.float_val_size();
  case Field::Double: return t.double_val_size();
  case Field::Int: return t.int_val_size();
  case Field::Int64: return t.int64_val_size();
  case Field::Bool: return t.bool_val_size();
  case Field::String: return t.string_val_size();
  case Field::SComplex: return t.scomplex_val_size() / 2;
  case Field::DComplex: return t.dcomplex_val_size() / 2;
  case Field::Half: return t.half_val_size();
  case Field::UInt32: return t.uint32_val_size();
  case Field::UInt64: return t.uint64_val_size();
  case Field::Float8: return t.float8_val().size();
  case Field::None: return 0;
  }
  return 0;
}

/// Writes typed value `i` of the proto into `out` (elementBytes wide).
static void readTypedValue(const tf::TensorProto &t, Field field, int64_t i,
                           size_t elementBytes, char *out) {
  auto store = [&](auto v) {
    // Little-endian truncation to the element width.
    uint64_t bits = 0;
    static_assert(sizeof(v) <= 8);
    std::memcpy(&bits, &v, sizeof(v));
    std::memcpy(out, &bits, elementBytes);
  };
  switch (field) {
  case Field::Float: store(t.float_val(i)); break;
  case Field::Double: store(t.double_val(i)); break;
  case Field::Int: store(int64_t(t.int_val(i))); break;
  case Field::Int64: store(t.int64_val(i)); break;
  case Field::Half: store(uint16_t(t.half_val(i))); break;
  case Field::UInt32: store(t.uint32_val(i)); break;
  case Field::UInt64: store(t.uint64_val(i)); break;
  case Field::Float8: out[0] = t.float8_val()[i]; break;
  case Field::SComplex: {
    float parts[2] = {t.scomplex_val(2 * i), t.scomplex_val(2 * i + 1)};
    std::memcpy(out, parts, sizeof(parts));
    break;
  }
  case Field::DComplex: {
    double parts[2] = {t.dcomplex_val(2 * i), t.dcomplex_val(2 * i + 1)};
    std::memcpy(out, parts, sizeof(parts));
    break;
  }
  default: break;
  }
}

/// Appends element `data` (elementBytes wide) to the proto's typed field.
static void writeTypedValue(tf::TensorProto &t, Field field, const char *data,
                            size_t elementBytes, bool isSigned) {
  auto load = [&]() {
    uint64_t bits = 0;
    std::memcpy(&bits, data, elementBytes);
    if (isSigned && elementBytes < 8 &&
        (bits >> (8 * elementBytes - 1)) & 1)
      bits |= ~uint64_t(0) << (8 * elementBytes);
    return bits;
  };
  switch (field) {
  case Field::Float: {
    float v;
    std::memcpy(&v, data, 4);
    t.add_float_val(v);
    break;
  }
  case Field::Double: {
    double v;
    std::memcpy(&v, data, 8);
    t.add_double_val(v);
    break;
  }
  case Field::Int: t.add_int_val(int32_t(load())); break;
  case Field::Int64: t.add_int64_val(int64_t(load())); break;
  case Field::Half: t.add_half_val(int32_t(load())); break;
  case Field::UInt32: t.add_uint32_val(uint32_t(load())); break;
  case Field::UInt64: t.add_uint64_val(load()); break;
  case Field::Float8: t.mutable_float8_val()->push_back(data[0]); break;
  case Field::SComplex: {
    float parts[2];
    std::memcpy(parts, data, sizeof(parts));
    t.add_scomplex_val(parts[0]);
    t.add_scomplex_val(parts[1]);
    break;
  }
  case Field::DComplex: {
    double parts[2];
    std::memcpy(parts, data, sizeof(parts));
    t.add_dcomplex_val(parts[0]);
    t.add_dcomplex_val(parts[1]);
    break;
  }
  default: break;
  }
}

/// Decodes TensorFlow's string-list encoding: N varint32 lengths, then the
/// concatenated bytes.
static bool decodeStringContent(llvm::StringRef content, int64_t n,
                                SmallVectorImpl<StringRef> &out) {
  SmallVector<uint32_t> lengths;
  size_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    int shift = 0;
    while (true) {
      if (pos >= content.size() || shift > 28)
        return false;
      uint8_t byte = content[pos++];
      len |= uint32_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        break;
      shift += 7;
    }
    lengths.push_back(len);
  }
  for (uint32_t len : lengths) {
    if (content.size() - pos < len)
      return false;
    out.push_back(content.substr(pos, len));
    pos += len;
  }
  return pos == content.size();
}

static void encodeStringContent(ArrayRef<StringRef> values, std::string &out) {
  for (StringRef v : values) {
    uint32_t len = v.size();
    do {
      uint8_t byte = len & 0x7f;
      len >>= 7;
      out.push_back(char(byte | (len ? 0x80 : 0)));
    } while (len);
  }
  for (StringRef v : values)
    out.append(v.data(), v.size());
}

static std::string serialize(const google::protobuf::Message &message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

namespace {
/// Why a TensorProto has no dense value. Only some reasons are errors: the
/// others just mean the proto is kept as raw bytes.
struct DecodeFailure {
  enum Kind { NotDense, SizeMismatch, TooLarge } kind = NotDense;
  std::string message;
};
} // namespace

/// Decodes the value of `t` into a dense attribute of `storage` elements, or
/// returns null (with `why` set) when the proto does not describe one.
/// Why `count` values (the last one repeating) are not expanded to `n`.
static std::string tooManyToExpand(int64_t count, int64_t n) {
  return "its " + std::to_string(count) + " values would be repeated to " +
         std::to_string(n) + " elements, past the " +
         std::to_string(kMaxExpandedTensorBytes) +
         " bytes Cleave expands (one value is kept as a splat of any size)";
}

static ElementsAttr decodeTensorValue(const tf::TensorProto &t, Type storage,
                                      ShapeAttr shape, int64_t &encoding,
                                      DecodeFailure &why) {
  auto fail = [&](DecodeFailure::Kind kind, std::string message) {
    why = {kind, std::move(message)};
    return ElementsAttr();
  };
  int64_t n = shape.getNumElements();
  if (n < 0) {
    return fail(DecodeFailure::NotDense,
                "its shape is not fully defined or too large");
  }
  Field field = getValueField(t.dtype());
  if (field == Field::None) {
    return fail(DecodeFailure::NotDense,
                "its dtype has no dense representation");
  }
  auto type = RankedTensorType::get(shape.getDims(), storage);

  if (!t.tensor_content().empty()) {
    encoding = TensorAttr::kTensorContent;
    const std::string &content = t.tensor_content();
    if (field == Field::String) {
      SmallVector<StringRef> values;
      if (!decodeStringContent(content, n, values)) {
        return fail(DecodeFailure::NotDense,
                    "its string tensor_content is malformed");
      }
      return DenseStringElementsAttr::get(type, values);
    }
    if (field == Field::Bool) {
      if (int64_t(content.size()) != n) {
        return fail(DecodeFailure::SizeMismatch,
                    "tensor_content has " + std::to_string(content.size()) +
                        " bytes but the shape needs " + std::to_string(n));
      }
      SmallVector<bool> values;
      values.reserve(n);
      for (char c : content)
        values.push_back(c != 0);
      // Only 0/1 bytes round-trip through a bool attribute.
      for (char c : content)
        if (c != 0 && c != 1) {
          return fail(DecodeFailure::NotDense,
                      "bool tensor_content holds a byte other than 0 or 1");
        }
      return DenseElementsAttr::get(type, values);
    }
    size_t bytes = getElementBytes(storage);
    int64_t need;
    if (llvm::MulOverflow(n, int64_t(bytes), need) ||
        int64_t(content.size()) != need) {
      return fail(DecodeFailure::SizeMismatch,
                  "tensor_content has " + std::to_string(content.size()) +
                      " bytes but the shape needs " +
                      std::to_string(uint64_t(n) * bytes));
    }
    bool detectedSplat = false;
    ArrayRef<char> buffer(content.data(), content.size());
    if (!DenseElementsAttr::isValidRawBuffer(type, buffer, detectedSplat)) {
      return fail(DecodeFailure::NotDense,
                  "tensor_content is not a valid buffer for its type");
    }
    return DenseElementsAttr::getFromRawBuffer(type, buffer);
  }

  int64_t count = countTypedValues(t, field);
  encoding = count;
  if (field == Field::String) {
    SmallVector<StringRef> values;
    if (count <= 1 || n <= 1) {
      values.push_back(count ? StringRef(t.string_val(0)) : StringRef());
      if (n == 0)
        values.clear();
      return DenseStringElementsAttr::get(type, values);
    }
    if (n > kMaxExpandedTensorBytes)
      return fail(DecodeFailure::TooLarge, tooManyToExpand(count, n));
    for (int64_t i = 0; i < n; ++i)
      values.push_back(t.string_val(std::min(i, count - 1)));
    return DenseStringElementsAttr::get(type, values);
  }
  if (field == Field::Bool) {
    if (count <= 1 || n <= 1) {
      if (n == 0)
        return DenseElementsAttr::get(type, ArrayRef<bool>());
      return DenseElementsAttr::get(type, count ? t.bool_val(0) : false);
    }
    if (n > kMaxExpandedTensorBytes)
      return fail(DecodeFailure::TooLarge, tooManyToExpand(count, n));
    SmallVector<bool> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(t.bool_val(std::min(i, count - 1)));
    return DenseElementsAttr::get(type, values);
  }
  size_t bytes = getElementBytes(storage);
  // One value (or none) fills the whole tensor: store it as a splat.
  if (count <= 1 || n <= 1) {
    if (n == 0)
      return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>());
    std::vector<char> element(bytes, 0);
    if (count)
      readTypedValue(t, field, 0, bytes, element.data());
    return DenseElementsAttr::getFromRawBuffer(type, element);
  }
  int64_t total;
  if (llvm::MulOverflow(n, int64_t(bytes), total) ||
      total > kMaxExpandedTensorBytes)
    return fail(DecodeFailure::TooLarge, tooManyToExpand(count, n));
  std::vector<char> buffer(total);
  for (int64_t i = 0; i < n; ++i)
    readTypedValue(t, field, std::min(i, count - 1), bytes,
                   buffer.data() + i * bytes);
  bool detectedSplat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, buffer, detectedSplat)) {
    return fail(DecodeFailure::NotDense,
                "its values do not form a valid buffer");
  }
  return DenseElementsAttr::getFromRawBuffer(type, buffer);
}

TensorAttr graphdef::importTensor(const tf::TensorProto &t, MLIRContext *ctx,
                                  std::string &error, std::string *warning,
                                  bool strictTensors) {
  Type dtype = dataTypeToType(ctx, t.dtype());
  ShapeAttr shape = importShape(t.tensor_shape(), ctx, error);
  if (!shape)
    return {};
  ElementsAttr value;
  int64_t encoding = TensorAttr::kTensorContent;
  Type storage = getStorageType(dtype);
  if (storage && !shape.getUnknownRank()) {
    DecodeFailure why;
    value = decodeTensorValue(t, storage, shape, encoding, why);
    if (!value && why.kind == DecodeFailure::SizeMismatch) {
      if (strictTensors) {
        error = why.message;
        return {};
      }
      if (warning)
        *warning = why.message + "; the bytes are kept as written";
    } else if (!value && why.kind == DecodeFailure::TooLarge) {
      std::string dims;
      for (int64_t d : shape.getDims())
        dims += (dims.empty() ? "" : ",") + std::to_string(d);
      error = "tensor of shape [" + dims + "] is too large: " + why.message;
      return {};
    }
  }
  // Keep the original bytes unless the decoded form reproduces them.
  auto decoded = TensorAttr::get(ctx, dtype, shape, value, encoding, {});
  tf::TensorProto again;
  std::string ignored;
  std::string original = serialize(t);
  if (value && succeeded(exportTensor(decoded, again, ignored)) &&
      serialize(again) == original)
    return decoded;
  return TensorAttr::get(ctx, dtype, shape, value, encoding,
                         StringAttr::get(ctx, original));
}

LogicalResult graphdef::exportTensor(TensorAttr attr, tf::TensorProto &t,
                                     std::string &error) {
  if (StringAttr raw = attr.getRaw()) {
    if (!t.ParseFromArray(raw.getValue().data(), raw.getValue().size())) {
      error = "the raw bytes of a tensor attribute are not a TensorProto";
      return failure();
    }
    return success();
  }
  int32_t dt = typeToDataType(attr.getDtype());
  if (dt < 0) {
    error = "tensor dtype is not a TensorFlow dtype";
    return failure();
  }
  t.set_dtype(static_cast<tf::DataType>(dt));
  exportShape(attr.getShape(), *t.mutable_tensor_shape());
  auto value = dyn_cast_or_null<DenseElementsAttr>(attr.getValue());
  if (!value) {
    if (attr.getValue()) {
      error = "only dense tensor values can be exported";
      return failure();
    }
    return success();
  }
  Field field = getValueField(dt);
  int64_t n = value.getNumElements();
  int64_t encoding = attr.getEncoding();
  int64_t count = encoding == TensorAttr::kTensorContent
                      ? n
                      : std::min<int64_t>(encoding, n);
  Type storage = value.getElementType();
  if (auto strings = dyn_cast<DenseStringElementsAttr>(value)) {
    auto values = strings.getRawStringData();
    auto at = [&](int64_t i) { return values[strings.isSplat() ? 0 : i]; };
    if (encoding == TensorAttr::kTensorContent) {
      SmallVector<StringRef> all;
      for (int64_t i = 0; i < n; ++i)
        all.push_back(at(i));
      encodeStringContent(all, *t.mutable_tensor_content());
    } else {
      for (int64_t i = 0; i < count; ++i)
        t.add_string_val(at(i).str());
    }
    return success();
  }
  if (storage.isInteger(1)) {
    auto values = value.getValues<bool>();
    if (encoding == TensorAttr::kTensorContent) {
      std::string &content = *t.mutable_tensor_content();
      for (int64_t i = 0; i < n; ++i)
        content.push_back(values[i] ? 1 : 0);
    } else {
      for (int64_t i = 0; i < count; ++i)
        t.add_bool_val(values[i]);
    }
    return success();
  }
  size_t bytes = getElementBytes(storage);
  ArrayRef<char> raw = value.getRawData();
  auto element = [&](int64_t i) {
    return raw.data() + (value.isSplat() ? 0 : i * bytes);
  };
  if (encoding == TensorAttr::kTensorContent) {
    std::string &content = *t.mutable_tensor_content();
    if (value.isSplat()) {
      content.reserve(n * bytes);
      for (int64_t i = 0; i < n; ++i)
        content.append(element(0), bytes);
    } else {
      content.assign(raw.data(), raw.size());
    }
    return success();
  }
  bool isSigned = isSignedInt(storage);
  for (int64_t i = 0; i < count; ++i)
    writeTypedValue(t, field, element(i), bytes, isSigned);
  return success();
}

//===----------------------------------------------------------------------===//
// AttrValue
//===----------------------------------------------------------------------===//

static Attribute importFunc(const tf::NameAttrList &func, MLIRContext *ctx,
                            std::string &error) {
  DictionaryAttr attrs = graphdef::importAttrMap(func.attr(), ctx, error);
  if (!attrs)
    return {};
  return FuncAttr::get(ctx, FlatSymbolRefAttr::get(ctx, func.name()), attrs);
}

Attribute graphdef::importAttrValue(const tf::AttrValue &value,
                                    MLIRContext *ctx, std::string &error,
                                    std::string *warning, bool strictTensors) {
  Builder b(ctx);
  switch (value.value_case()) {
  case tf::AttrValue::kS: return b.getStringAttr(value.s());
  case tf::AttrValue::kI: return b.getI64IntegerAttr(value.i());
  case tf::AttrValue::kF: return b.getF32FloatAttr(value.f());
  case tf::AttrValue::kB: return b.getBoolAttr(value.b());
  case tf::AttrValue::kType:
    return TypeAttr::get(dataTypeToType(ctx, value.type()));
  case tf::AttrValue::kShape: return importShape(value.shape(), ctx, error);
  case tf::AttrValue::kTensor:
    return importTensor(value.tensor(), ctx, error, warning, strictTensors);
  case tf::AttrValue::kPlaceholder:
    return PlaceholderAttr::get(ctx, value.placeholder());
  case tf::AttrValue::kFunc: return importFunc(value.func(), ctx, error);
  case tf::AttrValue::VALUE_NOT_SET: return b.getUnitAttr();
  case tf::AttrValue::kList: break;
  }
  // A ListValue keeps each kind in its own field; the array lists them
  // field by field, which is the order export writes them back in.
  const tf::AttrValue::ListValue &list = value.list();
  SmallVector<Attribute> items;
  for (const std::string &s : list.s())
    items.push_back(b.getStringAttr(s));
  for (int64_t i : list.i())
    items.push_back(b.getI64IntegerAttr(i));
  for (float f : list.f())
    items.push_back(b.getF32FloatAttr(f));
  for (bool v : list.b())
    items.push_back(b.getBoolAttr(v));
  for (int type : list.type())
    items.push_back(TypeAttr::get(dataTypeToType(ctx, type)));
  for (const auto &shape : list.shape()) {
    Attribute attr = importShape(shape, ctx, error);
    if (!attr)
      return {};
    items.push_back(attr);
  }
  for (const auto &tensor : list.tensor()) {
    Attribute attr = importTensor(tensor, ctx, error, warning, strictTensors);
    if (!attr)
      return {};
    items.push_back(attr);
  }
  for (const auto &func : list.func()) {
    Attribute attr = importFunc(func, ctx, error);
    if (!attr)
      return {};
    items.push_back(attr);
  }
  return b.getArrayAttr(items);
}

static LogicalResult exportFunc(FuncAttr func, tf::NameAttrList &proto,
                                std::string &error) {
  proto.set_name(func.getName().getValue().str());
  return graphdef::exportAttrMap(func.getAttrs(), *proto.mutable_attr(),
                                 error);
}

LogicalResult graphdef::exportAttrValue(Attribute attr, tf::AttrValue &value,
                                        std::string &error) {
  if (isa<UnitAttr>(attr))
    return success();
  if (auto s = dyn_cast<StringAttr>(attr)) {
    value.set_s(s.getValue().str());
    return success();
  }
  if (auto b = dyn_cast<BoolAttr>(attr)) {
    value.set_b(b.getValue());
    return success();
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    value.set_i(i.getValue().getSExtValue());
    return success();
  }
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    value.set_f(f.getValue().convertToFloat());
    return success();
  }
  if (auto type = dyn_cast<TypeAttr>(attr)) {
    int32_t dt = typeToDataType(type.getValue());
    if (dt < 0) {
      error = "type attribute is not a TensorFlow dtype";
      return failure();
    }
    value.set_type(static_cast<tf::DataType>(dt));
    return success();
  }
  if (auto shape = dyn_cast<ShapeAttr>(attr)) {
    exportShape(shape, *value.mutable_shape());
    return success();
  }
  if (auto tensor = dyn_cast<TensorAttr>(attr))
    return exportTensor(tensor, *value.mutable_tensor(), error);
  if (auto placeholder = dyn_cast<PlaceholderAttr>(attr)) {
    value.set_placeholder(placeholder.getRef().str());
    return success();
  }
  if (auto func = dyn_cast<FuncAttr>(attr))
    return exportFunc(func, *value.mutable_func(), error);
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array) {
    error = "attribute has no AttrValue form";
    return failure();
  }
  auto *list = value.mutable_list();
  for (Attribute item : array) {
    if (auto s = dyn_cast<StringAttr>(item)) {
      list->add_s(s.getValue().str());
    } else if (auto b = dyn_cast<BoolAttr>(item)) {
      list->add_b(b.getValue());
    } else if (auto i = dyn_cast<IntegerAttr>(item)) {
      list->add_i(i.getValue().getSExtValue());
    } else if (auto f = dyn_cast<FloatAttr>(item)) {
      list->add_f(f.getValue().convertToFloat());
    } else if (auto type = dyn_cast<TypeAttr>(item)) {
      int32_t dt = typeToDataType(type.getValue());
      if (dt < 0) {
        error = "list element is not a TensorFlow dtype";
        return failure();
      }
      list->add_type(static_cast<tf::DataType>(dt));
    } else if (auto shape = dyn_cast<ShapeAttr>(item)) {
      exportShape(shape, *list->add_shape());
    } else if (auto tensor = dyn_cast<TensorAttr>(item)) {
      if (failed(exportTensor(tensor, *list->add_tensor(), error)))
        return failure();
    } else if (auto func = dyn_cast<FuncAttr>(item)) {
      if (failed(exportFunc(func, *list->add_func(), error)))
        return failure();
    } else {
      error = "list element has no AttrValue form";
      return failure();
    }
  }
  return success();
}

DictionaryAttr graphdef::importAttrMap(
    const google::protobuf::Map<std::string, tf::AttrValue> &map,
    MLIRContext *ctx, std::string &error, std::string *warning,
    bool strictTensors) {
  SmallVector<NamedAttribute> attrs;
  attrs.reserve(map.size());
  for (const auto &[key, value] : map) {
    std::string attrWarning;
    Attribute attr =
        importAttrValue(value, ctx, error, &attrWarning, strictTensors);
    if (!attr) {
      error = "attr '" + key + "': " + error;
      return {};
    }
    if (!attrWarning.empty() && warning)
      *warning = "attr '" + key + "': " + attrWarning;
    attrs.emplace_back(StringAttr::get(ctx, key), attr);
  }
  return DictionaryAttr::get(ctx, attrs);
}

LogicalResult
graphdef::exportAttrMap(DictionaryAttr dict,
                        google::protobuf::Map<std::string, tf::AttrValue> &map,
                        std::string &error) {
  for (NamedAttribute attr : dict) {
    if (failed(exportAttrValue(attr.getValue(), map[attr.getName().str()],
                               error))) {
      error = "attr '" + attr.getName().str() + "': " + error;
      return failure();
    }
  }
  return success();
}
