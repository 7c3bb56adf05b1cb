#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GRACE_RETIRE_RUN's trade (docs/design.md, "The inline retire"): grace-retire with the default
# run (2) against GRACE_RETIRE_RUN=6, with ebr beside, 2 threads, on the points where it shows:
# peak resident set under glibc, throughput under glibc and jemalloc. One process per run; the
# designs of a point back to back, then the next point, R repetitions. Prints, per point, the
# medians of the per-run ratios. Run it on a quiet machine (../shared/tools/quiet -- ...).
#
#   bench/smr/ab_retire_run.sh [--build DIR] [--reps R]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/rel reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "ab_retire_run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
exe=$build/bench/smr/smr_bench
[ -x "$exe" ] || { echo "ab_retire_run.sh: $exe not found" >&2; exit 1; }
je=$(ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / && !f {print $NF; f = 1}')
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
pts=("hash 1048576 50 -" "bst 65536 5 -" "hash 65536 50 -")
[ -n "$je" ] && pts+=("hash 65536 50 $je")
for r in $(seq 1 "$reps"); do
  for pt in "${pts[@]}"; do
    read -r ds range upd pre <<<"$pt"
    [ "$pre" = - ] && pre=""
    tag=$ds/$range/u$upd/${pre:+jemalloc}; tag=${tag%/}
    for v in run6 run2 ebr; do
      d=grace-retire env=()
      case $v in run6) env=(GRACE_RETIRE_RUN=6) ;; ebr) d=ebr ;; esac
      env "${env[@]}" LD_PRELOAD=$pre "$exe" --design $d --ds "$ds" --range "$range" \
        --update "$upd" --threads 2 --duration 0.8 2>/dev/null |
        awk -F, -v v=$v -v r="$r" -v p="$tag" \
          '$5 == "ops_per_s" || $5 == "peak_rss_mb" { print p "," v "," r "," $5 "," $6 }' >>"$csv"
    done
  done
done
python3 - "$csv" <<'PY'
import collections, csv, statistics as S, sys
d = collections.defaultdict(lambda: collections.defaultdict(dict))
for p, v, r, m, x in csv.reader(open(sys.argv[1])):
    d[(p, m)][v][r] = float(x)
print("| point, 2 threads | metric | runs of 6 | runs of 2 | ebr | 2 / 6 | 6 / ebr | 2 / ebr |")
print("|:---|:---|---:|---:|---:|---:|---:|---:|")
for (p, m), dv in sorted(d.items()):
    runs = sorted(dv["run2"])
    med = {v: S.median(dv[v].values()) for v in dv}
    rat = lambda a, b: S.median(dv[a][r] / dv[b][r] for r in runs)
    print(f"| {p} | {m} | {med['run6']:.4g} | {med['run2']:.4g} | {med['ebr']:.4g} | "
          f"{rat('run2', 'run6'):.3f}x | {rat('run6', 'ebr'):.3f}x | {rat('run2', 'ebr'):.3f}x |")
PY
