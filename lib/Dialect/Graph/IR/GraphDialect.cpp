//===- GraphDialect.cpp - graph dialect, types and attributes -------------===//
//
// Registration of the dialect, the dtype <-> MLIR type mapping, and the
// custom syntax of #graph.shape and #graph.tensor.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cleave::graph;

#include "cleave/Dialect/Graph/IR/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "cleave/Dialect/Graph/IR/GraphOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

namespace {
struct QuantizedKind {
  const char *name;
  unsigned width;
  bool isSigned;
};
} // namespace
static constexpr QuantizedKind kQuantizedKinds[] = {{"qint8", 8, true},
                                                    {"quint8", 8, false},
                                                    {"qint16", 16, true},
                                                    {"quint16", 16, false},
                                                    {"qint32", 32, true}};

static ParseResult parseQuantizedKind(AsmParser &parser, unsigned &width,
                                      bool &isSigned) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  for (const QuantizedKind &kind : kQuantizedKinds) {
    if (keyword == kind.name) {
      width = kind.width;
      isSigned = kind.isSigned;
      return success();
    }
  }
  return parser.emitError(loc, "expected one of qint8, quint8, qint16, "
                               "quint16, qint32");
}

static void printQuantizedKind(AsmPrinter &printer, unsigned width,
                               bool isSigned) {
  printer << (isSigned ? "q" : "qu") << "int" << width;
}

LogicalResult
QuantizedType::verify(function_ref<InFlightDiagnostic()> emitError,
                      unsigned width, bool isSigned) {
  for (const QuantizedKind &kind : kQuantizedKinds)
    if (kind.width == width && kind.isSigned == isSigned)
      return success();
  return emitError() << "no TensorFlow quantized type of width " << width;
}

#define GET_TYPEDEF_CLASSES
#include "cleave/Dialect/Graph/IR/GraphTypes.cpp.inc"

void GraphDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "cleave/Dialect/Graph/IR/GraphTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DataType <-> Type
//===----------------------------------------------------------------------===//

namespace {
// DataType enum values (types.proto); the dialect does not depend on the
// generated protobuf code.
enum : int32_t {
  kFloat = 1, kDouble, kInt32, kUInt8, kInt16, kInt8, kString, kComplex64,
  kInt64, kBool, kQInt8, kQUInt8, kQInt32, kBFloat16, kQInt16, kQUInt16,
  kUInt16, kComplex128, kHalf, kResource, kVariant, kUInt32, kUInt64,
  kFloat8E5M2, kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E4M3B11FNUZ,
  kFloat8E5M2FNUZ, kInt4, kUInt4, kInt2, kUInt2, kFloat4E2M1FN,
  kRefOffset = 100,
};
} // namespace

static const char *const kDataTypeNames[] = {"invalid",
                                             "float",
                                             "double",
                                             "int32",
                                             "uint8",
                                             "int16",
                                             "int8",
                                             "string",
                                             "complex64",
                                             "int64",
                                             "bool",
                                             "qint8",
                                             "quint8",
                                             "qint32",
                                             "bfloat16",
                                             "qint16",
                                             "quint16",
                                             "uint16",
                                             "complex128",
                                             "half",
                                             "resource",
                                             "variant",
                                             "uint32",
                                             "uint64",
                                             "float8_e5m2",
                                             "float8_e4m3fn",
                                             "float8_e4m3fnuz",
                                             "float8_e4m3b11fnuz",
                                             "float8_e5m2fnuz",
                                             "int4",
                                             "uint4",
                                             "int2",
                                             "uint2",
                                             "float4_e2m1fn"};
static constexpr int32_t kLastDataType = kFloat4E2M1FN;

static Type baseDataTypeToType(MLIRContext *ctx, int32_t dt) {
  Builder b(ctx);
  switch (dt) {
  case kFloat: return b.getF32Type();
  case kDouble: return b.getF64Type();
  case kInt32: return b.getIntegerType(32);
  case kUInt8: return b.getIntegerType(8, /*isSigned=*/false);
  case kInt16: return b.getIntegerType(16);
  case kInt8: return b.getIntegerType(8);
  case kString: return StringType::get(ctx);
  case kComplex64: return ComplexType::get(b.getF32Type());
  case kInt64: return b.getIntegerType(64);
  case kBool: return b.getI1Type();
  case kQInt8: return QuantizedType::get(ctx, 8, true);
  case kQUInt8: return QuantizedType::get(ctx, 8, false);
  case kQInt32: return QuantizedType::get(ctx, 32, true);
  case kBFloat16: return b.getBF16Type();
  case kQInt16: return QuantizedType::get(ctx, 16, true);
  case kQUInt16: return QuantizedType::get(ctx, 16, false);
  case kUInt16: return b.getIntegerType(16, false);
  case kComplex128: return ComplexType::get(b.getF64Type());
  case kHalf: return b.getF16Type();
  case kResource: return ResourceType::get(ctx);
  case kVariant: return VariantType::get(ctx);
  case kUInt32: return b.getIntegerType(32, false);
  case kUInt64: return b.getIntegerType(64, false);
  case kFloat8E5M2: return b.getFloat8E5M2Type();
  case kFloat8E4M3FN: return b.getFloat8E4M3FNType();
  case kFloat8E4M3FNUZ: return b.getFloat8E4M3FNUZType();
  case kFloat8E4M3B11FNUZ: return b.getFloat8E4M3B11FNUZType();
  case kFloat8E5M2FNUZ: return b.getFloat8E5M2FNUZType();
  case kInt4: return b.getIntegerType(4);
  case kUInt4: return b.getIntegerType(4, false);
  case kInt2: return b.getIntegerType(2);
  case kUInt2: return b.getIntegerType(2, false);
  default: return {};
  }
}

Type cleave::graph::dataTypeToType(MLIRContext *ctx, int32_t dataType) {
  if (Type type = baseDataTypeToType(ctx, dataType))
    return type;
  if (dataType > kRefOffset)
    if (Type base = baseDataTypeToType(ctx, dataType - kRefOffset))
      return RefType::get(ctx, base);
  return DTypeType::get(ctx, dataType);
}

static int32_t baseTypeToDataType(Type type) {
  return TypeSwitch<Type, int32_t>(type)
      .Case([](Float32Type) { return kFloat; })
      .Case([](Float64Type) { return kDouble; })
      .Case([](Float16Type) { return kHalf; })
      .Case([](BFloat16Type) { return kBFloat16; })
      .Case([](Float8E5M2Type) { return kFloat8E5M2; })
      .Case([](Float8E4M3FNType) { return kFloat8E4M3FN; })
      .Case([](Float8E4M3FNUZType) { return kFloat8E4M3FNUZ; })
      .Case([](Float8E4M3B11FNUZType) { return kFloat8E4M3B11FNUZ; })
      .Case([](Float8E5M2FNUZType) { return kFloat8E5M2FNUZ; })
      .Case([](IntegerType t) -> int32_t {
        bool isUnsigned = t.isUnsigned();
        switch (t.getWidth()) {
        case 1: return t.isSignless() ? kBool : -1;
        case 2: return isUnsigned ? kUInt2 : kInt2;
        case 4: return isUnsigned ? kUInt4 : kInt4;
        case 8: return isUnsigned ? kUInt8 : kInt8;
        case 16: return isUnsigned ? kUInt16 : kInt16;
        case 32: return isUnsigned ? kUInt32 : kInt32;
        case 64: return isUnsigned ? kUInt64 : kInt64;
        default: return -1;
        }
      })
      .Case([](ComplexType t) -> int32_t {
        if (t.getElementType().isF32()) return kComplex64;
        if (t.getElementType().isF64()) return kComplex128;
        return -1;
      })
      .Case([](StringType) { return kString; })
      .Case([](ResourceType) { return kResource; })
      .Case([](VariantType) { return kVariant; })
      .Case([](QuantizedType t) -> int32_t {
        switch (t.getWidth()) {
        case 8: return t.getIsSigned() ? kQInt8 : kQUInt8;
        case 16: return t.getIsSigned() ? kQInt16 : kQUInt16;
        default: return kQInt32;
        }
      })
      .Case([](DTypeType t) { return t.getValue(); })
      .Default([](Type) { return -1; });
}

int32_t cleave::graph::typeToDataType(Type type) {
  if (auto ref = dyn_cast<RefType>(type)) {
    int32_t base = baseTypeToDataType(ref.getElementType());
    return base < 0 ? -1 : base + kRefOffset;
  }
  return baseTypeToDataType(type);
}

Type cleave::graph::getStorageType(Type dtype) {
  if (auto q = dyn_cast<QuantizedType>(dtype))
    return IntegerType::get(dtype.getContext(), q.getWidth(),
                            q.getIsSigned() ? IntegerType::Signless
                                            : IntegerType::Unsigned);
  if (isa<StringType>(dtype))
    return dtype;
  if (isa<IntegerType, FloatType, ComplexType>(dtype))
    return dtype;
  return {};
}

TensorType cleave::graph::getTensorType(Type elementType, ShapeAttr shape) {
  if (!shape || shape.getUnknownRank())
    return UnrankedTensorType::get(elementType);
  SmallVector<int64_t> dims;
  for (int64_t d : shape.getDims())
    dims.push_back(d < 0 ? ShapedType::kDynamic : d);
  return RankedTensorType::get(dims, elementType);
}

std::string cleave::graph::getDataTypeName(Type dtype) {
  int32_t dt = typeToDataType(dtype);
  if (dt >= 0 && dt <= kLastDataType)
    return kDataTypeNames[dt];
  if (dt > kRefOffset && dt <= kRefOffset + kLastDataType)
    return std::string(kDataTypeNames[dt - kRefOffset]) + "_ref";
  if (dt >= 0)
    return "unknown dtype enum (" + std::to_string(dt) + ")";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << dtype;
  return text;
}

//===----------------------------------------------------------------------===//
// ShapeAttr
//===----------------------------------------------------------------------===//

bool ShapeAttr::isFullyDefined() const {
  if (getUnknownRank())
    return false;
  return llvm::all_of(getDims(), [](int64_t d) { return d >= 0; });
}

int64_t ShapeAttr::getNumElements() const {
  if (!isFullyDefined())
    return -1;
  int64_t count = 1;
  for (int64_t d : getDims())
    if (llvm::MulOverflow(count, d, count))
      return -1;
  return count;
}

/// Prints `2x?x3`, `*`, or nothing for a scalar.
static void printDims(AsmPrinter &printer, ArrayRef<int64_t> dims,
                      bool unknownRank) {
  if (unknownRank) {
    printer << "*";
    return;
  }
  llvm::interleave(
      dims, printer,
      [&](int64_t d) {
        if (d == ShapeAttr::kUnknownDim)
          printer << "?";
        else
          printer << d;
      },
      "x");
}

Attribute ShapeAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> dims;
  bool unknownRank = false;
  ArrayAttr names;
  if (parser.parseLess())
    return {};
  auto parseRest = [&]() -> Attribute {
    if (succeeded(parser.parseOptionalComma()) &&
        (parser.parseKeyword("names") || parser.parseEqual() ||
         parser.parseAttribute(names)))
      return {};
    if (parser.parseGreater())
      return {};
    return ShapeAttr::get(parser.getContext(), dims, unknownRank, names);
  };
  if (succeeded(parser.parseOptionalStar())) {
    unknownRank = true;
    return parseRest();
  }
  // A scalar has no dims.
  if (succeeded(parser.parseOptionalGreater()))
    return ShapeAttr::get(parser.getContext(), dims, false, names);
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("names") || parser.parseEqual() ||
        parser.parseAttribute(names) || parser.parseGreater())
      return {};
    return ShapeAttr::get(parser.getContext(), dims, false, names);
  }
  if (parser.parseDimensionList(dims, /*allowDynamic=*/true,
                                /*withTrailingX=*/false))
    return {};
  for (int64_t &d : dims)
    if (ShapedType::isDynamic(d))
      d = kUnknownDim;
  return parseRest();
}

void ShapeAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printDims(printer, getDims(), getUnknownRank());
  if (getNames())
    printer << ", names = " << getNames();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// TensorAttr
//===----------------------------------------------------------------------===//

// Syntax: `<` value? (`,`? key `=` attr)* `>` with keys dtype, shape, values
// and raw; dtype and shape are printed only when the value does not imply
// them.
Attribute TensorAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  if (parser.parseLess())
    return {};
  ElementsAttr value;
  Type dtype;
  ShapeAttr shape;
  int64_t encoding = kTensorContent;
  StringAttr raw;
  bool first = true;
  while (failed(parser.parseOptionalGreater())) {
    if (!first && parser.parseComma())
      return {};
    first = false;
    StringRef key;
    if (succeeded(parser.parseOptionalKeyword(
            &key, {"dtype", "shape", "values", "raw"}))) {
      if (parser.parseEqual())
        return {};
      if ((key == "dtype" && parser.parseType(dtype)) ||
          (key == "shape" && parser.parseAttribute(shape)) ||
          (key == "values" && parser.parseInteger(encoding)) ||
          (key == "raw" && parser.parseAttribute(raw)))
        return {};
      continue;
    }
    SMLoc loc = parser.getCurrentLocation();
    Attribute attr;
    if (parser.parseAttribute(attr))
      return {};
    value = llvm::dyn_cast<ElementsAttr>(attr);
    if (!value) {
      parser.emitError(loc, "expected an elements attribute");
      return {};
    }
  }
  if (value) {
    auto type = llvm::cast<ShapedType>(value.getType());
    if (!dtype)
      dtype = type.getElementType();
    if (!shape)
      shape = ShapeAttr::get(ctx, type.getShape());
  }
  if (!dtype || !shape) {
    parser.emitError(parser.getNameLoc(),
                     "a tensor without a value needs dtype and shape");
    return {};
  }
  return TensorAttr::get(ctx, dtype, shape, value, encoding, raw);
}

void TensorAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool needComma = false;
  auto sep = [&] {
    if (needComma)
      printer << ", ";
    needComma = true;
  };
  ElementsAttr value = getValue();
  if (value) {
    sep();
    printer.printAttribute(value);
  }
  auto type = value ? llvm::cast<ShapedType>(value.getType()) : ShapedType();
  if (!value || type.getElementType() != getDtype()) {
    sep();
    printer << "dtype = " << getDtype();
  }
  if (!value || ShapeAttr::get(getContext(), type.getShape()) != getShape()) {
    sep();
    printer << "shape = " << getShape();
  }
  if (getEncoding() != kTensorContent) {
    sep();
    printer << "values = " << getEncoding();
  }
  if (getRaw()) {
    sep();
    printer << "raw = " << getRaw();
  }
  printer << ">";
}

#define GET_ATTRDEF_CLASSES
#include "cleave/Dialect/Graph/IR/GraphAttrs.cpp.inc"

void GraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cleave/Dialect/Graph/IR/GraphAttrs.cpp.inc"
      >();
}
