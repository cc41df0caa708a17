"""Writes a float32 .npy file of shape ROWSxCOLS filled with VALUE, without
NumPy: filled_npy.py PATH ROWS COLS VALUE."""
import struct
import sys

path, rows, cols, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % (rows * cols), *([value] * (rows * cols))))
