//===- CPUPipeline.cpp - linalg on tensors to the LLVM dialect ------------===//
//
// Elementwise ops fuse; bufferization turns the tensors GraphToLinalg
// builds into buffers with no copies where values die (One-Shot Bufferize,
// in place); results are computed in the caller's out-parameters;
// temporaries are freed after their last use; matrix products and
// convolutions call the kernel library; large loop nests run on all
// threads (OpenMP); the rest is upstream lowering to loops and to LLVM.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/CPUTarget.h"

#include "cleave/Target/CPU/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

void cleave::cpu::registerCPUDialects(DialectRegistry &registry) {
  // Every upstream dialect with its interface models (bufferization of
  // linalg/tensor/arith/func, ...), and their translations to LLVM IR.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

/// Every function's results become out-parameters. (The options' default
/// filter is a function_ref to a temporary; this one lives forever.)
static bool convertEveryFunction(func::FuncOp *) { return true; }

/// Copies between buffers as linalg.copy, which becomes loops like the rest:
/// memref.copy of a strided view would call a runtime library function.
static LogicalResult copyAsLoops(OpBuilder &b, Location loc, Value from,
                                Value to) {
  b.create<linalg::CopyOp>(loc, from, to);
  return success();
}

void cleave::cpu::buildLinalgToLLVMPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  // Constant folding and dead code from the node-by-node lowering. No CSE
  // before bufferization: it would merge the tensor.empty destinations of
  // unrelated ops into one, which One-Shot Bufferize then untangles with
  // copies, in time quadratic in the function's size.
  pm.addPass(createCanonicalizerPass());
  // Elementwise producers fuse into their consumers (bias add + activation,
  // the pieces of softmax, optimizer updates): one loop nest, no
  // intermediate tensors.
  pm.addNestedPass<func::FuncOp>(cleave::createFuseElementwisePass());
  // tensor.empty becomes an allocation One-Shot Bufferize can place.
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  // Constants the canonicalizer merged are split again: One-Shot
  // Bufferize's analysis is quadratic in the uses of one tensor.
  pm.addPass(cleave::createUnshareTensorConstantsPass());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.memCpyFn = copyAsLoops;
  // Loop bodies compute new tensors for their loop variables.
  bufferization.allowReturnAllocsFromLoops = true;
  // Identity layouts at the boundary: the caller's dense buffers.
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Results become buffers the caller passes in, written by a copy.
  // (Replacing the function's own allocation by the caller's buffer,
  // hoist-static-allocs, crashes in MLIR 19 when a result aliases an
  // argument or another result, as scf.if results can.)
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.filterFn = convertEveryFunction;
  outParams.memCpyFn = copyAsLoops;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // ... except where the result can be computed in place.
  pm.addPass(cleave::createResultsInPlacePass());
  // Temporaries are freed where their last use is.
  pm.addPass(cleave::createDeallocateBuffersPass());
  pm.addPass(createCanonicalizerPass());
  // Matrix products call OpenBLAS.
  pm.addPass(cleave::createLibraryCallsPass());
  // One function per loop nest: LLVM's loop passes cost time in the size of
  // the function around each loop.
  pm.addPass(cleave::createOutlineKernelsPass());
  // Large kernels run as tiles on all threads (OpenMP); the rest once.
  cleave::ParallelizeKernelsPassOptions parallel;
  parallel.minIterations = options.parallelMinIterations;
  pm.addPass(cleave::createParallelizeKernelsPass(parallel));
  pm.addPass(createConvertSCFToOpenMPPass());
  // The memref.alloca_scope around each parallel body goes (no allocas in
  // it): it may hold one block only, and loops inside become several.
  pm.addPass(createCanonicalizerPass());
  // Loops, then LLVM.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Allocations through the kernel library's pool (BufferPool.cpp).
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (tanh, expm1, log1p, ...) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  // One pointer per argument: static shapes need no descriptors.
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  // The OpenMP regions' types and operands. (After func-to-llvm: this pass
  // converts functions too, with memref descriptors.)
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void cleave::cpu::registerCPUPipelines() {
  PassPipelineRegistration<>(
      "graph-cpu-codegen",
      "Lower linalg on static tensors to the LLVM dialect for the host CPU "
      "(bufferization, out-parameters, deallocation, loops, LLVM)",
      [](OpPassManager &pm) { buildLinalgToLLVMPipeline(pm); });
}

std::string cleave::cpu::getHostCPUDescription() {
  std::string text = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const char *feature : {"avx2", "avx512f", "fma"})
    if (features.lookup(feature))
      text += std::string(" +") + feature;
  return text;
}
