#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where should free_rcu() free? (issue 13, item 2.) The hash-table benchmark's update mix at 2
# threads, with the old element retired four ways:
#   caller   grace-free: free_rcu(); the updater frees ready objects at later calls, as it allocates
#            (the library's default);
#   worker   grace-free with GRACE_FREE_WORKER=1: free_rcu() queues the object's rcu_head on the
#            callback engine (offset in place of a function), the worker of the CPU frees it;
#   call     grace-call: call_rcu() with a free() callback, for reference;
#   leak     never-free: the old element is leaked (the PPoPP 2024 reference).
#
#   bench/hashtable/free_where.sh [--build DIR] [--out DIR] [--points 2:0.1,2:0.5]
#                                 [--callgrind] [--timing [--reps N] [--duration S]]
#
# --callgrind (the default): instructions per operation of the whole process (every thread:
#   benchmark threads, the library's workers), and the simulated first-level data cache and
#   last-level misses per operation (valgrind --tool=callgrind --cache-sim=yes), split into
#   the benchmark threads and the library's worker threads. Repeatable on a busy machine.
#   (valgrind has no rseq: the engine pushes with its compare-and-swap fallback there.)
# --timing: operations per second (wall and per CPU-second), the four ways interleaved in
#   every repetition (default 11 x 0.5 s), medians and ratios. Run it on a quiet machine:
#   ../shared/tools/quiet -- bench/hashtable/free_where.sh --timing
# Writes DIR/free_where_callgrind.csv and/or DIR/free_where_timing.csv and prints markdown.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
out=""
points=2:0.1,2:0.5
do_cg=0 do_time=0 reps=11 duration=0.5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --callgrind) do_cg=1; shift ;;
    --timing) do_time=1; shift ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    -h|--help) sed -n '3,22p' "$0"; exit 0 ;;
    *) echo "free_where.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $do_cg = 1 ] || [ $do_time = 1 ] || do_cg=1
case "$build" in /*) ;; *) build=$root/$build ;; esac
exe=$build/bench/hashtable/hashbench
[ -x "$exe" ] || { echo "free_where.sh: $exe not found (build the hashbench target)" >&2; exit 1; }
out=${out:-$build/results}
mkdir -p "$out"
py=/usr/bin/python3
[ -x $py ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# way -> design and environment
ways=(caller worker call leak)
design_of() { case $1 in caller|worker) echo grace-free ;; call) echo grace-call ;; leak) echo never-free ;; esac; }
env_of() { case $1 in worker) echo GRACE_FREE_WORKER=1 ;; *) echo GRACE_FREE_WORKER=0 ;; esac; }

if [ $do_cg = 1 ]; then
  command -v valgrind >/dev/null || { echo "free_where.sh: valgrind not found" >&2; exit 1; }
  cg=$out/free_where_callgrind.csv
  echo "way,design,point,ops,thread_kind,instructions,d1_misses,ll_misses" >"$cg"
  for pt in ${points//,/ }; do
    for w in "${ways[@]}"; do
      d=$(design_of $w)
      rm -f "$tmp"/cg.out*
      echo "free_where: callgrind $w ($d) at $pt" >&2
      env "$(env_of $w)" valgrind --tool=callgrind --cache-sim=yes --separate-threads=yes \
        --callgrind-out-file="$tmp/cg.out" "$exe" --designs "$d" --points "$pt" --reps 1 \
        --duration 2 --csv "$tmp/run.csv" >/dev/null 2>"$tmp/vg.log" ||
        { echo "free_where: callgrind failed for $w:" >&2; tail -n 5 "$tmp/vg.log" >&2; continue; }
      ops=$(tail -n 1 "$tmp/run.csv" | awk -F, '{ print $8 + $9 }')
      # One file per thread: benchmark threads run hb_thread_*, the library's workers
      # worker_main, the rest is the main thread (set-up, settle).
      for f in "$tmp"/cg.out-*; do
        kind=main
        if grep -q 'worker_main' "$f"; then kind=worker
        elif grep -q 'hb_thread_' "$f"; then kind=bench
        fi
        # summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw (events line gives the order)
        awk -v way=$w -v d=$d -v pt=$pt -v ops=$ops -v kind=$kind '
          /^events:/ { for (i = 2; i <= NF; i++) ev[$i] = i - 1 }
          /^(summary|totals):/ && !done {
            ir = $(ev["Ir"] + 1); d1 = $(ev["D1mr"] + 1) + $(ev["D1mw"] + 1)
            ll = $(ev["DLmr"] + 1) + $(ev["DLmw"] + 1)
            printf "%s,%s,%s,%s,%s,%s,%s,%s\n", way, d, pt, ops, kind, ir, d1, ll; done = 1 }
        ' "$f" >>"$cg"
      done
    done
  done
  "$py" - "$cg" <<'EOF'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
agg = defaultdict(lambda: defaultdict(float))
ops = {}
for r in rows:
    k = (r["point"], r["way"])
    ops[k] = float(r["ops"])
    kinds = [r["thread_kind"]] + (["all"] if r["thread_kind"] != "main" else [])
    for kind in kinds:
        for m in ("instructions", "d1_misses", "ll_misses"):
            agg[k][(kind, m)] += float(r[m])
print("Per operation (callgrind; all = the 2 benchmark threads and the library's callback "
      "workers, the main thread's set-up left out; D1, LL: simulated data-cache misses):\n")
print("| point | way | ops | instr/op | bench instr/op | worker instr/op | D1 miss/op | "
      "bench D1/op | worker D1/op | LL miss/op |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (pt, w), a in sorted(agg.items(), key=lambda kv: (kv[0][0], ["caller", "worker", "call",
                                                                 "leak"].index(kv[0][1]))):
    n = ops[(pt, w)] or 1
    f = lambda kind, m: "%.1f" % (a[(kind, m)] / n)
    print("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
        pt, w, n, f("all", "instructions"), f("bench", "instructions"),
        f("worker", "instructions"), f("all", "d1_misses"), f("bench", "d1_misses"),
        f("worker", "d1_misses"), f("all", "ll_misses")))
EOF
fi

if [ $do_time = 1 ]; then
  tc=$out/free_where_timing.csv
  echo "way,design,point,rep,mops,mops_cpu" >"$tc"
  echo "free_where: timing, $reps x $duration s per way and point, interleaved (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for ((r = 0; r < reps; r++)); do
    for pt in ${points//,/ }; do
      order=("${ways[@]}")
      # rotate the order each repetition so that no way always runs first
      for ((k = 0; k < r % 4; k++)); do order=("${order[@]:1}" "${order[0]}"); done
      for w in "${order[@]}"; do
        d=$(design_of $w)
        env "$(env_of $w)" "$exe" --designs "$d,bucket-spinlock" --points "$pt" --reps 1 \
          --duration "$duration" --seed $((r + 1)) --csv "$tmp/t.csv" 2>/dev/null
        awk -F, -v w=$w -v pt=$pt -v r=$r 'NR > 1 {
          name = ($1 == "bucket-spinlock") ? "spin@" w : w
          printf "%s,%s,%s,%d,%s,%s\n", name, $1, pt, r, $11, $14 }' "$tmp/t.csv" >>"$tc"
      done
    done
  done
  "$py" - "$tc" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
v = defaultdict(list)
for r in rows:
    v[(r["point"], r["way"], "wall")].append(float(r["mops"]))
    v[(r["point"], r["way"], "cpu")].append(float(r["mops_cpu"]))
med = {k: statistics.median(x) for k, x in v.items()}
pts = sorted({k[0] for k in med})
print("\nOperations, M/s at 2 threads, median of interleaved runs (wall; per CPU-second x "
      "threads), with ratios to the per-bucket spinlock run beside each and to the leak:\n")
print("| point | way | wall | CPU | / spinlock (wall) | / spinlock (CPU) | / leak (wall) | "
      "/ leak (CPU) |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for pt in pts:
    for w in ("caller", "worker", "call", "leak"):
        if (pt, w, "wall") not in med:
            continue
        c = [med[(pt, w, m)] for m in ("wall", "cpu")]
        s = [med.get((pt, "spin@" + w, m), float("nan")) for m in ("wall", "cpu")]
        lk = [med.get((pt, "leak", m), float("nan")) for m in ("wall", "cpu")]
        print("| %s | %s | %.2f | %.2f | %.2fx | %.2fx | %.2fx | %.2fx |" % (
            pt, w, c[0], c[1], c[0] / s[0], c[1] / s[1], c[0] / lk[0], c[1] / lk[1]))
EOF
fi
