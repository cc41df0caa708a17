//===- KernelTable.cpp - finding and running a node's kernel --------------===//
//
// The table of every family's kernels, and runKernel with the checks that
// come before it: what the executor and the constant evaluator share.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>
#include <new>
#include <stdexcept>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;

KernelHost::~KernelHost() = default;

FailureOr<Tensor> KernelContext::getTensor(StringRef name) {
  auto attr = dyn_cast_or_null<TensorAttr>(getAttr(name));
  if (!attr)
    return error() << "missing tensor attr '" << name << "'", failure();
  int32_t dt = typeToDataType(attr.getDtype());
  // A `raw` form beside the decoded value only keeps the file's exact bytes.
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr.getValue());
  if (!dense)
    return error() << "tensor attr '" << name << "' of dtype "
                   << getDataTypeName(attr.getDtype())
                   << " cannot be decoded (its bytes do not match its shape, "
                      "or the dtype is not computable)",
           failure();
  std::vector<int64_t> shape(attr.getShape().getDims().begin(),
                             attr.getShape().getDims().end());
  if (dt == kString) {
    Tensor t(dt, shape);
    auto values = cast<DenseStringElementsAttr>(dense).getRawStringData();
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.strings()[i] = values[dense.isSplat() ? 0 : i].str();
    return t;
  }
  if (!dtypeSize(dt))
    return error() << "dtype " << getDataTypeName(attr.getDtype())
                   << " is not supported by the interpreter",
           failure();
  Tensor t(dt, shape);
  if (dt == kBool) {
    auto values = dense.getValues<bool>();
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data<bool>()[i] = values[i];
    return t;
  }
  ArrayRef<char> raw = dense.getRawData();
  size_t size = dtypeSize(dt);
  for (int64_t i = 0; i < t.numElements(); ++i)
    std::memcpy(t.raw() + i * size,
                raw.data() + (dense.isSplat() ? 0 : i * size), size);
  return t;
}

std::vector<int64_t>
cleave::interp::stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

bool cleave::interp::fitsShape(const Tensor &t, Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return true;
  if (ranked.getRank() != t.rank())
    return false;
  for (int64_t d = 0; d < ranked.getRank(); ++d)
    if (!ranked.isDynamicDim(d) && ranked.getDimSize(d) != t.shape()[d])
      return false;
  return true;
}

namespace {
/// A kernel and the family of the file that defines it.
struct KernelEntry {
  Kernel kernel;
  ops::OpFamily family;
};
} // namespace

static const llvm::StringMap<KernelEntry> &getKernelTable() {
  static const llvm::StringMap<KernelEntry> *table = [] {
    using ops::OpFamily;
    auto *map = new llvm::StringMap<KernelEntry>();
    std::pair<OpFamily, KernelTable> families[] = {
        {OpFamily::Array, getArrayKernels()},
        {OpFamily::Math, getMathKernels()},
        {OpFamily::NN, getNNKernels()},
        {OpFamily::NN, getImageKernels()},
        {OpFamily::NN, getVolumeKernels()},
        {OpFamily::State, getStateKernels()},
        {OpFamily::ControlFlow, getControlFlowKernels()},
        {OpFamily::Functional, getFunctionalKernels()},
        {OpFamily::Random, getRandomKernels()},
        {OpFamily::TPU, getTPUKernels()},
        {OpFamily::Host, getHostKernels()},
        {OpFamily::Host, getSummaryKernels()},
        {OpFamily::Data, getDataKernels()},
        {OpFamily::Data, getListKernels()},
        {OpFamily::IO, getIOKernels()}};
    for (const auto &[family, kernels] : families)
      for (const auto &[name, kernel] : kernels) {
        if (!ops::lookupOp(name) ||
            !map->try_emplace(name, KernelEntry{kernel, family}).second)
          llvm::report_fatal_error(llvm::Twine("bad kernel table entry '") +
                                   name + "'");
      }
    return map;
  }();
  return *table;
}

Kernel cleave::interp::lookupKernel(StringRef opType) {
  auto it = getKernelTable().find(opType);
  return it == getKernelTable().end() ? nullptr : it->second.kernel;
}

std::optional<ops::OpFamily>
cleave::interp::lookupKernelFamily(StringRef opType) {
  if (opType == "Merge" || opType == "RefMerge" || opType == "Switch" ||
      opType == "RefSwitch")
    return ops::OpFamily::ControlFlow;
  auto it = getKernelTable().find(opType);
  if (it == getKernelTable().end())
    return std::nullopt;
  return it->second.family;
}

bool cleave::interp::hasKernel(StringRef opType) {
  return lookupKernelFamily(opType).has_value();
}

static std::string renderProducer(Value v) {
  if (auto node = v.getDefiningOp<NodeOp>())
    return node.getName().str();
  return "<argument>";
}

LogicalResult cleave::interp::checkOpIsKnown(NodeOp node) {
  if (isDefinedOp(node))
    return success();
  return node.emitError() << "Node '" << node.getName() << "': "
                          << ops::getOpNotRegisteredMessage(node.getOpType()),
         failure();
}

/// A ref input holds its variable's value when the node runs, not when
/// the VariableV2 node ran: TensorFlow's ref tensors alias the variable's
/// buffer, so a read ordered after an update (by a control dependency
/// alone) sees it.
static void readRefInputsNow(KernelHost &host, NodeOp node,
                             std::vector<Tensor> &inputs) {
  for (auto [i, input] : llvm::enumerate(node.getDataInputs())) {
    auto type = dyn_cast<TensorType>(input.getType());
    if (i >= inputs.size() || !type || !isa<RefType>(type.getElementType()))
      continue;
    Value ref = input;
    std::string variable;
    while (auto producer = ref.getDefiningOp<NodeOp>()) {
      StringRef op = producer.getOpType();
      if (op == "VariableV2" || op == "Variable") {
        variable = getVariableName(producer);
        break;
      }
      bool forwardsRef = op == "Identity" || op == "RefIdentity" ||
                         op == "Assign" || op == "AssignAdd" ||
                         op == "AssignSub";
      if (!forwardsRef || producer.getDataInputs().empty())
        break;
      ref = producer.getDataInputs()[0];
    }
    if (variable.empty())
      continue;
    const State &state = host.getState();
    auto it = state.variables.find(variable);
    if (it != state.variables.end() && it->second.isValid())
      inputs[i] = it->second;
  }
}

FailureOr<std::vector<Tensor>>
cleave::interp::runKernel(KernelHost &host, NodeOp node,
                          std::vector<Tensor> inputs, DictionaryAttr bindings) {
  StringRef op = node.getOpType();
  Kernel kernel = lookupKernel(op);
  if (!kernel && SymbolTable::lookupNearestSymbolFrom(
                     node, StringAttr::get(node.getContext(), op)))
    kernel = callFunctionNode;
  if (!kernel && failed(checkOpIsKnown(node)))
    return failure();
  if (!kernel)
    return node.emitError() << "Node '" << node.getName()
                            << "': no reference kernel for op '" << op << "'",
           failure();
  readRefInputsNow(host, node, inputs);
  KernelContext ctx(node, std::move(inputs), host, bindings);
  // A tensor too large for memory is the node's error, as TensorFlow's
  // ResourceExhausted, not the end of the process.
  auto outOfMemory = [&]() -> LogicalResult {
    node.emitError() << "Node '" << node.getName()
                     << "': OOM when allocating a tensor for op '" << op << "'";
    return failure();
  };
  LogicalResult ran = failure();
  try {
    ran = kernel(ctx);
  } catch (const TensorAllocationError &e) {
    node.emitError() << "Node '" << node.getName() << "': " << e.message();
    return failure();
  } catch (const std::bad_alloc &) {
    return outOfMemory();
  } catch (const std::length_error &) { // more elements than a vector holds
    return outOfMemory();
  }
  if (failed(ran))
    return failure();
  return std::move(ctx.outputs);
}

FailureOr<Block *> cleave::interp::enterFunction(
    ModuleOp module, StringRef function, ArrayRef<Tensor> args,
    Operation *caller, unsigned depth, llvm::DenseMap<Value, Tensor> &bound) {
  auto callerError = [&]() -> InFlightDiagnostic {
    auto diag = caller->emitError();
    if (auto node = dyn_cast<NodeOp>(caller))
      diag << "Node '" << node.getName() << "': ";
    return diag;
  };
  auto func = module.lookupSymbol<FuncOp>(function);
  if (!func)
    return callerError() << "function '" << function
                         << "' is not in the graph's library",
           failure();
  if (func.getUncallable())
    return callerError() << "function '" << function
                         << "' has no name in the library and cannot be "
                            "called",
           failure();
  // TensorFlow's executor would overflow its stack; the oracle says so.
  constexpr unsigned kMaxCallDepth = 256;
  if (depth >= kMaxCallDepth)
    return callerError() << "calls nest deeper than " << kMaxCallDepth
                         << " (unbounded recursion through '" << function
                         << "'?)",
           failure();

  Block &body = func.getBody().front();
  size_t numData = 0;
  for (BlockArgument arg : body.getArguments()) {
    if (isa<ControlType>(arg.getType()))
      continue;
    if (numData < args.size()) {
      auto type = dyn_cast<TensorType>(arg.getType());
      int32_t dt = type ? typeToDataType(type.getElementType()) : -1;
      if (dt > 0 && dt != args[numData].dtype() &&
          !isa<ResourceType>(type.getElementType()))
        return callerError()
                   << "argument " << numData << " of '" << function
                   << "' must be " << dtypeName(dt) << ", but was given "
                   << dtypeName(args[numData].dtype()),
               failure();
      bound[arg] = args[numData];
    }
    ++numData;
  }
  if (numData != args.size())
    return callerError() << "function '" << function << "' takes " << numData
                         << " arguments, but was called with " << args.size(),
           failure();

  return &body;
}

LogicalResult cleave::interp::validateOnce(NodeOp node,
                                           ValidatedNodes &validated) {
  if (validated.count(node))
    return success();
  if (failed(validateNodeDef(node)))
    return failure();
  validated.try_emplace(node, getExpectedInputDTypes(node));
  return success();
}

LogicalResult cleave::interp::checkNodeCanRun(NodeOp node,
                                              ArrayRef<Tensor> inputs,
                                              ValidatedNodes &validated) {
  if (failed(validateOnce(node, validated)))
    return failure();
  StringRef op = node.getOpType();
  for (auto [i, v] : llvm::enumerate(node.getDataInputs()))
    if (!inputs[i].isValid() &&
        !(i == 0 && (op == "Assign" || op == "IsVariableInitialized")))
      return node.emitError() << "Node '" << node.getName()
                              << "': Attempting to use uninitialized value "
                              << renderProducer(v);
  const SmallVector<int32_t> &expected = validated.find(node)->second;
  for (auto [i, v] : llvm::enumerate(node.getDataInputs()))
    if (i < expected.size() && expected[i] && inputs[i].isValid() &&
        inputs[i].dtype() != expected[i])
      return node.emitError()
             << "Node '" << node.getName() << "': Input " << i << " of node "
             << node.getName() << " was passed " << dtypeName(inputs[i].dtype())
             << " from " << renderProducer(v)
             << (isa<OpResult>(v) && v.getDefiningOp<NodeOp>()
                     ? ":" + std::to_string(cast<OpResult>(v).getResultNumber())
                     : std::string())
             << " incompatible with expected " << dtypeName(expected[i]);
  return success();
}
