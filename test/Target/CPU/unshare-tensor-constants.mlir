// A tensor constant with several uses gets a copy before each of its users
// but one, which keeps the original; single uses, unused constants and
// scalars are left alone.
// RUN: graph-opt %s --unshare-tensor-constants --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @shared(
// CHECK-NEXT: %[[C0:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = arith.addf %arg0, %[[C1]]
// CHECK-NEXT: %[[C2:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[A]], %[[C2]]
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[B]], %[[C0]]
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[S]], %[[S]]
// CHECK-NEXT: return %[[C]], %[[D]]
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %s = arith.constant 2.0 : f32
  %a = arith.addf %x, %c : tensor<4xf32>
  %b = arith.mulf %a, %c : tensor<4xf32>
  %d = arith.subf %b, %c : tensor<4xf32>
  %e = arith.addf %s, %s : f32
  return %d, %e : tensor<4xf32>, f32
}

// -----

// A use inside a region gets its copy there, before its user.
// CHECK-LABEL: func.func @nested(
// CHECK: %[[C0:.*]] = arith.constant dense<[1, 2]> : tensor<2xi32>
// CHECK: scf.if
// CHECK-NEXT: %[[C1:.*]] = arith.constant dense<[1, 2]> : tensor<2xi32>
// CHECK-NEXT: %[[T:.*]] = arith.addi %arg0, %[[C1]]
// CHECK-NEXT: scf.yield %[[T]]
// CHECK: else
// CHECK-NEXT: scf.yield %[[C0]]
// CHECK-NOT: arith.constant dense
func.func @nested(%x: tensor<2xi32>, %p: i1) -> tensor<2xi32> {
  %c = arith.constant dense<[1, 2]> : tensor<2xi32>
  %r = scf.if %p -> tensor<2xi32> {
    %t = arith.addi %x, %c : tensor<2xi32>
    scf.yield %t : tensor<2xi32>
  } else {
    scf.yield %c : tensor<2xi32>
  }
  return %r : tensor<2xi32>
}

// -----

// One use, or none: nothing to do.
// CHECK-LABEL: func.func @single(
// CHECK-COUNT-2: arith.constant
// CHECK-NOT: arith.constant
func.func @single(%x: tensor<3xf32>) -> tensor<3xf32> {
  %unused = arith.constant dense<0.0> : tensor<3xf32>
  %c = arith.constant dense<3.0> : tensor<3xf32>
  %a = arith.mulf %x, %c : tensor<3xf32>
  return %a : tensor<3xf32>
}
