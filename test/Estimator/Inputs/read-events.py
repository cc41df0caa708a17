# Prints the events of TensorBoard event files, a line each, without
# TensorFlow (the TFRecord framing and Event's wire format by hand):
#   read-events.py FILE...
# "version brain.Event:2", or "step <n> <tag> simple_value <v>" and
# "step <n> <tag> tensor <dtype> <value> plugin <name>" per summary value.
import struct
import sys


def varint(data, pos):
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def fields(data):
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            length, pos = varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        yield number, value


def records(data):
    pos = 0
    while pos < len(data):
        (length,) = struct.unpack("<Q", data[pos:pos + 8])
        yield data[pos + 12:pos + 12 + length]
        pos += 12 + length + 4


for path in sys.argv[1:]:
    for record in records(open(path, "rb").read()):
        event = dict(fields(record))
        if 3 in event:
            print("version", event[3].decode())
            continue
        step = event.get(2, 0)
        for number, value in fields(event.get(5, b"")):
            entry = dict(fields(value))
            tag = entry.get(1, b"").decode()
            if 2 in entry:
                print("step %d %s simple_value %.6g" %
                      (step, tag, struct.unpack("<f", entry[2])[0]))
            if 8 in entry:
                tensor = dict(fields(entry[8]))
                plugin = dict(fields(dict(fields(entry.get(9, b""))).get(1, b"")))
                print("step %d %s tensor dtype %d %.6g plugin %s" %
                      (step, tag, tensor.get(1, 0),
                       struct.unpack("<f", tensor[4])[0],
                       plugin.get(1, b"").decode()))
