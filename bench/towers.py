#!/usr/bin/python3
"""Towers (graph-towers, issue 27): the training step of one model over the
same global batch on one device, as two towers on two virtual CPU devices
(graph-run --devices=2: the towers' clusters run side by side, each on a
share of the cores), and as two towers on one device (one cluster), against
the replicated step (two replicas, as tpu.replicate() tags the model) and
PyTorch at its best setting, all in this run on the same cores.

- mlp: cpu_speed.py's 784-1024-1024-10 ReLU MLP, SGD, global batch 256;
- cnn: the layers-tutorial CNN (examples/make-cnn-forward.py), global
  batch 64;
- fashion-mnist: examples/fashion-mnist's 784-64-10 MLP at global batch 64,
  whose prepare.py also writes the replicated graph (two replicas,
  CrossShardOptimizer's all-reduce), so towers and replicas are compared on
  one model.

Each configuration is graph-run --backend=cpu --timing (median of the
steps after the first, compiling one), measured in turn over --rounds
rounds, each figure the median of its rounds. ratio = one device's time /
the configuration's time (above 1: faster than one device). PyTorch runs
as cpu_speed.py runs it: its fastest setting of 1 thread, all cores, and 1
thread with OpenBLAS on all cores, with its fastest allocator, both sides
without this machine's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE.

Usage: /usr/bin/python3 bench/towers.py --build BUILD_DIR [--rounds 3]
           [--only mlp,cnn,fashion-mnist] [--quick]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_speed as cs  # noqa: E402  (the models, graph-run and peers)

# Batches of 64 the Fashion-MNIST graphs step through (the dataset's 60000
# images hold 937).
FASHION_STEPS = 900

CONFIGS = [  # name, graph-towers devices (None: no towers), graph-run flags
    ("1 device", "/device:CPU:0", []),
    ("2 towers, 2 devices", "/device:CPU:0,/device:CPU:1", ["--devices=2"]),
    ("2 towers, 1 device", "/device:CPU:0,/device:CPU:0", []),
]


def towers_graph(forward, out, devices, options):
    """graph-towers on a forward graph (a one-tower training step)."""
    subprocess.run([os.path.join(cs.CFG.build, "bin", "graph-opt"), forward,
                    "--graph-infer-shapes",
                    "--graph-towers=num-devices=2 devices=%s %s"
                    % (devices, options), "--emit=pbtxt", "-o", out],
                   check=True)
    return out


def towers_graphs(forward, prefix, options):
    """Each configuration's graph of `forward`: {name: (path, flags)}."""
    return {name: (towers_graph(forward, "%s-%d.pbtxt" % (prefix, i), devices,
                                options), flags)
            for i, (name, devices, flags) in enumerate(CONFIGS)}


def run_configs(model, graphs, feeds, fetch, target, torch_body,
                max_steps=None):
    """Every configuration of `graphs` ({name: (path, flags)}) and PyTorch,
    in turn over the rounds; returns the rows of the table. `max_steps`
    bounds a run's steps (a graph that reads a batch per step)."""
    threads = os.cpu_count()
    figs = {name: [] for name in graphs}
    torch_figs = {}
    settings = {"%dt" % t: (t, t) for t in sorted({1, threads})}
    if threads > 1:
        settings["1t+blas %dt" % threads] = (1, threads)
    allocator = preload = None
    if torch_body:
        allocator, preload = cs.pick_allocator(model, torch_body, threads)
        torch_figs = {name: [] for name in settings}
    with cs.round_share():
        for _ in range(cs.CFG.rounds):
            for name, (path, flags) in graphs.items():
                args = [path, "--init", "init", "--target", target] + (
                    ["--fetch", fetch] if fetch else []) + feeds + flags
                est = cs.graph_run(args, threads, 2)["median_ms"]
                steps = 1 + cs.step_count(est / 1e3, cs.CFG.runs,
                                          cs.CFG.seconds, cs.CFG.max_seconds)
                figs[name].append(cs.graph_run(
                    args, threads, min(steps, max_steps or steps)))
            for name, (t, blas) in settings.items() if torch_body else []:
                torch_figs[name].append(cs.summary(cs.peer(
                    torch_body, t, torch=True, blas_threads=blas,
                    preload=preload)["times"]))
    merged = {name: cs.merge_rounds(f) for name, f in figs.items()}
    base = merged["1 device"]
    rows = []
    for name, fig in merged.items():
        r = cs.row(model, name, threads, fig, "1 device", base)
        # ratio = one device / this configuration.
        r["ratio"] = base["median_ms"] / fig["median_ms"]
        r["note"] = "%d clusters" % fig["clusters"] if fig["clusters"] else ""
        rows.append(r)
    if torch_body:
        merged_torch = {n: cs.merge_rounds(f) for n, f in torch_figs.items()}
        best = min(merged_torch, key=lambda n: merged_torch[n]["median_ms"])
        cs.self_check(model, torch_body, settings, best, merged_torch,
                      preload)
        r = cs.row(model, "pytorch best", threads, merged_torch[best],
                   "1 device", base)
        r["ratio"] = base["median_ms"] / merged_torch[best]["median_ms"]
        r["note"] = "%s, %s" % (best, allocator)
        rows.append(r)
    return rows


def bench_mlp(tmp):
    forward = cs.write(os.path.join(tmp, "mlp-forward.pbtxt"),
                       cs.mlp_forward())
    rng = np.random.default_rng(3)
    np.save(os.path.join(tmp, "mlp-x.npy"),
            rng.random((cs.MLP_BATCH, cs.MLP_SIZES[0]), dtype=np.float32))
    np.save(os.path.join(tmp, "mlp-labels.npy"),
            rng.integers(0, 10, cs.MLP_BATCH).astype(np.int64))
    graphs = towers_graphs(forward, os.path.join(tmp, "mlp"),
                           "loss=loss learning-rate=%r global-step=global_step"
                           % cs.MLP_LR)
    feeds = ["--feed", "x=@" + os.path.join(tmp, "mlp-x.npy"), "--feed",
             "labels=@" + os.path.join(tmp, "mlp-labels.npy")]
    return run_configs("mlp", graphs, feeds, "loss", "GradientDescent",
                       cs.mlp_torch_body(cs.MLP_BATCH))


def bench_cnn(tmp):
    forward = os.path.join(tmp, "cnn-forward.pbtxt")
    with open(forward, "w") as f:
        subprocess.run([cs.PYTHON, os.path.join(cs.ROOT, "examples",
                                                "make-cnn-forward.py")],
                       stdout=f, check=True)
    rng = np.random.default_rng(4)
    np.save(os.path.join(tmp, "cnn-x.npy"),
            rng.random((cs.CNN_BATCH, 28, 28, 1), dtype=np.float32))
    np.save(os.path.join(tmp, "cnn-labels.npy"),
            rng.integers(0, 10, cs.CNN_BATCH).astype(np.int32))
    graphs = towers_graphs(forward, os.path.join(tmp, "cnn"),
                           "loss=loss learning-rate=%r global-step=global_step"
                           % cs.CNN_LR)
    feeds = ["--feed", "x=@" + os.path.join(tmp, "cnn-x.npy"), "--feed",
             "labels=@" + os.path.join(tmp, "cnn-labels.npy")]
    return run_configs("cnn", graphs, feeds, "loss", "GradientDescent",
                       cs.cnn_torch_body(cs.CNN_BATCH))


def bench_fashion_mnist(tmp):
    out = os.path.join(tmp, "fashion-mnist")
    subprocess.run([cs.PYTHON, os.path.join(cs.ROOT, "examples",
                                            "fashion-mnist", "prepare.py"),
                    "--out", out, "--steps", str(FASHION_STEPS),
                    "--replicas", "2",
                    "--batch", "32"], check=True, stdout=subprocess.DEVNULL)
    options = ("loss=model/loss inputs=batch/x,batch/labels learning-rate=0.1"
               " global-step=step")
    graphs = towers_graphs(os.path.join(out, "single.pbtxt"),
                           os.path.join(out, "towers"), options)
    replicated = os.path.join(out, "replicated-train.pbtxt")
    subprocess.run([os.path.join(cs.CFG.build, "bin", "graph-opt"),
                    os.path.join(out, "replicated.pbtxt"),
                    "--graph-infer-shapes",
                    "--graph-minimize=loss=model/loss learning-rate=0.1 "
                    "global-step=step cross-replica", "--emit=pbtxt", "-o",
                    replicated], check=True)
    graphs["2 replicas"] = (replicated, [])
    feeds = ["--feed", "x_all=@" + os.path.join(out, "x.npy"), "--feed",
             "labels_all=@" + os.path.join(out, "y.npy")]
    # No fetch: the configurations name their losses differently (and a
    # resource handle such as the step's would keep the step interpreted).
    return run_configs("fashion-mnist", graphs, feeds, None,
                       "GradientDescent", None, max_steps=FASHION_STEPS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=None,
                    help="configurations measured in turn this many times "
                         "(default 3, --quick 1)")
    ap.add_argument("--only", default="mlp,cnn,fashion-mnist")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cs.CFG.build = os.path.abspath(args.build)
    cs.CFG.rounds = max(1, args.rounds or (1 if args.quick else 3))
    cs.CFG.runs = 5 if args.quick else 10
    if args.quick:
        cs.CFG.seconds, cs.CFG.max_seconds = 0.3, 5.0
    benches = {"mlp": bench_mlp, "cnn": bench_cnn,
               "fashion-mnist": bench_fashion_mnist}
    only = args.only.split(",")
    for name in only:
        if name not in benches:
            ap.error("unknown benchmark %r (%s)" % (name, ", ".join(benches)))
    print("machine: %d cores; graph-run --backend=cpu --threads=%d (all)"
          % (os.cpu_count(), os.cpu_count()))
    print("OpenBLAS kernel: peers %s, Cleave %s (OPENBLAS_CORETYPE and "
          "OPENBLAS_L2_SIZE unset on both sides)" % (
              cs.openblas_core([cs.PYTHON, "-c", "import numpy"]),
              cs.openblas_core([os.path.join(cs.CFG.build, "bin",
                                             "graph-run"), "--help"])))
    rows = []
    with tempfile.TemporaryDirectory(prefix="towers.") as tmp:
        for name in only:
            rows += benches[name](tmp)
    print("ratio = one device's median / this median (above 1: faster than "
          "one device)")
    cs.print_table(rows)
    for p in cs.CFG.problems:
        print("PROBLEM: " + p)
    return 1 if cs.CFG.problems else 0


if __name__ == "__main__":
    sys.exit(main())
