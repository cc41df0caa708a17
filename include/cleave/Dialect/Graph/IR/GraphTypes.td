//===- GraphTypes.td - TensorFlow dtypes as MLIR types ------*- tablegen -*-===//
//
// The dtypes that have no MLIR builtin equivalent, and the control token.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPHTYPES_TD
#define CLEAVE_DIALECT_GRAPH_IR_GRAPHTYPES_TD

include "GraphBase.td"

class Graph_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Graph_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Graph_ControlType : Graph_Type<"Control", "control"> {
  let summary = "a control token: orders nodes without carrying data";
}

def Graph_StringType : Graph_Type<"String", "string"> {
  let summary = "DT_STRING: a variable-length byte string";
}
def Graph_ResourceType : Graph_Type<"Resource", "resource"> {
  let summary = "DT_RESOURCE: a handle to a resource such as a variable";
}
def Graph_VariantType : Graph_Type<"Variant", "variant"> {
  let summary = "DT_VARIANT: a type-erased value (tensor lists, datasets)";
}
def Graph_UnknownType : Graph_Type<"Unknown", "unknown"> {
  let summary = "the dtype of a value that the importer could not determine";
  let description = [{
    Used for results of ops this build has no signature for, when no
    attribute says what they produce. Such graphs still round-trip exactly.
  }];
}

def Graph_QuantizedType : Graph_Type<"Quantized", "quantized"> {
  let summary = "DT_QINT8, DT_QUINT8, DT_QINT16, DT_QUINT16 or DT_QINT32";
  let parameters = (ins "unsigned":$width, "bool":$isSigned);
  let assemblyFormat = "`<` custom<QuantizedKind>($width, $isSigned) `>`";
  let genVerifyDecl = 1;
}

def Graph_RefType : Graph_Type<"Ref", "ref"> {
  let summary = "a `_REF` dtype: a mutable reference to a tensor of the element type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Graph_DTypeType : Graph_Type<"DType", "dtype"> {
  let summary = "a DataType enum value this build has no type for";
  let description = [{
    Proto3 enums are open: a graph written by a newer TensorFlow may carry
    dtype values this build does not know. They are kept as their number,
    e.g. `!graph.dtype<77>`, and written back unchanged.
  }];
  let parameters = (ins "int32_t":$value);
  let assemblyFormat = "`<` $value `>`";
}

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPHTYPES_TD
