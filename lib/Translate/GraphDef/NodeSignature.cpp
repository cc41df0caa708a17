//===- NodeSignature.cpp - input strings of nodes -------------------------===//
//
// What import and export must agree on: how an input string names a
// producer's output. (How many outputs a node has is
// cleave/Dialect/Graph/Utils/OutputArgs.h.)
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

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
  SmallVector<graph::OutputArg> args;
  std::string error;
  auto module = node->getParentOfType<ModuleOp>();
  FailureOr<bool> known = graph::resolveOutputArgs(
      node.getOpType(), node.getAttrs(), module, args, error);
  if (failed(known) || !*known)
    return std::nullopt;
  unsigned base = 0;
  for (const graph::OutputArg &arg : args) {
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
