#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seed 004 reproduced: the CPU number by rseq load vs sched_getcpu() vs the vDSO vs the getcpu
# system call, and a per-CPU counter increment by rseq vs lock xadd (1 and 2 threads). Runs are
# interleaved (every design once per round, rounds repeated) and medians reported, with ratios.
#
#   bench/rseq/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/rseq.csv (rows: bench,design,threads,run,metric,value,unit), DIR/rseq.md (markdown
# fragment) and DIR/rseq.png. DIR defaults to $GRACE_BUILD/results. About 25 s (--quick: 8 s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/rseq/rseq_bench
if [ ! -x "$bin" ]; then
  echo "run.sh: $bin not found; build first:" >&2
  echo "  cmake -S . -B ${GRACE_BUILD:-build/bench} -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C ${GRACE_BUILD:-build/bench}" >&2
  exit 1
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3

if [ $quick = 1 ]; then runs=3; ms=30; else runs=7; ms=80; fi
csv=$out/rseq.csv
echo "bench,design,threads,run,metric,value,unit" >"$csv"
load0=$(cut -d' ' -f1 /proc/loadavg)
t_begin=$(date +%s)
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

echo "machine,$(uname -r),$(nproc),0,load1,$load0,load" >>"$csv"
echo "machine,$(uname -r),$(nproc),1,load1,$(cut -d' ' -f1 /proc/loadavg),load" >>"$csv"
echo "machine,$(uname -r),$(nproc),0,elapsed_s,$(( $(date +%s) - t_begin )),s" >>"$csv"

"$py" "$here/report.py" --csv "$csv" --out "$out" --mode "$mode" \
  --cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  --cmd "bench/rseq/run.sh$([ $quick = 1 ] && echo ' --quick')"
echo "rseq: wrote $csv, $out/rseq.md, $out/rseq.png" >&2
