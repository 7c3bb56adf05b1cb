#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the library's own threads spend while one thread frees objects at a moderate, steady
# rate (docs/design.md, section 7, "Patient monitors"): grace's rcu_retire() against liburcu's
# defer_rcu(free, p), at 10 to 10000 objects a second, runs interleaved.
#
#   bench/free/retire_idle.sh [--build DIR] [--reps R] [--seconds S]
#
# Columns, medians of R runs: the CPU time of every thread but the freeing one (grace's
# callback workers, liburcu's defer thread), ms per second; their voluntary context switches
# (wake-ups) per second; and for grace, the default flavor's callbacks (the free monitors) and
# grace periods per second. A quiet machine: ../shared/tools/quiet -- bench/free/retire_idle.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
reps=3 seconds=2
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--reps R] [--seconds S]" >&2; exit 2 ;;
	esac
done
g=$build/bench/free/retire_idle_grace u=$build/bench/free/retire_idle_urcu
[ -x "$g" ] || { echo "retire_idle: $g not built (cmake --build $build)" >&2; exit 1; }
designs=("$g")
[ -x "$u" ] && designs+=("$u")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for ((i = 0; i < reps; i++)); do
	for r in 10 100 1000 10000; do
		for d in "${designs[@]}"; do "$d" --rate "$r" --seconds "$seconds" >>"$tmp"; done
	done
done
python3 - "$tmp" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.strip().split(',')
    rows[(f[0], int(f[1]))].append(f[2:])
def med(v, i):
    xs = [float(x[i]) for x in v if x[i] != '']
    return statistics.median(xs) if xs else None
print('| rate (objects/s) | design | helper CPU (ms/s) | helper wake-ups/s | callbacks/s | grace periods/s |')
print('|---:|:---|---:|---:|---:|---:|')
for (d, r) in sorted(rows, key=lambda k: (k[1], k[0])):
    v = rows[(d, r)]
    cb, gp = med(v, 2), med(v, 3)
    print(f'| {r} | `{d}` | {med(v, 0):.3f} | {med(v, 1):.1f} | '
          f'{"-" if cb is None else f"{cb:.1f}"} | {"-" if gp is None else f"{gp:.1f}"} |')
PY
