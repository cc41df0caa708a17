//===- Differentiator.h - one tf.gradients() invocation ---------*- C++ -*-===//
//
// Private to graph-gradient. Gradient.cpp walks the graph and sums
// gradients; GradientFunctions.cpp differentiates what calls library
// functions (calls, If/Case, While), generating gradient functions.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_DIFFERENTIATOR_H
#define CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_DIFFERENTIATOR_H

#include "GradientBuilder.h"

#include "cleave/Dialect/Graph/Transforms/Gradients.h"
#include "cleave/Dialect/Graph/Transforms/LoopFrames.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace cleave::graph::gradient {

/// The gradients reaching each output of each op, before aggregation.
using GradMap = DenseMap<Operation *, SmallVector<SmallVector<Value, 1>>>;

/// One tf.gradients() invocation: options, then run().
class Differentiator {
  friend FailureOr<std::string>
      cleave::graph::getOrCreateGradientFunction(NodeOp, FuncOp);

public:
  explicit Differentiator(const GradientOptions &options)
      : aggregationMethod(options.aggregationMethod),
        gateGradients(options.gateGradients),
        colocateGradientsWithOps(options.colocateGradientsWithOps),
        unconnectedGradients(options.unconnectedGradients),
        scopeName(options.scopeName),
        keepSparseResults(options.keepSparseResults) {}

  /// After run() with keepSparseResults: per x, its gradient's slices when
  /// it is sparse.
  SmallVector<std::optional<IndexedSlices>> sparseResults;

  FailureOr<SmallVector<Value>> run(Block &block, ArrayRef<Value> ys,
                                    ArrayRef<Value> xs,
                                    ArrayRef<Value> givenGradYs,
                                    ArrayRef<Value> stops);

private:
  LogicalResult defaultGradYs(GradientBuilder &b, ArrayRef<Value> ys,
                              ArrayRef<Value> given,
                              SmallVector<Value> &gradYs);
  /// Sums the gradients of each output of `op` (_AggregatedGrads).
  LogicalResult aggregate(GradientBuilder &b, NodeOp op, GradMap &grads);
  /// Sums `tensors` bucketed by device (_MultiDeviceAddN).
  FailureOr<Value> multiDeviceAddN(GradientBuilder &b, ArrayRef<Value> tensors,
                                   Location loc);
  LogicalResult gate(GradientBuilder &b, NodeOp op,
                     SmallVector<Value> &inGrads);
  /// The gradients of `op`'s inputs from those of its outputs: its rule,
  /// or the gradient of the call, conditional or loop it is.
  LogicalResult nodeGrad(GradientBuilder &b, NodeOp op, GradMap &grads,
                         SmallVector<Value> &inGrads);

  /// The v1 loops of the block run() differentiates. Each takes part in the
  /// walk as one node, its anchor: the loop's state in, its Exits out.
  SmallVector<LoopFrame> loops;
  DenseMap<Operation *, unsigned> loopOf;
  /// Exits named in stop_gradients.
  llvm::DenseSet<Operation *> stoppedExits;
  /// `op`, or the anchor of the loop it is part of.
  Operation *unitOf(Operation *op) const {
    auto it = loopOf.find(op);
    return it == loopOf.end() ? op : loops[it->second].getAnchor();
  }
  /// The loop whose anchor `unit` is.
  const LoopFrame *getLoop(Operation *unit) const {
    auto it = loopOf.find(unit);
    return it == loopOf.end() ? nullptr : &loops[it->second];
  }
  /// What a unit of the walk consumes and produces.
  SmallVector<Value> unitInputs(Operation *unit) const;
  SmallVector<Value> unitOutputs(Operation *unit) const;
  /// A v1 loop's gradient: the While gradient of its functional form.
  LogicalResult frameGrad(GradientBuilder &b, const LoopFrame &loop,
                          GradMap &grads, SmallVector<Value> &inGrads);

  std::string aggregationMethod;
  bool gateGradients, colocateGradientsWithOps;
  std::string unconnectedGradients, scopeName;
  bool keepSparseResults;
  ModuleOp module;
  /// Sparse gradients (IndexedSlices): their values, mapped to their
  /// indices and dense shape.
  DenseMap<Value, std::pair<Value, Value>> slices;

  /// `g` as a dense tensor: sparse gradients are summed into their shape
  /// (UnsortedSegmentSum), as converting an IndexedSlices does.
  FailureOr<Value> densify(GradientBuilder &b, Value g, Location loc);
  /// Sums gradients of which some are sparse: all as IndexedSlices, values
  /// and indices concatenated (_AggregateIndexedSlicesGradients).
  FailureOr<Value> concatSlices(GradientBuilder &b, ArrayRef<Value> grads,
                                Location loc);

  /// The library function `op` calls, if it is a call.
  FuncOp getCallee(NodeOp op);
  /// If / StatelessIf / Case / StatelessCase: the same conditional over the
  /// branches' gradient functions.
  LogicalResult ifGrad(GradientBuilder &b, NodeOp op, ArrayRef<Value> outGrads,
                       SmallVector<Value> &inGrads);
  /// While / StatelessWhile: count the iterations, then walk them back,
  /// recomputing each iteration's state and applying the body's gradient.
  LogicalResult whileGrad(GradientBuilder &b, NodeOp op,
                          ArrayRef<Value> outGrads,
                          SmallVector<Value> &inGrads);
  /// The gradient of a loop over `state` (cond and body library functions)
  /// from the gradients of its final state: a counting loop, then a
  /// backward loop replaying each iteration's state through the body's
  /// gradient function. `op` is the node it differentiates.
  LogicalResult loopGrad(GradientBuilder &b, NodeOp op, ValueRange state,
                         FuncAttr cond, FuncAttr body,
                         ArrayRef<Value> finalGrads,
                         SmallVector<Value> &inGrads);
  /// SymbolicGradient of a call, as TensorFlow's _SymGrad builds it.
  LogicalResult callGrad(GradientBuilder &b, NodeOp op, FuncOp callee,
                         ArrayRef<Value> outGrads, SmallVector<Value> &inGrads);
  /// The function the library names as `callee`'s gradient (a GradientDef
  /// entry), generated and registered when it names none.
  FailureOr<std::string> getGradientFunction(NodeOp call, FuncOp callee);
  FailureOr<FuncOp> generateGradientFunction(NodeOp call, FuncOp callee);
};

} // namespace cleave::graph::gradient

#endif // CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_DIFFERENTIATOR_H
