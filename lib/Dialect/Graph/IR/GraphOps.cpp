//===- GraphOps.cpp - graph dialect operations ----------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace cleave::graph;

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state) {
  Region *body = state.addRegion();
  body->push_back(new Block);
}

/// Node names must be unique within one graph or function body, clusters
/// included; function arguments share that namespace in TensorFlow.
static LogicalResult verifyUniqueNodeNames(Block &block,
                                           ArrayRef<StringRef> argNames) {
  llvm::StringSet<> seen;
  for (StringRef name : argNames)
    seen.insert(name.split(':').first);
  WalkResult result = block.walk([&](NodeOp node) {
    if (seen.insert(node.getName()).second)
      return WalkResult::advance();
    node.emitOpError()
        << "Duplicated node (or function argument) with the same name: `"
        << node.getName() << "`";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult GraphOp::verifyRegions() {
  for (Operation &op : getBody().front())
    if (!isa<NodeOp, ClusterOp, ReplicateOp>(op))
      return op.emitOpError("is not allowed in a graph.graph body");
  return verifyUniqueNodeNames(getBody().front(), {});
}

//===----------------------------------------------------------------------===//
// NodeOp
//===----------------------------------------------------------------------===//

OperandRange NodeOp::getDataInputs() {
  auto inputs = getInputs();
  unsigned numData = 0;
  for (Value v : inputs) {
    if (isa<ControlType>(v.getType()))
      break;
    ++numData;
  }
  return inputs.take_front(numData);
}

OperandRange NodeOp::getControlInputs() {
  return getInputs().drop_front(getDataInputs().size());
}

std::optional<int64_t> NodeOp::getTFInt(StringRef attrName) {
  auto i = dyn_cast_or_null<IntegerAttr>(getTFAttr(attrName));
  if (!i || i.getType().isInteger(1))
    return std::nullopt;
  return i.getInt();
}

std::optional<bool> NodeOp::getTFBool(StringRef attrName) {
  if (auto b = dyn_cast_or_null<BoolAttr>(getTFAttr(attrName)))
    return b.getValue();
  return std::nullopt;
}

NodeOp NodeOp::create(OpBuilder &builder, Location loc, StringRef opType,
                      StringRef name, TypeRange outputTypes, ValueRange inputs,
                      DictionaryAttr attrs, StringRef device) {
  OperationState state(loc, getOperationName());
  state.addOperands(inputs);
  state.addTypes(outputTypes);
  state.addTypes(ControlType::get(builder.getContext()));
  auto &props = state.getOrAddProperties<Properties>();
  props.op_type = builder.getStringAttr(opType);
  props.name = builder.getStringAttr(name);
  if (!device.empty())
    props.device = builder.getStringAttr(device);
  props.attrs = attrs ? attrs : builder.getDictionaryAttr({});
  return cast<NodeOp>(builder.create(state));
}

std::optional<std::string> NodeOp::getTFString(StringRef attrName) {
  if (auto s = dyn_cast_or_null<StringAttr>(getTFAttr(attrName)))
    return s.str();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> NodeOp::getTFIntList(StringRef attrName) {
  auto list = dyn_cast_or_null<ArrayAttr>(getTFAttr(attrName));
  if (!list)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (Attribute a : list) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || i.getType().isInteger(1))
      return std::nullopt;
    values.push_back(i.getInt());
  }
  return values;
}

void NodeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  // SSA names follow node names, with `/`, `-`, `.` and the like as `_`
  // (the printer would otherwise hex-escape them).
  std::string name = getName().str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()))
    name = "n" + name;
  if (!getOutputs().empty())
    setNameFn(getOutputs().front(), name);
  setNameFn(getControl(), name + "_ctl");
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError("node '") << getName() << "' has an empty op type";
  bool sawControl = false;
  for (Value v : getInputs()) {
    bool isControl = isa<ControlType>(v.getType());
    if (sawControl && !isControl)
      return emitOpError("node '")
             << getName()
             << "': Control dependencies must come after regular dependencies";
    sawControl |= isControl;
  }
  for (Type t : getOutputs().getTypes())
    if (isa<ControlType>(t))
      return emitOpError("node '")
             << getName() << "': only the last result is a control";
  if (auto spellings = getSpellings())
    if (spellings->size() != getInputs().size())
      return emitOpError("has ") << spellings->size() << " spellings for "
                                 << getInputs().size() << " inputs";
  return success();
}

// Syntax:
//   graph.node "<op>" "<name>" (`(` data `)`)? (`[` control `]`)?
//     (`device` `(` str `)`)? (`assigned_device` `(` str `)`)?
//     (`spellings` `(` array `)`)? (`debug_info` `(` dict `)`)?
//     (`full_type` `(` dict `)`)? dict? `:` functional-type
void NodeOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printAttributeWithoutType(getOpTypeAttr());
  p << ' ';
  p.printAttributeWithoutType(getNameAttr());
  OperandRange data = getDataInputs();
  OperandRange control = getControlInputs();
  if (!data.empty()) {
    p << '(';
    p.printOperands(data);
    p << ')';
  }
  if (!control.empty()) {
    p << " [";
    p.printOperands(control);
    p << ']';
  }
  auto printOptional = [&](StringRef keyword, Attribute attr) {
    if (!attr)
      return;
    p << ' ' << keyword << '(';
    p.printAttributeWithoutType(attr);
    p << ')';
  };
  printOptional("device", getDeviceAttr());
  printOptional("assigned_device", getAssignedDeviceAttr());
  printOptional("spellings", getSpellingsAttr());
  printOptional("debug_info", getDebugInfoAttr());
  printOptional("full_type", getFullTypeAttr());
  if (!getAttrs().empty()) {
    p << ' ';
    p.printAttributeWithoutType(getAttrs());
  }
  p << " : ";
  p.printFunctionalType(data.getTypes(), getOutputs().getTypes());
}

ParseResult NodeOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  // Plain strings: a string attribute would take the `: type` that follows.
  std::string opType, name;
  SmallVector<OpAsmParser::UnresolvedOperand> data, control;
  if (parser.parseString(&opType) || parser.parseString(&name))
    return failure();
  result.addAttribute("op_type", parser.getBuilder().getStringAttr(opType));
  result.addAttribute("name", parser.getBuilder().getStringAttr(name));
  if (parser.parseOperandList(data, OpAsmParser::Delimiter::OptionalParen) ||
      parser.parseOperandList(control, OpAsmParser::Delimiter::OptionalSquare))
    return failure();
  auto parseOptional = [&](StringRef keyword, StringRef attrName) {
    if (failed(parser.parseOptionalKeyword(keyword)))
      return ParseResult(success());
    Attribute attr;
    if (parser.parseLParen() || parser.parseAttribute(attr) ||
        parser.parseRParen())
      return ParseResult(failure());
    result.addAttribute(attrName, attr);
    return ParseResult(success());
  };
  if (parseOptional("device", "device") ||
      parseOptional("assigned_device", "assigned_device") ||
      parseOptional("spellings", "spellings") ||
      parseOptional("debug_info", "debug_info") ||
      parseOptional("full_type", "full_type"))
    return failure();
  DictionaryAttr attrs = DictionaryAttr::get(ctx);
  if (parser.parseOptionalAttribute(attrs).has_value() && !attrs)
    return failure();
  result.addAttribute("attrs", attrs);
  FunctionType type;
  SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseColonType(type))
    return failure();
  if (type.getNumInputs() != data.size())
    return parser.emitError(typeLoc)
           << "expected " << data.size() << " input types, got "
           << type.getNumInputs();
  Type controlType = ControlType::get(ctx);
  if (parser.resolveOperands(data, type.getInputs(), typeLoc,
                             result.operands) ||
      parser.resolveOperands(control, controlType, result.operands))
    return failure();
  result.addTypes(type.getResults());
  result.addTypes(controlType);
  return success();
}

//===----------------------------------------------------------------------===//
// FuncOp
//===----------------------------------------------------------------------===//

ReturnOp FuncOp::getReturnOp() {
  return cast<ReturnOp>(getBody().front().getTerminator());
}

LogicalResult FuncOp::verify() {
  Block &entry = getBody().front();
  if (getArgNames().size() != entry.getNumArguments())
    return emitOpError("has ") << getArgNames().size() << " arg_names for "
                               << entry.getNumArguments() << " arguments";
  SmallVector<StringRef> argNames;
  for (Attribute a : getArgNames())
    argNames.push_back(cast<StringAttr>(a).getValue());
  if (!isa<ReturnOp>(entry.back()))
    return emitOpError("body must end in graph.return");
  for (Operation &op : entry.without_terminator())
    if (!isa<NodeOp>(op))
      return op.emitOpError("is not allowed in a graph.func body");
  return verifyUniqueNodeNames(entry, argNames);
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  unsigned numControl = 0, numData = 0;
  for (Value v : getOperands()) {
    if (isa<ControlType>(v.getType())) {
      ++numControl;
    } else {
      if (numControl)
        return emitOpError("control operands must come after data operands");
      ++numData;
    }
  }
  if (getNames().size() != numData)
    return emitOpError("has ")
           << getNames().size() << " names for " << numData << " data operands";
  if (getControlNames().size() != numControl)
    return emitOpError("has ")
           << getControlNames().size() << " control_names for " << numControl
           << " control operands";
  if (auto spellings = getSpellings())
    if (spellings->size() != numData)
      return emitOpError("has ") << spellings->size() << " spellings for "
                                 << numData << " data operands";
  auto func = (*this)->getParentOfType<FuncOp>();
  if (func && TypeRange(getOperands().take_front(numData)) !=
                  TypeRange(func.getResultTypes()))
    return emitOpError("data operand types do not match the function's "
                       "result types");
  return success();
}

#define GET_OP_CLASSES
#include "cleave/Dialect/Graph/IR/GraphOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ClusterOp and ReplicateOp
//===----------------------------------------------------------------------===//

/// The body's terminator yields values of the given types.
static LogicalResult verifyYield(Operation *op, Block &body,
                                 TypeRange expected) {
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return op->emitOpError("expects a graph.yield terminator");
  if (yield.getOperands().getTypes() != expected)
    return op->emitOpError("yields ")
           << yield.getOperands().size() << " values whose types differ from "
           << "what the op declares";
  return success();
}

int64_t ClusterOp::getNumReplicas() {
  if (auto replicate = dyn_cast_or_null<ReplicateOp>((*this)->getParentOp()))
    return replicate.getN();
  return 1;
}

LogicalResult ClusterOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 ||
      !isa<ControlType>(body.getArgument(0).getType()))
    return emitOpError("expects one !graph.control block argument standing "
                       "for the metadata's control token");
  for (Operation &op : body.without_terminator())
    if (!isa<NodeOp>(op))
      return op.emitOpError("is not allowed in a graph.cluster body");
  return verifyYield(*this, body, getOutputs().getTypes());
}

ClusterOp ReplicateOp::getCluster() {
  for (Operation &op : getBody().front())
    if (auto cluster = dyn_cast<ClusterOp>(op))
      return cluster;
  return {};
}

bool ReplicateOp::isPackedInput(unsigned arg) {
  auto entry = dyn_cast<DictionaryAttr>(getInputNodes()[arg]);
  auto attrs = entry ? entry.getAs<DictionaryAttr>("attrs") : DictionaryAttr();
  auto packed = attrs ? attrs.getAs<BoolAttr>("is_packed") : BoolAttr();
  return packed && packed.getValue();
}

/// The first packed block argument (the number of replicated ones): packed
/// arguments follow the replicated ones (the verifier checks it), so a
/// binary search finds it. Callers ask per argument and per replica.
static unsigned firstPackedInput(ReplicateOp replicate) {
  auto args = llvm::seq<unsigned>(0, replicate.getInputNodes().size());
  return *llvm::partition_point(
      args, [&](unsigned arg) { return !replicate.isPackedInput(arg); });
}

unsigned ReplicateOp::getNumDataInputs() {
  unsigned numReplicated = firstPackedInput(*this);
  return numReplicated * getN() +
         (getInputNodes().size() - numReplicated);
}

ValueRange ReplicateOp::getInputGroup(unsigned arg) {
  // Replicated groups (n operands each) come first, then packed singles.
  unsigned n = getN(), numReplicated = firstPackedInput(*this);
  if (arg < numReplicated)
    return getInputs().slice(arg * n, n);
  return getInputs().slice(numReplicated * n + (arg - numReplicated), 1);
}

Value ReplicateOp::getReplicaInput(unsigned arg, unsigned replica) {
  ValueRange group = getInputGroup(arg);
  return group.size() == 1 ? group[0] : group[replica];
}

LogicalResult ReplicateOp::verify() {
  int64_t n = getN();
  if (n < 2)
    return emitOpError("expects 'n' to be at least 2, got ") << n;
  if (n > kMaxReplicas)
    return emitOpError("expects 'n' to be at most ")
           << kMaxReplicas << " (the replicas Cleave runs), got " << n;
  Block &body = getBody().front();
  unsigned numGroups = body.getNumArguments();
  if (getInputNodes().size() != numGroups)
    return emitOpError("expects one input_nodes entry per block argument");
  unsigned numData = 0, numPacked = 0;
  for (Value v : getInputs())
    numData += !isa<ControlType>(v.getType());
  for (unsigned g = 0; g < numGroups; ++g) {
    if (isPackedInput(g))
      ++numPacked;
    else if (numPacked)
      return emitOpError("expects packed inputs after the replicated ones, "
                         "but block argument ")
             << g << " is replicated";
  }
  if (numData != getNumDataInputs())
    return emitOpError("expects number of data operands (")
           << numData
           << ") to be 'n' * replicated block arguments + packed block "
              "arguments ("
           << n << " * " << numGroups - numPacked << " + " << numPacked << ")";
  for (unsigned g = 0, index = 0; g < numGroups; ++g)
    for (Value operand : getInputGroup(g)) {
      if (operand.getType() != body.getArgument(g).getType())
        return emitOpError("incompatible types for operand ")
               << index << " and block argument " << g;
      ++index;
    }
  int64_t numControls = 0;
  for (ArrayAttr list : {getInputNodes(), getOutputNodes()})
    for (Attribute entry : list) {
      auto dict = dyn_cast<DictionaryAttr>(entry);
      if (!dict)
        return emitOpError("input_nodes and output_nodes hold dictionaries");
      // An empty output entry: a yielded value without TPUReplicatedOutput.
      if (dict.empty() && list == getOutputNodes())
        continue;
      if (!dict.getAs<StringAttr>("name") ||
          !dict.getAs<DictionaryAttr>("attrs"))
        return emitOpError("expects each folded node to have a 'name' string "
                           "and an 'attrs' dictionary, got ")
               << dict;
      if (auto c = dict.getAs<IntegerAttr>("controls"))
        numControls += c.getInt();
    }
  if (numData + numControls != getInputs().size())
    return emitOpError("expects ")
           << numControls << " control operands after the data operands";
  ClusterOp cluster = getCluster();
  unsigned numClusters = 0;
  for (Operation &op : body.without_terminator()) {
    numClusters += isa<ClusterOp>(op);
    if (!isa<ClusterOp, NodeOp>(op))
      return op.emitOpError("is not allowed in a graph.replicate body");
  }
  if (!cluster || numClusters != 1)
    return emitOpError("expects its body to hold exactly one graph.cluster");
  auto yield = cast<YieldOp>(body.getTerminator());
  if (getOutputNodes().size() != yield.getNumOperands())
    return emitOpError("expects one output_nodes entry per yielded value");
  if (getOutputs().size() != n * yield.getNumOperands())
    return emitOpError("expects number of results (")
           << getOutputs().size()
           << ") to be equal to 'n' * number of yielded values (" << n << " * "
           << yield.getNumOperands() << ")";
  for (auto [k, type] : llvm::enumerate(yield.getOperandTypes()))
    for (int64_t r = 0; r < n; ++r)
      if (getOutputs()[k * n + r].getType() != type)
        return emitOpError("incompatible types for result ")
               << k * n + r << " and yielded value " << k;
  return success();
}

std::optional<FlatValue> cleave::graph::getFlatValue(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (auto cluster = dyn_cast_or_null<ClusterOp>(parent))
        return FlatValue{cluster.getMetadataName(), 0, true};
      if (auto replicate = dyn_cast_or_null<ReplicateOp>(parent))
        return FlatValue{
            cast<DictionaryAttr>(replicate.getInputNodes()[arg.getArgNumber()])
                .getAs<StringAttr>("name")
                .getValue(),
            0, false};
      return std::nullopt;
    }
    Operation *def = value.getDefiningOp();
    unsigned port = cast<OpResult>(value).getResultNumber();
    if (auto node = dyn_cast<NodeOp>(def))
      return FlatValue{node.getName(), port, value == node.getControl()};
    if (auto cluster = dyn_cast<ClusterOp>(def)) {
      if (value == cluster.getControl())
        return FlatValue{cluster.getMetadataName(), 0, true};
      value = cluster.getBody().front().getTerminator()->getOperand(port);
      continue;
    }
    if (auto replicate = dyn_cast<ReplicateOp>(def)) {
      if (value == replicate.getControl())
        return FlatValue{replicate.getCluster().getMetadataName(), 0, true};
      uint64_t n = replicate.getN();
      auto tro = cast<DictionaryAttr>(replicate.getOutputNodes()[port / n]);
      if (auto name = tro.getAs<StringAttr>("name"))
        return FlatValue{name.getValue(), unsigned(port % n), false};
      value = replicate.getBody().front().getTerminator()->getOperand(port / n);
      continue;
    }
    return std::nullopt;
  }
}

std::optional<SmallVector<int64_t>>
cleave::graph::getConstantInts(Value value) {
  auto producer = value.getDefiningOp<NodeOp>();
  if (!producer || producer.getOpType() != "Const")
    return std::nullopt;
  auto tensor = dyn_cast_or_null<TensorAttr>(producer.getTFAttr("value"));
  auto dense = tensor
                   ? dyn_cast_or_null<DenseIntElementsAttr>(tensor.getValue())
                   : DenseIntElementsAttr();
  if (!dense || dense.getElementType().isInteger(1))
    return std::nullopt;
  // Shapes, axes and sizes are short; a (splat) constant of millions of
  // elements is data, and listing it would cost what it describes.
  if (dense.getNumElements() > kMaxConstantInts)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

InFlightDiagnostic cleave::graph::nodeError(NodeOp node) {
  return node.emitError() << "Node '" << node.getName() << "': ";
}

StringRef cleave::graph::getCalleeName(NodeOp node) {
  if (node.getOpType() != "PartitionedCall" &&
      node.getOpType() != "StatefulPartitionedCall")
    return node.getOpType();
  if (auto f = dyn_cast_or_null<FuncAttr>(node.getTFAttr("f")))
    return f.getName().getValue();
  return "";
}

SmallVector<std::pair<StringRef, StringRef>>
cleave::graph::getCalledFunctions(NodeOp node) {
  SmallVector<std::pair<StringRef, StringRef>> called;
  for (NamedAttribute attr : node.getAttrs()) {
    if (auto f = dyn_cast<FuncAttr>(attr.getValue()))
      called.push_back({attr.getName().getValue(), f.getName().getValue()});
    if (auto list = dyn_cast<ArrayAttr>(attr.getValue()))
      for (Attribute element : list)
        if (auto f = dyn_cast<FuncAttr>(element))
          called.push_back({attr.getName().getValue(), f.getName().getValue()});
  }
  if (SymbolTable::lookupNearestSymbolFrom<FuncOp>(
          node, StringAttr::get(node.getContext(), node.getOpType())))
    called.push_back({"", node.getOpType()});
  return called;
}

FailureOr<FuncOp> cleave::graph::buildLibraryFunction(
    ModuleOp module, StringRef base, ArrayRef<Type> argTypes,
    function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, ArrayRef<Value>)>
        build,
    Location loc) {
  std::string name = base.str();
  for (int k = 1; module.lookupSymbol(name); ++k)
    name = (base + "_" + Twine(k)).str();
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  // An input_arg/output_arg entry of the signature.
  auto argDef = [&](StringRef argName, Type t) -> FailureOr<Attribute> {
    Type element =
        isa<TensorType>(t) ? cast<TensorType>(t).getElementType() : t;
    if (typeToDataType(element) <= 0)
      return emitError(loc) << "function '" << name << "': " << argName
                            << " has no TensorFlow dtype";
    return Attribute(mb.getDictionaryAttr(
        {mb.getNamedAttr("name", mb.getStringAttr(argName)),
         mb.getNamedAttr(
             "type",
             mb.getStringAttr("DT_" +
                              StringRef(getDataTypeName(element)).upper()))}));
  };
  SmallVector<Attribute> argNames, inputArgs;
  for (auto [i, t] : llvm::enumerate(argTypes)) {
    std::string argName = "arg" + std::to_string(i);
    FailureOr<Attribute> def = argDef(argName, t);
    if (failed(def))
      return failure();
    argNames.push_back(mb.getStringAttr(argName));
    inputArgs.push_back(*def);
  }
  OperationState state(loc, FuncOp::getOperationName());
  auto &props = state.getOrAddProperties<FuncOp::Properties>();
  props.sym_name = mb.getStringAttr(name);
  props.arg_names = mb.getArrayAttr(argNames);
  props.function_type = TypeAttr::get(mb.getFunctionType(argTypes, {}));
  props.signature = mb.getDictionaryAttr({});
  state.addRegion();
  auto func = cast<FuncOp>(mb.create(state));
  Block *block = new Block;
  func.getBody().push_back(block);
  for (Type t : argTypes)
    block->addArgument(t, loc);
  OpBuilder bb = OpBuilder::atBlockEnd(block);
  FailureOr<SmallVector<Value>> results =
      build(bb, SmallVector<Value>(block->getArguments()));
  if (failed(results))
    return func.erase(), failure();
  SmallVector<Attribute> resultNames, outputArgs;
  SmallVector<Type> resultTypes;
  for (auto [i, v] : llvm::enumerate(*results)) {
    std::string resultName = "result" + std::to_string(i);
    FailureOr<Attribute> def = argDef(resultName, v.getType());
    if (failed(def))
      return func.erase(), failure();
    resultNames.push_back(mb.getStringAttr(resultName));
    outputArgs.push_back(*def);
    resultTypes.push_back(v.getType());
  }
  bb.setInsertionPointToEnd(block);
  bb.create<ReturnOp>(loc, *results, bb.getArrayAttr(resultNames),
                      bb.getStrArrayAttr({}), ArrayAttr());
  func.setFunctionTypeAttr(
      TypeAttr::get(mb.getFunctionType(argTypes, resultTypes)));
  func.setSignatureAttr(mb.getDictionaryAttr(
      {mb.getNamedAttr("input_arg", mb.getArrayAttr(inputArgs)),
       mb.getNamedAttr("output_arg", mb.getArrayAttr(outputArgs))}));
  return func;
}

void cleave::graph::cloneNodes(OpBuilder &builder, ArrayRef<NodeOp> nodes,
                               IRMapping &mapping) {
  SmallVector<Operation *> clones;
  for (NodeOp node : nodes)
    clones.push_back(builder.clone(*node, mapping));
  // Operands whose producer was cloned after their user.
  for (Operation *clone : clones)
    for (OpOperand &operand : clone->getOpOperands())
      operand.set(mapping.lookupOrDefault(operand.get()));
}

void cleave::graph::cloneNodesIntoFunction(OpBuilder &builder,
                                           ArrayRef<NodeOp> nodes,
                                           IRMapping &mapping) {
  cloneNodes(builder, nodes, mapping);
  Region *function = builder.getInsertionBlock()->getParent();
  for (NodeOp node : nodes) {
    Operation *clone = mapping.lookup(node.getControl()).getDefiningOp();
    SmallVector<Value> kept;
    for (Value in : clone->getOperands())
      if (!isa<ControlType>(in.getType()) ||
          function->isAncestor(in.getParentRegion()))
        kept.push_back(in);
    clone->setOperands(kept);
  }
}

SmallVector<Block *> cleave::graph::getGraphBodies(ModuleOp module) {
  SmallVector<Block *> bodies;
  for (auto graph : module.getOps<GraphOp>())
    bodies.push_back(&graph.getBody().front());
  for (auto func : module.getOps<FuncOp>())
    if (!func.getBody().empty())
      bodies.push_back(&func.getBody().front());
  return bodies;
}

FlatNode cleave::graph::getMetadataNode(ClusterOp cluster) {
  // Formation keeps num_replicas on the replicate only (a required attr,
  // so the node always had it).
  NamedAttrList attrs(cluster.getMetadata());
  if (!attrs.get("num_replicas"))
    attrs.set("num_replicas", Builder(cluster.getContext())
                                  .getI64IntegerAttr(cluster.getNumReplicas()));
  return {cluster.getMetadataName(), "TPUReplicateMetadata",
          cluster.getMetadataDevice().value_or(""),
          attrs.getDictionary(cluster.getContext()),
          SmallVector<Value>(cluster.getControlInputs())};
}

void cleave::graph::getReplicatedNodes(ReplicateOp replicate,
                                       SmallVectorImpl<FlatNode> &inputs,
                                       SmallVectorImpl<FlatNode> &outputs) {
  ValueRange operands = replicate.getInputs();
  ArrayAttr inputNodes = replicate.getInputNodes();
  // The verifier checked that the entries' `controls` add up.
  ValueRange controls = operands.drop_front(replicate.getNumDataInputs());
  auto folded = [&](Attribute entry, StringRef opType, ValueRange data) {
    auto dict = cast<DictionaryAttr>(entry);
    FlatNode node{dict.getAs<StringAttr>("name").getValue(), opType, "",
                  dict.getAs<DictionaryAttr>("attrs"),
                  SmallVector<Value>(data)};
    if (auto device = dict.getAs<StringAttr>("device"))
      node.device = device.getValue();
    if (auto count = dict.getAs<IntegerAttr>("controls")) {
      llvm::append_range(node.inputs, controls.take_front(count.getInt()));
      controls = controls.drop_front(count.getInt());
    }
    return node;
  };
  for (auto [i, entry] : llvm::enumerate(inputNodes))
    inputs.push_back(
        folded(entry, "TPUReplicatedInput", replicate.getInputGroup(i)));
  Operation *yield = replicate.getBody().front().getTerminator();
  for (auto [k, entry] : llvm::enumerate(replicate.getOutputNodes()))
    if (!cast<DictionaryAttr>(entry).empty())
      outputs.push_back(
          folded(entry, "TPUReplicatedOutput", yield->getOperand(k)));
}
