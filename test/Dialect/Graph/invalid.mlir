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

// -----

graph.graph {
  // expected-error @+1 {{expects one !graph.control block argument standing for the metadata's control token}}
  %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
  ^bb0:
    graph.yield
  }
}

// -----

graph.graph {
  // expected-error @+1 {{yields 1 values whose types differ from what the op declares}}
  %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
  ^bb0(%m: !graph.control):
    %n_ctl = graph.node "NoOp" "n" : () -> ()
    graph.yield %n_ctl : !graph.control
  }
}

// -----

graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  // expected-error @+1 {{expects 'n' to be at least 2, got 1}}
  %r_ctl = graph.replicate(%a : tensor<*xf32>) attributes {input_nodes = [{attrs = {}, name = "in"}], n = 1 : i64, output_nodes = []} {
  ^bb0(%arg: tensor<*xf32>):
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

// A replica is a thread and a copy of the state: with no replicated inputs
// nothing else bounds n.
graph.graph {
  // expected-error @+1 {{expects 'n' to be at most 65536 (the replicas Cleave runs), got 1099511627776}}
  %r_ctl = graph.replicate attributes {input_nodes = [], n = 1099511627776 : i64, output_nodes = []} {
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  // expected-error @+1 {{expects number of data operands (1) to be 'n' * replicated block arguments + packed block arguments (2 * 1 + 0)}}
  %r_ctl = graph.replicate(%a : tensor<*xf32>) attributes {input_nodes = [{attrs = {}, name = "in"}], n = 2 : i64, output_nodes = []} {
  ^bb0(%arg: tensor<*xf32>):
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

// A packed input takes one operand, and comes after the replicated ones.
graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  // expected-error @+1 {{expects packed inputs after the replicated ones, but block argument 1 is replicated}}
  %r_ctl = graph.replicate(%a, %a, %a : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) attributes {input_nodes = [{attrs = {is_packed = true}, name = "packed"}, {attrs = {}, name = "in"}], n = 2 : i64, output_nodes = []} {
  ^bb0(%p: tensor<*xf32>, %arg: tensor<*xf32>):
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  // expected-error @+1 {{expects number of data operands (4) to be 'n' * replicated block arguments + packed block arguments (2 * 1 + 1)}}
  %r_ctl = graph.replicate(%a, %a, %a, %a : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) attributes {input_nodes = [{attrs = {}, name = "in"}, {attrs = {is_packed = true}, name = "packed"}], n = 2 : i64, output_nodes = []} {
  ^bb0(%arg: tensor<*xf32>, %p: tensor<*xf32>):
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

graph.graph {
  %a, %a_ctl = graph.node "Placeholder" "a" {dtype = f32} : () -> tensor<*xf32>
  // expected-error @+1 {{expects each folded node to have a 'name' string and an 'attrs' dictionary}}
  %r_ctl = graph.replicate(%a, %a : tensor<*xf32>, tensor<*xf32>) attributes {input_nodes = [{attrs = {}}], n = 2 : i64, output_nodes = []} {
  ^bb0(%arg: tensor<*xf32>):
    %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} {
    ^bb0(%m: !graph.control):
      graph.yield
    }
    graph.yield
  }
}

// -----

graph.graph {
  // expected-error @+1 {{expects its body to hold exactly one graph.cluster}}
  %r_ctl = graph.replicate attributes {input_nodes = [], n = 2 : i64, output_nodes = []} {
    graph.yield
  }
}

// -----

graph.graph {
  // expected-error @+1 {{expects number of results (1) to be equal to 'n' * number of yielded values (2 * 1)}}
  %r, %r_ctl = graph.replicate attributes {input_nodes = [], n = 2 : i64, output_nodes = [{}]} -> (!graph.control) {
    %c, %c_ctl = graph.cluster "c" attributes {metadata = {}, metadata_name = "m"} -> (!graph.control) {
    ^bb0(%m: !graph.control):
      graph.yield %m : !graph.control
    }
    graph.yield %c : !graph.control
  }
}
