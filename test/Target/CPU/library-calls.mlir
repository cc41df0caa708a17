// Matrix products on buffers become OpenBLAS calls; what BLAS cannot take
// stays a linalg op (and loops).
// RUN: graph-opt %s --cpu-library-calls --canonicalize --split-input-file | FileCheck %s
// Without canonicalization, which erases empty products:
// RUN: graph-opt %s --cpu-library-calls --split-input-file | FileCheck %s --check-prefix=EMPTY

// A product onto zeros: beta = 0 and the fill is gone. Row strides are the
// leading dimensions, the pointers the buffers' aligned pointers.
// CHECK: func.func private @cleave_cpu_sgemm(i64, i64, i64, i64, i64, index, i64, index, i64, f32, index, i64)
// CHECK-LABEL: func.func @product
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: call @cleave_cpu_sgemm(%[[NO]], %[[NO]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %[[N]], %[[BETA]], %{{.*}}, %[[N]]) : (i64, i64, i64, i64, i64, index, i64, index, i64, f32, index, i64) -> ()
// CHECK-NOT: linalg.matmul
func.func @product(%a: memref<4x5xf32>, %b: memref<5x3xf32>) -> memref<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x3xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return %c : memref<4x3xf32>
}

// -----

// Transposed operands: the op's transposition is BLAS's; a transposed view
// (contiguous columns) flips it, with the view's column stride as leading
// dimension. Accumulating onto values (no zero fill): beta = 1. f64: dgemm.
// CHECK-LABEL: func.func @transposed
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[SIX:.*]] = arith.constant 6 : i64
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: call @cleave_cpu_dgemm(%[[T]], %[[NO]], %[[TWO]], %[[TWO]], %[[SIX]], %{{.*}}, %[[TWO]], %{{.*}}, %[[TWO]], %[[ONE]], %{{.*}}, %[[TWO]])
// CHECK: linalg.fill
// CHECK: call @cleave_cpu_dgemm(%[[T]], %[[NO]], %[[TWO]], %[[TWO]], %[[SIX]], %{{.*}}, %[[TWO]], %{{.*}}, %[[TWO]], %[[ONE]], %{{.*}}, %[[TWO]])
func.func @transposed(%a: memref<6x2xf64>, %b: memref<6x2xf64>, %c: memref<2x2xf64>) {
  linalg.matmul_transpose_a ins(%a, %b : memref<6x2xf64>, memref<6x2xf64>) outs(%c : memref<2x2xf64>)
  // A stored as 2x6 seen through a transposed view: the view has strides
  // [1, 2], so BLAS reads the 6x2 buffer transposed.
  %one = arith.constant 1.0 : f64
  linalg.fill ins(%one : f64) outs(%c : memref<2x2xf64>)
  %at = memref.transpose %a (i, j) -> (j, i) : memref<6x2xf64> to memref<2x6xf64, strided<[1, 2]>>
  linalg.matmul ins(%at, %b : memref<2x6xf64, strided<[1, 2]>>, memref<6x2xf64>) outs(%c : memref<2x2xf64>)
  return
}

// -----

// A zero fill with a reader of the buffer in between is not the product's
// start: beta = 1, the fill stays.
// CHECK-LABEL: func.func @fill_read_before
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: call @cleave_cpu_sgemm({{.*}}, %[[ONE]], {{.*}})
func.func @fill_read_before(%a: memref<2x2xf32>, %b: memref<2x2xf32>, %c: memref<2x2xf32>, %d: memref<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  memref.copy %c, %d : memref<2x2xf32> to memref<2x2xf32>
  linalg.matmul ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>)
  return
}

// -----

// What BLAS cannot take stays: integers, empty products, outputs whose
// columns are contiguous, operands strided both ways.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: call
// EMPTY-LABEL: func.func @kept
// EMPTY-NOT: call
// EMPTY-COUNT-4: linalg.matmul
// EMPTY-NEXT: return
func.func @kept(%ai: memref<2x3xi32>, %bi: memref<3x2xi32>, %ci: memref<2x2xi32>,
                %a0: memref<2x0xf32>, %b0: memref<0x2xf32>, %c: memref<2x2xf32>,
                %a: memref<2x3xf32>, %b: memref<3x2xf32>, %s: memref<2x6xf32>) {
  linalg.matmul ins(%ai, %bi : memref<2x3xi32>, memref<3x2xi32>) outs(%ci : memref<2x2xi32>)
  linalg.matmul ins(%a0, %b0 : memref<2x0xf32>, memref<0x2xf32>) outs(%c : memref<2x2xf32>)
  %ct = memref.transpose %c (i, j) -> (j, i) : memref<2x2xf32> to memref<2x2xf32, strided<[1, 2]>>
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%ct : memref<2x2xf32, strided<[1, 2]>>)
  %every2 = memref.subview %s[0, 0] [2, 3] [1, 2] : memref<2x6xf32> to memref<2x3xf32, strided<[6, 2]>>
  linalg.matmul ins(%every2, %b : memref<2x3xf32, strided<[6, 2]>>, memref<3x2xf32>) outs(%c : memref<2x2xf32>)
  return
}

// -----

// A view with an offset: the pointer is the aligned base plus the offset
// in bytes (a static one folded, a dynamic one read from the metadata).
// CHECK-LABEL: func.func @offsets
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<2x2xf32, strided<[4, 1], offset: 8>>
// CHECK: %[[PTR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK-DAG: %[[DBASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<2x2xf32, strided<[4, 1], offset: ?>>
// CHECK-DAG: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %{{.*}} : memref<2x2xf32, strided<[4, 1], offset: ?>>
// CHECK: %[[DBYTES:.*]] = arith.muli %[[OFF]], %[[FOUR]]
// CHECK: %[[DPTR:.*]] = arith.addi %[[DBASE]], %[[DBYTES]]
// CHECK: call @cleave_cpu_sgemm({{.*}}, %[[PTR]], %{{.*}}, %[[DPTR]], {{.*}})
func.func @offsets(%s: memref<4x4xf32>, %i: index, %c: memref<2x2xf32>) {
  %a = memref.subview %s[2, 0] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 8>>
  %b = memref.subview %s[%i, 0] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: ?>>
  linalg.matmul ins(%a, %b : memref<2x2xf32, strided<[4, 1], offset: 8>>, memref<2x2xf32, strided<[4, 1], offset: ?>>) outs(%c : memref<2x2xf32>)
  return
}

// -----

// A convolution of padded NHWC images with an HWCF filter onto zeros: one
// call with the images' element strides (here a view into a larger
// buffer), the filter and output sizes, strides and dilations, beta = 0.
// CHECK-LABEL: func.func @convolution
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[SN:.*]] = arith.constant 288 : i64
// CHECK-DAG: %[[SH:.*]] = arith.constant 24 : i64
// CHECK: call @cleave_cpu_conv2d_f32(%{{.*}}, %[[C2]], %[[SN]], %[[SH]], %[[C4]], %[[C3]], %{{.*}}, %[[C3]], %[[C3]], %[[C5]], %{{.*}}, %[[C2]], %[[C2]], %[[C2]], %[[C2]], %[[C1]], %[[C1]], %[[BETA]])
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @convolution(%images: memref<2x12x6x4xf32>, %filter: memref<3x3x3x5xf32>) -> memref<2x2x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %view = memref.subview %images[0, 0, 0, 0] [2, 6, 6, 3] [1, 1, 1, 1] : memref<2x12x6x4xf32> to memref<2x6x6x3xf32, strided<[288, 24, 4, 1]>>
  %out = memref.alloc() : memref<2x2x2x5xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<2x2x2x5xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%view, %filter : memref<2x6x6x3xf32, strided<[288, 24, 4, 1]>>, memref<3x3x3x5xf32>)
    outs(%out : memref<2x2x2x5xf32>)
  return %out : memref<2x2x2x5xf32>
}

// -----

// Kept: f64, a strided filter, images whose channels are not contiguous.
// CHECK-LABEL: func.func @convolution_kept
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.conv_2d_nhwc_hwcf
func.func @convolution_kept(%d: memref<1x3x3x1xf64>, %df: memref<1x1x1x1xf64>, %do: memref<1x3x3x1xf64>,
                            %i: memref<1x3x3x2xf32>, %f: memref<1x1x4x1xf32>, %o: memref<1x3x3x1xf32>,
                            %ci: memref<1x3x3x4xf32>, %f2: memref<1x1x2x1xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%d, %df : memref<1x3x3x1xf64>, memref<1x1x1x1xf64>) outs(%do : memref<1x3x3x1xf64>)
  %fv = memref.subview %f[0, 0, 0, 0] [1, 1, 2, 1] [1, 1, 2, 1] : memref<1x1x4x1xf32> to memref<1x1x2x1xf32, strided<[4, 4, 2, 1]>>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%i, %fv : memref<1x3x3x2xf32>, memref<1x1x2x1xf32, strided<[4, 4, 2, 1]>>) outs(%o : memref<1x3x3x1xf32>)
  %iv = memref.subview %ci[0, 0, 0, 0] [1, 3, 3, 2] [1, 1, 1, 2] : memref<1x3x3x4xf32> to memref<1x3x3x2xf32, strided<[36, 12, 4, 2]>>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%iv, %f2 : memref<1x3x3x2xf32, strided<[36, 12, 4, 2]>>, memref<1x1x2x1xf32>) outs(%o : memref<1x3x3x1xf32>)
  return
}
