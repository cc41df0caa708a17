//===- Executor.cpp - runs graphs as TensorFlow's executor does -----------===//
//
// Dataflow execution: the nodes the fetches and targets need run in
// dependency order; a Switch makes its untaken output dead, deadness flows
// through data and control edges, and a Merge forwards its first live input,
// as in TensorFlow's executor. Each node runs its reference kernel
// (cleave/Kernels/KernelHost.h) with the executor as its KernelHost.
//
//===----------------------------------------------------------------------===//

#include "Execution.h"

#include "cleave/Dialect/Graph/Transforms/ReplicatedComputation.h"
#include "cleave/Dialect/Graph/Utils/DeviceSpec.h"
#include "cleave/Dialect/Graph/Utils/HostTransfers.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Executor/HostProgram.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Runtime/Rendezvous.h"
#include "cleave/Runtime/ThreadCache.h"
#include "cleave/Support/CommandLine.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::interp;
using namespace cleave::runtime;

static thread_local State *currentReplicaState = nullptr;

State *cleave::interp::getReplicaState() { return currentReplicaState; }

ReplicaStateScope::ReplicaStateScope(int64_t replica, State *state)
    : replica(replica), previous(currentReplicaState) {
  currentReplicaState = state;
}

ReplicaStateScope::~ReplicaStateScope() { currentReplicaState = previous; }

static thread_local bool onReplicaHost = false;

HostSideScope::HostSideScope(bool active) : previous(onReplicaHost) {
  onReplicaHost = previous || active;
}

HostSideScope::~HostSideScope() { onReplicaHost = previous; }

bool cleave::interp::isOnReplicaHost() { return onReplicaHost; }

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

namespace {
/// A computed output: a tensor, or dead (an untaken Switch branch).
struct Slot {
  Tensor value;
  bool dead = false;
};
} // namespace

ArrayRef<Value> UnitInputs::get(Operation *unit) {
  auto [it, inserted] = inputs.try_emplace(unit);
  if (!inserted)
    return it->second;
  if (auto node = dyn_cast<NodeOp>(unit)) {
    it->second.assign(node.getInputs().begin(), node.getInputs().end());
    return it->second;
  }
  llvm::SetVector<Value> read(unit->operand_begin(), unit->operand_end());
  unit->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!unit->isAncestor(v.getParentRegion()->getParentOp()))
        read.insert(v);
  });
  it->second.assign(read.begin(), read.end());
  return it->second;
}

void cleave::interp::mergeReplicaStates(
    State &shared, std::vector<State> &copies,
    const llvm::StringMap<Tensor> &atStart) {
  for (State &copy : llvm::reverse(copies)) {
    for (auto &entry : copy.variables) {
      auto old = atStart.find(entry.getKey());
      if (old == atStart.end() || old->second.raw() != entry.getValue().raw() ||
          old->second.shape() != entry.getValue().shape())
        shared.variables[entry.getKey()] = entry.getValue();
    }
    for (auto &entry : copy.nodeRuns)
      shared.nodeRuns[entry.getKey()] =
          std::max(shared.nodeRuns.lookup(entry.getKey()), entry.getValue());
  }
}

void cleave::interp::reportReplicaFailure(ReplicateOp replicate,
                                          Rendezvous &rendezvous) {
  int64_t first = rendezvous.getCanceller();
  if (first >= 0 && first < replicate.getN())
    replicate.emitError() << "replica " << first << " of cluster '"
                          << replicate.getCluster().getCluster()
                          << "' failed (see the error above); the other "
                             "replicas were cancelled";
}

/// Whether `input` is fed: a fed tensor, or the control output of a node
/// whose every output is fed (TensorFlow replaces a fed node and hands its
/// control edges to the feed, so they hold once the feed is there).
static bool isFed(Value input, const llvm::DenseMap<Value, Tensor> &fed) {
  if (fed.count(input))
    return true;
  auto node = input.getDefiningOp<graph::NodeOp>();
  return node && input == node.getControl() && !node.getOutputs().empty() &&
         llvm::all_of(node.getOutputs(),
                      [&](Value output) { return fed.count(output) > 0; });
}

/// Adds to `needed` the units of `body` the roots reach backwards, except
/// through fed tensors.
static void addNeeded(Block &body, ArrayRef<Operation *> roots,
                      const llvm::DenseMap<Value, Tensor> &fed,
                      UnitInputs &unitInputs,
                      llvm::DenseSet<Operation *> &needed) {
  SmallVector<Operation *> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    Operation *unit = stack.pop_back_val();
    if (!needed.insert(unit).second)
      continue;
    for (Value input : unitInputs.get(unit))
      if (!isFed(input, fed))
        if (Operation *producer = input.getDefiningOp();
            isUnit(producer) && producer->getBlock() == &body)
          stack.push_back(producer);
  }
}

/// The units of `body` to run: everything the roots reach backwards,
/// except through fed tensors.
static llvm::DenseSet<Operation *>
collectNeeded(Block &body, ArrayRef<Operation *> roots,
              const llvm::DenseMap<Value, Tensor> &fed,
              UnitInputs &unitInputs) {
  llvm::DenseSet<Operation *> needed;
  addNeeded(body, roots, fed, unitInputs, needed);
  return needed;
}

static FailureOr<std::vector<Tensor>>
runBlock(Executor &interpreter, Block &body,
         const llvm::DenseMap<Value, Tensor> &fed, ArrayRef<Value> fetchValues,
         ArrayRef<std::string> fetchNames, ArrayRef<Operation *> roots,
         size_t firstTarget, DictionaryAttr bindings, Location loc);

/// Adds to `roots`, as targets, the host sides of the computations a run of
/// them needs (graph::addHostSides); returns what the run's units send and
/// receive on.
static ChannelUse
addHostSidesAsTargets(ModuleOp module, Block &body,
                      SmallVector<Operation *> &roots,
                      const llvm::DenseMap<Value, Tensor> &fed,
                      llvm::DenseSet<Operation *> &needed) {
  UnitInputs unitInputs;
  addNeeded(body, roots, fed, unitInputs, needed);
  return addHostSides(module, body, needed, [&](ArrayRef<Operation *> senders) {
    roots.append(senders.begin(), senders.end());
    addNeeded(body, senders, fed, unitInputs, needed);
  });
}

/// The units of a run (`needed`) that send on host-transfer channels, and
/// on which: each runs once, so once all senders of a channel have
/// finished, nothing more can arrive on it.
static std::map<const void *, SendCensus::Sender>
findSenders(ModuleOp module, const llvm::DenseSet<Operation *> &needed) {
  std::map<const void *, SendCensus::Sender> senders;
  for (Operation *unit : needed) {
    ChannelUse use = getChannelUse(module, {unit});
    if (use.sentChannels.empty())
      continue;
    SendCensus::Sender &sender = senders[unit];
    auto cluster = isa<ReplicateOp>(unit) ? cast<ReplicateOp>(unit).getCluster()
                                          : dyn_cast<ClusterOp>(unit);
    sender.name = cluster ? ("cluster '" + cluster.getCluster() + "'").str()
                          : ("'" + cast<NodeOp>(unit).getName() + "'").str();
    for (const auto &key : use.sentChannels)
      sender.channels.push_back(key.getKey().str());
    llvm::sort(sender.channels);
  }
  return senders;
}

/// Runs a region's body (a cluster, or one replica of a replicate) to its
/// yield, every op of it included, reading `fed` for the block's arguments
/// and the values it captures.
static FailureOr<std::vector<Tensor>>
runRegionBody(Executor &interpreter, Block &body,
              const llvm::DenseMap<Value, Tensor> &fed, StringRef what) {
  SmallVector<Operation *> roots;
  for (Operation &op : body)
    if (isUnit(&op))
      roots.push_back(&op);
  Operation *yield = body.getTerminator();
  SmallVector<Value> results(yield->getOperands());
  SmallVector<std::string> names;
  for (unsigned i = 0; i < results.size(); ++i)
    names.push_back((what + " result " + Twine(i)).str());
  return runBlock(interpreter, body, fed, results, names, roots, 0,
                  DictionaryAttr(), body.getParentOp()->getLoc());
}

namespace {
/// Tagged-token dataflow, as TensorFlow's executor: every value lives in a
/// frame (the root, or one iteration of a loop entered through Enter), and a
/// node runs once per frame in which its inputs arrive. Enter moves a value
/// into iteration 0 of a child frame (constant Enters into every iteration),
/// NextIteration into the next iteration, Exit back to the parent frame.
/// Dead values stop at NextIteration and Exit, which is how loops end.
///
/// Clusters, replicate regions and nodes that wait on the device (host
/// receives, and calls of functions holding them) run on threads of their
/// own, one kernel at a time under the interpreter's execution lock; their
/// outputs are delivered when they finish.
class DataflowRun {
public:
  static constexpr unsigned kRootFrame = 0;

  DataflowRun(Executor &interpreter, Block &body, DictionaryAttr bindings,
              const llvm::DenseMap<Value, Tensor> &fed,
              const llvm::DenseSet<Operation *> &needed, UnitInputs &unitInputs)
      : interpreter(interpreter), body(body), bindings(bindings), fed(fed),
        needed(needed), unitInputs(unitInputs),
        maxIterations(interpreter.getMaxIterations()) {
    frames.push_back({kRootFrame, "", 0});
  }

  ArrayRef<Value> getInputs(Operation *unit) { return unitInputs.get(unit); }

  unsigned countRequiredInputs(Operation *unit) {
    unsigned count = 0;
    for (Value input : getInputs(unit))
      if (!isFed(input, fed) && isUnit(input.getDefiningOp()) &&
          input.getDefiningOp()->getBlock() == &body)
        ++count;
    return count;
  }

  void schedule(Operation *unit, unsigned frame) {
    ready.push_back({unit, frame});
  }

  const Slot *lookup(Value v, unsigned frame) const {
    auto it = values.find({v, frame});
    return it == values.end() ? nullptr : &it->second;
  }

  /// Whether `unit` ran in the root frame.
  bool ranInRoot(Operation *unit) const { return rootRuns.count(unit); }

  LogicalResult drain() {
    LogicalResult result = success();
    size_t next = 0;
    while (true) {
      while (succeeded(result) && next < ready.size()) {
        auto [unit, frame] = ready[next++];
        // CPU 0's compiled clusters run on this thread: start the other
        // devices' ready work before entering one.
        if (runsInlineOnDevice0(unit) &&
            llvm::any_of(llvm::drop_begin(ready, next), [&](auto &entry) {
              return !runsInlineOnDevice0(entry.first);
            })) {
          ready.push_back({unit, frame});
          continue;
        }
        if (failed(execute(unit, frame)))
          result = failure();
      }
      if (inFlight == 0)
        break;
      // Whatever still waits on a channel stops.
      if (failed(result))
        interpreter.getRendezvous().cancel();
      Completion done = waitForCompletion();
      --inFlight;
      if (failed(done.outputs)) {
        if (succeeded(result))
          interpreter.getRendezvous().cancel();
        result = failure();
        continue;
      }
      if (succeeded(result) &&
          failed(finish(done.unit, done.frame, *done.outputs, false)))
        result = failure();
    }
    // Every task delivered; wait until each has also left its thread.
    for (std::future<void> &task : tasks)
      task.wait();
    return result;
  }

private:
  struct Frame {
    unsigned parent;
    std::string name;
    int64_t iteration;
  };
  struct Pending {
    unsigned arrived = 0, dead = 0;
    bool fired = false;
  };
  struct Completion {
    Operation *unit;
    unsigned frame;
    FailureOr<SmallVector<Slot, 2>> outputs;
  };

  /// The frame for `iteration` of loop `name` entered from `parent`.
  unsigned getFrame(unsigned parent, std::string name, int64_t iteration) {
    // `name` is a copy: callers pass names stored in `frames`, which grows.
    auto key = std::make_tuple(parent, name, iteration);
    auto [it, inserted] = frameIds.try_emplace(key, frames.size());
    if (inserted) {
      frames.push_back({parent, name, iteration});
      iterations[{parent, name}].push_back(it->second);
      // Loop invariants (constant Enters) are visible in every iteration.
      for (auto &[value, slot] : invariants[{parent, name}])
        deliver(value, it->second, slot);
    }
    return it->second;
  }

  /// Makes `slot` the value of `v` in `frame` and wakes its consumers.
  void deliver(Value v, unsigned frame, const Slot &slot) {
    values[{v, frame}] = slot;
    SmallPtrSet<Operation *, 4> woken;
    for (Operation *user : v.getUsers()) {
      // A use inside a cluster or replicate is an input of that region.
      Operation *consumer = body.findAncestorOpInBlock(*user);
      if (!isUnit(consumer) || !needed.count(consumer) ||
          !woken.insert(consumer).second)
        continue;
      // A value used twice by one node arrives twice.
      for (Value input : getInputs(consumer)) {
        if (input != v)
          continue;
        Pending &p = pending[{consumer, frame}];
        ++p.arrived;
        p.dead += slot.dead;
        if (p.fired)
          continue;
        auto node = dyn_cast<NodeOp>(consumer);
        bool isMerge = node && (node.getOpType() == "Merge" ||
                                node.getOpType() == "RefMerge");
        unsigned required = countRequiredInputs(consumer);
        if ((isMerge && (!slot.dead || p.dead == required)) ||
            (!isMerge && p.arrived == required)) {
          p.fired = true;
          schedule(consumer, frame);
        }
      }
    }
  }

  /// The input's value in `frame`: fed, or delivered.
  Slot input(Value v, unsigned frame) {
    if (auto it = fed.find(v); it != fed.end())
      return {it->second, false};
    if (isFed(v, fed)) // the control output of a fed node: it holds
      return {Tensor(), false};
    if (auto it = values.find({v, frame}); it != values.end())
      return it->second;
    if (isa<BlockArgument>(v)) // a function's control argument
      return {Tensor(), false};
    return {Tensor(), true}; // a Merge input that has not arrived
  }

  /// With compiled clusters on several devices: whether `unit` is a call
  /// of one on CPU 0 (run on this thread) or on another device (run on a
  /// thread of its own).
  bool isCompiledCallOnDevice(Operation *unit, bool device0) {
    auto node = dyn_cast<NodeOp>(unit);
    if (!node || interpreter.getParallelDevices() <= 1 ||
        !node.getTFBool("_XlaCompiledKernel").value_or(false))
      return false;
    return (graph::getRuntimeCPUDevice(node.getDevice().value_or("")) == 0) ==
           device0;
  }
  bool runsInlineOnDevice0(Operation *unit) {
    return isCompiledCallOnDevice(unit, true);
  }
  bool runsOnOtherDevice(Operation *unit) {
    return isCompiledCallOnDevice(unit, false);
  }

  /// Runs `job` on a thread of its own (in the calling thread's replica),
  /// delivering its outputs to `unit` in `frame` when it finishes.
  void startAsync(Operation *unit, unsigned frame,
                  std::function<FailureOr<SmallVector<Slot, 2>>()> job) {
    ++inFlight;
    int64_t replica = getCurrentReplica();
    State *replicaState = getReplicaState();
    bool onHost = isOnReplicaHost();
    ExecutionLock &lock = interpreter.getExecutionLock();
    tasks.push_back(ThreadCache::get().run(
        [this, unit, frame, replica, replicaState, onHost, &lock, job]() {
          lock.acquire();
          FailureOr<SmallVector<Slot, 2>> outputs = failure();
          {
            ReplicaStateScope scope(replica, replicaState);
            HostSideScope hostSide(onHost);
            outputs = job();
          }
          lock.release();
          std::lock_guard<std::mutex> guard(completionMutex);
          completions.push_back({unit, frame, std::move(outputs)});
          completed.notify_one();
        }));
  }

  Completion waitForCompletion() {
    UnlockedScope unlocked(interpreter.getExecutionLock());
    std::unique_lock<std::mutex> guard(completionMutex);
    completed.wait(guard, [&] { return !completions.empty(); });
    Completion done = std::move(completions.front());
    completions.pop_front();
    return done;
  }

  /// Starts a cluster or replicate region once its inputs arrived.
  LogicalResult startComposite(Operation *op, unsigned frame) {
    if (frame != kRootFrame)
      return op->emitError("the interpreter runs clusters and replicate "
                           "regions only outside loops"),
             failure();
    llvm::DenseMap<Value, Tensor> captured;
    bool dead = false;
    for (Value v : getInputs(op)) {
      Slot slot = input(v, frame);
      dead |= slot.dead;
      captured[v] = slot.value;
    }
    if (dead) {
      SmallVector<Slot, 2> outputs(op->getNumResults());
      for (Slot &out : outputs)
        out.dead = true;
      return finish(op, frame, outputs, true);
    }
    Executor &interp = interpreter;
    if (auto cluster = dyn_cast<ClusterOp>(op)) {
      startAsync(op, frame,
                 [&interp, cluster,
                  captured]() mutable -> FailureOr<SmallVector<Slot, 2>> {
                   Block &body = cluster.getBody().front();
                   captured[cluster.getMetadataControl()] = Tensor();
                   auto results = runRegionBody(
                       interp, body, captured,
                       ("cluster '" + cluster.getCluster() + "'").str());
                   if (failed(results))
                     return failure();
                   SmallVector<Slot, 2> outputs;
                   for (Tensor &t : *results)
                     outputs.push_back({std::move(t), false});
                   outputs.push_back({Tensor(), false}); // the control token
                   return outputs;
                 });
      return success();
    }
    auto replicate = cast<ReplicateOp>(op);
    startAsync(
        op, frame,
        [&interp, replicate, captured]() -> FailureOr<SmallVector<Slot, 2>> {
          return runReplicas(interp, replicate, captured);
        });
    return success();
  }

  /// Runs the `n` replicas of a replicate region, each on its own thread.
  /// Each replica works on its own copy of the variables, as each core
  /// holds its own copy of a mirrored variable: it reads what the step
  /// started from and its own writes. When all are done, what they wrote
  /// is written back, the lowest replica's value where several wrote one
  /// variable (mirrored variables get the same update everywhere).
  static FailureOr<SmallVector<Slot, 2>>
  runReplicas(Executor &interp, ReplicateOp replicate,
              const llvm::DenseMap<Value, Tensor> &captured) {
    int64_t n = replicate.getN();
    Block &body = replicate.getBody().front();
    ClusterOp cluster = replicate.getCluster();
    std::string what = ("cluster '" + cluster.getCluster() + "'").str();
    std::vector<FailureOr<std::vector<Tensor>>> results(n, failure());
    State &shared = interp.getState();
    std::vector<State> copies(n, shared);
    llvm::StringMap<Tensor> atStart = shared.variables;
    ExecutionLock &lock = interp.getExecutionLock();
    Rendezvous &rendezvous = interp.getRendezvous();
    std::vector<std::future<void>> replicas;
    rendezvous.addReplicasRunning(n);
    for (int64_t r = 0; r < n; ++r) {
      llvm::DenseMap<Value, Tensor> fed(captured);
      for (BlockArgument arg : body.getArguments())
        fed[arg] =
            captured.lookup(replicate.getReplicaInput(arg.getArgNumber(), r));
      replicas.push_back(ThreadCache::get().run([&, r, fed]() {
        lock.acquire();
        {
          ReplicaStateScope scope(r, &copies[r]);
          results[r] = runRegionBody(interp, body, fed,
                                     what + " replica " + std::to_string(r));
          // The others stop: no replica waits for one that failed.
          if (failed(results[r]))
            rendezvous.cancel();
        }
        lock.release();
      }));
    }
    {
      UnlockedScope unlocked(lock);
      for (std::future<void> &replica : replicas)
        replica.wait();
    }
    rendezvous.addReplicasRunning(-n);
    if (llvm::any_of(results, [](auto &result) { return failed(result); })) {
      reportReplicaFailure(replicate, rendezvous);
      return failure();
    }
    mergeReplicaStates(interp.getState(), copies, atStart);
    unsigned numYielded = body.getTerminator()->getNumOperands();
    SmallVector<Slot, 2> outputs;
    for (unsigned k = 0; k < numYielded; ++k)
      for (int64_t r = 0; r < n; ++r)
        outputs.push_back({(*results[r])[k], false});
    outputs.push_back({Tensor(), false}); // the control token
    return outputs;
  }

  LogicalResult execute(Operation *unit, unsigned frame) {
    if (frame == kRootFrame)
      rootRuns.insert(unit);
    if (!isa<NodeOp>(unit))
      return startComposite(unit, frame);
    auto node = cast<NodeOp>(unit);
    StringRef op = node.getOpType();
    bool isMerge = op == "Merge" || op == "RefMerge";
    bool deadControl = false, deadData = false, allDead = true;
    std::vector<Tensor> inputs;
    std::vector<bool> inputDead;
    for (Value v : node.getInputs()) {
      Slot slot = input(v, frame);
      if (isa<ControlType>(v.getType())) {
        deadControl |= slot.dead;
        continue;
      }
      deadData |= slot.dead;
      allDead &= slot.dead;
      inputs.push_back(slot.value);
      inputDead.push_back(slot.dead);
    }
    bool dead = deadControl || (isMerge ? allDead : deadData);
    bool isSwitch = op == "Switch" || op == "RefSwitch";
    // Merge and Switch index their inputs here, not in a kernel.
    if ((isMerge || isSwitch) && failed(validateOnce(node, validated)))
      return failure();
    SmallVector<Slot, 2> outputs(node.getOutputs().size());
    if (dead) {
      for (Slot &out : outputs)
        out.dead = true;
    } else if (isMerge) {
      unsigned live = 0;
      while (inputDead[live])
        ++live;
      Tensor index(kInt32, {});
      index.data<int32_t>()[0] = live;
      outputs[0] = {inputs[live], false};
      outputs[1] = {index, false};
    } else if (isSwitch) {
      bool pred = inputs[1].numElements() == 1 && inputs[1].getAsInt(0) != 0;
      outputs[pred ? 1 : 0] = {inputs[0], false};
      outputs[pred ? 0 : 1].dead = true;
    } else {
      if (failed(checkNodeCanRun(node, inputs, validated)))
        return failure();
      Executor &interp = interpreter;
      DictionaryAttr attrs = bindings;
      auto compute =
          [&interp, node,
           attrs](std::vector<Tensor> in) -> FailureOr<SmallVector<Slot, 2>> {
        HostSideScope hostSide(isReplicaHostNode(node));
        auto results = runKernel(interp, node, std::move(in), attrs);
        if (failed(results))
          return failure();
        SmallVector<Slot, 2> slots;
        for (Tensor &t : *results)
          slots.push_back({std::move(t), false});
        return slots;
      };
      // The compiled clusters of the devices but CPU 0 run on threads of
      // their own, beside this one, which runs CPU 0's (their code runs
      // unlocked).
      if (interp.waitsOnChannel(node) || runsOnOtherDevice(node)) {
        startAsync(node, frame, [compute, inputs]() mutable {
          return compute(std::move(inputs));
        });
        return success();
      }
      auto computed = compute(std::move(inputs));
      if (failed(computed))
        return failure();
      outputs = std::move(*computed);
    }
    return finish(node, frame, outputs, dead);
  }

  /// Delivers a unit's outputs (and its control token, dead when the unit
  /// was) where they go.
  LogicalResult finish(Operation *unit, unsigned frame, ArrayRef<Slot> outputs,
                       bool dead) {
    // A unit runs in the root frame once: a sender there sends no more.
    if (frame == kRootFrame)
      interpreter.getRendezvous().finished(unit);
    auto node = dyn_cast<NodeOp>(unit);
    if (!node) {
      // A cluster or replicate: its results, the control token last.
      for (auto [v, slot] : llvm::zip(unit->getResults(), outputs))
        deliver(v, frame, slot);
      return success();
    }
    StringRef op = node.getOpType();
    // Where the outputs go.
    unsigned target = frame;
    if (op == "Enter" || op == "RefEnter") {
      auto frameName =
          dyn_cast_or_null<StringAttr>(node.getTFAttr("frame_name"));
      std::string name = frameName ? frameName.str() : "";
      auto constant = dyn_cast_or_null<BoolAttr>(node.getTFAttr("is_constant"));
      if (constant && constant.getValue()) {
        // Into every iteration, present and future.
        Slot control{Tensor(), outputs[0].dead};
        for (unsigned iter : iterations[{frame, name}]) {
          deliver(node.getOutputs()[0], iter, outputs[0]);
          deliver(node.getControl(), iter, control);
        }
        auto &frameInvariants = invariants[{frame, name}];
        frameInvariants.push_back({node.getOutputs()[0], outputs[0]});
        frameInvariants.push_back({node.getControl(), control});
        getFrame(frame, name, 0); // delivers them if iteration 0 is new
        return success();
      }
      target = getFrame(frame, name, 0);
    } else if (op == "NextIteration" || op == "RefNextIteration") {
      if (outputs[0].dead)
        return success();      // the loop ends here
      Frame f = frames[frame]; // a copy: getFrame may grow `frames`
      if (f.iteration + 1 > maxIterations)
        return node.emitError()
               << "Node '" << node.getName() << "': loop '" << f.name
               << "' did not finish within " << maxIterations
               << " iterations (see --max-iterations)";
      target = getFrame(f.parent, f.name, f.iteration + 1);
    } else if (op == "Exit" || op == "RefExit") {
      if (outputs[0].dead)
        return success(); // only the last iteration's value leaves
      target = frames[frame].parent;
    }
    for (auto [v, slot] : llvm::zip(node.getOutputs(), outputs))
      deliver(v, target, slot);
    // Control successors wait on the node's token in the target frame.
    deliver(node.getControl(), target, Slot{Tensor(), dead});
    return success();
  }

  Executor &interpreter;
  Block &body;
  DictionaryAttr bindings;
  const llvm::DenseMap<Value, Tensor> &fed;
  const llvm::DenseSet<Operation *> &needed;
  UnitInputs &unitInputs;
  int64_t maxIterations;
  std::vector<Frame> frames;
  std::map<std::tuple<unsigned, std::string, int64_t>, unsigned> frameIds;
  std::map<std::pair<unsigned, std::string>, std::vector<unsigned>> iterations;
  std::map<std::pair<unsigned, std::string>,
           std::vector<std::pair<Value, Slot>>>
      invariants;
  llvm::DenseMap<std::pair<Value, unsigned>, Slot> values;
  llvm::DenseMap<std::pair<Operation *, unsigned>, Pending> pending;
  std::vector<std::pair<Operation *, unsigned>> ready;
  llvm::DenseSet<Operation *> rootRuns;
  ValidatedNodes validated;
  // Units running on threads of their own.
  unsigned inFlight = 0;
  std::vector<std::future<void>> tasks;
  std::mutex completionMutex;
  std::condition_variable completed;
  std::deque<Completion> completions;
};
} // namespace

/// Runs the units of `body` that `roots` need (with `fed` values given)
/// and returns `fetchValues`. The roots from `firstTarget` on are targets:
/// each must run. `fetchNames` name the fetches in messages.
static FailureOr<std::vector<Tensor>>
runBlock(Executor &interpreter, Block &body,
         const llvm::DenseMap<Value, Tensor> &fed, ArrayRef<Value> fetchValues,
         ArrayRef<std::string> fetchNames, ArrayRef<Operation *> roots,
         size_t firstTarget, DictionaryAttr bindings, Location loc) {
  UnitInputs unitInputs;
  llvm::DenseSet<Operation *> needed =
      collectNeeded(body, roots, fed, unitInputs);

  DataflowRun executor(interpreter, body, bindings, fed, needed, unitInputs);
  // The top-level graph's compiled clusters on several devices run side by
  // side (graph-towers' towers), each on its share of the cores.
  bool topLevel = isa<GraphOp>(body.getParentOp());
  if (topLevel) {
    SmallVector<Operation *> units;
    for (Operation &op : body)
      if (needed.count(&op))
        units.push_back(&op);
    interpreter.setParallelDevices(Executor::countCompiledDevices(units));
  }
  auto restoreDevices = llvm::make_scope_exit([&] {
    if (topLevel)
      interpreter.setParallelDevices(1);
  });
  for (Operation &op : body)
    if (isUnit(&op) && needed.count(&op) &&
        executor.countRequiredInputs(&op) == 0)
      executor.schedule(&op, DataflowRun::kRootFrame);
  if (failed(executor.drain()))
    return failure();
  // An input that never arrives (a cycle that is not a loop, or a node in a
  // loop body fed from outside the loop without an Enter) stalls a node.
  const char *stalled = "one of its inputs never arrived (a cycle that is "
                        "not a loop, or a loop body node fed from outside "
                        "the loop without an Enter)";
  for (Operation *target : roots.drop_front(firstTarget))
    if (!executor.ranInRoot(target)) {
      if (auto node = dyn_cast<NodeOp>(target))
        return target->emitError()
                   << "Node '" << node.getName() << "' never ran: " << stalled,
               failure();
      return target->emitError() << "never ran: " << stalled, failure();
    }

  std::vector<Tensor> results;
  for (auto [i, v] : llvm::enumerate(fetchValues)) {
    auto it = fed.find(v);
    if (it != fed.end()) {
      results.push_back(it->second);
      continue;
    }
    const Slot *slot = executor.lookup(v, DataflowRun::kRootFrame);
    if (!slot)
      return emitError(loc)
                 << "'" << fetchNames[i] << "' was never computed: " << stalled,
             failure();
    if (slot->dead)
      return emitError(loc)
                 << "Retval[" << i << "] does not have value ('"
                 << fetchNames[i] << "' is on an untaken Switch branch)",
             failure();
    results.push_back(slot->value);
  }
  return results;
}

/// The host programs of the kinds of runs made so far.
struct Executor::HostPrograms {
  struct Entry {
    std::optional<HostProgram> program;
    std::unique_ptr<CompiledHostProgram> compiled;
    /// Why the run needs the executor (when there is no program).
    std::string reason;
    ValidatedNodes validated;
  };
  std::map<std::string, Entry> entries;
  Entry *last = nullptr;

  Entry &get(Executor &interpreter, ModuleOp module, Block &body,
             const std::vector<std::pair<std::string, Tensor>> &feeds,
             ArrayRef<std::string> fetches, ArrayRef<std::string> targets,
             ArrayRef<Operation *> roots,
             const llvm::DenseMap<Value, Tensor> &fed,
             ArrayRef<Value> fedValues, ArrayRef<Value> fetchValues) {
    std::string key;
    for (const auto &feed : feeds)
      key += feed.first + '\0';
    key += '\1';
    for (const std::string &name : fetches)
      key += name + '\0';
    key += '\1';
    for (const std::string &name : targets)
      key += name + '\0';
    auto [it, inserted] = entries.try_emplace(key);
    Entry &entry = it->second;
    if (!inserted)
      return entry;
    UnitInputs unitInputs;
    llvm::DenseSet<Operation *> needed =
        collectNeeded(body, roots, fed, unitInputs);
    SmallVector<Operation *> units;
    for (Operation &op : body)
      if (isUnit(&op) && needed.count(&op))
        units.push_back(&op);
    FailureOr<HostProgram> program = buildHostProgram(
        interpreter, module, body, units, fedValues, fetchValues, entry.reason);
    if (failed(program))
      return entry;
    entry.program = std::move(*program);
    if (interpreter.hostProgramCompiler) {
      std::string error;
      entry.compiled =
          interpreter.hostProgramCompiler->compile(*entry.program, error);
      if (!entry.compiled) {
        // The program still runs, stepped through by the runtime.
        entry.reason = "its host program did not compile: " + error;
      }
    }
    return entry;
  }
};

Executor::Executor(ModuleOp module)
    : module(module), executionLock(std::make_unique<ExecutionLock>()),
      rendezvous(std::make_unique<Rendezvous>(*executionLock)),
      hostPrograms(std::make_unique<HostPrograms>()) {}

Executor::~Executor() = default;

void Executor::setHostPrograms(bool enabled, HostProgramCompiler *compiler) {
  hostProgramsEnabled = enabled;
  hostProgramCompiler = compiler;
}

const HostProgram *Executor::getLastHostProgram(std::string &reason) const {
  HostPrograms::Entry *last = hostPrograms->last;
  reason = last ? last->reason : "host programs are off";
  return last && last->program ? &*last->program : nullptr;
}

FailureOr<std::vector<Tensor>>
Executor::run(const std::vector<std::pair<std::string, Tensor>> &feeds,
              ArrayRef<std::string> fetches, ArrayRef<std::string> targets) {
  Location loc = module.getLoc();
  GraphOp graph;
  for (auto g : module.getOps<GraphOp>())
    graph = g;
  if (!graph)
    return emitError(loc, "the module has no graph.graph to run"), failure();
  Block &body = graph.getBody().front();

  // What names name: top-level nodes; a replicate's folded
  // TPUReplicatedOutputs (their n outputs); a cluster by its metadata (as
  // a target). Nodes inside clusters and replicas are sealed.
  struct Named {
    Operation *op;
    SmallVector<Value> outputs;
  };
  llvm::StringMap<Named> byName;
  llvm::StringMap<NodeOp> sealed;
  bool replicated = false;
  for (Operation &op : body) {
    if (auto node = dyn_cast<NodeOp>(op)) {
      byName[node.getName()] = {node, SmallVector<Value>(node.getOutputs())};
      continue;
    }
    auto cluster = dyn_cast<ClusterOp>(op);
    auto replicate = dyn_cast<ReplicateOp>(op);
    if (replicate)
      cluster = replicate.getCluster();
    if (!cluster)
      return op.emitError()
                 << "the interpreter cannot run '" << op.getName() << "'",
             failure();
    replicated = true;
    byName[cluster.getMetadataName()] = {&op, {}};
    forEachNodeOfComputation(
        &op, [&](NodeOp inner) { sealed[inner.getName()] = inner; });
    if (!replicate)
      continue;
    int64_t n = replicate.getN();
    for (auto [k, entry] : llvm::enumerate(replicate.getOutputNodes()))
      if (auto name = cast<DictionaryAttr>(entry).getAs<StringAttr>("name"))
        byName[name.getValue()] = {
            &op, SmallVector<Value>(replicate.getOutputs().slice(k * n, n))};
  }
  auto sealedError = [&](StringRef name) -> LogicalResult {
    NodeOp node = sealed.lookup(name);
    if (!node)
      return success();
    return node.emitError() << getNotFetchableMessage(name);
  };

  // " (did you mean 'x'?)" for the nearest names.
  auto suggest = [&](StringRef wrong) { return suggestNearest(wrong, byName); };

  // Resolve feeds and fetches. A name the graph lacks is the request's
  // fault, not the graph's: its error has no place in the graph's source.
  Location requestLoc = UnknownLoc::get(module.getContext());
  llvm::DenseMap<Value, Tensor> fed;
  SmallVector<Value> fedValues;
  std::vector<Tensor> fedTensors;
  for (const auto &[name, tensor] : feeds) {
    auto [nodeName, port] = splitTensorName(name);
    if (NodeOp inner = sealed.lookup(nodeName))
      return inner.emitError() << getNotFeedableMessage(name), failure();
    auto node = dyn_cast_or_null<NodeOp>(byName.lookup(nodeName).op);
    if (!node || port >= node.getOutputs().size())
      return emitError(requestLoc)
                 << "cannot feed '" << name << "': no such tensor in the graph"
                 << (node ? "" : suggest(nodeName)),
             failure();
    if (auto error = getReplicationFeedError(node, port))
      return node.emitError() << *error, failure();
    Value v = node.getOutputs()[port];
    // A placeholder's declared shape, whether or not inference ran.
    Type declared = v.getType();
    if (auto shape = dyn_cast_or_null<ShapeAttr>(node.getTFAttr("shape")))
      if (auto type = dyn_cast<TensorType>(declared);
          type && node.getOpType().starts_with("Placeholder"))
        declared = getTensorType(type.getElementType(), shape);
    if (auto type = dyn_cast<TensorType>(declared)) {
      int32_t dt = typeToDataType(type.getElementType());
      if (dt > 0 && dt != tensor.dtype())
        return node.emitError()
                   << "Node '" << node.getName() << "': fed a "
                   << dtypeName(tensor.dtype())
                   << " tensor, but the node produces " << dtypeName(dt),
               failure();
      if (!fitsShape(tensor, type))
        return node.emitError()
                   << "Node '" << node.getName() << "': fed a tensor of shape "
                   << shapeString(tensor.shape())
                   << ", which does not match its shape "
                   << shapeString(cast<RankedTensorType>(type).getShape()),
               failure();
    }
    fed[v] = tensor;
    fedValues.push_back(v);
    fedTensors.push_back(tensor);
  }
  SmallVector<Value> fetchValues;
  for (const std::string &name : fetches) {
    auto [nodeName, port] = splitTensorName(name);
    if (failed(sealedError(nodeName)))
      return failure();
    auto it = byName.find(nodeName);
    if (it == byName.end())
      return emitError(requestLoc)
                 << "cannot fetch '" << name << "': no node named '" << nodeName
                 << "'" << suggest(nodeName),
             failure();
    const Named &named = it->second;
    if (port >= named.outputs.size()) {
      // An op this build does not know has only the outputs its consumers
      // use: say that, not that it has none.
      if (auto node = dyn_cast<NodeOp>(named.op);
          node && failed(checkOpIsKnown(node)))
        return failure();
      return emitError(requestLoc)
                 << "cannot fetch '" << name << "': node '" << nodeName
                 << "' has " << named.outputs.size()
                 << (named.outputs.size() == 1 ? " output" : " outputs"),
             failure();
    }
    if (auto node = dyn_cast<NodeOp>(named.op))
      if (auto error = getReplicationFetchError(node))
        return node.emitError() << *error, failure();
    fetchValues.push_back(named.outputs[port]);
  }
  SmallVector<Operation *> roots;
  for (Value v : fetchValues)
    if (!fed.count(v))
      roots.push_back(v.getDefiningOp());
  for (const std::string &name : targets) {
    if (failed(sealedError(name)))
      return failure();
    Operation *op = byName.lookup(name).op;
    if (!op)
      return emitError(requestLoc)
                 << "cannot run target '" << name << "': no node named '"
                 << name << "'" << suggest(name),
             failure();
    if (auto node = dyn_cast<NodeOp>(op))
      if (auto error = getReplicationFetchError(node))
        return node.emitError() << *error, failure();
    roots.push_back(op);
  }
  size_t firstTarget = roots.size() - targets.size();
  llvm::DenseSet<Operation *> needed;
  ChannelUse channels = addHostSidesAsTargets(module, body, roots, fed, needed);
  SendCensus census{std::move(channels.sentChannels),
                    std::move(channels.sentQueues), {}};
  if (!channels.receivedChannels.empty())
    census.senders = findSenders(module, needed);

  HostPrograms::Entry *program = nullptr;
  if (hostProgramsEnabled)
    program = &hostPrograms->get(*this, module, body, feeds, fetches, targets,
                                 roots, fed, fedValues, fetchValues);
  hostPrograms->last = program;

  // One kernel at a time; replicas and host transfers wait on channels.
  executionLock->acquire();
  rendezvous->reset(channelTimeout);
  rendezvous->setSendCensus(std::move(census));
  rendezvous->setSpinWaits(program && program->program);
  // A failed replicated step leaves the variables of the last good one.
  std::optional<llvm::StringMap<Tensor>> saved;
  if (replicated)
    saved = state.variables;
  SmallVector<std::string> fetchNames(fetches.begin(), fetches.end());
  FailureOr<std::vector<Tensor>> results = failure();
  if (program && program->program) {
    // Its steps take the lock as they need it.
    UnlockedScope unlocked(*executionLock);
    results = runHostProgram(*this, *program->program, program->compiled.get(),
                             program->validated, fedTensors);
  } else {
    results = runBlock(*this, body, fed, fetchValues, fetchNames, roots,
                       firstTarget, DictionaryAttr(), loc);
  }
  if (failed(results) && saved)
    state.variables = std::move(*saved);
  executionLock->release();
  if (failed(results))
    return failure();
  // A ref variable fetched before anything assigned it has no value.
  for (auto [value, tensor, name] :
       llvm::zip(fetchValues, *results, fetchNames))
    if (!tensor.isValid()) {
      auto node = value.getDefiningOp<NodeOp>();
      return emitError(node ? node.getLoc() : loc)
                 << "Node '" << (node ? node.getName() : StringRef(name))
                 << "': Attempting to use uninitialized value " << name,
             failure();
    }
  return results;
}

void Executor::runUnlocked(llvm::function_ref<void()> work) {
  UnlockedScope unlocked(*executionLock);
  work();
}

unsigned Executor::countCompiledDevices(ArrayRef<Operation *> units) {
  llvm::SmallDenseSet<int64_t, 4> devices;
  for (Operation *unit : units)
    if (auto node = dyn_cast<NodeOp>(unit);
        node && node.getTFBool("_XlaCompiledKernel").value_or(false))
      devices.insert(graph::getRuntimeCPUDevice(node.getDevice().value_or("")));
  return devices.size();
}

unsigned Executor::getReplicasRunning() {
  return rendezvous->getReplicasRunning();
}

void Executor::takeDeviceQueuesFrom(Executor &previous) {
  rendezvous->takeQueuesFrom(*previous.rendezvous);
}

State &Executor::getState() {
  State *replica = getReplicaState();
  if (replica && !isOnReplicaHost())
    return *replica;
  return state;
}

bool Executor::waitsOnChannel(Operation *op) {
  auto node = cast<NodeOp>(op);
  StringRef opType = node.getOpType();
  if (opType == "_XlaRecvAtHost" || opType == "_XlaRecvAtHostV2" ||
      opType == "OutfeedDequeueTuple" || opType == "InfeedDequeueTuple" ||
      opType == "InfeedDequeue" || opType == "XlaRecvFromHost" ||
      opType == "_XlaHostComputeMlir")
    return true;
  // Host twins of control flow: calls of functions that hold receives.
  std::function<bool(StringRef)> holdsReceive = [&](StringRef name) {
    auto func = module.lookupSymbol<FuncOp>(name);
    if (!func || func.getBody().empty())
      return false;
    auto [it, inserted] = functionsWaiting.try_emplace(func, false);
    if (!inserted)
      return it->second;
    bool waits = false;
    for (auto inner : func.getBody().front().getOps<NodeOp>())
      if (waitsOnChannel(inner)) {
        waits = true;
        break;
      }
    return functionsWaiting[func] = waits;
  };
  return llvm::any_of(getCalledFunctions(node),
                      [&](auto called) { return holdsReceive(called.second); });
}

FailureOr<std::vector<Tensor>> Executor::call(StringRef function,
                                              ArrayRef<Tensor> args,
                                              DictionaryAttr bindings,
                                              Operation *caller) {
  llvm::DenseMap<Value, Tensor> fed;
  FailureOr<Block *> entered =
      enterFunction(module, function, args, caller, callDepth, fed);
  if (failed(entered))
    return failure();
  Block &body = **entered;
  auto func = cast<FuncOp>(body.getParentOp());

  // What runs: the producers of the results and control outputs, and, as in
  // TensorFlow's function runtime, every stateful node.
  ReturnOp ret = func.getReturnOp();
  SmallVector<Value> results;
  SmallVector<std::string> names;
  SmallVector<Operation *> roots;
  for (Value v : ret.getOperands()) {
    if (!isa<ControlType>(v.getType())) {
      results.push_back(v);
      names.push_back(function.str() + " result " +
                      std::to_string(results.size() - 1));
    }
    if (auto producer = v.getDefiningOp<NodeOp>())
      roots.push_back(producer);
  }
  for (auto node : body.getOps<NodeOp>()) {
    const ops::OpSpec *spec = ops::lookupOp(node.getOpType());
    if ((spec && spec->isStateful) ||
        module.lookupSymbol<FuncOp>(node.getOpType()))
      roots.push_back(node);
  }
  // Kernels run under the execution lock, also when a call comes from
  // outside a run (it is recursive: calls from kernels already hold it).
  executionLock->acquire();
  ++callDepth;
  auto outputs = runBlock(*this, body, fed, results, names, roots, roots.size(),
                          bindings, caller->getLoc());
  --callDepth;
  executionLock->release();
  return outputs;
}

FailureOr<std::optional<std::vector<Tensor>>>
Executor::callCompiled(Operation *caller, Operation *function,
                       ArrayRef<Tensor> args) {
  if (!compiledCalls)
    return std::optional<std::vector<Tensor>>();
  return compiledCalls->call(*this, caller, function, args);
}
