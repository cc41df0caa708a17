# Writes a small three-class dataset as gzipped IDX files, as MNIST's:
#   make-dataset.py OUT_DIR COUNT
# images: uint8 [COUNT, 2, 2]; labels: uint8 [COUNT]. Example i has class
# i % 3: that pixel is bright, the others dim, with deterministic noise.
import gzip
import os
import struct
import sys

out, count = sys.argv[1], int(sys.argv[2])
state = 12345


def noise():
    global state
    state = (state * 1103515245 + 12345) % (1 << 31)
    return state % 60


images, labels = bytearray(), bytearray()
for i in range(count):
    label = i % 3
    for pixel in range(4):
        images.append(150 + noise() if pixel == label else noise())
    labels.append(label)
with gzip.open(os.path.join(out, "images.gz"), "wb") as f:
    f.write(struct.pack(">IIII", 0x0803, count, 2, 2) + bytes(images))
with gzip.open(os.path.join(out, "labels.gz"), "wb") as f:
    f.write(struct.pack(">II", 0x0801, count) + bytes(labels))
