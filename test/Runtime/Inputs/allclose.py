"""allclose.py A.npy B.npy [rtol] [atol]: exits 1 (naming the first element
that differs) unless the two .npy files hold the same dtype, shape and
values within tolerance. Standard library only: the test suite runs it with
any python3."""
import ast
import math
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % path)
    major = data[6]
    header_len = (struct.unpack("<H", data[8:10])[0] if major == 1
                  else struct.unpack("<I", data[8:12])[0])
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    body = data[start + header_len:]
    codes = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?",
             "|u1": "B", "|i1": "b", "<i2": "h", "<u2": "H", "<u4": "I",
             "<u8": "Q"}
    code = codes[header["descr"]]
    count = len(body) // struct.calcsize(code)
    return header["descr"], tuple(header["shape"]), struct.unpack(
        "<%d%s" % (count, code), body)


def main():
    a, b = read_npy(sys.argv[1]), read_npy(sys.argv[2])
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6
    if a[0] != b[0] or a[1] != b[1]:
        sys.exit("dtype/shape differ: %s %s vs %s %s" % (a[0], a[1], b[0],
                                                          b[1]))
    for i, (x, y) in enumerate(zip(a[2], b[2])):
        if isinstance(x, float) and (math.isnan(x) or math.isnan(y)):
            if math.isnan(x) != math.isnan(y):
                sys.exit("element %d: %r vs %r" % (i, x, y))
        elif abs(x - y) > atol + rtol * abs(y):
            sys.exit("element %d: %r vs %r" % (i, x, y))
    print("allclose: %d elements" % len(a[2]))


main()
