//===- Import.cpp - GraphDef -> graph dialect -----------------------------===//
//
// Builds, from a parsed GraphDef, a module with one graph.graph and one
// graph.func per library function (Files.cpp reads the files). The checks follow
// TensorFlow's importers and reuse their messages, naming the node.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Support/CommandLine.h"

#include "cleave/Translate/GraphDef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
namespace tf = tensorflow;
namespace pb = google::protobuf;

/// The most outputs a node of an unregistered op may have (its consumers
/// tell how many it has): real graphs name a handful.
static constexpr int64_t kMaxUnknownOutputs = 1 << 16;

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

namespace {
/// Where each node of a text GraphDef was written, for diagnostics.
struct TextLocations {
  const pb::TextFormat::ParseInfoTree *tree = nullptr;
};

/// A parsed input string.
struct InputRef {
  StringRef node;   ///< Producer node or function argument.
  int64_t port = 0; ///< Flattened output index, or -1 for a control input.
  StringRef outArg; ///< Function bodies: the output arg name, if given.
  bool isArg = false;
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef filename,
           const pb::TextFormat::ParseInfoTree *tree,
           const GraphDefImportOptions &options)
      : ctx(ctx), builder(ctx), filename(StringAttr::get(ctx, filename)),
        tree(tree), options(options) {}

  OwningOpRef<ModuleOp> importGraph(const tf::GraphDef &graphDef);

private:
  /// One body: the top-level graph or a function.
  struct Body {
    bool isFunction = false;
    StringRef functionName;
    Block *block = nullptr;
    /// Function arguments by name (`x`, or `x:1` for list elements).
    llvm::StringMap<Value> args;
    const pb::TextFormat::ParseInfoTree *tree = nullptr;
    /// Function `ret` values: resolved like node inputs, so that they count
    /// towards the outputs of ops without a signature.
    SmallVector<InputRef> rets;
    std::optional<Location> retLoc;
  };

  Location nodeLoc(const Body &body, const tf::NodeDef &node, int index);
  LogicalResult importNodes(const pb::RepeatedPtrField<tf::NodeDef> &nodes,
                            Body &body);
  LogicalResult importFunction(const tf::FunctionDef &fdef, int index,
                               const pb::TextFormat::ParseInfoTree *libTree);
  FuncOp declareFunction(const tf::FunctionDef &fdef, Location loc);
  void declareUncallableFunction(const tf::FunctionDef &fdef, size_t index,
                                 Location loc);
  LogicalResult parseInput(StringRef text, const Body &body, InputRef &ref);
  LogicalResult checkOutputArrays(GraphOp graph, Location loc);
  LogicalResult checkOpsRegistered(ModuleOp module);
  LogicalResult checkCycles(const pb::RepeatedPtrField<tf::NodeDef> &nodes,
                            ArrayRef<SmallVector<InputRef, 4>> inputs,
                            const llvm::StringMap<int> &index,
                            ArrayRef<Location> locs);

  InFlightDiagnostic nodeError(Location loc, StringRef name) {
    return emitError(loc) << "Node '" << name << "': ";
  }

  MLIRContext *ctx;
  OpBuilder builder;
  StringAttr filename;
  const pb::TextFormat::ParseInfoTree *tree;
  const GraphDefImportOptions &options;
  ModuleOp module;
};
} // namespace

Location Importer::nodeLoc(const Body &body, const tf::NodeDef &node,
                           int index) {
  std::string name = node.name();
  if (body.isFunction)
    name += "@" + body.functionName.str();
  Location child = UnknownLoc::get(ctx);
  if (body.tree) {
    const pb::FieldDescriptor *field =
        body.isFunction
            ? tf::FunctionDef::descriptor()->FindFieldByName("node_def")
            : tf::GraphDef::descriptor()->FindFieldByName("node");
    pb::TextFormat::ParseLocation where = body.tree->GetLocation(field, index);
    if (where.line >= 0)
      child = FileLineColLoc::get(filename, where.line + 1, where.column + 1);
  } else if (filename && !filename.getValue().empty()) {
    child = FileLineColLoc::get(filename, 0, 0);
  }
  return NameLoc::get(StringAttr::get(ctx, name), child);
}

/// TensorFlow's ParseTensorName for the top level, plus the function-body
/// forms "arg", "arg:idx", "node:out_arg:idx".
LogicalResult Importer::parseInput(StringRef text, const Body &body,
                                   InputRef &ref) {
  if (text.starts_with("^")) {
    ref.node = text.drop_front();
    ref.port = -1;
    // Only an argument's own name has a control block argument ("^x",
    // not "^x:1").
    ref.isArg = body.args.count(text);
    return success();
  }
  if (!body.isFunction && text.count(':') != 2) {
    // Trailing digits after a ':' are the port; otherwise port 0.
    StringRef digits = text.take_back(
        text.size() - text.find_last_not_of("0123456789") - 1);
    StringRef head = text.drop_back(digits.size());
    if (!digits.empty() && head.ends_with(":") && head.size() > 1) {
      ref.node = head.drop_back();
      if (digits.getAsInteger(10, ref.port) || ref.port > (1 << 30))
        return failure();
    } else {
      ref.node = text;
      ref.port = 0;
    }
    return success();
  }
  SmallVector<StringRef, 3> parts;
  text.split(parts, ':');
  if (parts.size() == 3) {
    ref.node = parts[0];
    ref.outArg = parts[1];
    if (parts[2].getAsInteger(10, ref.port) || ref.port < 0 ||
        ref.port > (1 << 30))
      return failure();
    return success();
  }
  if (parts.size() > 3)
    return failure();
  // "arg" or "arg:idx": a function argument (list args are flattened).
  if (body.args.count(text)) {
    ref.node = text;
    ref.isArg = true;
    return success();
  }
  ref.node = parts[0];
  ref.isArg = body.args.count(parts[0]) != 0;
  if (parts.size() == 2 &&
      (parts[1].getAsInteger(10, ref.port) || ref.port < 0))
    return failure();
  return success();
}

/// Whether export would write `text` for `value` (renderInput == text),
/// without building the string in the common top-level cases.
static bool rendersAs(Value value, StringRef text, bool inFunction) {
  auto node = value.getDefiningOp<NodeOp>();
  if (inFunction || !node)
    return graphdef::renderInput(value, inFunction) == text;
  StringRef name = node.getName();
  if (value == node.getControl())
    return text.size() == name.size() + 1 && text.front() == '^' &&
           text.drop_front() == name;
  unsigned port = cast<OpResult>(value).getResultNumber();
  if (port == 0)
    return text == name;
  return text.starts_with(name) && text.drop_front(name.size()) ==
                                       (":" + Twine(port)).str();
}

LogicalResult
Importer::importNodes(const pb::RepeatedPtrField<tf::NodeDef> &nodes,
                      Body &body) {
  int numNodes = nodes.size();
  // Pass 1: names, op types, parsed inputs.
  llvm::StringMap<int> index;
  std::vector<SmallVector<InputRef, 4>> inputs(numNodes);
  std::vector<Location> locs;
  locs.reserve(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    const tf::NodeDef &node = nodes[i];
    locs.push_back(nodeLoc(body, node, i));
    Location loc = locs.back();
    if (node.op().empty())
      return nodeError(loc, node.name()) << "has an empty op type";
    if (!node.name().empty() &&
        (!index.try_emplace(node.name(), i).second ||
         body.args.count(node.name())))
      return emitError(loc)
             << "Duplicated node (or function argument) with the same name: `"
             << node.name() << "`"
             << (body.isFunction
                     ? (" when importing function " + body.functionName).str()
                     : std::string());
    bool sawControl = false;
    for (const std::string &text : node.input()) {
      InputRef ref;
      if (failed(parseInput(text, body, ref)))
        return nodeError(loc, node.name())
               << "malformed input '" << text << "'";
      if (ref.port == -1)
        sawControl = true;
      else if (sawControl)
        return nodeError(loc, node.name())
               << "Control dependencies must come after regular dependencies";
      inputs[i].push_back(ref);
    }
  }

  // Pass 2: how many outputs each node has, and their types.
  std::vector<DictionaryAttr> attrs(numNodes);
  std::vector<SmallVector<Type, 2>> resultTypes(numNodes);
  std::vector<bool> known(numNodes, false);
  // Unknown ops in function bodies: "out_arg:idx" -> port, first seen first.
  std::vector<llvm::StringMap<int64_t>> unknownPorts(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    const tf::NodeDef &node = nodes[i];
    std::string error, warning;
    attrs[i] = graphdef::importAttrMap(node.attr(), ctx, error, &warning,
                                       options.strictTensors);
    if (!attrs[i])
      return nodeError(locs[i], node.name()) << error;
    if (!warning.empty())
      emitWarning(locs[i]) << "Node '" << node.name() << "': " << warning;
    SmallVector<graph::OutputArg> outArgs;
    FailureOr<bool> isKnown =
        graph::resolveOutputArgs(node.op(), attrs[i], module, outArgs, error);
    if (failed(isKnown))
      return nodeError(locs[i], node.name())
             << error << " (op type: " << node.op() << ")";
    known[i] = *isKnown;
    // Checked after the attrs, as TensorFlow's tfg importer does.
    if (node.name().empty())
      return emitError(locs[i]) << "Node of op '" << node.op()
                                << "' has an empty name";
    for (const graph::OutputArg &arg : outArgs)
      resultTypes[i].append(arg.types.begin(), arg.types.end());
  }
  // Unknown ops: as many outputs as their consumers and _output_shapes need.
  std::vector<int64_t> needed(numNodes, 0);
  auto resolveProducer = [&](int consumer, InputRef &ref) -> LogicalResult {
    if (ref.isArg)
      return success();
    auto it = index.find(ref.node);
    Location where = consumer < 0 ? *body.retLoc : locs[consumer];
    if (it == index.end()) {
      if (consumer < 0)
        return emitError(where) << "function '" << body.functionName
                                << "': ret names a missing node '" << ref.node
                                << "'";
      return emitError(where)
             << "Non-existent input " << (ref.port == -1 ? "^" : "")
             << ref.node << " in node " << nodes[consumer].name();
    }
    int producer = it->second;
    if (ref.port >= 0 && !ref.outArg.empty()) {
      if (known[producer]) {
        SmallVector<graph::OutputArg> outArgs;
        std::string error;
        (void)graph::resolveOutputArgs(nodes[producer].op(), attrs[producer],
                                       module, outArgs, error);
        int64_t base = 0;
        bool found = false;
        for (const graph::OutputArg &arg : outArgs) {
          if (arg.name == ref.outArg) {
            if (ref.port >= int64_t(arg.types.size()))
              return emitError(where)
                     << "Result #" << ref.port << " of node '" << ref.node
                     << "' output '" << ref.outArg << "' is out of bounds";
            ref.port += base;
            found = true;
            break;
          }
          base += arg.types.size();
        }
        if (!found)
          return emitError(where)
                 << "Node '" << ref.node << "' has no output called '"
                 << ref.outArg << "'";
      } else {
        std::string key = (ref.outArg + ":" + Twine(ref.port)).str();
        auto [slot, inserted] = unknownPorts[producer].try_emplace(
            key, unknownPorts[producer].size());
        ref.port = slot->second;
      }
    }
    // An op this build does not know gets as many outputs as its
    // consumers name; a bound keeps a huge index from making that many.
    if (!known[producer] && ref.port >= kMaxUnknownOutputs)
      return nodeError(where, consumer < 0 ? StringRef(body.functionName)
                                           : StringRef(nodes[consumer].name()))
             << "input '" << ref.node << ":" << ref.port << "' names output "
             << ref.port << " of a node whose op '" << nodes[producer].op()
             << "' is not registered; such a node may have at most "
             << kMaxUnknownOutputs << " outputs";
    if (ref.port >= 0)
      needed[producer] = std::max(needed[producer], ref.port + 1);
    return success();
  };
  for (int i = 0; i < numNodes; ++i)
    for (InputRef &ref : inputs[i])
      if (failed(resolveProducer(i, ref)))
        return failure();
  for (InputRef &ref : body.rets)
    if (failed(resolveProducer(-1, ref)))
      return failure();

  for (int i = 0; i < numNodes; ++i) {
    auto shapes = attrs[i].getAs<ArrayAttr>("_output_shapes");
    if (!known[i]) {
      int64_t count = std::max<int64_t>(needed[i], shapes ? shapes.size() : 0);
      resultTypes[i].assign(count, UnknownType::get(ctx));
    } else if (needed[i] > int64_t(resultTypes[i].size())) {
      // Find a consumer to blame.
      for (int c = 0; c < numNodes; ++c)
        for (const InputRef &ref : inputs[c])
          if (!ref.isArg && ref.node == nodes[i].name() &&
              ref.port >= int64_t(resultTypes[i].size()))
            return nodeError(locs[c], nodes[c].name())
                   << "Connecting to invalid output " << ref.port
                   << " of source node " << nodes[i].name() << " which has "
                   << resultTypes[i].size() << " outputs.";
    }
  }

  if (failed(checkCycles(nodes, inputs, index, locs)))
    return failure();

  // Pass 3: create the ops, then connect them (inputs may name later nodes).
  builder.setInsertionPointToEnd(body.block);
  SmallVector<NodeOp> ops;
  ops.reserve(numNodes);
  Type controlType = ControlType::get(ctx);
  for (int i = 0; i < numNodes; ++i) {
    const tf::NodeDef &node = nodes[i];
    auto shapes = attrs[i].getAs<ArrayAttr>("_output_shapes");
    SmallVector<Type> types;
    types.reserve(resultTypes[i].size() + 1);
    for (auto [k, element] : llvm::enumerate(resultTypes[i])) {
      ShapeAttr shape;
      if (shapes && k < shapes.size())
        shape = dyn_cast<ShapeAttr>(shapes[k]);
      types.push_back(getTensorType(element, shape));
    }
    types.push_back(controlType);
    OperationState state(locs[i], NodeOp::getOperationName());
    state.addTypes(types);
    auto &props = state.getOrAddProperties<NodeOp::Properties>();
    props.op_type = builder.getStringAttr(node.op());
    props.name = builder.getStringAttr(node.name());
    if (!node.device().empty())
      props.device = builder.getStringAttr(node.device());
    props.attrs = attrs[i];
    if (node.has_experimental_debug_info())
      props.debug_info =
          graphdef::protoToAttr(node.experimental_debug_info(), ctx);
    if (node.has_experimental_type())
      props.full_type = graphdef::protoToAttr(node.experimental_type(), ctx);
    ops.push_back(cast<NodeOp>(builder.create(state)));
  }
  for (int i = 0; i < numNodes; ++i) {
    SmallVector<Value, 4> operands;
    for (const InputRef &ref : inputs[i]) {
      if (ref.isArg && ref.port == -1) {
        operands.push_back(body.args.lookup(("^" + ref.node).str()));
        continue;
      }
      if (ref.isArg) {
        auto it = body.args.find(ref.node);
        if (it == body.args.end() && ref.port > 0)
          it = body.args.find((ref.node + ":" + Twine(ref.port)).str());
        if (it == body.args.end())
          it = body.args.find(ref.node.split(':').first);
        operands.push_back(it->second);
        continue;
      }
      NodeOp producer = ops[index[ref.node]];
      operands.push_back(ref.port == -1 ? Value(producer.getControl())
                                        : producer.getOutputs()[ref.port]);
    }
    ops[i]->setOperands(operands);
    // Keep the input strings when export would spell them differently.
    const tf::NodeDef &node = nodes[i];
    bool differs = false;
    for (auto [k, text] : llvm::enumerate(node.input()))
      differs |= !rendersAs(operands[k], text, body.isFunction);
    if (differs) {
      SmallVector<StringRef> texts(node.input().begin(), node.input().end());
      ops[i].setSpellingsAttr(builder.getStrArrayAttr(texts));
    }
  }
  return success();
}

FuncOp Importer::declareFunction(const tf::FunctionDef &fdef, Location loc) {
  const tf::OpDef &sig = fdef.signature();
  // Signature without its name (that is the symbol) and kept field by field.
  tf::OpDef rest = sig;
  rest.clear_name();
  DictionaryAttr signature = graphdef::protoToAttr(rest, ctx);
  builder.setInsertionPointToEnd(module.getBody());
  OperationState state(loc, FuncOp::getOperationName());
  auto &props = state.getOrAddProperties<FuncOp::Properties>();
  props.sym_name = builder.getStringAttr(sig.name());
  props.signature = signature;
  props.function_type = TypeAttr::get(builder.getFunctionType({}, {}));
  props.arg_names = builder.getStrArrayAttr({});
  state.addRegion();
  return cast<FuncOp>(builder.create(state));
}

/// A FunctionDef without a name can never be called, and TensorFlow never
/// looks inside it; it is kept field by field under a placeholder symbol.
void Importer::declareUncallableFunction(const tf::FunctionDef &fdef,
                                         size_t index, Location loc) {
  builder.setInsertionPointToEnd(module.getBody());
  OperationState state(loc, FuncOp::getOperationName());
  auto &props = state.getOrAddProperties<FuncOp::Properties>();
  props.sym_name =
      builder.getStringAttr("__unnamed_function_" + std::to_string(index));
  props.signature = builder.getDictionaryAttr({});
  props.function_type = TypeAttr::get(builder.getFunctionType({}, {}));
  props.arg_names = builder.getStrArrayAttr({});
  props.uncallable = graphdef::protoToAttr(fdef, ctx);
  state.addRegion();
  auto func = cast<FuncOp>(builder.create(state));
  Block *block = new Block;
  func.getBody().push_back(block);
  builder.setInsertionPointToEnd(block);
  builder.create<ReturnOp>(loc, ValueRange(), builder.getStrArrayAttr({}),
                           builder.getStrArrayAttr({}), ArrayAttr());
}

LogicalResult
Importer::importFunction(const tf::FunctionDef &fdef, int index,
                         const pb::TextFormat::ParseInfoTree *libTree) {
  const tf::OpDef &sig = fdef.signature();
  auto func = cast<FuncOp>(SymbolTable::lookupSymbolIn(
      module, builder.getStringAttr(sig.name())));
  Location loc = func.getLoc();
  Body body;
  body.isFunction = true;
  body.functionName = sig.name();
  if (libTree)
    body.tree = libTree->GetTreeForNested(
        tf::FunctionDefLibrary::descriptor()->FindFieldByName("function"),
        index);
  body.block = new Block;
  func.getBody().push_back(body.block);

  // Arguments: one per input arg, plus "x:k" for list elements the body uses.
  SmallVector<std::string> argNames;
  SmallVector<Type> argTypes;
  auto addArg = [&](const std::string &name, Type element) {
    argNames.push_back(name);
    argTypes.push_back(getTensorType(element));
  };
  for (const tf::OpDef::ArgDef &arg : sig.input_arg()) {
    Type element = arg.type() != tf::DT_INVALID
                       ? dataTypeToType(ctx, arg.type())
                       : Type(UnknownType::get(ctx));
    if (arg.is_ref())
      element = RefType::get(ctx, element);
    addArg(arg.name(), element);
    // Elements beyond the first, as the body refers to them ("x:1"): list
    // args have them; for others they are kept so the body round-trips.
    std::set<int64_t> used;
    auto scan = [&](StringRef text) {
      text.consume_front("^");
      auto [head, tail] = text.split(':');
      int64_t k;
      if (head == arg.name() && !tail.empty() && !tail.contains(':') &&
          !tail.getAsInteger(10, k) && k > 0 && k < (1 << 20))
        used.insert(k);
    };
    for (const tf::NodeDef &node : fdef.node_def())
      for (const std::string &text : node.input())
        scan(text);
    for (const auto &[key, value] : fdef.ret())
      scan(value);
    for (int64_t k : used)
      addArg(arg.name() + ":" + std::to_string(k), element);
  }
  // A control input on an argument ("^x") uses a control block argument
  // named "^x", so that the dependency survives a round trip.
  for (const tf::OpDef::ArgDef &arg : sig.input_arg()) {
    std::string control = "^" + arg.name();
    bool used = llvm::any_of(fdef.node_def(), [&](const tf::NodeDef &node) {
      return llvm::is_contained(node.input(), control);
    });
    if (used) {
      argNames.push_back(control);
      argTypes.push_back(ControlType::get(ctx));
    }
  }
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    Value v = body.block->addArgument(type, loc);
    body.args[argNames[i]] = v;
  }
  SmallVector<StringRef> nameRefs(argNames.begin(), argNames.end());
  func.setArgNamesAttr(builder.getStrArrayAttr(nameRefs));

  std::string error;
  if (!fdef.attr().empty()) {
    DictionaryAttr attr = graphdef::importAttrMap(fdef.attr(), ctx, error);
    if (!attr)
      return emitError(loc) << "function '" << sig.name() << "': " << error;
    func.setAttrAttr(attr);
  }
  if (!fdef.arg_attr().empty()) {
    SmallVector<NamedAttribute> entries;
    for (const auto &[idx, argAttrs] : fdef.arg_attr()) {
      DictionaryAttr attr =
          graphdef::importAttrMap(argAttrs.attr(), ctx, error);
      if (!attr)
        return emitError(loc) << "function '" << sig.name() << "' arg "
                              << idx << ": " << error;
      entries.emplace_back(builder.getStringAttr(std::to_string(idx)), attr);
    }
    func.setArgAttrAttr(builder.getDictionaryAttr(entries));
  }
  if (!fdef.resource_arg_unique_id().empty()) {
    SmallVector<NamedAttribute> entries;
    for (const auto &[idx, id] : fdef.resource_arg_unique_id())
      entries.emplace_back(
          builder.getStringAttr(std::to_string(idx)),
          builder.getIntegerAttr(builder.getIntegerType(32, false), id));
    func.setResourceArgUniqueIdAttr(builder.getDictionaryAttr(entries));
  }

  // ret in output_arg order, then any other keys in sorted order.
  SmallVector<std::string> retKeys;
  for (const tf::OpDef::ArgDef &arg : sig.output_arg())
    if (fdef.ret().count(arg.name()))
      retKeys.push_back(arg.name());
  SmallVector<std::string> extra;
  for (const auto &[key, value] : fdef.ret())
    if (!llvm::is_contained(retKeys, key))
      extra.push_back(key);
  llvm::sort(extra);
  retKeys.append(extra.begin(), extra.end());

  body.retLoc = loc;
  for (const std::string &key : retKeys) {
    const std::string &text = fdef.ret().at(key);
    InputRef ref;
    if (failed(parseInput(text, body, ref)) || ref.port < 0)
      return emitError(loc) << "function '" << sig.name() << "': malformed ret '"
                            << text << "'";
    body.rets.push_back(ref);
  }
  if (failed(importNodes(fdef.node_def(), body)))
    return failure();

  llvm::StringMap<NodeOp> nodesByName;
  for (auto node : body.block->getOps<NodeOp>())
    nodesByName[node.getName()] = node;
  SmallVector<Value> operands;
  SmallVector<StringRef> names, controlNames, spellings;
  bool differs = false;
  for (auto [key, ref] : llvm::zip(retKeys, body.rets)) {
    const std::string &text = fdef.ret().at(key);
    Value v;
    if (ref.isArg) {
      auto it = body.args.find(text);
      if (it == body.args.end())
        it = body.args.find(ref.node);
      v = it->second;
    } else {
      auto it = nodesByName.find(ref.node);
      if (it == nodesByName.end())
        return emitError(loc) << "function '" << sig.name()
                              << "': ret '" << key << "' names a missing node '"
                              << ref.node << "'";
      NodeOp producer = it->second;
      int64_t port = ref.port; // already flattened by importNodes
      if (port >= int64_t(producer.getOutputs().size()))
        return emitError(loc) << "function '" << sig.name() << "': ret '"
                              << text << "' is out of range";
      v = producer.getOutputs()[port];
    }
    operands.push_back(v);
    names.push_back(key);
    spellings.push_back(text);
    differs |= graphdef::renderInput(v, true) != text;
  }
  SmallVector<std::pair<std::string, std::string>> controls(
      fdef.control_ret().begin(), fdef.control_ret().end());
  llvm::sort(controls);
  for (const auto &[key, nodeName] : controls) {
    auto it = nodesByName.find(nodeName);
    if (it == nodesByName.end())
      return emitError(loc) << "function '" << sig.name()
                            << "': control_ret '" << key
                            << "' names a missing node '" << nodeName << "'";
    operands.push_back(it->second.getControl());
    controlNames.push_back(key);
  }
  builder.setInsertionPointToEnd(body.block);
  auto ret = builder.create<ReturnOp>(loc, operands,
                                      builder.getStrArrayAttr(names),
                                      builder.getStrArrayAttr(controlNames),
                                      ArrayAttr());
  if (differs)
    ret.setSpellingsAttr(builder.getStrArrayAttr(spellings));
  SmallVector<Type> resultTypes;
  for (Value v : ValueRange(operands).take_front(names.size()))
    resultTypes.push_back(v.getType());
  func.setFunctionTypeAttr(
      TypeAttr::get(builder.getFunctionType(argTypes, resultTypes)));
  return success();
}

OwningOpRef<ModuleOp> Importer::importGraph(const tf::GraphDef &graphDef) {
  Location fileLoc = FileLineColLoc::get(filename, 1, 1);
  OwningOpRef<ModuleOp> owned = ModuleOp::create(fileLoc);
  module = *owned;
  builder.setInsertionPointToEnd(module.getBody());
  auto graph = builder.create<GraphOp>(fileLoc);
  if (graphDef.has_versions()) {
    const tf::VersionDef &v = graphDef.versions();
    SmallVector<int32_t> bad(v.bad_consumers().begin(),
                             v.bad_consumers().end());
    graph.setVersionsAttr(
        VersionsAttr::get(ctx, v.producer(), v.min_consumer(), bad));
  }
  // The deprecated field 3, kept so that the file round-trips.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (graphDef.version() != 0)
    graph.setVersionAttr(builder.getI32IntegerAttr(graphDef.version()));
#pragma GCC diagnostic pop
  if (graphDef.has_debug_info())
    graph.setDebugInfoAttr(graphdef::protoToAttr(graphDef.debug_info(), ctx));

  const pb::TextFormat::ParseInfoTree *libTree = nullptr;
  if (graphDef.has_library()) {
    tf::FunctionDefLibrary rest = graphDef.library();
    rest.clear_function();
    graph.setLibraryAttr(graphdef::protoToAttr(rest, ctx));
    if (tree)
      libTree = tree->GetTreeForNested(
          tf::GraphDef::descriptor()->FindFieldByName("library"), -1);
    // Declare every function first: call nodes need their signatures.
    llvm::StringSet<> seen;
    for (auto [i, fdef] : llvm::enumerate(graphDef.library().function())) {
      Location loc = NameLoc::get(builder.getStringAttr(fdef.signature().name()),
                                  fileLoc);
      if (fdef.signature().name().empty()) {
        declareUncallableFunction(fdef, i, loc);
        continue;
      }
      if (!seen.insert(fdef.signature().name()).second)
        return (emitError(loc) << "function '" << fdef.signature().name()
                               << "' is defined twice in the library",
                nullptr);
      declareFunction(fdef, loc);
    }
    for (auto [i, fdef] : llvm::enumerate(graphDef.library().function()))
      if (!fdef.signature().name().empty() &&
          failed(importFunction(fdef, i, libTree)))
        return nullptr;
  }

  Body body;
  body.block = &graph.getBody().front();
  body.tree = tree;
  if (failed(importNodes(graphDef.node(), body)))
    return nullptr;
  if (options.addDefaultAttrs)
    owned->walk([](NodeOp node) { addDefaultAttrs(node); });
  if (options.strictOps && failed(checkOpsRegistered(*owned)))
    return nullptr;
  if (failed(checkOutputArrays(graph, fileLoc)))
    return nullptr;
  return owned;
}

LogicalResult Importer::checkOpsRegistered(ModuleOp module) {
  // Every node, in the graph and in function bodies, as TensorFlow's
  // importer looks each op up in its registry or the library.
  WalkResult walk = module.walk([&](NodeOp node) {
    if (isDefinedOp(node))
      return WalkResult::advance();
    node.emitError() << "Node '" << node.getName() << "': "
                     << ops::getOpNotRegisteredMessage(node.getOpType());
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

static bool isNextIteration(StringRef op) {
  return op == "NextIteration" || op == "RefNextIteration";
}
static bool isMerge(StringRef op) {
  return op == "Merge" || op == "RefMerge" || op == "_XlaMerge";
}

/// Cycles are legal only through NextIteration -> Merge back edges, as in
/// TensorFlow's GraphConstructor; any other cycle is an error.
LogicalResult
Importer::checkCycles(const pb::RepeatedPtrField<tf::NodeDef> &nodes,
                      ArrayRef<SmallVector<InputRef, 4>> inputs,
                      const llvm::StringMap<int> &index,
                      ArrayRef<Location> locs) {
  int n = nodes.size();
  std::vector<int> pending(n, 0);
  std::vector<SmallVector<int, 2>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (const InputRef &ref : inputs[i]) {
      if (ref.isArg)
        continue;
      int producer = index.lookup(ref.node);
      if (isNextIteration(nodes[producer].op())) {
        if (isMerge(nodes[i].op()))
          continue;
      }
      ++pending[i];
      consumers[producer].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i)
    if (!pending[i])
      ready.push_back(i);
  int done = 0;
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    ++done;
    for (int c : consumers[i])
      if (--pending[c] == 0)
        ready.push_back(c);
  }
  if (done == n)
    return success();
  // Name a node on the cycle: the first unfinished one in file order.
  int first = 0;
  while (!pending[first])
    ++first;
  return nodeError(locs[first], nodes[first].name())
         << (n - done)
         << " nodes in a cycle (a cycle must pass through a NextIteration "
            "node into a Merge)";
}

LogicalResult Importer::checkOutputArrays(GraphOp graph, Location loc) {
  if (options.outputArrays.empty())
    return success();
  llvm::StringMap<NodeOp> nodes;
  for (auto node : graph.getBody().front().getOps<NodeOp>())
    nodes[node.getName()] = node;
  // The option's error, not the graph's: no place in the file.
  Location optionLoc = UnknownLoc::get(loc.getContext());
  for (const std::string &output : options.outputArrays) {
    auto [name, port] = graph::splitTensorName(output);
    auto it = nodes.find(name);
    if (it == nodes.end())
      return emitError(optionLoc)
             << "--graphdef-output-arrays: Output " << name
             << " was not found in graph" << suggestNearest(name, nodes);
    if (port >= it->second.getOutputs().size())
      return emitError(optionLoc)
             << "--graphdef-output-arrays: Invalid output index " << port
             << " specified for node: " << name;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
cleave::importGraphDef(const tf::GraphDef &graphDef, MLIRContext *context,
                       StringRef filename,
                       const GraphDefImportOptions &options) {
  return graphdef::importGraphDefMessage(graphDef, context, filename, nullptr,
                                         options);
}

OwningOpRef<ModuleOp> graphdef::importGraphDefMessage(
    const tf::GraphDef &graphDef, MLIRContext *context, StringRef filename,
    const pb::TextFormat::ParseInfoTree *tree,
    const GraphDefImportOptions &options) {
  context->loadDialect<GraphDialect>();
  Importer importer(context, filename, tree, options);
  return importer.importGraph(graphDef);
}
