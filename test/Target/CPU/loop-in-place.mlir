// A loop's update written into its carried value stays in place through
// the CPU pipeline: elementwise fusion keeps the destination, so One-Shot
// Bufferize updates the carried buffer in place each iteration and the
// condition region forwards it without a copy (only the counter, a new
// value each iteration, is copied). Before, fusion gave the update a fresh
// destination and every carried buffer was copied each iteration.
// RUN: graph-opt %s --graph-cpu-codegen --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s
// CHECK-LABEL: IR Dump After OneShotBufferize
// CHECK: scf.while (%{{.*}} = %{{.*}}, %[[W:.*]] = %{{.*}}) : (memref<i32>, memref<1024xf32>)
// CHECK-NOT: linalg.copy ins(%[[W]]
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %[[W]] : memref<i32>, memref<1024xf32>
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: memref<i32>, %[[W2:.*]]: memref<1024xf32>):
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[W2]], %{{.*}} : memref<1024xf32>, memref<1024xf32>) outs(%[[W2]] : memref<1024xf32>)
// CHECK: IR Dump After BufferResultsToOutParams

#v = affine_map<(d0) -> (d0)>
func.func @cluster(%n: tensor<i32> {bufferization.writable = false}, %w0: tensor<1024xf32> {bufferization.writable = false}, %g: tensor<1024xf32> {bufferization.writable = false}) -> tensor<1024xf32> {
  %c0 = arith.constant dense<0> : tensor<i32>
  %c1 = arith.constant dense<1> : tensor<i32>
  %rate = arith.constant 0.5 : f32
  %r:2 = scf.while (%i = %c0, %w = %w0) : (tensor<i32>, tensor<1024xf32>) -> (tensor<i32>, tensor<1024xf32>) {
    %e = tensor.empty() : tensor<i1>
    %lt = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%i, %n : tensor<i32>, tensor<i32>) outs(%e : tensor<i1>) {
    ^bb0(%a: i32, %b: i32, %o: i1):
      %c = arith.cmpi slt, %a, %b : i32
      linalg.yield %c : i1
    } -> tensor<i1>
    %cond = tensor.extract %lt[] : tensor<i1>
    scf.condition(%cond) %i, %w : tensor<i32>, tensor<1024xf32>
  } do {
  ^bb0(%i: tensor<i32>, %w: tensor<1024xf32>):
    %e = tensor.empty() : tensor<1024xf32>
    %step = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%g : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.mulf %x, %rate : f32
      linalg.yield %s : f32
    } -> tensor<1024xf32>
    %next = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%w, %step : tensor<1024xf32>, tensor<1024xf32>) outs(%w : tensor<1024xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %u = arith.subf %a, %d : f32
      linalg.yield %u : f32
    } -> tensor<1024xf32>
    %ie = tensor.empty() : tensor<i32>
    %i1 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%i, %c1 : tensor<i32>, tensor<i32>) outs(%ie : tensor<i32>) {
    ^bb0(%a: i32, %b: i32, %o: i32):
      %s = arith.addi %a, %b : i32
      linalg.yield %s : i32
    } -> tensor<i32>
    scf.yield %i1, %next : tensor<i32>, tensor<1024xf32>
  }
  return %r#1 : tensor<1024xf32>
}
