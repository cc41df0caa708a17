//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//

#ifndef CLEAVE_TARGET_CPU_PASSES_TD
#define CLEAVE_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def DeallocateBuffersPass : Pass<"deallocate-buffers", "::mlir::ModuleOp"> {
  let summary = "Free each allocation after its last use, in time linear in the module";
  let description = [{
    Part of the CPU pipeline, after bufferization. Where every allocation
    of a function is in its entry block and only read and written there
    (by linalg ops, copies, loads and stores, directly or through views,
    also inside nested regions), each gets a `memref.dealloc` after the op
    of the entry block that contains its last use. Otherwise (an
    allocation inside a loop or branch, or a buffer yielded, returned or
    passed on), the module goes through upstream's ownership-based
    deallocation pipeline, whose simplification compares the buffers of a
    block pairwise: quadratic in the size of a straight-line step (5 s of
    15 s for a 10,000-node graph). Where that pipeline frees one of
    several buffers, it calls a helper function it adds (`dealloc_helper`)
    with dynamically shaped arguments, which the CPU target's bare-pointer
    calling convention cannot pass: such helpers are inlined and removed.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def FuseElementwisePass : Pass<"fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg.generic producers into their consumers";
  let description = [{
    Part of the CPU pipeline, on tensors: a `linalg.generic` with only
    parallel loops whose result has one use, by another `linalg.generic`,
    is computed inside that consumer (upstream's elementwise fusion
    patterns), so chains of elementwise, broadcast and reduction ops make
    one pass over memory. Named ops (matrix products, convolutions, fills)
    are left as they are, for the library calls that take them; upstream's
    `linalg-fuse-elementwise-ops` would also move reshapes through them and
    turn them into generic contractions. Producers with more than one use
    are not fused: they would be computed twice.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def UnshareTensorConstantsPass
    : Pass<"unshare-tensor-constants", "::mlir::ModuleOp"> {
  let summary = "Give each use of a tensor constant a copy of its own";
  let description = [{
    Part of the CPU pipeline, just before One-Shot Bufferize: an
    `arith.constant` of tensor type with several uses gets a copy before
    each of its users but one. The canonicalizer folds equal constants into
    one (a graph of 2500 layers with equal weights has one weight tensor
    with 2500 uses), and One-Shot Bufferize's conflict analysis takes time
    quadratic in the uses of one tensor. Copies cost nothing after
    bufferization: each becomes a `memref.get_global` of the same global.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LibraryCallsPass : Pass<"cpu-library-calls", "::mlir::ModuleOp"> {
  let summary = "Replace matrix products on buffers by calls of the kernel library";
  let description = [{
    Part of the CPU pipeline, after bufferization: `linalg.matmul`,
    `linalg.matmul_transpose_a` and `linalg.matmul_transpose_b` on `f32`
    or `f64` buffers whose rows are contiguous (any row stride, read from
    the layout) become calls of `cleave_cpu_sgemm`/`cleave_cpu_dgemm`
    (OpenBLAS). A zero `linalg.fill` of the product's buffer just before it
    becomes the call's `beta = 0`. Products on other types or strided
    columns stay loops.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ParallelizeKernelsPass : Pass<"parallelize-kernels", "::mlir::ModuleOp"> {
  let summary = "Run large kernels as tiles on all threads";
  let description = [{
    Part of the CPU pipeline, after `outline-kernels`: a kernel whose linalg
    op starts with a parallel loop, indexes its buffers with that loop's
    variable as a whole index, and runs at least `min-iterations`
    iterations, takes a tile number and works on the slices of its buffers
    along that loop (an equal share: the loop's extent divided by 16 to 64
    tiles, or fewer where the extent has no such divisor; `linalg.index 0`
    shifted by the tile's start). Its call becomes an `scf.parallel` over
    the tiles, for `convert-scf-to-openmp`. The loop nest stays in the
    kernel, whose buffers keep static shapes and `noalias`, so LLVM
    vectorizes it as it does sequential kernels. Smaller kernels stay
    sequential: a fork costs more than it saves there.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Iterations a kernel needs to be run by several threads">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ResultsInPlacePass : Pass<"results-in-place", "::mlir::ModuleOp"> {
  let summary = "Compute results in the caller's out-parameters, not in a buffer copied there";
  let description = [{
    Part of the CPU pipeline, after `buffer-results-to-out-params`, which
    copies each result into its out-parameter at the end of the function:
    a result computed into a `memref.alloc` of the function's entry block,
    whose last use is that copy, is computed in the out-parameter itself
    (the allocation and the copy disappear). Out-parameters are buffers
    the caller owns that alias no argument. (Upstream's
    `hoist-static-allocs` does this too but fails, in MLIR 19, on results
    that alias arguments or each other.)
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def OutlineKernelsPass : Pass<"outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Move each linalg op on buffers into a function of its own";
  let description = [{
    Part of the CPU pipeline, after bufferization: every linalg op of a
    function becomes a call of a private function (`<function>_kernel<k>`,
    marked `no_inline`) that holds just that op, its buffers and the values
    its body reads passed as arguments, the buffers `llvm.noalias` (a linalg
    op on buffers from One-Shot Bufferize writes only fresh output buffers). LLVM's loop passes (IndVarSimplify,
    LoopRotate) cost time in the size of the function they run in, once per
    loop; one function per loop nest keeps compile time linear in the size
    of the graph.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // CLEAVE_TARGET_CPU_PASSES_TD
