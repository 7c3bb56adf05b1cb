#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The System V IPC family: global lock (Linux 2.5.42) against RCU (ipc-rcu, seed 000 section 4).
#  semopbench  semaphore operations per second on 1, 2, 4 and 8 threads, in three modes: each
#              thread on its own set; all threads on one shared set; own sets while another
#              thread creates and removes sets (the ID array grows under the lookups);
#  msgbench    message round trips between thread pairs (1, 2, 4 pairs), each pair on its own
#              queue (blocking receives); and sends + receives on own queues without sleeping
#              (1, 2, 4, 8 threads).
# Both implementations run in one process, interleaved, median of repeated runs, ratio at
# every thread count. Also instructions per semop and per msgsnd + msgrcv on one thread
# (callgrind), when valgrind is installed.
#
#   ipc/bench/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && ninja -C build/bench
# Writes DIR/semop.csv (rows: bench,design,threads,run,metric,value,unit), DIR/semop.md (a
# markdown fragment: medians, spread, RCU/global ratios beside the paper's 11x), DIR/semop.png,
# DIR/msg.png, DIR/msg_own.png and DIR/ipc_ratio.png. DIR defaults to $GRACE_BUILD/results. About 70 s
# (--quick: about 20 s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../bench/common/run-args.sh"

bin=$build/ipc/semopbench
mbin=$build/ipc/msgbench
for b in "$bin" "$mbin"; do
  if [ ! -x "$b" ]; then
    echo "run.sh: $b not found; build first:" >&2
    echo "  cmake -S . -B ${GRACE_BUILD:-build/bench} -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && ninja -C ${GRACE_BUILD:-build/bench}" >&2
    exit 1
  fi
done
py=/usr/bin/python3
[ -x "$py" ] || py=python3

if [ $quick = 1 ]; then
  runs=2; ms=100; count=100000
else
  runs=5; ms=250; count=400000
fi

csv=$out/semop.csv
raw=$out/semop-raw
rm -rf "$raw"
mkdir -p "$raw"
echo "bench,design,threads,run,metric,value,unit" >"$csv"
echo "machine,$(uname -r),$(nproc),0,load1,$(cut -d' ' -f1 /proc/loadavg),load" >>"$csv"
t_begin=$(date +%s)

echo "semop: $runs interleaved runs x {own,shared,churn} x {1,2,4,8} threads x {global,rcu}, ${ms} ms each" >&2
"$bin" --mode all --threads 1,2,4,8 --ms "$ms" --runs "$runs" >>"$csv"
echo "msg: $runs interleaved runs x {pingpong: 1,2,4 pairs; own: 1,2,4,8 threads} x {global,rcu}, ${ms} ms each" >&2
"$mbin" --mode all --pairs 1,2,4 --threads 1,2,4,8 --ms "$ms" --runs "$runs" >>"$csv"

if command -v valgrind >/dev/null; then
  echo "semop, msg: instructions per semop and per msgsnd + msgrcv under callgrind (one thread)" >&2
  for impl in global rcu; do
    f=$raw/callgrind.$impl.out
    if valgrind --tool=callgrind --toggle-collect=semop_count_loop --callgrind-out-file="$f" \
        "$bin" --count "$count" --impl "$impl" >/dev/null 2>"$raw/callgrind.$impl.log"; then
      awk -v d="$impl" -v n="$count" \
        '/^totals:/ { printf "semop-instr,%s,1,0,ir_per_op,%.4f,instr\n", d, $2 / n }' "$f" >>"$csv"
    else
      echo "run.sh: callgrind failed for $impl (see $raw/callgrind.$impl.log)" >&2
    fi
    f=$raw/callgrind-msg.$impl.out
    if valgrind --tool=callgrind --toggle-collect=msg_count_loop --callgrind-out-file="$f" \
        "$mbin" --count "$((count / 4))" --impl "$impl" >/dev/null 2>"$raw/callgrind-msg.$impl.log"; then
      awk -v d="$impl" -v n="$((count / 4))" \
        '/^totals:/ { printf "msg-instr,%s,1,0,ir_per_op,%.4f,instr\n", d, $2 / n }' "$f" >>"$csv"
    else
      echo "run.sh: callgrind failed for msgbench $impl (see $raw/callgrind-msg.$impl.log)" >&2
    fi
  done
else
  echo "run.sh: valgrind not found: no instruction counts" >&2
fi

echo "machine,$(uname -r),$(nproc),1,load1,$(cut -d' ' -f1 /proc/loadavg),load" >>"$csv"
echo "machine,$(uname -r),$(nproc),0,elapsed_s,$(( $(date +%s) - t_begin )),s" >>"$csv"

"$py" "$here/report.py" --csv "$csv" --out "$out" --build "$build" \
  --cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  --cmd "ipc/bench/run.sh$([ $quick = 1 ] && echo ' --quick')"
echo "semop, msg: wrote $csv, $out/semop.md, $out/semop.png, $out/msg.png, $out/msg_own.png, $out/ipc_ratio.png" >&2
