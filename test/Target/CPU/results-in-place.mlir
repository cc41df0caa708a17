// Results computed in a buffer of their own and copied into the caller's
// out-parameter at the end are computed in the out-parameter.
// RUN: graph-opt %s --results-in-place --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @result(
// CHECK-SAME: %[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[IN]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: copy
// CHECK: return
func.func @result(%in: memref<4xf32>, %out: memref<4xf32>) {
  %alloc = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%in : memref<4xf32>) outs(%alloc : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.copy ins(%alloc : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// One buffer returned twice: the last copy's out-parameter takes it, the
// other out-parameter is copied from there.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[OUT1:[^:]*]]: memref<4xf32>, %[[OUT2:[^:]*]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT2]] : memref<4xf32>)
// CHECK: memref.copy %[[OUT2]], %[[OUT1]]
// CHECK-NEXT: return
func.func @twice(%out1: memref<4xf32>, %out2: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  %alloc = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%alloc : memref<4xf32>)
  memref.copy %alloc, %out1 : memref<4xf32> to memref<4xf32>
  memref.copy %alloc, %out2 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Kept: an argument copied out (not an allocation), an allocation inside
// a region, a type that differs from the out-parameter's, and an
// out-parameter used before the copy.
// CHECK-LABEL: func.func @kept
// CHECK: memref.copy %arg0, %arg2
// CHECK: scf.if
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.copy
// CHECK: memref.alloc
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.copy
func.func @kept(%in: memref<4xf32>, %c: i1, %out1: memref<4xf32>, %out2: memref<4xf32>,
                %out3: memref<2x2xf32>, %out4: memref<4xf32>) {
  memref.copy %in, %out1 : memref<4xf32> to memref<4xf32>
  scf.if %c {
    %inner = memref.alloc() : memref<4xf32>
    memref.copy %inner, %out2 : memref<4xf32> to memref<4xf32>
  }
  %flat = memref.alloc() : memref<4xf32>
  %square = memref.expand_shape %flat [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  memref.copy %square, %out3 : memref<2x2xf32> to memref<2x2xf32>
  %read = memref.alloc() : memref<4xf32>
  memref.copy %out4, %in : memref<4xf32> to memref<4xf32>
  memref.copy %read, %out4 : memref<4xf32> to memref<4xf32>
  return
}
