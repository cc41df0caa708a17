#!/usr/bin/env python3
"""Writes the forward graph of TensorFlow's layers-tutorial CNN (conv 5x5x32
SAME relu, max pool 2x2, conv 5x5x64 SAME relu, max pool 2x2, dense 1024
relu, dense 10, sparse softmax cross-entropy) as tf.compat.v1 would: NHWC
images of any batch size, VariableV2 weights initialized by Glorot-uniform
RandomUniform kernels and zero biases, an `init` op. cnn-training-step.pbtxt
is this graph after

  graph-opt cnn-forward.pbtxt --graph-infer-shapes \
    --graph-minimize='loss=loss learning-rate=0.001 global-step=global_step' \
    --emit=pbtxt -o cnn-training-step.pbtxt
"""
import math
import sys

F = 'attr { key: "T" value { type: DT_FLOAT } }'
out = []


def emit(text):
    out.append(text)


def shape(dims):
    return " ".join("dim { size: %d }" % d for d in dims)


def int_const(name, values, dims=None):
    dims = [len(values)] if dims is None else dims
    emit('node { name: "%s" op: "Const" attr { key: "dtype" value { type: '
         'DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 '
         'tensor_shape { %s } %s } } } }'
         % (name, shape(dims), " ".join("int_val: %d" % v for v in values)))


def float_const(name, value):
    emit('node { name: "%s" op: "Const" attr { key: "dtype" value { type: '
         'DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT '
         'tensor_shape { } float_val: %r } } } }' % (name, value))


def variable(name, dims, fan_in, fan_out, seed):
    emit('node { name: "%s" op: "VariableV2" attr { key: "dtype" value { '
         'type: DT_FLOAT } } attr { key: "shape" value { shape { %s } } } }'
         % (name, shape(dims)))
    init = name + "/Initializer"
    if fan_in:  # Glorot uniform, as tf.layers' default kernel initializer
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        r = init + "/random_uniform"
        int_const(r + "/shape", dims)
        float_const(r + "/min", -limit)
        float_const(r + "/max", limit)
        emit('node { name: "%s/RandomUniform" op: "RandomUniform" input: '
             '"%s/shape" attr { key: "T" value { type: DT_INT32 } } attr { '
             'key: "dtype" value { type: DT_FLOAT } } attr { key: "seed" '
             'value { i: 87654321 } } attr { key: "seed2" value { i: %d } } }'
             % (r, r, seed))
        emit('node { name: "%s/sub" op: "Sub" input: "%s/max" input: '
             '"%s/min" %s }' % (r, r, r, F))
        emit('node { name: "%s/mul" op: "Mul" input: "%s/RandomUniform" '
             'input: "%s/sub" %s }' % (r, r, r, F))
        emit('node { name: "%s" op: "Add" input: "%s/mul" input: "%s/min" '
             '%s }' % (r, r, r, F))
        value = r
    else:
        value = init + "/zeros"
        emit('node { name: "%s" op: "Const" attr { key: "dtype" value { type: '
             'DT_FLOAT } } attr { key: "value" value { tensor { dtype: '
             'DT_FLOAT tensor_shape { %s } float_val: 0 } } } }'
             % (value, shape(dims)))
    emit('node { name: "%s/Assign" op: "Assign" input: "%s" input: "%s" %s '
         'attr { key: "validate_shape" value { b: true } } attr { key: '
         '"use_locking" value { b: true } } }' % (name, name, value, F))
    emit('node { name: "%s/read" op: "Identity" input: "%s" %s }'
         % (name, name, F))
    return name + "/read"


def node(name, op, inputs, extra=""):
    emit('node { name: "%s" op: "%s" %s %s %s }'
         % (name, op, " ".join('input: "%s"' % i for i in inputs), F, extra))


WINDOW = ('attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } } '
          'attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } } '
          'attr { key: "padding" value { s: "VALID" } }')
CONV = ('attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } '
        'attr { key: "padding" value { s: "SAME" } }')

emit('node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: '
     'DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } '
     'dim { size: 28 } dim { size: 28 } dim { size: 1 } } } } }')
emit('node { name: "labels" op: "Placeholder" attr { key: "dtype" value { '
     'type: DT_INT32 } } attr { key: "shape" value { shape { dim { size: -1 '
     '} } } } }')
layers = [("conv2d/kernel", [5, 5, 1, 32], 25, 800, 1),
          ("conv2d/bias", [32], 0, 0, 0),
          ("conv2d_1/kernel", [5, 5, 32, 64], 800, 1600, 2),
          ("conv2d_1/bias", [64], 0, 0, 0),
          ("dense/kernel", [3136, 1024], 3136, 1024, 3),
          ("dense/bias", [1024], 0, 0, 0),
          ("dense_1/kernel", [1024, 10], 1024, 10, 4),
          ("dense_1/bias", [10], 0, 0, 0)]
read = {name: variable(name, dims, fi, fo, seed)
        for name, dims, fi, fo, seed in layers}
emit('node { name: "global_step" op: "VariableV2" attr { key: "dtype" value '
     '{ type: DT_INT64 } } attr { key: "shape" value { shape { } } } }')
emit('node { name: "global_step/Initializer/zeros" op: "Const" attr { key: '
     '"dtype" value { type: DT_INT64 } } attr { key: "value" value { tensor { '
     'dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }')
emit('node { name: "global_step/Assign" op: "Assign" input: "global_step" '
     'input: "global_step/Initializer/zeros" attr { key: "T" value { type: '
     'DT_INT64 } } }')

node("conv2d/Conv2D", "Conv2D", ["x", read["conv2d/kernel"]], CONV)
node("conv2d/BiasAdd", "BiasAdd", ["conv2d/Conv2D", read["conv2d/bias"]])
node("conv2d/Relu", "Relu", ["conv2d/BiasAdd"])
node("max_pooling2d/MaxPool", "MaxPool", ["conv2d/Relu"], WINDOW)
node("conv2d_1/Conv2D", "Conv2D", ["max_pooling2d/MaxPool",
                                   read["conv2d_1/kernel"]], CONV)
node("conv2d_1/BiasAdd", "BiasAdd", ["conv2d_1/Conv2D",
                                     read["conv2d_1/bias"]])
node("conv2d_1/Relu", "Relu", ["conv2d_1/BiasAdd"])
node("max_pooling2d_1/MaxPool", "MaxPool", ["conv2d_1/Relu"], WINDOW)
int_const("Reshape/shape", [-1, 3136])
node("Reshape", "Reshape", ["max_pooling2d_1/MaxPool", "Reshape/shape"],
     'attr { key: "Tshape" value { type: DT_INT32 } }')
node("dense/MatMul", "MatMul", ["Reshape", read["dense/kernel"]])
node("dense/BiasAdd", "BiasAdd", ["dense/MatMul", read["dense/bias"]])
node("dense/Relu", "Relu", ["dense/BiasAdd"])
node("dense_1/MatMul", "MatMul", ["dense/Relu", read["dense_1/kernel"]])
node("dense_1/BiasAdd", "BiasAdd", ["dense_1/MatMul", read["dense_1/bias"]])
emit('node { name: "xent" op: "SparseSoftmaxCrossEntropyWithLogits" input: '
     '"dense_1/BiasAdd" input: "labels" %s attr { key: "Tlabels" value { '
     'type: DT_INT32 } } }' % F)
int_const("Const", [0])
node("loss", "Mean", ["xent", "Const"],
     'attr { key: "Tidx" value { type: DT_INT32 } } '
     'attr { key: "keep_dims" value { b: false } }')
emit('node { name: "init" op: "NoOp" %s }' % " ".join(
    'input: "^%s/Assign"' % n for n in [l[0] for l in layers] +
    ["global_step"]))
emit('versions { producer: 27 }')
sys.stdout.write("\n".join(out) + "\n")
