#!/usr/bin/env python3
"""Checks Cleave's library layering on the link graph CMake wrote.

Each library sits on a layer (docs/Architecture.md, "Layers"); a library
may link libraries of its own layer or below, never above, and only the
runtime links the executor. Usage: check_layers.py <build>/cleave-link-graph.txt
"""
import sys

# Bottom to top; libraries on one line form one layer. The reference
# interpreter (the kernels and the executor) sits beneath everything that
# compiles, so that the oracle never runs code it is meant to check.
LAYERS = [
    ["CleaveSupport"],
    ["CleaveTensor"],
    ["CleaveRuntimeSupport"],
    ["CleaveProto", "CleaveOps", "CleaveCPUKernels", "CleaveCheckpoint",
     "CleaveProcessGroup"],
    ["CleaveGraphFormat", "CleaveGraphDialect"],
    ["CleaveGraphUtils"],
    ["CleaveGraphTransforms"],
    ["CleaveKernels"],
    ["CleaveExecutor"],
    ["CleaveTranslateGraphDef", "CleaveTranslateDot"],
    ["CleaveGraphToLinalg"],
    ["CleaveCPUTarget", "CleaveAutoClustering"],
    ["CleaveAheadOfTime"],
    ["CleaveRuntime"],
    ["CleaveEstimator"],
    ["CleaveInitAll"],
]

# The executor runs graphs; of the libraries, only the runtime may drive it
# (the lowering folds constants with the kernels' own ConstantEvaluator).
EXECUTOR = "CleaveExecutor"
EXECUTOR_USERS = {"CleaveRuntime"}


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
    for lib, deps in sorted(graph.items()):
        for dep in deps:
            if dep not in layer or lib not in layer:
                continue
            if dep == EXECUTOR and lib not in EXECUTOR_USERS:
                errors.append(f"{lib} links {dep}: only the runtime, tools "
                              "and tests may")
            elif layer[dep] > layer[lib]:
                errors.append(f"{lib} links {dep}, a library above it")
    for error in errors:
        print("error: " + error)
    if not errors:
        print(f"layering: {len(graph)} libraries, "
              f"{sum(len(d) for d in graph.values())} links")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
