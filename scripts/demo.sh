#!/usr/bin/env bash
# The main job, for now: import the bundled training graph, infer its shapes,
# export it back losslessly, and run three training steps with the reference
# interpreter.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
bin=$build/bin
example=$root/examples/mlp-training-step.pbtxt
echo "== $example imported, shapes inferred (graph-opt --graph-infer-shapes)"
"$bin/graph-opt" "$example" --pass-pipeline='builtin.module(graph-infer-shapes)'
echo "== exported back to a GraphDef and compared with the original"
"$bin/graph-opt" "$example" --emit=pb -o "$build/mlp.pb"
"$bin/graph-diff" "$example" "$build/mlp.pb" && echo "identical GraphDef messages"
"$bin/graph-opt" "$example" --emit=dot -o "$build/mlp.dot"
echo "== Graphviz view written to $build/mlp.dot"
echo "== three training steps on a fixed batch (graph-run)"
batch=$(python3 -c "print('[' + ','.join(['[' + ','.join(['0.01'] * 784) + ']'] * 2) + ']')")
"$bin/graph-run" "$example" --init init --feed "x=$batch" --feed "labels=[3,7]" \
  --fetch Mean --fetch global_step --target GradientDescent --steps 3
