//===- ShapeInference.h - TensorFlow shape functions ------------*- C++ -*-===//
//
// Shape functions in the style of TensorFlow's InferenceContext: each op's
// entry in the registry may name one; it reads the input shapes, attrs and
// constant inputs of a node and sets the shapes of its outputs. The
// functions know nothing of MLIR; graph-infer-shapes adapts them to nodes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_SHAPEINFERENCE_H
#define CLEAVE_OPS_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cleave::ops {

/// A possibly partial shape: unknown rank, or dims where -1 is unknown.
struct Shape {
  static constexpr int64_t kUnknown = -1;
  /// The most dimensions a tensor may have (TensorShape::MaxDimensions).
  static constexpr int64_t kMaxRank = 254;
  bool unknownRank = true;
  llvm::SmallVector<int64_t, 4> dims;

  static Shape unknown() { return {}; }
  static Shape scalar() { return of({}); }
  static Shape of(llvm::ArrayRef<int64_t> dims) {
    Shape s;
    s.unknownRank = false;
    s.dims.assign(dims.begin(), dims.end());
    return s;
  }
  /// Rank `rank`, every dimension unknown. A rank past TensorFlow's limit
  /// (a shape vector a billion long) says nothing: an unknown rank.
  static Shape ofRank(int64_t rank) {
    if (rank < 0 || rank > kMaxRank)
      return unknown();
    return of(llvm::SmallVector<int64_t, 4>(rank, kUnknown));
  }
  bool hasRank() const { return !unknownRank; }
  int64_t rank() const { return dims.size(); }
  /// "[2,?,3]" or "?" as TensorFlow prints shapes in its messages.
  std::string str() const;
  bool operator==(const Shape &o) const {
    return unknownRank == o.unknownRank && dims == o.dims;
  }
};

/// A node as a shape function sees it.
class InferenceContext {
public:
  virtual ~InferenceContext() = default;
  virtual unsigned getNumInputs() const = 0;
  virtual Shape getInputShape(unsigned index) const = 0;
  /// The elements of input `index` when it is a constant integer tensor.
  virtual std::optional<llvm::SmallVector<int64_t>>
  getConstantInput(unsigned index) const = 0;
  /// Input `index` when it is a constant numeric scalar (any dtype).
  virtual std::optional<double> getConstantScalar(unsigned index) const = 0;
  /// The shape of the variable a resource input refers to, when known
  /// (a VarHandleOp's `shape`).
  virtual Shape getResourceShape(unsigned index) const = 0;
  virtual std::optional<int64_t> getIntAttr(llvm::StringRef name) const = 0;
  virtual std::optional<bool> getBoolAttr(llvm::StringRef name) const = 0;
  virtual std::optional<double> getFloatAttr(llvm::StringRef name) const = 0;
  /// A type attr's TensorFlow DataType.
  virtual std::optional<int32_t> getTypeAttr(llvm::StringRef name) const = 0;
  virtual std::optional<std::string>
  getStringAttr(llvm::StringRef name) const = 0;
  virtual std::optional<llvm::SmallVector<int64_t>>
  getIntListAttr(llvm::StringRef name) const = 0;
  virtual std::optional<Shape> getShapeAttr(llvm::StringRef name) const = 0;
  virtual std::optional<llvm::SmallVector<Shape>>
  getShapeListAttr(llvm::StringRef name) const = 0;
  /// The result shapes of the function that func attr `name` names (for
  /// "", a node whose op type is a function name: that function), called
  /// with inputs `firstArg`... of this node as its arguments.
  virtual std::optional<llvm::SmallVector<Shape>>
  getFunctionResultShapes(llvm::StringRef name, unsigned firstArg) const = 0;
  /// The shape of a tensor-valued attr (Const's `value`).
  virtual std::optional<Shape> getTensorAttrShape(llvm::StringRef name) const = 0;

  unsigned getNumOutputs() const { return outputs.size(); }
  void setOutput(unsigned index, Shape shape) {
    if (index < outputs.size())
      outputs[index] = std::move(shape);
  }
  llvm::ArrayRef<Shape> getOutputs() const { return outputs; }

protected:
  explicit InferenceContext(unsigned numOutputs) : outputs(numOutputs) {}

private:
  llvm::SmallVector<Shape, 2> outputs;
};

/// A shape function: returns an empty string on success, otherwise the
/// reason the inputs are inconsistent (TensorFlow's wording).
using ShapeFn = std::string (*)(InferenceContext &ctx);

/// The shape function of `opType`, or null when it has none.
ShapeFn lookupShapeFn(llvm::StringRef opType);

/// Broadcasts two shapes with NumPy rules; an empty optional with `error`
/// set when they are incompatible.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b,
                                     std::string &error);

/// The most specific shape that both are instances of: dims that differ,
/// or ranks that differ, become unknown (the shape of a Merge or an If).
Shape relaxShapes(const Shape &a, const Shape &b);

/// The most specific shape compatible with both, or nothing (with `error`).
std::optional<Shape> mergeShapes(const Shape &a, const Shape &b,
                                 std::string &error);

/// Makes a possibly negative axis of a rank-`rank` tensor count from 0, as
/// TensorFlow's kernels and shape functions do; false when it is outside
/// [-rank, rank).
inline bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return false;
  if (axis < 0)
    axis += rank;
  return true;
}

} // namespace cleave::ops

#endif // CLEAVE_OPS_SHAPEINFERENCE_H
