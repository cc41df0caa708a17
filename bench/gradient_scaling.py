#!/usr/bin/env python3
"""graph-gradient benchmark: the MLP, the layers-tutorial CNN, and generated
graphs of 10k, 100k and 1M nodes.

Each graph is differentiated by `graph-opt --graph-gradient --mlir-timing`;
the pass's wall time is reported next to the GraphDef import of the same
graph in the same process (the in-job peer). The generated graphs are the
foundation benchmark's (cleave-graphdef-bench generate): a chain of dense
layers, differentiated from its last layer back to its input, so every node
of the chain gets its gradient. Linear passes keep (pass / import) flat;
the scaling line divides the time growth by the size growth (1.00 = linear).
Each figure is the best of three runs.

Usage: gradient_scaling.py --build BUILD_DIR [--sizes 10000,100000,1000000]
"""
import argparse
import os
import re
import subprocess
import tempfile

DENSE = 'attr { key: "T" value { type: DT_FLOAT } }'


def placeholder(name, shape, dtype="DT_FLOAT"):
    dims = " ".join("dim { size: %d }" % d for d in shape)
    return ('node { name: "%s" op: "Placeholder" attr { key: "dtype" value { '
            'type: %s } } attr { key: "shape" value { shape { %s } } } }\n'
            % (name, dtype, dims))


def node(name, op, inputs, extra=""):
    ins = " ".join('input: "%s"' % i for i in inputs)
    return 'node { name: "%s" op: "%s" %s %s %s }\n' % (name, op, ins, DENSE,
                                                       extra)


def loss(logits):
    return (node("xent", "SparseSoftmaxCrossEntropyWithLogits",
                 [logits, "labels"],
                 'attr { key: "Tlabels" value { type: DT_INT32 } }')
            + 'node { name: "axes" op: "Const" attr { key: "dtype" value { '
              'type: DT_INT32 } } attr { key: "value" value { tensor { dtype: '
              'DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n'
            + node("loss", "Mean", ["xent", "axes"],
                   'attr { key: "Tidx" value { type: DT_INT32 } }'))


def mlp():
    text = placeholder("x", [64, 784]) + placeholder("labels", [64],
                                                     "DT_INT32")
    for name, shape in [("w1", [784, 256]), ("b1", [256]), ("w2", [256, 128]),
                        ("b2", [128]), ("w3", [128, 10]), ("b3", [10])]:
        text += placeholder(name, shape)
    h = "x"
    for i in (1, 2, 3):
        text += node("l%d/MatMul" % i, "MatMul", [h, "w%d" % i])
        text += node("l%d/BiasAdd" % i, "BiasAdd", ["l%d/MatMul" % i,
                                                    "b%d" % i])
        h = "l%d/BiasAdd" % i
        if i < 3:
            text += node("l%d/Relu" % i, "Relu", [h])
            h = "l%d/Relu" % i
    return text + loss(h), "w1,b1,w2,b2,w3,b3"


def cnn():
    window = ('attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } } '
              'attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } } '
              'attr { key: "padding" value { s: "VALID" } }')
    conv = ('attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } '
            'attr { key: "padding" value { s: "SAME" } }')
    text = placeholder("x", [64, 28, 28, 1]) + placeholder("labels", [64],
                                                           "DT_INT32")
    for name, shape in [("k1", [5, 5, 1, 32]), ("c1", [32]),
                        ("k2", [5, 5, 32, 64]), ("c2", [64]),
                        ("w3", [3136, 1024]), ("b3", [1024]),
                        ("w4", [1024, 10]), ("b4", [10])]:
        text += placeholder(name, shape)
    text += node("conv1", "Conv2D", ["x", "k1"], conv)
    text += node("bias1", "BiasAdd", ["conv1", "c1"])
    text += node("relu1", "Relu", ["bias1"])
    text += node("pool1", "MaxPool", ["relu1"], window)
    text += node("conv2", "Conv2D", ["pool1", "k2"], conv)
    text += node("bias2", "BiasAdd", ["conv2", "c2"])
    text += node("relu2", "Relu", ["bias2"])
    text += node("pool2", "MaxPool", ["relu2"], window)
    text += ('node { name: "flat/shape" op: "Const" attr { key: "dtype" value '
             '{ type: DT_INT32 } } attr { key: "value" value { tensor { dtype: '
             'DT_INT32 tensor_shape { dim { size: 2 } } int_val: -1 int_val: '
             '3136 } } } }\n')
    text += node("flat", "Reshape", ["pool2", "flat/shape"],
                 'attr { key: "Tshape" value { type: DT_INT32 } }')
    text += node("dense", "MatMul", ["flat", "w3"])
    text += node("dense/bias", "BiasAdd", ["dense", "b3"])
    text += node("dense/relu", "Relu", ["dense/bias"])
    text += node("logits", "MatMul", ["dense/relu", "w4"])
    text += node("logits/bias", "BiasAdd", ["logits", "b4"])
    return text + loss("logits/bias"), "k1,c1,k2,c2,w3,b3,w4,b4"


def timed(graph_opt, path, ys, xs, infer_shapes, repeat=3):
    """The best of `repeat` runs: (import seconds, gradient seconds)."""
    runs = [timed_once(graph_opt, path, ys, xs, infer_shapes)
            for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def timed_once(graph_opt, path, ys, xs, infer_shapes):
    # The generated graphs' shapes are not consistent (their biases are
    # small constants): shape inference would reject them.
    passes = ["--graph-infer-shapes"] if infer_shapes else []
    out = subprocess.run(
        [graph_opt, path] + passes +
        ["--graph-gradient=ys=%s xs=%s" % (ys, xs), "--mlir-timing",
         "-o", os.devnull], check=True, capture_output=True, text=True).stderr
    times = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+) \(.*\)\s+(.*\S)\s*$", line)
        if m:
            times[m.group(2)] = float(m.group(1))
    return times["GraphDef import"], times["GraphGradientPass"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    graph_opt = os.path.join(args.build, "bin", "graph-opt")
    bench = os.path.join(args.build, "bin", "cleave-graphdef-bench")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, xs) in [("mlp", mlp()), ("cnn", cnn())]:
            path = os.path.join(tmp, name + ".pbtxt")
            with open(path, "w") as f:
                f.write(text)
            rows.append((name, text.count("node {"),
                         *timed(graph_opt, path, "loss", xs, True)))
        for n in [int(s) for s in args.sizes.split(",")]:
            path = os.path.join(tmp, "g%d.pb" % n)
            generated = subprocess.run([bench, "generate", str(n), path],
                                       check=True, capture_output=True,
                                       text=True).stdout
            nodes = int(generated.split()[1])
            last = "layer%d/tuple/control_dependency" % ((nodes - 1) // 8 - 1)
            rows.append(("generated", nodes,
                         *timed(graph_opt, path, last, "input", False)))
            os.remove(path)
    print("%-10s %9s %9s %11s %15s %12s" % ("graph", "nodes", "import_s",
                                            "gradient_s", "gradient/import",
                                            "us/node"))
    for name, nodes, imp, grad in rows:
        print("%-10s %9d %9.4f %11.4f %15.2f %12.2f" % (
            name, nodes, imp, grad, grad / imp, grad / nodes * 1e6))
    generated = [r for r in rows if r[0] == "generated"]
    for a, b in zip(generated, generated[1:]):
        growth = b[1] / a[1]
        print("scaling %d -> %d nodes (time growth / size growth): "
              "gradient %.2f, import (peer) %.2f" % (
                  a[1], b[1], b[3] / a[3] / growth, b[2] / a[2] / growth))


if __name__ == "__main__":
    main()
