//===- Execution.h - what the executor and host programs share -*- C++ -*-===//
//
// Private to CleaveExecutor. A run executes its units (nodes, and the
// clusters and replicate regions graph-cluster-formation made) either on
// the dataflow executor (Executor.cpp: deadness, v1 frames) or as a
// host program (HostProgram.cpp: a fixed order, for graphs without v1
// control flow). Both run a node's kernel, and a replicated computation's
// replicas, the same way, through these.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_EXECUTOR_EXECUTION_H
#define CLEAVE_LIB_EXECUTOR_EXECUTION_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Executor/Executor.h"
#include "cleave/Executor/HostProgram.h"
#include "cleave/Runtime/Rendezvous.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>
#include <vector>

namespace cleave::interp {

/// The ops a run schedules: nodes, and the clusters and replicate regions
/// that graph-cluster-formation made of them.
inline bool isUnit(mlir::Operation *op) {
  return op &&
         mlir::isa<graph::NodeOp, graph::ClusterOp, graph::ReplicateOp>(op);
}

/// The state of the replica the calling thread runs (null outside any
/// replica): each replica of a step works on a copy of the run's state.
State *getReplicaState();
/// Sets the calling thread's replica (runtime::getCurrentReplica) and its
/// state for the lifetime of the object.
class ReplicaStateScope {
public:
  ReplicaStateScope(int64_t replica, State *state);
  ~ReplicaStateScope();

private:
  runtime::ReplicaScope replica;
  State *previous;
};

/// The values each unit reads: a node's inputs; for a cluster or
/// replicate region, its operands, then the values its body captures, each
/// once (found by walking the body, hence kept).
class UnitInputs {
public:
  llvm::ArrayRef<mlir::Value> get(mlir::Operation *unit);

private:
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>> inputs;
};

/// Whether `node` runs on the host side of a replica: in a replicate
/// region's body, beside its cluster.
inline bool isReplicaHostNode(graph::NodeOp node) {
  return mlir::isa<graph::ReplicateOp>(node->getParentOp());
}

/// While alive (and `active`), the calling thread's kernels use the run's
/// shared state even inside a replica: the replicas' host sides are one
/// host, so an outside-compiled update of a host variable by each replica
/// lands, one after the other, as TensorFlow's host launches run.
class HostSideScope {
public:
  explicit HostSideScope(bool active);
  ~HostSideScope();

private:
  bool previous;
};
/// Whether the calling thread is inside an active HostSideScope.
bool isOnReplicaHost();

/// After every replica of a step finished: what the replicas wrote (each
/// into its own copy of the state, made when `atStart` was the shared
/// variables) is written back, the lowest replica's value where several
/// wrote one variable (mirrored variables get the same update
/// everywhere). What the host sides wrote to the shared state meanwhile
/// stays.
void mergeReplicaStates(State &shared, std::vector<State> &copies,
                        const llvm::StringMap<Tensor> &atStart);

/// Reports which replica of `replicate` failed first, when one did.
void reportReplicaFailure(graph::ReplicateOp replicate,
                          runtime::Rendezvous &rendezvous);

/// The host program of a run of `body`: `units` (in block order) run,
/// `fedValues` are fed (in the run's feed order), `fetchValues` fetched.
/// Fails, saying why in `reason`, when the run needs the dataflow executor
/// (v1 control flow, a cycle).
mlir::FailureOr<HostProgram>
buildHostProgram(Executor &interpreter, mlir::ModuleOp module,
                 mlir::Block &body, llvm::ArrayRef<mlir::Operation *> units,
                 llvm::ArrayRef<mlir::Value> fedValues,
                 llvm::ArrayRef<mlir::Value> fetchValues, std::string &reason);

/// Runs `program` (through `compiled` when given) on `feeds`; returns the
/// fetches. `validated` holds the nodes whose attrs were checked, across
/// runs. The caller does not hold the execution lock.
mlir::FailureOr<std::vector<Tensor>>
runHostProgram(Executor &interpreter, const HostProgram &program,
               CompiledHostProgram *compiled, ValidatedNodes &validated,
               llvm::ArrayRef<Tensor> feeds);

} // namespace cleave::interp

#endif // CLEAVE_LIB_EXECUTOR_EXECUTION_H
