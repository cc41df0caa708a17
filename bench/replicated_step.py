#!/usr/bin/env python3
"""Replicated training step time: the Fashion-MNIST example's MLP step
(examples/fashion-mnist) with its global batch on one replica and split
over 2 (and 4) replicas, median of the steps after the first
(graph-run --timing), in each mode:

  interpreter  --backend=interpreter (the oracle: every node interpreted)
  executor     --backend=cpu --host-program=executor: compiled device code,
               the orchestration on the interpreter's dataflow executor
  stepped      --backend=cpu --host-program=stepped: the host program's
               fixed order, stepped through by the runtime
  compiled     --backend=cpu (the default): the host program compiled
               through LLVM

The peer is the one-replica step over the same global batch in the same
mode in the same job: the ratio is what replication costs or gains
(threads, channels, CrossReplicaSum, the host log line; compiled replicas
run their device code in parallel, the interpreter's take turns). The
modes run in turn over --rounds rounds, and each figure is the median of
its rounds, so a change in the shared machine's load reaches every mode.

Usage: replicated_step.py --build BUILD_DIR [--steps 50] [--batch 64]
       [--replicas 2,4] [--modes interpreter,executor,compiled]
       [--rounds 3]
"""
import argparse
import os
import statistics
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {
    "interpreter": ["--backend=interpreter"],
    "executor": ["--backend=cpu", "--host-program=executor"],
    "stepped": ["--backend=cpu", "--host-program=stepped"],
    "compiled": ["--backend=cpu", "--host-program=compiled"],
}
EXAMPLE = os.path.join(HERE, "..", "examples", "fashion-mnist")


def training_graph(build, out, name):
    opt = os.path.join(build, "bin", "graph-opt")
    minimize = "loss=model/loss learning-rate=0.1 global-step=step"
    if name == "replicated":
        minimize += " cross-replica"
    train = os.path.join(out, name + "-train.pbtxt")
    subprocess.run([opt, os.path.join(out, name + ".pbtxt"),
                    "--graph-infer-shapes",
                    "--graph-minimize=" + minimize, "--emit=pbtxt", "-o",
                    train], check=True)
    return train


def step_ms(build, out, train, steps, mode):
    run = os.path.join(build, "bin", "graph-run")
    result = subprocess.run(
        [run, train] + MODES[mode] + ["--init", "init",
         "--feed", "x_all=@" + os.path.join(out, "x.npy"),
         "--feed", "labels_all=@" + os.path.join(out, "y.npy"),
         "--target", "GradientDescent", "--steps", str(steps), "--timing"],
        check=True, capture_output=True, text=True)
    return float(re.search(r"later steps median ([0-9.]+) ms",
                           result.stderr).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64,
                    help="global batch (examples per step)")
    ap.add_argument("--replicas", default="2,4")
    ap.add_argument("--modes", default="interpreter,executor,compiled")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in MODES:
            ap.error("unknown mode '%s' (modes: %s)" % (mode, ", ".join(MODES)))
    with tempfile.TemporaryDirectory() as tmp:
        # (replicas, directory, training graph), the one-replica run first.
        configs = []
        for n in [int(r) for r in args.replicas.split(",")]:
            out = os.path.join(tmp, str(n))
            subprocess.run(["/usr/bin/python3",
                            os.path.join(EXAMPLE, "prepare.py"), "--out", out,
                            "--steps", str(args.steps), "--replicas", str(n),
                            "--batch", str(args.batch // n)], check=True,
                           stdout=subprocess.DEVNULL)
            if not configs:
                configs.append((1, out, training_graph(args.build, out,
                                                       "single")))
            configs.append((n, out, training_graph(args.build, out,
                                                   "replicated")))
        samples = {(n, m): [] for n, _, _ in configs for m in modes}
        for _ in range(args.rounds):
            for n, out, train in configs:
                for m in modes:
                    samples[(n, m)].append(
                        step_ms(args.build, out, train, args.steps, m))
    rows = [(n, [statistics.median(samples[(n, m)]) for m in modes])
            for n, _, _ in configs]
    print("global batch %d, median of %d rounds" % (args.batch, args.rounds))
    print("%8s" % "replicas" + "".join(
        " %14s %9s" % (m + "_ms", "vs_1") for m in modes))
    for n, times in rows:
        print("%8d" % n + "".join(
            " %14.2f %9.2f" % (ms, ms / base)
            for ms, base in zip(times, rows[0][1])))


if __name__ == "__main__":
    main()
