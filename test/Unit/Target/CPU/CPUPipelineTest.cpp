//===- CPUPipelineTest.cpp - the CPU pipeline on hand-written IR ----------===//
//
// Constructs the lowering does not produce today, compiled through the
// whole CPU pipeline and run: the pipeline must take them when a lowering
// does.
//
//===----------------------------------------------------------------------===//

#include "cleave/InitAll.h"
#include "cleave/Target/CPU/CPUTarget.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir;

namespace {

/// Compiles `source` (linalg on tensors) for the host CPU, or fails the
/// test.
std::unique_ptr<cleave::cpu::JITModule> compile(MLIRContext &context,
                                                llvm::StringRef source) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, &context);
  if (!module) {
    ADD_FAILURE() << "the source does not parse";
    return nullptr;
  }
  PassManager pm(&context);
  cleave::cpu::buildLinalgToLLVMPipeline(pm);
  if (failed(pm.run(*module))) {
    ADD_FAILURE() << "the CPU pipeline failed";
    return nullptr;
  }
  std::string error;
  auto jit = cleave::cpu::JITModule::create(*module, error);
  EXPECT_TRUE(jit) << error;
  return jit;
}

CLEAVE_CALLS_JIT_CODE
void call(cleave::cpu::JITModule::PackedFunction f, void **args) { f(args); }

/// A loop carrying two tensors, one computed anew each iteration and the
/// other passed on: (a, b) = (a + b, a), six times. Bufferized, the loop
/// frees one of two buffers per iteration, through the ownership-based
/// deallocation's helper (which the pipeline inlines: the bare-pointer
/// calling convention cannot pass its dynamically shaped arguments).
TEST(CPUPipelineTest, LoopReplacingOneOfTwoCarriedTensors) {
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto jit = compile(context, R"mlir(
    #id = affine_map<(d0) -> (d0)>
    func.func @fibonacci(%a: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %r:2 = scf.for %i = %c0 to %c6 step %c1 iter_args(%x = %a, %y = %b)
          -> (tensor<4xf32>, tensor<4xf32>) {
        %e = tensor.empty() : tensor<4xf32>
        %n = linalg.generic {indexing_maps = [#id, #id, #id],
                             iterator_types = ["parallel"]}
            ins(%x, %y : tensor<4xf32>, tensor<4xf32>)
            outs(%e : tensor<4xf32>) {
          ^bb0(%p: f32, %q: f32, %o: f32):
            %s = arith.addf %p, %q : f32
            linalg.yield %s : f32
        } -> tensor<4xf32>
        scf.yield %n, %x : tensor<4xf32>, tensor<4xf32>
      }
      return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(jit);
  auto f = jit->lookup("fibonacci");
  ASSERT_TRUE(f);
  std::vector<float> a = {1, 2, 0, -1}, b = {0, 1, 1, 1}, out0(4), out1(4);
  void *pointers[] = {a.data(), b.data(), out0.data(), out1.data()};
  void *args[] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3]};
  call(f, args);
  // The oracle: the same recurrence in C++.
  std::vector<float> x = a, y = b;
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 4; ++k) {
      float sum = x[k] + y[k];
      y[k] = x[k];
      x[k] = sum;
    }
  EXPECT_EQ(out0, x);
  EXPECT_EQ(out1, y);
  // The inputs are the caller's: untouched.
  EXPECT_EQ(a, (std::vector<float>{1, 2, 0, -1}));
  EXPECT_EQ(b, (std::vector<float>{0, 1, 1, 1}));
}

} // namespace
