#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Callback-engine benchmark: call_rcu enqueue cost (ns, instructions), callbacks per second with 1
# and 2 producers, enqueue-to-invoke latency of a lone callback (idle and under load) per policy,
# latency against offered load (the OLS 2002 Figures 9-10 analogue) and CPU overhead per policy
# (the FREENIX 2003 Table 3 analogue); grace against liburcu memb. Runs are interleaved (grace,
# liburcu, grace, liburcu, ...) so drift hits both alike; tables show medians.
#
#   bench/callbacks/run.sh [--out DIR] [--quick]
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/callbacks.csv (rows: bench,design,threads,run,metric,value,unit), DIR/callbacks.md
# (markdown fragment: tables with ratios to liburcu, the papers' figures beside ours),
# DIR/callbacks.headlines.json (its figures for the report's summary),
# DIR/callbacks_latency.png and DIR/callbacks_overhead.png. DIR defaults to $GRACE_BUILD/results.
# About 10 minutes (--quick: about 1 minute).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/callbacks/callbacks_bench
lib=$build/src/libgrace.so
bench_need "$bin" "$lib"

if [ $quick = 1 ]; then
  runs=2; lruns=1; enq_ms=100; tput_ms=200; lat_ms=500; sweep_ms=300; iters=20000
  rates="1000 100000 10000000"
else
  runs=5; lruns=5; enq_ms=100; tput_ms=250; lat_ms=500; sweep_ms=500; iters=50000
  rates="10 100 1000 10000 100000 1000000 10000000"
fi

bench_csv_raw callbacks

bench_designs "$bin"

# Throughput designs (default policy) and the policies compared for latency and overhead:
# name-in-csv and the arguments that select it.
tp_designs=(grace)
has urcu-memb && tp_designs+=(urcu-memb)
has urcu-memb-percpu && tp_designs+=(urcu-memb-percpu)
pol_names=(grace-adaptive grace-poll grace-batch10ms grace-batch1ms)
pol_args=("--design grace --policy adaptive" "--design grace --policy poll"
          "--design grace --policy batch --period-us 10000"
          "--design grace --policy batch --period-us 1000")
# The sweep (latency, CPU and wake-ups against offered load) also runs the lazy policy; the
# lone-callback latency runs do not (a lone callback waits its whole period, 1 s, by design).
# grace-lazy10ms-roomy: the same 10 ms lazy period with the callback limits raised to 10^6 per
# CPU (grace_rcu_set_callback_limits()), the setting for high rates: under the default limits
# (10^4 per CPU) a lazy domain with more than a quarter of its soft limit pending ends its lazy
# waits, so past about 5x10^5 callbacks/s it runs grace periods early, as memory pressure.
sw_names=("${pol_names[@]}" grace-lazy10ms grace-lazy1s grace-lazy10ms-roomy)
sw_args=("${pol_args[@]}" "--design grace --policy lazy --period-us 10000"
         "--design grace --policy lazy --period-us 1000000"
         "--design grace --policy lazy --period-us 10000 --soft 1000000")
# The baselines of the sweep: the same producer loop and reader with no call at all (the cost
# of callbacks is measured against it), and call_rcu_hurry() under the adaptive policy.
base_names=(grace-nocalls grace-adaptive-hurry)
base_args=("--design grace --no-calls" "--design grace --policy adaptive --hurry")
if has urcu-memb; then
  pol_names+=(urcu-memb)
  pol_args+=("--design urcu-memb")
  sw_names+=(urcu-memb)
  sw_args+=("--design urcu-memb")
  base_names+=(urcu-nocalls)
  base_args+=("--design urcu-memb --no-calls")
fi

echo "callbacks: enqueue cost and throughput, $runs interleaved runs" >&2
for run in $(seq 1 $runs); do
  for d in "${tp_designs[@]}"; do
    "$bin" enqueue --design "$d" --ms $enq_ms --run "$run" >>"$csv"
  done
  for p in 1 2; do
    for d in "${tp_designs[@]}"; do
      "$bin" tput --design "$d" --producers $p --ms $tput_ms --pool 262144 --run "$run" >>"$csv"
    done
  done
done
for run in $(seq 1 $lruns); do
  for p in 1 2; do
    for d in grace urcu-memb; do
      has "$d" || continue
      "$bin" tput --design "$d" --producers $p --ms $tput_ms --cb free --run "$run" >>"$csv"
    done
  done
done

echo "callbacks: instructions per call_rcu (callgrind; grace's rseq path counted statically)" >&2
if command -v valgrind >/dev/null; then
  for d in "${tp_designs[@]}"; do
    [ "$d" = urcu-memb-percpu ] && continue
    s=$(sym "$d")
    f=$raw/callgrind.$d.out
    if valgrind --tool=callgrind --toggle-collect="$s" --callgrind-out-file="$f" \
        "$bin" count --design "$d" --iters $iters >/dev/null 2>"$raw/callgrind.$d.log"; then
      # Under valgrind rseq(2) is unavailable: grace runs its fallback there (CAS push,
      # sched_getcpu), so its row is named for what it measured.
      as=$d
      [ "$d" = grace ] && as=grace-fallback
      awk -v as="$as" -v n=$iters '/^totals:/ { printf "instr,%s,1,0,ir_per_call,%.4f,instr\n", as, $2 / n }' \
        "$f" >>"$csv"
    else
      echo "run.sh: callgrind failed for $d (see $raw/callgrind.$d.log)" >&2
    fi
  done
else
  echo "run.sh: valgrind not found: no callgrind counts" >&2
fi
# grace's common path, statically: the bench loop's iteration (callgrind's count of the loop
# minus call_rcu's inclusive cost is the same for every design) plus the PLT stub plus
# grace_rcu_call() to its return with every branch on its likely side; the path is in the raw dir.
if "$py" "$here/pathcount.py" --bin "$lib" --func grace_rcu_call --trace >"$raw/path.grace.txt" 2>&1; then
  n=$(tail -1 "$raw/path.grace.txt")
  echo "instr,grace,1,0,ir_call_rcu_path,$((n + 1)),instr" >>"$csv"
else
  echo "run.sh: pathcount failed (see $raw/path.grace.txt)" >&2
fi
# liburcu's call_rcu, measured: callgrind's inclusive count of urcu_memb_call_rcu per call, plus
# the PLT stub (as for grace).
if [ -f "$raw/callgrind.urcu-memb.out" ] && command -v callgrind_annotate >/dev/null; then
  callgrind_annotate --inclusive=yes "$raw/callgrind.urcu-memb.out" 2>/dev/null |
    awk -v n=$iters '/urcu_memb_call_rcu \[/ { gsub(",", "", $1); printf "instr,urcu-memb,1,0,ir_call_rcu_path,%.4f,instr\n", $1 / n + 1; exit }' >>"$csv"
fi

echo "callbacks: lone-callback latency per policy, $lruns interleaved runs" >&2
for run in $(seq 1 $lruns); do
  for load in 0 1; do
    for i in "${!pol_names[@]}"; do
      # Idle: a lone callback, 2 ms after the last one ran (beyond the adaptive policy's
      # largest pace, 1 ms: nothing else is queued). Under load: 200 us apart, while a second
      # thread floods call_rcu.
      flag="--gap-us 2000"
      [ $load = 1 ] && flag="--load --gap-us 200"
      # shellcheck disable=SC2086
      "$bin" lat ${pol_args[$i]} --as "${pol_names[$i]}" --ms $lat_ms $flag --pool 262144 \
        --run "$run" --raw "$raw/lat.${pol_names[$i]}.$load.txt" >>"$csv"
    done
  done
done

echo "callbacks: latency, CPU and wake-ups against offered load ($rates cb/s), $lruns interleaved runs" >&2
for run in $(seq 1 $lruns); do
  for r in $rates; do
    # Long enough for 30 callbacks at low rates, and for three lazy periods under LAZY.
    ms=$(( sweep_ms > 30000 / r ? sweep_ms : 30000 / r ))
    for i in "${!sw_names[@]}"; do
      m=$ms
      case ${sw_names[$i]} in grace-lazy1s) m=$(( ms > 3000 ? ms : 3000 )) ;; esac
      # shellcheck disable=SC2086
      "$bin" sweep ${sw_args[$i]} --as "${sw_names[$i]}" --rate "$r" --ms $m \
        --run "$run" --raw "$raw/sweep.${sw_names[$i]}.$r.txt" >>"$csv"
    done
    for i in "${!base_names[@]}"; do
      # shellcheck disable=SC2086
      "$bin" sweep ${base_args[$i]} --as "${base_names[$i]}" --rate "$r" --ms $ms \
        --run "$run" --raw "$raw/sweep.${base_names[$i]}.$r.txt" >>"$csv"
    done
  done
  # The machine's own floor under a grace-period cycle (a wake-up, a membarrier), once a run
  # between the sweeps, so that it sees the same machine.
  "$bin" floor --run "$run" >>"$csv"
done

bench_csv_end "$csv"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --raw "$raw" \
  --cmd "$(bench_cmd bench/callbacks/run.sh)"
echo "callbacks: wrote $csv, $out/callbacks.md, $out/callbacks_latency.png, $out/callbacks_overhead.png, $out/callbacks_frontier.png" >&2
