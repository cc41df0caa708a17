//===- Interpreter.cpp - reference interpreter for graphs -----------------===//
//
// Dataflow execution: the nodes the fetches and targets need run in
// dependency order; a Switch makes its untaken output dead, deadness flows
// through data and control edges, and a Merge forwards its first live input,
// as in TensorFlow's executor.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "cleave/Ops/OpRegistry.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

std::optional<int32_t> KernelContext::getType(StringRef name) {
  if (auto type = dyn_cast_or_null<TypeAttr>(node.getTFAttr(name))) {
    int32_t dt = typeToDataType(type.getValue());
    if (dt >= 0)
      return dt;
  }
  return std::nullopt;
}

std::optional<int64_t> KernelContext::getInt(StringRef name) {
  auto i = dyn_cast_or_null<IntegerAttr>(node.getTFAttr(name));
  if (!i || i.getType().isInteger(1))
    return std::nullopt;
  return i.getInt();
}

std::optional<bool> KernelContext::getBool(StringRef name) {
  if (auto b = dyn_cast_or_null<BoolAttr>(node.getTFAttr(name)))
    return b.getValue();
  return std::nullopt;
}

std::optional<std::string> KernelContext::getString(StringRef name) {
  if (auto s = dyn_cast_or_null<StringAttr>(node.getTFAttr(name)))
    return s.str();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> KernelContext::getIntList(StringRef name) {
  auto list = dyn_cast_or_null<ArrayAttr>(node.getTFAttr(name));
  if (!list)
    return std::nullopt;
  std::vector<int64_t> values;
  for (Attribute a : list) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i)
      return std::nullopt;
    values.push_back(i.getInt());
  }
  return values;
}

FailureOr<Tensor> KernelContext::getTensor(StringRef name) {
  auto attr = dyn_cast_or_null<TensorAttr>(node.getTFAttr(name));
  if (!attr)
    return error() << "missing tensor attr '" << name << "'", failure();
  int32_t dt = typeToDataType(attr.getDtype());
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr.getValue());
  if (!dense || attr.getRaw())
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
    std::memcpy(t.raw() + i * size, raw.data() + (dense.isSplat() ? 0 : i * size),
                size);
  return t;
}

std::vector<int64_t> cleave::interp::toInts(const Tensor &t) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.numElements(); ++i)
    values.push_back(t.getAsInt(i));
  return values;
}

Kernel cleave::interp::lookupKernel(StringRef opType) {
  static const llvm::StringMap<Kernel> *table = [] {
    auto *map = new llvm::StringMap<Kernel>();
    for (const KernelTable &family :
         {getArrayKernels(), getMathKernels(), getNNKernels(),
          getStateKernels(), getRandomKernels()})
      for (const auto &[name, kernel] : family) {
        if (!ops::lookupOp(name) || !map->try_emplace(name, kernel).second)
          llvm::report_fatal_error(llvm::Twine("bad kernel table entry '") +
                                   name + "'");
      }
    return map;
  }();
  return table->lookup(opType);
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

Interpreter::Interpreter(ModuleOp module) : module(module) {}

namespace {
/// A computed output: a tensor, or dead (an untaken Switch branch).
struct Slot {
  Tensor value;
  bool dead = false;
};

/// Splits "node:port" (port 0 when absent).
std::pair<StringRef, unsigned> splitTensorName(StringRef name) {
  auto [head, tail] = name.rsplit(':');
  unsigned port;
  if (!tail.empty() && !head.empty() && !tail.getAsInteger(10, port))
    return {head, port};
  return {name, 0};
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + (ShapedType::isDynamic(shape[i])
                               ? std::string("?")
                               : std::to_string(shape[i]));
  return s + "]";
}

std::string renderProducer(Value v) {
  if (auto node = v.getDefiningOp<NodeOp>())
    return node.getName().str();
  return "<argument>";
}

bool isLoopOp(StringRef op) {
  return op == "Enter" || op == "Exit" || op == "NextIteration" ||
         op == "RefEnter" || op == "RefExit" || op == "RefNextIteration" ||
         op == "LoopCond";
}
} // namespace

FailureOr<std::vector<Tensor>>
Interpreter::run(const std::vector<std::pair<std::string, Tensor>> &feeds,
                 ArrayRef<std::string> fetches, ArrayRef<std::string> targets) {
  Location loc = module.getLoc();
  GraphOp graph;
  for (auto g : module.getOps<GraphOp>())
    graph = g;
  if (!graph)
    return emitError(loc, "the module has no graph.graph to run"), failure();
  llvm::StringMap<NodeOp> byName;
  for (auto node : graph.getBody().front().getOps<NodeOp>())
    byName[node.getName()] = node;

  // Resolve feeds and fetches.
  llvm::DenseMap<Value, Tensor> fed;
  for (const auto &[name, tensor] : feeds) {
    auto [nodeName, port] = splitTensorName(name);
    NodeOp node = byName.lookup(nodeName);
    if (!node || port >= node.getOutputs().size())
      return emitError(loc) << "cannot feed '" << name
                            << "': no such tensor in the graph",
             failure();
    Value v = node.getOutputs()[port];
    // A placeholder's declared shape, whether or not inference ran.
    Type declared = v.getType();
    if (auto shape = dyn_cast_or_null<ShapeAttr>(node.getTFAttr("shape")))
      if (auto type = dyn_cast<TensorType>(declared);
          type && node.getOpType().starts_with("Placeholder"))
        declared = getTensorType(type.getElementType(), shape);
    if (auto type = dyn_cast<TensorType>(declared)) {
      int32_t dt = typeToDataType(type.getElementType());
      if (dt > 0 && dt != tensor.dtype())
        return node.emitError() << "Node '" << node.getName()
                                << "': fed a " << dtypeName(tensor.dtype())
                                << " tensor, but the node produces "
                                << dtypeName(dt),
               failure();
      if (auto ranked = dyn_cast<RankedTensorType>(type)) {
        bool matches = ranked.getRank() == tensor.rank();
        for (int64_t d = 0; matches && d < ranked.getRank(); ++d)
          matches = ranked.isDynamicDim(d) ||
                    ranked.getDimSize(d) == tensor.shape()[d];
        if (!matches)
          return node.emitError()
                     << "Node '" << node.getName() << "': fed a tensor of shape "
                     << shapeString(tensor.shape())
                     << ", which does not match its shape "
                     << shapeString(ranked.getShape()),
                 failure();
      }
    }
    fed[v] = tensor;
  }
  SmallVector<Value> fetchValues;
  for (const std::string &name : fetches) {
    auto [nodeName, port] = splitTensorName(name);
    NodeOp node = byName.lookup(nodeName);
    if (!node)
      return emitError(loc) << "cannot fetch '" << name
                            << "': no node named '" << nodeName << "'",
             failure();
    if (port >= node.getOutputs().size())
      return emitError(loc) << "cannot fetch '" << name << "': node '"
                            << nodeName << "' has " << node.getOutputs().size()
                            << " outputs",
             failure();
    fetchValues.push_back(node.getOutputs()[port]);
  }
  SmallVector<NodeOp> roots;
  for (Value v : fetchValues)
    if (!fed.count(v))
      roots.push_back(v.getDefiningOp<NodeOp>());
  for (const std::string &name : targets) {
    NodeOp node = byName.lookup(name);
    if (!node)
      return emitError(loc) << "cannot run target '" << name
                            << "': no node named '" << name << "'",
             failure();
    roots.push_back(node);
  }

  // The nodes to run: everything the roots reach backwards, except through
  // fed tensors.
  llvm::DenseSet<Operation *> needed;
  SmallVector<NodeOp> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    NodeOp node = stack.pop_back_val();
    if (!needed.insert(node).second)
      continue;
    if (isLoopOp(node.getOpType()))
      return node.emitError() << "Node '" << node.getName()
                              << "': the interpreter does not run v1 loops ("
                              << node.getOpType() << ") yet",
             failure();
    for (Value input : node.getInputs())
      if (!fed.count(input))
        if (auto producer = input.getDefiningOp<NodeOp>())
          stack.push_back(producer);
  }

  // Run in dependency order (Kahn's algorithm over the needed nodes).
  llvm::DenseMap<Operation *, unsigned> pending;
  llvm::DenseMap<Operation *, SmallVector<NodeOp, 2>> consumers;
  SmallVector<NodeOp> ready;
  for (auto node : graph.getBody().front().getOps<NodeOp>()) {
    if (!needed.count(node))
      continue;
    unsigned count = 0;
    for (Value input : node.getInputs()) {
      if (fed.count(input))
        continue;
      if (auto producer = input.getDefiningOp<NodeOp>()) {
        ++count;
        consumers[producer].push_back(node);
      }
    }
    pending[node] = count;
    if (!count)
      ready.push_back(node);
  }
  llvm::DenseMap<Value, Slot> slots;
  llvm::DenseSet<Operation *> deadNodes;
  size_t executed = 0;
  // Pop from the front so that independent nodes run in file order.
  for (size_t next = 0; next < ready.size(); ++next) {
    NodeOp node = ready[next];
    ++executed;
    bool anyDeadData = false, anyDeadControl = false;
    std::vector<Tensor> inputs;
    std::vector<bool> inputDead;
    for (Value input : node.getInputs()) {
      bool isControl = isa<ControlType>(input.getType());
      if (isControl) {
        anyDeadControl |= deadNodes.count(input.getDefiningOp()) != 0;
        continue;
      }
      auto it = fed.find(input);
      Slot slot = it != fed.end() ? Slot{it->second, false} : slots[input];
      anyDeadData |= slot.dead;
      inputs.push_back(slot.value);
      inputDead.push_back(slot.dead);
    }
    bool isMerge = node.getOpType() == "Merge" || node.getOpType() == "RefMerge";
    bool dead = anyDeadControl ||
                (isMerge ? llvm::all_of(inputDead, [](bool d) { return d; })
                         : anyDeadData);
    if (dead) {
      deadNodes.insert(node);
      for (Value out : node.getOutputs())
        slots[out].dead = true;
    } else if (isMerge) {
      unsigned live = 0;
      while (inputDead[live])
        ++live;
      slots[node.getOutputs()[0]] = {inputs[live], false};
      Tensor index(kInt32, {});
      index.data<int32_t>()[0] = live;
      slots[node.getOutputs()[1]] = {index, false};
    } else if (node.getOpType() == "Switch" || node.getOpType() == "RefSwitch") {
      bool pred = inputs[1].numElements() == 1 && inputs[1].getAsInt(0) != 0;
      slots[node.getOutputs()[pred ? 1 : 0]] = {inputs[0], false};
      slots[node.getOutputs()[pred ? 0 : 1]].dead = true;
    } else {
      // An uninitialized ref variable may only be assigned to.
      StringRef op = node.getOpType();
      for (auto [i, input] : llvm::enumerate(node.getDataInputs()))
        if (!inputs[i].isValid() && !(i == 0 && (op == "Assign" ||
                                                 op == "IsVariableInitialized")))
          return node.emitError()
                     << "Node '" << node.getName()
                     << "': Attempting to use uninitialized value "
                     << renderProducer(input),
                 failure();
      Kernel kernel = lookupKernel(node.getOpType());
      if (!kernel)
        return node.emitError() << "Node '" << node.getName()
                                << "': no reference kernel for op '"
                                << node.getOpType() << "'",
               failure();
      KernelContext ctx(node, std::move(inputs), state);
      if (failed(kernel(ctx)))
        return failure();
      for (auto [out, value] : llvm::zip(node.getOutputs(), ctx.outputs))
        slots[out] = {value, false};
    }
    for (NodeOp consumer : consumers[node])
      if (--pending[consumer] == 0)
        ready.push_back(consumer);
  }
  if (executed != needed.size())
    return emitError(loc) << "the graph has a cycle among the nodes to run",
           failure();

  std::vector<Tensor> results;
  for (auto [i, v] : llvm::enumerate(fetchValues)) {
    auto it = fed.find(v);
    if (it != fed.end()) {
      results.push_back(it->second);
      continue;
    }
    const Slot &slot = slots[v];
    if (slot.dead)
      return emitError(loc) << "Retval[" << i << "] does not have value ('"
                            << fetches[i]
                            << "' is on an untaken Switch branch)",
             failure();
    results.push_back(slot.value);
  }
  return results;
}
