#!/usr/bin/env bash
# Configures and builds Cleave in ${BUILD_DIR:-build} with clang-19 + Ninja.
# Extra arguments go to cmake (e.g. -DCLEAVE_ENABLE_SANITIZERS=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "$@" >/dev/null
ninja -C "$build"
