#!/usr/bin/env python3
"""Checks Cleave's library layering on the link graph CMake wrote.

Each library sits on a layer (docs/Architecture.md, "Layers"); a library
may link libraries of its own layer or below, never above. The reference
interpreter is the oracle beside the runtime: nothing but the tools and
the tests may link it. Usage: check_layers.py <build>/cleave-link-graph.txt
"""
import sys

# Bottom to top; libraries on one line form one layer.
LAYERS = [
    ["CleaveSupport"],
    ["CleaveTensor"],
    ["CleaveRuntimeSupport"],
    ["CleaveProto", "CleaveOps", "CleaveCPUKernels"],
    ["CleaveGraphFormat", "CleaveGraphDialect"],
    ["CleaveGraphUtils"],
    ["CleaveGraphTransforms"],
    ["CleaveTranslateGraphDef", "CleaveTranslateDot"],
    ["CleaveGraphToLinalg"],
    ["CleaveCPUTarget", "CleaveAutoClustering"],
    ["CleaveAheadOfTime", "CleaveCheckpoint"],
    ["CleaveInterpreter"],
    ["CleaveRuntime"],
    ["CleaveInitAll"],
]
ORACLE = "CleaveInterpreter"

# Links the target architecture forbids but the code still has, each with
# what removes it. The check fails when one is gone too, so that this list
# only shrinks.
PENDING = {
    ("CleaveGraphToLinalg", "CleaveInterpreter"):
        "the lowering folds constants with the interpreter's kernels",
    ("CleaveRuntime", "CleaveInterpreter"):
        "compiled clusters run as the interpreter's CompiledCallHandler",
}


def main(path):
    graph = {}
    with open(path) as f:
        for line in f:
            name, _, deps = line.partition(":")
            graph[name.strip()] = deps.split()
    layer = {lib: i for i, libs in enumerate(LAYERS) for lib in libs}
    errors = []
    for lib in sorted(graph):
        if lib not in layer:
            errors.append(f"{lib} has no layer in {__file__}")
    seen_pending = set()
    for lib, deps in sorted(graph.items()):
        for dep in deps:
            if dep not in layer or lib not in layer:
                continue
            if (lib, dep) in PENDING:
                seen_pending.add((lib, dep))
                continue
            if dep == ORACLE:
                errors.append(f"{lib} links {dep}: only tools and tests may")
            elif layer[dep] > layer[lib]:
                errors.append(f"{lib} links {dep}, a library above it")
    for edge in sorted(set(PENDING) - seen_pending):
        errors.append(f"{edge[0]} no longer links {edge[1]}: remove it "
                      "from PENDING")
    for error in errors:
        print("error: " + error)
    if not errors:
        print(f"layering: {len(graph)} libraries, "
              f"{sum(len(d) for d in graph.values())} links, "
              f"{len(PENDING)} pending")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
