#!/usr/bin/env bash
# Formats and lints the lines a change touches: clang-format (.clang-format)
# and clang-tidy (.clang-tidy) on the diff against BASE (default: the last
# commit), with the compile commands of build/. Not part of the test
# command: style is reviewed, not a CI gate.
#   scripts/lint.sh [BASE]        report
#   FIX=1 scripts/lint.sh [BASE]  apply clang-format's changes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-HEAD~1}
build=${BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-19
for tool in clang-format clang-tidy; do
  if [ ! -x "$llvm/bin/$tool" ]; then
    echo "lint.sh: $llvm/bin/$tool is missing: apt-get install clang-format-19 clang-tidy-19" >&2
    exit 2
  fi
done
cd "$root"
status=0
echo "== clang-format (lines changed since $base)"
if [ -n "${FIX:-}" ]; then
  git clang-format --binary "$llvm/bin/clang-format" "$base" -- '*.cpp' '*.h' || true
else
  diff=$(git clang-format --binary "$llvm/bin/clang-format" --diff "$base" -- '*.cpp' '*.h' || true)
  if [ -n "$diff" ] && [ "$diff" != "no modified files to format" ] &&
     ! grep -q "did not modify any files" <<<"$diff"; then
    echo "$diff"
    status=1
  fi
fi
echo "== clang-tidy (lines changed since $base)"
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint.sh: no $build/compile_commands.json: build first" >&2
  exit 2
fi
git diff -U0 "$base" -- '*.cpp' |
  python3 "$llvm/share/clang/clang-tidy-diff.py" -p1 -path "$build" \
    -clang-tidy-binary "$llvm/bin/clang-tidy" -quiet -j "$(nproc)" || status=1
exit $status
