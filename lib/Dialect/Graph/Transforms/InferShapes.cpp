//===- InferShapes.cpp - graph-infer-shapes -------------------------------===//
//
// Adapts nodes to the registry's shape functions and refines result types
// to a fixed point.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Transforms/ShapeRefinement.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/NodeInferenceContext.h"

#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/ShapeInference.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHINFERSHAPESPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using ops::Shape;

static Type withShape(TensorType type, const Shape &shape) {
  if (!shape.hasRank())
    return UnrankedTensorType::get(type.getElementType());
  SmallVector<int64_t> dims;
  for (int64_t d : shape.dims)
    dims.push_back(d < 0 ? ShapedType::kDynamic : d);
  return RankedTensorType::get(dims, type.getElementType());
}

/// Refines the result types of the nodes of `block` to a fixed point.
static LogicalResult inferBody(Block &block);

/// Makes a function's type follow its body after inference: the argument
/// types of its block and the types its graph.return returns.
static void syncFunctionType(FuncOp func) {
  Block &body = func.getBody().front();
  ReturnOp ret = func.getReturnOp();
  SmallVector<Type> results;
  for (Value v : ret.getOperands())
    if (!isa<ControlType>(v.getType()))
      results.push_back(v.getType());
  func.setFunctionType(
      FunctionType::get(func.getContext(), body.getArgumentTypes(), results));
}

namespace {
/// One node as the shape functions see it: its inputs' types.
class NodeContext : public NodeInferenceContext {
public:
  explicit NodeContext(NodeOp node)
      : NodeInferenceContext(node), inputs(node.getDataInputs()) {}

  unsigned getNumInputs() const override { return inputs.size(); }
  Shape getInputShape(unsigned i) const override {
    return i < inputs.size() ? toInferenceShape(inputs[i].getType())
                             : Shape::unknown();
  }
  std::optional<SmallVector<int64_t>>
  getConstantInput(unsigned i) const override {
    if (i >= inputs.size())
      return std::nullopt;
    return graph::getConstantInts(inputs[i]);
  }
  std::optional<double> getConstantScalar(unsigned i) const override {
    if (i >= inputs.size())
      return std::nullopt;
    auto producer = inputs[i].getDefiningOp<NodeOp>();
    if (!producer || producer.getOpType() != "Const")
      return std::nullopt;
    auto tensor = dyn_cast_or_null<TensorAttr>(producer.getTFAttr("value"));
    auto dense = tensor ? dyn_cast_or_null<DenseElementsAttr>(tensor.getValue())
                        : DenseElementsAttr();
    if (!dense || dense.getNumElements() != 1)
      return std::nullopt;
    if (auto floats = dyn_cast<DenseFPElementsAttr>(dense))
      return (*floats.getValues<APFloat>().begin()).convertToDouble();
    if (auto ints = dyn_cast<DenseIntElementsAttr>(dense);
        ints && !ints.getElementType().isInteger(1))
      return double((*ints.getValues<APInt>().begin()).getSExtValue());
    return std::nullopt;
  }
  Shape getResourceShape(unsigned i) const override {
    // Through the ops that forward a handle unchanged.
    Value v = i < inputs.size() ? inputs[i] : Value();
    while (auto producer = v ? v.getDefiningOp<NodeOp>() : NodeOp()) {
      StringRef op = producer.getOpType();
      if (op == "VarHandleOp") {
        if (auto shape =
                dyn_cast_or_null<ShapeAttr>(producer.getTFAttr("shape")))
          return toInferenceShape(shape);
        break;
      }
      if (op != "Identity" && op != "Enter" && op != "Switch" &&
          op != "TPUReplicatedInput")
        break;
      v = producer.getDataInputs().empty() ? Value()
                                           : producer.getDataInputs()[0];
    }
    return Shape::unknown();
  }
  std::optional<SmallVector<Shape>>
  getFunctionResultShapes(StringRef name, unsigned firstArg) const override {
    StringRef function = node.getOpType();
    if (!name.empty()) {
      auto f = dyn_cast_or_null<FuncAttr>(node.getTFAttr(name));
      if (!f)
        return std::nullopt;
      function = f.getName().getValue();
    }
    auto func = SymbolTable::lookupNearestSymbolFrom<FuncOp>(
        node, StringAttr::get(node.getContext(), function));
    if (!func || func.getBody().empty())
      return std::nullopt;
    // As TensorFlow instantiates a function per call site, infer a copy of
    // the body with this call's argument shapes. Calls nested in the copy
    // (it is outside the module) and deep recursion use the shared body.
    static unsigned depth = 0;
    std::optional<SmallVector<Type>> results;
    if (depth < 8) {
      SmallVector<Type> argTypes;
      unsigned arg = firstArg;
      for (BlockArgument blockArg : func.getBody().front().getArguments())
        if (auto type = dyn_cast<TensorType>(blockArg.getType());
            type && arg < inputs.size())
          argTypes.push_back(
              withShape(type, toInferenceShape(inputs[arg++].getType())));
      ++depth;
      results = inferFunctionResultTypes(func, argTypes);
      --depth;
    }
    SmallVector<Shape> shapes;
    if (results) {
      for (Type t : *results)
        shapes.push_back(toInferenceShape(t));
      return shapes;
    }
    for (Value v : func.getReturnOp().getOperands())
      if (!isa<ControlType>(v.getType()))
        shapes.push_back(toInferenceShape(v.getType()));
    return shapes;
  }

private:
  OperandRange inputs;
};

struct GraphInferShapesPass
    : public graph::impl::GraphInferShapesPassBase<GraphInferShapesPass> {
  void runOnOperation() override {
    // Shape functions read inputs and attrs as the signature gives them: a
    // ConcatV2 without inputs would count to 2^32 (validateNodeDef first,
    // as every pass that reads inputs by position).
    if (failed(validateNodeDefs(getOperation())))
      return signalPassFailure();
    // Function bodies first, since calls take their result shapes; a
    // function may call another defined after it, so repeat until the
    // results stop changing (they only ever gain information).
    SmallVector<FuncOp> functions(getOperation().getOps<FuncOp>());
    for (size_t round = 0; round <= functions.size(); ++round) {
      bool changed = false;
      for (FuncOp func : functions) {
        if (func.getBody().empty())
          continue;
        SmallVector<Type> before(func.getReturnOp().getOperandTypes());
        if (failed(inferBody(func.getBody().front())))
          return signalPassFailure();
        syncFunctionType(func);
        changed |=
            before != SmallVector<Type>(func.getReturnOp().getOperandTypes());
      }
      if (!changed)
        break;
    }
    for (auto graph : getOperation().getOps<GraphOp>())
      if (failed(inferBody(graph.getBody().front())))
        return signalPassFailure();
  }
};
} // namespace

std::optional<SmallVector<Type>>
cleave::graph::inferFunctionResultTypes(FuncOp func, TypeRange argTypes) {
  if (func.getBody().empty())
    return std::nullopt;
  FuncOp copy = func.clone();
  auto erase = llvm::make_scope_exit([&] { copy.erase(); });
  unsigned next = 0;
  for (BlockArgument arg : copy.getBody().front().getArguments())
    if (isa<TensorType>(arg.getType()) && next < argTypes.size())
      arg.setType(argTypes[next++]);
  ScopedDiagnosticHandler quiet(func.getContext(),
                                [](Diagnostic &) { return success(); });
  if (failed(validateNodeDefs(copy)) ||
      failed(inferBody(copy.getBody().front())))
    return std::nullopt;
  SmallVector<Type> results;
  for (Value v : copy.getReturnOp().getOperands())
    if (!isa<ControlType>(v.getType()))
      results.push_back(v.getType());
  return results;
}

/// A call by function name: the function's result shapes.
LogicalResult cleave::graph::inferGraphShapes(GraphOp graph) {
  return inferBody(graph.getBody().front());
}

static std::string callByNameShape(ops::InferenceContext &ctx) {
  if (auto results = ctx.getFunctionResultShapes("", 0))
    for (unsigned i = 0; i < ctx.getNumOutputs() && i < results->size(); ++i)
      ctx.setOutput(i, (*results)[i]);
  return "";
}

static std::string describeInputs(NodeOp node) {
  std::string text;
  for (auto [i, v] : llvm::enumerate(node.getDataInputs()))
    text += (i ? ", " : "") + toInferenceShape(v.getType()).str();
  return text;
}

static LogicalResult inferNode(NodeOp node,
                               SmallVectorImpl<NodeOp> &changedUsers) {
  ops::ShapeFn fn = ops::lookupShapeFn(node.getOpType());
  if (!fn && !ops::lookupOp(node.getOpType()))
    fn = callByNameShape; // a node whose op type may name a function
  if (!fn)
    return success();
  NodeContext ctx(node);
  std::string error = fn(ctx);
  if (!error.empty())
    return node.emitError()
           << "Node '" << node.getName() << "': " << error << " for '"
           << node.getName() << "' (op: " << node.getOpType()
           << ") with input shapes: " << describeInputs(node);
  for (auto [i, result] : llvm::enumerate(node.getOutputs())) {
    auto type = dyn_cast<TensorType>(result.getType());
    if (!type)
      continue;
    std::string conflict;
    auto merged =
        ops::mergeShapes(toInferenceShape(type), ctx.getOutputs()[i], conflict);
    if (!merged)
      return node.emitError()
             << "Node '" << node.getName() << "': inferred shape "
             << ctx.getOutputs()[i].str() << " of output " << i
             << " conflicts with the recorded shape "
             << toInferenceShape(type).str() << ": " << conflict;
    Type refined = withShape(type, *merged);
    if (refined == type)
      continue;
    result.setType(refined);
    for (Operation *user : result.getUsers())
      if (auto userNode = dyn_cast<NodeOp>(user))
        changedUsers.push_back(userNode);
  }
  return success();
}

static LogicalResult inferBody(Block &block) {
  // Refinement only adds information, so the worklist drains; the bound is a
  // guard against a shape function that is not monotone.
  llvm::SetVector<NodeOp> worklist;
  for (auto node : block.getOps<NodeOp>())
    worklist.insert(node);
  size_t budget = 16 * worklist.size() + 16;
  SmallVector<NodeOp> changedUsers;
  while (!worklist.empty()) {
    if (budget-- == 0)
      return block.getParentOp()->emitError(
          "graph-infer-shapes did not converge");
    NodeOp node = worklist.front();
    worklist.remove(node);
    changedUsers.clear();
    if (failed(inferNode(node, changedUsers)))
      return failure();
    worklist.insert(changedUsers.begin(), changedUsers.end());
  }
  return success();
}
