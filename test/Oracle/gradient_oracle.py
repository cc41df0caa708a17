#!/usr/bin/python3
"""Checks graph-gradient and graph-minimize on whole models against PyTorch.

Two models, with identical float32 weights and inputs on both sides:
an MLP (dense 784-64 relu, dense 64-10, sparse softmax cross-entropy) and
the TensorFlow layers-tutorial CNN (conv 5x5x32 SAME relu, max pool 2x2,
conv 5x5x64 SAME relu, max pool 2x2, dense 1024 relu, dense 10,
cross-entropy), as NHWC GraphDefs. For each, graph-gradient adds the
gradients of the loss with respect to every weight, graph-run evaluates
them, and each is compared with torch.autograd. Then graph-minimize adds
SGD, Momentum and Adam steps to the MLP; three steps of each are compared
(losses) with torch.optim.SGD and TensorFlow's documented Adam update on
torch.autograd gradients.

Usage: gradient_oracle.py --tools DIR
Prints one line per check and 'N passed, N failed'.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F


def const_or_var(name, array, variable):
    """A float32 Const, or a variable initialized from one as TF 1.x writes
    them: `variable` "ref" (VariableV2, Assign, read) or "resource"
    (VarHandleOp, AssignVariableOp, Read/ReadVariableOp)."""
    dims = " ".join("dim { size: %d }" % d for d in array.shape)
    values = " ".join("float_val: %r" % float(v) for v in array.reshape(-1))
    value = ('attr { key: "dtype" value { type: DT_FLOAT } } attr { key: '
             '"value" value { tensor { dtype: DT_FLOAT tensor_shape { %s } '
             '%s } } }' % (dims, values))
    dtype = 'attr { key: "dtype" value { type: DT_FLOAT } }'
    if not variable:
        return 'node { name: "%s" op: "Const" %s }\n' % (name, value)
    if variable == "resource":
        return ('node { name: "%s" op: "VarHandleOp" %s attr { key: "shape" '
                'value { shape { %s } } } attr { key: "shared_name" value { '
                's: "%s" } } }\n'
                'node { name: "%s/Initializer/initial_value" op: "Const" %s '
                '}\n'
                'node { name: "%s/Assign" op: "AssignVariableOp" input: "%s" '
                'input: "%s/Initializer/initial_value" %s }\n'
                'node { name: "%s/Read/ReadVariableOp" op: "ReadVariableOp" '
                'input: "%s" %s }\n' % (name, dtype, dims, name, name, value,
                                         name, name, name, dtype, name, name,
                                         dtype))
    return ('node { name: "%s" op: "VariableV2" attr { key: "dtype" value { '
            'type: DT_FLOAT } } attr { key: "shape" value { shape { %s } } } '
            '}\n'
            'node { name: "%s/initial_value" op: "Const" %s }\n'
            'node { name: "%s/Assign" op: "Assign" input: "%s" input: '
            '"%s/initial_value" attr { key: "T" value { type: DT_FLOAT } } }\n'
            'node { name: "%s/read" op: "Identity" input: "%s" attr { key: "T" '
            'value { type: DT_FLOAT } } }\n' % (name, dims, name, value, name,
                                                 name, name, name, name))


T = 'attr { key: "T" value { type: DT_FLOAT } }'


def node(name, op, inputs, extra=""):
    ins = " ".join('input: "%s"' % i for i in inputs)
    return 'node { name: "%s" op: "%s" %s %s %s }\n' % (name, op, ins, T, extra)


def placeholder(name, shape, dtype="DT_FLOAT"):
    dims = " ".join("dim { size: %d }" % d for d in shape)
    return ('node { name: "%s" op: "Placeholder" attr { key: "dtype" value { '
            'type: %s } } attr { key: "shape" value { shape { %s } } } }\n'
            % (name, dtype, dims))


def int_const(name, values):
    vals = " ".join("int_val: %d" % v for v in values)
    return ('node { name: "%s" op: "Const" attr { key: "dtype" value { type: '
            'DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 '
            'tensor_shape { dim { size: %d } } %s } } } }\n'
            % (name, len(values), vals))


def loss_nodes(logits):
    return (node("xent", "SparseSoftmaxCrossEntropyWithLogits",
                 [logits, "labels"],
                 'attr { key: "Tlabels" value { type: DT_INT32 } }')
            + int_const("axes", [0])
            + node("loss", "Mean", ["xent", "axes"],
                   'attr { key: "Tidx" value { type: DT_INT32 } }'))


def mlp_graph(weights, variables):
    text = placeholder("x", [4, 784]) + placeholder("labels", [4], "DT_INT32")
    for name, w in weights.items():
        text += const_or_var(name, w, variables)
    read = {"ref": lambda n: n + "/read",
            "resource": lambda n: n + "/Read/ReadVariableOp"}.get(
                variables, lambda n: n)
    text += node("h/MatMul", "MatMul", ["x", read("w1")])
    text += node("h/BiasAdd", "BiasAdd", ["h/MatMul", read("b1")])
    text += node("h/Relu", "Relu", ["h/BiasAdd"])
    text += node("logits/MatMul", "MatMul", ["h/Relu", read("w2")])
    text += node("logits/BiasAdd", "BiasAdd", ["logits/MatMul", read("b2")])
    text += loss_nodes("logits/BiasAdd")
    if variables:
        text += ('node { name: "init" op: "NoOp" %s }\n'
                 % " ".join('input: "^%s/Assign"' % n for n in weights))
    return text


def mlp_torch(weights, x, labels):
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    h = F.relu(torch.tensor(x, dtype=torch.float64) @ w["w1"] + w["b1"])
    logits = h @ w["w2"] + w["b2"]
    loss = F.cross_entropy(logits, torch.tensor(labels, dtype=torch.long))
    loss.backward()
    return {k: v.grad.numpy() for k, v in w.items()}, loss.item()


def conv(name, inp, filt):
    return node(name, "Conv2D", [inp, filt],
                'attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } '
                '} attr { key: "padding" value { s: "SAME" } }')


def pool(name, inp):
    return node(name, "MaxPool", [inp],
                'attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } } '
                'attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } '
                '} attr { key: "padding" value { s: "VALID" } }')


def cnn_graph(weights):
    text = placeholder("x", [2, 28, 28, 1]) + placeholder("labels", [2],
                                                          "DT_INT32")
    for name, w in weights.items():
        text += const_or_var(name, w, False)
    text += conv("conv1/Conv2D", "x", "k1")
    text += node("conv1/BiasAdd", "BiasAdd", ["conv1/Conv2D", "c1"])
    text += node("conv1/Relu", "Relu", ["conv1/BiasAdd"])
    text += pool("pool1/MaxPool", "conv1/Relu")
    text += conv("conv2/Conv2D", "pool1/MaxPool", "k2")
    text += node("conv2/BiasAdd", "BiasAdd", ["conv2/Conv2D", "c2"])
    text += node("conv2/Relu", "Relu", ["conv2/BiasAdd"])
    text += pool("pool2/MaxPool", "conv2/Relu")
    text += int_const("flat/shape", [-1, 7 * 7 * 64])
    text += node("flat", "Reshape", ["pool2/MaxPool", "flat/shape"],
                 'attr { key: "Tshape" value { type: DT_INT32 } }')
    text += node("dense/MatMul", "MatMul", ["flat", "w3"])
    text += node("dense/BiasAdd", "BiasAdd", ["dense/MatMul", "b3"])
    text += node("dense/Relu", "Relu", ["dense/BiasAdd"])
    text += node("logits/MatMul", "MatMul", ["dense/Relu", "w4"])
    text += node("logits/BiasAdd", "BiasAdd", ["logits/MatMul", "b4"])
    return text + loss_nodes("logits/BiasAdd")


def cnn_torch(weights, x, labels):
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    # NHWC weights and inputs; torch convolves NCHW with OIHW filters.
    h = torch.tensor(x, dtype=torch.float64).permute(0, 3, 1, 2)
    h = F.relu(F.conv2d(h, w["k1"].permute(3, 2, 0, 1), w["c1"], padding=2))
    h = F.max_pool2d(h, 2)
    h = F.relu(F.conv2d(h, w["k2"].permute(3, 2, 0, 1), w["c2"], padding=2))
    h = F.max_pool2d(h, 2)
    h = h.permute(0, 2, 3, 1).reshape(x.shape[0], -1)  # TF flattens NHWC
    h = F.relu(h @ w["w3"] + w["b3"])
    logits = h @ w["w4"] + w["b4"]
    loss = F.cross_entropy(logits, torch.tensor(labels, dtype=torch.long))
    loss.backward()
    return {k: v.grad.numpy() for k, v in w.items()}, loss.item()


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (cmd[0], proc.stderr))
    return proc.stdout


class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, got, want, rtol, atol):
        got = np.asarray(got, dtype=np.float64)
        want = np.asarray(want, dtype=np.float64)
        if got.shape == want.shape and np.allclose(got, want, rtol=rtol,
                                                   atol=atol):
            self.passed += 1
            print("PASS %s" % name)
        else:
            self.failed += 1
            err = (np.max(np.abs(got - want)) if got.shape == want.shape
                   else "shape %s vs %s" % (got.shape, want.shape))
            print("FAIL %s: max error %s" % (name, err))


def check_gradients(tools, tmp, checker, model, text, weights, feeds,
                    reference):
    path = os.path.join(tmp, model + ".pbtxt")
    with open(path, "w") as f:
        f.write(text)
    names = list(weights)
    out = os.path.join(tmp, model + "-grad.pbtxt")
    run([os.path.join(tools, "graph-opt"), path, "--graph-infer-shapes",
         "--graph-gradient=ys=loss xs=%s result-names=%s" % (
             ",".join(names), ",".join("d_" + n for n in names)),
         "--emit=pbtxt", "-o", out])
    args = [os.path.join(tools, "graph-run"), out, "--output-dir", tmp]
    for name, array in feeds.items():
        npy = os.path.join(tmp, name + ".npy")
        np.save(npy, array)
        args += ["--feed", "%s=@%s" % (name, npy)]
    for n in names:
        args += ["--fetch", "d_" + n]
    run(args)
    grads, _ = reference(weights, feeds["x"], feeds["labels"])
    for n in names:
        got = np.load(os.path.join(tmp, "d_%s.npy" % n))
        checker.check("%s d loss / d %s" % (model, n), got, grads[n],
                      rtol=1e-4, atol=1e-6)


class TensorFlowAdam:
    """Adam as TensorFlow's ApplyAdam documents it: epsilon is added to
    sqrt(v) before the bias correction folded into the step size
    (torch.optim.Adam adds it after, a different algorithm for small v)."""

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.params, self.lr = params, lr
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.t += 1
        lr_t = (self.lr * np.sqrt(1 - self.beta2 ** self.t)
                / (1 - self.beta1 ** self.t))
        with torch.no_grad():
            for p, m, v in zip(self.params, self.m, self.v):
                m.mul_(self.beta1).add_((1 - self.beta1) * p.grad)
                v.mul_(self.beta2).add_((1 - self.beta2) * p.grad * p.grad)
                p.sub_(lr_t * m / (torch.sqrt(v) + self.epsilon))


def check_optimizers(tools, tmp, checker, weights, x, labels, kind):
    """Steps of each optimizer on the MLP's `kind` ("ref" or "resource")
    variables against PyTorch's."""
    path = os.path.join(tmp, "mlp-%s-vars.pbtxt" % kind)
    with open(path, "w") as f:
        f.write(mlp_graph(weights, kind))
    np.save(os.path.join(tmp, "x.npy"), x)
    np.save(os.path.join(tmp, "labels.npy"), labels)
    lr, steps = 0.05, 3
    for opt, train, make in [
            ("sgd", "GradientDescent",
             lambda p: torch.optim.SGD(p, lr=lr)),
            ("momentum", "Momentum",
             lambda p: torch.optim.SGD(p, lr=lr, momentum=0.9)),
            ("adam", "Adam", lambda p: TensorFlowAdam(p, lr))]:
        out = os.path.join(tmp, "mlp-%s-%s.pbtxt" % (kind, opt))
        run([os.path.join(tools, "graph-opt"), path, "--graph-infer-shapes",
             "--graph-minimize=loss=loss optimizer=%s learning-rate=%r"
             % (opt, lr), "--emit=pbtxt", "-o", out])
        text = run([os.path.join(tools, "graph-run"), out, "--init", "init",
                    "--feed", "x=@" + os.path.join(tmp, "x.npy"),
                    "--feed", "labels=@" + os.path.join(tmp, "labels.npy"),
                    "--fetch", "loss", "--target", train,
                    "--steps", str(steps + 1)])
        losses = [float(line.split()[-1]) for line in text.splitlines()
                  if " loss = " in line]
        params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                  for k, v in weights.items()}
        optimizer = make(list(params.values()))
        want = []
        for _ in range(steps + 1):
            optimizer.zero_grad()
            h = F.relu(torch.tensor(x, dtype=torch.float64) @ params["w1"]
                       + params["b1"])
            logits = h @ params["w2"] + params["b2"]
            loss = F.cross_entropy(logits,
                                   torch.tensor(labels, dtype=torch.long))
            want.append(loss.item())
            loss.backward()
            optimizer.step()
        # graph-run fetches the loss before each step's update.
        checker.check("mlp %s (%s variables) losses over %d steps"
                      % (opt, kind, steps + 1),
                      losses, want, rtol=1e-4, atol=1e-5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    checker = Checker()
    with tempfile.TemporaryDirectory() as tmp:
        mlp = {"w1": rng.normal(0, 0.05, (784, 64)).astype(np.float32),
               "b1": rng.normal(0, 0.1, (64,)).astype(np.float32),
               "w2": rng.normal(0, 0.1, (64, 10)).astype(np.float32),
               "b2": rng.normal(0, 0.1, (10,)).astype(np.float32)}
        x = rng.random((4, 784)).astype(np.float32)
        labels = np.array([3, 7, 0, 9], dtype=np.int32)
        check_gradients(args.tools, tmp, checker, "mlp",
                        mlp_graph(mlp, False), mlp,
                        {"x": x, "labels": labels}, mlp_torch)
        cnn = {"k1": rng.normal(0, 0.1, (5, 5, 1, 32)).astype(np.float32),
               "c1": rng.normal(0, 0.1, (32,)).astype(np.float32),
               "k2": rng.normal(0, 0.05, (5, 5, 32, 64)).astype(np.float32),
               "c2": rng.normal(0, 0.1, (64,)).astype(np.float32),
               "w3": rng.normal(0, 0.02, (3136, 1024)).astype(np.float32),
               "b3": rng.normal(0, 0.1, (1024,)).astype(np.float32),
               "w4": rng.normal(0, 0.05, (1024, 10)).astype(np.float32),
               "b4": rng.normal(0, 0.1, (10,)).astype(np.float32)}
        images = rng.random((2, 28, 28, 1)).astype(np.float32)
        check_gradients(args.tools, tmp, checker, "cnn", cnn_graph(cnn), cnn,
                        {"x": images, "labels": np.array([1, 8],
                                                         dtype=np.int32)},
                        cnn_torch)
        for kind in ("ref", "resource"):
            check_optimizers(args.tools, tmp, checker, mlp, x, labels, kind)
    print("%d passed, %d failed" % (checker.passed, checker.failed))
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
