//===- HostProgram.cpp - a run's orchestration in a fixed order -----------===//
//
// Building a run's host program (the order of its units, their slots, the
// lanes of nodes that wait on the device) and the runtime entry points its
// steps call. See cleave/Executor/HostProgram.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/Executor/HostProgram.h"

#include "Execution.h"

#include "cleave/Runtime/Rendezvous.h"
#include "cleave/Runtime/ThreadCache.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <future>
#include <queue>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;
using namespace cleave::runtime;

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

/// Ops whose semantics need the dataflow executor: deadness (Switch,
/// Merge) and v1 loop frames.
bool cleave::interp::isV1ControlFlow(StringRef op) {
  return llvm::is_contained({"Switch", "RefSwitch", "_SwitchN", "Merge",
                             "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
                             "NextIteration", "RefNextIteration", "LoopCond",
                             "ControlTrigger"},
                            op);
}

namespace {
/// Whether a device computation may wait for the host: a device-side
/// receive in `op`'s body or in a function it calls.
class HostWaits {
public:
  explicit HostWaits(ModuleOp module) : module(module) {}

  bool deviceMayWait(Operation *region) {
    bool waits = false;
    region->walk([&](NodeOp node) {
      if (receivesFromHost(node)) {
        waits = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return waits;
  }

private:
  bool receivesFromHost(NodeOp node) {
    StringRef op = node.getOpType();
    if (op == "XlaRecvFromHost" || op == "InfeedDequeue" ||
        op == "InfeedDequeueTuple")
      return true;
    if (op == "_XlaHostComputeMlir") {
      auto key = dyn_cast_or_null<StringAttr>(node.getTFAttr("recv_key"));
      if (key && !key.getValue().empty())
        return true;
    }
    for (auto [attr, name] : getCalledFunctions(node)) {
      auto func = module.lookupSymbol<FuncOp>(name);
      if (!func)
        continue;
      auto [it, inserted] = functions.try_emplace(func, false);
      if (inserted) // a recursive call sees `false` meanwhile
        functions[func] = deviceMayWait(func);
      if (functions[func])
        return true;
    }
    return false;
  }

  ModuleOp module;
  llvm::DenseMap<Operation *, bool> functions;
};

/// The slots of one scope; values defined outside it are imported from the
/// enclosing scope's slots.
struct ScopeSlots {
  ScopeSlots *parent = nullptr;
  Block *body = nullptr;
  /// The replicate whose body this is (its block arguments are per
  /// replica).
  ReplicateOp replicate;
  HostProgram *program = nullptr;
  int32_t scope = 0;
  llvm::DenseMap<Value, int32_t> slots;

  HostScope &getScope() { return program->scopes[scope]; }
  int32_t fresh() { return getScope().numSlots++; }

  /// The slot of `v` here (-1 for control values).
  int32_t get(Value v) {
    if (isa<ControlType>(v.getType()))
      return -1;
    if (auto it = slots.find(v); it != slots.end())
      return it->second;
    int32_t slot = fresh();
    slots[v] = slot;
    bool definedHere = isa<BlockArgument>(v)
                           ? v.getParentBlock() == body && !replicate
                           : v.getDefiningOp()->getBlock() == body;
    if (definedHere || !parent)
      return slot;
    HostScope::Import import{slot, {}};
    if (replicate && isa<BlockArgument>(v) && v.getParentBlock() == body) {
      unsigned arg = cast<BlockArgument>(v).getArgNumber();
      for (int64_t r = 0; r < replicate.getN(); ++r)
        import.outer.push_back(parent->get(replicate.getReplicaInput(arg, r)));
    } else {
      import.outer.push_back(parent->get(v));
    }
    getScope().imports.push_back(std::move(import));
    return slot;
  }
};

class ProgramBuilder {
public:
  ProgramBuilder(Executor &interpreter, ModuleOp module, HostProgram &program,
                 ArrayRef<Value> fed, std::string &reason)
      : interpreter(interpreter), waits(module), program(program),
        fed(fed.begin(), fed.end()), reason(reason) {}

  /// Builds the scope of `body` running `units` (in block order), its
  /// results `results`; `slots` is filled in.
  LogicalResult buildScope(Block &body, ArrayRef<Operation *> units,
                           ArrayRef<Value> results, ScopeSlots &slots);

private:
  int32_t addSequence() {
    program.sequences.emplace_back();
    return program.sequences.size() - 1;
  }
  /// The step that runs `unit` (its body's scope built first).
  FailureOr<HostStep> buildStep(Operation *unit, ScopeSlots &slots);

  Executor &interpreter;
  HostWaits waits;
  UnitInputs unitInputs;
  HostProgram &program;
  /// The run's fed values: their producers need not run first.
  llvm::DenseSet<Value> fed;
  std::string &reason;
};

FailureOr<HostStep> ProgramBuilder::buildStep(Operation *unit,
                                              ScopeSlots &slots) {
  if (auto node = dyn_cast<NodeOp>(unit)) {
    HostStep step{HostStep::Kind::Node, unit};
    for (Value v : node.getDataInputs())
      step.inputs.push_back(slots.get(v));
    for (Value v : node.getOutputs()) {
      // A fed output keeps its feed; the node computes its other outputs.
      step.outputs.push_back(fed.count(v) ? -1 : slots.get(v));
    }
    return step;
  }
  auto replicate = dyn_cast<ReplicateOp>(unit);
  HostStep step{replicate ? HostStep::Kind::Replicate : HostStep::Kind::Cluster,
                unit};
  Block &body = unit->getRegion(0).front();
  int32_t index = program.scopes.size();
  program.scopes.emplace_back();
  ScopeSlots inner;
  inner.parent = &slots;
  inner.body = &body;
  inner.replicate = replicate;
  inner.program = &program;
  inner.scope = index;
  SmallVector<Operation *> units;
  for (Operation &op : body)
    if (isUnit(&op))
      units.push_back(&op);
  SmallVector<Value> yielded(body.getTerminator()->getOperands());
  if (failed(buildScope(body, units, yielded, inner)))
    return failure();
  step.target = index;
  // Region results: each yielded value (per replica, output-major), then
  // the control token.
  for (Value v : unit->getResults().drop_back())
    step.outputs.push_back(slots.get(v));
  return step;
}

LogicalResult ProgramBuilder::buildScope(Block &body,
                                         ArrayRef<Operation *> units,
                                         ArrayRef<Value> results,
                                         ScopeSlots &slots) {
  for (Operation *unit : units)
    if (auto node = dyn_cast<NodeOp>(unit);
        node && isV1ControlFlow(node.getOpType())) {
      reason = ("node '" + node.getName() + "' (" + node.getOpType() +
                ") is v1 control flow, which needs the executor's deadness "
                "and frames")
                   .str();
      return failure();
    }
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, unit] : llvm::enumerate(units))
    index[unit] = i;
  // Predecessors: the producers of each unit's inputs in this scope, except
  // through fed values.
  std::vector<SmallVector<unsigned>> preds(units.size()), succs(units.size());
  for (auto [i, unit] : llvm::enumerate(units)) {
    for (Value v : unitInputs.get(unit)) {
      Operation *producer = v.getDefiningOp();
      auto it = producer ? index.find(producer) : index.end();
      if (it == index.end())
        continue;
      if (fed.count(v))
        continue;
      if (!llvm::is_contained(preds[i], it->second)) {
        preds[i].push_back(it->second);
        succs[it->second].push_back(i);
      }
    }
  }
  // Lanes: the nodes that wait on the device and everything downstream.
  std::vector<bool> waiting(units.size()), inLane(units.size());
  for (auto [i, unit] : llvm::enumerate(units))
    if (isa<NodeOp>(unit) && interpreter.waitsOnChannel(unit))
      waiting[i] = true;
  SmallVector<unsigned> stack;
  for (unsigned i = 0; i < units.size(); ++i)
    if (waiting[i])
      stack.push_back(i);
  while (!stack.empty()) {
    unsigned i = stack.pop_back_val();
    if (inLane[i])
      continue;
    inLane[i] = true;
    llvm::append_range(stack, succs[i]);
  }
  llvm::EquivalenceClasses<unsigned> lanes;
  for (unsigned i = 0; i < units.size(); ++i)
    if (inLane[i]) {
      lanes.insert(i);
      for (unsigned p : preds[i])
        if (inLane[p])
          lanes.unionSets(i, p);
    }
  // Lanes run on threads of their own when the device may wait for the
  // host: in a cluster, or at a device-side receive standing alone (the
  // flat form of a split graph read from a GraphDef).
  auto mayWaitForHost = [&](Operation *unit) {
    if (auto node = dyn_cast<NodeOp>(unit))
      return node.getOpType() == "_XlaHostComputeMlir" ||
             node.getOpType() == "XlaRecvFromHost";
    return waits.deviceMayWait(unit);
  };
  bool threaded = llvm::any_of(units, mayWaitForHost);

  // Orders `members` by their dependencies among themselves, taking
  // first the ready unit that `priority` ranks lowest.
  auto order = [&](ArrayRef<unsigned> members,
                   auto priority) -> std::optional<SmallVector<unsigned>> {
    llvm::DenseMap<unsigned, unsigned> missing;
    for (unsigned i : members)
      missing[i] = 0;
    for (unsigned i : members)
      for (unsigned p : preds[i])
        if (missing.count(p))
          ++missing[i];
    using Entry = std::pair<std::pair<unsigned, unsigned>, unsigned>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    for (unsigned i : members)
      if (missing[i] == 0)
        ready.push({{priority(i), i}, i});
    SmallVector<unsigned> sorted;
    while (!ready.empty()) {
      unsigned i = ready.top().second;
      ready.pop();
      sorted.push_back(i);
      for (unsigned s : succs[i])
        if (auto it = missing.find(s); it != missing.end() && --it->second == 0)
          ready.push({{priority(s), s}, s});
    }
    if (sorted.size() != members.size())
      return std::nullopt;
    return sorted;
  };
  auto cycle = [&]() {
    reason = "the graph has a cycle that is not a loop";
    return failure();
  };

  // The main sequence: host nodes before the device computations they do
  // not feed (so that infeed enqueues precede the device's dequeues).
  SmallVector<unsigned> mainUnits;
  for (unsigned i = 0; i < units.size(); ++i)
    if (!inLane[i])
      mainUnits.push_back(i);
  auto mainOrder = order(mainUnits, [&](unsigned i) -> unsigned {
    return isa<NodeOp>(units[i]) ? 0 : 1;
  });
  if (!mainOrder)
    return cycle();
  // Each lane: nodes that do not wait before those that do, so that a
  // lane serving several host transfers answers one before it waits for
  // the next.
  SmallVector<SmallVector<unsigned>> laneOrders;
  for (auto it = lanes.begin(); it != lanes.end(); ++it) {
    if (!it->isLeader())
      continue;
    SmallVector<unsigned> members(lanes.member_begin(it), lanes.member_end());
    llvm::sort(members);
    auto laneOrder =
        order(members, [&](unsigned i) -> unsigned { return waiting[i]; });
    if (!laneOrder)
      return cycle();
    laneOrders.push_back(std::move(*laneOrder));
  }

  int32_t mainSequence = addSequence();
  slots.getScope().main = mainSequence;
  auto appendUnit = [&](int32_t sequence, unsigned i) -> LogicalResult {
    // Scopes and sequences grow as bodies are built: index afresh.
    FailureOr<HostStep> step = buildStep(units[i], slots);
    if (failed(step))
      return failure();
    program.sequences[sequence].steps.push_back(std::move(*step));
    return success();
  };
  // Where each main unit runs, to start each lane after its inputs.
  llvm::DenseMap<unsigned, unsigned> position;
  for (auto [p, i] : llvm::enumerate(*mainOrder))
    position[i] = p;
  SmallVector<std::pair<unsigned, int32_t>> laneStarts; // (after, sequence)
  // Lane members that read what a computation waiting for the host
  // returns (an outside-compiled tail reading device results beside host
  // values) run after the lanes join: the rest of their lane must serve
  // that computation while it runs.
  SmallVector<unsigned> afterLanes;
  if (threaded) {
    unsigned firstWaiting = mainOrder->size();
    for (auto [p, i] : llvm::enumerate(*mainOrder))
      if (mayWaitForHost(units[i])) {
        firstWaiting = p;
        break;
      }
    std::vector<bool> late(units.size());
    for (SmallVector<unsigned> &lane : laneOrders) {
      SmallVector<unsigned> early;
      for (unsigned i : lane) {
        late[i] = llvm::any_of(preds[i], [&](unsigned p) {
          auto it = position.find(p);
          return late[p] ||
                 (it != position.end() && it->second >= firstWaiting);
        });
        (late[i] ? afterLanes : early).push_back(i);
      }
      lane = std::move(early);
    }
  }
  for (ArrayRef<unsigned> lane : laneOrders) {
    unsigned after = 0;
    for (unsigned i : lane)
      for (unsigned p : preds[i])
        if (auto it = position.find(p); it != position.end())
          after = std::max(after, it->second + 1);
    laneStarts.push_back({after, -1});
  }
  if (threaded) {
    program.threadedLanes |= !laneOrders.empty();
    for (auto [lane, start] : llvm::zip(laneOrders, laneStarts)) {
      start.second = addSequence();
      for (unsigned i : lane)
        if (failed(appendUnit(start.second, i)))
          return failure();
    }
    for (unsigned p = 0; p <= mainOrder->size(); ++p) {
      for (auto [after, sequence] : laneStarts)
        if (after == p) {
          HostStep start{HostStep::Kind::StartLane};
          start.target = sequence;
          program.sequences[mainSequence].steps.push_back(start);
        }
      if (p < mainOrder->size() &&
          failed(appendUnit(mainSequence, (*mainOrder)[p])))
        return failure();
    }
    if (!laneOrders.empty())
      program.sequences[mainSequence].steps.push_back(
          {HostStep::Kind::JoinLanes});
    for (unsigned i : afterLanes)
      if (failed(appendUnit(mainSequence, i)))
        return failure();
  } else {
    // Nothing on the device waits for the host: the waiting nodes run
    // after the main sequence, by when what they wait for was sent.
    for (unsigned i : *mainOrder)
      if (failed(appendUnit(mainSequence, i)))
        return failure();
    for (ArrayRef<unsigned> lane : laneOrders)
      for (unsigned i : lane)
        if (failed(appendUnit(mainSequence, i)))
          return failure();
  }
  for (Value v : results) {
    int32_t slot = slots.get(v);
    slots.getScope().results.push_back(slot);
  }
  return success();
}
} // namespace

std::string HostProgram::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto slotList = [&](ArrayRef<int32_t> slots) {
    os << "(";
    llvm::interleaveComma(slots, os, [&](int32_t s) {
      if (s < 0)
        os << "_";
      else
        os << "%" << s;
    });
    os << ")";
  };
  os << "feeds ";
  slotList(feedSlots);
  os << "\n";
  for (auto [i, scope] : llvm::enumerate(scopes)) {
    os << "scope " << i << ": " << scope.numSlots << " slots, sequence "
       << scope.main;
    for (const HostScope::Import &import : scope.imports) {
      os << "; %" << import.slot << " <- ";
      llvm::interleave(
          import.outer, os, [&](int32_t s) { os << "%" << s; }, "|");
    }
    os << "; results ";
    slotList(scope.results);
    os << "\n";
  }
  for (auto [i, sequence] : llvm::enumerate(sequences)) {
    os << "sequence " << i << ":\n";
    for (const HostStep &step : sequence.steps) {
      os << "  ";
      switch (step.kind) {
      case HostStep::Kind::Node: {
        auto node = cast<NodeOp>(step.unit);
        os << "node " << node.getName() << " (" << node.getOpType() << ") ";
        break;
      }
      case HostStep::Kind::Cluster:
        os << "cluster " << cast<ClusterOp>(step.unit).getCluster() << " scope "
           << step.target << " ";
        break;
      case HostStep::Kind::Replicate:
        os << "replicate x" << cast<ReplicateOp>(step.unit).getN() << " scope "
           << step.target << " ";
        break;
      case HostStep::Kind::StartLane:
        os << "start lane sequence " << step.target << "\n";
        continue;
      case HostStep::Kind::JoinLanes:
        os << "join lanes\n";
        continue;
      }
      slotList(step.inputs);
      os << " -> ";
      slotList(step.outputs);
      os << "\n";
    }
  }
  return text;
}

FailureOr<HostProgram> cleave::interp::buildHostProgram(
    Executor &interpreter, ModuleOp module, Block &body,
    ArrayRef<Operation *> units, ArrayRef<Value> fedValues,
    ArrayRef<Value> fetchValues, std::string &reason) {
  HostProgram program;
  program.scopes.emplace_back();
  ScopeSlots slots;
  slots.body = &body;
  slots.program = &program;
  for (Value v : fedValues)
    program.feedSlots.push_back(slots.get(v));
  if (unsigned devices = Executor::countCompiledDevices(units); devices > 1) {
    reason = "its compiled clusters are on " + std::to_string(devices) +
             " devices, whose threads run side by side on the executor";
    return failure();
  }
  ProgramBuilder builder(interpreter, module, program, fedValues, reason);
  if (failed(builder.buildScope(body, units, fetchValues, slots)))
    return failure();
  return program;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {
/// One run of a program.
struct ProgramRun {
  Executor &interpreter;
  const HostProgram &program;
  CompiledHostProgram *compiled;
  /// Nodes whose attrs were checked (under the execution lock).
  ValidatedNodes &validated;
};

/// The slots of one instance of a scope (the graph, a cluster's body, one
/// replica), and the lanes it started.
struct Frame {
  explicit Frame(int32_t numSlots) : slots(numSlots) {}
  std::vector<Tensor> slots;
  std::vector<std::future<void>> lanes;
  std::atomic<bool> laneFailed{false};
};
} // namespace

static ProgramRun &runOf(void *run) { return *static_cast<ProgramRun *>(run); }
static Frame &frameOf(void *frame) { return *static_cast<Frame *>(frame); }
static const HostStep &stepOf(void *run, int32_t sequence, int32_t step) {
  return runOf(run).program.sequences[sequence].steps[step];
}

static int32_t runSequence(ProgramRun &run, int32_t sequence, Frame &frame) {
  if (run.compiled)
    return run.compiled->runSequence(sequence, &run, &frame);
  const HostSequence &steps = run.program.sequences[sequence];
  for (auto [i, step] : llvm::enumerate(steps.steps))
    if (int32_t failed =
            getHostEntryPoint(step.kind).function(&run, &frame, sequence, i))
      return failed;
  return 0;
}

/// Runs a scope's main sequence on `frame`. When it fails, whatever waits
/// on a channel stops, and the lanes it started end before it returns.
static LogicalResult runScope(ProgramRun &run, int32_t scope, Frame &frame) {
  if (runSequence(run, run.program.scopes[scope].main, frame) == 0)
    return success();
  run.interpreter.getRendezvous().cancel();
  for (std::future<void> &lane : frame.lanes)
    lane.wait();
  return failure();
}

/// A body scope's frame, its imports read from `outer` (replica `replica`'s
/// where they differ).
static std::unique_ptr<Frame> enterScope(const HostScope &scope, Frame &outer,
                                         int64_t replica) {
  auto frame = std::make_unique<Frame>(scope.numSlots);
  for (const HostScope::Import &import : scope.imports)
    frame->slots[import.slot] =
        outer.slots[import.outer.size() > 1 ? import.outer[replica]
                                            : import.outer[0]];
  return frame;
}

extern "C" int32_t cleave::interp::cleave_host_run_node(void *runPtr,
                                                        void *framePtr,
                                                        int32_t sequence,
                                                        int32_t stepIndex) {
  ProgramRun &run = runOf(runPtr);
  Frame &frame = frameOf(framePtr);
  const HostStep &step = stepOf(runPtr, sequence, stepIndex);
  auto node = cast<NodeOp>(step.unit);
  std::vector<Tensor> inputs;
  inputs.reserve(step.inputs.size());
  for (int32_t slot : step.inputs)
    inputs.push_back(frame.slots[slot]);
  ExecutionLock &lock = run.interpreter.getExecutionLock();
  lock.acquire();
  FailureOr<std::vector<Tensor>> outputs = failure();
  if (succeeded(checkNodeCanRun(node, inputs, run.validated))) {
    HostSideScope hostSide(isReplicaHostNode(node));
    outputs =
        runKernel(run.interpreter, node, std::move(inputs), DictionaryAttr());
  }
  lock.release();
  if (failed(outputs))
    return 1;
  run.interpreter.getRendezvous().finished(node);
  for (auto [slot, tensor] : llvm::zip(step.outputs, *outputs))
    if (slot >= 0)
      frame.slots[slot] = std::move(tensor);
  return 0;
}

extern "C" int32_t cleave::interp::cleave_host_run_cluster(void *runPtr,
                                                           void *framePtr,
                                                           int32_t sequence,
                                                           int32_t stepIndex) {
  ProgramRun &run = runOf(runPtr);
  Frame &outer = frameOf(framePtr);
  const HostStep &step = stepOf(runPtr, sequence, stepIndex);
  const HostScope &scope = run.program.scopes[step.target];
  std::unique_ptr<Frame> body =
      enterScope(scope, outer, std::max<int64_t>(getCurrentReplica(), 0));
  if (failed(runScope(run, step.target, *body)))
    return 1;
  run.interpreter.getRendezvous().finished(step.unit);
  for (auto [slot, result] : llvm::zip(step.outputs, scope.results))
    if (slot >= 0)
      outer.slots[slot] = body->slots[result];
  return 0;
}

/// Each replica works on its own copy of the variables, as each core holds
/// its own copy of a mirrored variable; mergeReplicaStates writes back
/// what they wrote. Replica 0 runs on the calling thread, the others on
/// kept threads.
extern "C" int32_t cleave::interp::cleave_host_run_replicas(void *runPtr,
                                                            void *framePtr,
                                                            int32_t sequence,
                                                            int32_t stepIndex) {
  ProgramRun &run = runOf(runPtr);
  Frame &outer = frameOf(framePtr);
  const HostStep &step = stepOf(runPtr, sequence, stepIndex);
  auto replicate = cast<ReplicateOp>(step.unit);
  const HostScope &scope = run.program.scopes[step.target];
  int64_t n = replicate.getN();
  Executor &interpreter = run.interpreter;
  ExecutionLock &lock = interpreter.getExecutionLock();
  Rendezvous &rendezvous = interpreter.getRendezvous();
  lock.acquire();
  std::vector<State> copies(n, interpreter.getState());
  llvm::StringMap<Tensor> atStart = interpreter.getState().variables;
  lock.release();
  std::vector<std::unique_ptr<Frame>> frames;
  for (int64_t r = 0; r < n; ++r)
    frames.push_back(enterScope(scope, outer, r));
  std::vector<char> ok(n, 0);
  auto runReplica = [&](int64_t r) {
    ReplicaStateScope replicaScope(r, &copies[r]);
    ok[r] = succeeded(runScope(run, step.target, *frames[r]));
  };
  rendezvous.addReplicasRunning(n);
  std::vector<std::future<void>> others;
  for (int64_t r = 1; r < n; ++r)
    others.push_back(ThreadCache::get().run([&, r] { runReplica(r); },
                                            rendezvous.shouldSpin()));
  runReplica(0);
  for (std::future<void> &replica : others) {
    // The replicas meet in their collectives, so they end close together.
    if (rendezvous.shouldSpin())
      spinWhile(
          [&] {
            return replica.wait_for(std::chrono::seconds(0)) !=
                   std::future_status::ready;
          },
          std::chrono::microseconds(50));
    replica.wait();
  }
  rendezvous.addReplicasRunning(-n);
  if (llvm::is_contained(ok, 0)) {
    lock.acquire();
    reportReplicaFailure(replicate, rendezvous);
    lock.release();
    return 1;
  }
  lock.acquire();
  mergeReplicaStates(interpreter.getState(), copies, atStart);
  lock.release();
  rendezvous.finished(replicate);
  for (size_t k = 0; k < scope.results.size(); ++k)
    for (int64_t r = 0; r < n; ++r)
      if (int32_t slot = step.outputs[k * n + r]; slot >= 0)
        outer.slots[slot] = frames[r]->slots[scope.results[k]];
  return 0;
}

extern "C" int32_t cleave::interp::cleave_host_start_lane(void *runPtr,
                                                          void *framePtr,
                                                          int32_t sequence,
                                                          int32_t stepIndex) {
  ProgramRun &run = runOf(runPtr);
  Frame &frame = frameOf(framePtr);
  int32_t lane = stepOf(runPtr, sequence, stepIndex).target;
  int64_t replica = getCurrentReplica();
  State *state = getReplicaState();
  frame.lanes.push_back(
      ThreadCache::get().run([&run, &frame, lane, replica, state] {
        ReplicaStateScope replicaScope(replica, state);
        if (runSequence(run, lane, frame) != 0) {
          frame.laneFailed = true;
          // The device may wait for what this lane would have sent.
          run.interpreter.getRendezvous().cancel();
        }
      }));
  return 0;
}

extern "C" int32_t cleave::interp::cleave_host_join_lanes(void *,
                                                          void *framePtr,
                                                          int32_t, int32_t) {
  Frame &frame = frameOf(framePtr);
  for (std::future<void> &lane : frame.lanes)
    lane.wait();
  frame.lanes.clear();
  return frame.laneFailed ? 1 : 0;
}

const HostEntryPoint &cleave::interp::getHostEntryPoint(HostStep::Kind kind) {
  static const HostEntryPoint entryPoints[] = {
      {"cleave_host_run_node", &cleave_host_run_node},
      {"cleave_host_run_cluster", &cleave_host_run_cluster},
      {"cleave_host_run_replicas", &cleave_host_run_replicas},
      {"cleave_host_start_lane", &cleave_host_start_lane},
      {"cleave_host_join_lanes", &cleave_host_join_lanes},
  };
  static_assert(std::size(entryPoints) == std::size(kHostStepKinds));
  return entryPoints[static_cast<size_t>(kind)];
}

FailureOr<std::vector<Tensor>> cleave::interp::runHostProgram(
    Executor &interpreter, const HostProgram &program,
    CompiledHostProgram *compiled, ValidatedNodes &validated,
    ArrayRef<Tensor> feeds) {
  ProgramRun run{interpreter, program, compiled, validated};
  Frame frame(program.scopes[0].numSlots);
  for (auto [slot, tensor] : llvm::zip(program.feedSlots, feeds))
    frame.slots[slot] = tensor;
  if (failed(runScope(run, 0, frame)))
    return failure();
  std::vector<Tensor> results;
  for (int32_t slot : program.scopes[0].results)
    results.push_back(frame.slots[slot]);
  return results;
}
