#!/usr/bin/env python3
"""Replicated training step time: the Fashion-MNIST example's MLP step
(examples/fashion-mnist) with its global batch on one replica and split
over 2 (and 4) replicas, in the interpreter and compiled (graph-run
--backend=interpreter|cpu --timing), median of the steps after the first.

The peer is the one-replica step over the same global batch on the same
backend in the same job: the ratio is what replication costs or gains
(threads, channels, CrossReplicaSum, the host log line; compiled replicas
run their device code in parallel, the interpreter's take turns).

Usage: replicated_step.py --build BUILD_DIR [--steps 50] [--batch 64]
       [--replicas 2,4] [--backends interpreter,cpu]
"""
import argparse
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "fashion-mnist")


def step_ms(build, out, name, steps, backend):
    opt = os.path.join(build, "bin", "graph-opt")
    run = os.path.join(build, "bin", "graph-run")
    minimize = "loss=model/loss learning-rate=0.1 global-step=step"
    if name == "replicated":
        minimize += " cross-replica"
    train = os.path.join(out, name + "-train.pbtxt")
    subprocess.run([opt, os.path.join(out, name + ".pbtxt"),
                    "--graph-infer-shapes",
                    "--graph-minimize=" + minimize, "--emit=pbtxt", "-o",
                    train], check=True)
    result = subprocess.run(
        [run, train, "--backend=" + backend, "--init", "init",
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
    ap.add_argument("--backends", default="interpreter,cpu")
    args = ap.parse_args()
    backends = args.backends.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(r) for r in args.replicas.split(",")]:
            out = os.path.join(tmp, str(n))
            subprocess.run(["/usr/bin/python3",
                            os.path.join(EXAMPLE, "prepare.py"), "--out", out,
                            "--steps", str(args.steps), "--replicas", str(n),
                            "--batch", str(args.batch // n)], check=True,
                           stdout=subprocess.DEVNULL)
            if not rows:
                rows.append((1, [step_ms(args.build, out, "single",
                                         args.steps, b) for b in backends]))
            rows.append((n, [step_ms(args.build, out, "replicated",
                                     args.steps, b) for b in backends]))
    print("global batch %d" % args.batch)
    print("%8s" % "replicas" + "".join(
        " %14s %9s" % (b + "_ms", "vs_1") for b in backends))
    for n, times in rows:
        print("%8d" % n + "".join(
            " %14.2f %9.2f" % (ms, ms / base)
            for ms, base in zip(times, rows[0][1])))


if __name__ == "__main__":
    main()
