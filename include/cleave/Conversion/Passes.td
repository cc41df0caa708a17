//===- Passes.td - conversion passes -----------------------*- tablegen -*-===//

#ifndef CLEAVE_CONVERSION_PASSES_TD
#define CLEAVE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphToLinalgPass : Pass<"graph-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower the top-level graph to linalg on static tensors";
  let description = [{
    Shows what the CPU backend compiles: the nodes that `outputs` need
    become one `func.func` (named by `function`) over static tensors in
    upstream dialects (linalg named ops and `linalg.generic`, tensor, arith,
    math). Placeholders with fully known shapes are its arguments; variables
    (VariableV2, VarHandleOp) with fully known shapes are extra arguments
    and the ones the graph updates extra results. Nodes whose inputs are
    known at compile time (Shape, BroadcastGradientArgs, ...) are folded by
    the reference kernels. The graph and its library are replaced by the
    function. graph-run --backend=cpu does the same per cluster, with the
    shapes actually fed.

    Before:
    ```
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    ```
    After:
    ```mlir
    func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
      %0 = tensor.empty() : tensor<2xf32>
      %1 = linalg.generic {...} ins(%arg0 : tensor<2xf32>) outs(%0 : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %cst = arith.constant 0.000000e+00 : f32
        %2 = arith.cmpf ogt, %in, %cst : f32
        %3 = arith.select %2, %in, %cst : f32
        linalg.yield %3 : f32
      } -> tensor<2xf32>
      return %1 : tensor<2xf32>
    }
    ```
    Errors name the node: an op without a CPU lowering, a shape TensorFlow
    rejects, an input that must be a compile-time constant, a placeholder
    or variable whose shape is not fully known.
  }];
  let options = [
    ListOption<"outputs", "outputs", "std::string",
               "tensors to return (node or node:port; default: the outputs "
               "no node reads)">,
    Option<"function", "function", "std::string", "\"main\"",
           "name of the function to build">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // CLEAVE_CONVERSION_PASSES_TD
