//===- GraphToLinalg.h - graph nodes to upstream tensor dialects -*- C++ -*-===//
//
// Lowers the nodes of a graph function (or of the top-level graph) into one
// `func.func` over static tensors in upstream dialects: linalg (named ops and
// linalg.generic), tensor, arith, math. The lowering specialises on the
// shapes actually fed, as XLA does: every argument gets a static type, and
// arguments that ops need as values (a Reshape's shape, a Sum's axes) are
// compile-time constants. Nodes whose inputs are all known at compile time
// are folded with the reference interpreter's kernels, so shape arithmetic
// (Shape, BroadcastGradientArgs, ...) disappears from the compiled code.
//
// Variables are not memory the function owns: every variable a node reads
// is an extra argument holding its value at entry, every variable a node
// writes an extra result holding its value at exit. The runtime binds them
// to the variables' buffers.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CONVERSION_GRAPHTOLINALG_H
#define CLEAVE_CONVERSION_GRAPHTOLINALG_H

#include "cleave/Ops/OpRegistry.h"
#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cleave::conversion {

/// One argument of the function being lowered, as the caller passes it.
struct ArgSpecialization {
  /// The TensorFlow dtype and static shape of the value. For a resource
  /// argument, the dtype is DT_RESOURCE and `variable` names the variable.
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  /// The value, when the argument is a compile-time constant.
  std::optional<cleave::Tensor> constant;
  /// For a resource argument: the variable its handle names.
  std::string variable;
};

/// The dtype and shape of a tensor at the function boundary.
struct TensorSpec {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
};

/// Where a value the caller receives comes from: a result the compiled
/// function computes, one of its arguments passed through unchanged, or a
/// value known at compile time. The function never returns an argument or
/// the same buffer twice.
struct ValueSource {
  enum class Kind { Result, Argument, Constant } kind = Kind::Result;
  /// The result or argument index of the compiled function.
  unsigned index = 0;
  std::optional<cleave::Tensor> constant;
};

/// A variable the lowered function reads or writes.
struct VariableSlot {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  /// The lowered function's argument holding the value at entry (-1 when
  /// the function never reads the variable's old value).
  int argIndex = -1;
  /// What the caller passes at entry while the variable is uninitialized
  /// (a stateful random node's place in its stream: none drawn yet);
  /// without it, an uninitialized variable is an error.
  std::optional<cleave::Tensor> initial;
  /// The value at exit, when the function writes the variable.
  std::optional<ValueSource> written;
};

/// What the lowering built: `func.func @<name>` taking the non-resource,
/// non-constant arguments in order, then the read variables; returning the
/// results `outputs` and the variables' `written` sources refer to.
struct LoweredFunction {
  std::string name;
  /// For each lowered argument before the variables: the index of the
  /// argument (of the graph function, or of `inputs`) it stands for.
  std::vector<unsigned> dataArgs;
  std::vector<TensorSpec> argSpecs;
  /// The compiled function's results.
  std::vector<TensorSpec> resultSpecs;
  /// One per requested output.
  std::vector<ValueSource> outputs;
  std::vector<VariableSlot> variables;
  /// An error compiled code can report, and the node it is on.
  struct RuntimeError {
    std::string message;
    mlir::Location loc;
  };
  /// Errors compiled code can report (a loop that never ends): when the
  /// scalar int64 result `statusResult` is k > 0 after a call, the call
  /// failed with `errors[k - 1]` and its other results are meaningless.
  std::optional<unsigned> statusResult;
  std::vector<RuntimeError> errors;
};

/// Gives the dtype and shape of an initialized variable, or nullopt.
using VariableTypeFn =
    std::function<std::optional<TensorSpec>(llvm::StringRef name)>;

/// What to lower: the nodes of `body` that `outputs` need (and, for a
/// function, its stateful nodes), with `inputs` bound to the arguments.
struct LoweringRequest {
  mlir::Block *body = nullptr;
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<ArgSpecialization> args;
  llvm::SmallVector<mlir::Value> outputs;
  /// Nodes run for their effects (variable updates), not returned.
  llvm::SmallVector<mlir::Operation *> targets;
  /// Run every stateful node of the body, as a function call does.
  bool runStatefulNodes = false;
  /// Return outputs known at compile time from the function too (for
  /// inspection); otherwise the caller gets their values directly.
  bool returnConstantOutputs = false;
  /// A compiled loop that runs this many iterations stops with an error, as
  /// the interpreter's loops do.
  int64_t maxIterations = 1000000;
  VariableTypeFn variableType;
};

/// Lowers `request` into `target` as `func.func @<name>`. On failure the
/// diagnostic names the node. An input that must be a compile-time constant
/// but is an argument without a value adds that argument's index to
/// `needsConstant` (the caller can retry with its value).
mlir::FailureOr<LoweredFunction>
lowerToLinalg(const LoweringRequest &request, mlir::ModuleOp target,
              llvm::StringRef name, llvm::DenseSet<unsigned> &needsConstant);

/// The request that lowers graph function `function` with `args`.
LoweringRequest requestForFunction(mlir::Operation *function,
                                   llvm::ArrayRef<ArgSpecialization> args,
                                   VariableTypeFn variableType);

/// Whether op type `opType` lowers to the CPU target.
bool hasCPULowering(llvm::StringRef opType);
/// The family of the file that holds `opType`'s CPU lowering; none when it
/// does not lower.
std::optional<ops::OpFamily> lookupCPULoweringFamily(llvm::StringRef opType);
/// Whether compiled code knows the shape of every value host transfer
/// `node` receives (a static result type, XlaRecvFromHost's `shape`, or a
/// `host_mlir_module` to infer them from for the shapes sent): the host
/// computes them, and compiled code allocates them beforehand. True for
/// other nodes.
bool knowsReceivedShapes(mlir::Operation *node);
/// Why a node is not compiled when knowsReceivedShapes is false.
inline constexpr llvm::StringLiteral kUnknownReceivedShapes =
    "the shapes of what the host sends back are not known at compile time";

/// Whether op type `opType` updates a variable (such updates cannot be
/// compiled inside functional control flow yet).
bool updatesVariables(llvm::StringRef opType);

/// Whether the library function `function` (a graph.func) can be compiled
/// as the body of a call, an If/Case branch or a While loop; otherwise
/// `why` says which node stops it.
/// `isLoopBody`: the function is a While's body, whose variable updates
/// the compiled loop carries.
bool isCompilableFunction(mlir::Operation *function, std::string &why,
                          bool isLoopBody = false);

/// Every op type with a CPU lowering, sorted.
std::vector<llvm::StringRef> getCPULoweredOps();

/// The MLIR element type lowered tensors of `dtype` use (signless integers,
/// i1 for bool), or null when the dtype does not lower.
mlir::Type getLoweredElementType(mlir::MLIRContext *context, int32_t dtype);

} // namespace cleave::conversion

#endif // CLEAVE_CONVERSION_GRAPHTOLINALG_H
