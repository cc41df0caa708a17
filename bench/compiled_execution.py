#!/usr/bin/env python3
"""Compiled execution benchmark: compile time and step time of graph-run
--backend=cpu against the reference interpreter (--backend=interpreter), the
in-job peer, on the same graphs, inputs and machine.

- mlp: the bundled MLP training step (784-128-10, SGD) at batch 64;
- cnn: the layers-tutorial CNN training step (conv 5x5x32, pool, conv
  5x5x64, pool, dense 1024, dense 10, SGD) at batch 8;
- chain-N: a generated forward graph of about N nodes (a chain of 64x64
  dense tanh layers), compiled as one cluster: compile time against size.

Step times are medians over the steps after the first (which compiles);
compile time is graph-run's own account (lowering, the MLIR pipeline and
LLVM). Speed of the generated code is the next stage's subject (loops, no
vectors or threads yet), so the ratios here say how far plain compiled
loops are ahead of the interpreter, not how close to the hardware.

Usage: compiled_execution.py --build BUILD_DIR [--sizes 1000,10000]
"""
import argparse
import os
import re
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_npy(path, descr, shape, code, values):
    dims = ", ".join("%d" % d for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def floats(n, seed):
    return [((i * 7919 + seed * 104729) % 1000) / 1000.0 for i in range(n)]


def chain(n_nodes):
    """A forward chain of dense tanh layers over x [64, 64]."""
    f = 'attr { key: "T" value { type: DT_FLOAT } }'
    lines = ['node { name: "x" op: "Placeholder" attr { key: "dtype" value { '
             'type: DT_FLOAT } } attr { key: "shape" value { shape { dim { '
             'size: 64 } dim { size: 64 } } } } }']
    prev, layer = "x", 0
    while len(lines) < n_nodes:
        s = "l%d/" % layer
        lines.append('node { name: "%sw" op: "Const" attr { key: "dtype" value '
                     '{ type: DT_FLOAT } } attr { key: "value" value { tensor '
                     '{ dtype: DT_FLOAT tensor_shape { dim { size: 64 } dim { '
                     'size: 64 } } float_val: %r } } } }' % (s, 1.0 / 64))
        lines.append('node { name: "%sb" op: "Const" attr { key: "dtype" value '
                     '{ type: DT_FLOAT } } attr { key: "value" value { tensor '
                     '{ dtype: DT_FLOAT tensor_shape { dim { size: 64 } } '
                     'float_val: 0.01 } } } }' % s)
        lines.append('node { name: "%smm" op: "MatMul" input: "%s" input: '
                     '"%sw" %s }' % (s, prev, s, f))
        lines.append('node { name: "%sadd" op: "BiasAdd" input: "%smm" input: '
                     '"%sb" %s }' % (s, s, s, f))
        lines.append('node { name: "%sout" op: "Tanh" input: "%sadd" %s }'
                     % (s, s, f))
        prev, layer = s + "out", layer + 1
    return "\n".join(lines) + "\n", prev


def run(graph_run, args, backend):
    out = subprocess.run([graph_run] + args + ["--backend=" + backend,
                                               "--timing"],
                         check=True, capture_output=True, text=True).stderr
    line = [l for l in out.splitlines() if "graph-run: timing:" in l][-1]
    median = re.search(r"median ([0-9.]+) ms", line)
    first = re.search(r"first step ([0-9.]+) ms", line)
    compiled = re.search(r"compiled (\d+) clusters in ([0-9.]+) s", line)
    return {"median_ms": float(median.group(1)) if median else None,
            "first_ms": float(first.group(1)),
            "clusters": int(compiled.group(1)) if compiled else 0,
            "compile_s": float(compiled.group(2)) if compiled else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="1000,10000")
    args = ap.parse_args()
    graph_run = os.path.join(args.build, "bin", "graph-run")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        x = os.path.join(tmp, "x.npy")
        write_npy(x, "<f4", (64, 784), "f", floats(64 * 784, 1))
        mlp = [os.path.join(ROOT, "examples", "mlp-training-step.pbtxt"),
               "--init", "init", "--feed", "x=@" + x, "--feed",
               "labels=[%s]" % ",".join(str(i % 10) for i in range(64)),
               "--fetch", "Mean", "--target", "GradientDescent"]
        images = os.path.join(tmp, "images.npy")
        labels = os.path.join(tmp, "labels.npy")
        write_npy(images, "<f4", (8, 28, 28, 1), "f", floats(8 * 784, 2))
        write_npy(labels, "<i4", (8,), "i", [i % 10 for i in range(8)])
        cnn = [os.path.join(ROOT, "examples", "cnn-training-step.pbtxt"),
               "--init", "init", "--feed", "x=@" + images, "--feed",
               "labels=@" + labels, "--fetch", "loss", "--target",
               "GradientDescent"]
        for name, common, interp_steps, cpu_steps in [
                ("mlp", mlp, 11, 31), ("cnn", cnn, 3, 6)]:
            i = run(graph_run, common + ["--steps", str(interp_steps)],
                    "interpreter")
            c = run(graph_run, common + ["--steps", str(cpu_steps)], "cpu")
            rows.append((name, c["compile_s"], c["clusters"], i["median_ms"],
                         c["median_ms"]))
        for n in [int(s) for s in args.sizes.split(",")]:
            text, last = chain(n)
            path = os.path.join(tmp, "chain%d.pbtxt" % n)
            with open(path, "w") as f:
                f.write(text)
            feeds = os.path.join(tmp, "x64.npy")
            write_npy(feeds, "<f4", (64, 64), "f", floats(64 * 64, 3))
            common = [path, "--feed", "x=@" + feeds, "--fetch", last,
                      "--steps", "3"]
            i = run(graph_run, common, "interpreter")
            c = run(graph_run, common, "cpu")
            rows.append(("chain-%d" % text.count("node {"), c["compile_s"],
                         c["clusters"], i["median_ms"], c["median_ms"]))
    print("%-12s %10s %8s %14s %14s %9s" % ("graph", "compile s", "clusters",
                                          "interp ms/step", "cpu ms/step",
                                          "speedup"))
    for name, compile_s, clusters, interp, cpu in rows:
        print("%-12s %10.3f %8d %14.2f %14.2f %8.1fx" % (
            name, compile_s, clusters, interp, cpu, interp / cpu))
    sizes = [(int(r[0].split("-")[1]), r[1]) for r in rows
             if r[0].startswith("chain")]
    if len(sizes) >= 2:
        (n0, t0), (n1, t1) = sizes[0], sizes[-1]
        print("compile time growth / size growth (%d -> %d nodes): %.2f "
              "(1.00 = linear)" % (n0, n1, (t1 / t0) / (n1 / n0)))


main()
