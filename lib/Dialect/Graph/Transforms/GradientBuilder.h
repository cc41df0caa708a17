//===- GradientBuilder.h - how graph-gradient adds nodes --------*- C++ -*-===//
//
// Private to Gradient.cpp. GradientBuilder names, places and tags the nodes
// of one tf.gradients() invocation (scope, colocation with _class and
// device, gradient_uid outside-compilation clusters, _tpu_replicate);
// NodeGradientContext shows a forward node to its registry gradient rule
// and builds the rule's nodes through it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_GRADIENTBUILDER_H
#define CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_GRADIENTBUILDER_H

#include "cleave/Dialect/Graph/Transforms/GradientColocation.h"
#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Ops/GradientRules.h"

#include "mlir/IR/Builders.h"

namespace cleave::graph::gradient {

using namespace mlir;
using ops::GradAttr;
using ops::GradTensor;

inline constexpr llvm::StringLiteral kClassAttr = "_class";

/// The dtype of `value` as gradients see it: a reference's gradient is a
/// tensor of the referenced type.
using graph::getElementTypeOf;

inline bool isFloating(Type t) { return isa<FloatType>(t); }
inline bool isComplex(Type t) { return isa<ComplexType>(t); }

/// Tensors whose gradient is a tensor (TensorFlow's _IsTrainable, plus
/// resources).
inline bool isTrainable(Value v) {
  Type t = getElementTypeOf(v);
  return isFloating(t) || isComplex(t) || isa<ResourceType>(t);
}

/// The name of a tensor as messages print it: "node:port".
inline std::string tensorName(Value v) {
  auto node = v.getDefiningOp<NodeOp>();
  return (node.getName() + ":" + Twine(cast<OpResult>(v).getResultNumber()))
      .str();
}

inline GradTensor wrap(Value v) { return GradTensor(v.getAsOpaquePointer()); }
inline Value unwrap(GradTensor t) {
  return Value::getFromOpaquePointer(t.get());
}

/// One invocation of tf.gradients(): its scope, uid, and the state that
/// decides how each new node is named, placed and tagged.
class GradientBuilder {
public:
  explicit GradientBuilder(Block &block)
      : block(block), names(block), builder(OpBuilder::atBlockEnd(&block)) {}

  NameUniquer &getNames() { return names; }
  std::string scope, uid;
  /// Where names are made: "<scope>/" or "<scope>/<op>_grad/".
  std::string prefix;
  /// The forward op whose gradient is being built (its _tpu_replicate goes
  /// on the new nodes).
  NodeOp forward;
  SmallVector<Value> controlDeps;

  /// Adds a registered node in the current scope and context.
  FailureOr<NodeOp> create(StringRef opType, ValueRange inputs,
                           ArrayRef<NamedAttribute> attrs, StringRef name,
                           Location loc) {
    std::string error;
    std::string full =
        names.unique(prefix + (name.empty() ? opType : name).str());
    SmallVector<Value> controls;
    for (Value c : controlDeps)
      if (!llvm::is_contained(inputs, c))
        controls.push_back(c.getDefiningOp<NodeOp>().getControl());
    StringRef device;
    if (!colocationOps.empty() && colocationOps.back())
      device = colocationOps.back().getDevice().value_or("");
    FailureOr<NodeOp> node = createRegisteredNode(
        builder, loc, opType, full, inputs, controls, attrs, device, error);
    if (failed(node)) {
      emitError(loc) << "graph-gradient: cannot add '" << full
                     << "': " << error;
      return failure();
    }
    decorate(*node);
    return node;
  }

  /// `zeros_like` of `v` in the current scope: the gradient of an output no
  /// gradient reached.
  FailureOr<Value> zerosLike(Value v, Location loc) {
    FailureOr<NodeOp> zeros = create("ZerosLike", v, {}, "zeros_like", loc);
    if (failed(zeros))
      return failure();
    return zeros->getOutputs()[0];
  }

  /// Enters colocation with `op` (null: TensorFlow's colocate_with(None)):
  /// new nodes take its device and colocation class, and its
  /// outside-compilation cluster with the uid appended.
  LogicalResult enterColocation(NodeOp op) {
    colocationOps.push_back(op);
    if (!op)
      return success();
    if (auto error = colocation.enter(
            op.getName(), getStringTFAttr(op, kOutsideCompilationAttr), uid))
      return nodeError(op) << *error;
    return success();
  }
  LogicalResult exitColocation() {
    NodeOp op = colocationOps.pop_back_val();
    if (!op)
      return success();
    if (auto error = colocation.exit(op.getName()))
      return nodeError(op) << *error;
    return success();
  }

private:
  void decorate(NodeOp node) {
    if (forward)
      if (Attribute tag = forward.getTFAttr(kTPUReplicateAttr))
        setTFAttr(node, kTPUReplicateAttr, tag);
    if (!colocationOps.empty() && colocationOps.back()) {
      NodeOp with = colocationOps.back();
      Attribute classes = with.getTFAttr(kClassAttr);
      if (!classes)
        classes = builder.getArrayAttr(
            builder.getStringAttr(("loc:@" + with.getName()).str()));
      setTFAttr(node, kClassAttr, classes);
    }
    if (auto cluster = colocation.getOutsideCluster())
      setTFAttr(node, kOutsideCompilationAttr, builder.getStringAttr(*cluster));
  }

  Block &block;
  NameUniquer names;
  OpBuilder builder;
  SmallVector<NodeOp> colocationOps;
  GradientColocation colocation;
};

/// A forward node as its gradient rule sees it.
class NodeGradientContext : public ops::GradientContext {
public:
  NodeGradientContext(NodeOp node, GradientBuilder &builder,
                      ArrayRef<Value> outGrads, ArrayRef<bool> hasGrad)
      : node(node), builder(builder), inputs(node.getDataInputs()),
        outGrads(outGrads), hasGrad(hasGrad) {
    resetInputGrads(inputs.size());
  }

  /// The first error a node creation or the rule reported.
  bool failedToBuild = false;

  StringRef getOpType() const override { return node.getOpType(); }
  StringRef getName() const override { return node.getName(); }
  unsigned getNumInputs() const override { return inputs.size(); }
  unsigned getNumOutputs() const override { return node.getOutputs().size(); }
  GradTensor getInput(unsigned i) const override { return wrap(inputs[i]); }
  GradTensor getOutput(unsigned i) const override {
    return wrap(node.getOutputs()[i]);
  }
  GradTensor getOutputGrad(unsigned i) override {
    return i < outGrads.size() && outGrads[i] ? wrap(outGrads[i])
                                              : GradTensor();
  }
  bool hasOutputGrad(unsigned i) const override {
    return i < hasGrad.size() && hasGrad[i];
  }
  int32_t getDType(GradTensor t) const override {
    return typeToDataType(getElementTypeOf(unwrap(t)));
  }
  ops::Shape getShape(GradTensor t) const override {
    auto ranked = dyn_cast<RankedTensorType>(unwrap(t).getType());
    if (!ranked)
      return ops::Shape::unknown();
    ops::Shape shape = ops::Shape::of({});
    for (int64_t d : ranked.getShape())
      shape.dims.push_back(ShapedType::isDynamic(d) ? ops::Shape::kUnknown : d);
    return shape;
  }
  std::optional<SmallVector<int64_t>>
  getConstantInts(GradTensor t) const override {
    return graph::getConstantInts(unwrap(t));
  }
  std::optional<int64_t> getIntAttr(StringRef name) const override {
    return node.getTFInt(name);
  }
  std::optional<bool> getBoolAttr(StringRef name) const override {
    return node.getTFBool(name);
  }
  std::optional<std::string> getStringAttr(StringRef name) const override {
    return node.getTFString(name);
  }
  std::optional<double> getFloatAttr(StringRef name) const override {
    if (auto f = dyn_cast_or_null<FloatAttr>(node.getTFAttr(name)))
      return f.getValueAsDouble();
    return std::nullopt;
  }
  std::optional<int32_t> getTypeAttr(StringRef name) const override {
    if (auto type = dyn_cast_or_null<TypeAttr>(node.getTFAttr(name)))
      return typeToDataType(type.getValue());
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>>
  getIntListAttr(StringRef name) const override {
    auto list = dyn_cast_or_null<ArrayAttr>(node.getTFAttr(name));
    if (!list)
      return std::nullopt;
    SmallVector<int64_t> values;
    for (Attribute a : list)
      if (auto i = dyn_cast<IntegerAttr>(a))
        values.push_back(i.getInt());
    return values;
  }

  SmallVector<GradTensor> addNode(StringRef opType,
                                  ArrayRef<GradTensor> rawInputs,
                                  ArrayRef<GradAttr> attrs,
                                  StringRef name) override {
    SmallVector<Value> values;
    for (GradTensor t : rawInputs)
      values.push_back(unwrap(t));
    SmallVector<NamedAttribute> named;
    for (const GradAttr &a : attrs)
      named.push_back(toAttribute(a));
    return createNode(opType, values, named, name);
  }

  GradTensor addConst(ArrayRef<double> values, ArrayRef<int64_t> shape,
                      int32_t dtype, StringRef name) override {
    MLIRContext *ctx = node.getContext();
    Type element = dataTypeToType(ctx, dtype);
    if (auto ref = dyn_cast<RefType>(element))
      element = ref.getElementType();
    if (!isa<FloatType, IntegerType>(element)) {
      nodeError(node) << "graph-gradient: cannot build a constant of dtype "
                      << getDataTypeName(element);
      failedToBuild = true;
      return GradTensor();
    }
    auto type = RankedTensorType::get(shape, element);
    DenseElementsAttr dense;
    if (auto f = dyn_cast<FloatType>(element)) {
      SmallVector<APFloat> elems;
      for (double v : values) {
        APFloat x(v);
        bool lost;
        x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
        elems.push_back(x);
      }
      dense = DenseElementsAttr::get(type, elems);
    } else {
      SmallVector<APInt> elems;
      for (double v : values)
        elems.push_back(APInt(element.getIntOrFloatBitWidth(), int64_t(v),
                              /*isSigned=*/true));
      dense = DenseElementsAttr::get(type, elems);
    }
    // As make_tensor_proto: tensor_content for more than one element.
    int64_t encoding =
        values.size() > 1 ? TensorAttr::kTensorContent : int64_t(values.size());
    auto value =
        TensorAttr::get(ctx, element, ShapeAttr::get(ctx, shape, false, {}),
                        dense, encoding, {});
    Builder b(ctx);
    SmallVector<GradTensor> outputs =
        createNode("Const", {},
                   {b.getNamedAttr("dtype", TypeAttr::get(element)),
                    b.getNamedAttr("value", value)},
                   name);
    return outputs.empty() ? GradTensor() : outputs.front();
  }

  void setControlDependencies(ArrayRef<GradTensor> controls) override {
    builder.controlDeps.clear();
    for (GradTensor t : controls)
      builder.controlDeps.push_back(unwrap(t));
  }

private:
  SmallVector<GradTensor> createNode(StringRef opType, ValueRange values,
                                     ArrayRef<NamedAttribute> attrs,
                                     StringRef name) {
    // After a failed node, the rule's later nodes have nothing to read.
    if (failedToBuild || llvm::is_contained(values, Value()))
      return failedToBuild = true, SmallVector<GradTensor>();
    FailureOr<NodeOp> created =
        builder.create(opType, values, attrs, name, node.getLoc());
    if (failed(created)) {
      failedToBuild = true;
      return {};
    }
    SmallVector<GradTensor> outputs;
    for (Value v : created->getOutputs())
      outputs.push_back(wrap(v));
    return outputs;
  }

  NamedAttribute toAttribute(const GradAttr &a) {
    Builder b(node.getContext());
    Attribute value;
    switch (a.kind) {
    case GradAttr::Int:
      value = b.getI64IntegerAttr(a.i);
      break;
    case GradAttr::Bool:
      value = b.getBoolAttr(a.b);
      break;
    case GradAttr::String:
      value = b.getStringAttr(a.s);
      break;
    case GradAttr::Type:
      value = TypeAttr::get(dataTypeToType(node.getContext(), a.type));
      break;
    case GradAttr::IntList: {
      SmallVector<Attribute> ints;
      for (int64_t v : a.ints)
        ints.push_back(b.getI64IntegerAttr(v));
      value = b.getArrayAttr(ints);
      break;
    }
    case GradAttr::Float:
      value = b.getF32FloatAttr(a.f);
      break;
    }
    return b.getNamedAttr(a.name, value);
  }

  /// MLIR op handles are values whose accessors are not const.
  mutable NodeOp node;
  GradientBuilder &builder;
  SmallVector<Value> inputs;
  ArrayRef<Value> outGrads;
  ArrayRef<bool> hasGrad;
};

} // namespace cleave::graph::gradient

#endif // CLEAVE_LIB_DIALECT_GRAPH_TRANSFORMS_GRADIENTBUILDER_H
