# SPDX-License-Identifier: MIT
# Shared argument handling of the benchmark families' run.sh scripts (sourced, not run).
#   run.sh [--out DIR] [--quick]; build directory from $GRACE_BUILD (default build/bench).
# Sets: root, build, out (absolute, created), quick (0/1). --help prints the calling script's
# header comment. Expects `here` (the calling script's folder) to be set.
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
case "$build" in /*) ;; *) build=$root/$build ;; esac
out=""
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (usage: run.sh [--out DIR] [--quick])" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || out=$build/results
mkdir -p "$out"
out=$(cd "$out" && pwd)
