# Writes a float32 .npy of the given shape filled with one value:
#   make_npy.py OUT VALUE DIM...
import struct
import sys

out, value, dims = sys.argv[1], float(sys.argv[2]), [int(d) for d in sys.argv[3:]]
count = 1
for d in dims:
    count *= d
shape = "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % count, *([value] * count)))
