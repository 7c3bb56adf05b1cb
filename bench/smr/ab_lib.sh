#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of libgrace side by side in bench/smr: one smr_bench binary, run against the library
# of --base and of --new by LD_LIBRARY_PATH (the binary's RUNPATH yields to it), with token-ebr
# beside as the yardstick. Points where the retire path's cost shows: the hash table of 2^16
# keys at 50% updates (1 and 2 threads, glibc; 2 threads under jemalloc), the BST of 2^16 keys
# and the list of 2^10 keys at 50% (2 threads). One process per run; the runs of a point back to
# back (base, new, token-ebr), then the next point, R repetitions. Prints, per point, the medians
# of the per-run ratios. Run it on a quiet machine (../shared/tools/quiet -- ...).
#
#   bench/smr/ab_lib.sh --base DIR --new DIR [--design NAME] [--reps R] [--duration S]
#
# DIR: a build directory (its src/libgrace.so.2 is used; --new's bench/smr/smr_bench runs both).
set -euo pipefail
base="" new="" design=grace-retire reps=7 dur=0.8
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --design) design=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    -h|--help) sed -n '3,13p' "$0"; exit 0 ;;
    *) echo "ab_lib.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$base" ] && [ -n "$new" ] || { echo "ab_lib.sh: --base and --new are required" >&2; exit 2; }
exe=$new/bench/smr/smr_bench
for f in "$exe" "$base/src/libgrace.so.2" "$new/src/libgrace.so.2"; do
  [ -e "$f" ] || { echo "ab_lib.sh: $f not found" >&2; exit 1; }
done
je=$(ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / && !f {print $NF; f = 1}')
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
pts=("hash 65536 50 1 -" "hash 65536 50 2 -" "bst 65536 50 2 -" "list 1024 50 2 -")
[ -n "$je" ] && pts+=("hash 65536 50 2 $je")
for r in $(seq 1 "$reps"); do
  for pt in "${pts[@]}"; do
    read -r ds range upd thr pre <<<"$pt"
    [ "$pre" = - ] && pre=""
    tag=$ds/$range/u$upd/t$thr/${pre:+jemalloc}; tag=${tag%/}
    for v in base new tebr; do
      d=$design lib=$new/src
      case $v in base) lib=$base/src ;; tebr) d=token-ebr ;; esac
      LD_LIBRARY_PATH=$lib LD_PRELOAD=$pre "$exe" --design "$d" --ds "$ds" --range "$range" \
        --update "$upd" --threads "$thr" --duration "$dur" 2>/dev/null |
        awk -F, -v v=$v -v r="$r" -v p="$tag" \
          '$5 == "ops_per_s" || $5 == "peak_rss_mb" { print p "," v "," r "," $5 "," $6 }' >>"$csv"
    done
  done
done
python3 - "$csv" "$design" <<'PY'
import collections, csv, statistics as S, sys
d = collections.defaultdict(lambda: collections.defaultdict(dict))
for p, v, r, m, x in csv.reader(open(sys.argv[1])):
    d[(p, m)][v][r] = float(x)
print(f"| point | metric | {sys.argv[2]} base | new | token-ebr | new / base | base / token-ebr | new / token-ebr |")
print("|:---|:---|---:|---:|---:|---:|---:|---:|")
for (p, m), dv in sorted(d.items()):
    runs = sorted(set(dv["base"]) & set(dv["new"]) & set(dv["tebr"]))
    med = {v: S.median(dv[v].values()) for v in dv}
    rat = lambda a, b: S.median(dv[a][r] / dv[b][r] for r in runs)
    print(f"| {p} | {m} | {med['base']:.4g} | {med['new']:.4g} | {med['tebr']:.4g} | "
          f"{rat('new', 'base'):.3f}x | {rat('base', 'tebr'):.3f}x | {rat('new', 'tebr'):.3f}x |")
PY
