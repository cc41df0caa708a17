//===- OutputArgs.cpp - the outputs a node's signature gives --------------===//
//
// A node's outputs from the op registry, or from a library function's
// signature for a call, with the types its attrs give them.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Utils/OutputArgs.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Ops/OpRegistry.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

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

/// "DT_FLOAT" -> 1; 0 for anything else.
static int32_t parseDataTypeName(StringRef text) {
  return ops::parseDataTypeEnum(text.trim()).value_or(0);
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

FailureOr<bool> graph::resolveOutputArgs(StringRef opType,
                                         DictionaryAttr attrs, ModuleOp module,
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
