#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one headless deferred free costs the thread that makes it (issue 31, item 1): grace's
# rcu_retire() (inline), rcu_retire_fn() and free_rcu_mightsleep() against liburcu's
# defer_rcu(free, p), and free(p) at once as the floor, counted by callgrind.
#
#   bench/free/retire_cost.sh [--build DIR] [--out DIR] [--n N] [--reps R]
#
# For each design, N x R objects are allocated and handed over by one noinline function per
# object (retire_cost.c), then the design's barrier waits until all are freed. Columns:
#   fast_path   rcu_retire's inline fast path, x86-64 instructions from the measured
#               function's entry to its first return, its own frame left out (what a caller
#               that inlines it executes), from the disassembly (grace's retires only);
#   self        instructions executed in the measured function itself, per call (the inline
#               code of every call, fast or not), from callgrind;
#   slow_share  the share of calls that went out of line (grace);
#   in_call     instructions per call inside the measured function and everything it calls:
#               the library's out-of-line work and the frees it performs on this thread;
#   process     instructions per object of the whole process (every thread: the library's
#               workers, liburcu's defer thread), minus the floor's (free at once);
#   library     instructions per object in grace's own code (every function of src/ and of
#               include/grace/, the inline fast path included, on any thread), the frees left
#               out (grace only).
# Instruction counts do not depend on the load: run anywhere. But valgrind runs one thread at a
# time, so when grace periods end, and so how many frees a call performs (in_call) and how long
# a waiting thread spins (process), varies from run to run; fast_path, self and slow_share do
# not, and library moves by a few tenths: the column to compare two builds of grace by.
# Writes DIR/retire_cost.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
out="" n=100000 reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '3,28p' "$0"; exit 0 ;;
    *) echo "retire_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
exe=$build/bench/free/retire_cost
[ -x "$exe" ] || { echo "retire_cost.sh: $exe not found (build the retire_cost target)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "retire_cost.sh: valgrind not found" >&2; exit 1; }
out=${out:-$build/results}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=$((n * reps))

# shellcheck source=../../scripts/callgrind-fn.sh
. "$root/scripts/callgrind-fn.sh"

designs=(free grace-retire grace-retire-fn grace-free-ms)
"$exe" urcu-defer 1 1 >/dev/null 2>&1 && designs+=(urcu-defer)
csv=$out/retire_cost.csv
echo "design,objects,fast_path,self,slow_share,in_call,process,library" >"$csv"
floor=0
for d in "${designs[@]}"; do
  case $d in
    free) fn=rc_free ;; grace-retire) fn=rc_grace_retire ;; grace-retire-fn) fn=rc_grace_retire_fn ;;
    grace-free-ms) fn=rc_grace_free_ms ;; urcu-defer) fn=rc_urcu_defer ;;
  esac
  echo "retire_cost: callgrind $d" >&2
  rm -f "$tmp"/cg.out*
  valgrind --tool=callgrind --separate-threads=no --compress-strings=no --compress-pos=no \
    --callgrind-out-file="$tmp/cg.out" "$exe" "$d" "$n" "$reps" >/dev/null 2>"$tmp/vg.log" ||
    { echo "retire_cost: callgrind failed for $d:" >&2; tail -n 5 "$tmp/vg.log" >&2; continue; }
  tot=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null |
    awk '/PROGRAM TOTALS/ && t == "" { t = $1; gsub(",", "", t) } END { print t + 0 }')
  self=$(cg_fn_count "$tmp/cg.out" "$fn" self)
  incl=$(cg_fn_count "$tmp/cg.out" "$fn" inclusive)
  fp="" slow="" lib=""
  case $d in grace-*)
    # The library's own functions: those whose file lies under src/ or include/grace/ of
    # this tree (callgrind names each piece of inlined code by its file).
    # callgrind_annotate names files under its working directory relative to it: run there.
    lib=$(cd "$root" && callgrind_annotate --auto=no --threshold=100 --inclusive=no "$tmp/cg.out" 2>/dev/null |
      awk -v r="$root/" '$1 ~ /^[0-9,]+$/ {
          for (i = 2; i < NF; i++) if ($i ~ /%\)$/) break
          w = $(i + 1)
          if (index(w, r) == 1) w = substr(w, length(r) + 1)
          if (index(w, "src/") == 1 || index(w, "include/grace/") == 1) {
            c = $1; gsub(",", "", c); s += c } }
        END { print s + 0 }') ;;
  esac
  case $d in grace-retire*)
    fp=$(cg_straight_path "$exe" "$fn" | cg_fast_count)
    slow=$(cg_calls_out "$tmp/cg.out" "$fn") ;;
  esac
  share=""
  [ -n "$slow" ] && share=$(awk -v s="$slow" -v t=$total 'BEGIN { printf "%.3f", s / t }')
  per() { awk -v a="$1" -v t=$total 'BEGIN { printf "%.1f", a / t }'; }
  [ $d = free ] && floor=$(per "$tot")
  proc=$(awk -v a="$tot" -v t=$total -v f="$floor" 'BEGIN { printf "%.1f", a / t - f }')
  [ -n "$lib" ] && lib=$(per "$lib")
  echo "$d,$total,$fp,$(per "$self"),$share,$(per "$incl"),$proc,$lib" >>"$csv"
done
echo
echo "| design | fast path | self / call | out of line | in the call / call | process / object, over free() | library / object |"
echo "|---|---:|---:|---:|---:|---:|---:|"
tail -n +2 "$csv" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, ($3 == "" ? "-" : $3), $4, ($5 == "" ? "-" : $5), $6, $7, ($8 == "" ? "-" : $8) }'
echo
echo "(instructions, callgrind; $total objects each; $csv)"
