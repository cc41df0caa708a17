//===- CPUClusterRunner.cpp - compiled clusters on the host CPU -----------===//

#include "cleave/Runtime/CPUClusterRunner.h"
#include "cleave/Support/DelayedNote.h"

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Runtime/Collectives.h"
#include "cleave/Runtime/Rendezvous.h"
#include "cleave/Target/CPU/CPUTarget.h"
#include "cleave/Target/CPU/CompiledCollectives.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Timer.h"

#include <chrono>
#include <cstring>
#include <set>

using namespace mlir;
using namespace cleave;
using namespace cleave::runtime;
using conversion::ArgSpecialization;
using conversion::LoweredFunction;
using conversion::TensorSpec;

struct CPUClusterRunner::Executable {
  LoweredFunction lowered;
  std::unique_ptr<cpu::JITModule> jit;
  cpu::JITModule::PackedFunction entry = nullptr;
};

namespace {

/// Compiled collectives of one call, met on the interpreter's rendezvous
/// as the interpreter's kernels meet there: the replicas of a replicated
/// computation sum alike whether each is compiled or interpreted.
class RendezvousCollectives : public cpu::Collectives {
public:
  RendezvousCollectives(Rendezvous &rendezvous, int64_t numReplicas)
      : rendezvous(rendezvous), numReplicas(numReplicas) {}

  cpu::CollectiveStatus crossReplicaSum(const void *op, const void *in,
                                        void *out, int64_t count,
                                        int32_t dtype, const int32_t *groups,
                                        std::vector<int64_t> groupsShape)
      override {
    if (failed)
      return cpu::kCollectiveCancelled;
    Tensor groupTable =
        Tensor::uninitialized(cleave::kInt32, std::move(groupsShape));
    std::memcpy(groupTable.raw(), groups, groupTable.byteSize());
    if (!runtime::crossReplicaSumInPlace(rendezvous, op, numReplicas, in, out,
                                         count, dtype, groupTable, error)) {
      // The compiled code goes on to its end: later collectives of this
      // call return at once (the failure cancelled the others' waits).
      failed = true;
      return error.empty() ? cpu::kCollectiveCancelled
                           : cpu::kCollectiveFailed;
    }
    return cpu::kCollectiveOk;
  }

  cpu::CollectiveStatus hostTransfer(const void *op, const int64_t *inputs,
                                     int64_t numInputs, const int64_t *outputs,
                                     int64_t numOutputs) override {
    if (failed)
      return cpu::kCollectiveCancelled;
    auto node = cast<graph::NodeOp>(
        static_cast<Operation *>(const_cast<void *>(op)));
    auto key = [&](StringRef name) -> std::string {
      auto value = dyn_cast_or_null<StringAttr>(node.getTFAttr(name));
      return value ? value.str() : "";
    };
    std::string sendKey, recvKey;
    StringRef opType = node.getOpType();
    bool queue = false;
    if (opType == "_XlaHostComputeMlir") {
      sendKey = key("send_key");
      recvKey = key("recv_key");
    } else if (opType == "XlaSendToHost") {
      sendKey = key("key");
    } else if (opType.starts_with("InfeedDequeue")) {
      recvKey = runtime::kInfeedQueue;
      queue = true;
    } else if (opType.starts_with("OutfeedEnqueue")) {
      sendKey = runtime::kOutfeedQueue;
      queue = true;
    } else {
      recvKey = key("key");
    }
    // Each tensor: address, dtype, rank, dims.
    auto describe = [](const int64_t *&at) {
      void *address = reinterpret_cast<void *>(at[0]);
      int32_t dtype = static_cast<int32_t>(at[1]);
      std::vector<int64_t> shape(at + 3, at + 3 + at[2]);
      at += 3 + at[2];
      return std::make_tuple(address, dtype, std::move(shape));
    };
    std::vector<Tensor> sent;
    for (int64_t i = 0; i < numInputs; ++i) {
      auto [address, dtype, shape] = describe(inputs);
      Tensor t = Tensor::uninitialized(dtype, std::move(shape));
      std::memcpy(t.raw(), address, t.byteSize());
      sent.push_back(std::move(t));
    }
    auto fail = [&](std::string message) {
      error = std::move(message);
      failed = true;
      rendezvous.cancel();
      return cpu::kCollectiveFailed;
    };
    std::optional<std::vector<Tensor>> received = sendAndReceiveOnDevice(
        rendezvous, sendKey, std::move(sent), recvKey, error, queue);
    if (!received) {
      failed = true;
      return error.empty() ? cpu::kCollectiveCancelled
                           : fail(std::move(error));
    }
    if (!recvKey.empty() && (int64_t)received->size() != numOutputs)
      return fail("expected " + std::to_string(numOutputs) +
                  " tensors on channel '" + recvKey + "', but " +
                  std::to_string(received->size()) + " arrived");
    for (int64_t i = 0; i < numOutputs && !recvKey.empty(); ++i) {
      auto [address, dtype, shape] = describe(outputs);
      const Tensor &t = (*received)[i];
      // The interpreter's messages for the same checks.
      if (t.dtype() != dtype)
        return fail("tensor " + std::to_string(i) + " on channel '" + recvKey +
                    "' is " + cleave::dtypeName(t.dtype()) + ", expected " +
                    cleave::dtypeName(dtype));
      if (t.shape() != shape)
        return fail("tensor " + std::to_string(i) + " of the channel '" +
                    recvKey + "' has shape " + cleave::shapeString(t.shape()) +
                    ", but " + node.getOpType().str() + " declares " +
                    cleave::shapeString(shape));
      std::memcpy(address, t.raw(), t.byteSize());
    }
    return cpu::kCollectiveOk;
  }

  /// Why the first collective that failed did (empty: another replica
  /// failed first and reported it).
  std::string error;
  bool failed = false;

private:
  Rendezvous &rendezvous;
  int64_t numReplicas;
};
} // namespace

struct CPUClusterRunner::FunctionCache {
  /// Arguments the lowering needs as values.
  llvm::DenseSet<unsigned> constantArgs;
  /// Executables by argument signature; several per signature when the
  /// variables they read have changed shape.
  std::map<std::string, std::vector<std::unique_ptr<Executable>>> bySignature;
  /// Signatures that did not compile: the interpreter runs them.
  std::set<std::string> interpreted;
};

CPUClusterRunner::CPUClusterRunner() = default;
CPUClusterRunner::~CPUClusterRunner() = default;

static std::optional<TensorSpec> variableSpec(interp::State &state,
                                              llvm::StringRef name) {
  auto it = state.variables.find(name);
  if (it == state.variables.end() || !it->second.isValid())
    return std::nullopt;
  return TensorSpec{it->second.dtype(), it->second.shape()};
}

/// The key of a call: each argument's dtype and shape, the variable a
/// resource names, the bytes of a compile-time constant.
static std::string signatureOf(llvm::ArrayRef<Tensor> args,
                               const llvm::DenseSet<unsigned> &constantArgs) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (auto [i, t] : llvm::enumerate(args)) {
    os << t.dtype() << cleave::shapeString(t.shape());
    if (t.dtype() == cleave::kResource || t.dtype() == cleave::kString)
      for (const std::string &s : t.strings())
        os << '"' << s << '"';
    else if (constantArgs.count(i))
      os << '=' << llvm::StringRef(t.raw(), t.byteSize());
    os << ';';
  }
  return key;
}

FailureOr<CPUClusterRunner::Executable *>
CPUClusterRunner::getExecutable(Operation *caller, Operation *function,
                                llvm::ArrayRef<Tensor> args,
                                interp::State &state) {
  auto func = cast<graph::FuncOp>(function);
  std::unique_ptr<FunctionCache> &cache = functions[function];
  if (!cache)
    cache = std::make_unique<FunctionCache>();
  std::string key = signatureOf(args, cache->constantArgs);
  if (cache->interpreted.count(key))
    return static_cast<Executable *>(nullptr);
  for (const auto &executable : cache->bySignature[key]) {
    bool matches = true;
    for (const conversion::VariableSlot &slot : executable->lowered.variables)
      if (slot.argIndex >= 0) {
        std::optional<TensorSpec> spec = variableSpec(state, slot.name);
        if (!spec && slot.initial)
          spec = TensorSpec{slot.initial->dtype(), slot.initial->shape()};
        matches &= spec && spec->dtype == slot.dtype &&
                   spec->shape == slot.shape;
      }
    if (matches)
      return executable.get();
  }

  auto start = std::chrono::steady_clock::now();
  // A long compile says what it compiles while it runs, and how long it
  // took when it is done.
  std::string what;
  std::optional<DelayedNote> pending;
  if (slowCompileNotes) {
    unsigned nodes = 0;
    func.walk([&](graph::NodeOp) { ++nodes; });
    what = func.getName().str() + " (" + std::to_string(nodes) +
           (nodes == 1 ? " node)" : " nodes)");
    pending.emplace(slowCompileSeconds, [this, &what] {
      *slowCompileNotes << notePrefix << "compiling " << what << " ...\n";
      slowCompileNotes->flush();
    });
  }
  MLIRContext *context = func.getContext();
  {
    DialectRegistry registry;
    cpu::registerCPUDialects(registry);
    context->appendDialectRegistry(registry);
  }
  auto variableType = [&state](llvm::StringRef name) {
    return variableSpec(state, name);
  };
  OwningOpRef<ModuleOp> module = ModuleOp::create(func.getLoc());
  // Everything compilation says is held back: it becomes the error in
  // strict mode, a note otherwise (the interpreter then runs the call).
  std::vector<Diagnostic> diagnostics;
  std::optional<ScopedDiagnosticHandler> capture;
  capture.emplace(context, [&](Diagnostic &diag) {
    diagnostics.push_back(std::move(diag));
    return success();
  });
  auto giveUp = [&]() -> FailureOr<Executable *> {
    capture.reset();
    if (strict) {
      for (Diagnostic &diag : diagnostics)
        context->getDiagEngine().emit(std::move(diag));
      return caller->emitError() << "compiling '" << func.getSymName()
                                 << "' for the CPU failed",
             failure();
    }
    if (notes)
      *notes << notePrefix << func.getSymName()
             << ": interpreted: it does not compile for these arguments ("
             << (diagnostics.empty() ? std::string("no reason given")
                                     : diagnostics.front().str())
             << ")\n";
    cache->interpreted.insert(signatureOf(args, cache->constantArgs));
    return static_cast<Executable *>(nullptr);
  };

  FailureOr<LoweredFunction> lowered = failure();
  // Lower; when an argument turns out to be needed as a value, again with
  // its value (the earlier attempts' diagnostics are dropped). One value
  // can make another one needed (a Slice's size with -1 entries makes its
  // begin decide the shape): a few rounds.
  for (int attempt = 0; attempt < 4; ++attempt) {
    llvm::SmallVector<ArgSpecialization> specs;
    for (auto [i, t] : llvm::enumerate(args)) {
      ArgSpecialization spec;
      spec.dtype = t.dtype();
      spec.shape = t.shape();
      if (t.dtype() == cleave::kResource)
        spec.variable = t.numElements() == 1 ? t.strings()[0] : "";
      else if (cache->constantArgs.count(i))
        spec.constant = t;
      specs.push_back(std::move(spec));
    }
    llvm::DenseSet<unsigned> needsConstant;
    diagnostics.clear();
    conversion::LoweringRequest request =
        conversion::requestForFunction(func, specs, variableType);
    request.maxIterations = maxIterations;
    lowered = conversion::lowerToLinalg(request, *module, "cluster",
                                        needsConstant);
    bool retry = false;
    for (unsigned arg : needsConstant)
      retry |= cache->constantArgs.insert(arg).second;
    if (succeeded(lowered) || !retry)
      break;
  }
  if (failed(lowered))
    return giveUp();
  // The signature now names the constant arguments' values too.
  key = signatureOf(args, cache->constantArgs);
  if (dumpLinalg)
    *dumpLinalg << "// " << func.getSymName() << "\n" << *module << "\n";

  PassManager pm(context);
  cpu::buildLinalgToLLVMPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return giveUp();
  std::string error;
  auto executable = std::make_unique<Executable>();
  executable->lowered = std::move(*lowered);
  executable->jit = cpu::JITModule::create(*module, error);
  if (executable->jit)
    executable->entry = executable->jit->lookup("cluster");
  if (!executable->entry) {
    emitError(func.getLoc()) << error;
    return giveUp();
  }
  ++statistics.compilations;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  statistics.compileSeconds += seconds;
  if (pending)
    pending->stop();
  if (slowCompileNotes && seconds > slowCompileSeconds) {
    *slowCompileNotes << notePrefix << "compiled " << what << " in "
                      << llvm::format("%.1f", seconds) << " s\n";
    slowCompileNotes->flush();
  }
  auto &list = cache->bySignature[key];
  list.push_back(std::move(executable));
  return list.back().get();
}

void CPUClusterRunner::VariableLocks::acquire(const std::vector<Key> &keys) {
  std::unique_lock<std::mutex> guard(mutex);
  released.wait(guard, [&] {
    return llvm::none_of(keys, [&](const Key &key) { return held.count(key); });
  });
  held.insert(keys.begin(), keys.end());
}

void CPUClusterRunner::VariableLocks::release(const std::vector<Key> &keys) {
  {
    std::lock_guard<std::mutex> guard(mutex);
    for (const Key &key : keys)
      held.erase(key);
  }
  released.notify_all();
}

FailureOr<std::optional<std::vector<Tensor>>>
CPUClusterRunner::call(interp::Executor &interpreter, Operation *caller,
                       Operation *function, llvm::ArrayRef<Tensor> args) {
  interp::State &state = interpreter.getState();
  FailureOr<Executable *> executable =
      getExecutable(caller, function, args, state);
  if (failed(executable))
    return failure();
  if (!*executable)
    return std::optional<std::vector<Tensor>>();
  const LoweredFunction &lowered = (*executable)->lowered;
  ++statistics.calls;

  // Held from reading the variables to writing them back; taken without
  // the execution lock, which the holder needs to finish.
  std::vector<VariableLocks::Key> variableKeys;
  for (const conversion::VariableSlot &slot : lowered.variables)
    variableKeys.push_back({&state, slot.name});
  if (!variableKeys.empty())
    interpreter.runUnlocked([&] { variableLocks.acquire(variableKeys); });
  auto releaseVariables = llvm::make_scope_exit([&] {
    if (!variableKeys.empty())
      variableLocks.release(variableKeys);
  });

  // The compiled function's arguments: data arguments, then the variables
  // it reads; its results follow as out-parameters.
  std::vector<Tensor> arguments;
  for (unsigned i : lowered.dataArgs)
    arguments.push_back(args[i]);
  for (const conversion::VariableSlot &slot : lowered.variables)
    if (slot.argIndex >= 0) {
      auto it = state.variables.find(slot.name);
      if ((it != state.variables.end() && it->second.isValid()) ||
          !slot.initial) {
        arguments.push_back(state.variables[slot.name]);
        continue;
      }
      // A copy: compiled code may update its arguments in place.
      Tensor initial(slot.initial->dtype(), slot.initial->shape());
      std::memcpy(initial.raw(), slot.initial->raw(), initial.byteSize());
      arguments.push_back(std::move(initial));
    }
  std::vector<Tensor> computed;
  for (const TensorSpec &spec : lowered.resultSpecs)
    computed.push_back(Tensor::uninitialized(spec.dtype, spec.shape));
  std::vector<void *> buffers;
  for (Tensor &t : arguments)
    buffers.push_back(t.raw());
  for (Tensor &t : computed)
    buffers.push_back(t.raw());
  std::vector<void *> packed;
  for (void *&buffer : buffers)
    packed.push_back(&buffer);
  // Other replicas and devices run meanwhile (the code touches only these
  // buffers), each on its share of the cores (set on every call: the interpreter's
  // threads serve replicas and other work in turn).
  cpu::shareKernelThreads(std::max(
      {1u, interpreter.getReplicasRunning(), interpreter.getParallelDevices()}));
  if (sharesCores)
    cpu::stopKernelThreadSpinning();
  auto replicate = caller->getParentOfType<graph::ReplicateOp>();
  RendezvousCollectives collectives(interpreter.getRendezvous(),
                                    replicate ? replicate.getN() : 1);
  size_t bytesNotAllocated = 0;
  cpu::takeErrorDetail(); // a message from an earlier call that succeeded
  interpreter.runUnlocked([&] {
    cpu::CollectivesScope scope(&collectives);
    bytesNotAllocated =
        cpu::callReportingOutOfMemory((*executable)->entry, packed.data());
  });
  if (bytesNotAllocated) {
    // The replicas waiting for this one's collectives would wait in vain.
    interpreter.getRendezvous().cancel();
    auto node = dyn_cast<graph::NodeOp>(caller);
    InFlightDiagnostic diag = caller->emitError();
    if (node)
      diag << "Node '" << node.getName() << "': ";
    return diag << "OOM when allocating a buffer of " << bytesNotAllocated
                << " bytes in compiled code",
           failure();
  }
  if (lowered.statusResult) {
    int64_t status = computed[*lowered.statusResult].data<int64_t>()[0];
    if (collectives.failed && collectives.error.empty())
      return failure(); // another replica's failure, reported there
    // On the node that failed, which the call stands for.
    // A check's message (a compiled TensorList's) completes an error
    // whose text the lowering left to the run.
    std::string detail = cpu::takeErrorDetail();
    if (status > 0 && status <= int64_t(lowered.errors.size())) {
      const auto &error = lowered.errors[status - 1];
      return emitError(error.loc)
                 << error.message << collectives.error
                 << (StringRef(error.message).ends_with("': ") ? detail : ""),
             failure();
    }
  }

  auto valueOf = [&](const conversion::ValueSource &source) -> Tensor {
    switch (source.kind) {
    case conversion::ValueSource::Kind::Result:
      return computed[source.index];
    case conversion::ValueSource::Kind::Argument:
      return arguments[source.index];
    case conversion::ValueSource::Kind::Constant:
      return *source.constant;
    }
    llvm_unreachable("unknown value source");
  };
  std::vector<Tensor> results;
  for (const conversion::ValueSource &source : lowered.outputs)
    results.push_back(valueOf(source));
  for (const conversion::VariableSlot &slot : lowered.variables)
    if (slot.written)
      state.variables[slot.name] = valueOf(*slot.written);
  return std::optional<std::vector<Tensor>>(std::move(results));
}
