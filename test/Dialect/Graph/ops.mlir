// RUN: graph-opt %s | FileCheck %s
// RUN: graph-opt %s | graph-opt | FileCheck %s
// RUN: graph-opt --mlir-print-op-generic %s | graph-opt | FileCheck %s

// CHECK-LABEL: graph.graph versions(#graph.versions<producer = 27, min_consumer = 12, bad_consumers = [3, 4]>)
graph.graph versions(#graph.versions<producer = 27, min_consumer = 12, bad_consumers = [3, 4]>) {
  // CHECK: %x, %x_ctl = graph.node "Placeholder" "x" device("/job:w/replica:0/task:0/device:CPU:0") {dtype = f32, shape = #graph.shape<2x?>} : () -> tensor<2x?xf32>
  %x, %x_ctl = graph.node "Placeholder" "x" device("/job:w/replica:0/task:0/device:CPU:0") {dtype = f32, shape = #graph.shape<2x?>} : () -> tensor<2x?xf32>
  // CHECK: %c, %c_ctl = graph.node "Const" "c" [%x_ctl] {dtype = f32, value = #graph.tensor<dense<1.000000e+00> : tensor<2x3xf32>, values = 1>} : () -> tensor<2x3xf32>
  %c, %c_ctl = graph.node "Const" "c" [%x_ctl] {dtype = f32, value = #graph.tensor<dense<1.0> : tensor<2x3xf32>, values = 1>} : () -> tensor<2x3xf32>
  // A use before its definition: graph regions need no dominance.
  // CHECK: %sum, %sum_ctl = graph.node "AddV2" "sum"(%x, %later) {T = f32} : (tensor<2x?xf32>, tensor<*xf32>) -> tensor<*xf32>
  %sum, %sum_ctl = graph.node "AddV2" "sum"(%x, %later) {T = f32} : (tensor<2x?xf32>, tensor<*xf32>) -> tensor<*xf32>
  %later, %later_ctl = graph.node "Identity" "later"(%x) {T = f32} : (tensor<2x?xf32>) -> tensor<*xf32>
  // Opaque op: no signature, results of unknown dtype, extra fields kept.
  // CHECK: %mystery:2, %mystery_ctl = graph.node "Mystery" "mystery"(%sum) [%c_ctl, %x_ctl] assigned_device("/device:CPU:0") spellings(["sum:0", "^c", "^x"]) debug_info({original_node_names = ["a"]}) {list = [1, "s", f32, #graph.shape<*>], none, ph = #graph.placeholder<"T">} : (tensor<*xf32>) -> (tensor<*x!graph.unknown>, tensor<*x!graph.unknown>)
  %mystery:2, %mystery_ctl = graph.node "Mystery" "mystery"(%sum) [%c_ctl, %x_ctl] assigned_device("/device:CPU:0") spellings(["sum:0", "^c", "^x"]) debug_info({original_node_names = ["a"]}) {list = [1, "s", f32, #graph.shape<*>], none, ph = #graph.placeholder<"T">} : (tensor<*xf32>) -> (tensor<*x!graph.unknown>, tensor<*x!graph.unknown>)
  // CHECK: graph.node "Call" "call" {f = #graph.func<@f, {x = 1 : i64}>, types = [!graph.string, !graph.resource, !graph.variant, !graph.quantized<qint8>, !graph.ref<f32>, !graph.dtype<77>, bf16, ui8, i1, complex<f64>]} : () -> ()
  %call_ctl = graph.node "Call" "call" {f = #graph.func<@f, {x = 1 : i64}>, types = [!graph.string, !graph.resource, !graph.variant, !graph.quantized<qint8>, !graph.ref<f32>, !graph.dtype<77>, bf16, ui8, i1, complex<f64>]} : () -> ()
  // CHECK: graph.node "Const" "raw" {value = #graph.tensor<dtype = !graph.resource, shape = #graph.shape<>, raw = "\08\14">} : () -> ()
  %raw_ctl = graph.node "Const" "raw" {value = #graph.tensor<dtype = !graph.resource, shape = #graph.shape<>, raw = "\08\14">} : () -> ()
  // CHECK: graph.node "Const" "s" {value = #graph.tensor<dense<["a", "bc"]> : tensor<2x!graph.string>>} : () -> ()
  %s_ctl = graph.node "Const" "s" {value = #graph.tensor<dense<["a", "bc"]> : tensor<2x!graph.string>>} : () -> ()
  // CHECK: graph.node "Const" "named" {shape = #graph.shape<?x3, names = ["batch", ""]>} : () -> ()
  %named_ctl = graph.node "Const" "named" {shape = #graph.shape<?x3, names = ["batch", ""]>} : () -> ()
}

// CHECK-LABEL: graph.func @f(%arg0: tensor<*xf32>, %arg1: tensor<*xi32>) -> tensor<*xf32>
// CHECK-SAME: arg_names = ["a", "list:1"]
graph.func @f(%a: tensor<*xf32>, %list_1: tensor<*xi32>) -> tensor<*xf32> attributes {arg_names = ["a", "list:1"], signature = {output_arg = [{name = "y", type = "DT_FLOAT"}]}, attr = {_noinline = true}} {
  // CHECK: %neg, %neg_ctl = graph.node "Neg" "neg"(%arg0) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
  %neg, %neg_ctl = graph.node "Neg" "neg"(%a) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.return {control_names = ["c"], names = ["y"]} %neg, %neg_ctl : tensor<*xf32>, !graph.control
  graph.return {control_names = ["c"], names = ["y"]} %neg, %neg_ctl : tensor<*xf32>, !graph.control
}
