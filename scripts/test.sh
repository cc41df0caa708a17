#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every lit and
# GoogleTest test. Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh" "$@"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$build/test"
(cd "$build" && ctest --output-on-failure)
