//===- GraphAttrs.td - TensorFlow attribute values ----------*- tablegen -*-===//
//
// The AttrValue kinds that have no natural builtin attribute: shapes, tensors,
// function references and placeholders. Strings, ints, floats, bools, types
// and lists use builtin attributes (StringAttr, i64, f32, BoolAttr,
// TypeAttr, ArrayAttr); an AttrValue with nothing set is a UnitAttr.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPHATTRS_TD
#define CLEAVE_DIALECT_GRAPH_IR_GRAPHATTRS_TD

include "GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Graph_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Graph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Graph_ShapeAttr : Graph_Attr<"Shape", "shape"> {
  let summary = "a TensorShapeProto: dims (-1 is unknown) or unknown rank";
  let description = [{
    `#graph.shape<2x?x3>`, `#graph.shape<>` (a scalar), `#graph.shape<*>`
    (unknown rank). Dimension names, which TensorFlow allows but rarely uses,
    are kept in `names`.
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"int64_t">:$dims,
    "bool":$unknownRank,
    OptionalParameter<"::mlir::ArrayAttr">:$names);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$dims), [{
      return $_get($_ctxt, dims, false, ::mlir::ArrayAttr());
    }]>,
  ];
  let extraClassDeclaration = [{
    static constexpr int64_t kUnknownDim = -1;
    static ShapeAttr getUnknownRank(::mlir::MLIRContext *ctx) {
      return get(ctx, {}, true, ::mlir::ArrayAttr());
    }
    /// Whether every dimension is known.
    bool isFullyDefined() const;
    /// The number of elements, or -1 if a dimension is unknown or the count
    /// does not fit in int64.
    int64_t getNumElements() const;
  }];
}

def Graph_TensorAttr : Graph_Attr<"Tensor", "tensor"> {
  let summary = "a TensorProto, decoded to a dense value where possible";
  let description = [{
    `value` holds the decoded elements (a DenseElementsAttr, or a
    DenseStringElementsAttr for strings) whose element type is the storage
    type of `dtype`. `encoding` remembers how the proto spelled the values so
    that export reproduces the message exactly: -1 means `tensor_content`,
    N >= 0 means the typed repeated field held N values (fewer than the shape
    holds are splatted by TensorFlow). When a proto cannot be reproduced from
    these (extra values, `version_number`, a resource or variant payload, a
    byte size that does not match the shape), `raw` keeps its serialized bytes
    and export writes those back.
  }];
  let parameters = (ins
    "::mlir::Type":$dtype,
    "ShapeAttr":$shape,
    OptionalParameter<"::mlir::ElementsAttr">:$value,
    "int64_t":$encoding,
    OptionalParameter<"::mlir::StringAttr">:$raw);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kTensorContent = -1;
  }];
}

def Graph_FuncAttr : Graph_Attr<"Func", "func"> {
  let summary = "a NameAttrList: a function name with call-site attributes";
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$name,
                        "::mlir::DictionaryAttr":$attrs);
  let assemblyFormat = "`<` $name `,` $attrs `>`";
}

def Graph_PlaceholderAttr : Graph_Attr<"Placeholder", "placeholder"> {
  let summary = "an attr placeholder inside a function body, bound at instantiation";
  let parameters = (ins StringRefParameter<"the function attr it refers to">:$ref);
  let assemblyFormat = "`<` $ref `>`";
}

def Graph_VersionsAttr : Graph_Attr<"Versions", "versions"> {
  let summary = "a VersionDef: producer, min_consumer and bad_consumers";
  let parameters = (ins "int32_t":$producer, "int32_t":$minConsumer,
                        OptionalArrayRefParameter<"int32_t">:$badConsumers);
  let assemblyFormat = [{
    `<` `producer` `=` $producer `,` `min_consumer` `=` $minConsumer
    (`,` `bad_consumers` `=` `[` $badConsumers^ `]`)? `>`
  }];
}

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPHATTRS_TD
