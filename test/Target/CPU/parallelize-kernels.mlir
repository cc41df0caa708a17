// Large loop nests with their parallel dimensions first become scf.parallel
// (for OpenMP); small ones and those that reduce first stay linalg ops.
// RUN: graph-opt %s --parallelize-kernels | FileCheck %s
// RUN: graph-opt %s --parallelize-kernels=min-iterations=1 | FileCheck %s --check-prefix=ALL

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>

// 256 x 256 elementwise: one scf.parallel over both dimensions.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
func.func @elementwise(%a: memref<256x256xf32>, %b: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  }
  return
}

// Row sums: rows in parallel, the reduction a sequential loop inside.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.parallel (%{{.*}}) =
// CHECK: scf.for
// CHECK: arith.addf
func.func @row_sums(%a: memref<256x256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %o, %x : f32
    linalg.yield %y : f32
  }
  return
}

// Column sums reduce first: a parallel loop inside would fork once per row.
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// ALL-LABEL: func.func @column_sums
// ALL-NOT: scf.parallel
// ALL: linalg.generic
func.func @column_sums(%a: memref<256x256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %o, %x : f32
    linalg.yield %y : f32
  }
  return
}

// Below the threshold: kept, unless the threshold is 1.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// ALL-LABEL: func.func @small
// ALL: scf.parallel
func.func @small(%a: memref<16x16xf32>, %b: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  }
  return
}
