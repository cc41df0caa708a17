#!/usr/bin/env bash
# The main job, for now: import the bundled training graph, run a pass
# pipeline on it, print the result as MLIR and export it back to a GraphDef.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
bin=$build/bin
example=$root/examples/mlp-training-step.pbtxt
echo "== $example imported and canonicalized (graph-opt --pass-pipeline=...)"
"$bin/graph-opt" "$example" --pass-pipeline='builtin.module(cse)'
echo "== exported back to a GraphDef and compared with the original"
"$bin/graph-opt" "$example" --emit=pb -o "$build/mlp.pb"
"$bin/graph-diff" "$example" "$build/mlp.pb" && echo "identical GraphDef messages"
"$bin/graph-opt" "$example" --emit=dot -o "$build/mlp.dot"
echo "== Graphviz view written to $build/mlp.dot"
