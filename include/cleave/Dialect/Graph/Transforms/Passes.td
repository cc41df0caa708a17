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

def GraphReplicatePass : Pass<"graph-replicate", "::mlir::ModuleOp"> {
  let summary = "Tag a computation for N replicas as TensorFlow's tpu.replicate() does";
  let description = [{
    Rewrites the graph into what TensorFlow's Python `tpu.replicate()`
    would have built. `computation` names either a function of the library
    or a name scope of the graph:

    * a function: every top-level call of it (a node whose op is the
      function, or a `PartitionedCall`/`StatefulPartitionedCall` of it) is
      one replica's inputs and outputs; a single call is mirrored to every
      replica. The body is inlined once, its names made unique as
      `graph.unique_name` would (`dense` -> `dense_1`).
    * a name scope: the nodes named `<scope>/...` are the computation; each
      value they read from outside is a replicated input (the same value
      for every replica), each value read outside is an output, whose
      users read replica 0.

    Instead of `computation`, `outputs` names the tensors the computation
    computes (as the results of the Python function `tpu.replicate()`
    traces): the computation is the nodes they need, up to variables,
    placeholders and other computations, which become replicated inputs;
    the named tensors are its first outputs, whoever reads them.

    The pass adds `TPUReplicatedInput` `input<i>` (`index = i`), the
    cluster name (`cluster`, then `cluster_1`, ...), the pivot
    `<cluster>/pivot`, `TPUReplicateMetadata` with the metadata options,
    identities `replicated_input_<i>`, output identities on
    `TPU_REPLICATED_CORE:0`, `TPUReplicatedOutput` `output<i>`,
    `TPUCompilationResult` and the per-replica identities
    `output_<i>_shard_<r>` (NoOps `shard_<r>` when there are no outputs).
    Every node of the computation gets `_tpu_replicate = <cluster>`; as in
    `TPUReplicateContext.AddOp`, a node with no inputs and no control input
    from inside the computation gets a control input from the pivot. The
    input identities wait for the metadata, the per-replica identities for
    the function's control outputs.

    Outside compilation: each scope of `outside-compilation` is named by a
    counter ("0", "1", ...) in the order given; nodes that already carry
    `_xla_outside_compilation` keep it. With `allow-soft-placement`, nodes
    the device backend cannot compile go to `auto<N>` scopes (a node joins
    the scope of its producers when they all share one). A scope whose
    nodes sit on `TPU_REPLICATED_CORE:<k>` is recorded as `"<scope>:<k>"`
    in the metadata's `host_compute_core`, and its nodes leave that device.
    Without soft placement, uncompilable nodes are reported as a warning
    (the first 5, then `... and <n> more`).

    Errors, on the node: `TPU computations cannot be nested`, `Cannot nest
    outside_compilation clusters`, `Non-resource Variables are not supported
    inside TPU computations (operator name: <name>)`, `Replicas must have
    the same number of inputs. ...` and `Replicas must have matching input
    types. ...`; wrong options (no `computation`, `num-replicas` below 1,
    an unknown `step-marker-location`, ...) are named in the error.
  }];
  let options = [
    Option<"computation", "computation", "std::string", "",
           "the function or name scope to replicate">,
    ListOption<"outputs", "outputs", "std::string",
               "instead of computation: the tensors the computation "
               "computes; it is the nodes they need, up to variables and "
               "placeholders">,
    Option<"numReplicas", "num-replicas", "int64_t", "1",
           "number of replicas (TPUReplicateMetadata num_replicas)">,
    ListOption<"outsideCompilation", "outside-compilation", "std::string",
               "name scopes inside the computation that run on the host">,
    Option<"allowSoftPlacement", "allow-soft-placement", "bool", "false",
           "move ops the device cannot compile to the host (auto<N> scopes)">,
    Option<"numCoresPerReplica", "num-cores-per-replica", "int64_t", "1",
           "metadata num_cores_per_replica">,
    Option<"topology", "topology", "std::string", "",
           "metadata topology (a serialized TopologyProto)">,
    ListOption<"deviceAssignment", "device-assignment", "int64_t",
               "metadata device_assignment (flattened core assignment)">,
    Option<"useTpu", "use-tpu", "bool", "true", "metadata use_tpu">,
    Option<"stepMarkerLocation", "step-marker-location", "std::string",
           "\"STEP_MARK_AT_ENTRY\"", "metadata step_marker_location">,
    Option<"useSpmdForXlaPartitioning", "use-spmd-for-xla-partitioning",
           "bool", "false", "metadata use_spmd_for_xla_partitioning">
  ];
}

def GraphClusterFormationPass
    : Pass<"graph-cluster-formation", "::mlir::ModuleOp"> {
  let summary = "Form one graph.cluster per _tpu_replicate value";
  let description = [{
    Works on graphs tagged by `graph-replicate` or by TensorFlow. For each
    `TPUReplicateMetadata`, the nodes tagged with its `_tpu_replicate` value
    move into one `graph.cluster`, placed where the last of them was; nodes
    between them that depend on the cluster move after it. The cluster
    yields only the values (data or control) used outside it, and folds the
    metadata node into its attributes; members lose the tag.

    With `num_replicas > 1` the cluster is wrapped in a `graph.replicate`
    with `n = num_replicas`: each `TPUReplicatedInput` read by the cluster
    becomes one block argument with its `n` operands, and each
    `TPUReplicatedOutput` of a cluster result becomes `n` results (result
    `k*n + r` is replica `r` of the `k`-th yielded value). With one replica
    TPUReplicatedInput/Output are identities and go. A node outside the
    cluster may read a cluster value directly: it becomes a result (replica
    0 under replication). Members keep only TPU_REPLICATED_CORE devices.

    Export writes a clustered graph back flat and tagged.

    Errors, on the node: an empty `_tpu_replicate`; a metadata node without
    it, or two with the same value; a cluster without metadata; a missing or
    non-positive `num_replicas`; a node both feeding and fed by
    the cluster (`Op has cyclic dependency with a compilation cluster`); a
    TPUReplicatedInput/Output with the wrong number of replicas, or still
    used outside the cluster after folding.
  }];
}

def GraphExtractOutsideCompilationPass
    : Pass<"graph-extract-outside-compilation", "::mlir::ModuleOp"> {
  let summary = "Split each cluster into device nodes and the host nodes that run beside it";
  let description = [{
    TensorFlow's tf-extract-head-tail-outside-compilation and
    tf-extract-outside-compilation on the graph dialect, after
    graph-cluster-formation. The nodes of a cluster tagged
    `_xla_outside_compilation` leave it and lose the tag:

    - head: those that read only values from outside the cluster (or from
      other head nodes) move before it;
    - tail: those whose values only leave the cluster (or feed other tail
      nodes) move after it; the device values they read become results;
    - the rest, one group per `_xla_outside_compilation` value, become host
      nodes beside the cluster. In the cluster an `_XlaHostComputeMlir`
      stands for each group: it sends the device values the group reads on
      `host_compute_channel_<i>_args` and receives the values device nodes
      read back on `host_compute_channel_<i>_retvals`. On the host,
      `_XlaRecvAtHost` / `_XlaSendFromHost` (the V2 ops, keyed by the
      replica's `_TPUDeviceOrdinalPlaceholder`, inside a graph.replicate)
      answer it, reading `_XlaCompileMlirPlaceholderProgramKey`. `<i>` counts
      the groups that communicate. A direction with nothing to carry has no
      host node and an empty key. Values from outside the cluster and of
      other host groups are read directly; host values the cluster only
      yields leave the cluster directly.
    - If, While and function calls whose functions hold outside-compiled
      nodes get a host twin beside the cluster calling host copies of the
      functions (device copies keep the rest): an If's predicate crosses on
      `if_predicate_channel_<i>`, a While's condition on
      `while_condition_channel_<i>` (XlaSendToHost at the end of the device
      condition), so that the host takes the device's branches and
      iterations. Stateless If/While become stateful.

    Inside a graph.replicate the host nodes go into the replicate's body:
    every replica runs them. Otherwise they go beside the cluster.

    Errors, on the node: an empty `_xla_outside_compilation`; an
    outside-compiled node inside a function that an outside-compiled node
    calls; a string, resource or variant value crossing between host and
    device; a group whose host computation would wait on itself through
    device nodes; outside compilation in a computation with v1 control flow
    (functionalize it first); a tag left where extraction cannot reach it
    (an op with function attributes other than If, While and calls).
  }];
}

def GraphFunctionalizeLoopsPass
    : Pass<"graph-functionalize-loops", "::mlir::ModuleOp"> {
  let summary = "Replace TensorFlow v1 while loops by While nodes over cond and body functions";
  let description = [{
    The loop half of TensorFlow's `functionalize_control_flow`: each v1
    while loop (a frame of Enter, Merge, Switch, LoopCond, NextIteration and
    Exit nodes, as `tf.while_loop` writes it in TF 1.x) becomes one `While`
    node named after its LoopCond, over library functions
    `_functionalize_cond` and `_functionalize_body` (made unique). The
    While's inputs are the loop's state: the loop variables' initial
    values, then the invariants (constant Enters), which the body passes
    through; its first outputs replace the Exits. Control inputs of the
    Enters move to the While. Loops nested in a body are functionalized
    inside the body function in turn, in the graph and in every library
    function.

    Errors, on the node: inputs from different frames, an Enter without a
    frame name, an Exit outside a loop, and frames not in tf.while_loop's
    form.
  }];
}

def GraphFunctionalizeCondsPass
    : Pass<"graph-functionalize-conds", "::mlir::ModuleOp"> {
  let summary = "Replace TensorFlow v1 conditionals by If nodes over then and else functions";
  let description = [{
    The cond half of TensorFlow's `functionalize_control_flow`
    (`functionalize_cond.cc`): each v1 conditional (the Switch nodes that
    `tf.cond` puts on every value its branches read, the branch nodes, and
    the Merge nodes joining the two branches' results) becomes one `If`
    node. As in TensorFlow, every node gets a cond state (the Switch
    branches it lies on, looking through Identity nodes to the predicate),
    a Merge joins two states that differ in one predicate's branch, and the
    Merges on one predicate in one outer state are one conditional.
    Conditionals nested in a branch are functionalized first and their If
    moves into the outer branch; the graph and every library function are
    handled.

    Names follow TensorFlow: the If is `<first Merge>_if` (Merges sorted by
    name, which is also the order of the If's outputs), its functions are
    `_functionalize_if_then_branch` and `_functionalize_if_else_branch`
    (made unique: `..._1`, ...). The If's inputs are the predicate, then
    the values the Switches pass (one per value, in block order), then any
    other outside value a branch reads; constants without inputs are copied
    into the branches. Attrs: `then_branch`, `else_branch`, `Tcond`, `Tin`,
    `Tout`, and `output_shapes` when every Merge's shape is known. Where a
    Merge's `value_index` output is used, both functions return the index
    of their Merge input as a constant, as an extra If output after the
    values. A Switch output going straight to a Merge (an empty branch)
    returns the argument.

    Users of the Merges read the If (control users its control token), and
    each Merge's name stays for fetches: an `Identity` of its If output, an
    `IdentityN` of the value and the index where the index is used. Control
    inputs of the Switches, the Merges and the branch nodes from outside
    the conditional move to the If. Switch and Merge nodes of v1 while
    loops (frames, see graph-functionalize-loops) are left alone; a
    conditional inside a loop's body is handled once
    graph-functionalize-loops has made the body a function.

    Before (`tf.cond(p, lambda: x * 10, lambda: -x)`):
    ```mlir
    %sw:2, %sw_ctl = graph.node "Switch" "sw"(%x, %p) {T = f32} : (tensor<*xf32>, tensor<*xi1>) -> (tensor<*xf32>, tensor<*xf32>)
    %then, %then_ctl = graph.node "Mul" "then"(%sw#1, %ten) {T = f32} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    %else, %else_ctl = graph.node "Neg" "else"(%sw#0) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
    %out:2, %out_ctl = graph.node "Merge" "out"(%else, %then) {N = 2 : i64, T = f32} : (tensor<*xf32>, tensor<*xf32>) -> (tensor<*xf32>, tensor<*xi32>)
    ```
    After:
    ```mlir
    %out_if, %out_if_ctl = graph.node "If" "out_if"(%p, %x) {Tcond = i1, Tin = [f32], Tout = [f32], else_branch = #graph.func<@_functionalize_if_else_branch, {}>, output_shapes = [], then_branch = #graph.func<@_functionalize_if_then_branch, {}>} : (tensor<*xi1>, tensor<*xf32>) -> tensor<*xf32>
    %out, %out_ctl = graph.node "Identity" "out"(%out_if) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
    graph.func @_functionalize_if_else_branch(%arg0: tensor<*xf32>) -> tensor<*xf32> ... {
      %else, %else_ctl = graph.node "Neg" "else"(%arg0) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
      graph.return %else : tensor<*xf32>
    }
    ```

    Errors, on the node, in functionalize_cond's words where it has them:
    a Merge without two inputs (`only has <n> inputs, while only merge
    nodes with two inputs supported.`), `Merge node has input that's not in
    any CondContext`, `Unable to determine predicate for merge node` (its
    inputs' states do not differ in one predicate's two branches, as when
    they come from Switches on different predicates), `Merge of two inputs
    that differ on more than one predicate`, `Graph contains node with
    inputs predicated on incompatible predicates` (a node reading both
    branches), a Switch `whose branches never meet in a Merge`, and a
    control input from a Switch (not supported).
  }];
}

def GraphGradientPass : Pass<"graph-gradient", "::mlir::ModuleOp"> {
  let summary = "Add the gradients of ys with respect to xs, as tf.gradients() does";
  let description = [{
    Reverse-mode differentiation of the top-level graph, following
    TensorFlow's `gradients_util.py`: the nodes between `xs` and `ys` are
    visited in reverse order, each op's gradient rule (from the op registry)
    adds nodes named `<scope>/<op>_grad/...`, and gradients reaching one
    tensor from several consumers are summed (`<scope>/AddN`, one per
    device, then a final sum). `<scope>` is `name` made unique
    (`gradients`, then `gradients_1`, ...); the invocation's `gradient_uid`
    is `<scope>/uid`.

    Default `grad-ys` are ones of each y's shape (`<scope>/Shape`,
    `<scope>/grad_ys_<i>`, `<scope>/Fill`); given ones are tensors of the
    graph, wrapped in identities `<scope>/grad_ys_<i>`.

    With `colocate-gradients-with-ops`, the gradient nodes of op X take X's
    device and `_class = ["loc:@X"]`, and when X is outside-compiled in
    cluster `C`, they go to outside-compilation cluster `<root of C>.<uid>`
    (`0.gradients/uid`): gradients of host ops stay on the host, one cluster
    per invocation. Gradient nodes carry X's `_tpu_replicate`.

    `result-names` adds one Identity per x with that name, holding its
    gradient, for graph-run and later passes to fetch.

    Calls, If/Case and While are differentiated through generated gradient
    functions; a TensorFlow v1 while loop (an Enter/Merge/Switch/LoopCond/
    NextIteration/Exit frame) through its functional form
    (`_functionalize_cond`, `_functionalize_body`), as one node whose
    inputs are the loop's state and whose outputs are its Exits.

    Errors, on the node: `No gradient defined for operation '<name>' (op
    type: <type>)`, a rule's own errors, `Passed <n> grad_ys for <m> ys`,
    the grad_ys type errors of `_DefaultGradYs`, unknown tensors in the
    options, ys or xs inside a v1 loop, and malformed loop frames.
  }];
  let options = [
    ListOption<"ys", "ys", "std::string", "tensors to differentiate (node[:port])">,
    ListOption<"xs", "xs", "std::string", "tensors to differentiate with respect to">,
    ListOption<"gradYs", "grad-ys", "std::string",
               "initial gradients of the ys (default: ones)">,
    ListOption<"stopGradients", "stop-gradients", "std::string",
               "tensors held constant: no gradient flows through them">,
    Option<"aggregationMethod", "aggregation-method", "std::string",
           "\"add_n\"", "how gradients of one tensor are summed: add_n, tree "
           "or accumulate_n">,
    Option<"gateGradients", "gate-gradients", "bool", "false",
           "group each op's input gradients with a tuple">,
    Option<"colocateGradientsWithOps", "colocate-gradients-with-ops", "bool",
           "false", "place each gradient with its forward op">,
    Option<"unconnectedGradients", "unconnected-gradients", "std::string",
           "\"none\"", "gradient of an x the ys do not depend on: none or zero">,
    Option<"scopeName", "name", "std::string", "\"gradients\"",
           "name scope of the added nodes">,
    ListOption<"resultNames", "result-names", "std::string",
               "names of Identity nodes holding the gradients of the xs">
  ];
}

def GraphMinimizePass : Pass<"graph-minimize", "::mlir::ModuleOp"> {
  let summary = "Add a training step: gradients, optimizer updates and the train op, as optimizer.minimize() does";
  let description = [{
    TensorFlow 1.x `Optimizer.minimize(loss, global_step, var_list)`: the
    gradients of `loss` with respect to the variables (`var-list`, default
    every variable of the graph but the global step), gated per op as
    `GATE_OP` does, then `apply_gradients` in scope `GradientDescent`,
    `Momentum` or `Adam` (made unique): the optimizer's slots (`w/Momentum`;
    `w/Adam`, `w/Adam_1`, `beta1_power`, `beta2_power`) with their
    initializers, its constants (`<scope>/learning_rate`, ...), one
    `Apply*` per variable in `<scope>/update_<var>/`, colocated with the
    variable, and the train op: a NoOp named `<scope>` grouping the
    updates, or with `global-step` a NoOp `<scope>/update` and the
    `AssignAdd` named `<scope>` that increments the step after it. The new
    variables' initializers are added to the `init` node (created when the
    graph has none). With `create-global-step`, a global step the graph
    lacks is created first, as `tf.compat.v1.train.create_global_step()`
    does (resource variable, int64, zero-initialized by `init`).

    With `cross-replica`, the loss lies in a computation replicated over N
    replicas, as TPUEstimator's CrossShardOptimizer wraps the optimizer:
    with `cross-replica-reduction=mean` the loss is scaled by 1/N
    (`<loss>/cross_replica_mean`), gradients are taken inside the
    computation (a variable it reads through a TPUReplicatedInput is
    differentiated at its replicated input), each gradient is summed over
    the replicas (`CrossReplicaSum`, group [[0..N-1]]), and the updates
    apply the summed gradient once, outside the computation.

    With `num-shards=N` instead, the graph is the step of one shard of a
    computation that is not replicated yet (as `model_fn` builds it inside
    TPUEstimator's device loop, which graph-training-loop then builds and
    replicates): the same scaling and `CrossReplicaSum`s, untagged, and the
    updates belong to the step, so each replica applies the summed
    gradients to its copy of the variables.

    With `combine-all-reduce` (and `num-shards`), the gradients of one
    dtype whose variables have known shapes are flattened, concatenated,
    summed by one `CrossReplicaSum` and split back
    (`CrossReplicaSum/flatten`, `/concat`, `/split`, `/unflatten`), as
    XLA's all-reduce combiner does: one collective per step instead of one
    per variable, which matters when each crosses processes.

    With `num-processes=P`, the replicas of P processes sum their
    gradients together (the runtime all-reduces each CrossReplicaSum over
    every replica across the processes too): the mean scales the loss by
    1/(N x P).

    Errors: no variables, `No gradients provided for any variable, ...`,
    unknown nodes in the options, a cross-replica loss outside any
    replicated computation or a bad reduction, and the gradient errors of
    graph-gradient.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "", "the tensor to minimize">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd, momentum or adam">,
    Option<"learningRate", "learning-rate", "double", "0.01", "learning rate">,
    Option<"momentum", "momentum", "double", "0.9", "Momentum's momentum">,
    Option<"useNesterov", "use-nesterov", "bool", "false",
           "Momentum with Nesterov's update">,
    Option<"beta1", "beta1", "double", "0.9", "Adam's beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam's beta2">,
    Option<"epsilon", "epsilon", "double", "1e-08", "Adam's epsilon">,
    Option<"decaySteps", "decay-steps", "int64_t", "0",
           "decay the learning rate exponentially by the global step "
           "(tf.compat.v1.train.exponential_decay): every this many steps "
           "by decay-rate (0: a constant rate)">,
    Option<"decayRate", "decay-rate", "double", "1",
           "exponential decay's rate">,
    Option<"staircase", "staircase", "bool", "false",
           "exponential decay in whole steps of decay-steps">,
    ListOption<"varList", "var-list", "std::string",
               "the variables to train (default: all but the global step)">,
    Option<"globalStep", "global-step", "std::string", "",
           "the variable the train op increments">,
    Option<"createGlobalStep", "create-global-step", "bool", "false",
           "create the global-step variable when the graph has none "
           "(tf.compat.v1.train.create_global_step)">,
    Option<"aggregationMethod", "aggregation-method", "std::string",
           "\"add_n\"", "as graph-gradient's">,
    Option<"colocateGradientsWithOps", "colocate-gradients-with-ops", "bool",
           "false", "as graph-gradient's">,
    Option<"crossReplica", "cross-replica", "bool", "false",
           "all-reduce the gradients of a replicated loss "
           "(CrossShardOptimizer)">,
    Option<"numShards", "num-shards", "int64_t", "0",
           "the step of one of N shards not replicated yet: all-reduce "
           "its gradients over N (CrossShardOptimizer in model_fn)">,
    Option<"crossReplicaReduction", "cross-replica-reduction", "std::string",
           "\"mean\"", "mean (scale the loss by 1/replicas) or sum">,
    Option<"combineAllReduce", "combine-all-reduce", "bool", "false",
           "sum the gradients of one dtype as one flat buffer (one "
           "CrossReplicaSum per step, XLA's all-reduce combiner) instead of "
           "one CrossReplicaSum each; with num-shards">,
    Option<"numProcesses", "num-processes", "int64_t", "1",
           "the processes whose replicas the CrossReplicaSums span "
           "(synchronous training across processes): mean scales the loss "
           "by 1/(replicas x processes)">,
    Option<"initName", "init", "std::string", "\"init\"",
           "the node that runs the variables' initializers">
  ];
}

def GraphTowersPass : Pass<"graph-towers", "::mlir::ModuleOp"> {
  let summary = "Replicate a one-tower model over local devices, as replicate_model_fn does";
  let description = [{
    `tf.contrib.estimator.replicate_model_fn` as a pass over the graph of
    one tower (the forward pass and its loss): the batch-major `inputs` are
    split along dimension 0 on the consolidation device `/device:CPU:0`
    (`split_inputs/split`), the tower is copied once per device under the
    name scopes `''`, `tower_1`, ... (nodes placed on their tower's
    device), sharing one copy of each variable, placed on `/device:CPU:0`
    (`variable-distribution=shared-local-parameter-server`) or round-robin
    over the devices (`shared-round-robin`).

    In `train` mode each `minimize` loss is minimized as by
    `TowerOptimizer(optimizer).minimize(loss)`: each tower's loss scaled by
    `loss-reduction` (`averaged_loss`, loss / towers, for every reduction but
    `sum`), its gradients (`tower_<i>/gradients`), a NoOp
    `train_op_placeholder` in every tower but the last, and in the last
    the gradients of all towers summed on each variable's device
    (`gradient_aggregating/AddN`) and applied once in the first tower's
    scope (`GradientDescent`, ...). The towers' losses, scaled again, are
    summed into `loss` on the consolidation device (train and eval). In
    `eval` mode each tower has its own metric variables (those only the
    `metric-updates` and `metric-values` read), and `group_deps` adds the
    other towers' into the first tower's and zeroes them after every
    tower's update (`_reduce_metric_variables`). In
    `predict` mode the `predictions` of the towers are concatenated along
    dimension 0 on the consolidation device. One device places the tower
    and adds neither split nor reduction.

    Errors, in the seed's words where it has them: `Tower losses need to be
    reduced in some way, yet none reduction is specified.`, `Batch size <n>
    needs to be divisible by the number of GPUs, which is <k>.`, `Please
    wrap optimizers with TowerOptimizer in order to use replicate_model_fn
    with multiple `devices`.` (the graph brings its own update), `Loss must
    be scalar, given: ...`, devices that do not exist, unknown tensors in
    the options, and variables whose initializer reads a split input.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"train\"",
           "train, eval or predict (the Estimator mode)">,
    Option<"loss", "loss", "std::string", "",
           "the tower's loss (train and eval)">,
    ListOption<"minimize", "minimize", "std::string",
               "the losses TowerOptimizer.minimize is called on, in order "
               "(default: loss)">,
    ListOption<"inputs", "inputs", "std::string",
               "batch-major tensors split across the towers (default: the "
               "non-scalar placeholders the tower reads)">,
    ListOption<"predictions", "predictions", "std::string",
               "key=tensor (or tensor, keyed by its node): what predict "
               "mode concatenates across the towers, named after the key">,
    ListOption<"metricValues", "metric-values", "std::string",
               "eval: the value tensors of the eval metrics (tf.metrics' "
               "first results)">,
    ListOption<"metricUpdates", "metric-updates", "std::string",
               "eval: their update ops, in the same order">,
    ListOption<"devices", "devices", "std::string",
               "the towers' devices (default: every device)">,
    Option<"numDevices", "num-devices", "int64_t", "0",
           "the machine's virtual CPU devices, as graph-run --devices "
           "(0: one per core)">,
    Option<"variableDistribution", "variable-distribution", "std::string",
           "\"shared-local-parameter-server\"",
           "shared-local-parameter-server (variables on /CPU:0) or "
           "shared-round-robin (over the devices)">,
    Option<"lossReduction", "loss-reduction", "std::string",
           "\"sum-by-nonzero-weights\"",
           "sum, mean, sum-over-batch-size, sum-by-nonzero-weights "
           "(tf.losses.Reduction)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd, momentum or adam">,
    Option<"learningRate", "learning-rate", "double", "0.01", "learning rate">,
    Option<"momentum", "momentum", "double", "0.9", "Momentum's momentum">,
    Option<"useNesterov", "use-nesterov", "bool", "false",
           "Momentum with Nesterov's update">,
    Option<"beta1", "beta1", "double", "0.9", "Adam's beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam's beta2">,
    Option<"epsilon", "epsilon", "double", "1e-08", "Adam's epsilon">,
    Option<"globalStep", "global-step", "std::string", "",
           "the variable the train op increments (a variable named "
           "global_step is never a model variable)">,
    Option<"createGlobalStep", "create-global-step", "bool", "false",
           "create the global-step variable when the graph has none "
           "(tf.compat.v1.train.create_global_step)">,
    Option<"aggregationMethod", "aggregation-method", "std::string",
           "\"add_n\"", "as graph-gradient's">,
    Option<"colocateGradientsWithOps", "colocate-gradients-with-ops", "bool",
           "false", "as graph-gradient's">,
    Option<"initName", "init", "std::string", "\"init\"",
           "the node that runs the variables' initializers">
  ];
}

def GraphTrainingLoopPass
    : Pass<"graph-training-loop", "::mlir::ModuleOp"> {
  let summary = "Put a mode's model on the device as TPUEstimator does: infeed, replicas, outfeed";
  let description = [{
    From the graph `model_fn` builds for one mode, the device side
    TPUEstimator builds around it, with TensorFlow's names:

    * the placeholders `inputs` (features and labels, in order) become the
      outputs of `InfeedQueue/dequeue` (`InfeedDequeueTuple`, shapes with
      the batch dimension `batch-size`, each replica's
      `params['batch_size']`); on the host, each replica r has placeholders
      `input_pipeline_task0/shard_<r>/<name>` feeding
      `InfeedQueue/enqueue/<r>` (`InfeedEnqueueTuple`, `device_ordinal`
      r);
    * the computation, replicated over `num-replicas` replicas by
      graph-replicate (`outputs` = the loss and the outfed tensors), is
      what they need, up to variables;
    * the `outfeed` tensors (metric_fn's tensors in eval, predictions in
      predict) leave through `OutfeedEnqueueTuple`; the host dequeues them
      with one `OutfeedDequeueTuple` per replica (`OutfeedDequeueTuple`,
      `OutfeedDequeueTuple_1`, ...; `device_ordinal` r) and concatenates
      the replicas' along the batch dimension.

    In train and eval mode (`device-loop`, the default), the step is
    TPUEstimator's device loop: what the loss, `train-op` and the outfeed
    need, up to the variables, moves into the library function
    `while_body` of a `While` (`while`) over (i, n, loss, captured...),
    n read from the resource variable `tpu_estimator/iterations_per_loop`
    (which the host sets before each launch); the body carries the step's
    loss (train) or the running sum (eval) and counts i after the update
    and the outfeed. In train mode, run graph-minimize with `num-shards`
    first (CrossShardOptimizer inside the step). In predict mode the loop is
    TPUEstimator's `_predict_on_tpu_system`: a placeholder
    `signals/stopping` (bool [batch-size, 1], `_StopSignals`) joins the
    infeed, the `While` runs over (stop, captured...) while not stop, and
    each iteration outfeeds the predictions and the batch's signal and
    carries the signal on (`stopping_signal`), so the loop ends after the
    batch the host flags. With `device-loop=false` the computation is one
    step (in train mode, graph-minimize with `cross-replica` then adds the
    step).

    Errors, with TensorFlow's wording: inputs without a static shape but
    for the batch (`The features to the model returned by input_fn must
    have static shape. ...`), scalar outfed tensors (`All tensors outfed
    from TPU should preserve batch size dimension, but got scalar ...`),
    outfed tensors of dynamic shape (`The tensor with key (...) in
    TPUEstimatorSpec.predictions has dynamic shape (should be static).
    ...`); a placeholder whose batch dimension is not `batch-size`, and
    bad options.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"train\"",
           "train, eval or predict">,
    ListOption<"inputs", "inputs", "std::string",
               "the feature and label placeholders, in infeed order">,
    ListOption<"labels", "labels", "std::string",
               "which of inputs are labels (for messages)">,
    Option<"batchSize", "batch-size", "int64_t", "0",
           "each replica's batch (params['batch_size'])">,
    Option<"numReplicas", "num-replicas", "int64_t", "1",
           "replicas (TPUConfig num_shards)">,
    Option<"loss", "loss", "std::string", "", "the scalar loss (train, eval)">,
    Option<"trainOp", "train-op", "std::string", "",
           "the op of the training step (train, with device-loop)">,
    Option<"deviceLoop", "device-loop", "bool", "true",
           "loop over the step on the device: iterations_per_loop times "
           "per launch (train, eval), until the stopping signal "
           "(predict)">,
    ListOption<"outfeed", "outfeed", "std::string",
               "tensors for the host: metric_fn's (eval), the predictions "
               "(predict)">
  ];
}

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_PASSES_TD
