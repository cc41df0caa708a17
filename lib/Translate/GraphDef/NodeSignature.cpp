//===- NodeSignature.cpp - output args and input strings of nodes ---------===//
//
// What import and export must agree on: how many outputs a node has (and of
// which types), and how an input string names a producer's output.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "cleave/Ops/OpRegistry.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
namespace tf = tensorflow;

namespace {
/// An output arg as either the registry or a FunctionDef signature gives it.
struct ArgDecl {
  std::string name;
  int32_t fixedType = 0;
  std::string typeAttr, numberAttr, typeListAttr;
  std::string numberDefault, typeDefault;
  bool isRef = false;
};
} // namespace

static int32_t parseDataTypeName(StringRef text) {
  tf::DataType dt;
  if (tf::DataType_Parse(text.trim().str(), &dt))
    return dt;
  return 0;
}

static void collectFromSpec(const ops::OpSpec &spec,
                            SmallVectorImpl<ArgDecl> &decls) {
  for (const ops::ArgSpec &arg : spec.outputs) {
    ArgDecl d;
    d.name = arg.name;
    d.fixedType = arg.fixedType;
    d.typeAttr = arg.typeAttr;
    d.numberAttr = arg.numberAttr;
    d.typeListAttr = arg.typeListAttr;
    d.isRef = arg.isRef;
    if (const ops::AttrSpec *a = spec.findAttr(arg.numberAttr))
      d.numberDefault = a->defaultValue;
    if (const ops::AttrSpec *a = spec.findAttr(arg.typeAttr))
      d.typeDefault = a->defaultValue;
    decls.push_back(std::move(d));
  }
}

static void collectFromSignature(DictionaryAttr signature,
                                 SmallVectorImpl<ArgDecl> &decls) {
  auto outputs = signature.getAs<ArrayAttr>("output_arg");
  if (!outputs)
    return;
  auto str = [](DictionaryAttr d, StringRef key) -> std::string {
    if (auto s = d.getAs<StringAttr>(key))
      return s.str();
    return "";
  };
  for (Attribute item : outputs) {
    auto d = dyn_cast<DictionaryAttr>(item);
    if (!d)
      continue;
    ArgDecl decl;
    decl.name = str(d, "name");
    if (auto s = d.getAs<StringAttr>("type"))
      decl.fixedType = parseDataTypeName(s.getValue());
    else if (auto i = d.getAs<IntegerAttr>("type"))
      decl.fixedType = i.getInt();
    decl.typeAttr = str(d, "type_attr");
    decl.numberAttr = str(d, "number_attr");
    decl.typeListAttr = str(d, "type_list_attr");
    if (auto b = d.getAs<BoolAttr>("is_ref"))
      decl.isRef = b.getValue();
    decls.push_back(std::move(decl));
  }
}

FailureOr<bool> graphdef::resolveOutputArgs(StringRef opType,
                                            DictionaryAttr attrs,
                                            ModuleOp module,
                                            SmallVectorImpl<OutputArg> &args,
                                            std::string &error) {
  MLIRContext *ctx = attrs.getContext();
  SmallVector<ArgDecl, 4> decls;
  FuncOp func;
  // Library functions take precedence over registered ops, as in
  // TensorFlow's FunctionLibraryDefinition. Most graphs have none.
  if (module && !module.getOps<FuncOp>().empty())
    func = dyn_cast_or_null<FuncOp>(
        SymbolTable::lookupSymbolIn(module, StringAttr::get(ctx, opType)));
  if (func)
    collectFromSignature(func.getSignature(), decls);
  else if (const ops::OpSpec *spec = ops::lookupOp(opType))
    collectFromSpec(*spec, decls);
  else
    return false;

  for (const ArgDecl &d : decls) {
    OutputArg out;
    out.name = d.name;
    Type elementType;
    if (!d.typeAttr.empty()) {
      Attribute attr = attrs.get(d.typeAttr);
      if (auto type = dyn_cast_or_null<TypeAttr>(attr)) {
        elementType = type.getValue();
      } else if (!attr && !d.typeDefault.empty()) {
        elementType = dataTypeToType(ctx, parseDataTypeName(d.typeDefault));
      } else if (isa_and_nonnull<PlaceholderAttr>(attr)) {
        elementType = UnknownType::get(ctx);
      } else {
        error = "Type attr not found: '" + d.typeAttr + "'";
        return failure();
      }
    } else if (d.fixedType) {
      elementType = dataTypeToType(ctx, d.fixedType);
    }
    if (elementType && d.isRef)
      elementType = RefType::get(ctx, elementType);

    if (!d.typeListAttr.empty()) {
      Attribute attr = attrs.get(d.typeListAttr);
      auto list = dyn_cast_or_null<ArrayAttr>(attr);
      bool ok = list && llvm::all_of(
                            list, [](Attribute a) { return isa<TypeAttr>(a); });
      if (!ok) {
        error = "Expected '" + d.typeListAttr + "' to be a list of types";
        return failure();
      }
      for (Attribute a : list)
        out.types.push_back(cast<TypeAttr>(a).getValue());
    } else if (!d.numberAttr.empty()) {
      Attribute attr = attrs.get(d.numberAttr);
      int64_t n = -1;
      if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
        n = i.getInt();
      else if (!attr && !d.numberDefault.empty())
        StringRef(d.numberDefault).trim().getAsInteger(10, n);
      else if (isa_and_nonnull<PlaceholderAttr>(attr))
        return false;
      if (n < 0 || n > (1 << 20)) {
        error = attr ? "Value for attr '" + d.numberAttr +
                           "' is not a valid output count"
                     : "NodeDef missing attr '" + d.numberAttr + "'";
        return failure();
      }
      out.types.assign(n, elementType);
    } else {
      out.types.push_back(elementType ? elementType : UnknownType::get(ctx));
    }
    args.push_back(std::move(out));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Input strings
//===----------------------------------------------------------------------===//

/// The name a function body uses for block argument `arg`.
static StringRef getArgName(BlockArgument arg) {
  auto func = dyn_cast_or_null<FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getArgNumber() >= func.getArgNames().size())
    return "";
  return cast<StringAttr>(func.getArgNames()[arg.getArgNumber()]).getValue();
}

/// In a function body, the "out_arg:idx" of port `port` of `node`, if its
/// signature is known.
static std::optional<std::string> getOutputArgRef(NodeOp node, unsigned port) {
  SmallVector<graphdef::OutputArg> args;
  std::string error;
  auto module = node->getParentOfType<ModuleOp>();
  FailureOr<bool> known = graphdef::resolveOutputArgs(
      node.getOpType(), node.getAttrs(), module, args, error);
  if (failed(known) || !*known)
    return std::nullopt;
  unsigned base = 0;
  for (const graphdef::OutputArg &arg : args) {
    if (port < base + arg.types.size())
      return arg.name + ":" + std::to_string(port - base);
    base += arg.types.size();
  }
  return std::nullopt;
}

std::string graphdef::renderInput(Value value, bool inFunction) {
  std::optional<FlatValue> flat = getFlatValue(value);
  if (!flat) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return getArgName(arg).str();
    return "<not a node>";
  }
  if (flat->isControl)
    return ("^" + flat->node).str();
  if (inFunction) {
    if (auto node = value.getDefiningOp<NodeOp>())
      if (auto ref = getOutputArgRef(node, flat->port))
        return (flat->node + ":" + *ref).str();
    return (flat->node + ":" + Twine(flat->port)).str();
  }
  if (flat->port == 0)
    return flat->node.str();
  return (flat->node + ":" + Twine(flat->port)).str();
}

/// Splits "name:idx" into (name, idx), with idx 0 when absent.
static std::pair<StringRef, unsigned> splitIndex(StringRef text) {
  auto [head, tail] = text.rsplit(':');
  unsigned idx;
  if (tail.empty() || head.empty() || tail.getAsInteger(10, idx))
    return {text, 0};
  return {head, idx};
}

bool graphdef::spellingMatches(StringRef spelling, Value value,
                               bool inFunction) {
  // Values of regions are spelled as export renders them.
  if (!isa<BlockArgument>(value) && !value.getDefiningOp<NodeOp>())
    return false;
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && !isa<FuncOp>(arg.getOwner()->getParentOp()))
    return false;
  bool isControl = isa<ControlType>(value.getType());
  if (isControl != spelling.starts_with("^"))
    return false;
  if (isControl)
    spelling = spelling.drop_front();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (isControl)
      return getArgName(arg) == ("^" + spelling).str();
    return splitIndex(spelling) == splitIndex(getArgName(arg));
  }
  auto node = value.getDefiningOp<NodeOp>();
  if (!node)
    return false;
  StringRef name = node.getName();
  if (isControl)
    return spelling == name;
  if (inFunction)
    return spelling.split(':').first == name;
  auto [head, port] = splitIndex(spelling);
  if (head == name)
    return port == cast<OpResult>(value).getResultNumber();
  // "node:out_arg:idx", which some writers use at the top level too.
  return spelling.starts_with((name + ":").str());
}
