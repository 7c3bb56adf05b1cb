#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static analysis of the component's sources with clang's analyzer (inter-procedural, loops
# unrolled once: a few seconds a file; two files at a time). Fails on any finding.
# It is the regression test of issue 11's scan-build finding: set_lock() could return success
# without filling its output and a caller used the output (the analyzer reports that code at
# this setting; the lookup helpers now fill their output on every path).
#   analyze.sh CLANG SRC_DIR INCLUDE_DIR...
set -euo pipefail
clang=$1
src=$2
shift 2
incs=()
for d in "$@"; do incs+=("-I$d"); done
export clang src
export incs_joined="${incs[*]}"
one() {
  # shellcheck disable=SC2086
  out=$("$clang" --analyze -D_GNU_SOURCE $incs_joined -I"$src" \
        -Xanalyzer -analyzer-max-loop -Xanalyzer 1 -Xanalyzer -analyzer-output=text \
        "$1" -o /dev/null 2>&1) || { echo "$out"; return 1; }
  if grep -q "warning:" <<<"$out"; then echo "$out"; return 1; fi
}
export -f one
n=$(ls "$src"/*.c | wc -l)
if ls "$src"/*.c | xargs -n1 -P2 bash -c 'one "$0"'; then
  echo "analyze.sh: $n files, no finding"
else
  echo "analyze.sh: findings above" >&2
  exit 1
fi
