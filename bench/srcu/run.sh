#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# srcu read side: srcu_read_lock+unlock against grace's default flavor and against the same srcu
# algorithm with atomic increments, at 1 and 2 threads and 8 threads on the machine's CPUs
# (oversubscribed when the machine has fewer); plus the library's own fallback modes, and
# synchronize latency with 0, 1 and 2 busy readers. Runs are interleaved, medians reported.
#
#   bench/srcu/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/srcu.csv (rows: bench,design,threads,run,metric,value,unit), DIR/srcu.md (markdown
# fragment), DIR/srcu.headlines.json (its figures for the report's summary) and DIR/srcu.png. DIR defaults to $GRACE_BUILD/results. About 40 s (--quick: 15 s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/srcu/srcu_bench
abin=$build/bench/srcu/srcu_bench_a64 # same source, functions and loops 64-byte aligned
bench_need "$bin" "$abin"

if [ $quick = 1 ]; then runs=3; ms=40; sync_ms=100; else runs=7; ms=80; sync_ms=200; fi
csv=$out/srcu.csv
bench_csv_start "$csv"
mode=$("$bin" list | sed -n 's/^# srcu mode: //p')

echo "srcu: $runs interleaved rounds of lock+unlock pairs, $ms ms each (mode: $mode)" >&2
for run in $(seq 1 $runs); do
  for t in 1 2 8; do
    for d in srcu rcu srcu-atomic srcu-getcpu rseq-floor srcu-deref rcu-deref; do
      "$bin" pair --design $d --threads $t --ms $ms --run "$run" >>"$csv"
    done
    for d in srcu rcu rseq-floor; do
      "$abin" pair --design $d --as "$d@a64" --threads $t --ms $ms --run "$run" >>"$csv"
    done
    # The library's fallback modes (chosen at start-up): atomic counters without rseq, and
    # reader fences without membarrier. Both take the out-of-line path.
    GRACE_NO_RSEQ=1 "$bin" pair --design srcu --as srcu-norseq --threads $t --ms $ms --run "$run" >>"$csv"
    GRACE_NO_MEMBARRIER=1 "$bin" pair --design srcu --as srcu-fence --threads $t --ms $ms --run "$run" >>"$csv"
  done
done

echo "srcu: synchronize latency, $runs rounds" >&2
for run in $(seq 1 $runs); do
  for r in 0 1 2; do
    for d in srcu rcu; do
      "$bin" sync --design $d --readers $r --ms $sync_ms --run "$run" >>"$csv"
    done
  done
done

bench_csv_end "$csv"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --mode "$mode" \
  --cmd "$(bench_cmd bench/srcu/run.sh)"
echo "srcu: wrote $csv, $out/srcu.md, $out/srcu.png" >&2
