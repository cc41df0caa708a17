// Elementwise producers with one use fuse into the linalg.generic that
// uses them; named ops and reshapes stay as they are.
// RUN: graph-opt %s --pass-pipeline="builtin.module(func.func(fuse-elementwise))" --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// Bias add, then relu: one generic reading the product and the bias.
// CHECK-LABEL: func.func @bias_relu
// CHECK: linalg.matmul
// CHECK: %[[FUSED:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return %[[FUSED]]
func.func @bias_relu(%a: tensor<4x3xf32>, %w: tensor<3x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%a, %w : tensor<4x3xf32>, tensor<3x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %relu : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// A producer with two uses is computed once, not fused into both.
// CHECK-LABEL: func.func @two_uses
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @two_uses(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %neg, %sq : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// A product reshaped before an elementwise op stays a named matmul (the
// library call takes it), with the reshape after it.
// CHECK-LABEL: func.func @reshaped_product
// CHECK: linalg.matmul_transpose_b
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
func.func @reshaped_product(%a: tensor<4x6xf32>, %w: tensor<8x6xf32>) -> tensor<4x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul_transpose_b ins(%a, %w : tensor<4x6xf32>, tensor<8x6xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.expand_shape %p [[0], [1, 2, 3]] output_shape [4, 2, 2, 2] : tensor<4x8xf32> into tensor<4x2x2x2xf32>
  %e1 = tensor.empty() : tensor<4x2x2x2xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<4x2x2x2xf32>) outs(%e1 : tensor<4x2x2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x2x2x2xf32>
  return %neg : tensor<4x2x2x2xf32>
}

// -----

// A destination the lowering chose stays, though the payload does not read
// it: an update written into a loop's carried value (here an argument)
// is what lets bufferization update that buffer in place.
// CHECK-LABEL: func.func @keeps_destination
// CHECK: %[[FUSED:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%arg0 : tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[FUSED]]
#v = affine_map<(d0) -> (d0)>
func.func @keeps_destination(%var: tensor<8xf32>, %grad: tensor<8xf32>) -> tensor<8xf32> {
  %rate = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8xf32>
  %step = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%grad : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%g: f32, %o: f32):
    %s = arith.mulf %g, %rate : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %next = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%var, %step : tensor<8xf32>, tensor<8xf32>) outs(%var : tensor<8xf32>) {
  ^bb0(%w: f32, %d: f32, %o: f32):
    %n = arith.addf %w, %d : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %next : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0, 0)>
// A producer whose payload reads its destination (an accumulation into
// it) is no elementwise producer: it stays apart from the consumer that
// broadcasts it.
// CHECK-LABEL: func.func @accumulating_producer
// CHECK: %[[ACC:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[ACC]], %{{.*}} : tensor<3x1xf32>, tensor<3x3xf32>)
func.func @accumulating_producer(%a: tensor<3x1xf32>, %b: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x1xf32>) -> tensor<3x1xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<3x1xf32>) outs(%z : tensor<3x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<3x1xf32>
  %e2 = tensor.empty() : tensor<3x3xf32>
  %m = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %b : tensor<3x1xf32>, tensor<3x3xf32>) outs(%e2 : tensor<3x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<3x3xf32>
  return %m : tensor<3x3xf32>
}
