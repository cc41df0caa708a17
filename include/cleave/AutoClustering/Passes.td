//===- Passes.td - auto-clustering passes ------------------*- tablegen -*-===//

#ifndef CLEAVE_AUTOCLUSTERING_PASSES_TD
#define CLEAVE_AUTOCLUSTERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphAutoClusterPass : Pass<"graph-auto-cluster", "::mlir::ModuleOp"> {
  let summary = "Encapsulate the nodes that compile for the CPU into cluster functions";
  let description = [{
    TensorFlow's XLA auto-clustering (mark_for_compilation_pass, then
    encapsulate_subgraphs_pass) for Cleave's CPU target. The nodes a run
    needs (`fetches`, `targets`, stopping at `feeds`; every node when none is
    given) whose ops lower to the CPU form clusters that make no cycle
    through the nodes left out; each becomes a library function
    `cluster_<k>` called by a node with `_XlaCompiledKernel = true`, which
    graph-run --backend=cpu runs as native code. Reference values never
    cross a cluster boundary, resource handles only enter one. Fetched and
    targeted nodes keep their names (an IdentityN or NoOp forwards the
    call). With `report`, each needed node gets a remark saying which
    cluster it joined or why it stays interpreted.
  }];
  let options = [
    ListOption<"feeds", "feeds", "std::string", "tensors the run feeds">,
    ListOption<"fetches", "fetches", "std::string", "tensors the run fetches">,
    ListOption<"targets", "targets", "std::string", "nodes the run runs">,
    Option<"report", "report", "bool", "false",
           "a remark on every needed node: its cluster, or why not">,
  ];
}

#endif // CLEAVE_AUTOCLUSTERING_PASSES_TD
