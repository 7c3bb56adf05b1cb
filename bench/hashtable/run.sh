#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hash-table family of the benchmark report: runs hashbench's standard sweeps and writes
# DIR/hashtable.md (+ hashtable.csv, hashtable_summary.csv, hashtable.headlines.json, PNG plots).
#   bench/hashtable/run.sh [--out DIR] [--quick]   build dir from $GRACE_BUILD (default:
#                                                  build/bench); DIR defaults to $GRACE_BUILD/results
# Standard run: read-only at 1, 2, 4, 8 threads and update fractions 0.01..1 at 2 threads
# (0.2, 0.25, 0.3, 0.4, 0.5 around the seeds' crossover),
# every design, 5 interleaved repetitions of 0.15 s per point, then instruction counts under
# callgrind: about 3 minutes on a quiet 2-core machine.
# --quick: one 0.05 s run per point at a few points (seconds), to check that it all works.
# HB_REPS / HB_DURATION override the repetitions and the seconds per run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

exe=$build/bench/hashtable/hashbench
bench_need "$exe"
if [ $quick = 1 ]; then
  points=1:0,2:0,4:0,2:0.1,2:0.3,2:1
  reps=${HB_REPS:-1}
  duration=${HB_DURATION:-0.05}
else
  # 0.25 and 0.4 locate the crossover the seeds put at 0.2-0.5 (issue 13)
  points=1:0,2:0,4:0,8:0,2:0.01,2:0.03,2:0.1,2:0.2,2:0.25,2:0.3,2:0.4,2:0.5,2:1
  reps=${HB_REPS:-5}
  duration=${HB_DURATION:-0.15}
fi
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "hashtable: $reps x $duration s per point and design (load average $load)"
"$exe" --points "$points" --reps "$reps" --duration "$duration" --csv "$out/hashtable.csv"

# Instructions per read-only operation, one thread, under callgrind: repeatable where timings
# are not. The loop function alone is counted (--toggle-collect), callees included. grace srcu
# is left out: valgrind does not support rseq, so srcu would run its atomic fallback.
icsv=$out/hashtable_instr.csv
if command -v valgrind >/dev/null 2>&1; then
  if [ $quick = 1 ]; then
    idesigns="ideal grace-call grace-hazptr urcu-memb-lgpl"
  else
    idesigns="ideal grace-call grace-qsbr grace-hazptr urcu-memb urcu-memb-lgpl global-rwlock bucket-spinlock refcnt"
  fi
  echo "hashtable: instructions per lookup under callgrind ($(echo $idesigns | wc -w) designs)"
  tmp=$(mktemp -d)
  echo "design,update_fraction,ops,instructions,per_op" >"$icsv"
  for d in $idesigns; do
    sym=$("$exe" --symbol "$d" 2>/dev/null) || continue
    HB_WATCHDOG_S=0 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$sym" \
      "$exe" --designs "$d" --points 1:0 --reps 1 --duration 0.1 --csv "$tmp/cg.csv" \
      >/dev/null 2>&1 || { echo "hashtable: callgrind failed for $d" >&2; continue; }
    ops=$(tail -n 1 "$tmp/cg.csv" | cut -d, -f8)
    ir=$(awk '/^summary:/ {print $2; exit}' "$tmp/cg.out")
    [ -n "$ops" ] && [ "$ops" -gt 0 ] && [ -n "$ir" ] &&
      echo "$d,0,$ops,$ir,$(awk -v i="$ir" -v o="$ops" 'BEGIN {printf "%.2f", i / o}')" >>"$icsv"
  done
  rm -rf "$tmp"
else
  echo "hashtable: valgrind not found: no instruction counts" >&2
  rm -f "$icsv"
fi

cmd="$(bench_cmd bench/hashtable/run.sh) (hashbench --points $points --reps $reps --duration $duration)"
"$py" "$here/report.py" "${report_args[@]}" --csv "$out/hashtable.csv" --cmd "$cmd" \
  --load-before "$load"
