#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The safe-memory-reclamation family of the benchmark report (issue 31): lock-free structures (a
# Harris-Michael list, a hash table of such lists, the Natarajan-Mittal BST) under every
# reclaimer smr_bench offers (none, EBR, token-EBR, liburcu, grace), as in the reclamation
# literature (DEBRA; "Are Your Epochs Too Epic?", PPoPP 2024). Each run is a process of its own
# (its peak resident set is its own); runs are interleaved (every design at a point, then the
# next point; every repetition visits every point), figures are medians.
#   bench/smr/run.sh [--out DIR] [--quick] [--budget S]   build dir from $GRACE_BUILD
#                                                         (default build/bench)
# Then the stalled-reader runs (issue 34): grace-hazptr, grace-retire, grace-call, urcu-call
# and ebr on the hash table, 100% updates, one reader stalled for the whole run (smr_bench
# --stall; SMR_STALL_DURATION, default 1.5 s, 0.5 with --quick), plotted in smr_stall.png.
# Standard run (about 25 minutes on 2 CPUs): 5% and 50% updates; threads 1, 2, 4, ... up to the
# CPU count, then twice the CPU count (oversubscribed) for the list (range 2^10), the hash table
# and the BST (2^16); ranges 2^10 and 2^20 for the hash table and the BST, and 2^7 for the list,
# at as many threads as CPUs; the BST and the hash table at 2^16, 50% updates, once more under
# jemalloc and mimalloc (LD_PRELOAD of Debian's libjemalloc2 / libmimalloc2.0, when installed).
# 5 repetitions of 0.8 s (3 left a cell to two runs the host slowed, bench/smr/about.md). --quick: a few points at small ranges, 0.25 s, once (about a minute).
# SMR_REPS, SMR_DURATION override the repetitions and seconds; SMR_ALLOCS the allocators of the
# allocator comparison (default "jemalloc mimalloc", those present). With --budget (or under
# scripts/report.sh) a run that would not fit gets fewer repetitions, then shorter runs.
# Writes DIR/smr.csv, DIR/smr.md, DIR/smr.headlines.json, DIR/smr_*.png, DIR/smr-raw/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

exe=$build/bench/smr/smr_bench
bench_need "$exe"
ncpu=$(nproc)

# The thread counts: powers of two below the CPU count, the CPU count, then twice it.
threads_sweep() {
  local t=1 out=""
  while [ "$t" -lt "$ncpu" ]; do out="$out $t"; t=$((t * 2)); done
  echo "$out $ncpu $((ncpu * 2))"
}

# The allocators: glibc always; the others when their shared object is installed.
# awk reads ldconfig's whole output: exiting at the first match could end ldconfig with
# SIGPIPE, which pipefail turns into a failure of the assignment and set -e into the end of
# the run (it happened at the last allocator point of a full run).
alloc_so() {
  case "$1" in
    jemalloc) ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / && !f {print $NF; f = 1}' ;;
    mimalloc) ldconfig -p 2>/dev/null | awk '/libmimalloc\.so\.2 / && !f {print $NF; f = 1}' ;;
  esac
}
allocs=""
for a in ${SMR_ALLOCS:-jemalloc mimalloc}; do
  so=$(alloc_so "$a")
  if [ -n "$so" ] && [ -r "$so" ]; then
    allocs="$allocs $a"
  else
    echo "smr: $a not installed (apt-get install libjemalloc2 libmimalloc2.0): left out" >&2
  fi
done

# Points: ds:range:update_pct:threads:allocator.
points=()
if [ $quick = 1 ]; then
  reps=${SMR_REPS:-1}
  duration=${SMR_DURATION:-0.25}
  points+=(list:256:50:$ncpu:glibc)
  for t in 1 $ncpu; do points+=(hash:4096:50:$t:glibc); done
  points+=(bst:4096:5:$ncpu:glibc)
  for t in 1 $ncpu $((ncpu * 2)); do points+=(bst:4096:50:$t:glibc); done
  for a in $allocs; do points+=(bst:4096:50:$ncpu:$a); done
else
  reps=${SMR_REPS:-5}
  duration=${SMR_DURATION:-0.8}
  for u in 5 50; do
    for t in $(threads_sweep); do
      points+=(list:1024:$u:$t:glibc hash:65536:$u:$t:glibc bst:65536:$u:$t:glibc)
    done
    points+=(list:128:$u:$ncpu:glibc)
    for r in 1024 1048576; do points+=(hash:$r:$u:$ncpu:glibc bst:$r:$u:$ncpu:glibc); done
  done
  for a in $allocs; do points+=(hash:65536:50:$ncpu:$a bst:65536:50:$ncpu:$a); done
fi
mapfile -t designs < <("$exe" list | cut -f1)

# The stalled reader (issue 34): one reader holds its operation (a read-side section, an EBR
# announcement, or hazard pointers) for the whole run while the workers update the hash table
# at 100%: garbage over time, against the hazard pointers' bound (smr_bench --stall).
stall_designs=()
for d in grace-hazptr grace-retire grace-call urcu-call ebr; do
  printf '%s\n' "${designs[@]}" | grep -qx "$d" && stall_designs+=("$d")
done
if [ $quick = 1 ]; then
  stall_range=4096
  stall_duration=${SMR_STALL_DURATION:-0.5}
else
  stall_range=65536
  stall_duration=${SMR_STALL_DURATION:-1.5}
fi

# Time: the runs plus each process's start, prefill and exit (the BST at 2^20 takes a second to
# prefill). Too long for the budget: fewer repetitions, then shorter runs.
estimate() { # reps duration -> seconds
  awk -v reps="$1" -v dur="$2" -v nd="${#designs[@]}" -v pts="${points[*]}" 'BEGIN {
    n = split(pts, p, " "); s = 0
    for (i = 1; i <= n; i++) {
      split(p[i], f, ":"); o = 0.1
      if (f[2] >= 1048576) o = (f[1] == "bst") ? 1.0 : 0.2
      s += nd * (dur + o)
    }
    printf "%d\n", reps * s + 10 }'
}
stall_estimate() { # reps -> seconds
  awk -v reps="$1" -v n="${#stall_designs[@]}" -v d="$stall_duration" \
    'BEGIN { printf "%d\n", reps * n * (d + 0.5) }'
}
left=$(bench_time_left)
while [ $(($(estimate "$reps" "$duration") + $(stall_estimate "$reps"))) -gt "$left" ] &&
  [ "$reps" -gt 1 ]; do
  reps=$((reps - 1))
done
while [ $(($(estimate "$reps" "$duration") + $(stall_estimate "$reps"))) -gt "$left" ] &&
  awk -v d="$duration" 'BEGIN { exit !(d > 0.3) }'; do
  duration=$(awk -v d="$duration" 'BEGIN { printf "%.2f", d * 0.75 }')
done

bench_csv_raw smr
"$exe" list >"$raw/designs.tsv"
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "smr: ${#designs[@]} designs x ${#points[@]} points x $reps runs of $duration s," \
  "about $(estimate "$reps" "$duration") s (load average $load)" >&2
fails=0
for ((r = 0; r < reps; r++)); do
  i=0
  for p in "${points[@]}"; do
    i=$((i + 1))
    IFS=: read -r ds range upd t alloc <<<"$p"
    echo "smr: run $((r + 1))/$reps, point $i/${#points[@]}: $ds range $range," \
      "$upd% updates, $t threads, $alloc" >&2
    pre=""
    [ "$alloc" = glibc ] || pre=$(alloc_so "$alloc")
    for d in "${designs[@]}"; do
      LD_PRELOAD=$pre "$exe" --design "$d" --ds "$ds" --range "$range" --update "$upd" \
        --threads "$t" --duration "$duration" --run "$r" --csv "$raw/runs.csv" \
        2>>"$raw/log.txt" || {
        echo "smr: $d $ds/$range/u$upd T=$t $alloc failed (status $?; see $raw/log.txt)" >&2
        fails=$((fails + 1))
      }
    done
  done
done
echo "smr: stalled reader: ${stall_designs[*]}, hash $stall_range keys, 100% updates," \
  "$ncpu threads, $reps runs of $stall_duration s (about $(stall_estimate "$reps") s)" >&2
for ((r = 0; r < reps; r++)); do
  for d in "${stall_designs[@]}"; do
    series=()
    [ $r = 0 ] && series=(--series "$raw/stall_series.csv") # the plot: the first run's
    "$exe" --design "$d" --ds hash --range "$stall_range" --update 100 --threads "$ncpu" \
      --duration "$stall_duration" --run "$r" --stall "${series[@]}" --csv "$raw/runs.csv" \
      2>>"$raw/log.txt" || {
      echo "smr: $d stalled-reader run failed (status $?; see $raw/log.txt)" >&2
      fails=$((fails + 1))
    }
  done
done
# Designs that do not run on a structure say why (smr_bench prints it): into the page.
grep -h ': not run: ' "$raw/log.txt" 2>/dev/null | sed 's/^smr_bench: //' | sort -u \
  >"$raw/not_run.txt" || true
cat "$raw/runs.csv" >>"$csv" 2>/dev/null || true
bench_csv_end "$csv"
[ "$fails" = 0 ] || echo "smr: $fails runs failed; the report leaves them out" >&2
cmd="$(bench_cmd bench/smr/run.sh) (smr_bench: $reps runs of $duration s per point and design)"
"$py" "$here/report.py" "${report_args[@]}" --csv "$csv" --raw "$raw" --cmd "$cmd"
