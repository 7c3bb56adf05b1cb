#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The EfficiOS 2019 rseq article reproduced: the CPU number by rseq load vs sched_getcpu() vs the vDSO vs the getcpu
# system call, and a per-CPU counter increment by rseq vs lock xadd (1 and 2 threads). Runs are
# interleaved (every design once per round, rounds repeated) and medians reported, with ratios.
#
#   bench/rseq/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/rseq.csv (rows: bench,design,threads,run,metric,value,unit), DIR/rseq.md (markdown
# fragment), DIR/rseq.headlines.json (its figures for the report's summary) and DIR/rseq.png. DIR defaults to $GRACE_BUILD/results. About 25 s (--quick: 8 s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/rseq/rseq_bench
bench_need "$bin"

if [ $quick = 1 ]; then runs=3; ms=30; else runs=7; ms=80; fi
csv=$out/rseq.csv
bench_csv_start "$csv"
mode=$("$bin" list | sed -n 's/^# rseq mode: //p')
# glibc without its rseq registration: sched_getcpu() is then the vDSO call (what the paper's
# "sched_getcpu" measured, before glibc 2.35); grace registers its own area instead.
norseq=GLIBC_TUNABLES=glibc.pthread.rseq=0

echo "rseq: $runs interleaved rounds, $ms ms per measurement (rseq area: $mode)" >&2
for run in $(seq 1 $runs); do
  for d in rseq sched_getcpu vdso syscall; do
    "$bin" cpu --design $d --ms $ms --run "$run" >>"$csv"
  done
  env $norseq "$bin" cpu --design sched_getcpu --as sched_getcpu-noglibcrseq --ms $ms --run "$run" >>"$csv"
  env $norseq "$bin" cpu --design rseq --as rseq-ownarea --ms $ms --run "$run" >>"$csv"
  for t in 1 2; do
    for d in rseq getcpu-xadd rseq-xadd; do
      "$bin" inc --design $d --threads $t --ms $ms --run "$run" >>"$csv"
    done
    env $norseq "$bin" inc --design getcpu-xadd --as getcpu-xadd-noglibcrseq --threads $t --ms $ms --run "$run" >>"$csv"
  done
done

bench_csv_end "$csv"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --mode "$mode" \
  --cmd "$(bench_cmd bench/rseq/run.sh)"
echo "rseq: wrote $csv, $out/rseq.md, $out/rseq.png" >&2
