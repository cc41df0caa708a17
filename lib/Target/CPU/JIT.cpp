//===- JIT.cpp - host code from the LLVM dialect --------------------------===//
//
// The ORC JIT (through MLIR's ExecutionEngine) for graph-run, and object
// files for ahead-of-time use; both for the host CPU with its features, at
// -O3.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/CPUTarget.h"

#include "cleave/Target/CPU/KernelLibrary.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace cleave::cpu;

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Full unrolling only of loops of at most 8 iterations: unrolling the
    // outer loops of a nest multiplies the memory accesses the loop
    // vectorizer then compares pair by pair (LLVM 19 spent minutes on the
    // fill of a 5x5x32x64 filter). LLVM has this limit as an option only.
    auto &options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("unroll-full-max-count"); it != options.end())
      it->second->addOccurrence(0, "unroll-full-max-count", "8");
  });
}

/// A target machine for the host CPU and its features; position-independent
/// for object files that executables (PIE by default) link.
static std::unique_ptr<llvm::TargetMachine>
hostTargetMachine(std::string &error, bool positionIndependent = false) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (positionIndependent)
    builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return nullptr;
  }
  return std::move(*machine);
}

/// LLVM's -O3 pipeline for `machine`.
static std::function<llvm::Error(llvm::Module *)>
optimizer(llvm::TargetMachine *machine) {
  return [machine](llvm::Module *module) -> llvm::Error {
    llvm::PipelineTuningOptions tuning;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(machine, tuning);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
        .run(*module, mam);
    return llvm::Error::success();
  };
}

JITModule::~JITModule() = default;

std::unique_ptr<JITModule>
JITModule::create(ModuleOp module, std::string &error,
                  llvm::ArrayRef<KernelSymbol> extraSymbols, bool optimize) {
  configureKernelThreads();
  // Small code model, position-independent: the JIT's default (large)
  // materializes every callee's and global's 64-bit address in a register,
  // and register allocation of a step's straight-line function, thousands
  // of calls long, then took most of the compile time (14 of 22 s of code
  // generation for a 10,000-node graph; 0.3 s with the small model).
  // External calls go through the linker's stubs.
  std::unique_ptr<llvm::TargetMachine> machine =
      hostTargetMachine(error, /*positionIndependent=*/true);
  if (!machine)
    return nullptr;
  machine->setCodeModel(llvm::CodeModel::Small);
  // The options hold a reference to the transformer: it lives here.
  std::function<llvm::Error(llvm::Module *)> transformer =
      optimizer(machine.get());
  ExecutionEngineOptions options;
  if (optimize) {
    options.transformer = transformer;
    options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  } else {
    machine->setOptLevel(llvm::CodeGenOptLevel::None);
    options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::None;
  }
  // No debugger or profiler listens; registering every module costs time.
  options.enableGDBNotificationListener = false;
  // Under `perf record -k 1` with CLEAVE_PERF_JIT set, compiled kernels are
  // named in profiles (after `perf inject --jit`).
  options.enablePerfNotificationListener = std::getenv("CLEAVE_PERF_JIT");
  auto engine = ExecutionEngine::create(module, options, std::move(machine));
  if (!engine) {
    error = llvm::toString(engine.takeError());
    return nullptr;
  }
  // Calls of the kernel library resolve to this process's copy.
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](llvm::ArrayRef<KernelSymbol> table) {
      for (const KernelSymbol &symbol : table)
        symbols[interner(symbol.name)] = {
            llvm::orc::ExecutorAddr::fromPtr(symbol.address),
            llvm::JITSymbolFlags::Exported};
    };
    size_t count = 0;
    const KernelSymbol *kernels = getKernelSymbols(count);
    add(llvm::ArrayRef(kernels, count));
    add(extraSymbols);
    return symbols;
  });
  std::unique_ptr<JITModule> jit(new JITModule());
  jit->engine = std::move(*engine);
  return jit;
}

JITModule::PackedFunction JITModule::lookup(llvm::StringRef name) const {
  auto fn = engine->lookupPacked(name);
  if (!fn) {
    llvm::consumeError(fn.takeError());
    return nullptr;
  }
  return *fn;
}

void *JITModule::lookupAddress(llvm::StringRef name) const {
  auto address = engine->lookup(name);
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return *address;
}

LogicalResult cleave::cpu::emitObjectFile(ModuleOp module,
                                          llvm::raw_pwrite_stream &os,
                                          std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine =
      hostTargetMachine(error, /*positionIndependent=*/true);
  if (!machine)
    return failure();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "the module does not translate to LLVM IR";
    return failure();
  }
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple().getTriple());
  if (llvm::Error e = optimizer(machine.get())(llvmModule.get())) {
    error = llvm::toString(std::move(e));
    return failure();
  }
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  passes.run(*llvmModule);
  return success();
}
