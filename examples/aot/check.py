#!/usr/bin/env python3
"""check.py EXAMPLE GRAPH_RUN GRAPH: the ahead-of-time compiled MLP step
(EXAMPLE) and the reference interpreter (GRAPH_RUN on GRAPH, the same feeds)
give the same losses and global steps for 5 steps."""
import re
import struct
import subprocess
import sys
import tempfile

example, graph_run, graph = sys.argv[1:4]
aot = subprocess.run([example, "5"], check=True, capture_output=True,
                     text=True).stdout
with tempfile.TemporaryDirectory() as tmp:
    x = tmp + "/x.npy"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 784), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(x, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1") + struct.pack("<1568f", *[0.01] * 1568))
    ref = subprocess.run(
        [graph_run, graph, "--init", "init", "--feed", "x=@" + x, "--feed",
         "labels=[3,7]", "--fetch", "Mean", "--fetch", "global_step",
         "--target", "GradientDescent", "--steps", "5"],
        check=True, capture_output=True, text=True).stdout
got = [(float(m.group(1)), int(m.group(2))) for m in re.finditer(
    r"Mean = (\S+) global_step = (\d+)", aot)]
means = [float(v) for v in re.findall(r"Mean = float \[\] (\S+)", ref)]
global_steps = [int(v) for v in re.findall(r"global_step = int64 \[\] (\d+)",
                                            ref)]
if len(got) != 5 or len(means) != 5 or len(global_steps) != 5:
    sys.exit("unexpected output:\n" + aot + ref)
for step, ((mean, gs), want_mean, want_gs) in enumerate(
        zip(got, means, global_steps)):
    # The interpreter prints 6 significant digits.
    if abs(mean - want_mean) > 1e-5 * abs(want_mean) + 5e-6 or gs != want_gs:
        sys.exit("step %d: compiled ahead of time %r %d, interpreter %r %d"
                 % (step, mean, gs, want_mean, want_gs))
print(aot + "matches the interpreter")
