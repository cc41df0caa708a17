//===- ProtoAttr.cpp - any protobuf message as a dictionary attribute -----===//
//
// Reflection-based, field-by-field conversion. Only fields that are present
// are listed, so presence (and thus the message) survives the round trip.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace cleave;
namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

static Attribute fieldToAttr(const pb::Message &message, const FD *field,
                             int index, MLIRContext *ctx) {
  const pb::Reflection *r = message.GetReflection();
  Builder b(ctx);
  bool repeated = field->is_repeated();
#define GET(Kind) (repeated ? r->GetRepeated##Kind(message, field, index)     \
                            : r->Get##Kind(message, field))
  switch (field->cpp_type()) {
  case FD::CPPTYPE_INT32: return b.getI32IntegerAttr(GET(Int32));
  case FD::CPPTYPE_INT64: return b.getI64IntegerAttr(GET(Int64));
  case FD::CPPTYPE_UINT32:
    return b.getIntegerAttr(b.getIntegerType(32, false), GET(UInt32));
  case FD::CPPTYPE_UINT64:
    return b.getIntegerAttr(b.getIntegerType(64, false),
                            APInt(64, GET(UInt64)));
  case FD::CPPTYPE_DOUBLE: return b.getF64FloatAttr(GET(Double));
  case FD::CPPTYPE_FLOAT: return b.getF32FloatAttr(GET(Float));
  case FD::CPPTYPE_BOOL: return b.getBoolAttr(GET(Bool));
  case FD::CPPTYPE_STRING: return b.getStringAttr(GET(String));
  case FD::CPPTYPE_ENUM: {
    int number = GET(EnumValue);
    if (const auto *v = field->enum_type()->FindValueByNumber(number))
      return b.getStringAttr(v->name());
    return b.getI32IntegerAttr(number);
  }
  case FD::CPPTYPE_MESSAGE:
    return graphdef::protoToAttr(GET(Message), ctx);
  }
#undef GET
  return {};
}

DictionaryAttr graphdef::protoToAttr(const pb::Message &message,
                                     MLIRContext *ctx) {
  const pb::Reflection *r = message.GetReflection();
  std::vector<const FD *> fields;
  r->ListFields(message, &fields);
  SmallVector<NamedAttribute> attrs;
  for (const FD *field : fields) {
    Attribute value;
    if (field->is_repeated()) {
      SmallVector<Attribute> items;
      int size = r->FieldSize(message, field);
      for (int i = 0; i < size; ++i)
        items.push_back(fieldToAttr(message, field, i, ctx));
      value = ArrayAttr::get(ctx, items);
    } else {
      value = fieldToAttr(message, field, -1, ctx);
    }
    attrs.emplace_back(StringAttr::get(ctx, field->name()), value);
  }
  return DictionaryAttr::get(ctx, attrs);
}

static LogicalResult setField(pb::Message &message, const FD *field,
                              Attribute attr, std::string &error) {
  const pb::Reflection *r = message.GetReflection();
  bool repeated = field->is_repeated();
  auto fail = [&](StringRef expected) {
    error = "field '" + field->name() + "' expects " + expected.str();
    return failure();
  };
#define SET(Kind, value)                                                      \
  (repeated ? r->Add##Kind(&message, field, value)                            \
            : r->Set##Kind(&message, field, value))
  switch (field->cpp_type()) {
  case FD::CPPTYPE_INT32:
  case FD::CPPTYPE_INT64:
  case FD::CPPTYPE_UINT32:
  case FD::CPPTYPE_UINT64: {
    auto i = dyn_cast<IntegerAttr>(attr);
    if (!i)
      return fail("an integer");
    uint64_t bits = i.getValue().getZExtValue();
    int64_t sbits = i.getValue().getSExtValue();
    if (field->cpp_type() == FD::CPPTYPE_INT32)
      SET(Int32, int32_t(sbits));
    else if (field->cpp_type() == FD::CPPTYPE_INT64)
      SET(Int64, sbits);
    else if (field->cpp_type() == FD::CPPTYPE_UINT32)
      SET(UInt32, uint32_t(bits));
    else
      SET(UInt64, bits);
    return success();
  }
  case FD::CPPTYPE_DOUBLE:
  case FD::CPPTYPE_FLOAT: {
    auto f = dyn_cast<FloatAttr>(attr);
    if (!f)
      return fail("a float");
    if (field->cpp_type() == FD::CPPTYPE_DOUBLE)
      SET(Double, f.getValueAsDouble());
    else
      SET(Float, float(f.getValueAsDouble()));
    return success();
  }
  case FD::CPPTYPE_BOOL: {
    auto b = dyn_cast<BoolAttr>(attr);
    if (!b)
      return fail("a bool");
    SET(Bool, b.getValue());
    return success();
  }
  case FD::CPPTYPE_STRING: {
    auto s = dyn_cast<StringAttr>(attr);
    if (!s)
      return fail("a string");
    SET(String, s.getValue().str());
    return success();
  }
  case FD::CPPTYPE_ENUM: {
    int number;
    if (auto s = dyn_cast<StringAttr>(attr)) {
      const auto *v = field->enum_type()->FindValueByName(s.getValue().str());
      if (!v)
        return fail("a value of " + field->enum_type()->name());
      number = v->number();
    } else if (auto i = dyn_cast<IntegerAttr>(attr)) {
      number = i.getInt();
    } else {
      return fail("an enum name or number");
    }
    SET(EnumValue, number);
    return success();
  }
  case FD::CPPTYPE_MESSAGE: {
    auto dict = dyn_cast<DictionaryAttr>(attr);
    if (!dict)
      return fail("a dictionary");
    pb::Message *nested = repeated ? r->AddMessage(&message, field)
                                   : r->MutableMessage(&message, field);
    return graphdef::attrToProto(dict, *nested, error);
  }
  }
#undef SET
  return failure();
}

LogicalResult graphdef::attrToProto(DictionaryAttr dict, pb::Message &message,
                                    std::string &error) {
  const pb::Descriptor *descriptor = message.GetDescriptor();
  for (NamedAttribute entry : dict) {
    const FD *field = descriptor->FindFieldByName(entry.getName().str());
    if (!field) {
      error = descriptor->name() + " has no field '" +
              entry.getName().str() + "'";
      return failure();
    }
    if (field->is_repeated()) {
      auto array = dyn_cast<ArrayAttr>(entry.getValue());
      if (!array) {
        error = "field '" + field->name() + "' expects an array";
        return failure();
      }
      for (Attribute item : array)
        if (failed(setField(message, field, item, error)))
          return failure();
    } else if (failed(setField(message, field, entry.getValue(), error))) {
      return failure();
    }
  }
  return success();
}
