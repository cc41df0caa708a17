#!/usr/bin/env python3
"""Fashion-MNIST for Cleave's replicated training example.

Reads Debian's dataset-fashion-mnist IDX files and writes, into --out:

  x.npy, y.npy          the first steps * replicas * batch training images
                        (float32 in [0, 1], 784 per row) and labels (int32);
  replicated.pbtxt      a 784-hidden-10 MLP whose step is replicated over
                        --replicas replicas, tagged as tpu.replicate() tags:
                        each step slices its global batch at the step
                        counter, splits it into per-replica batches
                        (TPUReplicatedInput), and formats each replica's
                        loss for a log line on the host (outside
                        compilation);
  single.pbtxt          the same model on the whole global batch, one
                        replica: the oracle;
  x_test.npy, y_test.npy the 10,000 test images and labels;
  eval.pbtxt            the model on a batch fed as x (labels), with
                        `accuracy` (the share of argmax(logits) that equal
                        the labels), reading the variables a training
                        run saved (graph-run --restore).

Usage: prepare.py --out DIR [--steps 100] [--batch 32] [--replicas 2]
       [--hidden 64] [--data /usr/share/datasets/fashion-mnist]
"""
import argparse
import gzip
import os
import struct

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, count):
    with gzip.open(path, "rb") as f:
        magic, n = struct.unpack(">II", f.read(8))
        # The dimensions after the first (the example count).
        dims = [struct.unpack(">I", f.read(4))[0]
                for _ in range((magic & 0xFF) - 1)]
        if count > n:
            raise SystemExit("%s holds %d examples, %d asked for" % (path, n, count))
        size = int(np.prod(dims)) if dims else 1
        data = np.frombuffer(f.read(count * size), dtype=np.uint8)
    return data.reshape([count] + dims)


def attr(key, value):
    return 'attr { key: "%s" value { %s } }' % (key, value)


def shape(dims):
    return "shape { %s }" % " ".join("dim { size: %d }" % d for d in dims)


def tensor(dtype, dims, field, values):
    return "tensor { dtype: %s tensor_shape { %s } %s }" % (
        dtype, " ".join("dim { size: %d }" % d for d in dims),
        " ".join("%s: %s" % (field, v) for v in values))


class Graph:
    def __init__(self, cluster=None):
        self.nodes = []
        self.cluster = cluster

    def node(self, name, op, inputs=(), attrs=(), device_side=False,
             host_side=False):
        parts = ['name: "%s"' % name, 'op: "%s"' % op]
        parts += ['input: "%s"' % i for i in inputs]
        parts += list(attrs)
        if self.cluster and (device_side or host_side):
            parts.append(attr("_tpu_replicate", 's: "%s"' % self.cluster))
        if self.cluster and host_side:
            parts.append(attr("_xla_outside_compilation", 's: "0"'))
        self.nodes.append("node { %s }" % " ".join(parts))
        return name

    def const(self, name, dtype, dims, field, values, **kw):
        return self.node(name, "Const", (), [
            attr("dtype", "type: %s" % dtype),
            attr("value", tensor(dtype, dims, field, values))], **kw)

    def text(self):
        return "\n".join(self.nodes) + "\n"


def build(replicas, batch, hidden, rows):
    """The training graph before graph-minimize: replicated when replicas
    > 1, else one replica over the global batch."""
    g = Graph("cluster" if replicas > 1 else None)
    f32, i32 = "type: DT_FLOAT", "type: DT_INT32"
    gb = replicas * batch
    g.node("x_all", "Placeholder", (), [attr("dtype", f32),
                                         attr("shape", shape([rows, 784]))])
    g.node("labels_all", "Placeholder", (), [attr("dtype", i32),
                                              attr("shape", shape([rows]))])
    # Variables, outside the computation, initialized by init.
    inits = []
    g.node("step", "VarHandleOp", (), [
        attr("dtype", "type: DT_INT64"), attr("shape", shape([])),
        attr("shared_name", 's: "step"')])
    g.const("step/zero", "DT_INT64", [], "int64_val", [0])
    inits.append(g.node("step/Assign", "AssignVariableOp", ["step", "step/zero"],
                        [attr("dtype", "type: DT_INT64")]))
    layers = [("dense1", 784, hidden, 1), ("dense2", hidden, 10, 2)]
    for name, fan_in, fan_out, seed in layers:
        for var, dims in (("kernel", [fan_in, fan_out]), ("bias", [fan_out])):
            v = "%s/%s" % (name, var)
            g.node(v, "VarHandleOp", (), [
                attr("dtype", f32), attr("shape", shape(dims)),
                attr("shared_name", 's: "%s"' % v)])
            if var == "kernel":
                g.const(v + "/shape", "DT_INT32", [2], "int_val", dims)
                g.node(v + "/random", "TruncatedNormal", [v + "/shape"], [
                    attr("T", i32), attr("dtype", f32), attr("seed", "i: 7"),
                    attr("seed2", "i: %d" % seed)])
                g.const(v + "/stddev", "DT_FLOAT", [], "float_val",
                        ["%.6f" % (1 / np.sqrt(fan_in))])
                g.node(v + "/initial", "Mul", [v + "/random", v + "/stddev"],
                       [attr("T", f32)])
            else:
                g.const(v + "/initial", "DT_FLOAT", [fan_out], "float_val",
                        ["0"] * fan_out)
            inits.append(g.node(v + "/Assign", "AssignVariableOp",
                                [v, v + "/initial"], [attr("dtype", f32)]))
    g.node("init", "NoOp", ["^" + i for i in inits])

    # This step's global batch: rows [step * gb, (step + 1) * gb).
    g.node("batch/step", "ReadVariableOp", ["step"],
           [attr("dtype", "type: DT_INT64")])
    g.node("batch/step32", "Cast", ["batch/step"], [
        attr("SrcT", "type: DT_INT64"), attr("DstT", i32),
        attr("Truncate", "b: false")])
    g.const("batch/size", "DT_INT32", [], "int_val", [gb])
    g.node("batch/offset", "Mul", ["batch/step32", "batch/size"],
           [attr("T", i32)])
    g.const("batch/zero", "DT_INT32", [], "int_val", [0])
    g.node("batch/begin", "Pack", ["batch/offset", "batch/zero"], [
        attr("N", "i: 2"), attr("T", i32), attr("axis", "i: 0")])
    g.const("batch/x_size", "DT_INT32", [2], "int_val", [gb, 784])
    g.node("batch/x", "Slice", ["x_all", "batch/begin", "batch/x_size"],
           [attr("T", f32), attr("Index", i32)])
    g.node("batch/label_begin", "Pack", ["batch/offset"], [
        attr("N", "i: 1"), attr("T", i32), attr("axis", "i: 0")])
    g.const("batch/label_size", "DT_INT32", [1], "int_val", [gb])
    g.node("batch/labels", "Slice",
           ["labels_all", "batch/label_begin", "batch/label_size"],
           [attr("T", i32), attr("Index", i32)])

    dev = dict(device_side=True)
    if replicas > 1:
        # Per-replica batches, and every input as tpu.replicate() feeds it.
        g.const("batch/axis", "DT_INT32", [], "int_val", [0])
        for what in ("x", "labels"):
            g.node("batch/%s_split" % what, "Split",
                   ["batch/axis", "batch/" + what], [
                       attr("T", f32 if what == "x" else i32),
                       attr("num_split", "i: %d" % replicas)])
        inputs = [["batch/x_split:%d" % r for r in range(replicas)],
                  ["batch/labels_split:%d" % r for r in range(replicas)]]
        types = [f32, i32]
        variables = [v for layer in layers
                     for v in ("%s/kernel" % layer[0], "%s/bias" % layer[0])]
        for v in variables:
            inputs.append([v] * replicas)
            types.append("type: DT_RESOURCE")
        reads = []
        for k, (ins, t) in enumerate(zip(inputs, types)):
            g.node("input%d" % k, "TPUReplicatedInput", ins, [
                attr("N", "i: %d" % replicas), attr("T", t)])
        g.node("TPUReplicateMetadata", "TPUReplicateMetadata", (), [
            attr("num_replicas", "i: %d" % replicas)], **dev)
        for k, t in enumerate(types):
            reads.append(g.node("replicated_input_%d" % k, "Identity",
                                ["input%d" % k], [attr("T", t)], **dev))
        x, labels, handles = reads[0], reads[1], reads[2:]
    else:
        x, labels = "batch/x", "batch/labels"
        handles = ["%s/%s" % (layer[0], v) for layer in layers
                   for v in ("kernel", "bias")]

    # The model.
    h = x
    for i, (name, _, _, _) in enumerate(layers):
        kernel, bias = handles[2 * i], handles[2 * i + 1]
        g.node("model/%s/kernel" % name, "ReadVariableOp", [kernel],
               [attr("dtype", f32)], **dev)
        g.node("model/%s/bias" % name, "ReadVariableOp", [bias],
               [attr("dtype", f32)], **dev)
        g.node("model/%s/MatMul" % name, "MatMul",
               [h, "model/%s/kernel" % name], [
                   attr("T", f32), attr("transpose_a", "b: false"),
                   attr("transpose_b", "b: false")], **dev)
        h = g.node("model/%s/BiasAdd" % name, "BiasAdd",
                   ["model/%s/MatMul" % name, "model/%s/bias" % name],
                   [attr("T", f32), attr("data_format", 's: "NHWC"')], **dev)
        if i + 1 < len(layers):
            h = g.node("model/%s/Relu" % name, "Relu", [h], [attr("T", f32)],
                       **dev)
    g.node("model/xent", "SparseSoftmaxCrossEntropyWithLogits", [h, labels], [
        attr("T", f32), attr("Tlabels", i32)], **dev)
    g.const("model/axes", "DT_INT32", [1], "int_val", [0], **dev)
    g.node("model/loss", "Mean", ["model/xent", "model/axes"], [
        attr("T", f32), attr("Tidx", i32), attr("keep_dims", "b: false")],
        **dev)
    if replicas > 1:
        # The log line, formatted and printed on the host.
        host = dict(host_side=True)
        g.node("model/log/line", "StringFormat", ["model/loss"], [
            attr("T", "list { type: DT_FLOAT }"),
            attr("template", 's: "replica loss: {}"'),
            attr("placeholder", 's: "{}"'), attr("summarize", "i: 3")], **host)
        g.node("model/log/print", "PrintV2", ["model/log/line"], [
            attr("output_stream", 's: "stderr"'), attr("end", 's: "\\n"')],
            **host)
        g.node("output0", "TPUReplicatedOutput", ["model/loss"], [
            attr("num_replicas", "i: %d" % replicas), attr("T", f32)])
    return g.text()


def build_eval(hidden):
    """The model's forward pass and its accuracy on a fed batch."""
    g = Graph()
    f32, i32 = "type: DT_FLOAT", "type: DT_INT32"
    g.node("x", "Placeholder", (), [attr("dtype", f32),
                                    attr("shape", shape([-1, 784]))])
    g.node("labels", "Placeholder", (), [attr("dtype", i32),
                                         attr("shape", shape([-1]))])
    h = "x"
    layers = [("dense1", 784, hidden), ("dense2", hidden, 10)]
    for i, (name, fan_in, fan_out) in enumerate(layers):
        for var, dims in (("kernel", [fan_in, fan_out]), ("bias", [fan_out])):
            v = "%s/%s" % (name, var)
            g.node(v, "VarHandleOp", (), [
                attr("dtype", f32), attr("shape", shape(dims)),
                attr("shared_name", 's: "%s"' % v)])
            g.node("model/%s/%s" % (name, var), "ReadVariableOp", [v],
                   [attr("dtype", f32)])
        g.node("model/%s/MatMul" % name, "MatMul",
               [h, "model/%s/kernel" % name], [attr("T", f32)])
        h = g.node("model/%s/BiasAdd" % name, "BiasAdd",
                   ["model/%s/MatMul" % name, "model/%s/bias" % name],
                   [attr("T", f32)])
        if i + 1 < len(layers):
            h = g.node("model/%s/Relu" % name, "Relu", [h], [attr("T", f32)])
    g.const("eval/axis", "DT_INT32", [], "int_val", [1])
    g.node("eval/predictions", "ArgMax", [h, "eval/axis"], [
        attr("T", f32), attr("Tidx", i32), attr("output_type", i32)])
    g.node("eval/correct", "Equal", ["eval/predictions", "labels"],
           [attr("T", i32)])
    g.node("eval/correct_float", "Cast", ["eval/correct"], [
        attr("SrcT", "type: DT_BOOL"), attr("DstT", f32)])
    g.const("eval/axes", "DT_INT32", [1], "int_val", [0])
    g.node("accuracy", "Mean", ["eval/correct_float", "eval/axes"],
           [attr("T", f32), attr("Tidx", i32)])
    return g.text()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=32,
                    help="examples per replica per step")
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--data", default=DATA)
    args = ap.parse_args()
    rows = args.steps * args.replicas * args.batch
    os.makedirs(args.out, exist_ok=True)
    images = read_idx(os.path.join(args.data, "train-images-idx3-ubyte.gz"),
                      rows)
    labels = read_idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz"),
                      rows)
    np.save(os.path.join(args.out, "x.npy"),
            (images.reshape(rows, 784) / 255.0).astype(np.float32))
    np.save(os.path.join(args.out, "y.npy"), labels.astype(np.int32))
    test_images = read_idx(os.path.join(args.data,
                                        "t10k-images-idx3-ubyte.gz"), 10000)
    test_labels = read_idx(os.path.join(args.data,
                                        "t10k-labels-idx1-ubyte.gz"), 10000)
    np.save(os.path.join(args.out, "x_test.npy"),
            (test_images.reshape(10000, 784) / 255.0).astype(np.float32))
    np.save(os.path.join(args.out, "y_test.npy"),
            test_labels.astype(np.int32))
    with open(os.path.join(args.out, "eval.pbtxt"), "w") as f:
        f.write(build_eval(args.hidden))
    # The same global batches: replicas x batch, or one replica of all.
    for name, replicas, batch in (
            ("replicated", args.replicas, args.batch),
            ("single", 1, args.replicas * args.batch)):
        with open(os.path.join(args.out, name + ".pbtxt"), "w") as f:
            f.write(build(replicas, batch, args.hidden, rows))


if __name__ == "__main__":
    main()
