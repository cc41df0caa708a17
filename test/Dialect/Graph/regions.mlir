// graph.cluster and graph.replicate print, parse and verify, in custom and
// generic form, and export flat: the folded nodes come back, tagged.
//
// RUN: graph-opt %s | FileCheck %s
// RUN: graph-opt %s | graph-opt | FileCheck %s
// RUN: graph-opt --mlir-print-op-generic %s | graph-opt | FileCheck %s
// RUN: graph-opt %s --emit=pbtxt | FileCheck %s --check-prefix=FLAT

graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  %b, %b_ctl = graph.node "Placeholder" "b" {dtype = f32} : () -> tensor<*xf32>
  %pivot_ctl = graph.node "NoOp" "pivot" : () -> ()
  // CHECK: %[[R:.*]]:4, %[[R_CTL:.*]] = graph.replicate(%a, %b : tensor<*xf32>, tensor<*xf32>) attributes {input_nodes = [{attrs = {N = 2 : i64, T = f32}, name = "in"}], n = 2 : i64, output_nodes = [{attrs = {T = f32, num_replicas = 2 : i64}, name = "out"}, {}]} -> (tensor<*xf32>, tensor<*xf32>, !graph.control, !graph.control) {
  // CHECK-NEXT: ^bb0(%[[ARG:.*]]: tensor<*xf32>):
  // CHECK-NEXT: %[[C:.*]]:2, %{{.*}} = graph.cluster "c"[%pivot_ctl] attributes {metadata = {_tpu_replicate = "c", num_replicas = 2 : i64}, metadata_name = "meta"} -> (tensor<*xf32>, !graph.control) {
  // CHECK-NEXT: ^bb0(%[[META:.*]]: !graph.control):
  // CHECK-NEXT: %[[NEG:.*]], %[[NEG_CTL:.*]] = graph.node "Neg" "neg"(%[[ARG]]) [%[[META]]] {T = f32}
  // CHECK-NEXT: graph.yield %[[NEG]], %[[NEG_CTL]] : tensor<*xf32>, !graph.control
  // CHECK-NEXT: }
  // CHECK-NEXT: graph.yield %[[C]]#0, %[[C]]#1 : tensor<*xf32>, !graph.control
  // CHECK-NEXT: }
  %r:4, %r_ctl = graph.replicate(%a, %b : tensor<*xf32>, tensor<*xf32>) attributes {input_nodes = [{attrs = {N = 2 : i64, T = f32}, name = "in"}], n = 2 : i64, output_nodes = [{attrs = {T = f32, num_replicas = 2 : i64}, name = "out"}, {}]} -> (tensor<*xf32>, tensor<*xf32>, !graph.control, !graph.control) {
  ^bb0(%arg: tensor<*xf32>):
    %c:2, %c_ctl = graph.cluster "c"[%pivot_ctl] attributes {metadata = {_tpu_replicate = "c", num_replicas = 2 : i64}, metadata_name = "meta"} -> (tensor<*xf32>, !graph.control) {
    ^bb0(%meta: !graph.control):
      %neg, %neg_ctl = graph.node "Neg" "neg"(%arg) [%meta] {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
      graph.yield %neg, %neg_ctl : tensor<*xf32>, !graph.control
    }
    graph.yield %c#0, %c#1 : tensor<*xf32>, !graph.control
  }
  // CHECK: graph.node "Identity" "first"(%[[R]]#0) [%[[R]]#2, %[[R_CTL]]]
  %first, %first_ctl = graph.node "Identity" "first"(%r#0) [%r#2, %r_ctl] {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
  %second, %second_ctl = graph.node "Identity" "second"(%r#1) {T = f32} : (tensor<*xf32>) -> tensor<*xf32>
}

// FLAT: name: "in"
// FLAT-NEXT: op: "TPUReplicatedInput"
// FLAT-NEXT: input: "a"
// FLAT-NEXT: input: "b"
// FLAT: name: "meta"
// FLAT-NEXT: op: "TPUReplicateMetadata"
// FLAT-NEXT: input: "^pivot"
// FLAT: name: "neg"
// FLAT-NEXT: op: "Neg"
// FLAT-NEXT: input: "in"
// FLAT-NEXT: input: "^meta"
// FLAT: key: "_tpu_replicate"
// FLAT-NEXT: value {
// FLAT-NEXT: s: "c"
// FLAT: name: "out"
// FLAT-NEXT: op: "TPUReplicatedOutput"
// FLAT-NEXT: input: "neg"
// A value without TPUReplicatedOutput (a control token) reads the node;
// the replicate's own control token is the metadata's.
// FLAT: name: "first"
// FLAT-NEXT: op: "Identity"
// FLAT-NEXT: input: "out"
// FLAT-NEXT: input: "^neg"
// FLAT-NEXT: input: "^meta"
// FLAT: name: "second"
// FLAT-NEXT: op: "Identity"
// FLAT-NEXT: input: "out:1"
