"""write_npy.py OUT DTYPE V1 V2 ...: writes a 1-D .npy of dtype '<f8' or
'<i8' (NumPy's defaults) holding the values. Standard library only."""
import struct
import sys


def main():
    out, dtype, values = sys.argv[1], sys.argv[2], sys.argv[3:]
    code = {"<f8": "d", "<i8": "q"}[dtype]
    cast = float if code == "d" else int
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (
        dtype, len(values))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code),
                            *[cast(v) for v in values]))


if __name__ == "__main__":
    main()
