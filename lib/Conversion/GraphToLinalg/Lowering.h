//===- Lowering.h - per-node lowering context -------------------*- C++ -*-===//
//
// Private to CleaveGraphToLinalg. A lowering turns one graph node into
// upstream ops at the builder's insertion point: it reads its inputs (static
// tensors, with their values when known at compile time) and sets its
// outputs. Each family file returns its lowerings in a table, as lib/Ops
// and lib/Kernels do for signatures and kernels.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_CONVERSION_GRAPHTOLINALG_LOWERING_H
#define CLEAVE_LIB_CONVERSION_GRAPHTOLINALG_LOWERING_H

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Ops/ElementwiseOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <deque>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace cleave::conversion {

/// A graph value after lowering: a static tensor and its TensorFlow dtype,
/// and its elements when they are known at compile time. A ref or resource
/// value names its variable instead.
struct LoweredValue {
  mlir::Value tensor;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  std::optional<cleave::Tensor> constant;
  std::string variable;

  /// A TensorList (a variant scalar) in compiled code is a buffer:
  /// `tensor` holds `capacity` items of a static element shape, the first
  /// `length` of which are in the list (ListLowerings.cpp).
  struct List {
    int32_t elementDType = 0;
    std::vector<int64_t> elementShape;
    int64_t capacity = 0;
    /// Lists made by TensorListReserve or TensorListFromTensor, until
    /// something pushes or pops: their length is their capacity.
    bool fixedLength = true;
    /// The length, an i64 (null while fixedLength).
    mlir::Value length;
  };
  std::optional<List> list;
};

class FunctionLowering;

/// What a lowering sees of its node.
class NodeLowering : public NodeAttrReader {
public:
  NodeLowering(FunctionLowering &function, graph::NodeOp node,
               mlir::OpBuilder &builder);

  graph::NodeOp node;
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// "Node '<name>': ..." on the node.
  mlir::InFlightDiagnostic error();

  /// The module being built, for declarations of runtime functions (the
  /// insertion point may be in a region not attached yet, such as a branch
  /// of an scf.if being built).
  mlir::ModuleOp getTargetModule();

  unsigned getNumInputs() const { return inputs.size(); }
  const LoweredValue &input(unsigned i) const { return *inputs[i]; }
  /// Input i as a tensor (constants are materialized on first use). An
  /// input that has none (a resource handle) is an error on the node, and
  /// the lowering fails after it returns (hasFailedInput).
  mlir::Value tensor(unsigned i);
  bool hasFailedInput() const { return inputFailed; }
  int32_t dtype(unsigned i) const { return inputs[i]->dtype; }
  const std::vector<int64_t> &shape(unsigned i) const {
    return inputs[i]->shape;
  }
  /// Input i's elements as integers; fails, as XLA does, when the input is
  /// not a compile-time constant.
  mlir::FailureOr<std::vector<int64_t>> constantInts(unsigned i);

  /// Output i's shape as the op's shape function inferred it from the
  /// static input shapes and constant inputs; nullopt where it could not.
  std::optional<std::vector<int64_t>> outputShape(unsigned i) const;

  /// Fails unless every one of `inputs` is a compile-time constant. Each
  /// one that is not is named, so that the caller can retry with all their
  /// values at once rather than learning of one per attempt.
  mlir::LogicalResult requireConstants(llvm::ArrayRef<unsigned> inputs);
  /// Output `output`'s inferred shape; it needs the inputs that give shapes
  /// to be constants. An error when it could not be inferred.
  mlir::FailureOr<std::vector<int64_t>>
  inferredOutputShape(llvm::ArrayRef<unsigned> shapeInputs,
                      unsigned output = 0);

  /// Replaces input i by `value` for the rest of this node's lowering (an
  /// NCHW input reordered for an NHWC lowering).
  void replaceInput(unsigned i, LoweredValue value);
  /// Output i as set so far.
  const LoweredValue &output(unsigned i);

  /// Sets output i.
  void setOutput(unsigned i, mlir::Value tensor, int32_t dtype);
  void setOutput(unsigned i, LoweredValue value);
  /// Sets output i to a compile-time constant.
  void setConstantOutput(unsigned i, cleave::Tensor value);

  /// The variable a ref or resource input names, read or written.
  mlir::FailureOr<LoweredValue> readVariable(unsigned input);
  /// Variable `name`'s value, `initial` while it is uninitialized (the
  /// runtime passes `initial` then: VariableSlot::initial).
  mlir::FailureOr<LoweredValue> readVariableOr(llvm::StringRef name,
                                               const cleave::Tensor &initial);
  void writeVariable(llvm::StringRef name, mlir::Value tensor, int32_t dtype,
                     llvm::ArrayRef<int64_t> shape);
  /// The dtype and shape a variable has now (after earlier updates), or
  /// nullopt while it is uninitialized; reads nothing.
  std::optional<TensorSpec> variableSpec(llvm::StringRef name);

  // Attrs (defaults of the op's registration filled in; placeholders are
  // unbound: cluster functions have none) come from NodeAttrReader.

  // Builders shared by the family files.

  /// The lowered element type of `dtype`.
  mlir::Type elementType(int32_t dtype);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    int32_t dtype);
  /// An uninitialized tensor (tensor.empty).
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, int32_t dtype);
  /// A tensor of `shape` filled with the scalar `value` (linalg.fill).
  mlir::Value filled(llvm::ArrayRef<int64_t> shape, int32_t dtype,
                     mlir::Value value);
  /// A scalar constant of `dtype` (arith.constant).
  mlir::Value scalar(int32_t dtype, double value);
  /// A dense constant tensor.
  mlir::Value constantTensor(const cleave::Tensor &value);

  /// linalg.generic over the output shape `shape`: each operand broadcasts
  /// to it as NumPy does (its shape must be broadcast-compatible, which the
  /// caller checked); `body` computes one element from the operands'
  /// elements.
  using ElementFn = llvm::function_ref<mlir::Value(
      mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;
  mlir::Value map(llvm::ArrayRef<mlir::Value> operands,
                  llvm::ArrayRef<int64_t> shape, int32_t dtype,
                  ElementFn body);
  /// The shapes of inputs joined by NumPy broadcasting, or failure with
  /// TensorFlow's "Incompatible shapes" error.
  mlir::FailureOr<std::vector<int64_t>>
  broadcastShapes(llvm::ArrayRef<unsigned> inputIndices);

  /// Reduces `input` over `axes` (sorted, unique, non-negative) with
  /// `combine` (element, accumulator), starting from the scalar `init`; the
  /// result drops the reduced axes.
  mlir::Value reduce(mlir::Value input, llvm::ArrayRef<int64_t> shape,
                     int32_t dtype, llvm::ArrayRef<int64_t> axes,
                     mlir::Value init, ElementFn combine);
  /// tensor.expand_shape/collapse_shape or, when neither fits, a copy.
  mlir::Value reshape(mlir::Value input, llvm::ArrayRef<int64_t> from,
                      llvm::ArrayRef<int64_t> to, int32_t dtype);
  /// Converts an element from `from` to `to` as TensorFlow's Cast does.
  mlir::Value convertElement(mlir::OpBuilder &builder, mlir::Location loc,
                             mlir::Value value, int32_t from, int32_t to);

  // Calls of the kernel library (cleave/Target/CPU/KernelLibrary.h).

  /// Runtime function `name`, declared in the module on first use.
  mlir::func::FuncOp declareRuntimeFunction(llvm::StringRef name,
                                            mlir::TypeRange arguments,
                                            mlir::TypeRange results);
  /// The address of a tensor's buffer, read-only, as an index: compiled
  /// code passes pointers to the kernel library so.
  mlir::Value bufferAddress(mlir::Value tensor);
  /// The status after a runtime call that returned `code` (0: success):
  /// the first failure stays (a later one would hide the cause). The
  /// node's error says `message`, or, where that is empty, what the runtime
  /// adds at run time.
  void setStatusFromRuntime(mlir::Value code, std::string message = "");

  /// Runs the op's shape function: TensorFlow's shape error on the node
  /// when the inputs disagree.
  mlir::LogicalResult inferShapes();

  // Functional control flow and calls.

  /// Lowers the body of library function `function` at the builder's
  /// insertion point, `args` bound to its data arguments; its data results.
  mlir::FailureOr<llvm::SmallVector<LoweredValue>>
  lowerFunctionBody(llvm::StringRef function,
                    llvm::ArrayRef<LoweredValue> args);
  /// Marks lowering inside (or back outside) a region of scf.if/scf.while.
  void enterRegion();
  void exitRegion();
  /// Marks lowering inside (or back outside) the body of a compiled loop
  /// that carries `carried`: updates of those variables are allowed there.
  void enterLoopBody(llvm::ArrayRef<std::string> carried);
  void exitLoopBody();
  /// Variable `name`'s value here (after earlier updates).
  mlir::FailureOr<LoweredValue> currentVariable(llvm::StringRef name);
  /// The status of compiled code at this point: a scalar i64, 0 while no
  /// error happened. Control flow threads it through its regions.
  mlir::Value getStatus();
  void setStatus(mlir::Value status);
  /// The status code that reports `message` as an error on this node.
  int64_t addError(std::string message);
  int64_t getMaxIterations() const;

private:
  FunctionLowering &function;
  llvm::SmallVector<LoweredValue *> inputs;
  /// The values of replaced inputs (stable addresses).
  std::deque<LoweredValue> replacedInputs;
  std::vector<std::optional<std::vector<int64_t>>> outputShapes;
  bool inputFailed = false;
};

/// Values with more elements than this are computed at run time even when
/// they are known at compile time: a constant that large only bloats the
/// code, and folding it would materialise it in the compiler.
constexpr int64_t kMaxFoldedElements = 1 << 12;

/// Whether a static `shape` holds more than `limit` elements (an unknown
/// dimension: not known to; a count that overflows: more).
bool hasMoreElements(llvm::ArrayRef<int64_t> shape, int64_t limit);

using Lowering = mlir::LogicalResult (*)(NodeLowering &);
using LoweringTable = std::vector<std::pair<llvm::StringRef, Lowering>>;

/// One table per op family, in <Family>Lowerings.cpp (ops::OpFamily).
LoweringTable getArrayLowerings();
LoweringTable getMathLowerings();
LoweringTable getNNLowerings();
/// LRN and the resize ops: NN family ops in ImageLowerings.cpp.
LoweringTable getImageLowerings();
/// Conv3D, MaxPool3D, AvgPool3D and their gradients: NN family ops in
/// VolumeLowerings.cpp.
LoweringTable getVolumeLowerings();
LoweringTable getStateLowerings();
LoweringTable getControlFlowLowerings();
LoweringTable getFunctionalLowerings();
LoweringTable getRandomLowerings();
/// The variable a stateful random op (RandomUniform, ...) keeps its place
/// in its stream in, which each run reads and moves on; empty for others.
std::string getRandomStateVariableOf(graph::NodeOp node);
bool isRandomStateVariable(llvm::StringRef variable);
/// The TensorList ops: Data family ops in ListLowerings.cpp.
LoweringTable getListLowerings();
LoweringTable getTPULowerings();

/// Where row `row` of a scatter goes (an index into the segments), whether
/// it is dropped silently, and whether it is an error (also dropped).
using RowTarget = llvm::function_ref<std::array<mlir::Value, 3>(
    mlir::OpBuilder &, mlir::Value row)>;
/// How a scatter combines a row with the row it lands on.
enum class ScatterCombine { Add, Sub, Mul, Min, Max, Update };
/// `initial` ([segments, inner]; zeros when null) with each row of `rows`
/// ([numRows, inner]) combined into the row `target` gives it, one row at a
/// time, in order (in place once bufferized); the first error row sets the
/// status to `errorCode` (from addError). UnsortedSegmentSum, ScatterNd and
/// the TensorScatter ops.
mlir::Value scatterRows(NodeLowering &ctx, mlir::Value initial,
                        mlir::Value rows, int64_t numRows, int64_t inner,
                        int64_t segments, int32_t dtype, ScatterCombine combine,
                        RowTarget target, int64_t errorCode);

/// Element-wise lowerings (MathLowerings.cpp) that ops of other families
/// share: the activations of NNLowerings.cpp and their gradients.
mlir::LogicalResult lowerUnaryElementwise(NodeLowering &ctx, ops::UnaryOp op);
/// (dy, x) -> dx of the activations; y = f(x) where the rule is written in
/// terms of the output.
enum class ActivationGrad { Relu, Relu6, Elu, Softplus, Softsign };
mlir::LogicalResult lowerActivationGrad(NodeLowering &ctx, ActivationGrad op);
/// Ops whose outputs must be known at compile time (Range,
/// BroadcastGradientArgs compute shapes): the driver folds them when their
/// inputs are constants; otherwise this names the input that is not.
mlir::LogicalResult lowerCompileTimeOnly(NodeLowering &ctx);

// Element bodies test dtypes with cleave::isFloatDType, isUnsignedDType
// and isIntegerDType (cleave/Tensor/Tensor.h).

} // namespace cleave::conversion

#endif // CLEAVE_LIB_CONVERSION_GRAPHTOLINALG_LOWERING_H
