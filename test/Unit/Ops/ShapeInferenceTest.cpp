//===- ShapeInferenceTest.cpp - unit tests of the shape helpers -----------===//

#include "cleave/Dialect/Graph/Transforms/ShapeRefinement.h"
#include "cleave/InitAll.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/ShapeInference.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <map>

using namespace cleave::ops;

namespace {

TEST(ShapeInferenceTest, BroadcastFollowsNumPy) {
  std::string error;
  auto out = broadcastShapes(Shape::of({3, 1}), Shape::of({4}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({3, 4}));
  out = broadcastShapes(Shape::of({-1, 10}), Shape::of({10}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({-1, 10}));
  out = broadcastShapes(Shape::of({2}), Shape::unknown(), error);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->hasRank());
  EXPECT_FALSE(broadcastShapes(Shape::of({2}), Shape::of({3}), error));
  EXPECT_EQ(error, "Dimensions must be equal, but are 2 and 3");
}

TEST(ShapeInferenceTest, MergeKeepsTheMostSpecific) {
  std::string error;
  auto out = mergeShapes(Shape::of({-1, 4}), Shape::of({3, -1}), error);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape::of({3, 4}));
  EXPECT_FALSE(mergeShapes(Shape::of({3}), Shape::of({3, 1}), error));
  EXPECT_FALSE(mergeShapes(Shape::of({3}), Shape::of({4}), error));
}

TEST(ShapeInferenceTest, PrintsLikeTensorFlow) {
  EXPECT_EQ(Shape::of({2, -1}).str(), "[2,?]");
  EXPECT_EQ(Shape::scalar().str(), "[]");
  EXPECT_EQ(Shape::unknown().str(), "?");
}

/// A node of scalar constant inputs and type attrs, for calling a shape
/// function directly.
class ScalarConstants : public InferenceContext {
public:
  ScalarConstants(std::vector<double> values,
                  std::map<std::string, int32_t> types)
      : InferenceContext(1), values(std::move(values)),
        types(std::move(types)) {}
  unsigned getNumInputs() const override { return values.size(); }
  Shape getInputShape(unsigned) const override { return Shape::scalar(); }
  std::optional<llvm::SmallVector<int64_t>>
  getConstantInput(unsigned) const override {
    return std::nullopt;
  }
  std::optional<double> getConstantScalar(unsigned index) const override {
    return values[index];
  }
  Shape getResourceShape(unsigned) const override { return Shape::unknown(); }
  std::optional<int64_t> getIntAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<bool> getBoolAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<double> getFloatAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<int32_t> getTypeAttr(llvm::StringRef name) const override {
    auto it = types.find(name.str());
    return it == types.end() ? std::nullopt
                             : std::optional<int32_t>(it->second);
  }
  std::optional<std::string> getStringAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<llvm::SmallVector<int64_t>>
  getIntListAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<Shape> getShapeAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<llvm::SmallVector<Shape>>
  getShapeListAttr(llvm::StringRef) const override {
    return std::nullopt;
  }
  std::optional<llvm::SmallVector<Shape>>
  getFunctionResultShapes(llvm::StringRef, unsigned) const override {
    return std::nullopt;
  }
  std::optional<Shape> getTensorAttrShape(llvm::StringRef) const override {
    return std::nullopt;
  }

private:
  std::vector<double> values;
  std::map<std::string, int32_t> types;
};

/// Range's length in its type, as TensorFlow's RangeSize<T> (and the
/// kernel): for float32 -14.87, -14.62, 0.005 the quotient is 50 in float
/// arithmetic (50 elements) and just above 50 in double (51); integers
/// exactly.
TEST(ShapeInferenceTest, RangeCountsInItsType) {
  ShapeFn range = lookupShapeFn("Range");
  ASSERT_NE(range, nullptr);
  auto length = [&](std::vector<double> values, int32_t type) {
    ScalarConstants ctx(std::move(values), {{"Tidx", type}});
    EXPECT_EQ(range(ctx), "");
    return ctx.getOutputs()[0];
  };
  std::vector<double> floats = {float(-14.87), float(-14.62), float(0.005)};
  EXPECT_EQ(length(floats, /*float*/ 1), Shape::of({50}));
  EXPECT_EQ(length(floats, /*double*/ 2), Shape::of({51}));
  EXPECT_EQ(length({10, 1, -3}, /*int32*/ 3), Shape::of({3}));
  EXPECT_EQ(length({0, 7, 2}, /*int64*/ 9), Shape::of({4}));
}

TEST(ShapeInferenceTest, ShapeFunctionsBelongToRegisteredOps) {
  // The table is checked against the registry on first use.
  EXPECT_NE(lookupShapeFn("MatMul"), nullptr);
  EXPECT_NE(lookupShapeFn("AddV2"), nullptr);
  EXPECT_EQ(lookupShapeFn("NotARealOp"), nullptr);
  EXPECT_EQ(lookupShapeFn("SymbolicGradient"), nullptr);
}

} // namespace

//===----------------------------------------------------------------------===//
// A function's results for given arguments (graph::inferFunctionResultTypes)
//===----------------------------------------------------------------------===//

namespace {
/// f(x, y) = (Exp(x) * y, Where(x > 0)) over the graph dialect.
constexpr const char *kHostFunc = R"mlir(
  graph.func @host_func(%x: tensor<*xf32>, %y: tensor<*xf32>)
      -> (tensor<*xf32>, tensor<*xi64>)
      attributes {arg_names = ["x", "y"], signature = {}} {
    %e, %e_ctl = graph.node "Exp" "e"(%x) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
    %m, %m_ctl = graph.node "Mul" "m"(%e, %y) {T = f32} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    %z, %z_ctl = graph.node "Const" "z" {dtype = f32, value = #graph.tensor<dense<0.0> : tensor<f32>>} : () -> tensor<f32>
    %p, %p_ctl = graph.node "Greater" "p"(%x, %z) {T = f32} : (tensor<*xf32>, tensor<f32>) -> tensor<*xi1>
    %w, %w_ctl = graph.node "Where" "w"(%p) {T = i1} : (tensor<*xi1>) -> tensor<*xi64>
    graph.return {control_names = [], names = ["m", "w"]} %m, %w : tensor<*xf32>, tensor<*xi64>
  }
)mlir";
} // namespace

TEST(FunctionShapesTest, ResultsFollowTheArguments) {
  mlir::DialectRegistry registry;
  cleave::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kHostFunc, &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<cleave::graph::FuncOp>("host_func");
  ASSERT_TRUE(func);
  mlir::Type f32 = mlir::Float32Type::get(&context);
  auto ranked = [&](llvm::ArrayRef<int64_t> shape) -> mlir::Type {
    return mlir::RankedTensorType::get(shape, f32);
  };
  // x: [2,3], y: [3] broadcasts to [2,3]; Where's row count depends on the
  // values: unknown.
  auto types = cleave::graph::inferFunctionResultTypes(
      func, {ranked({2, 3}), ranked({3})});
  ASSERT_TRUE(types);
  ASSERT_EQ(types->size(), 2u);
  EXPECT_EQ((*types)[0], ranked({2, 3}));
  auto where = llvm::dyn_cast<mlir::RankedTensorType>((*types)[1]);
  ASSERT_TRUE(where);
  EXPECT_TRUE(where.isDynamicDim(0));
  EXPECT_EQ(where.getDimSize(1), 2);
  // Only x given: y keeps its declared unknown shape, and so does Mul.
  types = cleave::graph::inferFunctionResultTypes(func, {ranked({4})});
  ASSERT_TRUE(types);
  EXPECT_FALSE(llvm::cast<mlir::TensorType>((*types)[0]).hasRank() &&
               llvm::cast<mlir::TensorType>((*types)[0]).hasStaticShape());
  // Shapes Mul cannot broadcast: no answer, and the function is unchanged.
  EXPECT_FALSE(cleave::graph::inferFunctionResultTypes(
      func, {ranked({2}), ranked({3})}));
  EXPECT_EQ(func.getArgumentTypes()[0],
            mlir::UnrankedTensorType::get(f32));
  EXPECT_TRUE(llvm::isa<mlir::UnrankedTensorType>(
      func.getReturnOp().getOperand(0).getType()));
}
