//===- HostProgram.h - a run's orchestration in a fixed order ---*- C++ -*-===//
//
// A run of a graph without v1 control flow needs no dataflow executor: its
// units (nodes, cluster and replicate regions) can run in one order fixed
// before the run, each reading and writing numbered slots. That order is
// the host program: what TensorFlow's bridge leaves to the host around the
// device computation (the feeds through TPUReplicatedInput, one launch of
// the device computation per replica, the host functions beside it,
// TPUReplicatedOutput to the fetches), as straight-line calls of runtime
// entry points.
//
// A program has scopes: the run's graph, and the body of each cluster and
// replicate region in it (a replicate's body runs once per replica, each
// with its own slots). Each scope has a main sequence and lanes. A lane
// holds the nodes that wait on the device (host receives, and what depends
// on them): when a device computation of the scope may wait on the host,
// each lane runs on a thread of its own beside the main sequence, else
// after it on the same thread (no thread, no handoff).
//
// HostProgramCompiler (lib/Runtime) compiles each sequence to native code;
// without one the interpreter steps through the sequences itself.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_INTERPRETER_HOSTPROGRAM_H
#define CLEAVE_INTERPRETER_HOSTPROGRAM_H

#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cleave::interp {

struct HostStep {
  enum class Kind : uint8_t {
    /// Runs a node's kernel (a compiled cluster's call node included).
    Node,
    /// Runs a cluster region's body scope on this thread.
    Cluster,
    /// Runs a replicate region's body scope once per replica, in parallel.
    Replicate,
    /// Starts a lane of this scope on a thread of its own.
    StartLane,
    /// Waits for the lanes this scope started.
    JoinLanes,
  };
  Kind kind;
  /// The node, cluster or replicate op (null for lane steps).
  mlir::Operation *unit = nullptr;
  /// Slots of the scope: a node's data inputs; a region's inputs are its
  /// body scope's imports.
  llvm::SmallVector<int32_t, 4> inputs;
  /// Slots of the scope the unit's data results go to (-1: unused).
  llvm::SmallVector<int32_t, 2> outputs;
  /// Cluster and Replicate: the body's scope. StartLane: the lane's
  /// sequence.
  int32_t target = -1;
};

struct HostSequence {
  std::vector<HostStep> steps;
};

struct HostScope {
  int32_t numSlots = 0;
  /// The sequence that runs the scope.
  int32_t main = -1;
  /// A value the body reads from the enclosing scope: its slot here, and
  /// its slot there, per replica (one entry unless it is a replicate's
  /// block argument).
  struct Import {
    int32_t slot;
    llvm::SmallVector<int32_t, 2> outer;
  };
  std::vector<Import> imports;
  /// The slots the body yields (the run's fetches, for the graph).
  std::vector<int32_t> results;
};

struct HostProgram {
  /// Scope 0 is the run's graph.
  std::vector<HostScope> scopes;
  std::vector<HostSequence> sequences;
  /// The graph's slots that feeds fill, in the order of the run's feeds.
  std::vector<int32_t> feedSlots;
  /// Whether some lane runs on a thread of its own.
  bool threadedLanes = false;
  /// The program as text (one line a step), for --dump-host-program and
  /// tests.
  std::string describe() const;
};

/// A sequence compiled to native code: runs the steps of sequence
/// `sequence` with `frame` (the scope's slots) through the runtime's entry
/// points; returns 0 on success.
class CompiledHostProgram {
public:
  virtual ~CompiledHostProgram() = default;
  virtual int32_t runSequence(int32_t sequence, void *run, void *frame) = 0;
};

/// Compiles host programs (lib/Runtime: through LLVM).
class HostProgramCompiler {
public:
  virtual ~HostProgramCompiler() = default;
  /// Native code for every sequence of `program`, or null with `error`.
  virtual std::unique_ptr<CompiledHostProgram>
  compile(const HostProgram &program, std::string &error) = 0;
};

/// The runtime entry points compiled sequences call, one per step kind:
/// each runs step `step` of sequence `sequence` on `frame` and returns 0 on
/// success, non-zero when the step failed (its error already reported).
extern "C" {
int32_t cleave_host_run_node(void *run, void *frame, int32_t sequence,
                             int32_t step);
int32_t cleave_host_run_cluster(void *run, void *frame, int32_t sequence,
                                int32_t step);
int32_t cleave_host_run_replicas(void *run, void *frame, int32_t sequence,
                                 int32_t step);
int32_t cleave_host_start_lane(void *run, void *frame, int32_t sequence,
                               int32_t step);
int32_t cleave_host_join_lanes(void *run, void *frame, int32_t sequence,
                               int32_t step);
}

/// TensorFlow v1 control flow (Switch, Merge, loop frames): ops that need
/// the dataflow executor's deadness and frames, so no host program.
bool isV1ControlFlow(llvm::StringRef opType);

/// The entry point that runs steps of `kind`, and its symbol name.
struct HostEntryPoint {
  const char *name;
  int32_t (*function)(void *run, void *frame, int32_t sequence, int32_t step);
};
const HostEntryPoint &getHostEntryPoint(HostStep::Kind kind);
/// Every step kind, in the order of HostStep::Kind.
constexpr HostStep::Kind kHostStepKinds[] = {
    HostStep::Kind::Node, HostStep::Kind::Cluster, HostStep::Kind::Replicate,
    HostStep::Kind::StartLane, HostStep::Kind::JoinLanes};

} // namespace cleave::interp

#endif // CLEAVE_INTERPRETER_HOSTPROGRAM_H
