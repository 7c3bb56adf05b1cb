#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The free_rcu family of the benchmark report (issue 13): memory under a flood of deferred
# frees from 2 threads, peak resident memory as the figure, grace's free_rcu against its own
# free_rcu_mightsleep and call_rcu and against liburcu's call_rcu and defer_rcu, each design in
# its own process (so each peak is its own), runs interleaved.
#   bench/free/run.sh [--out DIR] [--quick]   build dir from $GRACE_BUILD (default build/bench)
# Standard run (about 2 minutes): grace free_rcu for 60 s (the issue's flood), then every
# design for 5 s, twice, plain and with a reader that stalls grace periods for 1 s in every 2 s.
# --quick: 2 s runs, once. Writes DIR/free.csv, DIR/free.md, DIR/free.headlines.json.
# FF_LONG_S overrides the 60 s; with a report budget too short for it, the long run shrinks to
# what the budget allows and the report says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

exe=$build/bench/free/freeflood
bench_need "$exe"
if [ $quick = 1 ]; then
  long_s=${FF_LONG_S:-2}; short_s=2; reps=1
else
  long_s=${FF_LONG_S:-60}; short_s=5; reps=2
fi
mapfile -t designs < <("$exe" list | cut -f1)
nshort=$(( ${#designs[@]} * 2 * reps ))
left=$(bench_time_left)
need=$(( long_s + nshort * (short_s + 1) + 10 ))
if [ "$left" -lt "$need" ]; then
  long_s=$(( left - nshort * (short_s + 1) - 10 ))
  [ "$long_s" -ge 5 ] || long_s=5
  echo "free: the report's budget leaves ${left} s: the long flood runs ${long_s} s" >&2
fi
bench_csv_raw free
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "free: grace free_rcu flood, 2 threads, ${long_s} s (load average $load)"
"$exe" --design grace-free --threads 2 --seconds "$long_s" --run 0 --csv "$raw/long.csv" \
  2> >(tee -a "$raw/log.txt" >&2)
sed 's/^flood,/flood-long,/' "$raw/long.csv" >>"$csv"
echo "free: ${#designs[@]} designs x $reps x ${short_s} s, plain and with a stalling reader"
for ((r = 0; r < reps; r++)); do
  for d in "${designs[@]}"; do
    "$exe" --design "$d" --threads 2 --seconds "$short_s" --run "$r" --csv "$raw/short.csv" \
      2> >(tee -a "$raw/log.txt" >&2)
    "$exe" --design "$d" --threads 2 --seconds "$short_s" --run "$r" --stall-ms 1000 \
      --stall-every-ms 2000 --csv "$raw/stall.csv" 2> >(tee -a "$raw/log.txt" >&2)
  done
done
cat "$raw/short.csv" >>"$csv"
sed 's/^flood,/flood-stall,/' "$raw/stall.csv" >>"$csv"
bench_csv_end "$csv"
defer_args=()
if [ -x "$build/bench/free/defer_flood_grace" ]; then
  echo "free: defer_rcu(), grace-urcu against liburcu (bench/free/defer_flood.sh)"
  "$here/defer_flood.sh" --build "$build" --reps $(( quick ? 1 : 5 )) --out "$raw/defer.md"
  defer_args=(--defer-md "$raw/defer.md")
fi
cmd="$(bench_cmd bench/free/run.sh) (freeflood --threads 2: --seconds $long_s for grace-free, $short_s for each design, $reps runs)"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --cmd "$cmd" --long-s "$long_s" \
  "${defer_args[@]}"
