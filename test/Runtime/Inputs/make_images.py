"""make_images.py IMAGES.npy LABELS.npy N: N deterministic 28x28x1 float32
images (NHWC) and N int32 labels in [0, 10), written with the standard
library only."""
import struct
import sys


def write_npy(path, descr, shape, code, values):
    dims = ", ".join("%d" % d for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


n = int(sys.argv[3])
pixels = [((i * 7919) % 1000) / 1000.0 for i in range(n * 28 * 28)]
write_npy(sys.argv[1], "<f4", (n, 28, 28, 1), "f", pixels)
write_npy(sys.argv[2], "<i4", (n,), "i", [(i * 3) % 10 for i in range(n)])
