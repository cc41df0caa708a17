"""Compares the .npy files (float32/64, int32/64) of the same names in two directories,
without NumPy: compare_npy.py DIR_A DIR_B RTOL. Prints each file's relative
difference, max|a-b| / max|a| (elements near zero are compared at the scale
of the tensor, not their own), and fails when one exceeds RTOL or the
files' shapes differ."""
import ast
import os
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode())
    fmt, size = {"<f4": ("f", 4), "<f8": ("d", 8), "<i4": ("i", 4), "<i8": ("q", 8)}[header["descr"]]
    count = 1
    for d in header["shape"]:
        count *= d
    return header["shape"], struct.unpack("<%d%s" % (count, fmt), data[10 + length:10 + length + size * count])


a_dir, b_dir, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ok = True
for name in sorted(os.listdir(a_dir)):
    shape_a, a = read_npy(os.path.join(a_dir, name))
    shape_b, b = read_npy(os.path.join(b_dir, name))
    if shape_a != shape_b:
        print("%s: shapes differ: %s vs %s" % (name, shape_a, shape_b))
        ok = False
        continue
    scale = max(max(abs(p) for p in a), 1e-30)
    worst = max(abs(p - q) for p, q in zip(a, b)) / scale
    print("%s: %d values, %s" % (name, len(a), "equal within %g" % rtol if worst <= rtol else "relative difference %.3g" % worst))
    ok = ok and worst <= rtol
sys.exit(0 if ok else 1)
