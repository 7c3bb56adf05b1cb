#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two arms of one smr_bench side by side: each a design with optional environment assignments
# (a flavor against another, or one design with a tuning variable set). The runs of a point back
# to back (a, then b), then the next point, R repetitions. Prints, per point, the medians of each
# arm and the median of the per-run ratios b / a (throughput and peak resident set), with how
# many runs had b >= a. bench/smr/ab_lib.sh is the same for two builds of the library. Run it on
# a quiet machine (../shared/tools/quiet -- ...).
#
#   bench/smr/ab_design.sh --a 'DESIGN [VAR=VALUE ...]' --b 'DESIGN [VAR=VALUE ...]'
#       [--build DIR] [--reps R] [--duration S] [--threads T] [--update U]
#
# Points: the hash table of 2^10, 2^16 and 2^20 keys, the BST of 2^10 and 2^16 keys and the list
# of 2^10 keys, at 50% updates (--update: another percentage), glibc. Examples:
#   bench/smr/ab_design.sh --a grace-retire --b grace-qsbr-retire --reps 5
#   bench/smr/ab_design.sh --a grace-retire --b 'grace-retire GRACE_STEP_GARBAGE=4096'
set -euo pipefail
a="" b="" build=build/rel reps=5 dur=0.8 thr=2 upd=50
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a=$2; shift 2 ;;
    --b) b=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    --threads) thr=$2; shift 2 ;;
    --update) upd=$2; shift 2 ;;
    -h|--help) sed -n '3,16p' "$0"; exit 0 ;;
    *) echo "ab_design.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$a" ] && [ -n "$b" ] || { echo "ab_design.sh: --a and --b are required" >&2; exit 2; }
exe=$build/bench/smr/smr_bench
[ -x "$exe" ] || { echo "ab_design.sh: $exe not found" >&2; exit 1; }
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
pts=("hash 65536" "hash 1024" "hash 1048576" "bst 1024" "bst 65536" "list 1024")
for r in $(seq 1 "$reps"); do
  for pt in "${pts[@]}"; do
    read -r ds range <<<"$pt"
    for arm in a b; do
      read -r -a words <<<"${!arm}"
      env "${words[@]:1}" "$exe" --design "${words[0]}" --ds "$ds" --range "$range" --update "$upd" \
        --threads "$thr" --duration "$dur" 2>/dev/null |
        awk -F, -v v=$arm -v r="$r" -v p="$ds/$range/u$upd/t$thr" \
          '$5 == "ops_per_s" || $5 == "peak_rss_mb" { print p "," v "," r "," $5 "," $6 }' >>"$csv"
    done
  done
done
python3 - "$csv" "$a" "$b" <<'PY'
import collections, csv, statistics as S, sys
d = collections.defaultdict(lambda: collections.defaultdict(dict))
for p, v, r, m, x in csv.reader(open(sys.argv[1])):
    d[(p, m)][v][r] = float(x)
print(f"| point | metric | a: {sys.argv[2]} | b: {sys.argv[3]} | b / a | runs with b >= a |")
print("|:---|:---|---:|---:|---:|---:|")
for (p, m), dv in sorted(d.items()):
    runs = sorted(set(dv["a"]) & set(dv["b"]))
    rs = [dv["b"][r] / dv["a"][r] for r in runs]
    print(f"| {p} | {m} | {S.median(dv['a'].values()):.4g} | {S.median(dv['b'].values()):.4g} | "
          f"{S.median(rs):.3f}x | {sum(x >= 1 for x in rs)} of {len(rs)} |")
PY
