//===- GradientRules.cpp - the gradient rule table and helpers ------------===//

#include "OpTables.h"

#include <algorithm>

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ErrorHandling.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

GradAttr GradAttr::integer(llvm::StringRef name, int64_t v) {
  GradAttr a;
  a.name = name.str();
  a.kind = Int;
  a.i = v;
  return a;
}

GradAttr GradAttr::boolean(llvm::StringRef name, bool v) {
  GradAttr a;
  a.name = name.str();
  a.kind = Bool;
  a.b = v;
  return a;
}

GradAttr GradAttr::string(llvm::StringRef name, llvm::StringRef v) {
  GradAttr a;
  a.name = name.str();
  a.kind = String;
  a.s = v.str();
  return a;
}

GradAttr GradAttr::dtype(llvm::StringRef name, int32_t v) {
  GradAttr a;
  a.name = name.str();
  a.kind = Type;
  a.type = v;
  return a;
}

GradAttr GradAttr::intList(llvm::StringRef name, std::vector<int64_t> v) {
  GradAttr a;
  a.name = name.str();
  a.kind = IntList;
  a.ints = std::move(v);
  return a;
}

GradAttr GradAttr::real(llvm::StringRef name, double v) {
  GradAttr a;
  a.name = name.str();
  a.kind = Float;
  a.f = v;
  return a;
}

GradTensor GradientContext::op(llvm::StringRef opType,
                               llvm::ArrayRef<GradTensor> inputs,
                               llvm::ArrayRef<GradAttr> attrs,
                               llvm::StringRef name) {
  llvm::SmallVector<GradTensor> outputs = addNode(opType, inputs, attrs, name);
  return outputs.empty() ? GradTensor() : outputs.front();
}

GradTensor GradientContext::scalar(double value, int32_t dtype,
                                   llvm::StringRef name) {
  return addConst({value}, {}, dtype, name);
}

GradTensor GradientContext::intVector(llvm::ArrayRef<int64_t> values,
                                      llvm::StringRef name) {
  llvm::SmallVector<double> asDouble(values.begin(), values.end());
  return addConst(asDouble, {int64_t(values.size())}, grads::kInt32, name);
}

void GradientContext::setInputGrad(unsigned index, GradTensor grad) {
  if (index < inputGrads.size())
    inputGrads[index] = grad;
}

void GradientContext::setInputGradSlices(unsigned index, GradTensor values,
                                         GradTensor indices,
                                         GradTensor denseShape) {
  if (index >= inputGrads.size())
    return;
  inputGrads[index] = values;
  inputSlices[index] = {indices, denseShape};
}

grads::BroadcastArgs grads::broadcastArgs(GradientContext &ctx) {
  BroadcastArgs args;
  args.sx = ctx.op("Shape", {ctx.getInput(0)});
  args.sy = ctx.op("Shape", {ctx.getInput(1)});
  auto r = ctx.addNode("BroadcastGradientArgs", {args.sx, args.sy});
  args.rx = r[0];
  args.ry = r[1];
  return args;
}

GradTensor grads::sumToShape(GradientContext &ctx, GradTensor grad,
                             GradTensor axes, GradTensor shape) {
  GradTensor sum =
      ctx.op("Sum", {grad, axes}, {GradAttr::boolean("keep_dims", false)});
  return ctx.op("Reshape", {sum, shape});
}

namespace {
struct GradRegistry {
  llvm::StringMap<GradFn> rules;
  llvm::StringSet<> notDifferentiable;
};
} // namespace

static const GradRegistry &getRegistry() {
  static const GradRegistry *registry = [] {
    auto *r = new GradRegistry;
    // A rule lives in its op's family file, beside the signature.
    std::pair<OpFamily, GradFnTable> families[] = {
        {OpFamily::Math, getMathGradFns()},
        {OpFamily::NN, getNNGradFns()},
        {OpFamily::Array, getArrayGradFns()},
        {OpFamily::State, getStateGradFns()},
        {OpFamily::ControlFlow, getControlFlowGradFns()},
        {OpFamily::Host, getHostGradFns()},
        {OpFamily::TPU, getTPUGradFns()},
        {OpFamily::Data, getDataGradFns()}};
    for (const auto &[family, table] : families)
      for (const auto &[name, fn] : table) {
        const OpSpec *spec = lookupOp(name);
        if (!spec || spec->family != family ||
            !r->rules.try_emplace(name, fn).second)
          llvm::report_fatal_error(llvm::Twine("bad gradient table entry '") +
                                   name + "'");
      }
    for (llvm::StringRef name : getNotDifferentiableOps())
      r->notDifferentiable.insert(name);
    return r;
  }();
  return *registry;
}

GradFn cleave::ops::lookupGradFn(llvm::StringRef opType) {
  return getRegistry().rules.lookup(opType);
}

std::vector<std::string> cleave::ops::getOpsWithGradient() {
  std::vector<std::string> names;
  for (const auto &entry : getRegistry().rules)
    names.push_back(entry.getKey().str());
  std::sort(names.begin(), names.end());
  return names;
}

bool cleave::ops::isNotDifferentiable(llvm::StringRef opType) {
  return getRegistry().notDifferentiable.contains(opType);
}

bool cleave::ops::isDifferentiatedByPass(llvm::StringRef opType) {
  return llvm::is_contained({"If", "StatelessIf", "Case", "StatelessCase",
                             "While", "StatelessWhile", "PartitionedCall",
                             "StatefulPartitionedCall", "Enter", "RefEnter",
                             "Exit", "RefExit", "NextIteration", "LoopCond"},
                            opType);
}

std::vector<llvm::StringRef> cleave::ops::detail::getNotDifferentiableOps() {
  // ops.NotDifferentiable in TensorFlow's *_grad.py and op files.
  return {"Shape",
          "ShapeN",
          "Rank",
          "Size",
          "ZerosLike",
          "OnesLike",
          "BroadcastGradientArgs",
          "StopGradient",
          "Less",
          "LessEqual",
          "Greater",
          "GreaterEqual",
          "Equal",
          "NotEqual",
          "LogicalAnd",
          "LogicalOr",
          "LogicalNot",
          "ArgMax",
          "ArgMin",
          "Floor",
          "Ceil",
          "Rint",
          "Round",
          "IsNan",
          "IsInf",
          "IsFinite",
          "Sign",
          "Range",
          "RandomUniform",
          "RandomStandardNormal",
          "TruncatedNormal",
          "Const",
          "Placeholder",
          "PlaceholderWithDefault",
          "VariableV2",
          "VarHandleOp",
          "NoOp",
          "Where",
          "OneHot",
          "RandomUniformInt",
          "RandomShuffle",
          "StatelessRandomUniform",
          "StatelessRandomUniformV2",
          "StatelessRandomUniformInt",
          "All",
          "Any",
          "StatelessRandomUniformIntV2",
          "StatelessRandomNormal",
          "StatelessRandomNormalV2",
          "StatelessTruncatedNormal",
          "StatelessTruncatedNormalV2",
          "StatelessRandomGetKeyCounter",
          "StatelessRandomGetAlg",
          "StatelessRandomGetKeyCounterAlg",
          "ScalarSummary",
          "HistogramSummary",
          "MergeSummary",
          "IsVariableInitialized",
          "VarIsInitializedOp"};
}
