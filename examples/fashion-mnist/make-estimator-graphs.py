#!/usr/bin/env python3
"""Writes the model graphs of the Fashion-MNIST Estimator jobs, one per
mode, as a TensorFlow 1.x model_fn builds them with tf.compat.v1.layers:

  mlp-{train,eval,predict}.pbtxt  784-256-128-100-10, ReLU
  cnn-{train,eval,predict}.pbtxt  the layers tutorial's CNN: conv 5x5x32
                                  SAME relu, max pool 2x2, conv 5x5x64,
                                  max pool 2x2, dense 1024 relu, dropout
                                  0.4 (train graph only), dense 10

Every graph takes `x` (float32 [batch, 784]); train and eval also take
`labels` (int32 [batch]) and compute `loss` (mean sparse softmax
cross-entropy); every graph has the predictions `ArgMax` (int64 classes)
and `softmax_tensor`, resource variables with Glorot-uniform kernels and
zero biases, and an `init` op. The jobs (mlp.job.pbtxt, cnn.job.pbtxt)
add the optimizer; graph-estimator adds the global step and the step.

Usage: make-estimator-graphs.py [OUT_DIR]   (default: this directory)
"""
import math
import os
import sys

F32, I32, I64 = "DT_FLOAT", "DT_INT32", "DT_INT64"


def attr(key, value):
    return 'attr { key: "%s" value { %s } }' % (key, value)


def type_attr(key, dtype):
    return attr(key, "type: %s" % dtype)


def shape(dims):
    return "shape { %s }" % " ".join("dim { size: %d }" % d for d in dims)


class Graph:
    def __init__(self):
        self.lines, self.inits = [], []

    def node(self, name, op, inputs=(), attrs=()):
        parts = ['name: "%s"' % name, 'op: "%s"' % op]
        parts += ['input: "%s"' % i for i in inputs] + list(attrs)
        self.lines.append("node { %s }" % " ".join(parts))
        return name

    def const(self, name, dtype, values, dims=None, field=None):
        dims = [len(values)] if dims is None else dims
        field = field or {F32: "float_val", I32: "int_val"}[dtype]
        return self.node(name, "Const", (), [
            type_attr("dtype", dtype),
            attr("value", "tensor { dtype: %s tensor_shape { %s } %s }" % (
                dtype, " ".join("dim { size: %d }" % d for d in dims),
                " ".join("%s: %r" % (field, v) for v in values)))])

    def variable(self, name, dims, initial):
        """A resource variable initialized by `initial(name)`."""
        self.node(name, "VarHandleOp", (), [
            type_attr("dtype", F32), attr("shape", shape(dims)),
            attr("shared_name", 's: "%s"' % name)])
        self.inits.append(self.node(name + "/Assign", "AssignVariableOp",
                                    [name, initial(name)],
                                    [type_attr("dtype", F32)]))
        return name

    def glorot(self, name, dims, fan_in, fan_out, seed):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        def initial(v):
            p = v + "/Initializer/random_uniform"
            self.const(p + "/shape", I32, dims)
            self.node(p + "/RandomUniform", "RandomUniform", [p + "/shape"], [
                type_attr("T", I32), type_attr("dtype", F32),
                attr("seed", "i: 87654321"), attr("seed2", "i: %d" % seed)])
            self.const(p + "/min", F32, [-limit], [])
            self.const(p + "/range", F32, [2 * limit], [])
            self.node(p + "/mul", "Mul", [p + "/RandomUniform", p + "/range"],
                      [type_attr("T", F32)])
            return self.node(p, "Add", [p + "/mul", p + "/min"],
                             [type_attr("T", F32)])
        return self.variable(name, dims, initial)

    def zeros(self, name, dims):
        return self.variable(name, dims, lambda v: self.const(
            v + "/Initializer/zeros", F32, [0.0], dims))

    def read(self, name, variable):
        return self.node(name, "ReadVariableOp", [variable],
                         [type_attr("dtype", F32)])

    def text(self):
        self.node("init", "NoOp", ["^" + i for i in self.inits])
        return "\n".join(self.lines) + "\n"


def dense(g, scope, x, fan_in, fan_out, seed, relu=True):
    kernel = g.glorot(scope + "/kernel", [fan_in, fan_out], fan_in, fan_out, seed)
    bias = g.zeros(scope + "/bias", [fan_out])
    y = g.node(scope + "/MatMul", "MatMul",
               [x, g.read(scope + "/MatMul/ReadVariableOp", kernel)], [
                   type_attr("T", F32), attr("transpose_a", "b: false"),
                   attr("transpose_b", "b: false")])
    y = g.node(scope + "/BiasAdd", "BiasAdd",
               [y, g.read(scope + "/BiasAdd/ReadVariableOp", bias)],
               [type_attr("T", F32), attr("data_format", 's: "NHWC"')])
    return g.node(scope + "/Relu", "Relu", [y], [type_attr("T", F32)]) if relu else y


def conv(g, scope, x, cin, cout, seed):
    kernel = g.glorot(scope + "/kernel", [5, 5, cin, cout], 25 * cin,
                      25 * cout, seed)
    bias = g.zeros(scope + "/bias", [cout])
    y = g.node(scope + "/Conv2D", "Conv2D",
               [x, g.read(scope + "/Conv2D/ReadVariableOp", kernel)], [
                   type_attr("T", F32), attr("strides", "list { i: 1 i: 1 i: 1 i: 1 }"),
                   attr("padding", 's: "SAME"'), attr("data_format", 's: "NHWC"'),
                   attr("dilations", "list { i: 1 i: 1 i: 1 i: 1 }"),
                   attr("use_cudnn_on_gpu", "b: true")])
    y = g.node(scope + "/BiasAdd", "BiasAdd",
               [y, g.read(scope + "/BiasAdd/ReadVariableOp", bias)],
               [type_attr("T", F32), attr("data_format", 's: "NHWC"')])
    return g.node(scope + "/Relu", "Relu", [y], [type_attr("T", F32)])


def pool(g, scope, x):
    return g.node(scope + "/MaxPool", "MaxPool", [x], [
        type_attr("T", F32), attr("ksize", "list { i: 1 i: 2 i: 2 i: 1 }"),
        attr("strides", "list { i: 1 i: 2 i: 2 i: 1 }"),
        attr("padding", 's: "VALID"'), attr("data_format", 's: "NHWC"')])


def dropout(g, scope, x, rate, seed):
    """tf.compat.v1.layers.dropout(rate) in training: keep with 1 - rate,
    scale the kept by 1 / (1 - rate)."""
    p = scope + "/dropout"
    g.node(p + "/Shape", "Shape", [x], [type_attr("T", F32),
                                          type_attr("out_type", I32)])
    g.node(p + "/random_uniform/RandomUniform", "RandomUniform", [p + "/Shape"], [
        type_attr("T", I32), type_attr("dtype", F32),
        attr("seed", "i: 87654321"), attr("seed2", "i: %d" % seed)])
    g.const(p + "/rate", F32, [rate], [])
    g.node(p + "/GreaterEqual", "GreaterEqual",
           [p + "/random_uniform/RandomUniform", p + "/rate"], [type_attr("T", F32)])
    g.node(p + "/Cast", "Cast", [p + "/GreaterEqual"], [
        type_attr("SrcT", "DT_BOOL"), type_attr("DstT", F32),
        attr("Truncate", "b: false")])
    g.const(p + "/scale", F32, [1.0 / (1.0 - rate)], [])
    g.node(p + "/mul", "Mul", [x, p + "/scale"], [type_attr("T", F32)])
    return g.node(p + "/mul_1", "Mul", [p + "/mul", p + "/Cast"],
                  [type_attr("T", F32)])


def build(model, mode):
    g = Graph()
    g.node("x", "Placeholder", (), [type_attr("dtype", F32),
                                    attr("shape", shape([-1, 784]))])
    if model == "mlp":
        h = "x"
        sizes = [784, 256, 128, 100]
        for i in range(3):
            h = dense(g, "dense" + ("_%d" % i if i else ""), h, sizes[i],
                      sizes[i + 1], seed=i + 1)
        logits = dense(g, "dense_3", h, 100, 10, seed=4, relu=False)
    else:
        g.const("Reshape/shape", I32, [-1, 28, 28, 1])
        h = g.node("Reshape", "Reshape", ["x", "Reshape/shape"],
                   [type_attr("T", F32), type_attr("Tshape", I32)])
        h = pool(g, "max_pooling2d", conv(g, "conv2d", h, 1, 32, seed=1))
        h = pool(g, "max_pooling2d_1", conv(g, "conv2d_1", h, 32, 64, seed=2))
        g.const("Reshape_1/shape", I32, [-1, 7 * 7 * 64])
        h = g.node("Reshape_1", "Reshape", [h, "Reshape_1/shape"],
                   [type_attr("T", F32), type_attr("Tshape", I32)])
        h = dense(g, "dense", h, 7 * 7 * 64, 1024, seed=3)
        if mode == "train":
            h = dropout(g, "dropout", h, 0.4, seed=5)
        logits = dense(g, "dense_1", h, 1024, 10, seed=4, relu=False)
    g.const("ArgMax/dimension", I32, [1], [])
    g.node("ArgMax", "ArgMax", [logits, "ArgMax/dimension"], [
        type_attr("T", F32), type_attr("Tidx", I32),
        type_attr("output_type", I64)])
    g.node("softmax_tensor", "Softmax", [logits], [type_attr("T", F32)])
    if mode != "predict":
        g.node("labels", "Placeholder", (), [type_attr("dtype", I32),
                                             attr("shape", shape([-1]))])
        g.node("xentropy", "SparseSoftmaxCrossEntropyWithLogits",
               [logits, "labels"], [type_attr("T", F32),
                                    type_attr("Tlabels", I32)])
        g.const("Const", I32, [0])
        g.node("loss", "Mean", ["xentropy", "Const"], [
            type_attr("T", F32), type_attr("Tidx", I32),
            attr("keep_dims", "b: false")])
    return g.text()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    for model in ("mlp", "cnn"):
        for mode in ("train", "eval", "predict"):
            path = os.path.join(out, "%s-%s.pbtxt" % (model, mode))
            with open(path, "w") as f:
                f.write("# Generated by make-estimator-graphs.py.\n")
                f.write(build(model, mode))


if __name__ == "__main__":
    main()
