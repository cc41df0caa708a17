//===- ConstantEvaluator.cpp - nodes computed at compile time -------------===//

#include "cleave/Kernels/ConstantEvaluator.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Runtime/Rendezvous.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;

ConstantEvaluator::ConstantEvaluator(ModuleOp module, int64_t maxIterations)
    : module(module), maxIterations(maxIterations),
      lock(std::make_unique<runtime::ExecutionLock>()),
      rendezvous(std::make_unique<runtime::Rendezvous>(*lock)) {}

ConstantEvaluator::~ConstantEvaluator() = default;

/// Ops that are not values to compute: an executor's control flow, and
/// what a run feeds.
static bool isControlFlowOrFeed(StringRef op) {
  return op == "Placeholder" || op == "PlaceholderWithDefault" ||
         op == "Switch" || op == "Merge" || op == "Enter" || op == "Exit" ||
         op == "NextIteration" || op == "LoopCond";
}

bool ConstantEvaluator::canEvaluate(NodeOp node) {
  const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
  if (!spec || spec->mayHaveSideEffects() || !hasKernel(spec->name) ||
      isControlFlowOrFeed(spec->name))
    return false;
  return callsOnlyEvaluableFunctions(node.getAttrs());
}

/// Whether every function `attr` names (If's branches, While's condition
/// and body, Case's branch list, a call's `f`) may run here.
bool ConstantEvaluator::callsOnlyEvaluableFunctions(Attribute attr) {
  if (auto f = dyn_cast<FuncAttr>(attr))
    return canEvaluateFunction(f.getName().getValue());
  if (auto list = dyn_cast<ArrayAttr>(attr))
    return llvm::all_of(
        list, [&](Attribute a) { return callsOnlyEvaluableFunctions(a); });
  if (auto dict = dyn_cast<DictionaryAttr>(attr))
    return llvm::all_of(dict, [&](NamedAttribute a) {
      return callsOnlyEvaluableFunctions(a.getValue());
    });
  return true;
}

bool ConstantEvaluator::canEvaluateFunction(StringRef name) {
  auto [it, inserted] = evaluableFunctions.try_emplace(name, false);
  if (!inserted)
    return it->second;
  auto func = module.lookupSymbol<FuncOp>(name);
  if (!func || func.getUncallable())
    return false;
  for (Operation &op : func.getBody().front()) {
    if (isa<ReturnOp>(op))
      continue;
    auto node = dyn_cast<NodeOp>(op);
    if (!node)
      return false;
    // A call by function name: its callee must qualify too.
    if (!ops::lookupOp(node.getOpType()) &&
        module.lookupSymbol<FuncOp>(node.getOpType())) {
      if (!canEvaluateFunction(node.getOpType()) ||
          !callsOnlyEvaluableFunctions(node.getAttrs()))
        return false;
      continue;
    }
    if (!canEvaluate(node))
      return false;
  }
  // Found again: the map may have grown since `it` was taken.
  evaluableFunctions[name] = true;
  return true;
}

FailureOr<std::vector<Tensor>>
ConstantEvaluator::evaluate(NodeOp node, std::vector<Tensor> inputs) {
  // The checks of a run: attrs, and inputs of the dtypes the kernel reads
  // (the lowering folds nodes whose constant inputs may be ill-typed).
  if (failed(checkNodeCanRun(node, inputs, validated)))
    return failure();
  return runKernel(*this, node, std::move(inputs), DictionaryAttr());
}

/// The nodes of `body` that `results` need, through data and control
/// edges, each after the nodes it reads.
static SmallVector<NodeOp> scheduleNeeded(ArrayRef<Value> results) {
  SmallVector<NodeOp> order;
  llvm::DenseSet<Operation *> seen;
  // Depth-first without recursion: a long chain must not exhaust the stack.
  SmallVector<std::pair<NodeOp, bool>> stack;
  for (Value v : results)
    if (auto node = v.getDefiningOp<NodeOp>())
      stack.push_back({node, false});
  while (!stack.empty()) {
    auto [node, inputsDone] = stack.pop_back_val();
    if (inputsDone) {
      order.push_back(node);
      continue;
    }
    if (!seen.insert(node).second)
      continue;
    stack.push_back({node, true});
    for (Value input : node->getOperands())
      if (auto producer = input.getDefiningOp<NodeOp>())
        if (!seen.count(producer))
          stack.push_back({producer, false});
  }
  return order;
}

FailureOr<std::vector<Tensor>> ConstantEvaluator::call(StringRef function,
                                                       ArrayRef<Tensor> args,
                                                       DictionaryAttr bindings,
                                                       Operation *caller) {
  if (!canEvaluateFunction(function)) {
    auto diag = caller->emitError();
    if (auto node = dyn_cast<NodeOp>(caller))
      diag << "Node '" << node.getName() << "': ";
    return diag << "function '" << function
                << "' cannot be computed at compile time (it holds state or "
                   "v1 control flow)",
           failure();
  }
  llvm::DenseMap<Value, Tensor> values;
  FailureOr<Block *> body =
      enterFunction(module, function, args, caller, callDepth, values);
  if (failed(body))
    return failure();

  auto ret = cast<ReturnOp>((*body)->getTerminator());
  SmallVector<Value> returned(ret.getOperands());
  ++callDepth;
  auto leave = llvm::make_scope_exit([&] { --callDepth; });
  for (NodeOp node : scheduleNeeded(returned)) {
    std::vector<Tensor> inputs;
    for (Value v : node.getDataInputs())
      inputs.push_back(values.lookup(v));
    if (failed(checkNodeCanRun(node, inputs, validated)))
      return failure();
    FailureOr<std::vector<Tensor>> outputs =
        runKernel(*this, node, std::move(inputs), bindings);
    if (failed(outputs))
      return failure();
    for (auto [result, value] : llvm::zip(node.getOutputs(), *outputs))
      values[result] = std::move(value);
  }
  std::vector<Tensor> results;
  for (Value v : returned)
    if (!isa<ControlType>(v.getType()))
      results.push_back(values.lookup(v));
  return results;
}
