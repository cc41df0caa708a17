#!/usr/bin/env bash
# Trains the Fashion-MNIST MLP with its step replicated over two replicas,
# gradients all-reduced, each replica's loss formatted on the host, and
# checks it against one replica over the same global batches, and the
# compiled replicated run against the interpreted one; then evaluates the
# trained model on the test images.
#
#   examples/fashion-mnist/run.sh [BUILD_DIR] [OUT_DIR] [STEPS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The build directory defaults to the checkout's, wherever this runs from.
build=${1:-$here/../../build}
out=${2:-$(mktemp -d)}
steps=${3:-100}
bin=$build/bin
if [[ ! -x $bin/graph-run ]]; then
  echo "run.sh: no graph-run in $bin: build Cleave first (scripts/build.sh)," \
       "or give the build directory as the first argument" >&2
  exit 1
fi
echo "run.sh: writing the graphs, data and logs to $out"
/usr/bin/python3 "$here/prepare.py" --out "$out" --steps "$steps"
common=(--init init --feed "x_all=@$out/x.npy"
        --feed "labels_all=@$out/y.npy" --target GradientDescent
        --steps "$steps")
# CrossShardOptimizer around SGD for the replicated step; plain SGD for the
# oracle.
"$bin/graph-opt" "$out/replicated.pbtxt" --graph-infer-shapes \
  --graph-minimize="loss=model/loss cross-replica learning-rate=0.1 global-step=step" \
  --emit=pbtxt -o "$out/replicated-train.pbtxt"
"$bin/graph-opt" "$out/single.pbtxt" --graph-infer-shapes \
  --graph-minimize="loss=model/loss learning-rate=0.1 global-step=step" \
  --emit=pbtxt -o "$out/single-train.pbtxt"
"$bin/graph-run" "$out/replicated-train.pbtxt" "${common[@]}" \
  --backend=interpreter --fetch output0:0 --fetch output0:1 \
  > "$out/replicated.out" 2> "$out/replicated.log"
"$bin/graph-run" "$out/replicated-train.pbtxt" "${common[@]}" \
  --backend=cpu --fetch output0:0 --fetch output0:1 \
  --save "$out/model/mlp" > "$out/compiled.out" 2> "$out/compiled.log"
"$bin/graph-run" "$out/single-train.pbtxt" "${common[@]}" \
  --backend=interpreter --fetch model/loss > "$out/single.out"
echo "host log lines: $(grep -c '^replica loss: ' "$out/replicated.log")" \
  "interpreted, $(grep -c '^replica loss: ' "$out/compiled.log") compiled"
/usr/bin/python3 "$here/compare.py" "$out/single.out" "$out/replicated.out" \
  --compiled "$out/compiled.out"
# The trained variables (the compiled replicated run's checkpoint) on the
# 10,000 test images.
accuracy=$("$bin/graph-run" "$out/eval.pbtxt" --restore "$out/model" \
  --feed "x=@$out/x_test.npy" --feed "labels=@$out/y_test.npy" \
  --fetch accuracy)
echo "test accuracy after $steps steps: ${accuracy##* } on 10000 images"
