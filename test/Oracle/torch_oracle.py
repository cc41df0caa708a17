#!/usr/bin/python3
"""Checks the reference interpreter against PyTorch on random inputs.

Each case builds a one-op GraphDef, feeds random inputs as .npy through
graph-run, and compares the fetched result with what PyTorch computes from
the same inputs. Run with Debian's python3 (python3-torch, python3-numpy).

Usage: torch_oracle.py --graph-run PATH
Prints one line per case and 'N passed, N failed'.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

DT = {np.float32: "DT_FLOAT", np.float64: "DT_DOUBLE", np.int32: "DT_INT32",
      np.int64: "DT_INT64", np.bool_: "DT_BOOL"}


def dt(array):
    return DT[array.dtype.type]


def attr(key, body):
    return 'attr { key: "%s" value { %s } }' % (key, body)


def const_node(name, values, dtype="DT_INT32"):
    values = np.asarray(values)
    field = "int_val" if dtype == "DT_INT32" else "int64_val"
    dims = "".join("dim { size: %d } " % d for d in values.shape)
    vals = " ".join("%s: %d" % (field, v) for v in values.flatten())
    return ('node { name: "%s" op: "Const" %s %s }' % (
        name, attr("dtype", "type: " + dtype),
        attr("value", "tensor { dtype: %s tensor_shape { %s} %s }" % (dtype, dims, vals))))


class Runner:
    def __init__(self, graph_run, work):
        self.graph_run = graph_run
        self.work = work
        self.passed = self.failed = self.cases = 0

    def run(self, op, inputs, attrs="", extra_nodes="", fetch="out"):
        """Runs `op` on `inputs` (numpy arrays) and returns the fetched array."""
        self.cases += 1
        case = os.path.join(self.work, "case%d" % self.cases)
        os.makedirs(case, exist_ok=True)
        nodes = []
        names = []
        for i, value in enumerate(inputs):
            pname = "in%d" % i
            np.save(os.path.join(case, pname + ".npy"), value)
            nodes.append('node { name: "%s" op: "Placeholder" %s }' % (
                pname, attr("dtype", "type: " + dt(value))))
            names.append(pname)
        nodes.append(extra_nodes)
        extra_inputs = [l.split('"')[1] for l in extra_nodes.split("\n") if l.strip()]
        all_inputs = names + extra_inputs
        nodes.append('node { name: "out" op: "%s" %s %s }' % (
            op, " ".join('input: "%s"' % n for n in all_inputs), attrs))
        graph = os.path.join(case, "graph.pbtxt")
        with open(graph, "w") as f:
            f.write("\n".join(nodes) + "\n")
        cmd = [self.graph_run, graph, "--output-dir", case]
        cmd += ["--fetch", fetch]
        for n in names:
            cmd += ["--feed", "%s=@%s" % (n, os.path.join(case, n + ".npy"))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip())
        return np.load(os.path.join(case, fetch.replace(":", "_") + ".npy"))

    def check(self, name, got_fn, want, rtol=1e-5, atol=1e-6):
        try:
            got = got_fn()
        except RuntimeError as e:
            self.failed += 1
            print("FAIL %s: %s" % (name, e))
            return
        want = np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            self.failed += 1
            print("FAIL %s: got %s %s, want %s %s" % (
                name, got.dtype, got.shape, want.dtype, want.shape))
        elif not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            self.failed += 1
            print("FAIL %s: max difference %g" % (
                name, np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
        else:
            self.passed += 1
            print("ok   %s" % name)


def T(x):
    return torch.from_numpy(np.ascontiguousarray(x))


def tf_same_pad(size, k, s, d=1):
    eff = (k - 1) * d + 1
    out = (size + s - 1) // s
    pad = max((out - 1) * s + eff - size, 0)
    return pad // 2, pad - pad // 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph-run", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(1234)
    with tempfile.TemporaryDirectory() as work:
        r = Runner(args.graph_run, work)
        tattr = lambda a: attr("T", "type: " + dt(a))

        # Binary ops with broadcasting, float32, float64 and int32.
        shapes = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((5,), ())]
        binary = {"AddV2": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                  "RealDiv": torch.div, "Maximum": torch.maximum,
                  "Minimum": torch.minimum,
                  "SquaredDifference": lambda a, b: (a - b) ** 2}
        for dtype in (np.float32, np.float64):
            for sa, sb in shapes:
                a = rng.standard_normal(sa).astype(dtype)
                b = (rng.standard_normal(sb) + 3).astype(dtype)
                for op, fn in binary.items():
                    r.check("%s/%s/%s-%s" % (op, dtype.__name__, sa, sb),
                            lambda: r.run(op, [a, b], tattr(a)),
                            fn(T(a), T(b)).numpy())
                pa = np.abs(a) + 0.5
                r.check("Pow/%s/%s" % (dtype.__name__, sa),
                        lambda: r.run("Pow", [pa, b], tattr(a)),
                        torch.pow(T(pa), T(b)).numpy(), rtol=1e-4)
                for op, fn in {"Less": torch.lt, "Greater": torch.gt,
                               "LessEqual": torch.le, "Equal": torch.eq}.items():
                    r.check("%s/%s/%s" % (op, dtype.__name__, sa),
                            lambda: r.run(op, [a, b], tattr(a)),
                            fn(T(a), T(b)).numpy())
        ia = rng.integers(-20, 20, (4, 5)).astype(np.int32)
        ib = rng.integers(1, 7, (5,)).astype(np.int32) * rng.choice([-1, 1], (5,)).astype(np.int32)
        for op, fn in {"AddV2": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                       "Maximum": torch.maximum,
                       "FloorDiv": lambda a, b: torch.div(a, b, rounding_mode="floor"),
                       "FloorMod": torch.remainder}.items():
            r.check("%s/int32" % op, lambda: r.run(op, [ia, ib], tattr(ia)),
                    fn(T(ia), T(ib)).numpy())

        # Unary ops.
        x = rng.standard_normal((3, 5)).astype(np.float32)
        pos = np.abs(x) + 0.1
        unary = {"Neg": (x, torch.neg), "Square": (x, torch.square),
                 "Sqrt": (pos, torch.sqrt), "Rsqrt": (pos, torch.rsqrt),
                 "Exp": (x, torch.exp), "Log": (pos, torch.log),
                 "Log1p": (pos, torch.log1p), "Abs": (x, torch.abs),
                 "Sign": (x, torch.sign), "Sigmoid": (x, torch.sigmoid),
                 "Tanh": (x, torch.tanh), "Relu": (x, torch.relu),
                 "Relu6": (x * 8, F.relu6), "Elu": (x, F.elu),
                 "Reciprocal": (pos, torch.reciprocal), "Floor": (x * 3, torch.floor)}
        for op, (inp, fn) in unary.items():
            r.check(op, lambda: r.run(op, [inp], tattr(inp)), fn(T(inp)).numpy())

        # Reductions over constant axes.
        x = rng.standard_normal((2, 3, 4)).astype(np.float32)
        def prod(t, dim, keepdim):
            # torch.prod takes one dim at a time.
            for d in sorted((d % t.dim() for d in dim), reverse=True):
                t = torch.prod(t, d, keepdim=keepdim)
            return t

        for op, fn in {"Sum": torch.sum, "Mean": torch.mean, "Prod": prod,
                       "Max": torch.amax, "Min": torch.amin}.items():
            for axes in ([1], [0, 2], [-1]):
                for keep in (False, True):
                    r.check("%s/axes=%s/keep=%s" % (op, axes, keep),
                            lambda: r.run(op, [x], tattr(x) + attr("Tidx", "type: DT_INT32")
                                          + attr("keep_dims", "b: %s" % str(keep).lower()),
                                          extra_nodes=const_node("axes", axes)),
                            fn(T(x), dim=axes, keepdim=keep).numpy(), rtol=1e-4)
        r.check("ArgMax", lambda: r.run("ArgMax", [x], tattr(x) + attr("Tidx", "type: DT_INT32")
                                        + attr("output_type", "type: DT_INT64"),
                                        extra_nodes=const_node("axis", 1)),
                torch.argmax(T(x), dim=1).numpy())

        # MatMul with transposes.
        for ta in (False, True):
            for tb in (False, True):
                a = rng.standard_normal((4, 3) if ta else (3, 4)).astype(np.float32)
                b = rng.standard_normal((5, 4) if tb else (4, 5)).astype(np.float32)
                want = torch.matmul(T(a).T if ta else T(a), T(b).T if tb else T(b))
                r.check("MatMul/ta=%s/tb=%s" % (ta, tb),
                        lambda: r.run("MatMul", [a, b], tattr(a)
                                      + attr("transpose_a", "b: %s" % str(ta).lower())
                                      + attr("transpose_b", "b: %s" % str(tb).lower())),
                        want.numpy(), rtol=1e-4, atol=1e-5)

        # Softmax family and the sparse cross-entropy loss.
        logits = rng.standard_normal((4, 7)).astype(np.float32) * 3
        labels = rng.integers(0, 7, (4,)).astype(np.int64)
        r.check("Softmax", lambda: r.run("Softmax", [logits], tattr(logits)),
                torch.softmax(T(logits), -1).numpy())
        r.check("LogSoftmax", lambda: r.run("LogSoftmax", [logits], tattr(logits)),
                torch.log_softmax(T(logits), -1).numpy())
        xent_attrs = tattr(logits) + attr("Tlabels", "type: DT_INT64")
        r.check("SparseSoftmaxCrossEntropyWithLogits/loss",
                lambda: r.run("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], xent_attrs),
                F.cross_entropy(T(logits), T(labels), reduction="none").numpy(), rtol=1e-4)
        r.check("SparseSoftmaxCrossEntropyWithLogits/backprop",
                lambda: r.run("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], xent_attrs,
                              fetch="out:1"),
                (torch.softmax(T(logits), -1) - F.one_hot(T(labels), 7)).numpy(), atol=1e-5)
        v = rng.standard_normal((2, 3, 5)).astype(np.float32)
        bias = rng.standard_normal((5,)).astype(np.float32)
        r.check("BiasAdd", lambda: r.run("BiasAdd", [v, bias], tattr(v)), (T(v) + T(bias)).numpy())

        # NHWC convolution and pooling, SAME and VALID, strides 1 and 2.
        img = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
        filt = rng.standard_normal((3, 4, 3, 5)).astype(np.float32)
        for padding in ("SAME", "VALID"):
            for s in (1, 2):
                x = T(img).permute(0, 3, 1, 2)
                w = T(filt).permute(3, 2, 0, 1)
                if padding == "SAME":
                    ph, pw = tf_same_pad(9, 3, s), tf_same_pad(8, 4, s)
                    x = F.pad(x, (pw[0], pw[1], ph[0], ph[1]))
                want = F.conv2d(x, w, stride=s).permute(0, 2, 3, 1).numpy()
                conv_attrs = (tattr(img) + attr("padding", 's: "%s"' % padding)
                              + attr("strides", "list { i: 1 i: %d i: %d i: 1 }" % (s, s)))
                r.check("Conv2D/%s/stride=%d" % (padding, s),
                        lambda: r.run("Conv2D", [img, filt], conv_attrs), want,
                        rtol=1e-4, atol=1e-4)
                pool_attrs = (tattr(img) + attr("padding", 's: "%s"' % padding)
                              + attr("ksize", "list { i: 1 i: 3 i: 2 i: 1 }")
                              + attr("strides", "list { i: 1 i: %d i: %d i: 1 }" % (s, s)))
                x = T(img).permute(0, 3, 1, 2)
                ones = torch.ones_like(x)
                if padding == "SAME":
                    ph, pw = tf_same_pad(9, 3, s), tf_same_pad(8, 2, s)
                    pads = (pw[0], pw[1], ph[0], ph[1])
                    xm = F.pad(x, pads, value=-float("inf"))
                    xs, ones = F.pad(x, pads), F.pad(ones, pads)
                else:
                    xm = xs = x
                want_max = F.max_pool2d(xm, (3, 2), stride=s).permute(0, 2, 3, 1).numpy()
                sums = F.avg_pool2d(xs, (3, 2), stride=s) * 6
                counts = F.avg_pool2d(ones, (3, 2), stride=s) * 6
                want_avg = (sums / counts).permute(0, 2, 3, 1).numpy()
                r.check("MaxPool/%s/stride=%d" % (padding, s),
                        lambda: r.run("MaxPool", [img], pool_attrs), want_max)
                r.check("AvgPool/%s/stride=%d" % (padding, s),
                        lambda: r.run("AvgPool", [img], pool_attrs), want_avg, rtol=1e-5)

        # Layout ops.
        x = rng.standard_normal((2, 3, 4)).astype(np.float32)
        r.check("Transpose", lambda: r.run("Transpose", [x], tattr(x) + attr("Tperm", "type: DT_INT32"),
                                           extra_nodes=const_node("perm", [2, 0, 1])),
                T(x).permute(2, 0, 1).numpy())
        r.check("Tile", lambda: r.run("Tile", [x], tattr(x) + attr("Tmultiples", "type: DT_INT32"),
                                      extra_nodes=const_node("multiples", [2, 1, 3])),
                T(x).repeat(2, 1, 3).numpy())
        r.check("Reshape", lambda: r.run("Reshape", [x], tattr(x) + attr("Tshape", "type: DT_INT32"),
                                         extra_nodes=const_node("shape", [4, -1])),
                T(x).reshape(4, -1).numpy())

        # Gather, select, range, slice, pad and the activation gradients.
        params = rng.standard_normal((4, 3, 2)).astype(np.float32)
        idx = np.array([[2, 0], [1, 1]], dtype=np.int32)
        for axis in (0, 1):
            r.check("GatherV2/axis=%d" % axis,
                    lambda: r.run("GatherV2", [params, idx], tattr(params)
                                  + attr("Tparams", "type: DT_FLOAT")
                                  + attr("Tindices", "type: DT_INT32")
                                  + attr("Taxis", "type: DT_INT32"),
                                  extra_nodes=const_node("axis", axis)),
                    np.take(params, idx, axis=axis))
        cond = rng.standard_normal((3, 1)) > 0
        t = rng.standard_normal((3, 4)).astype(np.float32)
        e = rng.standard_normal((4,)).astype(np.float32)
        r.check("SelectV2", lambda: r.run("SelectV2", [cond, t, e], tattr(t)),
                torch.where(T(cond), T(t), T(e)).numpy())
        rows = rng.standard_normal((3,)) > 0
        e2 = rng.standard_normal((3, 4)).astype(np.float32)
        r.check("Select/rows", lambda: r.run("Select", [rows, t, e2], tattr(t)),
                torch.where(T(rows)[:, None], T(t), T(e2)).numpy())
        start, limit, delta = (np.array(v, dtype=np.int32) for v in (3, 17, 4))
        r.check("Range/int32", lambda: r.run("Range", [start, limit, delta],
                                             attr("Tidx", "type: DT_INT32")),
                torch.arange(3, 17, 4, dtype=torch.int32).numpy())
        x = rng.standard_normal((4, 5, 6)).astype(np.float32)
        r.check("Slice", lambda: r.run("Slice", [x], tattr(x) + attr("Index", "type: DT_INT32"),
                                       extra_nodes=const_node("begin", [1, 0, 2]) + "\n"
                                       + const_node("size", [2, -1, 3])),
                x[1:3, :, 2:5])
        r.check("Pad", lambda: r.run("Pad", [x], tattr(x) + attr("Tpaddings", "type: DT_INT32"),
                                     extra_nodes=const_node("paddings", [[1, 0], [0, 2], [3, 1]])),
                F.pad(T(x), (3, 1, 0, 2, 1, 0)).numpy())
        y = 1 / (1 + np.exp(-x))
        dy = rng.standard_normal(x.shape).astype(np.float32)
        r.check("SigmoidGrad", lambda: r.run("SigmoidGrad", [y, dy], tattr(y)),
                (T(dy) * T(y) * (1 - T(y))).numpy())
        ty = np.tanh(x)
        r.check("TanhGrad", lambda: r.run("TanhGrad", [ty, dy], tattr(ty)),
                (T(dy) * (1 - T(ty) ** 2)).numpy())

    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
