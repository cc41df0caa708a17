//===- NodeDefUtil.cpp - attr defaults and attr validation ----------------===//
//
// Defaults are written in the registry as TensorFlow writes them in
// REGISTER_OP ("DT_INT32", "'NHWC'", "[1, 1, 1, 1]", "{ unknown_rank: true
// }"); they become the attribute the GraphDef importer makes of the same
// value written in a NodeDef, so a defaulted attr is exactly what an
// explicit one would be (DefaultAttrsTest checks every registered default
// against the importer).
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "cleave/Dialect/Graph/Utils/OutputArgs.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

/// The elements of a "[a, b]" list default; quoted elements may hold
/// commas. Empty when `text` is not bracketed.
static std::optional<SmallVector<StringRef>> splitListDefault(StringRef text) {
  text = text.trim();
  if (!text.consume_front("[") || !text.consume_back("]"))
    return std::nullopt;
  SmallVector<StringRef> elements;
  char quote = 0;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      elements.push_back(text.slice(begin, i).trim());
      begin = i + 1;
    }
  }
  if (!text.drop_front(begin).trim().empty() || !elements.empty())
    elements.push_back(text.drop_front(begin).trim());
  return elements;
}

/// A shape default: "[2, 3]" (its dims) or a TensorShapeProto in text
/// format ("{ unknown_rank: true }", "{ dim { size: -1 } }").
static Attribute parseShapeDefault(StringRef text, MLIRContext *ctx) {
  text = text.trim();
  SmallVector<int64_t> dims;
  if (text.starts_with("[")) {
    std::optional<SmallVector<StringRef>> elements = splitListDefault(text);
    if (!elements)
      return {};
    for (StringRef element : *elements) {
      int64_t dim;
      if (element.getAsInteger(10, dim))
        return {};
      dims.push_back(dim);
    }
    return ShapeAttr::get(ctx, dims);
  }
  if (!text.consume_front("{") || !text.consume_back("}"))
    return {};
  SmallVector<StringRef> tokens;
  llvm::SplitString(text, tokens, " \t\n{}:");
  bool unknownRank = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "unknown_rank" && i + 1 < tokens.size())
      unknownRank = tokens[++i] == "true";
    else if (tokens[i] == "size" && i + 1 < tokens.size() &&
             !tokens[i + 1].getAsInteger(10, dims.emplace_back()))
      ++i;
    else if (tokens[i] != "dim")
      return {};
  }
  return unknownRank ? ShapeAttr::getUnknownRank(ctx)
                     : ShapeAttr::get(ctx, dims);
}

/// One value of an attr of scalar kind `type` ("int", "type", ...) as the
/// importer represents it, or null when `text` is not one.
static Attribute parseScalarDefault(StringRef type, StringRef text,
                                    MLIRContext *ctx) {
  Builder b(ctx);
  text = text.trim();
  if (type == "string") {
    std::optional<std::string> value = ops::parseQuotedDefault(text);
    return value ? b.getStringAttr(*value) : Attribute();
  }
  if (type == "int") {
    int64_t value;
    return text.getAsInteger(10, value) ? Attribute()
                                        : b.getI64IntegerAttr(value);
  }
  if (type == "float") {
    // TensorFlow's float attrs are float32: the decimal text rounds once.
    std::string lower = text.lower();
    double value;
    if (lower == "inf" || lower == "-inf" || lower == "nan")
      value = lower == "nan" ? NAN : lower == "inf" ? INFINITY : -INFINITY;
    else if (text.getAsDouble(value))
      return {};
    return b.getF32FloatAttr(static_cast<float>(value));
  }
  if (type == "bool") {
    if (text != "true" && text != "false")
      return {};
    return b.getBoolAttr(text == "true");
  }
  if (type == "type") {
    std::optional<int32_t> dtype = ops::parseDataTypeEnum(text);
    return dtype ? TypeAttr::get(dataTypeToType(ctx, *dtype)) : Attribute();
  }
  if (type == "shape")
    return parseShapeDefault(text, ctx);
  return {};
}

Attribute cleave::getDefaultAttr(const ops::AttrSpec &attr,
                                 MLIRContext *context) {
  if (attr.defaultValue.empty())
    return {};
  StringRef type = attr.type;
  if (!type.consume_front("list(") || !type.consume_back(")"))
    return parseScalarDefault(type, attr.defaultValue, context);
  std::optional<SmallVector<StringRef>> elements =
      splitListDefault(attr.defaultValue);
  if (!elements)
    return {};
  SmallVector<Attribute> items;
  for (StringRef element : *elements) {
    Attribute item = parseScalarDefault(type, element, context);
    if (!item)
      return {};
    items.push_back(item);
  }
  return ArrayAttr::get(context, items);
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
    int64_t count; ///< how many inputs in a row (a number_attr's N)
  };
  SmallVector<ExpectedInput> expected;
  int64_t total = 0;
  for (const ops::ArgSpec &arg : spec->inputs) {
    if (!arg.typeListAttr.empty()) {
      Attribute types = getNodeAttrOrDefault(node, arg.typeListAttr, {});
      if (!isa_and_nonnull<ArrayAttr>(types))
        return success(); // a placeholder list: its length is not known
      for (Attribute type : cast<ArrayAttr>(types))
        expected.push_back({type, 0, arg.isRef, 1});
      total += cast<ArrayAttr>(types).size();
      continue;
    }
    int64_t count = 1;
    if (!arg.numberAttr.empty()) {
      std::optional<int64_t> n =
          attrAsInt(getNodeAttrOrDefault(node, arg.numberAttr, {}));
      if (!n)
        return success(); // a placeholder count
      count = std::max<int64_t>(*n, 0);
    }
    Attribute type = arg.fixedType
                         ? Attribute()
                         : getNodeAttrOrDefault(node, arg.typeAttr, {});
    expected.push_back({type, arg.fixedType, arg.isRef, count});
    // An N of 2^31 is a count to compare, not a list to build.
    if (llvm::AddOverflow(total, count, total))
      total = std::numeric_limits<int64_t>::max();
  }
  size_t given = node.getDataInputs().size();
  if (int64_t(given) == total)
    return success();
  // TensorFlow names every expected input; past a few dozen, the rest are
  // counted.
  constexpr size_t kMaxNamed = 32;
  SmallVector<std::string> names;
  for (const ExpectedInput &input : expected) {
    std::string suffix = input.isRef ? "_ref" : "";
    std::string name = "?";
    if (input.fixedType)
      name = typeName(ctx, input.fixedType) + suffix;
    else if (auto placeholder = dyn_cast_or_null<PlaceholderAttr>(input.type))
      name = "$" + placeholder.getRef().str();
    else if (auto type = dyn_cast_or_null<TypeAttr>(input.type))
      name = getDataTypeName(type.getValue()) + suffix;
    for (int64_t k = 0; k < input.count && names.size() < kMaxNamed; ++k)
      names.push_back(name);
  }
  if (total > int64_t(names.size()))
    names.push_back("... (" + std::to_string(total) + " in all)");
  return fail() << "NodeDef expected inputs '" << llvm::join(names, ", ")
                << "' do not match " << given
                << " inputs specified; Op<name=" << spec->name << ">";
}

SmallVector<int32_t> cleave::getExpectedInputDTypes(NodeOp node) {
  size_t given = node.getDataInputs().size();
  SmallVector<int32_t> dtypes;
  const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
  if (!spec) {
    dtypes.assign(given, 0);
    return dtypes;
  }
  // A ref input carries its variable's value: the base type (DT_FLOAT_REF
  // is DT_FLOAT + 100).
  auto base = [](int32_t dtype) { return dtype > 100 ? dtype - 100 : dtype; };
  auto dtypeOf = [&](Attribute type) -> int32_t {
    auto typeAttr = dyn_cast_or_null<TypeAttr>(type);
    return typeAttr ? base(typeToDataType(typeAttr.getValue())) : 0;
  };
  for (const ops::ArgSpec &arg : spec->inputs) {
    if (!arg.typeListAttr.empty()) {
      auto types = dyn_cast_or_null<ArrayAttr>(
          getNodeAttrOrDefault(node, arg.typeListAttr, {}));
      if (!types)
        return {};
      for (Attribute type : types)
        dtypes.push_back(dtypeOf(type));
      continue;
    }
    int64_t count = 1;
    if (!arg.numberAttr.empty()) {
      std::optional<int64_t> n =
          attrAsInt(getNodeAttrOrDefault(node, arg.numberAttr, {}));
      // Validated: the count matches the inputs given.
      if (!n || *n < 0 || *n > int64_t(given))
        return {};
      count = *n;
    }
    int32_t dtype = arg.fixedType
                        ? base(arg.fixedType)
                        : dtypeOf(getNodeAttrOrDefault(node, arg.typeAttr, {}));
    dtypes.append(size_t(count), dtype);
    if (dtypes.size() > given)
      return {};
  }
  if (dtypes.size() != given)
    return {};
  return dtypes;
}

LogicalResult cleave::validateNodeDefs(Operation *root) {
  WalkResult result = root->walk([](NodeOp node) {
    return failed(validateNodeDef(node)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
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
  SmallVector<graph::OutputArg> args;
  FailureOr<bool> known =
      graph::resolveOutputArgs(opType, dict, ModuleOp(), args, error);
  if (failed(known))
    return failure();
  SmallVector<Type> resultTypes;
  for (const graph::OutputArg &arg : args)
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

bool cleave::isDefinedOp(graph::NodeOp node) {
  return ops::lookupOp(node.getOpType()) ||
         SymbolTable::lookupNearestSymbolFrom(node, node.getOpTypeAttr());
}

bool cleave::isVariableOpType(llvm::StringRef op) {
  return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
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
