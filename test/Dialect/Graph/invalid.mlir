// RUN: graph-opt %s -split-input-file -verify-diagnostics

graph.graph {
  // expected-error @+1 {{node 'a' has an empty op type}}
  %a_ctl = graph.node "" "a" : () -> ()
}

// -----

graph.graph {
  %a_ctl = graph.node "NoOp" "a" : () -> ()
  // expected-error @+1 {{Duplicated node (or function argument) with the same name: `a`}}
  %b_ctl = graph.node "NoOp" "a" : () -> ()
}

// -----

graph.graph {
  %x, %x_ctl = graph.node "Placeholder" "x" {dtype = f32} : () -> tensor<f32>
  // expected-error @+1 {{node 'y': Control dependencies must come after regular dependencies}}
  %y, %y_ctl = "graph.node"(%x_ctl, %x) <{attrs = {}, name = "y", op_type = "Identity"}> : (!graph.control, tensor<f32>) -> (tensor<f32>, !graph.control)
}

// -----

graph.graph {
  // expected-error @+1 {{has 2 spellings for 0 inputs}}
  %a_ctl = graph.node "NoOp" "a" spellings(["x", "y"]) : () -> ()
}

// -----

graph.graph {
  // expected-error @+1 {{'graph.return' op expects parent op 'graph.func'}}
  graph.return {control_names = [], names = []}
}

// -----

// expected-error @+1 {{has 0 arg_names for 1 arguments}}
graph.func @f(%a: tensor<*xf32>) attributes {arg_names = [], signature = {}} {
  graph.return {control_names = [], names = []}
}

// -----

graph.func @g(%a: tensor<*xf32>) -> tensor<*xf32> attributes {arg_names = ["a"], signature = {}} {
  // expected-error @+1 {{has 0 names for 1 data operands}}
  graph.return {control_names = [], names = []} %a : tensor<*xf32>
}

// -----

graph.func @h(%a: tensor<*xf32>) attributes {arg_names = ["a"], signature = {}} {
  // expected-error @+1 {{Duplicated node (or function argument) with the same name: `a`}}
  %a_ctl = graph.node "NoOp" "a" : () -> ()
  graph.return {control_names = [], names = []}
}

// -----

graph.graph {
  // expected-error @+1 {{expected one of qint8, quint8, qint16, quint16, qint32}}
  %a_ctl = graph.node "NoOp" "a" {t = !graph.quantized<qint4>} : () -> ()
}
