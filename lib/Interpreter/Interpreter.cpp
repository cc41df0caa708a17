//===- Interpreter.cpp - reference interpreter for graphs -----------------===//
//
// Dataflow execution: the nodes the fetches and targets need run in
// dependency order; a Switch makes its untaken output dead, deadness flows
// through data and control edges, and a Merge forwards its first live input,
// as in TensorFlow's executor.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "cleave/Dialect/Graph/Transforms/Replication.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Translate/NodeDefUtil.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstring>
#include <new>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

Attribute KernelContext::getAttr(StringRef name) {
  return getNodeAttrOrDefault(node, name, bindings);
}
std::optional<int32_t> KernelContext::getType(StringRef name) {
  return attrAsDataType(getAttr(name));
}
std::optional<int64_t> KernelContext::getInt(StringRef name) {
  return attrAsInt(getAttr(name));
}
std::optional<bool> KernelContext::getBool(StringRef name) {
  return attrAsBool(getAttr(name));
}
std::optional<double> KernelContext::getFloat(StringRef name) {
  return attrAsFloat(getAttr(name));
}
std::optional<std::string> KernelContext::getString(StringRef name) {
  return attrAsString(getAttr(name));
}
std::optional<std::vector<int64_t>> KernelContext::getIntList(StringRef name) {
  return attrAsIntList(getAttr(name));
}

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

std::vector<int64_t>
cleave::interp::stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Kernel cleave::interp::lookupKernel(StringRef opType) {
  static const llvm::StringMap<Kernel> *table = [] {
    auto *map = new llvm::StringMap<Kernel>();
    for (const KernelTable &family :
         {getArrayKernels(), getMathKernels(), getNNKernels(),
          getStateKernels(), getRandomKernels(), getSliceKernels(),
          getHostKernels(), getFunctionalKernels(), getDataKernels(),
          getReplicationKernels()})
      for (const auto &[name, kernel] : family) {
        if (!ops::lookupOp(name) || !map->try_emplace(name, kernel).second)
          llvm::report_fatal_error(llvm::Twine("bad kernel table entry '") +
                                   name + "'");
      }
    return map;
  }();
  return table->lookup(opType);
}

bool cleave::interp::hasKernel(StringRef opType) {
  // Merge and Switch are the executor's own.
  return lookupKernel(opType) || opType == "Merge" || opType == "RefMerge" ||
         opType == "Switch" || opType == "RefSwitch";
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

std::string renderProducer(Value v) {
  if (auto node = v.getDefiningOp<NodeOp>())
    return node.getName().str();
  return "<argument>";
}

} // namespace

namespace {
/// Tagged-token dataflow, as TensorFlow's executor: every value lives in a
/// frame (the root, or one iteration of a loop entered through Enter), and a
/// node runs once per frame in which its inputs arrive. Enter moves a value
/// into iteration 0 of a child frame (constant Enters into every iteration),
/// NextIteration into the next iteration, Exit back to the parent frame.
/// Dead values stop at NextIteration and Exit, which is how loops end.
class Executor {
public:
  static constexpr unsigned kRootFrame = 0;

  Executor(Interpreter &interpreter, DictionaryAttr bindings,
           const llvm::DenseMap<Value, Tensor> &fed,
           const llvm::DenseSet<Operation *> &needed)
      : interpreter(interpreter), bindings(bindings), fed(fed), needed(needed),
        maxIterations(interpreter.getMaxIterations()) {
    frames.push_back({kRootFrame, "", 0});
  }

  unsigned countRequiredInputs(NodeOp node) {
    unsigned count = 0;
    for (Value input : node.getInputs())
      if (!fed.count(input) && input.getDefiningOp<NodeOp>())
        ++count;
    return count;
  }

  void schedule(NodeOp node, unsigned frame) { ready.push_back({node, frame}); }

  const Slot *lookup(Value v, unsigned frame) const {
    auto it = values.find({v, frame});
    return it == values.end() ? nullptr : &it->second;
  }

  /// Whether `node` ran in the root frame.
  bool ranInRoot(NodeOp node) const { return rootRuns.count(node); }

  LogicalResult drain() {
    for (size_t next = 0; next < ready.size(); ++next)
      if (failed(execute(ready[next].first, ready[next].second)))
        return failure();
    return success();
  }

private:
  struct Frame {
    unsigned parent;
    std::string name;
    int64_t iteration;
  };
  struct Pending {
    unsigned arrived = 0, dead = 0;
    bool fired = false;
  };

  /// The frame for `iteration` of loop `name` entered from `parent`.
  unsigned getFrame(unsigned parent, std::string name, int64_t iteration) {
    // `name` is a copy: callers pass names stored in `frames`, which grows.
    auto key = std::make_tuple(parent, name, iteration);
    auto [it, inserted] = frameIds.try_emplace(key, frames.size());
    if (inserted) {
      frames.push_back({parent, name, iteration});
      iterations[{parent, name}].push_back(it->second);
      // Loop invariants (constant Enters) are visible in every iteration.
      for (auto &[value, slot] : invariants[{parent, name}])
        deliver(value, it->second, slot);
    }
    return it->second;
  }

  /// Makes `slot` the value of `v` in `frame` and wakes its consumers.
  void deliver(Value v, unsigned frame, const Slot &slot) {
    values[{v, frame}] = slot;
    for (Operation *user : v.getUsers()) {
      auto consumer = dyn_cast<NodeOp>(user);
      if (!consumer || !needed.count(consumer))
        continue;
      // A value used twice by one node arrives twice.
      for (Value input : consumer.getInputs()) {
        if (input != v)
          continue;
        Pending &p = pending[{consumer, frame}];
        ++p.arrived;
        p.dead += slot.dead;
        if (p.fired)
          continue;
        bool isMerge = consumer.getOpType() == "Merge" ||
                       consumer.getOpType() == "RefMerge";
        unsigned required = countRequiredInputs(consumer);
        if ((isMerge && (!slot.dead || p.dead == required)) ||
            (!isMerge && p.arrived == required)) {
          p.fired = true;
          schedule(consumer, frame);
        }
      }
    }
  }

  /// The input's value in `frame`: fed, or delivered.
  Slot input(Value v, unsigned frame) {
    if (auto it = fed.find(v); it != fed.end())
      return {it->second, false};
    if (auto it = values.find({v, frame}); it != values.end())
      return it->second;
    if (isa<BlockArgument>(v)) // a function's control argument
      return {Tensor(), false};
    return {Tensor(), true}; // a Merge input that has not arrived
  }

  LogicalResult execute(NodeOp node, unsigned frame) {
    StringRef op = node.getOpType();
    if (frame == kRootFrame)
      rootRuns.insert(node);
    bool isMerge = op == "Merge" || op == "RefMerge";
    bool deadControl = false, deadData = false, allDead = true;
    std::vector<Tensor> inputs;
    std::vector<bool> inputDead;
    for (Value v : node.getInputs()) {
      Slot slot = input(v, frame);
      if (isa<ControlType>(v.getType())) {
        deadControl |= slot.dead;
        continue;
      }
      deadData |= slot.dead;
      allDead &= slot.dead;
      inputs.push_back(slot.value);
      inputDead.push_back(slot.dead);
    }
    bool dead = deadControl || (isMerge ? allDead : deadData);
    SmallVector<Slot, 2> outputs(node.getOutputs().size());
    if (dead) {
      for (Slot &out : outputs)
        out.dead = true;
    } else if (isMerge) {
      unsigned live = 0;
      while (inputDead[live])
        ++live;
      Tensor index(kInt32, {});
      index.data<int32_t>()[0] = live;
      outputs[0] = {inputs[live], false};
      outputs[1] = {index, false};
    } else if (op == "Switch" || op == "RefSwitch") {
      bool pred = inputs[1].numElements() == 1 && inputs[1].getAsInt(0) != 0;
      outputs[pred ? 1 : 0] = {inputs[0], false};
      outputs[pred ? 0 : 1].dead = true;
    } else {
      // An uninitialized ref variable may only be assigned to.
      for (auto [i, v] : llvm::enumerate(node.getDataInputs()))
        if (!inputs[i].isValid() &&
            !(i == 0 && (op == "Assign" || op == "IsVariableInitialized")))
          return node.emitError()
                 << "Node '" << node.getName()
                 << "': Attempting to use uninitialized value "
                 << renderProducer(v);
      if (validated.insert(node).second && failed(validateNodeAttrs(node)))
        return failure();
      Kernel kernel = lookupKernel(op);
      if (!kernel && SymbolTable::lookupNearestSymbolFrom(
                         node, StringAttr::get(node.getContext(), op)))
        kernel = callFunctionNode;
      if (!kernel)
        return node.emitError() << "Node '" << node.getName()
                                << "': no reference kernel for op '" << op
                                << "'";
      KernelContext ctx(node, std::move(inputs), interpreter, bindings);
      // A tensor too large for memory is the node's error, as TensorFlow's
      // ResourceExhausted, not the end of the process.
      LogicalResult ran = failure();
      try {
        ran = kernel(ctx);
      } catch (const std::bad_alloc &) {
        return node.emitError() << "Node '" << node.getName()
                                << "': OOM when allocating a tensor for op '"
                                << op << "'";
      }
      if (failed(ran))
        return failure();
      for (auto [out, value] : llvm::zip(outputs, ctx.outputs))
        out = {value, false};
    }

    // Where the outputs go.
    unsigned target = frame;
    if (op == "Enter" || op == "RefEnter") {
      auto frameName = dyn_cast_or_null<StringAttr>(node.getTFAttr("frame_name"));
      std::string name = frameName ? frameName.str() : "";
      auto constant = dyn_cast_or_null<BoolAttr>(node.getTFAttr("is_constant"));
      if (constant && constant.getValue()) {
        // Into every iteration, present and future.
        Slot control{Tensor(), outputs[0].dead};
        for (unsigned iter : iterations[{frame, name}]) {
          deliver(node.getOutputs()[0], iter, outputs[0]);
          deliver(node.getControl(), iter, control);
        }
        auto &frameInvariants = invariants[{frame, name}];
        frameInvariants.push_back({node.getOutputs()[0], outputs[0]});
        frameInvariants.push_back({node.getControl(), control});
        getFrame(frame, name, 0); // delivers them if iteration 0 is new
        return success();
      }
      target = getFrame(frame, name, 0);
    } else if (op == "NextIteration" || op == "RefNextIteration") {
      if (outputs[0].dead)
        return success(); // the loop ends here
      Frame f = frames[frame]; // a copy: getFrame may grow `frames`
      if (f.iteration + 1 > maxIterations)
        return node.emitError()
               << "Node '" << node.getName() << "': loop '" << f.name
               << "' did not finish within " << maxIterations
               << " iterations (see --max-iterations)";
      target = getFrame(f.parent, f.name, f.iteration + 1);
    } else if (op == "Exit" || op == "RefExit") {
      if (outputs[0].dead)
        return success(); // only the last iteration's value leaves
      target = frames[frame].parent;
    }
    for (auto [v, slot] : llvm::zip(node.getOutputs(), outputs))
      deliver(v, target, slot);
    // Control successors wait on the node's token in the target frame.
    deliver(node.getControl(), target, Slot{Tensor(), dead});
    return success();
  }

  Interpreter &interpreter;
  DictionaryAttr bindings;
  const llvm::DenseMap<Value, Tensor> &fed;
  const llvm::DenseSet<Operation *> &needed;
  int64_t maxIterations;
  std::vector<Frame> frames;
  std::map<std::tuple<unsigned, std::string, int64_t>, unsigned> frameIds;
  std::map<std::pair<unsigned, std::string>, std::vector<unsigned>> iterations;
  std::map<std::pair<unsigned, std::string>,
           std::vector<std::pair<Value, Slot>>>
      invariants;
  llvm::DenseMap<std::pair<Value, unsigned>, Slot> values;
  llvm::DenseMap<std::pair<Operation *, unsigned>, Pending> pending;
  std::vector<std::pair<NodeOp, unsigned>> ready;
  llvm::DenseSet<Operation *> rootRuns;
  llvm::DenseSet<Operation *> validated;
};
} // namespace

namespace {
/// Runs the nodes of `body` that `roots` need (with `fed` values given)
/// and returns `fetchValues`. The roots from `firstTarget` on are targets:
/// each must run. `fetchNames` name the fetches in messages.
FailureOr<std::vector<Tensor>>
runBlock(Interpreter &interpreter, Block &body,
         const llvm::DenseMap<Value, Tensor> &fed, ArrayRef<Value> fetchValues,
         ArrayRef<std::string> fetchNames, ArrayRef<NodeOp> roots,
         size_t firstTarget, DictionaryAttr bindings, Location loc) {
  // The nodes to run: everything the roots reach backwards, except through
  // fed tensors.
  llvm::DenseSet<Operation *> needed;
  SmallVector<NodeOp> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    NodeOp node = stack.pop_back_val();
    if (!needed.insert(node).second)
      continue;
    for (Value input : node.getInputs())
      if (!fed.count(input))
        if (auto producer = input.getDefiningOp<NodeOp>())
          stack.push_back(producer);
  }

  Executor executor(interpreter, bindings, fed, needed);
  for (auto node : body.getOps<NodeOp>())
    if (needed.count(node) && executor.countRequiredInputs(node) == 0)
      executor.schedule(node, Executor::kRootFrame);
  if (failed(executor.drain()))
    return failure();
  // An input that never arrives (a cycle that is not a loop, or a node in a
  // loop body fed from outside the loop without an Enter) stalls a node.
  const char *stalled = "one of its inputs never arrived (a cycle that is "
                        "not a loop, or a loop body node fed from outside "
                        "the loop without an Enter)";
  for (NodeOp target : roots.drop_front(firstTarget))
    if (!executor.ranInRoot(target))
      return target.emitError()
                 << "Node '" << target.getName() << "' never ran: " << stalled,
             failure();

  std::vector<Tensor> results;
  for (auto [i, v] : llvm::enumerate(fetchValues)) {
    auto it = fed.find(v);
    if (it != fed.end()) {
      results.push_back(it->second);
      continue;
    }
    const Slot *slot = executor.lookup(v, Executor::kRootFrame);
    if (!slot)
      return emitError(loc) << "'" << fetchNames[i]
                            << "' was never computed: " << stalled,
             failure();
    if (slot->dead)
      return emitError(loc) << "Retval[" << i << "] does not have value ('"
                            << fetchNames[i]
                            << "' is on an untaken Switch branch)",
             failure();
    results.push_back(slot->value);
  }
  return results;
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
  for (Operation &op : graph.getBody().front()) {
    auto node = dyn_cast<NodeOp>(op);
    if (!node)
      return op.emitError() << "the interpreter runs flat graphs; '"
                            << op.getName()
                            << "' holds a region (export the graph to a "
                               "GraphDef to flatten it)",
             failure();
    byName[node.getName()] = node;
  }

  // Resolve feeds and fetches.
  llvm::DenseMap<Value, Tensor> fed;
  for (const auto &[name, tensor] : feeds) {
    auto [nodeName, port] = splitTensorName(name);
    NodeOp node = byName.lookup(nodeName);
    if (!node || port >= node.getOutputs().size())
      return emitError(loc) << "cannot feed '" << name
                            << "': no such tensor in the graph",
             failure();
    if (auto error = getReplicationFeedError(node, port))
      return node.emitError() << *error, failure();
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
    if (auto error = getReplicationFetchError(node))
      return node.emitError() << *error, failure();
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
    if (auto error = getReplicationFetchError(node))
      return node.emitError() << *error, failure();
    roots.push_back(node);
  }

  SmallVector<std::string> fetchNames(fetches.begin(), fetches.end());
  FailureOr<std::vector<Tensor>> results =
      runBlock(*this, graph.getBody().front(), fed, fetchValues, fetchNames,
               roots, roots.size() - targets.size(), DictionaryAttr(), loc);
  if (failed(results))
    return failure();
  // A ref variable fetched before anything assigned it has no value.
  for (auto [value, tensor, name] :
       llvm::zip(fetchValues, *results, fetchNames))
    if (!tensor.isValid()) {
      auto node = value.getDefiningOp<NodeOp>();
      return emitError(node ? node.getLoc() : loc)
                 << "Node '" << (node ? node.getName() : StringRef(name))
                 << "': Attempting to use uninitialized value " << name,
             failure();
    }
  return results;
}

FailureOr<std::vector<Tensor>>
Interpreter::call(StringRef function, ArrayRef<Tensor> args,
                  DictionaryAttr bindings, Operation *caller) {
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
  if (callDepth >= kMaxCallDepth)
    return callerError() << "calls nest deeper than " << kMaxCallDepth
                         << " (unbounded recursion through '" << function
                         << "'?)",
           failure();

  Block &body = func.getBody().front();
  llvm::DenseMap<Value, Tensor> fed;
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
      fed[arg] = args[numData];
    }
    ++numData;
  }
  if (numData != args.size())
    return callerError() << "function '" << function << "' takes " << numData
                         << " arguments, but was called with " << args.size(),
           failure();

  // What runs: the producers of the results and control outputs, and, as in
  // TensorFlow's function runtime, every stateful node.
  ReturnOp ret = func.getReturnOp();
  SmallVector<Value> results;
  SmallVector<std::string> names;
  SmallVector<NodeOp> roots;
  for (Value v : ret.getOperands()) {
    if (!isa<ControlType>(v.getType())) {
      results.push_back(v);
      names.push_back(function.str() + " result " +
                      std::to_string(results.size() - 1));
    }
    if (auto producer = v.getDefiningOp<NodeOp>())
      roots.push_back(producer);
  }
  for (auto node : body.getOps<NodeOp>()) {
    const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
    if ((spec && spec->isStateful) ||
        module.lookupSymbol<FuncOp>(node.getOpType()))
      roots.push_back(node);
  }
  ++callDepth;
  auto outputs = runBlock(*this, body, fed, results, names, roots,
                          roots.size(), bindings, caller->getLoc());
  --callDepth;
  return outputs;
}

FailureOr<std::vector<Tensor>>
Interpreter::evaluate(Operation *op, std::vector<Tensor> inputs) {
  auto node = cast<NodeOp>(op);
  if (failed(validateNodeAttrs(node)))
    return failure();
  Kernel kernel = lookupKernel(node.getOpType());
  if (!kernel)
    return node.emitError() << "Node '" << node.getName()
                            << "': no reference kernel for op '"
                            << node.getOpType() << "'",
           failure();
  KernelContext ctx(node, std::move(inputs), *this, DictionaryAttr());
  if (failed(kernel(ctx)))
    return failure();
  return std::move(ctx.outputs);
}
