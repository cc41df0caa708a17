//===- Passes.td - passes on the graph dialect --------------*- tablegen -*-===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_TD
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphInferShapesPass : Pass<"graph-infer-shapes", "::mlir::ModuleOp"> {
  let summary = "Refine result shapes with the ops' shape functions";
  let description = [{
    Runs the shape function of every node whose op has one (see
    docs/Ops.md) until nothing changes, and refines the result types:
    `tensor<*xf32>` becomes `tensor<?x128xf32>` where the inputs, attrs and
    constant inputs tell. Refinement only adds information, so cycles through
    NextIteration converge; as in TensorFlow, a Merge whose back edge has an
    unknown shape gets an unknown shape (sound, not yet refined by iterating
    the loop). Shapes that contradict each other, or a shape
    recorded in the graph (`_output_shapes`), are reported on the node with
    TensorFlow's wording:

    ```
    Node 'sum': Dimensions must be equal, but are 2 and 3 for 'sum'
    (op: AddV2) with input shapes: [2], [3]
    ```

    Before:
    ```mlir
    %x, %x_ctl = graph.node "Placeholder" "x" {dtype = f32, shape = #graph.shape<?x784>} : () -> tensor<*xf32>
    %y, %y_ctl = graph.node "Relu" "y"(%x) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
    ```
    After:
    ```mlir
    %x, %x_ctl = graph.node "Placeholder" "x" {dtype = f32, shape = #graph.shape<?x784>} : () -> tensor<?x784xf32>
    %y, %y_ctl = graph.node "Relu" "y"(%x) {T = f32} : (tensor<?x784xf32>) -> tensor<?x784xf32>
    ```
    Types are not part of a GraphDef, so export is unaffected.
  }];
}

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_TD
