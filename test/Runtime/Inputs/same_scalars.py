"""same_scalars.py A.txt B.txt [rtol]: exits 1 (naming the first line that
differs) unless two graph-run outputs print the same fetches, each scalar
within relative tolerance rtol (default 1e-4) of the other. Standard
library only."""
import re
import sys

LINE = re.compile(r"^(.*) = (\w+) \[\] (\S+)$")


def read(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def main():
    a, b = read(sys.argv[1]), read(sys.argv[2])
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    if len(a) != len(b):
        sys.exit("%d lines against %d" % (len(a), len(b)))
    for x, y in zip(a, b):
        mx, my = LINE.match(x), LINE.match(y)
        if not mx or not my or mx.group(1, 2) != my.group(1, 2):
            sys.exit("not the same scalar fetch: %r and %r" % (x, y))
        u, v = float(mx.group(3)), float(my.group(3))
        if abs(u - v) > rtol * max(abs(u), abs(v), 1e-30):
            sys.exit("%r and %r differ by more than %g" % (x, y, rtol))
    print("same: %d lines" % len(a))


main()
