//===- FunctionalKernels.cpp - calls and functional control flow ----------===//
//
// If, Case, While and the call ops run library functions through
// KernelHost::call. A node whose op type names a function is a call too;
// its own attrs bind the function's attr placeholders.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;

/// Call-site attrs with placeholders of an enclosing function bound.
static DictionaryAttr bind(KernelContext &ctx, DictionaryAttr callSite) {
  if (!ctx.bindings || !callSite)
    return callSite;
  SmallVector<NamedAttribute> bound;
  for (NamedAttribute attr : callSite) {
    Attribute value = attr.getValue();
    if (auto placeholder = dyn_cast<PlaceholderAttr>(value))
      value = ctx.bindings.get(placeholder.getRef());
    if (value)
      bound.emplace_back(attr.getName(), value);
  }
  return DictionaryAttr::get(ctx.node.getContext(), bound);
}

/// The function a func-valued attr names.
static FailureOr<FuncAttr> funcAttr(KernelContext &ctx, StringRef name) {
  if (auto f = dyn_cast_or_null<FuncAttr>(ctx.getAttr(name)))
    return f;
  return ctx.error() << "attr '" << name << "' must name a function", failure();
}

static FailureOr<std::vector<Tensor>> callAttr(KernelContext &ctx, FuncAttr f,
                                               ArrayRef<Tensor> args) {
  return ctx.host.call(f.getName().getValue(), args, bind(ctx, f.getAttrs()),
                       ctx.node);
}

/// Sets the node's outputs to `results`, which must match them in number.
static LogicalResult setOutputs(KernelContext &ctx, StringRef function,
                                std::vector<Tensor> results) {
  if (results.size() != ctx.outputs.size())
    return ctx.error() << "function '" << function << "' returned "
                       << results.size() << " values, but the node has "
                       << ctx.outputs.size() << " outputs";
  ctx.outputs = std::move(results);
  return success();
}

/// A predicate as TensorFlow reads one: a scalar is true when non-zero (or,
/// for strings, non-empty); any other tensor when it has elements.
static bool isTrue(const Tensor &t) {
  if (t.rank() != 0)
    return t.numElements() > 0;
  if (t.dtype() == kString)
    return !t.strings()[0].empty();
  if (t.dtype() == kBool)
    return t.data<bool>()[0];
  return dtypeSize(t.dtype()) && t.getAsDouble(0) != 0;
}

static LogicalResult ifKernel(KernelContext &ctx) {
  FailureOr<FuncAttr> branch =
      funcAttr(ctx, isTrue(ctx.inputs[0]) ? "then_branch" : "else_branch");
  if (failed(branch))
    return failure();
  std::vector<Tensor> args(ctx.inputs.begin() + 1, ctx.inputs.end());
  auto results = callAttr(ctx, *branch, args);
  if (failed(results))
    return failure();
  return setOutputs(ctx, branch->getName().getValue(), std::move(*results));
}

/// Case: branch `branch_index`; an index out of range takes the last one.
static LogicalResult caseKernel(KernelContext &ctx) {
  auto branches = dyn_cast_or_null<ArrayAttr>(ctx.getAttr("branches"));
  if (!branches || branches.empty())
    return ctx.error() << "attr 'branches' must list at least one function";
  int64_t index = ctx.inputs[0].getAsInt(0);
  if (index < 0 || index >= int64_t(branches.size()))
    index = branches.size() - 1;
  auto branch = dyn_cast<FuncAttr>(branches[index]);
  if (!branch)
    return ctx.error() << "branch " << index << " is not a function";
  std::vector<Tensor> args(ctx.inputs.begin() + 1, ctx.inputs.end());
  auto results = callAttr(ctx, branch, args);
  if (failed(results))
    return failure();
  return setOutputs(ctx, branch.getName().getValue(), std::move(*results));
}

static LogicalResult whileKernel(KernelContext &ctx) {
  FailureOr<FuncAttr> cond = funcAttr(ctx, "cond"),
                      body = funcAttr(ctx, "body");
  if (failed(cond) || failed(body))
    return failure();
  std::vector<Tensor> state = ctx.inputs;
  for (int64_t iteration = 0;; ++iteration) {
    auto predicate = callAttr(ctx, *cond, state);
    if (failed(predicate))
      return failure();
    if (predicate->size() != 1)
      return ctx.error() << "the loop condition '" << cond->getName().getValue()
                         << "' must return one value, not "
                         << predicate->size();
    if (!isTrue((*predicate)[0]))
      break;
    if (iteration >= ctx.host.getMaxIterations())
      return ctx.error() << "loop did not finish within "
                         << ctx.host.getMaxIterations()
                         << " iterations (see --max-iterations)";
    auto next = callAttr(ctx, *body, state);
    if (failed(next))
      return failure();
    if (next->size() != state.size())
      return ctx.error() << "the loop body '" << body->getName().getValue()
                         << "' returned " << next->size() << " values for "
                         << state.size() << " loop variables";
    state = std::move(*next);
  }
  return setOutputs(ctx, body->getName().getValue(), std::move(state));
}

static LogicalResult partitionedCall(KernelContext &ctx) {
  FailureOr<FuncAttr> f = funcAttr(ctx, "f");
  if (failed(f))
    return failure();
  auto results = callAttr(ctx, *f, ctx.inputs);
  if (failed(results))
    return failure();
  return setOutputs(ctx, f->getName().getValue(), std::move(*results));
}
/// SymbolicGradient: the gradient function the library registers for `f`
/// (a GradientDef), called with f's inputs and the gradients of its
/// outputs.
static LogicalResult symbolicGradient(KernelContext &ctx) {
  FailureOr<FuncAttr> f = funcAttr(ctx, "f");
  if (failed(f))
    return failure();
  StringRef forward = f->getName().getValue();
  auto module = ctx.node->getParentOfType<ModuleOp>();
  std::string gradient;
  for (auto graph : module.getOps<graph::GraphOp>())
    if (DictionaryAttr library = graph.getLibraryAttr())
      if (auto entries = library.getAs<ArrayAttr>("gradient"))
        for (Attribute entry : entries) {
          auto dict = dyn_cast<DictionaryAttr>(entry);
          auto name =
              dict ? dict.getAs<StringAttr>("function_name") : StringAttr();
          auto func =
              dict ? dict.getAs<StringAttr>("gradient_func") : StringAttr();
          if (name && func && name.getValue() == forward)
            gradient = func.str();
        }
  if (gradient.empty()) {
    // As TensorFlow's runtime, differentiate the function on first use.
    auto function = module.lookupSymbol<graph::FuncOp>(forward);
    if (!function)
      return ctx.error() << "function '" << forward
                         << "' is not in the graph's library";
    FailureOr<std::string> generated =
        graph::getOrCreateGradientFunction(ctx.node, function);
    if (failed(generated))
      return failure();
    gradient = *generated;
  }
  auto results =
      ctx.host.call(gradient, ctx.inputs, bind(ctx, f->getAttrs()), ctx.node);
  if (failed(results))
    return failure();
  return setOutputs(ctx, gradient, std::move(*results));
}

LogicalResult cleave::interp::callFunctionNode(KernelContext &ctx) {
  StringRef function = ctx.node.getOpType();
  if (ctx.node.getTFBool("_XlaCompiledKernel").value_or(false)) {
    auto func = SymbolTable::lookupNearestSymbolFrom(
        ctx.node, StringAttr::get(ctx.node.getContext(), function));
    if (!func)
      return ctx.error() << "function '" << function
                         << "' is not in the graph's library";
    auto results = ctx.host.callCompiled(ctx.node, func, ctx.inputs);
    if (failed(results))
      return failure();
    if (*results)
      return setOutputs(ctx, function, std::move(**results));
  }
  auto results = ctx.host.call(function, ctx.inputs,
                               bind(ctx, ctx.node.getAttrs()), ctx.node);
  if (failed(results))
    return failure();
  return setOutputs(ctx, function, std::move(*results));
}

KernelTable cleave::interp::getFunctionalKernels() {
  return {
      {"SymbolicGradient", symbolicGradient},
      {"If", ifKernel},
      {"StatelessIf", ifKernel},
      {"Case", caseKernel},
      {"StatelessCase", caseKernel},
      {"While", whileKernel},
      {"StatelessWhile", whileKernel},
      {"PartitionedCall", partitionedCall},
      {"StatefulPartitionedCall", partitionedCall},
  };
}
