#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every lit and
# GoogleTest test. Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# Each stage prints its wall time, so that a slow stage shows in CI's log.
stage() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "test.sh: $name took $((SECONDS - start)) s"
}
stage build "$root/scripts/build.sh" "$@"
stage lit python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$build/test"
# GoogleTest cases are independent processes: one per core.
stage ctest bash -c "cd '$build' && ctest --output-on-failure -j$(nproc)"
