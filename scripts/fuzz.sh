#!/usr/bin/env bash
# Runs each libFuzzer target on its seed corpus (fuzz/corpus/<target>/, and
# ../shared/corpus where it has inputs of that kind) for a while, and prints
# each target's coverage. Needs a build with -DCLEAVE_ENABLE_FUZZERS=ON.
#
#   scripts/fuzz.sh [--time SECONDS] [--build DIR] [--seed N] [target...]
#
# --seed fixes libFuzzer's random seed: the same mutations in the same order
# (CI, so that a run that passes here passes there; a slower machine runs a
# prefix of them). Without it each run draws its own.
#
# Defaults: 20 s a target (CI), every target, build-fuzz/. The corpus grows
# in a temporary copy; the repository's seeds stay as they are. A crash,
# leak, timeout or OOM fails the run and leaves its input in
# DIR/fuzz-artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
seconds=20
seed=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --seed) seed=(-seed="$2"); shift 2 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(graphdef-text graphdef-binary savedmodel checkpoint npy interpreter passes estimator)
shared="$root/../shared/corpus"
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for target in "${targets[@]}"; do
  binary="$build/bin/$target-fuzzer"
  if [ ! -x "$binary" ]; then
    echo "fuzz.sh: $binary is missing (configure with -DCLEAVE_ENABLE_FUZZERS=ON)" >&2
    exit 2
  fi
  work=$(mktemp -d)
  cp -r "$root/fuzz/corpus/$target/." "$work/"
  extra=()
  if [ -d "$shared" ]; then
    seeds=$(mktemp -d)
    case "$target" in
      graphdef-text) find "$shared" -name '*.pbtxt' -size -64k -exec cp -t "$seeds" {} + 2>/dev/null || true ;;
      interpreter|passes)
        # Every small text graph of the corpus and of the lit tests (the
        # targets take text GraphDefs of 8 KiB at most).
        for file in $(find "$shared" "$root/test" -name '*.pbtxt' -size -8k 2>/dev/null); do
          cp "$file" "$seeds/$(echo "$file" | md5sum | cut -c1-12).pbtxt"
        done ;;
      graphdef-binary) find "$shared" -name '*.pb' -size -64k ! -name 'saved_model.pb' -exec cp -t "$seeds" {} + 2>/dev/null || true ;;
      savedmodel) find "$shared/savedmodel" \( -name 'saved_model.pb' -o -name '*.meta' \) -exec sh -c 'cp "$1" "$2/$(echo "$1" | md5sum | cut -c1-12)"' _ {} "$seeds" \; 2>/dev/null || true ;;
      checkpoint)
        # TensorFlow's own checkpoints, packed as the target reads them.
        for index in "$shared"/savedmodel/*/*/variables/variables.index; do
          [ -f "$index" ] || continue
          python3 -c 'import struct,sys; i=open(sys.argv[1],"rb").read(); d=open(sys.argv[2],"rb").read(); open(sys.argv[3],"wb").write(struct.pack("<I",len(i))+i+d)' \
            "$index" "${index%.index}.data-00000-of-00001" "$seeds/$(echo "$index" | md5sum | cut -c1-12)"
        done ;;
    esac
    extra=("$seeds")
  fi
  # Text targets get the registry's tokens (graph-ops --fuzz-dictionary).
  dict=()
  case "$target" in
    graphdef-text|interpreter|passes)
      "$build/bin/graph-ops" --fuzz-dictionary > "$build/fuzz-graphdef.dict"
      dict=(-dict="$build/fuzz-graphdef.dict") ;;
  esac
  echo "== $target-fuzzer: $seconds s"
  log="$build/fuzz-$target.log"
  if "$binary" "${dict[@]}" "${seed[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
       -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$artifacts/$target-" "$work" "${extra[@]}" > "$log" 2>&1; then
    # "#<runs> DONE cov: <counters hit> ft: <features> corp: <inputs>/<bytes>"
    grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 || tail -3 "$log"
  else
    status=1
    echo "fuzz.sh: $target-fuzzer failed; its log is $log:" >&2
    # The report and the stack: what a CI log must hold to find the bug
    # without the artifact (a deadly signal's cause is printed before it).
    grep -v -E "^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)" "$log" | tail -60 >&2
  fi
  rm -rf "$work" "${extra[@]}"
done
exit $status
