//===- NodeDefUtil.cpp - attr defaults and attr validation ----------------===//
//
// Defaults are written in the registry as TensorFlow writes them in
// REGISTER_OP ("DT_INT32", "'NHWC'", "[1, 1, 1, 1]"); they are turned into
// an AttrValue in text format and imported like any other attr, so a
// defaulted attr is exactly what an explicit one would be.
//
//===----------------------------------------------------------------------===//

#include "cleave/Translate/NodeDefUtil.h"

#include "Internal.h"

#include "cleave/tf/attr_value.pb.h"
#include "google/protobuf/text_format.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace tf = tensorflow;

/// The AttrValue text of a registry default.
static std::string defaultAsText(const ops::AttrSpec &attr) {
  StringRef type = attr.type, text = attr.defaultValue;
  if (type == "string")
    return "s: " + text.str();
  if (type == "int")
    return "i: " + text.str();
  if (type == "float")
    return "f: " + text.str();
  if (type == "bool")
    return "b: " + text.str();
  if (type == "type")
    return "type: " + text.str();
  if (type == "shape") {
    if (text.starts_with("{"))
      return "shape " + text.str();
    // "[2, 3]": the dims.
    std::string dims;
    SmallVector<StringRef> parts;
    text.trim("[]").split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts)
      dims += "dim { size: " + part.trim().str() + " } ";
    return "shape { " + dims + "}";
  }
  if (type.consume_front("list(") && type.consume_back(")")) {
    if (text.trim("[] ").empty())
      return "list { }";
    StringRef field = type == "int"      ? "i"
                      : type == "float"  ? "f"
                      : type == "bool"   ? "b"
                      : type == "type"   ? "type"
                      : type == "string" ? "s"
                                         : "";
    if (field.empty())
      return "";
    return "list { " + field.str() + ": " + text.str() + " }";
  }
  return "";
}

Attribute cleave::getDefaultAttr(const ops::AttrSpec &attr,
                                 MLIRContext *context) {
  if (attr.defaultValue.empty())
    return {};
  tf::AttrValue value;
  std::string text = defaultAsText(attr);
  if (text.empty() ||
      !google::protobuf::TextFormat::ParseFromString(text, &value))
    return {};
  std::string error;
  return graphdef::importAttrValue(value, context, error);
}

void cleave::addDefaultAttrs(NodeOp node) {
  const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
  if (!spec)
    return;
  NamedAttrList attrs(node.getAttrs());
  bool changed = false;
  for (const ops::AttrSpec &attr : spec->attrs)
    if (!attrs.get(attr.name))
      if (Attribute value = getDefaultAttr(attr, node.getContext())) {
        attrs.set(attr.name, value);
        changed = true;
      }
  if (changed)
    node.setAttrsAttr(attrs.getDictionary(node.getContext()));
}

/// The AttrValue kind of an imported attr, as TensorFlow names it.
static std::string kindOf(Attribute attr) {
  if (isa<StringAttr>(attr))
    return "string";
  if (isa<BoolAttr>(attr))
    return "bool";
  if (isa<IntegerAttr>(attr))
    return "int";
  if (isa<FloatAttr>(attr))
    return "float";
  if (isa<TypeAttr>(attr))
    return "type";
  if (isa<ShapeAttr>(attr))
    return "shape";
  if (isa<TensorAttr>(attr))
    return "tensor";
  if (isa<FuncAttr>(attr))
    return "func";
  if (auto list = dyn_cast<ArrayAttr>(attr))
    return list.empty() ? "list" : "list(" + kindOf(list[0]) + ")";
  return "unknown";
}

static std::string typeName(MLIRContext *ctx, int32_t dt) {
  return getDataTypeName(dataTypeToType(ctx, dt));
}

LogicalResult cleave::validateNodeDef(NodeOp node) {
  const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
  if (!spec)
    return success();
  MLIRContext *ctx = node.getContext();
  auto fail = [&]() {
    return node.emitError() << "Node '" << node.getName() << "': ";
  };
  for (const ops::AttrSpec &attr : spec->attrs) {
    Attribute value = node.getTFAttr(attr.name);
    if (!value) {
      if (!attr.defaultValue.empty())
        continue;
      return fail() << "NodeDef missing attr '" << attr.name
                    << "' from Op<name=" << spec->name << ">";
    }
    if (isa<PlaceholderAttr>(value))
      continue;
    std::string kind = kindOf(value);
    bool isList = StringRef(attr.type).starts_with("list(");
    bool kindMatches = kind == attr.type || (isList && kind == "list") ||
                       (attr.type == "func" && kind == "func");
    if (!kindMatches)
      return fail() << "AttrValue had value with type '" << kind << "' when '"
                    << attr.type << "' expected for attr '" << attr.name << "'";
    // Allowed values and minimums, element by element for lists.
    SmallVector<Attribute> items;
    if (auto list = dyn_cast<ArrayAttr>(value))
      items.assign(list.begin(), list.end());
    else
      items.push_back(value);
    for (Attribute item : items) {
      if (auto type = dyn_cast<TypeAttr>(item)) {
        int32_t dt = typeToDataType(type.getValue());
        if (!attr.allowedTypes.empty() &&
            !llvm::is_contained(attr.allowedTypes, dt)) {
          std::string allowed;
          for (int32_t t : attr.allowedTypes)
            allowed += (allowed.empty() ? "" : ", ") + typeName(ctx, t);
          return fail() << "Value for attr '" << attr.name << "' of "
                        << getDataTypeName(type.getValue())
                        << " is not in the list of allowed values: " << allowed;
        }
      } else if (auto s = dyn_cast<StringAttr>(item)) {
        if (!attr.allowedStrings.empty() &&
            !llvm::is_contained(attr.allowedStrings, s.getValue())) {
          std::string allowed;
          for (const std::string &a : attr.allowedStrings)
            allowed += (allowed.empty() ? "\"" : ", \"") + a + "\"";
          return fail() << "Value for attr '" << attr.name << "' of \""
                        << s.getValue()
                        << "\" is not in the list of allowed values: "
                        << allowed;
        }
      }
    }
    if (attr.minimum) {
      int64_t actual =
          isList ? int64_t(items.size()) : cast<IntegerAttr>(value).getInt();
      if (actual < *attr.minimum)
        return fail() << (isList ? "Length for attr '" : "Value for attr '")
                      << attr.name << "' of " << actual
                      << " must be at least minimum " << *attr.minimum;
    }
  }
  // The inputs the signature asks for, as the attrs now known valid give
  // them. Kernels index their inputs by the signature, so a node with
  // another number of inputs must not run. Each is its type attr (or its
  // fixed type) and whether it is a ref; names are made only for the error.
  struct ExpectedInput {
    Attribute type;
    int32_t fixedType;
    bool isRef;
  };
  SmallVector<ExpectedInput> expected;
  for (const ops::ArgSpec &arg : spec->inputs) {
    if (!arg.typeListAttr.empty()) {
      Attribute types = getNodeAttrOrDefault(node, arg.typeListAttr, {});
      if (!isa_and_nonnull<ArrayAttr>(types))
        return success(); // a placeholder list: its length is not known
      for (Attribute type : cast<ArrayAttr>(types))
        expected.push_back({type, 0, arg.isRef});
      continue;
    }
    int64_t count = 1;
    if (!arg.numberAttr.empty()) {
      std::optional<int64_t> n =
          attrAsInt(getNodeAttrOrDefault(node, arg.numberAttr, {}));
      if (!n)
        return success(); // a placeholder count
      count = *n;
    }
    Attribute type = arg.fixedType
                         ? Attribute()
                         : getNodeAttrOrDefault(node, arg.typeAttr, {});
    expected.append(count, {type, arg.fixedType, arg.isRef});
  }
  size_t given = node.getDataInputs().size();
  if (given == expected.size())
    return success();
  SmallVector<std::string> names;
  for (const ExpectedInput &input : expected) {
    std::string suffix = input.isRef ? "_ref" : "";
    if (input.fixedType)
      names.push_back(typeName(ctx, input.fixedType) + suffix);
    else if (auto placeholder = dyn_cast_or_null<PlaceholderAttr>(input.type))
      names.push_back("$" + placeholder.getRef().str());
    else if (auto type = dyn_cast_or_null<TypeAttr>(input.type))
      names.push_back(getDataTypeName(type.getValue()) + suffix);
    else
      names.push_back("?");
  }
  return fail() << "NodeDef expected inputs '" << llvm::join(names, ", ")
                << "' do not match " << given
                << " inputs specified; Op<name=" << spec->name << ">";
}

FailureOr<NodeOp> cleave::createRegisteredNode(
    OpBuilder &builder, Location loc, StringRef opType, StringRef name,
    ValueRange inputs, ValueRange controls, ArrayRef<NamedAttribute> attrs,
    StringRef device, std::string &error) {
  const ops::OpSpec *spec = ops::lookupOp(opType);
  if (!spec) {
    error = "op '" + opType.str() + "' is not registered";
    return failure();
  }
  MLIRContext *ctx = builder.getContext();
  NamedAttrList list(attrs);
  auto elementType = [](Value v) -> Type {
    if (auto tensor = dyn_cast<TensorType>(v.getType()))
      return tensor.getElementType();
    return v.getType();
  };
  // Walk the input args over `inputs`, inferring what they determine.
  // A list arg without its length given takes what the args after it
  // (one input each) leave.
  unsigned next = 0;
  for (auto [index, arg] : llvm::enumerate(spec->inputs)) {
    unsigned after = spec->inputs.size() - index - 1;
    unsigned rest =
        inputs.size() >= next + after ? inputs.size() - next - after : 0;
    unsigned count = 1;
    if (!arg.numberAttr.empty()) {
      if (auto n = list.get(arg.numberAttr))
        count = cast<IntegerAttr>(n).getInt();
      else
        count = rest;
      if (!list.get(arg.numberAttr))
        list.set(arg.numberAttr, builder.getI64IntegerAttr(count));
    } else if (!arg.typeListAttr.empty()) {
      auto types = dyn_cast_or_null<ArrayAttr>(list.get(arg.typeListAttr));
      count = types ? types.size() : rest;
      if (!types) {
        SmallVector<Attribute> elems;
        for (Value v : inputs.slice(next, count))
          elems.push_back(TypeAttr::get(elementType(v)));
        list.set(arg.typeListAttr, builder.getArrayAttr(elems));
      }
    }
    if (next + count > inputs.size()) {
      error = "too few inputs for '" + opType.str() + "'";
      return failure();
    }
    if (!arg.typeAttr.empty() && !list.get(arg.typeAttr) && count > 0) {
      Type t = elementType(inputs[next]);
      if (auto ref = dyn_cast<RefType>(t))
        t = ref.getElementType();
      list.set(arg.typeAttr, TypeAttr::get(t));
    }
    next += count;
  }
  if (next != inputs.size()) {
    error = "too many inputs for '" + opType.str() + "'";
    return failure();
  }
  for (const ops::AttrSpec &attr : spec->attrs)
    if (!list.get(attr.name))
      if (Attribute value = getDefaultAttr(attr, ctx))
        list.set(attr.name, value);
  DictionaryAttr dict = list.getDictionary(ctx);
  SmallVector<graphdef::OutputArg> args;
  FailureOr<bool> known =
      graphdef::resolveOutputArgs(opType, dict, ModuleOp(), args, error);
  if (failed(known))
    return failure();
  SmallVector<Type> resultTypes;
  for (const graphdef::OutputArg &arg : args)
    for (Type t : arg.types)
      resultTypes.push_back(getTensorType(t ? t : UnknownType::get(ctx)));
  SmallVector<Value> operands(inputs);
  llvm::append_range(operands, controls);
  return NodeOp::create(builder, loc, opType, name, resultTypes, operands, dict,
                        device);
}

Attribute cleave::getNodeAttrOrDefault(graph::NodeOp node, StringRef name,
                                       DictionaryAttr bindings) {
  Attribute attr = node.getTFAttr(name);
  if (auto placeholder = dyn_cast_or_null<graph::PlaceholderAttr>(attr))
    attr = bindings ? bindings.get(placeholder.getRef()) : Attribute();
  // A producer may have stripped attrs equal to their defaults.
  if (!attr)
    if (const ops::OpSpec *spec = ops::lookupOp(node.getOpType()))
      if (const ops::AttrSpec *attrSpec = spec->findAttr(name))
        attr = getDefaultAttr(*attrSpec, node.getContext());
  return attr;
}

std::optional<int32_t> cleave::attrAsDataType(Attribute attr) {
  if (auto type = dyn_cast_or_null<TypeAttr>(attr)) {
    int32_t dt = graph::typeToDataType(type.getValue());
    if (dt >= 0)
      return dt;
  }
  return std::nullopt;
}

std::optional<int64_t> cleave::attrAsInt(Attribute attr) {
  auto i = dyn_cast_or_null<IntegerAttr>(attr);
  if (!i || i.getType().isInteger(1))
    return std::nullopt;
  return i.getInt();
}

std::optional<bool> cleave::attrAsBool(Attribute attr) {
  if (auto b = dyn_cast_or_null<BoolAttr>(attr))
    return b.getValue();
  return std::nullopt;
}

std::optional<double> cleave::attrAsFloat(Attribute attr) {
  if (auto f = dyn_cast_or_null<FloatAttr>(attr))
    return f.getValueAsDouble();
  return std::nullopt;
}

std::optional<std::string> cleave::attrAsString(Attribute attr) {
  if (auto s = dyn_cast_or_null<StringAttr>(attr))
    return s.str();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> cleave::attrAsIntList(Attribute attr) {
  auto list = dyn_cast_or_null<ArrayAttr>(attr);
  if (!list)
    return std::nullopt;
  std::vector<int64_t> values;
  for (Attribute a : list) {
    std::optional<int64_t> i = attrAsInt(a);
    if (!i)
      return std::nullopt;
    values.push_back(*i);
  }
  return values;
}

std::string cleave::getVariableName(graph::NodeOp node) {
  auto shared = dyn_cast_or_null<StringAttr>(node.getTFAttr("shared_name"));
  return shared && !shared.getValue().empty() ? shared.str()
                                              : node.getName().str();
}

std::optional<std::vector<int64_t>>
cleave::getKnownShapeAttr(graph::NodeOp node) {
  auto shape = dyn_cast_or_null<graph::ShapeAttr>(node.getTFAttr("shape"));
  if (!shape || shape.getUnknownRank() ||
      llvm::any_of(shape.getDims(), [](int64_t d) { return d < 0; }))
    return std::nullopt;
  return std::vector<int64_t>(shape.getDims().begin(), shape.getDims().end());
}
