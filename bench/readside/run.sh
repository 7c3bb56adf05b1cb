#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Read-side benchmark: lock+unlock cost (ns per pair, 1 and 2 threads; instructions per pair under
# callgrind) and synchronize latency (p50/p99 with 0, 1 and 8 busy readers), grace against
# liburcu. Runs are interleaved (grace, liburcu, grace, liburcu, ...) so drift hits both alike.
#
#   bench/readside/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/readside.csv (rows: bench,design,threads,run,metric,value,unit), DIR/readside.md (a
# markdown fragment: tables of medians and ratios), DIR/readside.headlines.json (its figures for
# the report's summary) and DIR/readside.png. DIR defaults to
# $GRACE_BUILD/results. About 60 s on an idle 2-CPU machine, up to 90 s under load (--quick:
# 20-40 s).
# Read side: 7 runs per design (--quick: 3); synchronize: 5 runs per scenario (--quick: 3); on a
# busy machine a phase that overruns its budget (40 s, 35 s) stops after 3 and 2 runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/readside/readside_bench
sbin=$build/bench/readside/readside_bench_static
bench_need "$bin" "$sbin"

if [ $quick = 1 ]; then
  runs=3; sync_runs=3; pair_ms=20; sync_ms=150; sync_over_ms=400; iters=100000
  pair_budget=15; sync_budget=12; min_runs=2
else
  runs=7; sync_runs=5; pair_ms=25; sync_ms=250; sync_over_ms=700; iters=200000
  pair_budget=40; sync_budget=35; min_runs=3
fi
sync_max=20000

bench_csv_raw readside

# Designs this build has (the liburcu peers are absent when liburcu-dev was not found).
bench_designs "$bin"

# The pair designs: every design of the main binary, plus grace with the fence fallback
# (GRACE_NO_MEMBARRIER=1) and grace linked statically.
pair_one() { # run threads
  local d
  for d in "${designs[@]}"; do
    "$bin" pair --x8 --design "$d" --threads "$2" --ms $pair_ms --run "$1" >>"$csv"
  done
  GRACE_NO_MEMBARRIER=1 "$bin" pair --x8 --design grace --as grace-fence --threads "$2" \
    --ms $pair_ms --run "$1" >>"$csv"
  "$sbin" pair --x8 --design grace --as grace-static --threads "$2" --ms $pair_ms --run "$1" \
    >>"$csv"
}

t0=$SECONDS

echo "readside: lock+unlock pairs, $runs interleaved runs x {1,2} threads" >&2
for run in $(seq 1 $runs); do
  for t in 1 2; do
    pair_one "$run" "$t"
  done
  # A heavily loaded machine stretches every process start: keep whole rounds, but stop
  # after min_runs once the phase's budget is spent (the report says how many runs it used).
  if [ "$run" -ge $min_runs ] && [ $((SECONDS - t0)) -ge $pair_budget ] && [ "$run" -lt $runs ]; then
    echo "readside: machine busy, $run runs instead of $runs" >&2
    break
  fi
done

echo "readside: ... $((SECONDS - t0)) s" >&2
t0=$SECONDS
echo "readside: instructions per pair under callgrind ($iters pairs)" >&2
count_one() { # name-in-csv binary design [env...]
  local as=$1 b=$2 d=$3
  shift 3
  local s f
  s=$(sym "$d")
  f=$raw/callgrind.$as.out
  if ! env "$@" valgrind --tool=callgrind --toggle-collect="$s" --callgrind-out-file="$f" \
      "$b" count --design "$d" --iters $iters >/dev/null 2>"$raw/callgrind.$as.log"; then
    echo "run.sh: callgrind failed for $as (see $raw/callgrind.$as.log)" >&2
    return 0
  fi
  awk -v as="$as" -v n=$iters \
    '/^totals:/ { printf "instr,%s,1,0,ir_per_pair,%.4f,instr\n", as, $2 / n }' \
    "$f" >>"$csv"
}
if command -v valgrind >/dev/null; then
  for d in "${designs[@]}"; do
    count_one "$d" "$bin" "$d"
  done
  count_one grace-fence "$bin" grace GRACE_NO_MEMBARRIER=1
  count_one grace-static "$sbin" grace
else
  echo "run.sh: valgrind not found: no instruction counts" >&2
fi

echo "readside: ... $((SECONDS - t0)) s" >&2
t0=$SECONDS
echo "readside: synchronize latency, $sync_runs interleaved runs" >&2
sync_designs="grace urcu-memb"
has urcu-memb || sync_designs="grace"
qsbr_pairs="grace-qsbr urcu-qsbr"
has urcu-qsbr || qsbr_pairs="grace-qsbr"
for run in $(seq 1 $sync_runs); do
  for readers in 0 1 8; do
    ms=$sync_ms
    [ $readers -ge "$(nproc)" ] && ms=$sync_over_ms
    for d in $sync_designs; do
      "$bin" sync --design "$d" --readers $readers --ms $ms --max $sync_max --run "$run" \
        --raw "$raw/sync.$d.$readers.txt" >>"$csv"
    done
  done
  for readers in 0 1; do
    for d in $qsbr_pairs; do
      "$bin" sync --design "$d" --readers $readers --ms $sync_ms --max $sync_max --run "$run" \
        --raw "$raw/sync.$d.$readers.txt" >>"$csv"
    done
  done
  if [ "$run" -ge $((min_runs - 1)) ] && [ $((SECONDS - t0)) -ge $sync_budget ] &&
     [ "$run" -lt $sync_runs ]; then
    echo "readside: machine busy, $run synchronize runs instead of $sync_runs" >&2
    break
  fi
done

echo "readside: ... $((SECONDS - t0)) s" >&2
bench_csv_end "$csv"

urcu_v=$(pkg-config --modversion liburcu-memb 2>/dev/null || echo "?")
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --raw "$raw" --urcu "$urcu_v" \
  --cmd "$(bench_cmd bench/readside/run.sh)"
echo "readside: wrote $csv, $out/readside.md, $out/readside.png" >&2
