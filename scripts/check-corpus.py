#!/usr/bin/env python3
"""Checks every GraphDef of a corpus against what its MANIFEST.tsv expects.

A graph TensorFlow imports must import, export to a GraphDef equal to the
original (graph-diff: field by field, node order kept), and give the same
bytes again after export -> import -> export, in text and binary form. A
graph TensorFlow rejects at import must be rejected with a diagnostic naming
the node and the problem; EXPECTATIONS below gives the text we require and the
extra flags (TensorFlow's own tests pass options such as output arrays).

Usage: check-corpus.py --corpus DIR --tools DIR [--work DIR]
Prints one line per file and a closing 'N passed, N failed' line.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

# file-name fragment -> (extra import flags, substring our error must contain)
REJECTIONS = {
    "graph-malformed.pbtxt": ([], "Error parsing Protobuf"),
    "graph-undefined-output.pbtxt": (
        ["--graphdef-output-arrays=NotANodeInTheGraph"],
        "Output NotANodeInTheGraph was not found in graph"),
    "invalid-output-index.pbtxt": (
        ["--graphdef-output-arrays=input:1"],
        "Invalid output index 1 specified for node: input"),
    "invalid_duplicated_node_name.pbtxt": (
        [], "Duplicated node (or function argument) with the same name: `y` "
            "when importing function DuplicatedName"),
    "invalid_edge_name.pbtxt": ([], "Node 'const2' has no output called 'invalid'"),
    "invalid_op_name.pbtxt": ([], "has an empty op type"),
    "invalid_empty_op_type.pbtxt": ([], "Node 'value': has an empty op type"),
    "invalid_missing_control_input.pbtxt": (
        [], "Non-existent input ^case/cond/cond/Merge in node "
            "ConstantFolding/case/cond/cond/Merge_const"),
    "invalid_type_list.pbtxt": ([], "Expected 'Tout' to be a list of types"),
    "invalid_backedge_input_size.pbtxt": ([], "Type attr not found"),
}

# Files whose TensorFlow failure happens after import (shape inference, the
# TFLite converter): Cleave imports them losslessly like TensorFlow's
# importer does; the later stage is checked by the tests of that stage.
LATER_STAGE = ("control_flow_v1.pbtxt", "test_error_message.lit.pbtxt",
               "error-message-with-source-info.pbtxt")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, timeout=120)


def check_roundtrip(tools, path, work):
    tr = os.path.join(tools, "graph-translate")
    diff = os.path.join(tools, "graph-diff")
    mlir = os.path.join(work, "a.mlir")
    r = run([tr, "--import-graphdef", path, "-o", mlir])
    if r.returncode != 0:
        return "import failed: " + r.stderr.decode(errors="replace").strip()
    outs = {}
    for fmt, flags in (("pbtxt", []), ("pb", ["--graphdef-binary"])):
        out = os.path.join(work, "b." + fmt)
        r = run([tr, "--export-graphdef", *flags, mlir, "-o", out])
        if r.returncode != 0:
            return "export failed: " + r.stderr.decode(errors="replace").strip()
        r = run([diff, path, out])
        if r.returncode != 0:
            return ("export (%s) differs from the original:\n" % fmt +
                    r.stdout.decode(errors="replace"))
        # export -> import -> export must reproduce the bytes.
        again_mlir = os.path.join(work, "c.mlir")
        again = os.path.join(work, "c." + fmt)
        r = run([tr, "--import-graphdef", out, "-o", again_mlir])
        if r.returncode != 0:
            return "re-import failed: " + r.stderr.decode(errors="replace")
        r = run([tr, "--export-graphdef", *flags, again_mlir, "-o", again])
        if r.returncode != 0:
            return "re-export failed: " + r.stderr.decode(errors="replace")
        with open(out, "rb") as f1, open(again, "rb") as f2:
            if f1.read() != f2.read():
                return "export -> import -> export (%s) is not byte-identical" % fmt
        outs[fmt] = out
    return None


def check_rejection(tools, path, flags, expected):
    tr = os.path.join(tools, "graph-translate")
    r = run([tr, "--import-graphdef", *flags, path, "-o", os.devnull])
    err = r.stderr.decode(errors="replace")
    if r.returncode == 0:
        return "was accepted, but TensorFlow rejects it"
    if r.returncode < 0:
        return "crashed (signal %d)" % -r.returncode
    if expected not in err:
        return "rejected, but without '%s':\n%s" % (expected, err)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tools", required=True)
    args = ap.parse_args()
    manifest = os.path.join(args.corpus, "MANIFEST.tsv")
    passed = failed = 0
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    with tempfile.TemporaryDirectory() as work:
        for row in rows:
            name = row["local_file"]
            path = os.path.join(args.corpus, name)
            if name.endswith(".debug"):
                continue  # a GraphDebugInfo side file, not a GraphDef
            rejection = next((v for k, v in REJECTIONS.items()
                              if name.endswith(k)), None)
            if rejection:
                problem = check_rejection(args.tools, path, *rejection)
                what = "rejected"
            else:
                problem = check_roundtrip(args.tools, path, work)
                what = "round-trips"
                if any(name.endswith(k) for k in LATER_STAGE):
                    what += " (TF rejects it after import)"
            if problem:
                failed += 1
                print("FAIL %s: %s" % (name, problem))
            else:
                passed += 1
                print("ok   %s: %s" % (name, what))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
