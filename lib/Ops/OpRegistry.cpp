//===- OpRegistry.cpp - TensorFlow op signatures --------------------------===//
//
// Parses the REGISTER_OP-style spec strings of the family tables (see
// OpTables.h) with TensorFlow's grammar (op_def_builder.cc), validates them
// the way ValidateOpDef does, and serves lookups. The tables are parsed once,
// on first use; a malformed entry is a programming error and aborts.
//
//===----------------------------------------------------------------------===//

#include "cleave/Ops/OpRegistry.h"

#include "OpTables.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

#include <unistd.h>

using namespace cleave::ops;
using namespace cleave::ops::detail;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Data types
//===----------------------------------------------------------------------===//

namespace {
struct DataTypeName {
  StringRef name;
  int32_t value;
};
} // namespace

// TensorFlow's DataType enum under the names DataTypeFromString accepts.
static constexpr DataTypeName kDataTypeNames[] = {
    {"float", 1},
    {"double", 2},
    {"int32", 3},
    {"uint8", 4},
    {"int16", 5},
    {"int8", 6},
    {"string", 7},
    {"complex64", 8},
    {"int64", 9},
    {"bool", 10},
    {"qint8", 11},
    {"quint8", 12},
    {"qint32", 13},
    {"bfloat16", 14},
    {"qint16", 15},
    {"quint16", 16},
    {"uint16", 17},
    {"complex128", 18},
    {"half", 19},
    {"resource", 20},
    {"variant", 21},
    {"uint32", 22},
    {"uint64", 23},
    {"float8_e5m2", 24},
    {"float8_e4m3fn", 25},
    {"float8_e4m3fnuz", 26},
    {"float8_e4m3b11fnuz", 27},
    {"float8_e5m2fnuz", 28},
    {"int4", 29},
    {"uint4", 30},
    {"int2", 31},
    {"uint2", 32},
    {"float4_e2m1fn", 33},
    // TensorFlow also reads "complex" as complex64.
    {"complex", 8}};

static constexpr int32_t kResourceType = 20;

// The compound names of op_def_builder.cc, expanded as types.cc does.
static constexpr int32_t kNumberTypes[] = {1,  2,  3,  4,  5,  6,  8,  9, 11,
                                           12, 13, 14, 17, 18, 19, 22, 23};
static constexpr int32_t kRealNumberTypes[] = {1, 2,  3,  4,  5,  6,
                                               9, 14, 17, 19, 22, 23};
static constexpr int32_t kQuantizedTypes[] = {11, 12, 15, 16, 13};

static std::optional<int32_t> parseDataTypeName(StringRef name) {
  for (const DataTypeName &entry : kDataTypeNames)
    if (entry.name == name)
      return entry.value;
  return std::nullopt;
}

std::optional<int32_t> cleave::ops::parseDataTypeEnum(StringRef text) {
  if (!text.consume_front("DT_"))
    return std::nullopt;
  return parseDataTypeName(text.lower());
}

/// Appends the members of a compound type name ("numbertype"); false when
/// `name` is not one.
static bool appendCompoundType(StringRef name, std::vector<int32_t> &types) {
  llvm::ArrayRef<int32_t> members;
  if (name == "numbertype" || name == "numerictype")
    members = kNumberTypes;
  else if (name == "realnumbertype" || name == "realnumerictype")
    members = kRealNumberTypes;
  else if (name == "quantizedtype")
    members = kQuantizedTypes;
  else
    return false;
  for (int32_t type : members)
    if (!llvm::is_contained(types, type))
      types.push_back(type);
  return true;
}

//===----------------------------------------------------------------------===//
// Spec scanning
//===----------------------------------------------------------------------===//

namespace {
/// A cursor over one spec string. Every consume skips leading blanks first,
/// as TensorFlow's Scanner-based parser does.
class Cursor {
public:
  explicit Cursor(StringRef text) : rest(text) {}

  bool atEnd() {
    rest = rest.ltrim();
    return rest.empty();
  }

  bool consume(StringRef literal) {
    rest = rest.ltrim();
    return rest.consume_front(literal);
  }

  bool peek(char c) {
    rest = rest.ltrim();
    return !rest.empty() && rest.front() == c;
  }

  /// [A-Za-z_][A-Za-z0-9_]*, or empty when none starts here.
  StringRef identifier() {
    rest = rest.ltrim();
    size_t len = 0;
    while (len < rest.size() &&
           (llvm::isAlnum(rest[len]) || rest[len] == '_') &&
           (len > 0 || !llvm::isDigit(rest[len])))
      ++len;
    StringRef ident = rest.take_front(len);
    rest = rest.drop_front(len);
    return ident;
  }

  /// An optionally negative decimal integer.
  std::optional<int64_t> integer() {
    rest = rest.ltrim();
    size_t len = rest.starts_with("-") ? 1 : 0;
    while (len < rest.size() && llvm::isDigit(rest[len]))
      ++len;
    int64_t value;
    if (rest.take_front(len).getAsInteger(10, value))
      return std::nullopt;
    rest = rest.drop_front(len);
    return value;
  }

  /// A '...' or "..." string with C escapes; returns the unescaped text.
  std::optional<std::string> quoted() {
    rest = rest.ltrim();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return std::nullopt;
    char quote = rest.front();
    std::string value;
    for (size_t i = 1; i < rest.size(); ++i) {
      char c = rest[i];
      if (c == quote) {
        rest = rest.drop_front(i + 1);
        return value;
      }
      if (c == '\\' && i + 1 < rest.size()) {
        char next = rest[++i];
        switch (next) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '0':
          value += '\0';
          break;
        default:
          value += next;
          break; // \\ \' \"
        }
        continue;
      }
      value += c;
    }
    return std::nullopt; // Unterminated.
  }

  StringRef rest;
};
} // namespace

static llvm::Error specError(StringRef op, StringRef kind, StringRef spec,
                             const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "op '" + op + "': " + kind + " \"" + spec +
                                     "\": " + message);
}

static bool isArgName(StringRef name) {
  // TensorFlow: [a-z][a-z0-9_]*.
  if (name.empty() || !llvm::isLower(name.front()))
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isLower(c) || llvm::isDigit(c) || c == '_';
  });
}

//===----------------------------------------------------------------------===//
// Attrs
//===----------------------------------------------------------------------===//

std::optional<std::string> cleave::ops::parseQuotedDefault(StringRef text) {
  Cursor cursor(text);
  std::optional<std::string> value = cursor.quoted();
  if (!value || !cursor.atEnd())
    return std::nullopt;
  return value;
}

/// Checks the elements of a "[a, b]" list default with `check`. List
/// elements here never contain commas (ints, floats, bools, DT_ names).
static bool allListElements(StringRef text,
                            llvm::function_ref<bool(StringRef)> check) {
  if (!text.consume_front("[") || !text.consume_back("]"))
    return false;
  text = text.trim();
  if (text.empty())
    return true;
  llvm::SmallVector<StringRef> elements;
  text.split(elements, ',');
  return llvm::all_of(elements,
                      [&](StringRef element) { return check(element.trim()); });
}

static bool isIntLiteral(StringRef text) {
  int64_t value;
  return !text.getAsInteger(10, value);
}

static bool isFloatLiteral(StringRef text) {
  double value;
  std::string lower = text.lower();
  if (lower == "inf" || lower == "-inf" || lower == "nan")
    return true;
  return !text.getAsDouble(value);
}

static bool isBoolLiteral(StringRef text) {
  return text == "true" || text == "false";
}

/// Checks that a default (kept verbatim) is a value of the attr's type and
/// among its allowed values, as TensorFlow's ParseAttrValue and
/// ValidateAttrValue would. Returns an error message, or empty when fine.
static std::string checkDefault(const AttrSpec &attr, StringRef text) {
  StringRef type = attr.type;
  if (type == "string") {
    Cursor cursor(text);
    std::optional<std::string> value = cursor.quoted();
    if (!value || !cursor.atEnd())
      return "string default must be one quoted string";
    if (!attr.allowedStrings.empty() &&
        !llvm::is_contained(attr.allowedStrings, *value))
      return "default '" + *value + "' is not an allowed value";
    return "";
  }
  if (type == "int") {
    int64_t value;
    if (text.getAsInteger(10, value))
      return "int default must be an integer";
    if (attr.minimum && value < *attr.minimum)
      return "default is below the minimum";
    return "";
  }
  if (type == "float")
    return isFloatLiteral(text) ? "" : "float default must be a number";
  if (type == "bool")
    return isBoolLiteral(text) ? "" : "bool default must be true or false";
  if (type == "type") {
    std::optional<int32_t> value = parseDataTypeEnum(text);
    if (!value)
      return "type default must be a DT_ name";
    if (!attr.allowedTypes.empty() &&
        !llvm::is_contained(attr.allowedTypes, *value))
      return "default type is not an allowed value";
    return "";
  }
  if (type == "shape") {
    bool braces = text.starts_with("{") && text.ends_with("}");
    bool brackets = text.starts_with("[") && text.ends_with("]");
    return braces || brackets ? "" : "shape default must be {...} or [...]";
  }
  if (type == "list(int)")
    return allListElements(text, isIntLiteral) ? "" : "expected a list of ints";
  if (type == "list(float)")
    return allListElements(text, isFloatLiteral) ? ""
                                                 : "expected a list of floats";
  if (type == "list(bool)")
    return allListElements(text, isBoolLiteral) ? ""
                                                : "expected a list of bools";
  if (type == "list(type)") {
    auto isAllowed = [&](StringRef element) {
      std::optional<int32_t> value = parseDataTypeEnum(element);
      return value && (attr.allowedTypes.empty() ||
                       llvm::is_contained(attr.allowedTypes, *value));
    };
    return allListElements(text, isAllowed) ? ""
                                            : "expected a list of DT_ names";
  }
  if (type.starts_with("list(")) {
    // list(string), list(shape), list(func), list(tensor): brackets only;
    // their elements may contain commas.
    bool brackets = text.starts_with("[") && text.ends_with("]");
    return brackets ? "" : "list default must be [...]";
  }
  return ""; // tensor, func: kept as written.
}

/// Parses "{float, int32}", "{numbertype, bool}" or "{'SAME', 'VALID'}" after
/// the opening brace; sets the attr's base type and allowed values.
static std::string parseAllowedValues(Cursor &cursor, AttrSpec &attr,
                                      std::string &baseType) {
  bool strings = cursor.peek('\'') || cursor.peek('"');
  baseType = strings ? "string" : "type";
  while (true) {
    if (strings) {
      std::optional<std::string> value = cursor.quoted();
      if (!value)
        return "expected a quoted string in {...}";
      attr.allowedStrings.push_back(std::move(*value));
    } else {
      StringRef name = cursor.identifier();
      if (name.empty())
        return "expected a type name in {...}";
      if (!appendCompoundType(name, attr.allowedTypes)) {
        std::optional<int32_t> type = parseDataTypeName(name);
        if (!type)
          return ("unknown type '" + name + "'").str();
        if (!llvm::is_contained(attr.allowedTypes, *type))
          attr.allowedTypes.push_back(*type);
      }
    }
    if (cursor.consume(",")) {
      if (cursor.consume("}")) // TensorFlow allows a trailing comma.
        return "";
      continue;
    }
    if (cursor.consume("}"))
      return "";
    return "expected ',' or '}' in {...}";
  }
}

/// Parses "name: [list(]TYPE[)] [>= N] [= default]".
static llvm::Expected<AttrSpec> parseAttr(StringRef op, StringRef spec) {
  auto fail = [&](const llvm::Twine &message) {
    return specError(op, "attr", spec, message);
  };
  AttrSpec attr;
  Cursor cursor(spec);
  attr.name = cursor.identifier().str();
  if (attr.name.empty() || !llvm::isAlpha(attr.name.front()))
    return fail("expected an attr name");
  if (!cursor.consume(":"))
    return fail("expected ':' after the name");
  if (parseDataTypeName(attr.name))
    return fail("an attr may not be named like a data type");

  Cursor afterList = cursor;
  bool isList = afterList.consume("list") && afterList.consume("(");
  if (isList)
    cursor = afterList;
  std::string baseType;
  if (cursor.consume("{")) {
    std::string error = parseAllowedValues(cursor, attr, baseType);
    if (!error.empty())
      return fail(error);
  } else {
    StringRef word = cursor.identifier();
    static constexpr StringRef kPlainTypes[] = {
        "string", "int", "float", "bool", "type", "shape", "tensor", "func"};
    if (llvm::is_contained(kPlainTypes, word))
      baseType = word.str();
    else if (appendCompoundType(word, attr.allowedTypes))
      baseType = "type";
    else
      return fail("unknown attr type '" + word + "'");
  }
  if (isList && !cursor.consume(")"))
    return fail("expected ')' to close 'list('");
  attr.type = isList ? "list(" + baseType + ")" : baseType;

  if ((isList || baseType == "int") && cursor.consume(">=")) {
    attr.minimum = cursor.integer();
    if (!attr.minimum)
      return fail("expected an integer after '>='");
  }

  if (cursor.consume("=")) {
    attr.defaultValue = cursor.rest.trim().str();
    if (attr.defaultValue.empty())
      return fail("empty default value");
    std::string error = checkDefault(attr, attr.defaultValue);
    if (!error.empty())
      return fail(error);
  } else if (!cursor.atEnd()) {
    return fail("unexpected '" + cursor.rest + "'");
  }
  return attr;
}

//===----------------------------------------------------------------------===//
// Args
//===----------------------------------------------------------------------===//

/// Parses "name: TYPE", "name: N * TYPE", "name: Ref(...)"; TYPE is a data
/// type or the name of a type / list(type) attr of `opSpec`.
static llvm::Expected<ArgSpec> parseArg(StringRef kind, StringRef spec,
                                        OpSpec &opSpec) {
  StringRef op = opSpec.name;
  auto fail = [&](const llvm::Twine &message) {
    return specError(op, kind, spec, message);
  };
  ArgSpec arg;
  Cursor cursor(spec);
  arg.name = cursor.identifier().str();
  if (!isArgName(arg.name))
    return fail("expected a name matching [a-z][a-z0-9_]*");
  if (!cursor.consume(":"))
    return fail("expected ':' after the name");

  // "Ref" is an identifier too; only "Ref(" opens a reference.
  Cursor afterRef = cursor;
  if (afterRef.consume("Ref") && afterRef.consume("(")) {
    arg.isRef = true;
    cursor = afterRef;
  }

  StringRef typeName = cursor.identifier();
  if (typeName.empty())
    return fail("expected a type or an attr name");
  if (cursor.consume("*")) {
    arg.numberAttr = typeName.str();
    typeName = cursor.identifier();
    if (typeName.empty())
      return fail("expected a type or an attr name after '*'");
  }
  if (arg.isRef && !cursor.consume(")"))
    return fail("expected ')' to close 'Ref('");
  if (!cursor.atEnd())
    return fail("unexpected '" + cursor.rest + "'");

  if (std::optional<int32_t> type = parseDataTypeName(typeName)) {
    arg.fixedType = *type;
  } else {
    const AttrSpec *attr = opSpec.findAttr(typeName);
    if (!attr)
      return fail("unknown attr '" + typeName + "'");
    if (attr->type == "type")
      arg.typeAttr = typeName.str();
    else if (attr->type == "list(type)" && arg.numberAttr.empty())
      arg.typeListAttr = typeName.str();
    else
      return fail("attr '" + typeName + "' is not of type 'type'" +
                  (arg.numberAttr.empty() ? " or 'list(type)'" : ""));
  }

  if (!arg.numberAttr.empty()) {
    const AttrSpec *attr = opSpec.findAttr(arg.numberAttr);
    if (!attr || attr->type != "int")
      return fail("'" + arg.numberAttr + "' is not an int attr");
  }

  // Lengths given by an attr default to a minimum of 1 (FinalizeInputOrOutput).
  StringRef lengthAttr =
      !arg.numberAttr.empty() ? arg.numberAttr : arg.typeListAttr;
  if (!lengthAttr.empty()) {
    for (AttrSpec &attr : opSpec.attrs)
      if (attr.name == lengthAttr && !attr.minimum)
        attr.minimum = 1;
  }

  // TensorFlow marks any op with a resource argument stateful.
  if (arg.fixedType == kResourceType)
    opSpec.isStateful = true;
  return arg;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

llvm::Expected<OpSpec>
cleave::ops::detail::parseOpTableEntry(const OpTableEntry &entry) {
  OpSpec spec;
  spec.name = entry.name.str();
  spec.isStateful = entry.isStateful;
  StringRef op = entry.name;
  // [A-Z_][A-Za-z0-9_>]*: '_' starts internal ops such as _Arg.
  bool validName = !op.empty() &&
                   (llvm::isUpper(op.front()) || op.front() == '_') &&
                   llvm::all_of(op, [](char c) {
                     return llvm::isAlnum(c) || c == '_' || c == '>';
                   });
  if (!validName)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid op name '" + op + "'");

  // Attrs first, so that args can refer to them in any order.
  llvm::StringSet<> names;
  for (StringRef attrSpec : entry.attrs) {
    llvm::Expected<AttrSpec> attr = parseAttr(op, attrSpec);
    if (!attr)
      return attr.takeError();
    if (!names.insert(attr->name).second)
      return specError(op, "attr", attrSpec, "duplicate name");
    spec.attrs.push_back(std::move(*attr));
  }

  // Attr, input and output names share one namespace (ValidateOpDef).
  auto parseArgs = [&](llvm::ArrayRef<StringRef> specs, StringRef kind,
                       std::vector<ArgSpec> &args) -> llvm::Error {
    for (StringRef argSpec : specs) {
      llvm::Expected<ArgSpec> arg = parseArg(kind, argSpec, spec);
      if (!arg)
        return arg.takeError();
      if (!names.insert(arg->name).second)
        return specError(op, kind, argSpec, "duplicate name");
      args.push_back(std::move(*arg));
    }
    return llvm::Error::success();
  };
  if (llvm::Error error = parseArgs(entry.inputs, "input", spec.inputs))
    return error;
  if (llvm::Error error = parseArgs(entry.outputs, "output", spec.outputs))
    return error;
  return spec;
}

namespace {
/// Every parsed op, sorted by name.
struct Registry {
  std::vector<OpSpec> ops;
};
} // namespace

static Registry buildRegistry() {
  // Each family is device-compilable or host-only by default.
  struct Family {
    OpFamily family;
    OpTable (*table)();
    bool onDevice;
  };
  static constexpr Family kFamilies[] = {
      {OpFamily::Array, getArrayOps, true},
      {OpFamily::Math, getMathOps, true},
      {OpFamily::NN, getNNOps, true},
      {OpFamily::State, getStateOps, true},
      {OpFamily::ControlFlow, getControlFlowOps, true},
      {OpFamily::Functional, getFunctionalOps, true},
      {OpFamily::Random, getRandomOps, true},
      {OpFamily::TPU, getTPUOps, true},
      {OpFamily::Host, getHostOps, false},
      {OpFamily::Data, getDataOps, false},
      {OpFamily::IO, getIOOps, false}};
  std::vector<StringRef> exceptions = getDeviceSupportExceptions();
  Registry registry;
  for (const Family &family : kFamilies) {
    for (const OpTableEntry &entry : family.table()) {
      llvm::Expected<OpSpec> spec = parseOpTableEntry(entry);
      if (!spec)
        llvm::report_fatal_error(llvm::Twine("cleave op table: ") +
                                 llvm::toString(spec.takeError()));
      spec->family = family.family;
      spec->isDeviceCompilable =
          family.onDevice != llvm::is_contained(exceptions, spec->name);
      registry.ops.push_back(std::move(*spec));
    }
  }
  for (StringRef name : exceptions)
    if (!llvm::any_of(registry.ops,
                      [&](const OpSpec &op) { return op.name == name; }))
      llvm::report_fatal_error("cleave op table: device support exception "
                               "for unregistered op '" +
                               llvm::Twine(name) + "'");
  llvm::sort(registry.ops,
             [](const OpSpec &a, const OpSpec &b) { return a.name < b.name; });
  auto duplicate = std::adjacent_find(
      registry.ops.begin(), registry.ops.end(),
      [](const OpSpec &a, const OpSpec &b) { return a.name == b.name; });
  if (duplicate != registry.ops.end())
    llvm::report_fatal_error("cleave op table: op '" +
                             llvm::Twine(duplicate->name) +
                             "' is declared twice");
  return registry;
}

static const Registry &getRegistry() {
  // Parsed on first use; C++11 makes the initialization thread-safe.
  static const Registry registry = buildRegistry();
  return registry;
}

StringRef cleave::ops::stringifyOpFamily(OpFamily family) {
  switch (family) {
  case OpFamily::Array:
    return "Array";
  case OpFamily::Math:
    return "Math";
  case OpFamily::NN:
    return "NN";
  case OpFamily::State:
    return "State";
  case OpFamily::ControlFlow:
    return "ControlFlow";
  case OpFamily::Functional:
    return "Functional";
  case OpFamily::Random:
    return "Random";
  case OpFamily::TPU:
    return "TPU";
  case OpFamily::Host:
    return "Host";
  case OpFamily::Data:
    return "Data";
  case OpFamily::IO:
    return "IO";
  }
  llvm_unreachable("unknown op family");
}

const AttrSpec *OpSpec::findAttr(StringRef attrName) const {
  for (const AttrSpec &attr : attrs)
    if (attr.name == attrName)
      return &attr;
  return nullptr;
}

bool OpSpec::mayHaveSideEffects() const {
  auto isRef = [](const ArgSpec &arg) { return arg.isRef; };
  return isStateful || llvm::any_of(inputs, isRef) ||
         llvm::any_of(outputs, isRef);
}

std::string cleave::ops::getOpNotRegisteredMessage(StringRef opType) {
  char host[256] = "localhost";
  (void)gethostname(host, sizeof(host) - 1);
  return "Op type not registered '" + opType.str() + "' in binary running on " +
         host +
         ". Make sure the Op and Kernel are registered in the binary running "
         "in this process. (graph-ops lists the ops this build knows.)";
}

const OpSpec *cleave::ops::lookupOp(StringRef opType) {
  const std::vector<OpSpec> &ops = getRegistry().ops;
  auto it = llvm::partition_point(
      ops, [&](const OpSpec &spec) { return StringRef(spec.name) < opType; });
  if (it == ops.end() || it->name != opType)
    return nullptr;
  return &*it;
}

std::vector<const OpSpec *> cleave::ops::getRegisteredOps() {
  std::vector<const OpSpec *> result;
  for (const OpSpec &spec : getRegistry().ops)
    result.push_back(&spec);
  return result;
}
