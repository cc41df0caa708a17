// Each linalg op on buffers moves into a kernel function of its own; the
// constants its body reads are cloned in, buffers passed once are noalias.
// RUN: graph-opt %s --outline-kernels | FileCheck %s

// Kernels come before the function that calls them.
// CHECK: func.func private @step_kernel0(%{{.*}}: memref<8xi32> {llvm.noalias}, %{{.*}}: memref<8xi32> {llvm.noalias}) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline}
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: linalg.generic
// CHECK: arith.divsi %{{.*}}, %[[TWO]]
// In place (the same buffer read and written): no noalias.
// CHECK: func.func private @step_kernel1(%{{.*}}: memref<8xi32>, %{{.*}}: memref<8xi32>) attributes
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[IN:[^:]*]]: memref<8xi32>, %[[OUT:[^:]*]]: memref<8xi32>)
// CHECK: call @step_kernel0(%[[IN]], %[[OUT]]) : (memref<8xi32>, memref<8xi32>) -> ()
// CHECK: call @step_kernel1(%[[OUT]], %[[OUT]]) : (memref<8xi32>, memref<8xi32>) -> ()
#id = affine_map<(d0) -> (d0)>
func.func @step(%in: memref<8xi32>, %out: memref<8xi32>) {
  %two = arith.constant 2 : i32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : memref<8xi32>) outs(%out : memref<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %y = arith.divsi %x, %two : i32
    linalg.yield %y : i32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%out : memref<8xi32>) outs(%out : memref<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %y = arith.addi %x, %x : i32
    linalg.yield %y : i32
  }
  return
}
