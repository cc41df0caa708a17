//===- AutoClustering.h - compile the compilable parts of a graph -*- C++ -*-===//
//
// As TensorFlow's XLA auto-clustering (mark_for_compilation_pass, then
// encapsulate_subgraphs_pass): the nodes a run needs whose ops lower to the
// CPU form clusters that create no cycle through the nodes left out, and
// each cluster becomes a library function `cluster_<k>` called by one node
// (`_XlaCompiledKernel = true`) that a compiled-call handler runs as native
// code. Fetched and targeted nodes that moved into a cluster keep their
// names in the graph: an IdentityN (or a NoOp) of that name forwards the
// call's results.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_JIT_AUTOCLUSTERING_H
#define CLEAVE_JIT_AUTOCLUSTERING_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace cleave::jit {

/// What a run feeds, fetches and runs for effect (tensor and node names as
/// graph-run takes them); all empty: every node of the graph is needed.
struct RunSignature {
  std::vector<std::string> feeds, fetches, targets;
};

/// Where each needed node went: a cluster, or why not.
struct ClusteringDecision {
  std::string node, cluster, reason;
};

/// Clusters and encapsulates the top-level graph of `module` in place.
/// `decisions` lists every needed node in graph order. In a formed
/// replicated graph each device computation (a graph.cluster's body) is
/// clustered first, all of its nodes needed; then the top-level graph, its
/// graph.cluster / graph.replicate regions taking part as units that never
/// compile. The host nodes beside a replica's cluster stay interpreted.
mlir::LogicalResult
clusterForCompilation(mlir::ModuleOp module, const RunSignature &signature,
                      std::vector<ClusteringDecision> &decisions);

} // namespace cleave::jit

#endif // CLEAVE_JIT_AUTOCLUSTERING_H
