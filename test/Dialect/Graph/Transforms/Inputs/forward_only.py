"""Prints a text GraphDef without its training step: the nodes named
gradients/... and GradientDescent... that tf.compat.v1's minimize() added."""
import re
import sys

text = open(sys.argv[1]).read()
for block in re.split(r"(?m)^(?=node \{)", text):
    name = re.search(r'name: "([^"]*)"', block)
    if block.startswith("node {") and name and (
            name.group(1).startswith("gradients/")
            or name.group(1).startswith("GradientDescent")):
        continue
    sys.stdout.write(block)
