//===- GraphToLinalg.cpp - lower graph nodes to upstream dialects ---------===//
//
// The driver: the nodes the outputs need, in an order that respects data and
// control edges, each folded with its reference kernel when its inputs are
// known at compile time, else lowered by its family's lowering.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/NodeInferenceContext.h"
#include "cleave/Kernels/ConstantEvaluator.h"
#include "cleave/Ops/OpRegistry.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <deque>
#include <utility>
#include <unordered_map>

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

//===----------------------------------------------------------------------===//
// The lowering table
//===----------------------------------------------------------------------===//

namespace {
/// A lowering and the family of the file that defines it.
struct LoweringEntry {
  Lowering lowering;
  ops::OpFamily family;
};
} // namespace

static const llvm::StringMap<LoweringEntry> &getLoweringTable() {
  static const llvm::StringMap<LoweringEntry> *table = [] {
    using ops::OpFamily;
    auto *map = new llvm::StringMap<LoweringEntry>();
    std::pair<OpFamily, LoweringTable> families[] = {
        {OpFamily::Array, getArrayLowerings()},
        {OpFamily::Math, getMathLowerings()},
        {OpFamily::NN, getNNLowerings()},
        {OpFamily::NN, getImageLowerings()},
        {OpFamily::NN, getVolumeLowerings()},
        {OpFamily::State, getStateLowerings()},
        {OpFamily::ControlFlow, getControlFlowLowerings()},
        {OpFamily::Functional, getFunctionalLowerings()},
        {OpFamily::Random, getRandomLowerings()},
        {OpFamily::Data, getListLowerings()},
        {OpFamily::TPU, getTPULowerings()}};
    for (const auto &[family, lowerings] : families)
      for (const auto &[name, lowering] : lowerings)
        if (!ops::lookupOp(name) ||
            !map->try_emplace(name, LoweringEntry{lowering, family}).second)
          llvm::report_fatal_error(llvm::Twine("bad lowering table entry '") +
                                   name + "'");
    return map;
  }();
  return *table;
}

bool cleave::conversion::hasCPULowering(StringRef opType) {
  return getLoweringTable().count(opType);
}

std::optional<ops::OpFamily>
cleave::conversion::lookupCPULoweringFamily(StringRef opType) {
  auto it = getLoweringTable().find(opType);
  if (it == getLoweringTable().end())
    return std::nullopt;
  return it->second.family;
}

bool cleave::conversion::knowsReceivedShapes(Operation *operation) {
  auto node = cast<graph::NodeOp>(operation);
  StringRef op = node.getOpType();
  if (op == "XlaRecvFromHost") {
    auto shape = dyn_cast_or_null<graph::ShapeAttr>(node.getTFAttr("shape"));
    return shape && shape.isFullyDefined();
  }
  if (op.starts_with("InfeedDequeue"))
    return llvm::all_of(node.getOutputs(), [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.hasStaticShape();
    });
  if (op != "_XlaHostComputeMlir")
    return true;
  // The host module tells them for the shapes sent (hostTransfer infers
  // them when it compiles, and fails where it cannot).
  auto module = dyn_cast_or_null<StringAttr>(node.getTFAttr("host_mlir_module"));
  if (module && !module.getValue().empty())
    return true;
  return llvm::all_of(node.getOutputs(), [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.hasStaticShape();
  });
}

bool cleave::conversion::updatesVariables(StringRef opType) {
  return opType.starts_with("Assign") || opType.starts_with("Apply") ||
         opType.starts_with("ResourceApply");
}

/// A compiled loop's body may update variables (the loop carries them);
/// other functions may not yet.
static bool isCompilableFunction(graph::FuncOp func, std::string &why,
                                 llvm::SmallPtrSetImpl<Operation *> &visiting,
                                 bool isLoopBody = false) {
  if (func.getUncallable()) {
    why = "function '" + func.getSymName().str() + "' cannot be called";
    return false;
  }
  if (!visiting.insert(func).second) {
    why = "function '" + func.getSymName().str() + "' is recursive";
    return false;
  }
  for (auto node : func.getBody().front().getOps<graph::NodeOp>()) {
    StringRef op = node.getOpType();
    std::string prefix = "function '" + func.getSymName().str() +
                         "': node '" + node.getName().str() + "': ";
    if (updatesVariables(op) && !isLoopBody) {
      why = prefix + "updates a variable";
      return false;
    }
    bool isCall = !ops::lookupOp(op);
    if (!isCall && !hasCPULowering(op)) {
      why = prefix + "op '" + op.str() + "' has no CPU lowering";
      return false;
    }
    if (!knowsReceivedShapes(node)) {
      why = prefix + kUnknownReceivedShapes.str();
      return false;
    }
    SmallVector<std::pair<StringRef, bool>> callees; // and: a loop body
    if (isCall && !SymbolTable::lookupNearestSymbolFrom<graph::FuncOp>(
                      node, StringAttr::get(node.getContext(), op)))
      callees.push_back({op, false}); // not in the library: said below
    bool isLoop = op == "While" || op == "StatelessWhile";
    for (auto [attr, callee] : graph::getCalledFunctions(node))
      callees.push_back({callee, isLoop && attr == "body"});
    for (auto [callee, body] : callees) {
      auto f = dyn_cast_or_null<graph::FuncOp>(
          SymbolTable::lookupNearestSymbolFrom(
              node, StringAttr::get(node.getContext(), callee)));
      if (!f) {
        why = prefix + "calls '" + callee.str() + "', which is not in the "
                       "library";
        return false;
      }
      if (!isCompilableFunction(f, why, visiting, body))
        return false;
    }
  }
  visiting.erase(func);
  return true;
}

bool cleave::conversion::isCompilableFunction(Operation *function,
                                              std::string &why,
                                              bool isLoopBody) {
  llvm::SmallPtrSet<Operation *, 8> visiting;
  return ::isCompilableFunction(cast<graph::FuncOp>(function), why, visiting,
                                isLoopBody);
}

std::vector<StringRef> cleave::conversion::getCPULoweredOps() {
  std::vector<StringRef> names;
  for (const auto &entry : getLoweringTable())
    names.push_back(entry.getKey());
  llvm::sort(names);
  return names;
}

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

Type cleave::conversion::getLoweredElementType(MLIRContext *context,
                                               int32_t dtype) {
  Builder b(context);
  switch (dtype) {
  case kFloat: return b.getF32Type();
  case kDouble: return b.getF64Type();
  case kBool: return b.getI1Type();
  case kInt8: case kUInt8: return b.getI8Type();
  case kInt16: case kUInt16: return b.getI16Type();
  case kInt32: case kUInt32: return b.getI32Type();
  case kInt64: case kUInt64: return b.getI64Type();
  default: return Type();
  }
}

//===----------------------------------------------------------------------===//
// FunctionLowering
//===----------------------------------------------------------------------===//

namespace cleave::conversion {
class FunctionLowering {
public:
  FunctionLowering(const LoweringRequest &request, ModuleOp target,
                   StringRef name, llvm::DenseSet<unsigned> &needsConstant)
      : request(request), target(target), name(name.str()),
        needsConstant(needsConstant), builder(target.getContext()) {}

  FailureOr<LoweredFunction> run();

  LoweredValue *lookup(Value graphValue) {
    auto it = values.find(graphValue);
    return it == values.end() ? nullptr : &it->second;
  }

  /// The tensor of `value`, creating the constant or the variable's entry
  /// argument on first use.
  FailureOr<Value> materialize(LoweredValue &value, graph::NodeOp user);

  /// The module the lowered functions go to.
  ModuleOp getTarget() const { return target; }

  /// Argument index of an input of the request, or -1.
  int argumentIndex(Value graphValue) const {
    for (auto [i, v] : llvm::enumerate(request.inputs))
      if (v == graphValue)
        return i;
    return -1;
  }

  void recordNeedsConstant(unsigned arg) { needsConstant.insert(arg); }

  FailureOr<LoweredValue>
  currentValue(StringRef variable, graph::NodeOp user,
               const std::optional<cleave::Tensor> &initial = std::nullopt);
  std::optional<TensorSpec> variableSpec(StringRef variable) {
    auto it = variables.find(variable);
    if (it != variables.end() && it->second.current)
      return TensorSpec{it->second.current->dtype, it->second.current->shape};
    return request.variableType ? request.variableType(variable)
                                : std::nullopt;
  }
  /// The variable's value at entry, an argument of the function; where
  /// it is uninitialized, `initial` (when given) stands for it.
  FailureOr<LoweredValue>
  entryValue(StringRef variable, graph::NodeOp user,
             const std::optional<cleave::Tensor> &initial = std::nullopt);
  void writeVariable(StringRef variable, LoweredValue value);

  interp::ConstantEvaluator &getFolder(Operation *anyNode) {
    // A loop folded at compile time stops where the compiled one would.
    if (!folder)
      folder = std::make_unique<interp::ConstantEvaluator>(
          anyNode->getParentOfType<ModuleOp>(), request.maxIterations);
    return *folder;
  }

  /// Node-based, so that the LoweredValue pointers a NodeLowering holds to
  /// its inputs stay valid while it adds its outputs (a DenseMap moves its
  /// entries when it grows: Split read freed memory after its first output).
  struct ValueHash {
    size_t operator()(Value v) const { return hash_value(v); }
  };
  std::unordered_map<Value, LoweredValue, ValueHash> values;

  FailureOr<SmallVector<LoweredValue>>
  lowerFunctionBody(graph::NodeOp caller, StringRef function,
                    ArrayRef<LoweredValue> args);
  unsigned regionDepth = 0;
  /// The variables each compiled loop being lowered carries through its
  /// iterations, with the region depth of its body: nodes there (not in
  /// deeper regions) may update them.
  struct CarriedVariables {
    unsigned depth;
    llvm::StringSet<> names;
  };
  SmallVector<CarriedVariables> carried;
  /// A write in a region to a variable no loop there carries, which the
  /// node that wrote it reports.
  bool updatedUncarried = false;
  bool mayUpdateInRegion(StringRef variable) const {
    return !carried.empty() && carried.back().depth == regionDepth &&
           carried.back().names.contains(variable);
  }
  Value status;
  std::vector<LoweredFunction::RuntimeError> errorMessages;
  int64_t getMaxIterations() const { return request.maxIterations; }

private:
  LogicalResult lowerNode(graph::NodeOp node);
  LogicalResult lowerCallByName(NodeLowering &ctx);
  llvm::SmallVector<StringRef> callStack;
  FailureOr<SmallVector<graph::NodeOp>>
  scheduleNodes(Block *body, ArrayRef<Value> inputs, ArrayRef<Value> outputs,
                bool runStatefulNodes);

  const LoweringRequest &request;
  ModuleOp target;
  std::string name;
  llvm::DenseSet<unsigned> &needsConstant;
  OpBuilder builder;
  func::FuncOp func;
  Block *entry = nullptr;
  std::unique_ptr<interp::ConstantEvaluator> folder;
  LoweredFunction result;

  struct VariableState {
    std::optional<LoweredValue> entry, current;
    int writeOrder = -1;
  };
  llvm::StringMap<VariableState> variables;
  SmallVector<std::string> writeOrder;
};
} // namespace cleave::conversion

using graph::nodeError;

FailureOr<LoweredValue>
FunctionLowering::entryValue(StringRef variable, graph::NodeOp user,
                             const std::optional<cleave::Tensor> &initial) {
  VariableState &state = variables[variable];
  if (state.entry)
    return *state.entry;
  std::optional<TensorSpec> spec =
      request.variableType ? request.variableType(variable) : std::nullopt;
  bool fromInitial = !spec && initial;
  if (fromInitial)
    spec = TensorSpec{initial->dtype(), initial->shape()};
  if (!spec)
    return nodeError(user) << "Attempting to use uninitialized value "
                           << variable,
           failure();
  Type elementType = getLoweredElementType(target.getContext(), spec->dtype);
  if (!elementType)
    return nodeError(user) << "variable " << variable << " of dtype "
                           << cleave::dtypeName(spec->dtype)
                           << " has no CPU lowering",
           failure();
  auto type = RankedTensorType::get(spec->shape, elementType);
  BlockArgument arg = entry->addArgument(type, user.getLoc());
  VariableSlot slot;
  slot.name = variable.str();
  slot.dtype = spec->dtype;
  slot.shape = spec->shape;
  slot.argIndex = arg.getArgNumber();
  if (fromInitial)
    slot.initial = initial;
  result.variables.push_back(slot);
  LoweredValue value;
  value.tensor = arg;
  value.dtype = spec->dtype;
  value.shape = spec->shape;
  value.variable = variable.str();
  state.entry = value;
  return value;
}

FailureOr<LoweredValue>
FunctionLowering::currentValue(StringRef variable, graph::NodeOp user,
                               const std::optional<cleave::Tensor> &initial) {
  VariableState &state = variables[variable];
  if (state.current)
    return *state.current;
  return entryValue(variable, user, initial);
}

void FunctionLowering::writeVariable(StringRef variable, LoweredValue value) {
  updatedUncarried |= regionDepth > 0 && !mayUpdateInRegion(variable);
  VariableState &state = variables[variable];
  value.variable = variable.str();
  value.constant.reset();
  state.current = value;
  if (state.writeOrder < 0) {
    state.writeOrder = writeOrder.size();
    writeOrder.push_back(variable.str());
  }
}

FailureOr<Value> FunctionLowering::materialize(LoweredValue &value,
                                               graph::NodeOp user) {
  if (value.tensor)
    return value.tensor;
  if (value.constant) {
    // At the start of the function: it dominates every region that uses it.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(entry);
    NodeLowering ctx(*this, user, builder);
    value.tensor = ctx.constantTensor(*value.constant);
    return value.tensor;
  }
  if (!value.variable.empty() && value.dtype != kResource) {
    FailureOr<LoweredValue> current = entryValue(value.variable, user);
    if (failed(current))
      return failure();
    value.tensor = current->tensor;
    value.shape = current->shape;
    return value.tensor;
  }
  return nodeError(user) << "a resource handle has no value to compute with",
         failure();
}

FailureOr<SmallVector<LoweredValue>>
FunctionLowering::lowerFunctionBody(graph::NodeOp caller, StringRef function,
                                    ArrayRef<LoweredValue> args) {
  auto callee = dyn_cast_or_null<graph::FuncOp>(
      SymbolTable::lookupNearestSymbolFrom(
          caller, StringAttr::get(caller.getContext(), function)));
  if (!callee || callee.getUncallable())
    return nodeError(caller) << "function '" << function
                             << "' is not in the graph's library",
           failure();
  if (llvm::is_contained(callStack, function))
    return nodeError(caller) << "calls '" << function
                             << "' recursively, which compiled code cannot do",
           failure();
  Block &body = callee.getBody().front();
  SmallVector<Value> inputs, outputs;
  for (BlockArgument arg : body.getArguments())
    if (!isa<graph::ControlType>(arg.getType()))
      inputs.push_back(arg);
  if (inputs.size() != args.size())
    return nodeError(caller) << "function '" << function << "' takes "
                             << inputs.size() << " arguments, but was called "
                             << "with " << args.size(),
           failure();
  for (auto [arg, value] : llvm::zip(inputs, args))
    values[arg] = value;
  for (Value v : callee.getReturnOp().getOperands())
    if (!isa<graph::ControlType>(v.getType()))
      outputs.push_back(v);
  FailureOr<SmallVector<graph::NodeOp>> order =
      scheduleNodes(&body, inputs, outputs, /*runStatefulNodes=*/true);
  if (failed(order))
    return failure();
  callStack.push_back(function);
  auto popCall = llvm::make_scope_exit([&] { callStack.pop_back(); });
  for (graph::NodeOp node : *order)
    if (failed(lowerNode(node)))
      return failure();
  SmallVector<LoweredValue> results;
  for (Value v : outputs) {
    LoweredValue *value = lookup(v);
    if (!value)
      return nodeError(caller) << "function '" << function
                               << "' returns a value it never computes",
             failure();
    results.push_back(*value);
  }
  return results;
}

LogicalResult FunctionLowering::lowerCallByName(NodeLowering &ctx) {
  SmallVector<LoweredValue> args;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    args.push_back(ctx.input(i));
  FailureOr<SmallVector<LoweredValue>> results =
      lowerFunctionBody(ctx.node, ctx.node.getOpType(), args);
  if (failed(results))
    return failure();
  if (results->size() != ctx.node.getOutputs().size())
    return ctx.error() << "function '" << ctx.node.getOpType() << "' returned "
                       << results->size() << " values, but the node has "
                       << ctx.node.getOutputs().size() << " outputs";
  for (auto [i, value] : llvm::enumerate(*results))
    ctx.setOutput(i, value);
  return success();
}

/// The nodes the outputs need, producers before consumers (data and control
/// edges), in body order where the edges leave a choice.
FailureOr<SmallVector<graph::NodeOp>>
FunctionLowering::scheduleNodes(Block *body, ArrayRef<Value> inputs,
                                ArrayRef<Value> outputs,
                                bool runStatefulNodes) {
  llvm::DenseSet<Value> bound(inputs.begin(), inputs.end());
  llvm::DenseSet<Operation *> needed;
  SmallVector<graph::NodeOp> stack;
  for (Value v : outputs)
    if (!bound.count(v))
      if (auto node = v.getDefiningOp<graph::NodeOp>())
        stack.push_back(node);
  if (runStatefulNodes)
    for (auto node : body->getOps<graph::NodeOp>())
      if (const ops::OpSpec *spec = ops::lookupOp(node.getOpType()))
        if (spec->mayHaveSideEffects())
          stack.push_back(node);
  while (!stack.empty()) {
    graph::NodeOp node = stack.pop_back_val();
    if (!needed.insert(node).second)
      continue;
    for (Value input : node.getInputs())
      if (!bound.count(input))
        if (auto producer = input.getDefiningOp<graph::NodeOp>())
          stack.push_back(producer);
  }

  llvm::DenseMap<Operation *, unsigned> waiting;
  std::deque<graph::NodeOp> ready;
  for (auto node : body->getOps<graph::NodeOp>()) {
    if (!needed.count(node))
      continue;
    unsigned count = 0;
    for (Value input : node.getInputs())
      if (!bound.count(input))
        if (auto producer = input.getDefiningOp<graph::NodeOp>();
            producer && needed.count(producer))
          ++count;
    waiting[node] = count;
    if (!count)
      ready.push_back(node);
  }
  SmallVector<graph::NodeOp> order;
  while (!ready.empty()) {
    graph::NodeOp node = ready.front();
    ready.pop_front();
    order.push_back(node);
    auto release = [&](Value v) {
      for (Operation *user : v.getUsers())
        if (auto consumer = dyn_cast<graph::NodeOp>(user))
          if (needed.count(consumer))
            for (Value input : consumer.getInputs())
              if (input == v && --waiting[consumer] == 0)
                ready.push_back(consumer);
    };
    for (Value out : node.getOutputs())
      release(out);
    release(node.getControl());
  }
  if (order.size() != needed.size()) {
    for (auto node : body->getOps<graph::NodeOp>())
      if (needed.count(node) && waiting[node])
        return nodeError(node) << "is part of a cycle; compiled code runs "
                                  "functional loops only (run "
                                  "graph-functionalize-loops first)",
               failure();
  }
  return order;
}

bool cleave::conversion::hasMoreElements(ArrayRef<int64_t> shape,
                                         int64_t limit) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return false;
  int64_t count = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(count, d, count) || count > limit)
      return true;
  return false;
}

LogicalResult FunctionLowering::lowerNode(graph::NodeOp node) {
  NodeLowering ctx(*this, node, builder);
  StringRef op = node.getOpType();

  // Known inputs: try the reference kernel.
  bool allConstant = getFolder(node).canEvaluate(node);
  for (unsigned i = 0; allConstant && i < ctx.getNumInputs(); ++i)
    allConstant = ctx.input(i).constant.has_value();
  // An output the shape function knows to be large is not worth computing
  // here (a Fill of a billion elements would be made, then thrown away).
  for (unsigned i = 0; allConstant && i < node.getOutputs().size(); ++i)
    if (std::optional<std::vector<int64_t>> shape = ctx.outputShape(i))
      allConstant = !hasMoreElements(*shape, kMaxFoldedElements);
  if (allConstant && op != "Const") {
    std::vector<Tensor> inputs;
    for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
      inputs.push_back(*ctx.input(i).constant);
    FailureOr<std::vector<Tensor>> outputs =
        getFolder(node).evaluate(node, inputs);
    if (failed(outputs))
      return failure();
    bool small = true;
    for (const Tensor &t : *outputs)
      small &= t.isValid() && cleave::dtypeSize(t.dtype()) &&
               t.numElements() <= kMaxFoldedElements;
    if (small) {
      for (auto [i, t] : llvm::enumerate(*outputs))
        ctx.setConstantOutput(i, t);
      return success();
    }
  }

  const auto &table = getLoweringTable();
  auto it = table.find(op);
  if (it == table.end() && !ops::lookupOp(op) &&
      SymbolTable::lookupNearestSymbolFrom(node, node.getOpTypeAttr()))
    return lowerCallByName(ctx);
  if (it == table.end() && !ops::lookupOp(op))
    return nodeError(node) << "Op type not registered '" << op
                           << "' in binary (graph-ops lists the ops this "
                              "build knows)",
           failure();
  if (it == table.end())
    return nodeError(node) << "op '" << op << "' has no CPU lowering",
           failure();
  if (failed(validateNodeDef(node)) || failed(ctx.inferShapes()))
    return failure();
  const ops::OpSpec *spec = ops::lookupOp(op);
  // A resource handle where the op's signature wants a value (an ill-typed
  // graph) has nothing to compute with.
  if (spec) {
    std::vector<int32_t> wanted; // per input; 0: any
    for (const ops::ArgSpec &arg : spec->inputs) {
      if (!arg.typeListAttr.empty()) {
        auto list = dyn_cast_or_null<ArrayAttr>(ctx.getAttr(arg.typeListAttr));
        for (Attribute t : list ? list : ArrayAttr())
          wanted.push_back(isa<TypeAttr>(t) ? graph::typeToDataType(
                                                  cast<TypeAttr>(t).getValue())
                                            : 0);
        continue;
      }
      int32_t type = arg.fixedType;
      if (!type)
        type = ctx.getType(arg.typeAttr).value_or(0);
      int64_t count =
          arg.numberAttr.empty() ? 1 : ctx.getInt(arg.numberAttr).value_or(0);
      wanted.insert(wanted.end(), count, type);
    }
    if (wanted.size() == ctx.getNumInputs())
      for (auto [i, type] : llvm::enumerate(wanted))
        if (ctx.dtype(i) == kResource && type &&
            type != kResource)
          return nodeError(node) << "input " << i << " is a resource handle, "
                                 << "but '" << op << "' takes a "
                                 << cleave::dtypeName(type) << " there",
                 failure();
  }
  // Inputs that are not Ref arguments of the op read the variable's value.
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    bool refArg = spec && i < spec->inputs.size() && spec->inputs[i].isRef;
    LoweredValue &value = const_cast<LoweredValue &>(ctx.input(i));
    if (!refArg && value.dtype != kResource && !value.tensor &&
        !value.constant && failed(materialize(value, node)))
      return failure();
  }
  if (failed(it->second.lowering(ctx)) || ctx.hasFailedInput())
    return failure();
  // A loop carries the variables its body updates; other control flow
  // cannot yet (the value would escape its region).
  if (std::exchange(updatedUncarried, false))
    return nodeError(node) << "updates a variable inside compiled control "
                              "flow, which is not supported yet",
           failure();
  for (auto [i, out] : llvm::enumerate(node.getOutputs()))
    if (!values.count(out))
      return nodeError(node) << "the CPU lowering of '" << op
                             << "' did not define output " << i,
             failure();
  return success();
}

FailureOr<LoweredFunction> FunctionLowering::run() {
  MLIRContext *context = target.getContext();
  Location loc = request.body->getParentOp()->getLoc();
  builder.setInsertionPointToEnd(target.getBody());
  func = builder.create<func::FuncOp>(loc, name,
                                      builder.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  result.name = name;
  builder.setInsertionPointToStart(entry);
  status = builder.create<arith::ConstantOp>(loc, builder.getI64IntegerAttr(0));

  // Arguments: constants fold, resources name variables, the rest become
  // function arguments.
  for (auto [i, v] : llvm::enumerate(request.inputs)) {
    const ArgSpecialization &spec = request.args[i];
    LoweredValue value;
    value.dtype = spec.dtype;
    value.shape = spec.shape;
    if (spec.dtype == kResource) {
      value.variable = spec.variable;
    } else if (spec.constant) {
      value.constant = spec.constant;
    } else if (llvm::is_contained(spec.shape, 0) &&
               getLoweredElementType(context, spec.dtype)) {
      // A tensor without elements is known at compile time. (The bare-
      // pointer calling convention also rejects a memref whose zero size is
      // not its first dimension.)
      value.constant = Tensor(spec.dtype, spec.shape);
    } else {
      Type elementType = getLoweredElementType(context, spec.dtype);
      if (!elementType)
        return emitError(loc) << "argument " << i << " of dtype "
                              << cleave::dtypeName(spec.dtype)
                              << " has no CPU lowering",
               failure();
      value.tensor =
          entry->addArgument(RankedTensorType::get(spec.shape, elementType),
                             v.getLoc());
      result.dataArgs.push_back(i);
      result.argSpecs.push_back({spec.dtype, spec.shape});
    }
    values[v] = value;
  }

  // What runs: the outputs' producers, and the targets (their control
  // tokens stand for them).
  SmallVector<Value> roots(request.outputs);
  for (Operation *target : request.targets)
    roots.push_back(cast<graph::NodeOp>(target).getControl());
  FailureOr<SmallVector<graph::NodeOp>> order =
      scheduleNodes(request.body, request.inputs, roots,
                    request.runStatefulNodes);
  if (failed(order))
    return failure();
  builder.setInsertionPointToEnd(entry);
  for (graph::NodeOp node : *order)
    if (failed(lowerNode(node)))
      return failure();

  // Results: each computed buffer once; arguments and constants reach the
  // caller without the function.
  SmallVector<Value> results;
  llvm::DenseMap<Value, unsigned> resultIndex;
  auto sourceOf = [&](LoweredValue &value,
                      graph::NodeOp producer) -> FailureOr<ValueSource> {
    ValueSource source;
    if (value.constant && !value.tensor && !request.returnConstantOutputs) {
      source.kind = ValueSource::Kind::Constant;
      source.constant = value.constant;
      return source;
    }
    // Nor does an output without elements need a buffer.
    if (llvm::is_contained(value.shape, 0) && value.variable.empty() &&
        !request.returnConstantOutputs) {
      source.kind = ValueSource::Kind::Constant;
      source.constant = Tensor(value.dtype, value.shape);
      return source;
    }
    FailureOr<Value> tensor = materialize(value, producer);
    if (failed(tensor))
      return failure();
    if (auto arg = dyn_cast<BlockArgument>(*tensor)) {
      source.kind = ValueSource::Kind::Argument;
      source.index = arg.getArgNumber();
      return source;
    }
    auto [it, inserted] = resultIndex.try_emplace(*tensor, results.size());
    if (inserted) {
      results.push_back(*tensor);
      result.resultSpecs.push_back({value.dtype, value.shape});
    }
    source.index = it->second;
    return source;
  };
  for (Value v : request.outputs) {
    LoweredValue *value = lookup(v);
    auto producer = v.getDefiningOp<graph::NodeOp>();
    if (!value || !producer)
      return emitError(v.getLoc()) << "an output of the lowered function "
                                      "has no value",
             failure();
    if (value->dtype == kResource)
      return nodeError(producer) << "a resource handle cannot leave compiled "
                                    "code",
             failure();
    if (value->list)
      return nodeError(producer) << "a TensorList cannot leave compiled code",
             failure();
    FailureOr<ValueSource> source = sourceOf(*value, producer);
    if (failed(source))
      return failure();
    result.outputs.push_back(*source);
  }
  for (const std::string &variable : writeOrder) {
    LoweredValue value = *variables[variable].current;
    FailureOr<ValueSource> source = sourceOf(value, graph::NodeOp());
    if (failed(source))
      return failure();
    auto slot = llvm::find_if(result.variables, [&](const VariableSlot &s) {
      return s.name == variable;
    });
    if (slot == result.variables.end()) {
      result.variables.push_back({variable, value.dtype, value.shape});
      slot = std::prev(result.variables.end());
    }
    slot->written = *source;
    slot->dtype = value.dtype;
    slot->shape = value.shape;
  }
  // The status, when compiled code can fail.
  if (!errorMessages.empty()) {
    result.statusResult = results.size();
    result.errors = errorMessages;
    results.push_back(builder.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({}, builder.getI64Type()),
        ValueRange{status}));
    result.resultSpecs.push_back({kInt64, {}});
  }
  builder.create<func::ReturnOp>(loc, results);
  func.setFunctionType(builder.getFunctionType(
      entry->getArgumentTypes(), ValueRange(results).getTypes()));
  // The caller's buffers are read-only: bufferization must not update them
  // in place.
  for (unsigned i = 0; i < entry->getNumArguments(); ++i)
    func.setArgAttr(i, "bufferization.writable", builder.getBoolAttr(false));
  return result;
}

FailureOr<LoweredFunction>
cleave::conversion::lowerToLinalg(const LoweringRequest &request,
                                  ModuleOp target, StringRef name,
                                  llvm::DenseSet<unsigned> &needsConstant) {
  MLIRContext *context = target.getContext();
  context->loadDialect<func::FuncDialect, linalg::LinalgDialect,
                       tensor::TensorDialect, arith::ArithDialect,
                       math::MathDialect, scf::SCFDialect,
                       memref::MemRefDialect,
                       bufferization::BufferizationDialect>();
  FunctionLowering lowering(request, target, name, needsConstant);
  FailureOr<LoweredFunction> lowered = lowering.run();
  if (failed(lowered)) {
    // Leave no half-built function behind.
    if (auto func = target.lookupSymbol<func::FuncOp>(name))
      func.erase();
  }
  return lowered;
}

LoweringRequest
cleave::conversion::requestForFunction(Operation *function,
                                       ArrayRef<ArgSpecialization> args,
                                       VariableTypeFn variableType) {
  auto func = cast<graph::FuncOp>(function);
  LoweringRequest request;
  request.body = &func.getBody().front();
  for (BlockArgument arg : request.body->getArguments())
    if (!isa<graph::ControlType>(arg.getType()))
      request.inputs.push_back(arg);
  request.args.assign(args.begin(), args.end());
  for (Value v : func.getReturnOp().getOperands()) {
    if (!isa<graph::ControlType>(v.getType()))
      request.outputs.push_back(v);
    else if (auto node = v.getDefiningOp<graph::NodeOp>()) // control_ret
      request.targets.push_back(node);
  }
  request.runStatefulNodes = true;
  request.variableType = std::move(variableType);
  return request;
}

//===----------------------------------------------------------------------===//
// NodeLowering
//===----------------------------------------------------------------------===//

NodeLowering::NodeLowering(FunctionLowering &function, graph::NodeOp node,
                           OpBuilder &builder)
    : NodeAttrReader(node), node(node), b(builder), loc(node.getLoc()),
      function(function) {
  for (Value v : node.getDataInputs())
    inputs.push_back(function.lookup(v));
}

InFlightDiagnostic NodeLowering::error() { return nodeError(node); }

ModuleOp NodeLowering::getTargetModule() { return function.getTarget(); }

namespace {
/// A node as the shape functions see it during lowering: static input
/// shapes, and the values of inputs known at compile time.
class LoweringShapeContext : public graph::NodeInferenceContext {
public:
  LoweringShapeContext(graph::NodeOp node, ArrayRef<LoweredValue *> inputs)
      : NodeInferenceContext(node), inputs(inputs) {}

  unsigned getNumInputs() const override { return inputs.size(); }
  ops::Shape getInputShape(unsigned i) const override {
    if (i >= inputs.size() || inputs[i]->dtype == kResource ||
        (!inputs[i]->variable.empty() && !inputs[i]->tensor))
      return ops::Shape::unknown();
    return ops::Shape::of(inputs[i]->shape);
  }
  std::optional<SmallVector<int64_t>>
  getConstantInput(unsigned i) const override {
    if (i >= inputs.size() || !inputs[i]->constant ||
        !isIntegerDType(inputs[i]->dtype))
      return std::nullopt;
    std::vector<int64_t> values = cleave::toInts(*inputs[i]->constant);
    return SmallVector<int64_t>(values.begin(), values.end());
  }
  std::optional<double> getConstantScalar(unsigned i) const override {
    if (i >= inputs.size() || !inputs[i]->constant ||
        inputs[i]->constant->numElements() != 1 ||
        !(isFloatDType(inputs[i]->dtype) || isIntegerDType(inputs[i]->dtype)))
      return std::nullopt;
    return inputs[i]->constant->getAsDouble(0);
  }
  ops::Shape getResourceShape(unsigned) const override {
    return ops::Shape::unknown();
  }
  std::optional<SmallVector<ops::Shape>>
  getFunctionResultShapes(StringRef, unsigned) const override {
    return std::nullopt;
  }

private:
  ArrayRef<LoweredValue *> inputs;
};
} // namespace

LogicalResult NodeLowering::inferShapes() {
  outputShapes.assign(node.getOutputs().size(), std::nullopt);
  ops::ShapeFn fn = ops::lookupShapeFn(node.getOpType());
  if (!fn)
    return success();
  LoweringShapeContext ctx(node, inputs);
  std::string message = fn(ctx);
  if (!message.empty()) {
    std::string shapes;
    for (auto [i, input] : llvm::enumerate(inputs))
      shapes += (i ? ", " : "") + cleave::shapeString(input->shape);
    return error() << message << " for '" << node.getName()
                   << "' (op: " << node.getOpType()
                   << ") with input shapes: " << shapes;
  }
  for (auto [i, shape] : llvm::enumerate(ctx.getOutputs()))
    if (shape.hasRank() && !llvm::is_contained(shape.dims, ops::Shape::kUnknown))
      outputShapes[i] = std::vector<int64_t>(shape.dims.begin(),
                                             shape.dims.end());
  return success();
}

std::optional<std::vector<int64_t>>
NodeLowering::outputShape(unsigned i) const {
  return i < outputShapes.size() ? outputShapes[i] : std::nullopt;
}

Value NodeLowering::tensor(unsigned i) {
  FailureOr<Value> value = function.materialize(*inputs[i], node);
  if (succeeded(value))
    return *value;
  // An input with no value (a resource handle used as a tensor): the error
  // is out; the lowering goes on with a stand-in and then fails.
  inputFailed = true;
  return b.create<tensor::EmptyOp>(loc, inputs[i]->shape, b.getF32Type());
}

FailureOr<std::vector<int64_t>> NodeLowering::constantInts(unsigned i) {
  if (inputs[i]->constant)
    return cleave::toInts(*inputs[i]->constant);
  int arg = function.argumentIndex(node.getDataInputs()[i]);
  if (arg >= 0)
    function.recordNeedsConstant(arg);
  return error() << "Input " << i << " to node `" << node.getName()
                 << "` with op " << node.getOpType()
                 << " must be a compile-time constant",
         failure();
}

LogicalResult NodeLowering::requireConstants(ArrayRef<unsigned> inputs) {
  bool known = true;
  for (unsigned i : inputs)
    known &= succeeded(constantInts(i));
  return success(known);
}

FailureOr<std::vector<int64_t>>
NodeLowering::inferredOutputShape(ArrayRef<unsigned> shapeInputs,
                                  unsigned output) {
  if (failed(requireConstants(shapeInputs)))
    return failure();
  if (std::optional<std::vector<int64_t>> shape = outputShape(output))
    return *shape;
  return error() << "the output shape could not be inferred", failure();
}

LogicalResult cleave::conversion::lowerCompileTimeOnly(NodeLowering &ctx) {
  std::vector<unsigned> all;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    all.push_back(i);
  if (failed(ctx.requireConstants(all)))
    return failure();
  return ctx.error() << "could not be evaluated at compile time";
}

void NodeLowering::setOutput(unsigned i, Value tensor, int32_t dtype) {
  LoweredValue value;
  value.tensor = tensor;
  value.dtype = dtype;
  auto type = cast<RankedTensorType>(tensor.getType());
  value.shape.assign(type.getShape().begin(), type.getShape().end());
  setOutput(i, std::move(value));
}

void NodeLowering::replaceInput(unsigned i, LoweredValue value) {
  replacedInputs.push_back(std::move(value));
  inputs[i] = &replacedInputs.back();
}

const LoweredValue &NodeLowering::output(unsigned i) {
  return function.values[node.getOutputs()[i]];
}

void NodeLowering::setOutput(unsigned i, LoweredValue value) {
  function.values[node.getOutputs()[i]] = std::move(value);
}

void NodeLowering::setConstantOutput(unsigned i, Tensor value) {
  LoweredValue lowered;
  lowered.dtype = value.dtype();
  lowered.shape = value.shape();
  lowered.constant = std::move(value);
  setOutput(i, std::move(lowered));
}

FailureOr<LoweredValue> NodeLowering::readVariable(unsigned input) {
  const std::string &name = inputs[input]->variable;
  if (name.empty())
    return error() << "input " << input
                   << " is not a reference to a variable",
           failure();
  return function.currentValue(name, node);
}

FailureOr<LoweredValue>
NodeLowering::readVariableOr(StringRef name, const cleave::Tensor &initial) {
  return function.currentValue(name, node, initial);
}

void NodeLowering::writeVariable(StringRef name, Value tensor, int32_t dtype,
                                 ArrayRef<int64_t> shape) {
  LoweredValue value;
  value.tensor = tensor;
  value.dtype = dtype;
  value.shape.assign(shape.begin(), shape.end());
  function.writeVariable(name, std::move(value));
}

FailureOr<SmallVector<LoweredValue>>
NodeLowering::lowerFunctionBody(StringRef functionName,
                                ArrayRef<LoweredValue> args) {
  return function.lowerFunctionBody(node, functionName, args);
}
void NodeLowering::enterRegion() { ++function.regionDepth; }
void NodeLowering::exitRegion() { --function.regionDepth; }
void NodeLowering::enterLoopBody(ArrayRef<std::string> carried) {
  ++function.regionDepth;
  auto &entry = function.carried.emplace_back();
  entry.depth = function.regionDepth;
  for (const std::string &name : carried)
    entry.names.insert(name);
}
void NodeLowering::exitLoopBody() {
  function.carried.pop_back();
  --function.regionDepth;
}
FailureOr<LoweredValue> NodeLowering::currentVariable(StringRef name) {
  return function.currentValue(name, node);
}
Value NodeLowering::getStatus() { return function.status; }
void NodeLowering::setStatus(Value status) { function.status = status; }
int64_t NodeLowering::addError(std::string message) {
  function.errorMessages.push_back(
      {"Node '" + node.getName().str() + "': " + message, node.getLoc()});
  return function.errorMessages.size();
}
int64_t NodeLowering::getMaxIterations() const {
  return function.getMaxIterations();
}

std::optional<TensorSpec> NodeLowering::variableSpec(StringRef name) {
  return function.variableSpec(name);
}


//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

func::FuncOp NodeLowering::declareRuntimeFunction(StringRef name,
                                                  TypeRange arguments,
                                                  TypeRange results) {
  ModuleOp module = getTargetModule();
  if (auto callee = module.lookupSymbol<func::FuncOp>(name))
    return callee;
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  auto callee = top.create<func::FuncOp>(
      loc, name, top.getFunctionType(arguments, results));
  callee.setPrivate();
  return callee;
}

Value NodeLowering::bufferAddress(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
  return b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
}

void NodeLowering::setStatusFromRuntime(Value code, std::string message) {
  Value status = getStatus();
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value failedHere = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, code, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, status, zero));
  Value errorCode = b.create<arith::ConstantOp>(
      loc, b.getI64IntegerAttr(addError(std::move(message))));
  setStatus(b.create<arith::SelectOp>(loc, failedHere, errorCode, status));
}

Type NodeLowering::elementType(int32_t dtype) {
  return getLoweredElementType(b.getContext(), dtype);
}

RankedTensorType NodeLowering::tensorType(ArrayRef<int64_t> shape,
                                          int32_t dtype) {
  return RankedTensorType::get(shape, elementType(dtype));
}

Value NodeLowering::empty(ArrayRef<int64_t> shape, int32_t dtype) {
  return b.create<tensor::EmptyOp>(loc, shape, elementType(dtype));
}

Value NodeLowering::scalar(int32_t dtype, double value) {
  Type type = elementType(dtype);
  if (isa<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  if (type.isInteger(1))
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(value != 0));
  int64_t bits = isUnsignedDType(dtype) ? int64_t(uint64_t(value))
                                        : int64_t(value);
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, bits));
}

Value NodeLowering::filled(ArrayRef<int64_t> shape, int32_t dtype,
                           Value value) {
  return b
      .create<linalg::FillOp>(loc, ValueRange{value},
                              ValueRange{empty(shape, dtype)})
      .getResult(0);
}

Value NodeLowering::constantTensor(const Tensor &value) {
  RankedTensorType type = tensorType(value.shape(), value.dtype());
  DenseElementsAttr attr;
  if (value.dtype() == kBool) {
    SmallVector<bool> bits(value.data<bool>(),
                           value.data<bool>() + value.numElements());
    attr = DenseElementsAttr::get(type, bits);
  } else {
    attr = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(value.raw(), value.byteSize()));
  }
  return b.create<arith::ConstantOp>(loc, attr);
}

FailureOr<std::vector<int64_t>>
NodeLowering::broadcastShapes(ArrayRef<unsigned> inputIndices) {
  std::vector<int64_t> joined = shape(inputIndices[0]);
  for (unsigned i : inputIndices.drop_front()) {
    std::vector<int64_t> next;
    if (!cleave::broadcastShape(joined, shape(i), next))
      return error() << "Incompatible shapes: "
                     << cleave::shapeString(shape(inputIndices[0]))
                     << " vs. " << cleave::shapeString(shape(i)),
             failure();
    joined = next;
  }
  return joined;
}

Value NodeLowering::map(ArrayRef<Value> operands, ArrayRef<int64_t> shape,
                        int32_t dtype, ElementFn body) {
  int64_t rank = shape.size();
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    ArrayRef<int64_t> in = cast<RankedTensorType>(operand.getType()).getShape();
    SmallVector<AffineExpr> exprs;
    int64_t offset = rank - int64_t(in.size());
    for (auto [d, size] : llvm::enumerate(in))
      exprs.push_back(size == 1 && shape[d + offset] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(d + offset));
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{tensorType(shape, dtype)}, operands,
      ValueRange{empty(shape, dtype)}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value out = body(nested, nestedLoc, args.drop_back());
        nested.create<linalg::YieldOp>(nestedLoc, out);
      });
  return generic.getResult(0);
}

Value NodeLowering::reduce(Value input, ArrayRef<int64_t> shape, int32_t dtype,
                           ArrayRef<int64_t> axes, Value init,
                           ElementFn combine) {
  int64_t rank = shape.size();
  std::vector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      outShape.push_back(shape[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  Value acc = filled(outShape, dtype, init);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{acc.getType()}, ValueRange{input}, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        nested.create<linalg::YieldOp>(nestedLoc,
                                       combine(nested, nestedLoc, args));
      });
  return generic.getResult(0);
}

Value NodeLowering::reshape(Value input, ArrayRef<int64_t> from,
                            ArrayRef<int64_t> to, int32_t dtype) {
  if (from == to)
    return input;
  int64_t count = 1;
  for (int64_t d : from)
    count *= d;
  // Through the flat form: collapse everything, then expand everything.
  Value flat = input;
  auto flatType = tensorType({count}, dtype);
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t d = 0; d < rank; ++d)
      group.push_back(d);
    return SmallVector<ReassociationIndices>{group};
  };
  if (from.empty())
    flat = b.create<tensor::ExpandShapeOp>(
        loc, flatType, input, SmallVector<ReassociationIndices>{});
  else if (from.size() > 1)
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, input,
                                             all(from.size()));
  if (to.size() == 1)
    return flat;
  if (to.empty())
    return b.create<tensor::CollapseShapeOp>(
        loc, tensorType(to, dtype), flat, SmallVector<ReassociationIndices>{});
  return b.create<tensor::ExpandShapeOp>(loc, tensorType(to, dtype), flat,
                                         all(to.size()));
}

Value NodeLowering::convertElement(OpBuilder &builder, Location loc,
                                   Value value, int32_t from, int32_t to) {
  Type toType = elementType(to);
  if (from == to)
    return value;
  if (to == kBool) {
    if (isFloatDType(from))
      return builder.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::UNE, value,
          builder.create<arith::ConstantOp>(
              loc, builder.getFloatAttr(value.getType(), 0)));
    return builder.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne, value,
        builder.create<arith::ConstantOp>(
            loc, builder.getIntegerAttr(value.getType(), 0)));
  }
  bool fromFloat = isFloatDType(from), toFloat = isFloatDType(to);
  bool fromUnsigned = isUnsignedDType(from) || from == kBool;
  if (fromFloat && toFloat) {
    if (toType.getIntOrFloatBitWidth() > value.getType().getIntOrFloatBitWidth())
      return builder.create<arith::ExtFOp>(loc, toType, value);
    return builder.create<arith::TruncFOp>(loc, toType, value);
  }
  if (fromFloat)
    return isUnsignedDType(to)
               ? builder.create<arith::FPToUIOp>(loc, toType, value).getResult()
               : builder.create<arith::FPToSIOp>(loc, toType, value).getResult();
  if (toFloat)
    return fromUnsigned
               ? builder.create<arith::UIToFPOp>(loc, toType, value).getResult()
               : builder.create<arith::SIToFPOp>(loc, toType, value).getResult();
  unsigned fromBits = value.getType().getIntOrFloatBitWidth();
  unsigned toBits = toType.getIntOrFloatBitWidth();
  if (toBits == fromBits)
    return value;
  if (toBits < fromBits)
    return builder.create<arith::TruncIOp>(loc, toType, value);
  return fromUnsigned
             ? builder.create<arith::ExtUIOp>(loc, toType, value).getResult()
             : builder.create<arith::ExtSIOp>(loc, toType, value).getResult();
}
