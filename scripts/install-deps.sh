#!/usr/bin/env bash
# Installs the Debian packages Cleave builds and tests with. Idempotent: it
# only calls apt-get when something is missing.
set -euo pipefail
packages=(
  cmake ninja-build ccache clang-19 lld-19 libclang-rt-19-dev
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  libabsl-dev libprotobuf-dev protobuf-compiler
  libopenblas-pthread-dev libopenblas0-pthread libomp-19-dev libdnnl-dev
  libgtest-dev googletest python3 python3-numpy python3-torch
  libsnappy-dev zlib1g-dev dataset-fashion-mnist
  libgloo-dev  # collectives across train_and_evaluate's trainer processes
  libtcmalloc-minimal4 libjemalloc2  # the benchmarks' PyTorch peer preloads one
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
