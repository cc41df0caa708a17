//===- FunctionalizeLoops.cpp - graph-functionalize-loops -----------------===//
//
// Each TensorFlow v1 while loop becomes a While node over the functions of
// its functional form (LoopFrames.h), as functionalize_control_flow does
// for loops: the loop's state in, the Exits' values out.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/LoopFrames.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace cleave::graph {
#define GEN_PASS_DEF_GRAPHFUNCTIONALIZELOOPSPASS
#include "cleave/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace cleave::graph

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {

class GraphFunctionalizeLoopsPass
    : public graph::impl::GraphFunctionalizeLoopsPassBase<
          GraphFunctionalizeLoopsPass> {
public:
  void runOnOperation() override;

private:
  /// Puts a While over `functional` in place of `loop`.
  LogicalResult replaceLoop(const LoopFrame &loop,
                            const FunctionalLoop &functional);
};

} // namespace

LogicalResult
GraphFunctionalizeLoopsPass::replaceLoop(const LoopFrame &loop,
                                         const FunctionalLoop &functional) {
  NodeOp loopCond = loop.loopCond;
  llvm::DenseSet<Operation *> members(loop.members.begin(), loop.members.end());
  // The Enters' control inputs from outside the loop wait for the While.
  SmallVector<Value> inputs = loop.getInputs(), controls;
  SmallVector<NodeOp> enters;
  for (LoopVariable v : loop.variables)
    enters.push_back(v.enter);
  llvm::append_range(enters, loop.invariants);
  for (NodeOp enter : enters)
    for (Value control : enter.getControlInputs())
      if (!members.contains(control.getDefiningOp()) &&
          !llvm::is_contained(controls, control))
        controls.push_back(control);

  MLIRContext *ctx = &getContext();
  OpBuilder builder(loopCond);
  auto funcAttr = [&](FuncOp f) {
    return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                         DictionaryAttr::get(ctx));
  };
  SmallVector<NamedAttribute> attrs{
      builder.getNamedAttr("cond", funcAttr(functional.cond)),
      builder.getNamedAttr("body", funcAttr(functional.body))};
  NodeOp firstEnter = loop.variables.front().enter;
  if (std::optional<int64_t> parallel =
          firstEnter.getTFInt("parallel_iterations"))
    attrs.push_back(builder.getNamedAttr("parallel_iterations",
                                         builder.getI64IntegerAttr(*parallel)));
  std::string name = loopCond.getName().str(), error;
  StringRef device = loopCond.getDevice().value_or("");
  FailureOr<NodeOp> whileNode =
      createRegisteredNode(builder, loopCond.getLoc(), "While", name, inputs,
                           controls, attrs, device, error);
  if (failed(whileNode))
    return nodeError(loopCond) << "graph-functionalize-loops: " << error;

  for (auto [i, v] : llvm::enumerate(loop.variables)) {
    NodeOp exit = v.exit;
    if (!exit)
      continue;
    exit.getOutputs()[0].replaceAllUsesWith(whileNode->getOutputs()[i]);
    exit.getControl().replaceAllUsesWith(whileNode->getControl());
  }
  // What is left of the loop is used only inside it.
  for (NodeOp member : loop.members)
    for (Operation *user : member->getUsers())
      if (!members.contains(user))
        return nodeError(cast<NodeOp>(user))
               << "graph-functionalize-loops: uses '" << member.getName()
               << "' of v1 loop '" << loop.name
               << "' from outside the loop other than through an Exit";
  for (NodeOp member : loop.members)
    member->dropAllReferences();
  for (NodeOp member : loop.members)
    member->erase();
  return success();
}

void GraphFunctionalizeLoopsPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Loop nodes are read by position: a malformed one is an error.
  if (failed(validateNodeDefs(module)))
    return signalPassFailure();
  // The graph's body and every function's, including the bodies made here
  // (the loops nested in a loop).
  SmallVector<Block *> work = getGraphBodies(module);
  while (!work.empty()) {
    Block *block = work.pop_back_val();
    FailureOr<SmallVector<LoopFrame>> loops = findLoopFrames(*block);
    if (failed(loops))
      return signalPassFailure();
    for (const LoopFrame &loop : *loops) {
      FailureOr<FunctionalLoop> functional = functionalizeLoop(loop, module);
      if (failed(functional) || failed(replaceLoop(loop, *functional)))
        return signalPassFailure();
      work.push_back(&functional->cond.getBody().front());
      work.push_back(&functional->body.getBody().front());
    }
  }
}
