//===- CPUTarget.h - native code for the host CPU ---------------*- C++ -*-===//
//
// The CPU target takes the functions GraphToLinalg builds (linalg on static
// tensors) to native code: bufferization, loops, the LLVM dialect, and LLVM
// for the host CPU (its name and features, AVX-512 where present). Compiled
// functions use the bare-pointer calling convention: every argument and
// result is one pointer to a dense row-major buffer, results first written
// by the function (out-parameters after the inputs).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_CPU_CPUTARGET_H
#define CLEAVE_TARGET_CPU_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class ExecutionEngine;
class OpPassManager;
} // namespace mlir

/// Marks a function that calls JIT-compiled code through a pointer. UBSan's
/// function-type check reads a signature just before the callee's entry,
/// which JIT code lacks; where the code starts a page, that read faults.
#if defined(__clang__)
#define CLEAVE_CALLS_JIT_CODE __attribute__((no_sanitize("function")))
#else
#define CLEAVE_CALLS_JIT_CODE
#endif

namespace cleave::cpu {

struct KernelSymbol;

/// Registers the dialects and interface models the CPU pipeline needs
/// (bufferization of linalg/tensor/arith, translation to LLVM IR).
void registerCPUDialects(mlir::DialectRegistry &registry);

/// The choices of the CPU pipeline.
struct CPUPipelineOptions {
  /// Loop nests of at least this many iterations run on all threads
  /// (parallelize-kernels' min-iterations).
  int64_t parallelMinIterations = 32768;
};

/// Adds the passes from linalg on tensors to the LLVM dialect.
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm,
                               const CPUPipelineOptions &options = {});

/// Registers `graph-cpu-codegen` (the pipeline above) with the pass
/// registry, for graph-opt.
void registerCPUPipelines();

/// The host CPU as LLVM names it ("znver4") and its features.
std::string getHostCPUDescription();

/// Native code for a module in the LLVM dialect, loaded in this process.
class JITModule {
public:
  ~JITModule();
  /// Compiles `module` (in the LLVM dialect) with the ORC JIT for the host,
  /// at -O3 when `optimize`, else at -O0 (code that only calls functions
  /// gains nothing from optimization, and large such functions cost LLVM's
  /// optimizer time superlinear in their size). Its calls of the kernel
  /// library, and of `extraSymbols` (entry points of the embedding
  /// program), resolve to this process's functions.
  static std::unique_ptr<JITModule>
  create(mlir::ModuleOp module, std::string &error,
         llvm::ArrayRef<KernelSymbol> extraSymbols = {}, bool optimize = true);
  /// The entry of function `name`: called with an array holding a pointer
  /// to each argument's buffer pointer.
  using PackedFunction = void (*)(void **);
  PackedFunction lookup(llvm::StringRef name) const;
  /// The address of function `name` itself (called with its own
  /// signature), or null.
  void *lookupAddress(llvm::StringRef name) const;

private:
  JITModule() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

/// Writes `module` (in the LLVM dialect) as a position-independent native
/// object file for the host CPU.
mlir::LogicalResult emitObjectFile(mlir::ModuleOp module,
                                   llvm::raw_pwrite_stream &os,
                                   std::string &error);

} // namespace cleave::cpu

#endif // CLEAVE_TARGET_CPU_CPUTARGET_H
