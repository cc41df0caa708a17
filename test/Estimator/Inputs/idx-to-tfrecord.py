# Writes make-dataset.py's IDX files as TFRecord files of tf.train.Example
# protos, without TensorFlow (the wire format by hand, CRC-32C masked as
# TensorFlow's RecordWriter does):
#   idx-to-tfrecord.py IMAGES LABELS OUT [--gzip] [--files N] [--omit KEY]
#                      [--labels-as-float]
# Example i: "x" a float_list of its pixels (0..255), "labels" an
# int64_list of its class. --files splits the records over N files
# OUT-00000-of-0000N, ...; --omit leaves a feature out of example 3;
# --labels-as-float writes the labels as a float_list.
import gzip
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = bytearray()
    while True:
        bits = n & 0x7F
        n >>= 7
        if n:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def field(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def feature(kind, values):
    if kind == "float":
        listed = field(1, struct.pack("<%df" % len(values), *values))
        return field(2, listed)
    listed = field(1, b"".join(varint(v) for v in values))
    return field(3, listed)


def example(features):
    entries = b"".join(field(1, field(1, key.encode()) + field(2, value))
                       for key, value in features)
    return field(1, entries)


def record(data):
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked(length)) + data +
            struct.pack("<I", masked(data)))


def idx(path):
    data = gzip.open(path).read()
    dims = data[3]
    shape = struct.unpack(">%dI" % dims, data[4:4 + 4 * dims])
    return shape, data[4 + 4 * dims:]


args = sys.argv[1:]
images_path, labels_path, out = args[0], args[1], args[2]
compress = "--gzip" in args
files = int(args[args.index("--files") + 1]) if "--files" in args else 1
omit = args[args.index("--omit") + 1] if "--omit" in args else None
labels_kind = "float" if "--labels-as-float" in args else "int64"
shape, pixels = idx(images_path)
_, labels = idx(labels_path)
size = 1
for d in shape[1:]:
    size *= d
records = []
for i in range(shape[0]):
    features = [("x", feature("float", list(pixels[i * size:(i + 1) * size]))),
                ("labels", feature(labels_kind, [labels[i]]))]
    if i == 3 and omit:
        features = [f for f in features if f[0] != omit]
    records.append(record(example(features)))
per_file = (len(records) + files - 1) // files
for f in range(files):
    name = out if files == 1 else "%s-%05d-of-%05d" % (out, f, files)
    data = b"".join(records[f * per_file:(f + 1) * per_file])
    with open(name, "wb") as handle:
        handle.write(gzip.compress(data) if compress else data)
