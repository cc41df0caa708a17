#!/usr/bin/env python3
"""Host program compile time: graphs of N interpreted nodes in a chain
(test/Runtime/Inputs/make_string_chain.py: AsString and StringLength in
turn, one host program step each), run by graph-run --timing with the host
program compiled and stepped. Compile time is the compiled run's first
step less its later steps' median; the peer is the stepped run of the same
graph in the same job (its first step builds the same program, without
LLVM), and linearity is compile time growth over size growth.

Usage: host_program_compile.py --build BUILD_DIR [--sizes 1000,4000,16000]
"""
import argparse
import math
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_CHAIN = os.path.join(HERE, "..", "test", "Runtime", "Inputs",
                          "make_string_chain.py")


def first_and_later_ms(build, graph, last, mode):
    result = subprocess.run(
        [os.path.join(build, "bin", "graph-run"), graph,
         "--host-program=" + mode, "--feed", "x=15", "--fetch", last,
         "--steps", "5", "--timing"],
        check=True, capture_output=True, text=True)
    m = re.search(r"first step ([0-9.]+) ms; later steps median ([0-9.]+) ms",
                  result.stderr)
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="1000,4000,16000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            graph = os.path.join(tmp, "chain%d.pbtxt" % n)
            with open(graph, "w") as f:
                subprocess.run(["python3", MAKE_CHAIN, str(n)], stdout=f,
                               check=True)
            last = "n%d" % (n // 2 - 1)
            first, later = first_and_later_ms(args.build, graph, last,
                                              "compiled")
            stepped_first, stepped_later = first_and_later_ms(
                args.build, graph, last, "stepped")
            rows.append((n, first - later, stepped_first - stepped_later,
                         later, stepped_later))
    print("%8s %12s %12s %12s %12s" % ("steps", "compile_ms", "build_ms",
                                       "step_ms", "stepped_ms"))
    for n, compile_ms, build_ms, step, stepped in rows:
        print("%8d %12.1f %12.1f %12.2f %12.2f" % (n, compile_ms, build_ms,
                                                   step, stepped))
    for (n0, c0, *_), (n1, c1, *_) in zip(rows, rows[1:]):
        print("compile time growth / size growth %d -> %d: %.2f" %
              (n0, n1, math.log(c1 / c0) / math.log(n1 / n0)))


if __name__ == "__main__":
    main()
