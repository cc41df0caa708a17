//===- FunctionalOps.cpp - function call and v2 control flow signatures ---===//
//
// Ops from TensorFlow's functional_ops.cc (calls, If/While/Case) and
// function_ops.cc (_Arg/_Retval). The stateful variants are SetIsStateful()
// in TensorFlow; so are _Arg and _Retval, to keep them from being folded.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

static OpTableEntry ifOp(const char *name, bool isStateful) {
  return {name,
          {"cond: Tcond", "input: Tin"},
          {"output: Tout"},
          {"Tcond: type", "Tin: list(type) >= 0", "Tout: list(type) >= 0",
           "then_branch: func", "else_branch: func",
           "output_shapes: list(shape) = []"},
          isStateful};
}

static OpTableEntry whileOp(const char *name, bool isStateful) {
  return {name,
          {"input: T"},
          {"output: T"},
          {"T: list(type) >= 0", "cond: func", "body: func",
           "output_shapes: list(shape) = []", "parallel_iterations: int = 10"},
          isStateful};
}

static OpTableEntry caseOp(const char *name, bool isStateful) {
  return {name,
          {"branch_index: int32", "input: Tin"},
          {"output: Tout"},
          {"Tin: list(type) >= 0", "Tout: list(type) >= 0",
           "branches: list(func) >= 1", "output_shapes: list(shape) = []"},
          isStateful};
}

static OpTableEntry partitionedCall(const char *name, bool isStateful) {
  return {name,
          {"args: Tin"},
          {"output: Tout"},
          {"Tin: list(type) >= 0", "Tout: list(type) >= 0", "f: func",
           "config: string = ''", "config_proto: string = ''",
           "executor_type: string = ''"},
          isStateful};
}

OpTable cleave::ops::detail::getFunctionalOps() {
  return {
      {"_Arg",
       {},
       {"output: T"},
       {"T: type", "index: int >= 0"},
       /*isStateful=*/true},
      {"_Retval",
       {"input: T"},
       {},
       {"T: type", "index: int >= 0"},
       /*isStateful=*/true},

      ifOp("If", /*isStateful=*/true),
      ifOp("StatelessIf", /*isStateful=*/false),
      whileOp("While", /*isStateful=*/true),
      whileOp("StatelessWhile", /*isStateful=*/false),
      caseOp("Case", /*isStateful=*/true),
      caseOp("StatelessCase", /*isStateful=*/false),
      {"For",
       {"start: int32", "limit: int32", "delta: int32", "input: T"},
       {"output: T"},
       {"T: list(type) >= 0", "body: func"}},

      partitionedCall("PartitionedCall", /*isStateful=*/false),
      partitionedCall("StatefulPartitionedCall", /*isStateful=*/true),
      {"RemoteCall",
       {"target: string", "args: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 1", "Tout: list(type) >= 1", "f: func"},
       /*isStateful=*/true},
      {"SymbolicGradient",
       {"input: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 1", "Tout: list(type) >= 1", "f: func"}},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// The shapes every one of `functions` agrees on, dim by dim.
static std::optional<llvm::SmallVector<Shape>>
joinResults(InferenceContext &ctx, llvm::ArrayRef<llvm::StringRef> funcAttrs) {
  std::optional<llvm::SmallVector<Shape>> joined;
  for (llvm::StringRef attr : funcAttrs) {
    auto shapes = ctx.getFunctionResultShapes(attr, /*firstArg=*/1);
    if (!shapes || (joined && shapes->size() != joined->size()))
      return std::nullopt;
    if (!joined) {
      joined = shapes;
      continue;
    }
    for (auto [mine, theirs] : llvm::zip(*joined, *shapes))
      mine = relaxShapes(mine, theirs);
  }
  return joined;
}

static void setOutputs(InferenceContext &ctx, llvm::ArrayRef<Shape> shapes) {
  for (unsigned i = 0; i < ctx.getNumOutputs() && i < shapes.size(); ++i)
    ctx.setOutput(i, shapes[i]);
}

/// If: output_shapes, or what both branches return.
static std::string ifShape(InferenceContext &ctx) {
  auto declared = ctx.getShapeListAttr("output_shapes");
  if (declared && !declared->empty())
    return shapes::fromShapeListAttr(ctx, "output_shapes");
  if (auto joined = joinResults(ctx, {"then_branch", "else_branch"}))
    setOutputs(ctx, *joined);
  return "";
}

/// While: output_shapes, or else the loop variables' shapes: TensorFlow
/// requires the body to keep them unless output_shapes relaxes them.
static std::string whileShape(InferenceContext &ctx) {
  auto declared = ctx.getShapeListAttr("output_shapes");
  if (declared && !declared->empty())
    return shapes::fromShapeListAttr(ctx, "output_shapes");
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, ctx.getInputShape(i));
  return "";
}

/// Calls: what the function returns.
static std::string callShape(InferenceContext &ctx) {
  if (auto results = ctx.getFunctionResultShapes("f", /*firstArg=*/0))
    setOutputs(ctx, *results);
  return "";
}

static std::string caseShape(InferenceContext &ctx) {
  return shapes::fromShapeListAttr(ctx, "output_shapes");
}

ShapeFnTable cleave::ops::detail::getFunctionalShapeFns() {
  return {
      {"If", ifShape},
      {"StatelessIf", ifShape},
      {"While", whileShape},
      {"StatelessWhile", whileShape},
      {"Case", caseShape},
      {"StatelessCase", caseShape},
      {"PartitionedCall", callShape},
      {"StatefulPartitionedCall", callShape},
  };
}
