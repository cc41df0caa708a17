#!/usr/bin/python3
"""Checks the reference interpreter against PyTorch on random inputs.

Each case builds a one-op GraphDef, feeds random inputs as .npy through
graph-run, and compares each fetched output with what PyTorch (or NumPy, for
indexing) computes from the same inputs: same dtype, same shape, and values
within a tolerance set by the dtype (float32: rtol 1e-5, atol 1e-6; float64:
rtol 1e-10, atol 1e-12; integers and bools exactly). References for ops that
accumulate are computed in float64 and rounded once to the op's dtype, as the
interpreter does. Gradient kernels are checked against torch.autograd of the
forward op. Run with Debian's python3 (python3-torch, python3-numpy).

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

# ---------------------------------------------------------------------------
# GraphDef text
# ---------------------------------------------------------------------------

DT = {np.float32: "DT_FLOAT", np.float64: "DT_DOUBLE", np.int32: "DT_INT32",
      np.int64: "DT_INT64", np.uint16: "DT_UINT16", np.bool_: "DT_BOOL"}
FLOATS = (np.float32, np.float64)


def dt(dtype):
    """The DataType enum name of a NumPy dtype (or scalar type)."""
    return DT[np.dtype(dtype).type]


def attr(key, body):
    return 'attr { key: "%s" value { %s } }' % (key, body)


def attrs(**values):
    """AttrValues by Python type: bool b, int i, float f, str s, list of int
    list { i }, NumPy dtype type. `None` leaves the attr out (its default)."""
    def body(v):
        if isinstance(v, (bool, np.bool_)):
            return "b: %s" % str(bool(v)).lower()
        if isinstance(v, (int, np.integer)):
            return "i: %d" % v
        if isinstance(v, float):
            return "f: %r" % v
        if isinstance(v, str):
            return 's: "%s"' % v
        if isinstance(v, (list, tuple)):
            return "list { %s }" % " ".join("i: %d" % i for i in v)
        return "type: " + dt(v)
    return " ".join(attr(k, body(v)) for k, v in values.items() if v is not None)


class Const:
    """An op input baked into the graph as an integer Const node (shapes,
    axes, slice bounds) rather than fed."""

    def __init__(self, values, dtype=np.int32):
        self.value = np.asarray(values, dtype=dtype)


def const_node(name, value):
    field = {np.int32: "int_val", np.int64: "int64_val"}[value.dtype.type]
    dims = "".join("dim { size: %d } " % d for d in value.shape)
    vals = " ".join("%s: %d" % (field, v) for v in value.flatten())
    return 'node { name: "%s" op: "Const" %s %s }' % (
        name, attrs(dtype=value.dtype),
        attr("value", "tensor { dtype: %s tensor_shape { %s} %s }" % (
            dt(value.dtype), dims, vals)))


def outputs(n):
    """The fetches of an op's first n outputs."""
    return ["out:%d" % i for i in range(n)]


# ---------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------

# (rtol, atol) by dtype; integer and bool results must be equal.
TOLERANCE = {np.float32: (1e-5, 1e-6), np.float64: (1e-10, 1e-12)}


def mismatch(got, want, rtol=None, atol=None):
    """Why `got` is not `want`, or None when it is."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return "got %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.type in TOLERANCE:
        default_rtol, default_atol = TOLERANCE[want.dtype.type]
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        bad = got != want
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return "%d of %d values differ, first at %s: got %r, want %r" % (
        bad.sum(), bad.size, at, got[at], want[at])


class Runner:
    def __init__(self, graph_run, work):
        self.graph_run = graph_run
        self.work = work
        self.passed = self.failed = self.runs = 0

    def run(self, op, inputs, attrs="", fetch="out"):
        """Runs node "out" = `op`(`inputs`) and returns the fetched array, or
        a list of arrays when `fetch` is a list. Each input is a NumPy array,
        fed to a Placeholder, or a Const."""
        self.runs += 1
        case = os.path.join(self.work, "run%d" % self.runs)
        os.makedirs(case, exist_ok=True)
        nodes, feeds = [], []
        for i, value in enumerate(inputs):
            name = "in%d" % i
            if isinstance(value, Const):
                nodes.append(const_node(name, value.value))
                continue
            path = os.path.join(case, name + ".npy")
            np.save(path, value)
            feeds += ["--feed", "%s=@%s" % (name, path)]
            nodes.append('node { name: "%s" op: "Placeholder" %s }' % (
                name, attr("dtype", "type: " + dt(value.dtype))))
        nodes.append('node { name: "out" op: "%s" %s %s }' % (
            op, " ".join('input: "in%d"' % i for i in range(len(inputs))), attrs))
        graph = os.path.join(case, "graph.pbtxt")
        with open(graph, "w") as f:
            f.write("\n".join(nodes) + "\n")
        fetches = fetch if isinstance(fetch, list) else [fetch]
        cmd = [self.graph_run, graph, "--output-dir", case] + feeds
        for name in fetches:
            cmd += ["--fetch", name]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip())
        got = [np.load(os.path.join(case, name.replace(":", "_") + ".npy"))
               for name in fetches]
        return got if isinstance(fetch, list) else got[0]

    def check(self, name, got_fn, want, rtol=None, atol=None):
        """Compares got_fn() with `want`: an array, or a dict {label: array}
        when got_fn returns a list of arrays, one per label; each array is a
        case of its own, and a failed run fails them all."""
        wants = want if isinstance(want, dict) else {None: want}
        try:
            got = got_fn()
            got = got if isinstance(want, dict) else [got]
            assert len(got) == len(wants), name
            errors = [mismatch(g, np.asarray(w), rtol, atol)
                      for g, w in zip(got, wants.values())]
        except (RuntimeError, ValueError) as e:
            errors = ["%s: %s" % (type(e).__name__, e)] * len(wants)
        for label, error in zip(wants, errors):
            full = name if label is None else "%s/%s" % (name, label)
            if error:
                self.failed += 1
                print("FAIL %s: %s" % (full, error))
            else:
                self.passed += 1
                print("ok   %s" % full)


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------

def T(x):
    # Not np.ascontiguousarray, which turns 0-d arrays into 1-d ones.
    return torch.from_numpy(np.require(x, requirements="C"))


def wide(x):
    """x as a float64 (floats) or int64 (integers) tensor."""
    t = T(x)
    if t.is_floating_point():
        return t.double()
    return t if t.dtype == torch.bool else t.long()


def ref(fn, *xs):
    """fn(*xs) computed in float64/int64, rounded to the dtype of xs[0]."""
    return fn(*map(wide, xs)).detach().numpy().astype(xs[0].dtype)


def vjp(fn, xs, dy):
    """The gradients of fn at xs for the upstream gradient dy, computed in
    float64 by autograd and rounded to the dtypes of xs."""
    ts = [wide(x).requires_grad_() for x in xs]
    fn(*ts).backward(wide(dy))
    return [t.grad.numpy().astype(x.dtype) for t, x in zip(ts, xs)]


def f32(v):
    """A float attr's value as the op sees it: rounded to float32."""
    return float(np.float32(v))


def tf_same_pad(size, k, s, d=1):
    """TensorFlow's SAME padding (before, after) of one spatial dimension."""
    eff = (k - 1) * d + 1
    out = (size + s - 1) // s
    pad = max((out - 1) * s + eff - size, 0)
    return pad // 2, pad - pad // 2


def same_pads(x, k, s):
    """F.pad's (left, right, top, bottom) for TensorFlow SAME padding of an
    NCHW tensor with window k and strides s, both (h, w)."""
    (top, bottom), (left, right) = (
        tf_same_pad(n, kn, sn) for n, kn, sn in zip(x.shape[2:], k, s))
    return left, right, top, bottom


def nchw(x):
    return x.permute(0, 3, 1, 2)


def nhwc(x):
    return x.permute(0, 2, 3, 1)


def conv2d_nhwc(x, w, s, padding):
    """Conv2D: NHWC input, HWIO filter."""
    x = nchw(x)
    if padding == "SAME":
        x = F.pad(x, same_pads(x, w.shape[:2], s))
    return nhwc(F.conv2d(x, w.permute(3, 2, 0, 1), stride=s))


def max_pool_nhwc(x, k, s, padding):
    x = nchw(x)
    if padding == "SAME":
        x = F.pad(x, same_pads(x, k, s), value=-float("inf"))
    return nhwc(F.max_pool2d(x, k, stride=s))


def avg_pool_nhwc(x, k, s, padding):
    """TensorFlow's AvgPool: the mean over the window's elements that lie in
    the input (padding is not counted), as sum-pool / count-pool."""
    x = nchw(x)
    ones = torch.ones_like(x)
    if padding == "SAME":
        pads = same_pads(x, k, s)
        x, ones = F.pad(x, pads), F.pad(ones, pads)
    def sum_pool(t):
        return F.avg_pool2d(t, k, stride=s, divisor_override=1)
    return nhwc(sum_pool(x) / sum_pool(ones))


# ---------------------------------------------------------------------------
# Element-wise ops
# ---------------------------------------------------------------------------

def check_binary(r, rng):
    """Binary ops with broadcasting, float32, float64 and int32."""
    shapes = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((5,), ())]
    binary = {"AddV2": torch.add, "Sub": torch.sub, "Mul": torch.mul,
              "RealDiv": torch.div, "Maximum": torch.maximum,
              "Minimum": torch.minimum,
              "SquaredDifference": lambda a, b: (a - b) ** 2,
              "Atan2": torch.atan2,
              "TruncateDiv": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
              "TruncateMod": torch.fmod, "Mod": torch.fmod,
              "MulNoNan": lambda a, b: torch.where(b == 0, 0, a * b).to(a.dtype),
              "Less": torch.lt, "Greater": torch.gt,
              "LessEqual": torch.le, "Equal": torch.eq}
    for dtype in FLOATS:
        for sa, sb in shapes:
            a = rng.standard_normal(sa).astype(dtype)
            b = (rng.standard_normal(sb) + 3).astype(dtype)
            for op, fn in binary.items():
                r.check("%s/%s/%s-%s" % (op, dtype.__name__, sa, sb),
                        lambda: r.run(op, [a, b], attrs(T=dtype)),
                        fn(T(a), T(b)).numpy())
            pa = np.abs(a) + 0.5
            r.check("Pow/%s/%s" % (dtype.__name__, sa),
                    lambda: r.run("Pow", [pa, b], attrs(T=dtype)),
                    torch.pow(T(pa), T(b)).numpy())
    ia = rng.integers(-20, 20, (4, 5)).astype(np.int32)
    ib = rng.integers(1, 7, (5,)).astype(np.int32) * rng.choice([-1, 1], (5,)).astype(np.int32)
    for op, fn in {"AddV2": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                   "Maximum": torch.maximum,
                   "FloorDiv": lambda a, b: torch.div(a, b, rounding_mode="floor"),
                   "FloorMod": torch.remainder,
                   "TruncateDiv": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                   "TruncateMod": torch.fmod, "Mod": torch.fmod}.items():
        r.check("%s/int32" % op, lambda: r.run(op, [ia, ib], attrs(T=np.int32)),
                fn(T(ia), T(ib)).numpy())


def check_unary(r, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    pos = np.abs(x) + 0.1
    inside = np.tanh(x).astype(np.float32)  # in (-1, 1)
    unary = {"Neg": (x, torch.neg), "Square": (x, torch.square),
             "Sqrt": (pos, torch.sqrt), "Rsqrt": (pos, torch.rsqrt),
             "Exp": (x, torch.exp), "Log": (pos, torch.log),
             "Log1p": (pos, torch.log1p), "Abs": (x, torch.abs),
             "Sign": (x, torch.sign), "Sigmoid": (x, torch.sigmoid),
             "Tanh": (x, torch.tanh), "Relu": (x, torch.relu),
             "Relu6": (x * 8, F.relu6), "Elu": (x, F.elu),
             "Reciprocal": (pos, torch.reciprocal), "Floor": (x * 3, torch.floor),
             "Ceil": (x * 3, torch.ceil), "Round": (x * 3, torch.round),
             "Rint": (x * 3, torch.round), "Expm1": (x, torch.expm1),
             "Erf": (x, torch.erf), "Sin": (x * 3, torch.sin),
             "Cos": (x * 3, torch.cos), "Tan": (x, torch.tan),
             "Asin": (inside, torch.asin), "Acos": (inside, torch.acos),
             "Atan": (x * 3, torch.atan), "Sinh": (x, torch.sinh),
             "Cosh": (x, torch.cosh), "Asinh": (x * 3, torch.asinh),
             "Acosh": (pos + 1, torch.acosh), "Atanh": (inside, torch.atanh),
             # PyTorch's softplus is x past 20; TensorFlow's past 13.94.
             "Softplus": (x * 8, lambda t: F.softplus(t, threshold=13.94)),
             "Softsign": (x * 3, F.softsign)}
    for op, (inp, fn) in unary.items():
        r.check(op, lambda: r.run(op, [inp], attrs(T=np.float32)), fn(T(inp)).numpy())


def check_special(r, rng):
    """Erfc, Lgamma, Digamma, Zeta and Polygamma in float32 and float64,
    against PyTorch's float64 functions (its float32 ones are less exact
    than the float64 computation Cleave rounds)."""
    x = rng.uniform(-6, 6, (4, 5))
    q = rng.uniform(0.1, 6, (4, 5))
    s = rng.uniform(1.2, 6, (5,))
    n = np.array([0, 1, 2, 3, 1], np.float64)
    for dtype in FLOATS:
        cast = lambda v: v.astype(dtype)
        want = lambda t: t.numpy().astype(dtype)
        for op, fn in {"Erfc": torch.erfc, "Lgamma": torch.lgamma,
                       "Digamma": torch.digamma}.items():
            r.check("%s/%s" % (op, dtype.__name__),
                    lambda: r.run(op, [cast(x)], attrs(T=dtype)),
                    want(fn(T(cast(x)).double())))
        r.check("Zeta/%s" % dtype.__name__,
                lambda: r.run("Zeta", [cast(s), cast(q)], attrs(T=dtype)),
                want(torch.special.zeta(T(cast(s)).double(), T(cast(q)).double())))
        # PyTorch's polygamma is good to about 1e-10 (trigamma at 3.2:
        # 0.36632119080017, exactly 0.36632119073140); Cleave's Euler-
        # Maclaurin sum to about 1e-16.
        r.check("Polygamma/%s" % dtype.__name__,
                lambda: r.run("Polygamma", [cast(n), cast(q)], attrs(T=dtype)),
                want(torch.stack([torch.special.polygamma(int(k), T(cast(q))[:, i].double())
                                  for i, k in enumerate(n)], 1)),
                rtol=1e-5 if dtype == np.float32 else 1e-9)


def check_activation_grads(r, rng):
    """The gradient ops of element-wise functions against autograd of the
    forward function. Most take (y, dy) with y the forward output; Relu6Grad
    takes (dy, features) and EluGrad (dy, outputs). Autograd runs at the
    exact (float64) preimage of the fed point, so that the fed y's rounding
    does not count against the op."""
    def positive(shape):
        return rng.uniform(0.2, 3, shape)

    def nonzero(shape):
        return positive(shape) * rng.choice([-1, 1], shape)

    # op: (forward, x's distribution, the op's inputs, x from the fed point)
    grads = {
        "SigmoidGrad": (torch.sigmoid, rng.standard_normal, "y dy", torch.logit),
        "TanhGrad": (torch.tanh, rng.standard_normal, "y dy", torch.atanh),
        "RsqrtGrad": (torch.rsqrt, positive, "y dy", lambda y: y ** -2),
        "SqrtGrad": (torch.sqrt, positive, "y dy", torch.square),
        "ReciprocalGrad": (torch.reciprocal, nonzero, "y dy", torch.reciprocal),
        "Relu6Grad": (F.relu6, lambda s: rng.uniform(-3, 9, s), "dy x", None),
        "EluGrad": (F.elu, lambda s: 2 * rng.standard_normal(s), "dy y",
                    lambda y: torch.where(y < 0, torch.log1p(y), y)),
        "SoftplusGrad": (F.softplus, lambda s: 4 * rng.standard_normal(s),
                         "dy x", None),
        "SoftsignGrad": (F.softsign, lambda s: 4 * rng.standard_normal(s),
                         "dy x", None),
    }
    for op, (forward, draw, order, preimage) in grads.items():
        for dtype in FLOATS:
            x = draw((4, 6)).astype(dtype)
            dy = rng.standard_normal(x.shape).astype(dtype)
            y = forward(T(x)).numpy()
            point = x if preimage is None else preimage(wide(y)).numpy()
            want, = vjp(forward, [point], dy)
            args = {"x": x, "y": y, "dy": dy}
            r.check("%s/%s" % (op, dtype.__name__),
                    lambda: r.run(op, [args[a] for a in order.split()], attrs(T=dtype)),
                    want.astype(dtype))


# ---------------------------------------------------------------------------
# Reductions and matrix products
# ---------------------------------------------------------------------------

def check_reductions(r, rng):
    """Reductions over constant axes, and ArgMax."""
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
                        lambda: r.run(op, [x, Const(axes)], attrs(
                            T=np.float32, Tidx=np.int32, keep_dims=keep)),
                        ref(lambda t: fn(t, dim=axes, keepdim=keep), x))
    r.check("ArgMax", lambda: r.run("ArgMax", [x, Const(1)], attrs(
                T=np.float32, Tidx=np.int32, output_type=np.int64)),
            torch.argmax(T(x), dim=1).numpy())


def check_matmul(r, rng):
    """MatMul with transposes; BatchMatMulV2 with broadcast batch dims and
    adjoints (plain transposes for real types)."""
    for ta in (False, True):
        for tb in (False, True):
            a = rng.standard_normal((4, 3) if ta else (3, 4)).astype(np.float32)
            b = rng.standard_normal((5, 4) if tb else (4, 5)).astype(np.float32)
            r.check("MatMul/ta=%s/tb=%s" % (ta, tb),
                    lambda: r.run("MatMul", [a, b], attrs(
                        T=np.float32, transpose_a=ta, transpose_b=tb)),
                    ref(lambda a, b: torch.matmul(a.mT if ta else a, b.mT if tb else b), a, b))

    def operand(batch, rows, cols, adjoint, dtype):
        shape = batch + ((cols, rows) if adjoint else (rows, cols))
        if dtype == np.int32:
            return rng.integers(-9, 10, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)

    # (x batch dims, y batch dims, dtypes): x is [..., 3, 4], y [..., 4, 2].
    batches = [((2, 1), (5,), (np.float32, np.float64, np.int32)),
               ((), (2, 3), (np.float32,)),
               ((4, 1, 3), (1, 2, 1), (np.float64,))]
    for bx, by, dtypes in batches:
        for dtype in dtypes:
            for adj_x in (False, True):
                for adj_y in (False, True):
                    x = operand(bx, 3, 4, adj_x, dtype)
                    y = operand(by, 4, 2, adj_y, dtype)
                    r.check("BatchMatMulV2/%s/%s-%s/adj_x=%s/adj_y=%s" % (
                                dtype.__name__, x.shape, y.shape, adj_x, adj_y),
                            lambda: r.run("BatchMatMulV2", [x, y], attrs(
                                T=dtype, adj_x=adj_x, adj_y=adj_y)),
                            ref(lambda x, y: torch.matmul(x.mT if adj_x else x,
                                                          y.mT if adj_y else y), x, y))


# ---------------------------------------------------------------------------
# Softmax, losses, normalization
# ---------------------------------------------------------------------------

def check_softmax(r, rng):
    """Softmax, LogSoftmax, both cross-entropy losses (loss and backprop) and
    BiasAdd."""
    for dtype in FLOATS:
        name = dtype.__name__
        logits = (rng.standard_normal((4, 7)) * 3).astype(dtype)
        r.check("Softmax/" + name, lambda: r.run("Softmax", [logits], attrs(T=dtype)),
                ref(lambda t: torch.softmax(t, -1), logits))
        r.check("LogSoftmax/" + name, lambda: r.run("LogSoftmax", [logits], attrs(T=dtype)),
                ref(lambda t: torch.log_softmax(t, -1), logits))

        # Dense labels: a distribution per row (one of them one-hot).
        labels = rng.dirichlet(np.ones(7), 4).astype(dtype)
        labels[1] = np.eye(7)[2]
        r.check("SoftmaxCrossEntropyWithLogits/" + name,
                lambda: r.run("SoftmaxCrossEntropyWithLogits", [logits, labels],
                              attrs(T=dtype), fetch=outputs(2)),
                {"loss": ref(lambda f, l: -(l * torch.log_softmax(f, -1)).sum(-1),
                             logits, labels),
                 "backprop": ref(lambda f, l: torch.softmax(f, -1) - l, logits, labels)})

        sparse = rng.integers(0, 7, (4,)).astype(np.int64)
        r.check("SparseSoftmaxCrossEntropyWithLogits/" + name,
                lambda: r.run("SparseSoftmaxCrossEntropyWithLogits", [logits, sparse],
                              attrs(T=dtype, Tlabels=np.int64), fetch=outputs(2)),
                {"loss": ref(lambda f: F.cross_entropy(f, T(sparse), reduction="none"),
                             logits),
                 "backprop": ref(lambda f: torch.softmax(f, -1) - F.one_hot(T(sparse), 7),
                                 logits)})

    v = rng.standard_normal((2, 3, 5)).astype(np.float32)
    bias = rng.standard_normal((5,)).astype(np.float32)
    r.check("BiasAdd", lambda: r.run("BiasAdd", [v, bias], attrs(T=np.float32)),
            (T(v) + T(bias)).numpy())


def check_batch_norm(r, rng):
    """FusedBatchNormV3 (float x and statistics).

    Training normalizes with the batch mean and biased variance and reports
    batch_mean/batch_variance as running statistics: (1 - factor) * input +
    factor * batch statistic, with the unbiased batch variance; that is
    F.batch_norm's update of running_mean/running_var with momentum = factor.
    reserve_space_1/2 are the batch mean and biased variance. Inference
    normalizes with the given mean and variance and passes them through."""
    # name: (is_training, exponential_avg_factor, epsilon, data_format); None
    # leaves the attr at its default (factor 1, epsilon 1e-4, NHWC).
    cases = {"train": (True, None, None, None),
             "train/factor=0.3": (True, 0.3, None, "NHWC"),
             "train/epsilon=0.01": (True, None, 0.01, "NHWC"),
             "train/NCHW": (True, None, 0.001, "NCHW"),
             "inference": (False, None, 0.001, "NHWC"),
             # Inference ignores exponential_avg_factor.
             "inference/NCHW": (False, 0.3, None, "NCHW")}
    for name, (training, factor, epsilon, data_format) in cases.items():
        channels_last = data_format in (None, "NHWC")
        x = (rng.standard_normal((2, 5, 4, 3) if channels_last else (2, 3, 5, 4)) * 2
             + 1).astype(np.float32)
        scale, offset, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
        variance = rng.uniform(0.5, 2, 3).astype(np.float32)

        def reference(x, scale, offset, mean, variance):
            x = nchw(x) if channels_last else x
            running_mean, running_var = mean.clone(), variance.clone()
            y = F.batch_norm(x, running_mean, running_var, scale, offset,
                             training=training, momentum=f32(factor or 1.0),
                             eps=f32(epsilon or 1e-4))
            return (nhwc(y) if channels_last else y, running_mean, running_var,
                    x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False))

        inputs = [x, scale, offset, mean, variance]
        want = [t.numpy().astype(np.float32) for t in reference(*map(wide, inputs))]
        labels = ["y", "batch_mean", "batch_variance", "reserve_space_1",
                  "reserve_space_2"][:5 if training else 3]
        r.check("FusedBatchNormV3/" + name,
                lambda: r.run("FusedBatchNormV3", inputs, attrs(
                    T=np.float32, U=np.float32, is_training=training,
                    exponential_avg_factor=factor, epsilon=epsilon,
                    data_format=data_format), fetch=outputs(len(labels))),
                dict(zip(labels, want)))


# ---------------------------------------------------------------------------
# Convolution and pooling, NHWC, forward and gradients
# ---------------------------------------------------------------------------

PADDINGS = ("SAME", "VALID")
STRIDES = ((1, 1), (2, 2), (2, 1))


def window_attrs(dtype, padding, s, ksize=None):
    return attrs(T=dtype, padding=padding, strides=(1,) + s + (1,),
                 ksize=None if ksize is None else (1,) + ksize + (1,))


def check_conv(r, rng):
    """Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter against conv2d
    and its autograd. The 9x7 image with a 3x4 filter pads SAME
    asymmetrically, and VALID with stride 2 leaves the last column unused."""
    for dtype in FLOATS:
        img = rng.standard_normal((2, 9, 7, 3)).astype(dtype)
        filt = rng.standard_normal((3, 4, 3, 5)).astype(dtype)
        for padding in PADDINGS:
            for s in STRIDES:
                name = "%s/%s/stride=%dx%d" % (dtype.__name__, padding, *s)
                conv = lambda x, w: conv2d_nhwc(x, w, s, padding)
                out = ref(conv, img, filt)
                dy = rng.standard_normal(out.shape).astype(dtype)
                dx, dw = vjp(conv, [img, filt], dy)
                conv_attrs = window_attrs(dtype, padding, s)
                r.check("Conv2D/" + name, lambda: r.run("Conv2D", [img, filt], conv_attrs),
                        out)
                r.check("Conv2DBackpropInput/" + name,
                        lambda: r.run("Conv2DBackpropInput",
                                      [Const(img.shape), filt, dy], conv_attrs), dx)
                r.check("Conv2DBackpropFilter/" + name,
                        lambda: r.run("Conv2DBackpropFilter",
                                      [img, Const(filt.shape), dy], conv_attrs), dw)


def check_pool(r, rng):
    """MaxPool, AvgPool and their gradients with a 3x2 window (SAME pads the
    9x7 image asymmetrically). The image is a permutation of distinct values,
    so each window's maximum, where MaxPoolGrad sends the gradient, is
    unique."""
    ksize = (3, 2)
    for dtype in FLOATS:
        shape = (2, 9, 7, 3)
        img = (rng.permutation(np.prod(shape)).reshape(shape) / np.prod(shape)
               - 0.5).astype(dtype)
        for padding in PADDINGS:
            for s in STRIDES:
                name = "%s/%s/stride=%dx%d" % (dtype.__name__, padding, *s)
                pool_attrs = window_attrs(dtype, padding, s, ksize)
                max_pool = lambda x: max_pool_nhwc(x, ksize, s, padding)
                avg_pool = lambda x: avg_pool_nhwc(x, ksize, s, padding)
                pooled = ref(max_pool, img)
                dy = rng.standard_normal(pooled.shape).astype(dtype)
                r.check("MaxPool/" + name, lambda: r.run("MaxPool", [img], pool_attrs),
                        pooled)
                r.check("AvgPool/" + name, lambda: r.run("AvgPool", [img], pool_attrs),
                        ref(avg_pool, img))
                r.check("MaxPoolGrad/" + name,
                        lambda: r.run("MaxPoolGrad", [img, pooled, dy], pool_attrs),
                        vjp(max_pool, [img], dy)[0])
                r.check("AvgPoolGrad/" + name,
                        lambda: r.run("AvgPoolGrad", [Const(img.shape), dy], pool_attrs),
                        vjp(avg_pool, [img], dy)[0])


# ---------------------------------------------------------------------------
# Layout, indexing and splitting
# ---------------------------------------------------------------------------

def check_nchw_explicit(r, rng):
    """Conv2D and its backprops, MaxPool and AvgPool in NCHW (PyTorch's own
    layout) and with EXPLICIT padding (F.pad before a VALID conv2d; -inf
    for max pooling)."""
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)  # HWIO
    w_oihw = T(w).permute(3, 2, 0, 1)
    cases = [("SAME", None, (1, 1, 2, 1)), ("EXPLICIT", (1, 2, 0, 3), (1, 1, 1, 2))]
    for padding, pads, strides in cases:
        if padding == "SAME":
            xt = F.pad(T(x), (0, 1, 1, 1))  # SAME with a 3x2 window, stride (2,1)
        else:
            xt = F.pad(T(x), (pads[2], pads[3], pads[0], pads[1]))
        explicit = [0, 0, 0, 0] + list(pads) if pads else None
        a = attrs(T=np.float32, strides=list(strides), padding=padding,
                  data_format="NCHW", explicit_paddings=explicit)
        leaf = T(x).clone().requires_grad_()
        padded = (F.pad(leaf, (0, 1, 1, 1)) if padding == "SAME" else
                  F.pad(leaf, (pads[2], pads[3], pads[0], pads[1])))
        wleaf = w_oihw.clone().requires_grad_()
        y = F.conv2d(padded, wleaf, stride=strides[2:])
        dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
        dx, dw = torch.autograd.grad(y, (leaf, wleaf), T(dy))
        r.check("Conv2D/NCHW/%s" % padding, lambda: r.run("Conv2D", [x, w], a),
                y.detach().numpy(), rtol=1e-4, atol=1e-5)
        r.check("Conv2DBackpropInput/NCHW/%s" % padding,
                lambda: r.run("Conv2DBackpropInput", [Const(x.shape), w, dy], a),
                dx.numpy(), rtol=1e-4, atol=1e-5)
        r.check("Conv2DBackpropFilter/NCHW/%s" % padding,
                lambda: r.run("Conv2DBackpropFilter", [x, Const(w.shape), dy], a),
                dw.permute(2, 3, 1, 0).numpy(), rtol=1e-4, atol=1e-4)
    # Pooling: a 3x2 window, stride 2, VALID in NCHW; EXPLICIT max pooling.
    pa = attrs(T=np.float32, ksize=[1, 1, 3, 2], strides=[1, 1, 2, 2],
               padding="VALID", data_format="NCHW")
    r.check("MaxPool/NCHW", lambda: r.run("MaxPool", [x], pa),
            F.max_pool2d(T(x), (3, 2), stride=2).numpy())
    r.check("AvgPool/NCHW", lambda: r.run("AvgPool", [x], pa),
            F.avg_pool2d(T(x), (3, 2), stride=2).numpy())
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    ea = attrs(T=np.float32, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
               padding="EXPLICIT", explicit_paddings=[0, 0, 1, 0, 1, 1, 0, 0])
    want = F.max_pool2d(F.pad(T(x), (1, 1, 1, 0), value=-np.inf), 2, stride=2)
    r.check("MaxPool/EXPLICIT", lambda: r.run("MaxPool", [nhwc], ea),
            want.permute(0, 2, 3, 1).numpy())


def check_volumes(r, rng):
    """Conv3D (and its backprops against autograd), MaxPool3D and AvgPool3D
    (padding not counted) in NDHWC and NCDHW against PyTorch's 3-D ops."""
    x = rng.standard_normal((2, 3, 5, 4, 6)).astype(np.float32)  # NCDHW
    w = rng.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)  # DHWIO
    leaf = T(x).clone().requires_grad_()
    wleaf = T(w).permute(4, 3, 0, 1, 2).clone().requires_grad_()
    y = F.conv3d(leaf, wleaf, stride=(1, 2, 1))
    dy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    dx, dw = torch.autograd.grad(y, (leaf, wleaf), T(dy))
    ndhwc = lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1))
    a = attrs(T=np.float32, strides=[1, 1, 2, 1, 1], padding="VALID")
    r.check("Conv3D/NDHWC", lambda: r.run("Conv3D", [ndhwc(x), w], a),
            ndhwc(y.detach().numpy()), rtol=1e-4, atol=1e-5)
    r.check("Conv3D/NCDHW",
            lambda: r.run("Conv3D", [x, w],
                          attrs(T=np.float32, strides=[1, 1, 1, 2, 1],
                                padding="VALID", data_format="NCDHW")),
            y.detach().numpy(), rtol=1e-4, atol=1e-5)
    r.check("Conv3DBackpropInputV2",
            lambda: r.run("Conv3DBackpropInputV2",
                          [Const(ndhwc(x).shape), w, ndhwc(dy)], a),
            ndhwc(dx.numpy()), rtol=1e-4, atol=1e-5)
    r.check("Conv3DBackpropFilterV2",
            lambda: r.run("Conv3DBackpropFilterV2",
                          [ndhwc(x), Const(w.shape), ndhwc(dy)], a),
            dw.permute(2, 3, 4, 1, 0).numpy(), rtol=1e-4, atol=1e-4)
    p = attrs(T=np.float32, ksize=[1, 2, 2, 3, 1], strides=[1, 2, 2, 2, 1],
              padding="VALID")
    r.check("MaxPool3D", lambda: r.run("MaxPool3D", [ndhwc(x)], p),
            ndhwc(F.max_pool3d(T(x), (2, 2, 3), stride=2).numpy()))
    r.check("AvgPool3D", lambda: r.run("AvgPool3D", [ndhwc(x)], p),
            ndhwc(F.avg_pool3d(T(x), (2, 2, 3), stride=2).numpy()))


def check_layout(r, rng):
    """Transpose, ReverseV2, Tile, Reshape, BroadcastTo."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    r.check("Transpose", lambda: r.run("Transpose", [x, Const([2, 0, 1])],
                                       attrs(T=np.float32, Tperm=np.int32)),
            T(x).permute(2, 0, 1).numpy())
    r.check("ReverseV2", lambda: r.run("ReverseV2", [x, Const([0, -1])],
                                       attrs(T=np.float32, Tidx=np.int32)),
            torch.flip(T(x), [0, 2]).numpy())
    r.check("Tile", lambda: r.run("Tile", [x, Const([2, 1, 3])],
                                  attrs(T=np.float32, Tmultiples=np.int32)),
            T(x).repeat(2, 1, 3).numpy())
    r.check("Reshape", lambda: r.run("Reshape", [x, Const([4, -1])],
                                     attrs(T=np.float32, Tshape=np.int32)),
            T(x).reshape(4, -1).numpy())

    # (input, target shape, Tidx)
    broadcasts = [(rng.standard_normal((3, 1)).astype(np.float32), (2, 3, 4), np.int32),
                  (rng.integers(-5, 5, (4,)).astype(np.int32), (3, 4), np.int64),
                  (np.array(1.5), (2, 2), np.int32),
                  (rng.standard_normal((2, 1, 3)), (2, 5, 3), np.int32),
                  (rng.standard_normal((1, 3)) > 0, (2, 1, 3), np.int32)]
    for x, shape, tidx in broadcasts:
        r.check("BroadcastTo/%s/%s->%s" % (x.dtype, x.shape, shape),
                lambda: r.run("BroadcastTo", [x, Const(shape, tidx)],
                              attrs(T=x.dtype, Tidx=tidx)),
                torch.broadcast_to(T(x), shape).numpy())


def check_gather_select(r, rng):
    """GatherV2, Select(V2), Range, Slice, Pad."""
    params = rng.standard_normal((4, 3, 2)).astype(np.float32)
    idx = np.array([[2, 0], [1, 1]], dtype=np.int32)
    for axis in (0, 1):
        r.check("GatherV2/axis=%d" % axis,
                lambda: r.run("GatherV2", [params, idx, Const(axis)], attrs(
                    Tparams=np.float32, Tindices=np.int32, Taxis=np.int32)),
                np.take(params, idx, axis=axis))
    cond = rng.standard_normal((3, 1)) > 0
    t = rng.standard_normal((3, 4)).astype(np.float32)
    e = rng.standard_normal((4,)).astype(np.float32)
    r.check("SelectV2", lambda: r.run("SelectV2", [cond, t, e], attrs(T=np.float32)),
            torch.where(T(cond), T(t), T(e)).numpy())
    rows = rng.standard_normal((3,)) > 0
    e2 = rng.standard_normal((3, 4)).astype(np.float32)
    r.check("Select/rows", lambda: r.run("Select", [rows, t, e2], attrs(T=np.float32)),
            torch.where(T(rows)[:, None], T(t), T(e2)).numpy())
    start, limit, delta = (np.array(v, dtype=np.int32) for v in (3, 17, 4))
    r.check("Range/int32", lambda: r.run("Range", [start, limit, delta], attrs(Tidx=np.int32)),
            torch.arange(3, 17, 4, dtype=torch.int32).numpy())
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    r.check("Slice", lambda: r.run("Slice", [x, Const([1, 0, 2]), Const([2, -1, 3])],
                                   attrs(T=np.float32, Index=np.int32)),
            x[1:3, :, 2:5])
    r.check("Pad", lambda: r.run("Pad", [x, Const([[1, 0], [0, 2], [3, 1]])],
                                 attrs(T=np.float32, Tpaddings=np.int32)),
            F.pad(T(x), (3, 1, 0, 2, 1, 0)).numpy())


def check_strided_slice(r, rng):
    """StridedSlice against the equivalent NumPy basic index, written by
    hand for each spec."""
    x3 = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x4 = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    i4 = rng.integers(-100, 100, (3, 4, 5, 6)).astype(np.int32)
    # (input, begin, end, strides, masks, NumPy index, Index type)
    specs = [
        (x3, [1, 0, 2], [3, 5, 6], [1, 2, 1], {}, np.s_[1:3, 0:5:2, 2:6], np.int32),
        (x3, [2, 1, 0], [4, 4, 5], [1, 1, 1], dict(begin_mask=0b101),
         np.s_[:4, 1:4, :5], np.int32),
        (x3, [1, 0, 3], [0, 3, 0], [1, 1, 1], dict(end_mask=0b101),
         np.s_[1:, 0:3, 3:], np.int32),
        (x3, [-1, 4, 5], [0, 0, 0], [-1, -2, -3], dict(end_mask=0b100),
         np.s_[-1:0:-1, 4:0:-2, 5::-3], np.int32),
        (x3, [0, 0, 0], [0, 0, 0], [-1, 1, -2], dict(begin_mask=0b101, end_mask=0b111),
         np.s_[::-1, :, ::-2], np.int64),
        # Out-of-range bounds are clamped, for either stride sign.
        (x3, [-10, 2, 10], [10, 100, -10], [1, 1, -1], {},
         np.s_[-10:10, 2:100, 10:-10:-1], np.int32),
        # An empty range.
        (x3, [3], [1], [1], {}, np.s_[3:1], np.int32),
        (x3, [1, 0, -1], [2, 5, 0], [1, 1, 1], dict(shrink_axis_mask=0b101),
         np.s_[1, 0:5, -1], np.int32),
        (x3, [0, 0, 1, 0], [0, 2, 4, 0], [1, 1, 1, 1], dict(new_axis_mask=0b1001),
         np.s_[None, 0:2, 1:4, None], np.int32),
        (x4, [0, 1], [0, 3], [1, 1], dict(ellipsis_mask=0b01), np.s_[..., 1:3], np.int32),
        (x4, [0, 0], [0, 0], [1, -2], dict(ellipsis_mask=0b01, begin_mask=0b10, end_mask=0b10),
         np.s_[..., ::-2], np.int64),
        (x4, [1, 0, 0, 2], [2, 0, 0, 3], [1, 1, 1, 1],
         dict(shrink_axis_mask=0b1001, ellipsis_mask=0b0010, new_axis_mask=0b0100),
         np.s_[1, ..., None, 2], np.int32),
        (x4, [0, 2, 0], [0, 3, 0], [1, 1, 1], dict(ellipsis_mask=0b100, shrink_axis_mask=0b10,
                                                  new_axis_mask=0b1),
         np.s_[None, 2, ...], np.int32),
        (i4, [2, 1, 0, 1], [0, 4, 5, 6], [-2, 2, 1, 3], dict(end_mask=0b1),
         np.s_[2::-2, 1:4:2, 0:5, 1:6:3], np.int32),
    ]
    for x, begin, end, strides, masks, index, index_type in specs:
        want = x[index]
        r.check("StridedSlice/%s/%s:%s:%s/%s" % (
                    x.shape, begin, end, strides,
                    ",".join("%s=%s" % (k, bin(v)) for k, v in masks.items())),
                lambda: r.run("StridedSlice",
                              [x] + [Const(v, index_type) for v in (begin, end, strides)],
                              attrs(T=x.dtype, Index=index_type, **masks)),
                want)


def check_split(r, rng):
    """Split, SplitV and Unpack, every output fetched from one run."""
    x = rng.standard_normal((4, 6, 3)).astype(np.float32)

    def pieces(tensors):
        return {"out:%d" % i: t.numpy() for i, t in enumerate(tensors)}

    for num, axis in ((3, 1), (2, 0), (3, -1)):
        r.check("Split/num=%d/axis=%d" % (num, axis),
                lambda: r.run("Split", [Const(axis), x], attrs(num_split=num, T=np.float32),
                              fetch=outputs(num)),
                pieces(torch.chunk(T(x), num, axis)))
    # (size_splits, the same with -1 resolved by hand, axis, Tlen)
    for sizes, resolved, axis, tlen in (([2, -1, 1], [2, 3, 1], 1, np.int32),
                                        ([3, 0, -1], [3, 0, 1], 0, np.int64),
                                        ([1, 2], [1, 2], -1, np.int64)):
        r.check("SplitV/sizes=%s/axis=%d" % (sizes, axis),
                lambda: r.run("SplitV", [x, Const(sizes, tlen), Const(axis)],
                              attrs(num_split=len(sizes), T=np.float32, Tlen=tlen),
                              fetch=outputs(len(sizes))),
                pieces(torch.split(T(x), resolved, axis)))
    for axis in (1, 0, -1):
        num = x.shape[axis]
        r.check("Unpack/axis=%d" % axis,
                lambda: r.run("Unpack", [x], attrs(num=num, T=np.float32, axis=axis),
                              fetch=outputs(num)),
                pieces(torch.unbind(T(x), axis)))


def check_one_hot_where(r, rng):
    """OneHot (indices outside [0, depth) give all off_value) and Where."""
    def one_hot(indices, depth, on, off, axis):
        idx = T(indices).long()
        valid = (idx >= 0) & (idx < depth)
        hot = F.one_hot(torch.where(valid, idx, 0), depth).bool() & valid[..., None]
        return torch.where(hot, T(on), T(off)).movedim(-1, axis).numpy()

    # (indices type, value type, on, off, axis)
    for ti, dtype, on, off, axis in ((np.int64, np.float32, 2.5, -0.5, -1),
                                     (np.int64, np.float32, 1.0, 0.0, 0),
                                     (np.int32, np.float64, 3.0, 1.0, 1),
                                     (np.int32, np.int32, 7, -1, 2)):
        indices = rng.integers(-1, 6, (3, 4)).astype(ti)
        on, off = np.array(on, dtype), np.array(off, dtype)
        r.check("OneHot/%s/%s/axis=%d" % (ti.__name__, dtype.__name__, axis),
                lambda: r.run("OneHot", [indices, Const(5), on, off],
                              attrs(axis=axis, T=dtype, TI=ti)),
                one_hot(indices, 5, on, off, axis))

    for x in (rng.standard_normal((4, 5)) > 0,
              rng.integers(-1, 2, (3, 4, 2)).astype(np.float32),
              rng.integers(0, 2, (7,)).astype(np.int32),
              np.zeros((3, 2), dtype=np.bool_)):
        r.check("Where/%s/%s" % (x.dtype, x.shape),
                lambda: r.run("Where", [x], attrs(T=x.dtype)),
                torch.nonzero(T(x)).numpy())


def check_band_linspace(r, rng):
    """MatrixBandPart (torch.tril/triu) and LinSpace (torch.linspace)."""
    for shape, lower, upper in (((4, 5), 1, 2), ((2, 3, 3), -1, 0),
                                ((3, 4), 0, -1)):
        x = rng.standard_normal(shape).astype(np.float32)
        band = T(x)
        if upper >= 0:
            band = torch.tril(band, diagonal=upper)
        if lower >= 0:
            band = torch.triu(band, diagonal=-lower)
        r.check("MatrixBandPart/%s/%d/%d" % (shape, lower, upper),
                lambda: r.run("MatrixBandPart",
                              [x, Const(lower, np.int64), Const(upper, np.int64)],
                              attrs(T=np.float32)),
                band.numpy())
    for start, stop, num in ((-1.5, 2.5, 9), (3.0, -1.0, 4), (0.25, 7.0, 1)):
        a, b = np.array(start, np.float32), np.array(stop, np.float32)
        r.check("LinSpace/%g/%g/%d" % (start, stop, num),
                lambda: r.run("LinSpace", [a, b, Const(num)],
                              attrs(T=np.float32)),
                torch.linspace(start, stop, num, dtype=torch.float32).numpy())


def check_clip(r, rng):
    """ClipByValue (torch.clamp) with scalar and tensor bounds; LeakyRelu;
    L2Loss."""
    x = (rng.standard_normal((3, 4)) * 3).astype(np.float32)
    lo = np.array(-1.0, np.float32)
    hi = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    r.check("ClipByValue/scalar-min/tensor-max",
            lambda: r.run("ClipByValue", [x, lo, hi], attrs(T=np.float32)),
            torch.clamp(T(x), min=T(lo), max=T(hi)).numpy())
    r.check("LeakyRelu/float32",
            lambda: r.run("LeakyRelu", [x], attrs(T=np.float32)),
            F.leaky_relu(T(x), 0.2).numpy())
    r.check("L2Loss/float32",
            lambda: r.run("L2Loss", [x], attrs(T=np.float32)),
            ((T(x) ** 2).sum() / 2).numpy())
    xi = rng.integers(-20, 20, (5,)).astype(np.int32)
    lo_i, hi_i = np.array(-3, np.int32), np.array(7, np.int32)
    r.check("ClipByValue/int32",
            lambda: r.run("ClipByValue", [xi, lo_i, hi_i], attrs(T=np.int32)),
            torch.clamp(T(xi), -3, 7).numpy())


def check_gather_scatter_nd(r, rng):
    """GatherNd (advanced indexing), ScatterNd and TensorScatterAdd/Sub
    (index_put_, summing repeated index tuples), TensorScatterMax/Min
    (scatter_reduce_) and TensorScatterUpdate (index_put_)."""
    for pshape, ishape in (((4, 3, 2), (5, 2)), ((4, 3), (2, 2, 1)),
                           ((3, 2, 2), (4, 3))):
        params = rng.standard_normal(pshape).astype(np.float32)
        depth = ishape[-1]
        indices = np.stack([rng.integers(0, pshape[k], ishape[:-1])
                            for k in range(depth)], axis=-1).astype(np.int32)
        key = tuple(T(indices[..., k]).long() for k in range(depth))
        r.check("GatherNd/%s/%s" % (pshape, ishape),
                lambda: r.run("GatherNd", [params, Const(indices)],
                              attrs(Tparams=np.float32, Tindices=np.int32)),
                T(params)[key].numpy())
        updates = rng.standard_normal(ishape[:-1] + pshape[depth:]).astype(np.float32)
        want = torch.zeros(pshape).index_put_(key, T(updates), accumulate=True)
        r.check("ScatterNd/%s/%s" % (pshape, ishape),
                lambda: r.run("ScatterNd",
                              [Const(indices), updates, Const(pshape)],
                              attrs(T=np.float32, Tindices=np.int32)),
                want.numpy())
        # The TensorScatter ops start from params; Update's tuples are
        # distinct (PyTorch's order for repeated ones is undefined).
        linear = np.ravel_multi_index(tuple(indices[..., k] for k in range(depth)),
                                      pshape[:depth]).reshape(-1)
        inner = int(np.prod(pshape[depth:], dtype=np.int64))
        flat_params = T(params).reshape(-1, inner)
        flat_updates = T(updates).reshape(-1, inner)
        ids = T(linear).long()[:, None].expand(-1, inner)
        for op, reduce in (("TensorScatterMax", "amax"), ("TensorScatterMin", "amin")):
            want = flat_params.clone().scatter_reduce_(0, ids, flat_updates, reduce,
                                                       include_self=True)
            r.check("%s/%s/%s" % (op, pshape, ishape),
                    lambda: r.run(op, [params, Const(indices), updates],
                                  attrs(T=np.float32, Tindices=np.int32)),
                    want.reshape(pshape).numpy())
        for op, sign in (("TensorScatterAdd", 1), ("TensorScatterSub", -1)):
            want = T(params).clone().index_put_(key, sign * T(updates), accumulate=True)
            r.check("%s/%s/%s" % (op, pshape, ishape),
                    lambda: r.run(op, [params, Const(indices), updates],
                                  attrs(T=np.float32, Tindices=np.int32)),
                    want.numpy())
        _, first = np.unique(linear, return_index=True)
        distinct = indices.reshape(-1, depth)[np.sort(first)]
        rows = updates.reshape((-1,) + pshape[depth:])[np.sort(first)]
        key = tuple(T(distinct[:, k]).long() for k in range(depth))
        r.check("TensorScatterUpdate/%s/%s" % (pshape, ishape),
                lambda: r.run("TensorScatterUpdate", [params, Const(distinct), rows],
                              attrs(T=np.float32, Tindices=np.int32)),
                T(params).clone().index_put_(key, T(rows)).numpy())


def check_segments(r, rng):
    """SegmentSum/Mean/Prod/Max/Min against scatter_reduce_ over the rows,
    an empty segment getting TensorFlow's identity (0 for Mean, the lowest
    float for Max, the largest for Min)."""
    ids = np.array([0, 0, 1, 3, 3, 3, 5], np.int32)
    for dtype in FLOATS:
        data = rng.standard_normal((7, 3)).astype(dtype)
        info = np.finfo(dtype)
        for op, reduce, empty in (("SegmentSum", "sum", 0), ("SegmentMean", "mean", 0),
                                  ("SegmentProd", "prod", 1),
                                  ("SegmentMax", "amax", info.min),
                                  ("SegmentMin", "amin", info.max)):
            index = T(ids).long()[:, None].expand(-1, 3)
            want = torch.full((6, 3), float(empty), dtype=T(data).dtype)
            want.scatter_reduce_(0, index, T(data), reduce, include_self=False)
            r.check("%s/%s" % (op, dtype.__name__),
                    lambda: r.run(op, [data, Const(ids)],
                                  attrs(T=dtype, Tindices=np.int32)),
                    want.numpy())


def check_selection(r, rng):
    """TopKV2 (torch.topk, distinct values), InTopKV2 (counted in NumPy),
    Unique (first appearances, NumPy), Bincount (torch.bincount) and
    Bitcast (NumPy's view of the bytes)."""
    x = rng.permutation(60).reshape(3, 4, 5).astype(np.float32) / 7
    for k in (1, 3, 5):
        values, indices = torch.topk(T(x), k)
        r.check("TopKV2/k=%d" % k,
                lambda: r.run("TopKV2", [x, Const(k)], attrs(T=np.float32),
                              fetch=outputs(2)),
                {"values": values.numpy(), "indices": indices.int().numpy()})
    scores = rng.standard_normal((6, 5)).astype(np.float32)
    scores[1, 2] = scores[1, 4]  # a tie
    targets = np.array([0, 2, 4, 1, 3, 4], np.int32)
    for k in (1, 2, 4):
        higher = (scores > scores[np.arange(6), targets][:, None]).sum(1)
        r.check("InTopKV2/k=%d" % k,
                lambda: r.run("InTopKV2", [scores, targets, np.array(k, np.int32)],
                              attrs(T=np.int32)),
                higher < k)
    values = rng.integers(0, 6, 20).astype(np.int64)
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    r.check("Unique/int64",
            lambda: r.run("Unique", [values], attrs(T=np.int64), fetch=outputs(2)),
            {"y": values[np.sort(first)], "idx": rank[inverse].astype(np.int32)})
    arr = rng.integers(0, 9, (4, 5)).astype(np.int32)
    weights = rng.standard_normal((4, 5)).astype(np.float32)
    want = torch.bincount(T(arr).reshape(-1).long(), T(weights).reshape(-1), minlength=9)
    r.check("Bincount/float32",
            lambda: r.run("Bincount", [arr, np.array(6, np.int32), weights],
                          attrs(T=np.float32)),
            want[:6].numpy())
    bits = rng.standard_normal((3, 2)).astype(np.float64)
    r.check("Bitcast/float64-uint16",
            lambda: r.run("Bitcast", [bits], attrs(T=np.float64, type=np.uint16)),
            bits.view(np.uint16).reshape(3, 2, 4))
    r.check("Bitcast/uint16-float64",
            lambda: r.run("Bitcast", [bits.view(np.uint16).reshape(3, 2, 4)],
                          attrs(T=np.uint16, type=np.float64)),
            bits)


def check_image(r, rng):
    """LRN (local_response_norm: PyTorch averages the window, so its alpha
    is TensorFlow's times the window), ResizeBilinear (interpolate:
    align_corners, and half-pixel centers as PyTorch's default) and
    ResizeNearestNeighbor ('nearest' is TensorFlow's legacy map,
    'nearest-exact' its half-pixel one), NHWC against NCHW."""
    x = rng.standard_normal((2, 4, 5, 7)).astype(np.float32)
    nchw = T(x).permute(0, 3, 1, 2)
    for radius, bias, alpha, beta in ((2, 1.0, 0.5, 0.75), (1, 2.0, 1e-3, 0.5)):
        size = 2 * radius + 1
        want = F.local_response_norm(nchw, size, alpha=alpha * size, beta=beta, k=bias)
        r.check("LRN/radius=%d" % radius,
                lambda: r.run("LRN", [x], attrs(T=np.float32, depth_radius=radius,
                                                bias=bias, alpha=alpha, beta=beta)),
                want.permute(0, 2, 3, 1).numpy())
    for out in ((7, 3), (2, 9)):
        for align, half in ((True, False), (False, True)):
            want = F.interpolate(nchw, size=out, mode="bilinear", align_corners=align)
            r.check("ResizeBilinear/%s/align=%s" % (out, align),
                    lambda: r.run("ResizeBilinear", [x, Const(out)],
                                  attrs(T=np.float32, align_corners=align,
                                        half_pixel_centers=half)),
                    want.permute(0, 2, 3, 1).numpy())
        for mode, half in (("nearest", False), ("nearest-exact", True)):
            want = F.interpolate(nchw, size=out, mode=mode)
            r.check("ResizeNearestNeighbor/%s/%s" % (out, mode),
                    lambda: r.run("ResizeNearestNeighbor", [x, Const(out)],
                                  attrs(T=np.float32, half_pixel_centers=half)),
                    want.permute(0, 2, 3, 1).numpy())
    # The gradient ops against autograd of the forward functions.
    def vjp(fn, g):
        leaf = nchw.clone().requires_grad_()
        (grad,) = torch.autograd.grad(fn(leaf), leaf, T(g).permute(0, 3, 1, 2))
        return grad.permute(0, 2, 3, 1).numpy()
    g = rng.standard_normal((2, 6, 3, 7)).astype(np.float32)
    for align, half in ((True, False), (False, True)):
        r.check("ResizeBilinearGrad/align=%s" % align,
                lambda: r.run("ResizeBilinearGrad", [g, x],
                              attrs(T=np.float32, align_corners=align,
                                    half_pixel_centers=half)),
                vjp(lambda t: F.interpolate(t, size=(6, 3), mode="bilinear",
                                            align_corners=align), g))
    for mode, half in (("nearest", False), ("nearest-exact", True)):
        r.check("ResizeNearestNeighborGrad/%s" % mode,
                lambda: r.run("ResizeNearestNeighborGrad", [g, Const((4, 5))],
                              attrs(T=np.float32, half_pixel_centers=half)),
                vjp(lambda t: F.interpolate(t, size=(6, 3), mode=mode), g))
    dy = rng.standard_normal(x.shape).astype(np.float32)
    y = r.run("LRN", [x], attrs(T=np.float32, depth_radius=2, alpha=0.5, beta=0.75))
    r.check("LRNGrad",
            lambda: r.run("LRNGrad", [dy, x, y],
                          attrs(T=np.float32, depth_radius=2, alpha=0.5, beta=0.75)),
            vjp(lambda t: F.local_response_norm(t, 5, alpha=2.5, beta=0.75, k=1.0), dy),
            rtol=1e-4, atol=1e-5)


def check_einsum(r, rng):
    """Einsum against torch.einsum: products, batches broadcast by an
    ellipsis, a diagonal, reductions, implicit outputs."""
    cases = [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
             ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("ii->i", [(4, 4)]),
             ("ijk->ki", [(2, 3, 4)]), ("ij,ij->", [(3, 4), (3, 4)]), ("ab,bc", [(2, 3), (3, 4)]),
             ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)])]
    for equation, shapes in cases:
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        r.check("Einsum/%s" % equation,
                lambda: r.run("Einsum", xs, attrs(T=np.float32, N=len(xs),
                                                  equation=equation)),
                torch.einsum(equation, *[T(x) for x in xs]).numpy(),
                rtol=1e-4, atol=1e-5)


def check_broadcast_gradient_args(r, rng):
    """BroadcastGradientArgs(s0, s1) = (r0, r1): r_i is exactly the
    dimensions of the broadcast shape in which s_i, left-padded with 1s, is
    1 (both empty when s0 == s1). Summing the gradient of x0 + x1 over r_i
    (keeping dims) and reshaping to s_i must give autograd's gradient of
    x_i."""
    pairs = [((2, 3, 4), (3, 1)), ((1, 4), (3, 1, 1)), ((5,), (5,)),
             ((), (2, 3)), ((1, 1), (1,)), ((3, 1, 5), (3, 4, 5)),
             ((2, 1, 3), (2, 1, 3)), ((1, 2, 1), (1, 1, 4))]
    for i, shapes in enumerate(pairs):
        dtype = (np.int32, np.int64)[i % 2]
        out_shape = np.broadcast_shapes(*shapes)
        dy = rng.standard_normal(out_shape)
        xs = [np.zeros(s) for s in shapes]
        grads = vjp(torch.add, xs, dy)

        def indices(s):
            if shapes[0] == shapes[1]:
                return np.zeros(0, dtype)
            padded = (1,) * (len(out_shape) - len(s)) + s
            return np.array([d for d, n in enumerate(padded) if n == 1], dtype)

        def reduce(r_i, s):
            return np.sum(dy, axis=tuple(r_i), keepdims=True).reshape(s)

        def run():
            got = r.run("BroadcastGradientArgs",
                        [np.array(s, dtype) for s in shapes], attrs(T=dtype),
                        fetch=outputs(2))
            return got + [reduce(r_i, s) for r_i, s in zip(got, shapes)]

        r.check("BroadcastGradientArgs/%s/%s-%s" % (dtype.__name__, *shapes), run,
                {"r0": indices(shapes[0]), "r1": indices(shapes[1]),
                 "grad0": grads[0], "grad1": grads[1]})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph-run", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(1234)
    with tempfile.TemporaryDirectory() as work:
        r = Runner(args.graph_run, work)
        for family in (check_binary, check_unary, check_special,
                       check_activation_grads,
                       check_reductions, check_matmul, check_softmax,
                       check_batch_norm, check_conv, check_pool,
                       check_nchw_explicit, check_volumes, check_layout,
                       check_gather_select, check_strided_slice, check_split,
                       check_one_hot_where, check_band_linspace,
                       check_gather_scatter_nd, check_segments,
                       check_selection, check_image, check_einsum, check_clip,
                       check_broadcast_gradient_args):
            family(r, rng)
    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
