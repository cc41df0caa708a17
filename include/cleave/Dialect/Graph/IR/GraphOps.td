//===- GraphOps.td - graph dialect operations ---------------*- tablegen -*-===//
//
// graph.graph (the top-level graph), graph.node (one NodeDef), graph.func
// (one FunctionDef) and graph.return (a function's ret / control_ret).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_IR_GRAPHOPS_TD
#define CLEAVE_DIALECT_GRAPH_IR_GRAPHOPS_TD

include "GraphBase.td"
include "GraphTypes.td"
include "GraphAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"

def Graph_GraphOp : Graph_Op<"graph", [
    SingleBlock, NoTerminator, RegionKindInterface, HasOnlyGraphRegion]> {
  let summary = "the top-level graph of a GraphDef";
  let description = [{
    Holds the nodes of `GraphDef.node`, in file order, in a graph region: a
    node may use a value defined later, and NextIteration back edges form
    cycles. `versions` is `GraphDef.versions`, `version` the deprecated
    field 3. `library` is present when the GraphDef has a `library` message;
    it holds the library's `gradient` and `registered_gradients` lists (the
    functions themselves are `graph.func` ops beside this op). `debug_info`
    is `GraphDef.debug_info`.

    ```mlir
    graph.graph versions(#graph.versions<producer = 27, min_consumer = 12>) {
      %x, %x_ctl = graph.node "Placeholder" "x" {dtype = f32, shape = #graph.shape<2>} : () -> (tensor<2xf32>)
    }
    ```
  }];
  let arguments = (ins OptionalAttr<Graph_VersionsAttr>:$versions,
                       OptionalAttr<I32Attr>:$version,
                       OptionalAttr<DictionaryAttr>:$library,
                       OptionalAttr<DictionaryAttr>:$debug_info);
  let regions = (region SizedRegion<1>:$body);
  let hasRegionVerifier = 1;
  let assemblyFormat = [{
    (`versions` `(` qualified($versions)^ `)`)? attr-dict-with-keyword $body
  }];
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins)>];
}

def Graph_NodeOp : Graph_Op<"node", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "one NodeDef: an operation of the dataflow graph";
  let description = [{
    `op_type` and `name` are the NodeDef's `op` and `name`; `device` is the
    requested device, `assigned_device` the one placement chose (not part of
    a GraphDef). `attrs` holds the NodeDef's attr map. The data inputs come
    first, then the control inputs (values of type `!graph.control`); each in
    the order the NodeDef lists them. The node produces its data outputs and
    a control token.

    `spellings` is present only when an input string of the GraphDef differs
    from the one export would write (`"x:0"` for `"x"`): it keeps the text so
    that a round trip reproduces the file exactly. `debug_info` and
    `full_type` are the NodeDef's `experimental_debug_info` and
    `experimental_type`, field by field.

    ```mlir
    %sum, %sum_ctl = graph.node "AddV2" "sum"(%a, %b) [%init_ctl] device("/device:CPU:0") {T = f32} : (tensor<*xf32>, tensor<*xf32>) -> (tensor<*xf32>)
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                       StrAttr:$op_type,
                       StrAttr:$name,
                       OptionalAttr<StrAttr>:$device,
                       OptionalAttr<StrAttr>:$assigned_device,
                       DictionaryAttr:$attrs,
                       OptionalAttr<StrArrayAttr>:$spellings,
                       OptionalAttr<DictionaryAttr>:$debug_info,
                       OptionalAttr<DictionaryAttr>:$full_type);
  let results = (outs Variadic<AnyType>:$outputs, Graph_ControlType:$control);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The data inputs: every input before the first control input.
    ::mlir::OperandRange getDataInputs();
    /// The control inputs, after the data inputs.
    ::mlir::OperandRange getControlInputs();
    /// The value of a TensorFlow attr, or null.
    ::mlir::Attribute getTFAttr(::llvm::StringRef attrName) {
      return getAttrs().get(attrName);
    }
    /// Typed views of TensorFlow attrs; empty when the attr is absent or of
    /// another kind.
    std::optional<int64_t> getTFInt(::llvm::StringRef attrName);
    std::optional<bool> getTFBool(::llvm::StringRef attrName);
    std::optional<std::string> getTFString(::llvm::StringRef attrName);
    std::optional<::llvm::SmallVector<int64_t>>
    getTFIntList(::llvm::StringRef attrName);

    /// A new node at the builder's insertion point. `inputs` holds the data
    /// inputs followed by the control inputs; `device` may be empty.
    static NodeOp create(::mlir::OpBuilder &builder, ::mlir::Location loc,
                         ::llvm::StringRef opType, ::llvm::StringRef name,
                         ::mlir::TypeRange outputTypes,
                         ::mlir::ValueRange inputs,
                         ::mlir::DictionaryAttr attrs,
                         ::llvm::StringRef device = {});
  }];
}

def Graph_FuncOp : Graph_Op<"func", [
    IsolatedFromAbove, Symbol, FunctionOpInterface, SingleBlock,
    RegionKindInterface, HasOnlyGraphRegion]> {
  let summary = "one FunctionDef of the function library";
  let description = [{
    The body holds the FunctionDef's `node_def` list in order and ends in a
    `graph.return` carrying `ret` and `control_ret`. Each block argument is an
    input of the signature; `arg_names` gives the name the body uses for it
    (`"x"`, `"x:1"` for an element of a list input, or `"^x"` for a
    `!graph.control` argument standing for control inputs on `x`). `signature` is the
    rest of the OpDef (output args, attr defs, flags) field by field; `attr`
    is `FunctionDef.attr`; `arg_attr` and `resource_arg_unique_id` are keyed
    by the decimal argument index, as in the proto.

    A FunctionDef with an empty name can never be called, and TensorFlow
    never looks inside it. Such a function is kept whole, field by field, in
    `uncallable`, under the symbol `__unnamed_function_<index>`, with an empty
    body; export writes it back unchanged.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       StrArrayAttr:$arg_names,
                       DictionaryAttr:$signature,
                       OptionalAttr<DictionaryAttr>:$attr,
                       OptionalAttr<DictionaryAttr>:$arg_attr,
                       OptionalAttr<DictionaryAttr>:$resource_arg_unique_id,
                       OptionalAttr<DictionaryAttr>:$uncallable);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    //===------------------------------------------------------------------===//
    // FunctionOpInterface
    //===------------------------------------------------------------------===//
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The terminator of the body.
    class ReturnOp getReturnOp();
  }];
}

def Graph_ReturnOp : Graph_Op<"return", [Terminator, HasParent<"FuncOp">]> {
  let summary = "a function's results: FunctionDef ret and control_ret";
  let description = [{
    Data operands are the `ret` values, named by `names` (output arg names);
    control operands after them are the `control_ret` entries, named by
    `control_names`. `spellings`, as on `graph.node`, keeps `ret` strings
    that differ from the ones export would write.
  }];
  let arguments = (ins Variadic<AnyType>:$operands, StrArrayAttr:$names,
                       StrArrayAttr:$control_names,
                       OptionalAttr<StrArrayAttr>:$spellings);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def Graph_ClusterOp : Graph_Op<"cluster", [
    SingleBlockImplicitTerminator<"YieldOp">, RegionKindInterface,
    HasOnlyGraphRegion]> {
  let summary = "the nodes of one replicated computation (`_tpu_replicate`)";
  let description = [{
    Formed by `graph-cluster-formation` from the nodes tagged
    `_tpu_replicate = "<cluster>"`. The body holds those nodes, in graph
    order and without the tag, and yields the values (data or control) that
    nodes outside the cluster use; the op's results are those values, then
    a control token.

    The cluster's `TPUReplicateMetadata` node is folded into the op:
    `metadata` is its attr map (topology, num_cores_per_replica, ...) less
    `num_replicas`, which a wrapping `graph.replicate` holds as `n` (as the
    MLIR bridge copies every metadata attr but that one), `metadata_name`
    and `metadata_device` its name and device, and the op's operands are its
    control inputs (usually the pivot). Inside the body, the block argument
    stands for the metadata's control token; outside, the op's `control`
    result does. Export writes the nodes back flat, tagged again, with the
    metadata node first.

    ```mlir
    %r, %r_ctl = graph.cluster "cluster" [%pivot_ctl] {metadata = {topology = "", ...}, metadata_name = "TPUReplicateMetadata"} -> (tensor<f32>) {
    ^bb0(%metadata_ctl: !graph.control):
      %y, %y_ctl = graph.node "Neg" "y"(%x) [%metadata_ctl] {T = f32} : (tensor<f32>) -> tensor<f32>
      graph.yield %y : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Graph_ControlType>:$control_inputs,
                       StrAttr:$cluster,
                       DictionaryAttr:$metadata,
                       StrAttr:$metadata_name,
                       OptionalAttr<StrAttr>:$metadata_device);
  let results = (outs Variadic<AnyType>:$outputs, Graph_ControlType:$control);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $cluster (`[` $control_inputs^ `]`)? attr-dict-with-keyword
    (`->` `(` type($outputs)^ `)`)? $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's stand-in for the metadata node's control token.
    ::mlir::BlockArgument getMetadataControl() {
      return getBody().front().getArgument(0);
    }
    /// `num_replicas` of the folded metadata: the wrapping replicate's `n`,
    /// else 1.
    int64_t getNumReplicas();
  }];
}

def Graph_ReplicateOp : Graph_Op<"replicate", [
    SingleBlockImplicitTerminator<"YieldOp">, RegionKindInterface,
    HasOnlyGraphRegion]> {
  let summary = "a cluster run by `n` replicas";
  let description = [{
    Wraps a `graph.cluster` whose metadata has `num_replicas = n > 1`. Each
    block argument is one `TPUReplicatedInput`. The replicated ones come
    first: block argument `i` has its `n` per-replica values at operands
    `[i*n, (i+1)*n)` (input-major). Packed ones (`is_packed = true` in their
    `input_nodes` entry's attrs) follow, as in TensorFlow: one operand each,
    which every replica reads. Results are output-major:
    result `k*n + r` is replica `r`'s copy of the `k`-th yielded value, which
    is where the `TPUReplicatedOutput` of that value put its output `r`. The
    last result is the cluster's control token.

    `input_nodes[i]` and `output_nodes[k]` keep the folded
    TPUReplicatedInput/Output nodes (`name`, `attrs`, optional `device`,
    `controls`: how many of the trailing control operands were theirs), so
    export writes them back; an empty dictionary in `output_nodes` marks a
    value that had no TPUReplicatedOutput (a control token, say), whose users
    read replica 0.

    Besides the cluster, the body may hold `graph.node`s: the host side of
    the computation that `graph-extract-outside-compilation` moved out of
    the cluster, which every replica runs beside its copy of the cluster.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, I64Attr:$n,
                       ArrayAttr:$input_nodes, ArrayAttr:$output_nodes);
  let results = (outs Variadic<AnyType>:$outputs, Graph_ControlType:$control);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`(` $inputs^ `:` type($inputs) `)`)? attr-dict-with-keyword
    (`->` `(` type($outputs)^ `)`)? $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The cluster it wraps.
    ClusterOp getCluster();
    /// Whether block argument `arg` is a packed input (one operand for all
    /// replicas); packed arguments follow the replicated ones.
    bool isPackedInput(unsigned arg);
    /// The operands block argument `arg` takes: `n` for a replicated input,
    /// one for a packed input.
    ::mlir::ValueRange getInputGroup(unsigned arg);
    /// The value block argument `arg` has in `replica`.
    ::mlir::Value getReplicaInput(unsigned arg, unsigned replica);
    /// The data operands, before the trailing control operands.
    unsigned getNumDataInputs();
  }];
}

def Graph_YieldOp : Graph_Op<"yield", [
    Terminator, ParentOneOf<["ClusterOp", "ReplicateOp"]>]> {
  let summary = "the values a cluster or replicate region hands out";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // CLEAVE_DIALECT_GRAPH_IR_GRAPHOPS_TD
