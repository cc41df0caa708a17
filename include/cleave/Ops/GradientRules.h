//===- GradientRules.h - TensorFlow gradient rules --------------*- C++ -*-===//
//
// Gradient rules in the style of TensorFlow's @ops.RegisterGradient: each
// op's family file may register one; it reads the forward node (inputs,
// outputs, attrs) and the gradients reaching its outputs, adds the nodes
// that compute the gradients of its inputs, and sets them. The rules know
// nothing of MLIR; graph-gradient adapts them to nodes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_GRADIENTRULES_H
#define CLEAVE_OPS_GRADIENTRULES_H

#include "cleave/Ops/ShapeInference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave::ops {

/// A tensor of the graph being differentiated: an opaque handle that the
/// context hands out and takes back.
class GradTensor {
public:
  GradTensor() = default;
  explicit GradTensor(const void *impl) : impl(impl) {}
  explicit operator bool() const { return impl != nullptr; }
  const void *get() const { return impl; }
  bool operator==(const GradTensor &o) const { return impl == o.impl; }

private:
  const void *impl = nullptr;
};

/// An attr of a node a rule adds; type attrs of its inputs (T, N, Tidx...)
/// are inferred from the inputs, as TensorFlow's Python op wrappers do.
struct GradAttr {
  enum Kind { Int, Bool, String, Type, IntList, Float };
  std::string name;
  Kind kind = Int;
  int64_t i = 0;
  bool b = false;
  double f = 0;
  std::string s;
  int32_t type = 0; ///< A DataType value.
  std::vector<int64_t> ints;

  static GradAttr integer(llvm::StringRef name, int64_t v);
  static GradAttr boolean(llvm::StringRef name, bool v);
  static GradAttr string(llvm::StringRef name, llvm::StringRef v);
  static GradAttr dtype(llvm::StringRef name, int32_t v);
  static GradAttr intList(llvm::StringRef name, std::vector<int64_t> v);
  static GradAttr real(llvm::StringRef name, double v);
};

/// A forward node as its gradient rule sees it, and the builder the rule
/// adds nodes with. Nodes are added in the rule's name scope
/// ("gradients/<op>_grad/"); a node's name is its op type unless given,
/// made unique as Graph.unique_name does.
class GradientContext {
public:
  virtual ~GradientContext() = default;

  virtual llvm::StringRef getOpType() const = 0;
  virtual llvm::StringRef getName() const = 0;
  virtual unsigned getNumInputs() const = 0;
  virtual unsigned getNumOutputs() const = 0;
  virtual GradTensor getInput(unsigned index) const = 0;
  virtual GradTensor getOutput(unsigned index) const = 0;
  /// The (aggregated) gradient of output `index`; zeros when none reached
  /// it but another output's did.
  virtual GradTensor getOutputGrad(unsigned index) = 0;
  /// Whether a gradient reached output `index` (else it is zeros).
  virtual bool hasOutputGrad(unsigned index) const = 0;
  /// The DataType of `t`.
  virtual int32_t getDType(GradTensor t) const = 0;
  /// The static shape of `t` (unknown when not inferred).
  virtual Shape getShape(GradTensor t) const = 0;
  /// The elements of `t` when a Const integer tensor produces it.
  virtual std::optional<llvm::SmallVector<int64_t>>
  getConstantInts(GradTensor t) const = 0;

  virtual std::optional<int64_t> getIntAttr(llvm::StringRef name) const = 0;
  virtual std::optional<bool> getBoolAttr(llvm::StringRef name) const = 0;
  virtual std::optional<std::string>
  getStringAttr(llvm::StringRef name) const = 0;
  virtual std::optional<int32_t> getTypeAttr(llvm::StringRef name) const = 0;
  virtual std::optional<double> getFloatAttr(llvm::StringRef name) const = 0;
  virtual std::optional<llvm::SmallVector<int64_t>>
  getIntListAttr(llvm::StringRef name) const = 0;

  /// Adds a node and returns its outputs; `name` empty means `opType`.
  virtual llvm::SmallVector<GradTensor>
  addNode(llvm::StringRef opType, llvm::ArrayRef<GradTensor> inputs,
          llvm::ArrayRef<GradAttr> attrs = {}, llvm::StringRef name = {}) = 0;
  /// A Const node of `dtype` holding `values` with `shape` (a scalar when
  /// `shape` is empty and there is one value).
  virtual GradTensor addConst(llvm::ArrayRef<double> values,
                              llvm::ArrayRef<int64_t> shape, int32_t dtype,
                              llvm::StringRef name = "Const") = 0;
  /// Nodes added from now on also wait for `controls` (TensorFlow's
  /// `control_dependencies`); an empty list ends that.
  virtual void setControlDependencies(llvm::ArrayRef<GradTensor> controls) = 0;

  // Shorthands over addNode/addConst.
  /// Output 0 of a new node.
  GradTensor op(llvm::StringRef opType, llvm::ArrayRef<GradTensor> inputs,
                llvm::ArrayRef<GradAttr> attrs = {}, llvm::StringRef name = {});
  GradTensor scalar(double value, int32_t dtype,
                    llvm::StringRef name = "Const");
  GradTensor intVector(llvm::ArrayRef<int64_t> values,
                       llvm::StringRef name = "Const");

  /// Sets the gradient of input `index` (null: no gradient).
  void setInputGrad(unsigned index, GradTensor grad);
  /// Sets a sparse gradient (TensorFlow's IndexedSlices): rows `values` of
  /// a tensor of shape `denseShape`, at `indices` of its first dimension,
  /// summed where indices repeat.
  void setInputGradSlices(unsigned index, GradTensor values, GradTensor indices,
                          GradTensor denseShape);
  llvm::ArrayRef<GradTensor> getInputGrads() const { return inputGrads; }
  /// The (indices, dense shape) of input `index`'s gradient when it is
  /// sparse; null tensors otherwise.
  std::pair<GradTensor, GradTensor> getInputGradSlices(unsigned index) const {
    return index < inputSlices.size() ? inputSlices[index]
                                      : std::pair<GradTensor, GradTensor>();
  }

protected:
  void resetInputGrads(unsigned numInputs) {
    inputGrads.assign(numInputs, GradTensor());
    inputSlices.assign(numInputs, {});
  }

private:
  llvm::SmallVector<GradTensor, 4> inputGrads;
  llvm::SmallVector<std::pair<GradTensor, GradTensor>, 4> inputSlices;
};

/// A gradient rule: empty on success, else why it cannot differentiate the
/// node (TensorFlow's wording).
using GradFn = std::string (*)(GradientContext &ctx);

/// The gradient rule of `opType`, or null when it has none.
GradFn lookupGradFn(llvm::StringRef opType);

/// The op types that have a gradient rule, sorted.
std::vector<std::string> getOpsWithGradient();

/// Whether TensorFlow declares `opType` not differentiable
/// (ops.NotDifferentiable): no gradient flows through it, and that is no
/// error.
bool isNotDifferentiable(llvm::StringRef opType);

/// Whether graph-gradient differentiates `opType` itself rather than by a
/// rule: functional control flow and calls (through their functions'
/// gradients) and the nodes of v1 while loops (a whole loop at a time).
bool isDifferentiatedByPass(llvm::StringRef opType);

} // namespace cleave::ops

#endif // CLEAVE_OPS_GRADIENTRULES_H
