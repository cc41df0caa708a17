//===- NodeInferenceContext.cpp - a graph.node for shape functions --------===//

#include "cleave/Dialect/Graph/Utils/NodeInferenceContext.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using ops::Shape;

Shape graph::toInferenceShape(ShapeAttr attr) {
  if (attr.getUnknownRank())
    return Shape::unknown();
  return Shape::of(attr.getDims());
}

Shape graph::toInferenceShape(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return Shape::unknown();
  Shape shape = Shape::of({});
  for (int64_t d : ranked.getShape())
    shape.dims.push_back(ShapedType::isDynamic(d) ? Shape::kUnknown : d);
  return shape;
}

std::optional<int64_t> NodeInferenceContext::getIntAttr(StringRef name) const {
  return node.getTFInt(name);
}

std::optional<bool> NodeInferenceContext::getBoolAttr(StringRef name) const {
  return node.getTFBool(name);
}

std::optional<double> NodeInferenceContext::getFloatAttr(StringRef name) const {
  if (auto f = dyn_cast_or_null<FloatAttr>(node.getTFAttr(name)))
    return f.getValueAsDouble();
  return std::nullopt;
}

std::optional<int32_t> NodeInferenceContext::getTypeAttr(StringRef name) const {
  if (auto type = dyn_cast_or_null<TypeAttr>(node.getTFAttr(name)))
    return typeToDataType(type.getValue());
  return std::nullopt;
}

std::optional<std::string>
NodeInferenceContext::getStringAttr(StringRef name) const {
  return node.getTFString(name);
}

std::optional<SmallVector<int64_t>>
NodeInferenceContext::getIntListAttr(StringRef name) const {
  return node.getTFIntList(name);
}

std::optional<Shape> NodeInferenceContext::getShapeAttr(StringRef name) const {
  if (auto shape = dyn_cast_or_null<ShapeAttr>(node.getTFAttr(name)))
    return toInferenceShape(shape);
  return std::nullopt;
}

std::optional<SmallVector<Shape>>
NodeInferenceContext::getShapeListAttr(StringRef name) const {
  auto list = dyn_cast_or_null<ArrayAttr>(node.getTFAttr(name));
  if (!list)
    return std::nullopt;
  SmallVector<Shape> shapes;
  for (Attribute a : list) {
    auto shape = dyn_cast<ShapeAttr>(a);
    if (!shape)
      return std::nullopt;
    shapes.push_back(toInferenceShape(shape));
  }
  return shapes;
}

std::optional<Shape>
NodeInferenceContext::getTensorAttrShape(StringRef name) const {
  if (auto tensor = dyn_cast_or_null<TensorAttr>(node.getTFAttr(name)))
    return toInferenceShape(tensor.getShape());
  return std::nullopt;
}
