#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Scaling: how grace and liburcu behave as CPUs and threads are added. At 1, 2, ... up to the
# online CPU count (detected: nproc), then oversubscribed at twice that (labelled so):
#   readers     read-side lock+unlock pairs per second (readside_bench pair), grace and liburcu,
#               default flavor and QSBR;
#   hash        hash lookups at 0%, 10% and 30% updates (hashbench): grace, liburcu and the
#               locks (the report picks the best lock at each point);
#   semop       semopbench (ipc/bench's binary) with the thread list, RCU against the global lock;
#   sync        synchronize_rcu latency with every other CPU reading (readside_bench sync);
#   callrcu     call_rcu throughput with one producer per CPU (callbacks_bench tput);
#   membarrier  the cost of one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) against the number
#               of CPUs running a (spinning, pinned) thread of the process, and against sleeping
#               threads of the process (scalebench membarrier);
# and, at thread counts that need not match CPUs:
#   sweep       the registered-thread sweep: N threads each run one read-side section, then
#               sleep; the main thread times 2000 back-to-back synchronize calls (p50, p99), for
#               N = 1, 8, 64, 256, 1024, 4096: grace default against liburcu memb, grace QSBR
#               with offline threads against liburcu qsbr (scalebench sweep);
#   lifecycle   the cost of a thread's creation + first read-side section + exit (scalebench);
#   memory      the memory per registered thread (scalebench memory).
#
#   bench/scaling/run.sh [--out DIR] [--quick] [--budget S] [--only PHASE,...]
#                        [--threads LIST] [--sweep LIST] [--runs N]
#     --only      the phases to run (names above), e.g. --only sweep: the sweep alone
#     --threads   the CPU-count list (default: 1 2 3 4 6 8 12 16 24 32 ... up to nproc, then
#                 2 x nproc oversubscribed; --quick: 1, nproc, 2 x nproc); comma-separated
#     --sweep     the registered-thread counts (default 1,8,64,256,1024,4096)
#     --runs      interleaved runs per point (default 3; --quick 1)
#     --budget    seconds for the whole family (default 480, --quick 150; also from
#                 $GRACE_FAMILY_BUDGET_S): each phase gets a share, says up front when its
#                 points need more, and stops at its share, listing what it skipped
#
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench), e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench
# Writes DIR/scaling.csv (long format: bench,design,threads,run,metric,value,unit; hash points
# in DIR/scaling_hash.csv, hashbench's format), raw samples in DIR/scaling-raw/, DIR/scaling.md,
# DIR/scaling.headlines.json and DIR/scaling_*.png. Runs unchanged on any CPU count: pinning is
# guarded (a CPU that refuses is reported and the thread runs unpinned), and a thread count the
# machine cannot create is recorded as not measured.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
allow_extra=1
. "$here/../common/run-args.sh"

phases_all=(readers hash semop sync callrcu membarrier sweep lifecycle memory)
only=""
threads_opt=""
sweep_list="1,8,64,256,1024,4096"
runs=""
set -- "${extra_args[@]}"
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=${2:?--only needs a list}; shift 2 ;;
    --threads) threads_opt=${2:?--threads needs a list}; shift 2 ;;
    --sweep) sweep_list=${2:?--sweep needs a list}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    *) echo "scaling: unknown argument '$1' (see bench/scaling/run.sh --help)" >&2; exit 2 ;;
  esac
done
phases=()
if [ -n "$only" ]; then
  for p in ${only//,/ }; do
    case " ${phases_all[*]} " in
      *" $p "*) phases+=("$p") ;;
      *) echo "scaling: unknown phase '$p' (phases: ${phases_all[*]})" >&2; exit 2 ;;
    esac
  done
else
  phases=("${phases_all[@]}")
fi
want() { case " ${phases[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
is_count() { case "$1" in ''|*[!0-9]*|0) return 1 ;; esac; return 0; }

# ---- the machine and the thread lists -----------------------------------------------------------
ncpu=$(nproc) # CPUs this process may run on (the affinity mask), whatever the machine's size
over=$((2 * ncpu))
tlist=()
if [ -n "$threads_opt" ]; then
  for t in ${threads_opt//,/ }; do
    is_count "$t" || { echo "scaling: bad thread count '$t'" >&2; exit 2; }
    tlist+=("$t")
  done
elif [ "$quick" = 1 ]; then
  tlist=(1)
  [ "$ncpu" -gt 1 ] && tlist+=("$ncpu")
  tlist+=("$over")
else
  for t in 1 2 3 4 6 8 12 16 24 32 48 64 96 128 192 256 384 512 768 1024; do
    [ "$t" -lt "$ncpu" ] && tlist+=("$t")
  done
  tlist+=("$ncpu" "$over")
fi
slist=()
for n in ${sweep_list//,/ }; do
  is_count "$n" || { echo "scaling: bad sweep count '$n'" >&2; exit 2; }
  slist+=("$n")
done

if [ "$quick" = 1 ]; then
  runs=${runs:-1}; pair_ms=40; hash_s=0.05; semop_ms=60; sync_ms=100; tput_ms=80
  mb_samples=500; sweep_samples=2000; life_iters=300; mem_threads=256; total=150
else
  runs=${runs:-3}; pair_ms=100; hash_s=0.1; semop_ms=150; sync_ms=200; tput_ms=150
  mb_samples=2000; sweep_samples=2000; life_iters=2000; mem_threads=1024; total=480
fi
is_count "$runs" || { echo "scaling: bad --runs '$runs'" >&2; exit 2; }

rs=$build/bench/readside/readside_bench
hb=$build/bench/hashtable/hashbench
cb=$build/bench/callbacks/callbacks_bench
sb=$build/bench/scaling/scalebench
semop=$build/ipc/semopbench
bench_need "$sb"
want readers && bench_need "$rs"
want sync && bench_need "$rs"
want hash && bench_need "$hb"
want callrcu && bench_need "$cb"

if [ "$budget_s" -gt 0 ]; then total=$budget_s; fi

# Each phase's share of the budget (weights), among the phases selected.
declare -A weight=([readers]=10 [hash]=22 [semop]=8 [sync]=12 [callrcu]=10 [membarrier]=8
                   [sweep]=20 [lifecycle]=5 [memory]=5)
wsum=0
for p in "${phases[@]}"; do wsum=$((wsum + weight[$p])); done

bench_csv_raw scaling
hcsv=$out/scaling_hash.csv
rm -f "$hcsv"
echo "config,cpus,$ncpu,0,oversubscribed_threads,$over,count" >>"$csv"
echo "config,budget,0,0,total_s,$total,s" >>"$csv"
echo "scaling: $ncpu CPUs; thread counts ${tlist[*]} ($over oversubscribed); sweep ${slist[*]};" \
  "$runs run(s) per point; phases ${phases[*]}; budget $total s" >&2

# ---- budget and failure bookkeeping -------------------------------------------------------------
phase=""
phase_end=0
skipped=0
phase_begin() { # NAME POINTS SECONDS-PER-POINT
  phase=$1
  local share=$(( total * weight[$1] / wsum ))
  local left_all=$(( total - ($(date +%s) - t_begin) ))
  [ "$share" -gt "$left_all" ] && share=$left_all
  [ "$share" -lt 1 ] && share=1
  phase_end=$(( $(date +%s) + share ))
  skipped=0
  local need
  need=$(awk -v n="$2" -v s="$3" 'BEGIN { printf "%d", n * s + 0.5 }')
  if [ "$need" -gt "$share" ]; then
    echo "scaling: $1: $2 points need about $need s, more than its $share s: it stops at its" \
      "budget and lists what it skipped" >&2
  else
    echo "scaling: $1: $2 points, about $need s (budget $share s)" >&2
  fi
  echo "config,$1,0,0,budget_s,$share,s" >>"$csv"
}
phase_left() { echo $(( phase_end - $(date +%s) )); }
# point LABEL CMD...: run one measurement (stdout appended to the CSV) if the phase has time
# left; a failure is recorded and the phase goes on.
point() {
  local label=$1 left rc
  shift
  left=$(phase_left)
  if [ "$left" -le 0 ]; then
    skipped=$((skipped + 1))
    echo "budget,$phase,0,0,skipped,1,count" >>"$csv"
    echo "scaling: $phase: skipped $label (its time budget is spent)" >&2
    return 0
  fi
  set +e
  timeout --signal=INT --kill-after=5 $((left + 30)) "$@" >>"$csv"
  rc=$?
  set -e
  if [ "$rc" != 0 ]; then
    echo "fail,$phase,0,0,exit_status,$rc,code" >>"$csv"
    case $rc in
      3) echo "scaling: $phase: $label: the machine could not create the threads (see above)" >&2 ;;
      124) echo "scaling: $phase: $label: stopped at the phase's time budget" >&2 ;;
      *) echo "scaling: $phase: $label: failed (exit $rc)" >&2 ;;
    esac
  fi
}
phase_end_note() {
  [ "$skipped" -gt 0 ] && echo "scaling: $phase: $skipped point(s) skipped: over its time budget" >&2
  echo "scaling: $phase done ($(( $(date +%s) - t_begin )) s so far)" >&2
}
allt=("${tlist[@]}")

# ---- phases ---------------------------------------------------------------------------------------
designs=()
[ -x "$rs" ] && bench_designs "$rs" # readside_bench's designs, for the readers and sync phases

if want readers; then
  ds=()
  for d in grace urcu-memb grace-qsbr urcu-qsbr; do has "$d" && ds+=("$d"); done
  phase_begin readers $(( runs * ${#allt[@]} * ${#ds[@]} )) "$(awk -v m=$pair_ms 'BEGIN { print m / 1000 + 0.05 }')"
  for r in $(seq 1 "$runs"); do
    for t in "${allt[@]}"; do
      for d in "${ds[@]}"; do
        point "$d at $t threads" "$rs" pair --design "$d" --threads "$t" --ms $pair_ms --run "$r"
      done
    done
  done
  phase_end_note
fi

if want hash; then
  hds=ideal,grace-call,urcu-memb-lgpl,bucket-spinlock,bucket-rwlock,brlock
  phase_begin hash $(( runs * ${#allt[@]} )) "$(awk -v s=$hash_s 'BEGIN { print 18 * (s + 0.02) }')"
  first=1
  for r in $(seq 1 "$runs"); do
    for t in "${allt[@]}"; do
      tmp=$raw/hash.$t.$r.csv
      point "hash lookups at $t threads" "$hb" --designs "$hds" --points "$t:0,$t:0.1,$t:0.3" \
        --reps 1 --duration "$hash_s" --seed "$r" --csv "$tmp"
      if [ -s "$tmp" ]; then
        if [ $first = 1 ]; then head -n 1 "$tmp" >"$hcsv"; first=0; fi
        tail -n +2 "$tmp" >>"$hcsv"
      fi
      rm -f "$tmp"
    done
  done
  phase_end_note
fi

if want semop; then
  if [ -x "$semop" ]; then
    # semopbench takes at most 16 thread counts of at most 64 threads each: keep those.
    st=()
    for t in "${allt[@]}"; do [ "$t" -le 64 ] && [ ${#st[@]} -lt 16 ] && st+=("$t"); done
    [ ${#st[@]} -lt ${#allt[@]} ] &&
      echo "scaling: semop: semopbench takes 16 counts of at most 64 threads: ${st[*]}" >&2
    per=$(awk -v n=${#st[@]} -v ms=$semop_ms 'BEGIN { print n * 2 * (ms / 1000 + 0.05) }')
    phase_begin semop "$runs" "$per"
    for r in $(seq 1 "$runs"); do
      list=$(IFS=,; echo "${st[*]}")
      point "semopbench, threads $list" "$semop" --mode own --threads "$list" --ms $semop_ms \
        --runs 1
    done
    phase_end_note
  else
    echo "scaling: semop: $semop not built: skipped" >&2
    echo "fail,semop,0,0,not_built,1,bool" >>"$csv"
  fi
fi

if want sync; then
  ds=()
  for d in grace urcu-memb; do has "$d" && ds+=("$d"); done
  phase_begin sync $(( runs * ${#allt[@]} * ${#ds[@]} )) "$(awk -v m=$sync_ms 'BEGIN { print m / 1000 + 0.1 }')"
  for r in $(seq 1 "$runs"); do
    for t in "${allt[@]}"; do
      for d in "${ds[@]}"; do
        point "$d synchronize with $((t - 1)) readers" "$rs" sync --design "$d" \
          --readers $((t - 1)) --ms $sync_ms --max 20000 --run "$r" --raw "$raw/sync.$d.$t.txt"
      done
    done
  done
  phase_end_note
fi

if want callrcu; then
  mapfile -t cds < <("$cb" list | cut -f1)
  phase_begin callrcu $(( runs * ${#allt[@]} * ${#cds[@]} )) "$(awk -v m=$tput_ms 'BEGIN { print m / 1000 + 0.2 }')"
  for r in $(seq 1 "$runs"); do
    for t in "${allt[@]}"; do
      for d in "${cds[@]}"; do
        point "$d call_rcu with $t producers" "$cb" tput --design "$d" --producers "$t" \
          --ms $tput_ms --pool 65536 --run "$r"
      done
    done
  done
  phase_end_note
fi

if want membarrier; then
  ks=()
  if [ "$quick" = 1 ]; then
    ks=(0)
    [ "$ncpu" -gt 1 ] && ks+=($((ncpu - 1)))
  else
    for k in $(seq 0 $((ncpu - 1))); do ks+=("$k"); done
  fi
  ks+=($((over - 1)))
  sleepers=(64 1024)
  phase_begin membarrier $(( runs * (${#ks[@]} + ${#sleepers[@]}) )) 0.3
  for r in $(seq 1 "$runs"); do
    for k in "${ks[@]}"; do
      point "membarrier with $k spinning threads" "$sb" membarrier --spinners "$k" \
        --samples $mb_samples --budget-s 20 --run "$r" --raw "$raw/membarrier.spin.$((k + 1)).txt"
    done
    for m in "${sleepers[@]}"; do
      point "membarrier with $m sleeping threads" "$sb" membarrier --sleepers "$m" \
        --samples $mb_samples --budget-s 20 --run "$r" --raw "$raw/membarrier.sleep.$m.txt"
    done
  done
  phase_end_note
fi

mapfile -t sds_all < <("$sb" list | cut -f1)
# grace-nopark is the sweep's alone (parking off, to show what parking saves).
mapfile -t sds < <(printf '%s\n' "${sds_all[@]}" | grep -vx grace-nopark)
if want sweep; then
  ds=()
  for d in grace grace-nopark urcu-memb grace-qsbr urcu-qsbr; do
    case " ${sds_all[*]} " in *" $d "*) ds+=("$d") ;; esac
  done
  phase_begin sweep $(( runs * ${#slist[@]} * ${#ds[@]} )) 0.6
  for r in $(seq 1 "$runs"); do
    for n in "${slist[@]}"; do
      for d in "${ds[@]}"; do
        left=$(phase_left)
        # grace-nopark: the library reads GRACE_NO_PARK at start-up.
        point "$d sweep at $n threads" env GRACE_NO_PARK=$([ "$d" = grace-nopark ] && echo 1 || echo 0) \
          "$sb" sweep --design "$d" --threads "$n" \
          --samples $sweep_samples --budget-s $(( left > 1 ? left : 1 )) --run "$r" \
          --raw "$raw/sweep.$d.$n.txt"
      done
    done
  done
  phase_end_note
fi

if want lifecycle; then
  phase_begin lifecycle $(( runs * ${#sds[@]} )) "$(awk -v n=$life_iters 'BEGIN { print n * 0.0001 + 0.1 }')"
  for r in $(seq 1 "$runs"); do
    for d in "${sds[@]}"; do
      left=$(phase_left)
      point "$d thread lifecycle" "$sb" lifecycle --design "$d" --iters $life_iters \
        --budget-s $(( left > 1 ? left : 1 )) --run "$r" --raw "$raw/lifecycle.$d.1.txt"
    done
  done
  phase_end_note
fi

if want memory; then
  phase_begin memory $(( runs * ${#sds[@]} )) 0.5
  for r in $(seq 1 "$runs"); do
    for d in "${sds[@]}"; do
      point "$d memory per thread" "$sb" memory --design "$d" --threads $mem_threads --run "$r"
    done
  done
  phase_end_note
fi

bench_csv_end "$csv"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --raw "$raw" --hash-csv "$hcsv" \
  --cmd "$(bench_cmd bench/scaling/run.sh)$([ -n "$only" ] && echo " --only $only")"
echo "scaling: wrote $csv, $out/scaling.md" >&2
