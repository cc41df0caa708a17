//===- GraphBase.td - the graph dialect definition ---------*- tablegen -*-===//
//
// The `graph` dialect is a faithful IR of a TensorFlow GraphDef: one generic
// `graph.node` per NodeDef, a graph region (cycles through NextIteration are
// legal), and a function library. Nothing a GraphDef carries is dropped.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPHBASE_TD
#define CLEAVE_DIALECT_GRAPH_IR_GRAPHBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::cleave::graph";
  let summary = "A lossless IR of TensorFlow GraphDefs";
  let description = [{
    The `graph` dialect mirrors a TensorFlow `GraphDef` one to one. Every
    `NodeDef` becomes a `graph.node` that keeps its op type, name, requested
    device, attributes, data inputs and control inputs in order. Results are
    typed from TensorFlow dtypes: builtin element types where MLIR has one
    (`f32`, `bf16`, `i32`, `ui8`, `i1` for bool, `complex<f32>`, ...), and
    dialect types for the rest (`!graph.string`, `!graph.resource`,
    `!graph.variant`, quantized types, `!graph.ref<T>` for `_REF` dtypes and
    `!graph.dtype<N>` for enum values this build does not know). Every node
    also produces a `!graph.control` token for control edges.

    The top-level graph lives in a `graph.graph` op whose body is a graph
    region, so the NextIteration back edges of TensorFlow v1 loops are
    representable. The function library is a list of `graph.func` ops.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let usePropertiesForAttributes = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPHBASE_TD
