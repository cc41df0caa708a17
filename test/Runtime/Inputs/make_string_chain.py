"""Writes a graph of N interpreted nodes in a chain: AsString and
StringLength in turn from an int32 placeholder x (neither lowers to the
CPU, so each is a step of the host program)."""
import sys

n = int(sys.argv[1])
print('node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }')
prev = "x"
for i in range(n // 2):
    print(f'node {{ name: "s{i}" op: "AsString" input: "{prev}" '
          f'attr {{ key: "T" value {{ type: DT_INT32 }} }} }}')
    print(f'node {{ name: "n{i}" op: "StringLength" input: "s{i}" }}')
    prev = f"n{i}"
