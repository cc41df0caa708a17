// Large kernels run as tiles: the kernel takes a tile number and slices
// its buffers along its first (parallel) loop, its call becomes an
// scf.parallel over the tiles. Small kernels, and kernels that reduce
// along their first loop, stay single calls.
// RUN: graph-opt %s --parallelize-kernels | FileCheck %s
// RUN: graph-opt %s --parallelize-kernels=min-iterations=1 | FileCheck %s --check-prefix=ALL

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>

// 256 x 256, the bias broadcast along rows: 16 tiles of 16 rows; the bias
// (not indexed by the first loop) is passed whole; linalg.index 0 is
// shifted by the tile's first row.
// CHECK-LABEL: func.func private @step_kernel0(
// CHECK-SAME: %[[A:[^:]*]]: memref<256x256xf32> {llvm.noalias}, %[[BIAS:[^:]*]]: memref<256xf32> {llvm.noalias}, %[[B:[^:]*]]: memref<256x256xf32> {llvm.noalias}, %[[TILE:[^:]*]]: index)
// CHECK: %[[FIRST:.*]] = arith.muli %[[TILE]], %c16
// CHECK-DAG: %[[SA:.*]] = memref.subview %[[A]][%[[FIRST]], 0] [16, 256] [1, 1]
// CHECK-DAG: %[[SB:.*]] = memref.subview %[[B]][%[[FIRST]], 0] [16, 256] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[SA]], %[[BIAS]] : memref<16x256xf32, strided<[256, 1], offset: ?>>, memref<256xf32>) outs(%[[SB]] :
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: arith.addi %[[ROW]], %[[FIRST]]
//
// A reduction first: kept.
// CHECK-LABEL: func.func private @step_kernel1(
// CHECK-SAME: memref<256x256xf32> {llvm.noalias}, %{{[^:]*}}: memref<256xf32> {llvm.noalias})
// Small: kept, unless every kernel runs on threads.
// CHECK-LABEL: func.func private @step_kernel2(
// CHECK-SAME: memref<16x16xf32> {llvm.noalias})
// ALL-LABEL: func.func private @step_kernel2(
// ALL-SAME: %{{[^:]*}}: index)
//
// CHECK-LABEL: func.func @step
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[T:.*]]) = (%[[C0]]) to (%[[C16]]) step (%[[C1]])
// CHECK-NEXT: func.call @step_kernel0(%{{.*}}, %{{.*}}, %{{.*}}, %[[T]])
// CHECK: call @step_kernel1(%{{.*}}, %{{.*}}) :
// CHECK: call @step_kernel2(%{{.*}}, %{{.*}}) :
func.func private @step_kernel0(%a: memref<256x256xf32> {llvm.noalias}, %bias: memref<256xf32> {llvm.noalias}, %b: memref<256x256xf32> {llvm.noalias}) attributes {no_inline} {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : memref<256x256xf32>, memref<256xf32>) outs(%b : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %fi : f32
    linalg.yield %t : f32
  }
  return
}
func.func private @step_kernel1(%a: memref<256x256xf32> {llvm.noalias}, %b: memref<256xf32> {llvm.noalias}) attributes {no_inline} {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %o, %x : f32
    linalg.yield %y : f32
  }
  return
}
func.func private @step_kernel2(%a: memref<16x16xf32> {llvm.noalias}, %b: memref<16x16xf32> {llvm.noalias}) attributes {no_inline} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  }
  return
}
func.func @step(%a: memref<256x256xf32>, %bias: memref<256xf32>, %b: memref<256x256xf32>,
                %s: memref<16x16xf32>, %t: memref<16x16xf32>) {
  call @step_kernel0(%a, %bias, %b) : (memref<256x256xf32>, memref<256xf32>, memref<256x256xf32>) -> ()
  call @step_kernel1(%a, %bias) : (memref<256x256xf32>, memref<256xf32>) -> ()
  call @step_kernel2(%s, %t) : (memref<16x16xf32>, memref<16x16xf32>) -> ()
  return
}
