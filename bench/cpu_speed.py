#!/usr/bin/python3
"""CPU speed of compiled code (issue 13): graph-run --backend=cpu against
OpenBLAS, memcpy, PyTorch and the interpreter, all in this run, on the same
machine and cores, at each thread count.

- matmul: one-node MatMul graphs (1024^3 and the shapes of the MLP below,
  forward and gradient products, transpose_a/transpose_b as TF's gradients
  emit them) against numpy's matmul of the same transposed views (OpenBLAS
  sgemm). Target: at least 95 % of OpenBLAS on every shape.
- chain: 6 elementwise ops (Mul, Add, Mul, Sub, Relu, Minimum) over a
  4096x4096 float32 input (64 MiB in, 64 MiB out) against a copy of the same
  bytes (numpy.copyto, one thread, and torch's copy_ at T threads; the faster
  one). graph-run's step time includes taking the feed and handing the fetch
  back. Target: at least 80 % of memcpy bandwidth.
- mlp: the SGD step (lr 0.01) of a 784-1024-1024-10 ReLU MLP with mean sparse
  softmax cross-entropy at batch 256, built as a tf.compat.v1 forward graph
  plus graph-opt --graph-minimize, against PyTorch doing the same step (at 1
  thread and at all cores; the faster one is the peer) and the interpreter.
  Targets: at least 1.3x PyTorch, and at least 90 % of the GEMM limit (the
  step's 2.45 GFLOP of useful matrix products at numpy's 1024^3 sgemm speed
  at the same thread count).
- cnn: the layers-tutorial CNN's SGD step (examples/make-cnn-forward.py plus
  --graph-minimize) at batch 64 against PyTorch (NCHW) and the interpreter.
  Target: at least 1.5x PyTorch at its faster setting.

ratio = peer time / Cleave time (above 1: Cleave is faster). Medians with
min..max over the measured steps; the first, compiling step is not counted.
Cleave and its peer are measured in turn over --rounds rounds (default 3),
each a share of the measuring time, and each figure is the median of the
rounds' medians: the machine is shared, and a change in its load then
reaches both sides alike.
Refuses to report when numpy's 1024^3 sgemm is below 50 GFLOP/s (reference
BLAS in use).

Peers at their best: every measured command, Cleave's and the peers', runs
without this machine's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (which pin
OpenBLAS to its Haswell kernels; --machine-openblas keeps them), and the
report names the kernel each side loads. PyTorch runs with the fastest of
the allocators installed (glibc, tcmalloc, jemalloc: its CPU users preload
one), and a self-check compares its in-bench figure with a standalone run
of the same code (a PROBLEM beyond 10 %).

Usage: /usr/bin/python3 bench/cpu_speed.py --build BUILD_DIR [--runs N]
           [--threads 1,2] [--only matmul,chain,mlp,cnn] [--rounds R]
           [--quick] [--json FILE]
Run it alone on the machine (e.g. under flock /tmp/cleave-bench.lock).
"""
import argparse
import contextlib
import inspect
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
GATE_GFLOPS = 50.0
MLP_SIZES = [784, 1024, 1024, 10]
MLP_BATCH, CNN_BATCH = 256, 64
MLP_LR, CNN_LR = 0.01, 0.001


class Config:
    """What the command line asked for, and what the run learned."""
    build = None
    runs = 10            # measured steps at least (fewer only past max_s)
    seconds = 1.0        # aim for about this long per measurement
    max_seconds = 15.0   # unless that needs more than this (>= 3 steps)
    rounds = 3           # Cleave and its peers measured in turn, rounds
    quick = False
    threads_flag = True  # graph-run takes --threads (else env variables)
    machine_openblas = False  # keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE
    problems = []


CFG = Config()

# This machine's environment sets these for the tests (older OpenBLAS builds
# misbehave on some processors); they hold OpenBLAS to its Haswell kernels.
# Every measured command, Cleave's and the peers' alike, runs without them
# (unless --machine-openblas), so both sides use the kernels OpenBLAS picks
# for this processor; the report says which.
OPENBLAS_PINS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

# Allocators PyTorch's CPU users preload (Debian: libtcmalloc-minimal4,
# libjemalloc2); the fastest one is the PyTorch peer's.
ALLOCATORS = [("glibc", None),
              ("tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"),
              ("jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")]


def bench_env(**extra):
    """The environment of a measured command (see OPENBLAS_PINS)."""
    env = dict(os.environ)
    if not CFG.machine_openblas:
        for name in OPENBLAS_PINS:
            env.pop(name, None)
    env.update(extra)
    return env


def openblas_core(cmd):
    """The kernel OpenBLAS picks in `cmd` (run with OPENBLAS_VERBOSE=2)."""
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=bench_env(OPENBLAS_VERBOSE="2"))
    m = re.search(r"Core: (\S+)", p.stdout + p.stderr)
    return m.group(1) if m else "unknown"


def step_count(est_s, runs, seconds, max_seconds):
    """Measured repetitions for one measurement whose single run takes about
    est_s: at least `runs` and about `seconds` in all, but no more than
    `max_seconds` unless that leaves fewer than 3."""
    est_s = max(est_s, 1e-6)
    n = min(max(runs, math.ceil(seconds / est_s)), 5000)
    if n * est_s > max_seconds:
        n = max(3, int(max_seconds / est_s))
    return n


def summary(ms):
    ms = sorted(ms)
    return {"median_ms": ms[len(ms) // 2], "min_ms": ms[0], "max_ms": ms[-1],
            "n": len(ms)}


@contextlib.contextmanager
def round_share():
    """Each of CFG.rounds rounds measures for its share of the time."""
    saved = CFG.seconds, CFG.max_seconds
    CFG.seconds, CFG.max_seconds = (v / CFG.rounds for v in saved)
    try:
        yield
    finally:
        CFG.seconds, CFG.max_seconds = saved


def merge_rounds(figs):
    """One figure from the rounds' figures: the median of their medians,
    the extremes of their extremes; None if any round failed."""
    if not figs or any(f is None for f in figs):
        return None
    merged = dict(figs[0])
    merged.update(median_ms=sorted(f["median_ms"] for f in figs)[len(figs) // 2],
                  min_ms=min(f["min_ms"] for f in figs),
                  max_ms=max(f["max_ms"] for f in figs),
                  n=sum(f["n"] for f in figs))
    return merged


# --- graph-run ---------------------------------------------------------------

class GraphRunError(Exception):
    pass


def graph_run(args, threads, steps, backend="cpu"):
    """Runs graph-run with --timing; returns its timing line's figures and
    the per-step fetches printed on stdout ({name: [values...]})."""
    cmd = [os.path.join(CFG.build, "bin", "graph-run")] + args + [
        "--backend=" + backend, "--timing", "--steps=%d" % steps]
    env = bench_env()
    if CFG.threads_flag:
        cmd.append("--threads=%d" % threads)
    else:
        env.update(OPENBLAS_NUM_THREADS=str(threads),
                   OMP_NUM_THREADS=str(threads))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0 and CFG.threads_flag and re.search(
            r"[Uu]nknown command line argument '--threads", p.stderr):
        CFG.threads_flag = False
        return graph_run(args, threads, steps, backend)
    if p.returncode != 0:
        raise GraphRunError("%s (exit %d): %s" % (
            " ".join(os.path.basename(c) if i == 0 else c
                     for i, c in enumerate(cmd)),
            p.returncode, p.stderr.strip()[-1500:]))
    line = [l for l in p.stderr.splitlines() if "graph-run: timing:" in l][-1]
    num = r"([0-9.]+)"
    first = float(re.search(r"first step %s ms" % num, line).group(1))
    later = re.search(r"median %s ms, min %s ms, max %s ms \((\d+) steps\)"
                      % (num, num, num), line)
    compiled = re.search(r"compiled (\d+) clusters in %s s" % num, line)
    result = {"first_ms": first, "steps": steps,
              "clusters": int(compiled.group(1)) if compiled else None,
              "compile_s": float(compiled.group(2)) if compiled else None}
    if later:
        result.update(median_ms=float(later.group(1)),
                      min_ms=float(later.group(2)),
                      max_ms=float(later.group(3)), n=int(later.group(4)))
    else:
        result.update(median_ms=first, min_ms=first, max_ms=first, n=1)
    fetched = {}
    for m in re.finditer(r"^(?:step \d+: )?(\S+) = \w+ \[\] (\S+)$",
                         p.stdout, re.M):
        fetched.setdefault(m.group(1), []).append(float(m.group(2)))
    result["fetched"] = fetched
    return result


def measure_cleave(args, threads, estimate_ms=None, backend="cpu",
                   steps=None):
    """graph-run for about CFG.seconds of measured steps (after the first,
    compiling one). Without an estimate, a 2-step run finds the step time."""
    if steps is None:
        if estimate_ms is None:
            estimate_ms = graph_run(args, threads, 2, backend)["median_ms"]
        steps = 1 + step_count(estimate_ms / 1e3, CFG.runs, CFG.seconds,
                               CFG.max_seconds)
    return graph_run(args, threads, steps, backend)


# --- peers in subprocesses ----------------------------------------------------

PEER_PRELUDE = """
import json, math, os, sys, time
import numpy as np
T = int(os.environ["OMP_NUM_THREADS"])
RUNS, SECONDS, MAX_SECONDS = %(runs)d, %(seconds)r, %(max_seconds)r
if %(torch)r:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(T)
    torch.manual_seed(0)
%(step_count)s

def measure(fn):
    '''Milliseconds of each of step_count() calls after warming up (at
    least 3 calls and 0.2 s: allocator pools and thread pools settle).'''
    start = time.perf_counter()
    for i in range(1000):
        t = time.perf_counter(); fn(); est = time.perf_counter() - t
        if i >= 2 and time.perf_counter() - start > 0.2:
            break
    times = []
    for _ in range(step_count(est, RUNS, SECONDS, MAX_SECONDS)):
        t = time.perf_counter(); fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times

def blas_library():
    return sorted(set(l.split()[-1] for l in open("/proc/self/maps")
                      if "blas" in l.split()[-1]))

def report(**values):
    print("PEER-RESULT " + json.dumps(values))
"""


def peer(body, threads, torch=False, blas_threads=None, preload=None):
    """Runs `body` (Python using measure() and report()) in a fresh
    /usr/bin/python3 whose BLAS and OpenMP thread counts are set before
    numpy/torch load (`blas_threads` for OpenBLAS when it differs from
    torch's own), with `preload` (an allocator) in LD_PRELOAD; returns what
    it reported."""
    blas_threads = blas_threads or threads
    code = PEER_PRELUDE % {
        "runs": CFG.runs, "seconds": CFG.seconds,
        "max_seconds": CFG.max_seconds, "torch": torch,
        "step_count": inspect.getsource(step_count)} + body
    env = bench_env(OPENBLAS_NUM_THREADS=str(blas_threads),
                    OMP_NUM_THREADS=str(threads),
                    MKL_NUM_THREADS=str(blas_threads))
    if preload:
        env["LD_PRELOAD"] = preload
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        sys.exit("cpu_speed: peer failed:\n%s" % p.stderr[-3000:])
    line = [l for l in p.stdout.splitlines()
            if l.startswith("PEER-RESULT ")][-1]
    return json.loads(line[len("PEER-RESULT "):])


_sgemm = {}


def numpy_matmul(m, k, n, ta, tb, threads, round_index=0):
    """numpy matmul of (transposed views of) random float32 operands, as
    {median_ms, min_ms, max_ms, n}; memoized per round (1024^3 also feeds
    the gate and the MLP's GEMM limit)."""
    key = (m, k, n, ta, tb, threads, round_index)
    if key not in _sgemm:
        r = peer("""
M, K, N, TA, TB = %d, %d, %d, %r, %r
rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (K, M) if TA else (M, K)).astype(np.float32)
b = rng.uniform(-1, 1, (N, K) if TB else (K, N)).astype(np.float32)
A, B = (a.T if TA else a), (b.T if TB else b)
c = np.empty((M, N), np.float32)
report(times=measure(lambda: np.matmul(A, B, out=c)), blas=blas_library())
""" % key[:5], threads)
        _sgemm[key] = dict(summary(r["times"]), blas=r["blas"])
    return _sgemm[key]


def gflops(flop, ms):
    return flop / (ms * 1e-3) / 1e9


# --- graph writing ------------------------------------------------------------

FLOAT = 'attr { key: "T" value { type: DT_FLOAT } }'


def dims(shape):
    return " ".join("dim { size: %d }" % d for d in shape)


def placeholder(name, shape, dtype="DT_FLOAT"):
    return ('node { name: "%s" op: "Placeholder" attr { key: "dtype" value { '
            'type: %s } } attr { key: "shape" value { shape { %s } } } }'
            % (name, dtype, dims(shape)))


def scalar(name, value, dtype="DT_FLOAT", field="float_val"):
    return ('node { name: "%s" op: "Const" attr { key: "dtype" value { type: '
            '%s } } attr { key: "value" value { tensor { dtype: %s '
            'tensor_shape { } %s: %r } } } }' % (name, dtype, dtype, field,
                                                 value))


def op(name, kind, inputs, attrs=FLOAT):
    return 'node { name: "%s" op: "%s" %s %s }' % (
        name, kind, " ".join('input: "%s"' % i for i in inputs), attrs)


def write(path, nodes):
    with open(path, "w") as f:
        f.write("\n".join(nodes) + "\nversions { producer: 27 }\n")
    return path


def mlp_forward():
    """tf.compat.v1's dense-layer MLP: x [?, 784], int64 labels [?],
    VariableV2 kernels with Glorot-uniform RandomUniform initializers and zero
    biases, loss = Mean(SparseSoftmaxCrossEntropyWithLogits), init, and
    global_step."""
    nodes = [placeholder("x", [-1, MLP_SIZES[0]]),
             placeholder("labels", [-1], "DT_INT64")]
    assigns, h = [], "x"
    for i, (fan_in, fan_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
        layer = "dense" if i == 0 else "dense_%d" % i
        for var, shape in [("kernel", [fan_in, fan_out]), ("bias", [fan_out])]:
            v = "%s/%s" % (layer, var)
            nodes.append('node { name: "%s" op: "VariableV2" attr { key: '
                         '"dtype" value { type: DT_FLOAT } } attr { key: '
                         '"shape" value { shape { %s } } } }' % (v, dims(shape)))
            init = v + "/Initializer"
            if var == "kernel":
                limit = math.sqrt(6.0 / (fan_in + fan_out))
                nodes += [
                    'node { name: "%s/shape" op: "Const" attr { key: "dtype" '
                    'value { type: DT_INT32 } } attr { key: "value" value { '
                    'tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } '
                    'int_val: %d int_val: %d } } } }' % (init, fan_in, fan_out),
                    'node { name: "%s/uniform" op: "RandomUniform" input: '
                    '"%s/shape" attr { key: "T" value { type: DT_INT32 } } '
                    'attr { key: "dtype" value { type: DT_FLOAT } } attr { '
                    'key: "seed" value { i: 87654321 } } attr { key: "seed2" '
                    'value { i: %d } } }' % (init, init, i + 1),
                    scalar(init + "/scale", 2 * limit),
                    scalar(init + "/min", -limit),
                    op(init + "/mul", "Mul", [init + "/uniform",
                                              init + "/scale"]),
                    op(init + "/value", "Add", [init + "/mul", init + "/min"])]
            else:
                nodes.append(
                    'node { name: "%s/value" op: "Const" attr { key: "dtype" '
                    'value { type: DT_FLOAT } } attr { key: "value" value { '
                    'tensor { dtype: DT_FLOAT tensor_shape { %s } float_val: '
                    '0 } } } }' % (init, dims(shape)))
            nodes += [op(v + "/Assign", "Assign", [v, init + "/value"]),
                      op(v + "/read", "Identity", [v])]
            assigns.append(v + "/Assign")
        nodes += [op(layer + "/MatMul", "MatMul", [h, layer + "/kernel/read"]),
                  op(layer + "/BiasAdd", "BiasAdd",
                     [layer + "/MatMul", layer + "/bias/read"])]
        h = layer + "/BiasAdd"
        if i + 2 < len(MLP_SIZES):
            nodes.append(op(layer + "/Relu", "Relu", [h]))
            h = layer + "/Relu"
    nodes += [
        op("xent", "SparseSoftmaxCrossEntropyWithLogits", [h, "labels"],
           FLOAT + ' attr { key: "Tlabels" value { type: DT_INT64 } }'),
        'node { name: "axis" op: "Const" attr { key: "dtype" value { type: '
        'DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 '
        'tensor_shape { dim { size: 1 } } int_val: 0 } } } }',
        op("loss", "Mean", ["xent", "axis"], FLOAT +
           ' attr { key: "Tidx" value { type: DT_INT32 } }'),
        'node { name: "global_step" op: "VariableV2" attr { key: "dtype" '
        'value { type: DT_INT64 } } attr { key: "shape" value { shape { } } } '
        '}',
        scalar("global_step/zero", 0, "DT_INT64", "int64_val"),
        op("global_step/Assign", "Assign", ["global_step", "global_step/zero"],
           'attr { key: "T" value { type: DT_INT64 } }'),
        'node { name: "init" op: "NoOp" %s }' % " ".join(
            'input: "^%s"' % a for a in assigns + ["global_step/Assign"])]
    return nodes


def training_step(forward_path, out_path, learning_rate):
    """graph-opt --graph-minimize, as examples/make-cnn-forward.py says."""
    subprocess.run([os.path.join(CFG.build, "bin", "graph-opt"), forward_path,
                    "--graph-infer-shapes",
                    "--graph-minimize=loss=loss learning-rate=%r "
                    "global-step=global_step" % learning_rate,
                    "--emit=pbtxt", "-o", out_path], check=True)
    return out_path


# --- benchmarks ----------------------------------------------------------------

def row(bench, case, threads, cleave, peer_name, peer_fig, target=None,
        note=""):
    """One line of the table; ratio = peer median / Cleave median."""
    r = {"bench": bench, "case": case, "threads": threads, "cleave": cleave,
         "peer": peer_name, "peer_fig": peer_fig, "target": target,
         "note": note, "ratio": None, "result": "-"}
    if cleave is None:
        r["result"] = "FAIL"
    elif peer_fig is not None:
        r["ratio"] = peer_fig["median_ms"] / cleave["median_ms"]
        if target is not None:
            r["result"] = "PASS" if r["ratio"] >= target else "MISS"
    return r


def problem(bench, error):
    CFG.problems.append("%s: %s" % (bench, error))
    print("cpu_speed: %s: %s" % (bench, error), file=sys.stderr)


MATMUL_SHAPES = [  # (case, M, K, N, transpose_a, transpose_b)
    ("1024x1024x1024", 1024, 1024, 1024, False, False),
    ("x.W1 256x784x1024", 256, 784, 1024, False, False),
    ("h1.W2 256x1024x1024", 256, 1024, 1024, False, False),
    ("h2.W3 256x1024x10", 256, 1024, 10, False, False),
    ("dW1=x^T.dy 784x256x1024", 784, 256, 1024, True, False),
    ("dW2=h^T.dy 1024x256x1024", 1024, 256, 1024, True, False),
    ("dW3=h^T.dy 1024x256x10", 1024, 256, 10, True, False),
    ("dh2=dy.W3^T 256x10x1024", 256, 10, 1024, False, True),
    ("dh1=dy.W2^T 256x1024x1024", 256, 1024, 1024, False, True),
]
QUICK_MATMULS = ["x.W1 256x784x1024", "dW2=h^T.dy 1024x256x1024",
                 "dh2=dy.W3^T 256x10x1024"]


def bench_matmul(tmp, thread_counts):
    rows = []
    rng = np.random.default_rng(1)
    for case, m, k, n, ta, tb in MATMUL_SHAPES:
        if CFG.quick and case not in QUICK_MATMULS:
            continue
        a_shape = [k, m] if ta else [m, k]
        b_shape = [n, k] if tb else [k, n]
        a = rng.uniform(-1, 1, a_shape).astype(np.float32)
        b = rng.uniform(-1, 1, b_shape).astype(np.float32)
        np.save(os.path.join(tmp, "a.npy"), a)
        np.save(os.path.join(tmp, "b.npy"), b)
        graph = write(os.path.join(tmp, "matmul.pbtxt"), [
            placeholder("a", a_shape), placeholder("b", b_shape),
            op("mm", "MatMul", ["a", "b"], FLOAT +
               ' attr { key: "transpose_a" value { b: %s } } attr { key: '
               '"transpose_b" value { b: %s } }'
               % (str(ta).lower(), str(tb).lower()))])
        out = os.path.join(tmp, "out")
        os.makedirs(out, exist_ok=True)
        args = [graph, "--feed", "a=@" + os.path.join(tmp, "a.npy"), "--feed",
                "b=@" + os.path.join(tmp, "b.npy"), "--fetch", "mm",
                "--output-dir", out]
        expected = (a.T if ta else a).astype(np.float64) @ (
            b.T if tb else b).astype(np.float64)
        flop = 2.0 * m * k * n
        estimate = None
        for t in thread_counts:
            # OpenBLAS and Cleave in turn, CFG.rounds times.
            blas_rounds, cleave_rounds = [], []
            try:
                with round_share():
                    for r in range(CFG.rounds):
                        blas_rounds.append(
                            numpy_matmul(m, k, n, ta, tb, t, r))
                        c = measure_cleave(args, t, estimate)
                        estimate = c["median_ms"]
                        cleave_rounds.append(c)
                c = merge_rounds(cleave_rounds)
                got = np.load(os.path.join(out, "mm.npy"))
                err = np.abs(got - expected).max() / np.abs(expected).max()
                if got.shape != expected.shape or not err < 1e-4:
                    problem("matmul " + case, "wrong result at %d threads "
                            "(max error %.3g of max |value|)" % (t, err))
            except GraphRunError as e:
                problem("matmul " + case, e)
                c = None
            blas = merge_rounds(blas_rounds) or blas_rounds[-1]
            note = "GFLOP/s: openblas %.1f" % gflops(flop, blas["median_ms"])
            if c:
                note = "GFLOP/s: cleave %.1f, openblas %.1f" % (
                    gflops(flop, c["median_ms"]),
                    gflops(flop, blas["median_ms"]))
            rows.append(row("matmul", case, t, c, "openblas sgemm", blas,
                            0.95, note))
    return rows


CHAIN_C = (1.5, 0.25, 0.5, 2.0)


def bench_chain(tmp, thread_counts):
    """y = Minimum(Relu(Sub(Mul(Add(Mul(x, c1), c2), x), c3)), c4)."""
    shape = [4096, 4096]
    c1, c2, c3, c4 = CHAIN_C
    graph = write(os.path.join(tmp, "chain.pbtxt"), [
        placeholder("x", shape), scalar("c1", c1), scalar("c2", c2),
        scalar("c3", c3), scalar("c4", c4),
        op("scale", "Mul", ["x", "c1"]), op("shift", "Add", ["scale", "c2"]),
        op("square", "Mul", ["shift", "x"]), op("sub", "Sub", ["square", "c3"]),
        op("relu", "Relu", ["sub"]), op("y", "Minimum", ["relu", "c4"])])
    x = np.random.default_rng(2).uniform(-1, 1, shape).astype(np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)
    expected = np.minimum(np.maximum((x * np.float32(c1) + np.float32(c2)) * x
                                     - np.float32(c3), 0), np.float32(c4))
    out = os.path.join(tmp, "out")
    os.makedirs(out, exist_ok=True)
    args = [graph, "--feed", "x=@" + os.path.join(tmp, "x.npy"), "--fetch",
            "y", "--output-dir", out]
    mib = x.nbytes / 2**20
    rows, estimate = [], None
    for t in thread_counts:
        copy_rounds = {"numpy.copyto": [], "torch copy_": []}
        cleave_rounds = []
        try:
            with round_share():
                for _ in range(CFG.rounds):
                    r = peer("""
src = np.random.default_rng(0).random(%d, dtype=np.float32)
dst = np.empty_like(src)
np_times = measure(lambda: np.copyto(dst, src))
s, d = torch.from_numpy(src), torch.from_numpy(dst)
report(numpy=np_times, torch=measure(lambda: d.copy_(s)))
""" % x.size, t, torch=True)
                    copy_rounds["numpy.copyto"].append(summary(r["numpy"]))
                    copy_rounds["torch copy_"].append(summary(r["torch"]))
                    c = measure_cleave(args, t, estimate)
                    estimate = c["median_ms"]
                    cleave_rounds.append(c)
            c = merge_rounds(cleave_rounds)
            got = np.load(os.path.join(out, "y.npy"))
            if got.shape != expected.shape or not np.allclose(
                    got, expected, rtol=1e-5, atol=1e-6):
                problem("chain", "wrong result at %d threads (max error %.3g)"
                        % (t, np.abs(got - expected).max()))
        except GraphRunError as e:
            problem("chain", e)
            c = None
        copies = {name: merge_rounds(figs) or figs[-1]
                  for name, figs in copy_rounds.items()}
        name = min(copies, key=lambda k: copies[k]["median_ms"])
        memcpy = copies[name]
        gib_s = lambda ms: 2 * mib / 1024 / (ms * 1e-3)
        note = "GiB/s in+out: %smemcpy %.1f (numpy %.2f ms, torch %.2f ms)" % (
            "cleave %.1f, " % gib_s(c["median_ms"]) if c else "",
            gib_s(memcpy["median_ms"]), copies["numpy.copyto"]["median_ms"],
            copies["torch copy_"]["median_ms"])
        rows.append(row("chain", "6 ops over %d MiB" % mib, t, c,
                        "memcpy (%s)" % name, memcpy, 0.80, note))
    return rows


def train_runs(bench, args, thread_counts, torch_body, interp_steps, flop):
    """Shared by mlp and cnn: Cleave at each thread count, PyTorch at 1 and
    all cores, the interpreter once; loss of the first steps checked against
    the interpreter's. Cleave and PyTorch alternate over CFG.rounds rounds,
    each a share of the measuring time, so that a change in the machine's
    load (it is shared) reaches both sides alike."""
    all_cores = os.cpu_count()
    # PyTorch's settings: its threads and OpenBLAS's both at 1 or at all
    # cores, and its own ops on one thread with OpenBLAS on all cores (no
    # oversubscription, library GEMMs still parallel).
    settings = {"%dt" % t: (t, t) for t in sorted({1, all_cores})}
    if all_cores > 1:
        settings["1t+blas %dt" % all_cores] = (1, all_cores)
    allocator, preload = pick_allocator(bench, torch_body, all_cores)
    torch_rounds = {name: [] for name in settings}
    cleave_rounds = {t: [] for t in thread_counts}
    failed = {}
    estimate = {}
    with round_share():
        for _ in range(CFG.rounds):
            for name, (t, blas) in settings.items():
                torch_rounds[name].append(summary(peer(
                    torch_body, t, torch=True, blas_threads=blas,
                    preload=preload)["times"]))
            for t in thread_counts:
                if t in failed:
                    continue
                try:
                    c = measure_cleave(args, t, estimate.get(t))
                    estimate[t] = c["median_ms"]
                    cleave_rounds[t].append(c)
                except GraphRunError as e:
                    failed[t] = e
    torch_fig = {name: merge_rounds(figs)
                 for name, figs in torch_rounds.items()}

    def best_within(cores):
        """PyTorch's fastest setting that uses at most `cores` cores."""
        allowed = [n for n, tb in settings.items() if max(tb) <= cores]
        return min(allowed, key=lambda n: torch_fig[n]["median_ms"])
    self_check(bench, torch_body, settings, best_within(all_cores),
               torch_fig, preload)
    interp = None
    if interp_steps:
        try:
            interp = measure_cleave(args, max(thread_counts),
                                    backend="interpreter", steps=interp_steps)
        except GraphRunError as e:
            problem(bench + " (interpreter)", e)
    rows = []
    for t in thread_counts:
        try:
            if t in failed:
                raise failed[t]
            c = merge_rounds(cleave_rounds[t])
            if interp:
                mine = c["fetched"].get("loss", [])
                ref = interp["fetched"].get("loss", [])
                k = min(len(mine), len(ref))
                if k == 0 or not np.allclose(mine[:k], ref[:k], rtol=1e-3,
                                             atol=1e-4):
                    problem(bench, "loss of the first %d steps at %d threads "
                            "%s differs from the interpreter's %s"
                            % (k, t, mine[:k], ref[:k]))
        except GraphRunError as e:
            problem(bench, e)
            c = None
        compile_note = ("compile %.2f s (%d clusters), %.0f GFLOP/s"
                        % (c["compile_s"], c["clusters"],
                           gflops(flop, c["median_ms"])) if c else "")
        for pt in torch_fig:
            rows.append(row(bench, "vs pytorch %s" % pt, t, c,
                            "pytorch %s" % pt, torch_fig[pt], None,
                            "%.0f GFLOP/s" % gflops(flop,
                                                    torch_fig[pt]["median_ms"])))
        best_t = best_within(t)
        rows.append(row(bench, "vs pytorch best", t, c,
                        "pytorch best (%s, %s)" % (best_t, allocator),
                        torch_fig[best_t], 1.3 if bench == "mlp" else 1.5,
                        compile_note))
        if bench == "mlp":
            sgemm = numpy_matmul(1024, 1024, 1024, False, False, t)
            per_sgemm = flop / (2 * 1024**3)
            limit = {"median_ms": per_sgemm * sgemm["median_ms"],
                     "min_ms": per_sgemm * sgemm["min_ms"],
                     "max_ms": per_sgemm * sgemm["max_ms"],
                     "n": sgemm["n"]}
            rows.append(row(bench, "vs GEMM limit", t, c,
                            "%.2f GFLOP at sgemm" % (flop / 1e9), limit, 0.90,
                            "sgemm 1024^3 %.1f GFLOP/s at %d thread(s)" % (
                                gflops(2 * 1024**3, sgemm["median_ms"]), t)))
        if interp:
            rows.append(row(bench, "vs interpreter", t, c,
                            "interpreter (%dt)" % max(thread_counts), interp,
                            None, "interpreter %d steps" % interp_steps))
    return rows


def pick_allocator(bench, torch_body, cores):
    """PyTorch's fastest allocator of those installed, measured at 1 thread
    of its own with OpenBLAS on `cores`: (name, path to preload or None)."""
    times = {}
    with round_share():
        for name, path in ALLOCATORS:
            if path and not os.path.exists(path):
                continue
            times[name] = (summary(peer(torch_body, 1, torch=True,
                                        blas_threads=cores,
                                        preload=path)["times"])["median_ms"],
                           path)
    best = min(times, key=lambda n: times[n][0])
    print("%s: PyTorch allocator %s (%s)" % (bench, best, ", ".join(
        "%s %.2f ms" % (n, v[0]) for n, v in times.items())))
    return best, times[best][1]


def self_check(bench, torch_body, settings, best, torch_fig, preload):
    """The in-bench figure of PyTorch's best setting must match a standalone
    run of the same code (one process, measuring for longer) within 10 %."""
    t, blas = settings[best]
    alone = summary(peer(torch_body, t, torch=True, blas_threads=blas,
                         preload=preload)["times"])["median_ms"]
    inbench = torch_fig[best]["median_ms"]
    off = abs(inbench - alone) / alone
    print("%s: self-check: PyTorch %s %.2f ms in the bench, %.2f ms "
          "standalone (%+.0f %%)" % (bench, best, inbench, alone,
                                     100 * (inbench - alone) / alone))
    if off > 0.10:
        problem(bench, "self-check failed: PyTorch %s measured %.2f ms in the "
                "bench but %.2f ms standalone" % (best, inbench, alone))


# The PyTorch peers' training step: forward() (defined by each body), the
# gradients, and SGD on `params` in place.
TORCH_SGD_STEP = """
def step():
    forward().backward()
    with torch.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-LR)
            p.grad = None

report(times=measure(step))
"""


def mlp_torch_body(batch):
    """PyTorch's SGD step of mlp_forward()'s MLP at `batch` (a peer body)."""
    return """
B, SIZES, LR = %d, %r, %r
x = torch.rand(B, SIZES[0])
y = torch.randint(0, 10, (B,))
params = []
for i, o in zip(SIZES, SIZES[1:]):
    limit = math.sqrt(6.0 / (i + o))
    params += [torch.empty(o, i).uniform_(-limit, limit).requires_grad_(),
               torch.zeros(o, requires_grad=True)]

def forward():
    h = x
    for layer in range(3):
        h = F.linear(h, params[2 * layer], params[2 * layer + 1])
        if layer < 2:
            h = F.relu(h)
    return F.cross_entropy(h, y)
""" % (batch, MLP_SIZES, MLP_LR) + TORCH_SGD_STEP


def cnn_torch_body(batch):
    """PyTorch's SGD step of the layers-tutorial CNN at `batch` (NCHW)."""
    return """
B, LR = %d, %r
x = torch.rand(B, 1, 28, 28)
y = torch.randint(0, 10, (B,))
def glorot(shape, fan_in, fan_out):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.empty(shape).uniform_(-limit, limit).requires_grad_()
params = [glorot((32, 1, 5, 5), 25, 800), torch.zeros(32, requires_grad=True),
          glorot((64, 32, 5, 5), 800, 1600), torch.zeros(64, requires_grad=True),
          glorot((1024, 3136), 3136, 1024), torch.zeros(1024, requires_grad=True),
          glorot((10, 1024), 1024, 10), torch.zeros(10, requires_grad=True)]

def forward():
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=2)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=2)), 2)
    h = F.relu(F.linear(h.flatten(1), w3, b3))
    return F.cross_entropy(F.linear(h, w4, b4), y)
""" % (batch, CNN_LR) + TORCH_SGD_STEP


def bench_mlp(tmp, thread_counts):
    forward = write(os.path.join(tmp, "mlp-forward.pbtxt"), mlp_forward())
    graph = training_step(forward, os.path.join(tmp, "mlp-step.pbtxt"), MLP_LR)
    rng = np.random.default_rng(3)
    np.save(os.path.join(tmp, "mlp-x.npy"),
            rng.random((MLP_BATCH, MLP_SIZES[0]), dtype=np.float32))
    np.save(os.path.join(tmp, "mlp-labels.npy"),
            rng.integers(0, 10, MLP_BATCH).astype(np.int64))
    args = [graph, "--init", "init", "--feed",
            "x=@" + os.path.join(tmp, "mlp-x.npy"), "--feed",
            "labels=@" + os.path.join(tmp, "mlp-labels.npy"), "--fetch",
            "loss", "--target", "GradientDescent"]
    # Forward, the three weight gradients, the input gradients of layers 2
    # and 3 (layer 1's is not needed).
    pairs = list(zip(MLP_SIZES, MLP_SIZES[1:]))
    flop = 2.0 * MLP_BATCH * (2 * sum(i * o for i, o in pairs) +
                              sum(i * o for i, o in pairs[1:]))
    torch_body = mlp_torch_body(MLP_BATCH)
    return train_runs("mlp", args, thread_counts, torch_body,
                      2 if CFG.quick else 3, flop)


def bench_cnn(tmp, thread_counts):
    forward = os.path.join(tmp, "cnn-forward.pbtxt")
    with open(forward, "w") as f:
        subprocess.run([PYTHON, os.path.join(ROOT, "examples",
                                             "make-cnn-forward.py")],
                       stdout=f, check=True)
    graph = training_step(forward, os.path.join(tmp, "cnn-step.pbtxt"), CNN_LR)
    rng = np.random.default_rng(4)
    np.save(os.path.join(tmp, "cnn-x.npy"),
            rng.random((CNN_BATCH, 28, 28, 1), dtype=np.float32))
    np.save(os.path.join(tmp, "cnn-labels.npy"),
            rng.integers(0, 10, CNN_BATCH).astype(np.int32))
    args = [graph, "--init", "init", "--feed",
            "x=@" + os.path.join(tmp, "cnn-x.npy"), "--feed",
            "labels=@" + os.path.join(tmp, "cnn-labels.npy"), "--fetch",
            "loss", "--target", "GradientDescent"]
    b = CNN_BATCH
    conv1, conv2 = 2.0 * b * 28 * 28 * 32 * 25, 2.0 * b * 14 * 14 * 64 * 800
    dense1, dense2 = 2.0 * b * 3136 * 1024, 2.0 * b * 1024 * 10
    flop = 2 * (conv1 + conv2 + dense1 + dense2) + conv2 + dense1 + dense2
    torch_body = cnn_torch_body(CNN_BATCH)
    return train_runs("cnn", args, thread_counts, torch_body,
                      0 if CFG.quick else 2, flop)


# --- report -------------------------------------------------------------------

def fmt_ms(v):
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else \
        "%.2f" % v if v >= 1 else "%.3f" % v


def fmt_fig(f):
    if f is None:
        return "%-26s" % "-"
    return "%-26s" % ("%s [%s..%s] n=%d" % (fmt_ms(f["median_ms"]),
                                            fmt_ms(f["min_ms"]),
                                            fmt_ms(f["max_ms"]), f["n"]))


def print_table(rows):
    print("%-6s %-26s %3s %-26s %-22s %-26s %6s %6s %-6s %s" % (
        "bench", "case", "thr", "cleave ms [min..max] n", "peer",
        "peer ms [min..max] n", "ratio", "target", "result", "note"))
    for r in rows:
        print("%-6s %-26s %3d %s %-22s %s %6s %6s %-6s %s" % (
            r["bench"], r["case"], r["threads"], fmt_fig(r["cleave"]),
            r["peer"], fmt_fig(r["peer_fig"]),
            "%.2f" % r["ratio"] if r["ratio"] is not None else "-",
            ">=%.2f" % r["target"] if r["target"] else "-", r["result"],
            r["note"]))


def sanity_gate():
    """numpy's 1024^3 sgemm at all cores: refuse to go on below 50 GFLOP/s."""
    fig = numpy_matmul(1024, 1024, 1024, False, False, os.cpu_count())
    rate = gflops(2 * 1024**3, fig["median_ms"])
    print("numpy sgemm 1024^3, %d threads: %.1f GFLOP/s (median of %d), BLAS: "
          "%s" % (os.cpu_count(), rate, fig["n"],
                  ", ".join(fig["blas"]) or "not found"))
    if rate < GATE_GFLOPS:
        sys.exit("cpu_speed: refusing to report: numpy's 1024^3 sgemm runs at "
                 "%.1f GFLOP/s, below %.0f: the reference BLAS is in use (or "
                 "the machine is busy); install libopenblas0-pthread and make "
                 "it the libblas.so.3 alternative" % (rate, GATE_GFLOPS))
    return {"gflops": rate, "blas": fig["blas"], "threads": os.cpu_count()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=None,
                    help="measured steps per figure, at least (default 10, "
                         "--quick 5; fewer where a figure would take more "
                         "than about 15 s, never fewer than 3)")
    ap.add_argument("--threads", default="1,%d" % os.cpu_count())
    ap.add_argument("--only", default="matmul,chain,mlp,cnn")
    ap.add_argument("--rounds", type=int, default=None,
                    help="Cleave and each peer measured in turn this many "
                         "times (default 3, --quick 1)")
    ap.add_argument("--quick", action="store_true",
                    help="fewer shapes and steps; no CNN interpreter run")
    ap.add_argument("--json", help="write all figures here")
    ap.add_argument("--machine-openblas", action="store_true",
                    help="keep this machine's OPENBLAS_CORETYPE and "
                         "OPENBLAS_L2_SIZE (by default both sides run "
                         "without them, on the kernels OpenBLAS picks)")
    args = ap.parse_args()
    CFG.build = os.path.abspath(args.build)
    CFG.quick = args.quick
    CFG.machine_openblas = args.machine_openblas
    CFG.runs = args.runs or (5 if args.quick else 10)
    CFG.rounds = max(1, args.rounds or (1 if args.quick else 3))
    if args.quick:
        CFG.seconds, CFG.max_seconds = 0.3, 5.0
    thread_counts = sorted({int(t) for t in args.threads.split(",")})
    only = args.only.split(",")
    benches = {"matmul": bench_matmul, "chain": bench_chain, "mlp": bench_mlp,
               "cnn": bench_cnn}
    for name in only:
        if name not in benches:
            ap.error("unknown benchmark %r (matmul, chain, mlp, cnn)" % name)
    help_text = subprocess.run(
        [os.path.join(CFG.build, "bin", "graph-run"), "--help"],
        capture_output=True, text=True).stdout
    CFG.threads_flag = "--threads" in help_text

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.processor())
    print("machine: %s, %d cores; python %s, numpy %s" % (
        cpu, os.cpu_count(), platform.python_version(), np.__version__))
    load = os.getloadavg()[0]
    if load > 0.5:
        print("warning: load average %.2f before the run: other work shares "
              "the cores, figures will be noisy" % load)
    gate = sanity_gate()
    gate["openblas_core"] = {
        "peers": openblas_core([PYTHON, "-c", "import numpy"]),
        "cleave": openblas_core([os.path.join(CFG.build, "bin", "graph-run"),
                                 "--help"])}
    print("OpenBLAS kernel: peers %s, Cleave %s (%s)" % (
        gate["openblas_core"]["peers"], gate["openblas_core"]["cleave"],
        "the machine's OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE kept"
        if CFG.machine_openblas else
        "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset on both sides"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="cpu_speed.") as tmp:
        for name in only:
            rows += benches[name](tmp, thread_counts)
    threads_note = ("graph-run --threads=T" if CFG.threads_flag else
                    "graph-run has no --threads option: OPENBLAS_NUM_THREADS "
                    "and OMP_NUM_THREADS set to T instead")
    print("threads: %s; peers: OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=T, "
          "torch.set_num_threads(T); PyTorch also with 1 thread of its own "
          "and OpenBLAS on all cores" % threads_note)
    print("ratio = peer median / Cleave median (above 1: Cleave faster); "
          "Cleave step times include taking the feeds and handing back the "
          "fetches; the first (compiling) step is not counted")
    print_table(rows)
    for p in CFG.problems:
        print("PROBLEM: " + p)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cpu": cpu, "cores": os.cpu_count(),
                                   "load_before": load},
                       "sanity": gate, "threads_flag": CFG.threads_flag,
                       "quick": CFG.quick, "runs": CFG.runs,
                       "rounds": CFG.rounds,
                       "rows": rows, "problems": CFG.problems}, f, indent=1,
                      default=str)
    return 1 if CFG.problems else 0


if __name__ == "__main__":
    sys.exit(main())
