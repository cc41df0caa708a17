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
#include "mlir/IR/BuiltinOps.h"

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
        scopeName(options.scopeName) {}

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

  std::string aggregationMethod;
  bool gateGradients, colocateGradientsWithOps;
  std::string unconnectedGradients, scopeName;
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
  /// A library function `<base>` (made unique) with the given arguments,
  /// whose body `build` fills and whose results it returns.
  FailureOr<FuncOp> buildFunction(StringRef base, ArrayRef<Type> argTypes,
                                  function_ref<FailureOr<SmallVector<Value>>(
                                      OpBuilder &, ArrayRef<Value>, Location)>
                                      build,
                                  Location loc);
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
