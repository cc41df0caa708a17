"""Writes a deterministic batch as .npy files, without NumPy:
batch_npy.py X_PATH LABELS_PATH ROWS COLS CLASSES. x is float32 [ROWS, COLS]
with values in [-1, 1) that differ from row to row; labels are int64 [ROWS]
in [0, CLASSES)."""
import math
import struct
import sys


def write_npy(path, descr, shape, fmt, values):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


x_path, labels_path = sys.argv[1], sys.argv[2]
rows, cols, classes = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
x = [math.sin(1.7 * r + 0.31 * c + 0.05 * r * c) for r in range(rows) for c in range(cols)]
write_npy(x_path, "<f4", (rows, cols), "f", x)
write_npy(labels_path, "<i8", (rows,), "q", [(r * 7 + 3) % classes for r in range(rows)])
