#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hash-table API family of the benchmark report: grace's own table (grace_hash_*) against
# liburcu's cds_lfht, and cds_lfht on grace (grace-urcu), library against library (issue 14).
#
#   bench/hashapi/run.sh [--out DIR] [--quick]
#
# Measures, with every design interleaved and the median of repeated runs:
#   - lookups, and 1%, 10% and 50% update mixes (delete and re-insert a key the thread owns,
#     the old node freed after a grace period), at 1, 2 and 4 threads (4 oversubscribes 2 CPUs);
#   - lookups while the main thread resizes the table back and forth (nkeys/8 <-> 2 nkeys);
#   - memory per node (the embedded node plus the table's own heap per node at load factor 1);
#   - instructions per lookup and per 50%-update operation under callgrind, one thread.
# Writes DIR/hashapi.csv, DIR/hashapi_instr.csv, DIR/hashapi.md (and PNG plots). Builds nothing:
# takes the build directory from $GRACE_BUILD (default build/bench). About 2 minutes on a quiet
# 2-core machine; --quick: a smoke run of seconds (do not quote it). HA_REPS, HA_DURATION and
# HA_NKEYS override the repetitions, the seconds per run and the table size (65536).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

exe=$build/bench/hashapi/hashapi_bench
if [ ! -x "$exe" ]; then
  echo "hashapi: $exe is missing: build first (cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/bench)" >&2
  exit 1
fi
if [ $quick = 1 ]; then
  threads=1,2; updates=0,10; reps=${HA_REPS:-1}; duration=${HA_DURATION:-0.05}
else
  threads=1,2,4; updates=0,1,10,50; reps=${HA_REPS:-5}; duration=${HA_DURATION:-0.2}
fi
nkeys=${HA_NKEYS:-65536}
load=$(cut -d' ' -f1-3 /proc/loadavg)
cmd="hashapi_bench --threads $threads --updates $updates --reps $reps --duration $duration --nkeys $nkeys"
echo "hashapi: $reps x $duration s per point and design, $nkeys keys (load average $load)"
"$exe" --threads "$threads" --updates "$updates" --reps "$reps" --duration "$duration" \
  --nkeys "$nkeys" > "$out/hashapi.csv"

# Instructions per operation, one thread, under callgrind (repeatable where timings are not):
# the measured loop alone (--toggle-collect), callees included.
icsv=$out/hashapi_instr.csv
if command -v valgrind >/dev/null 2>&1; then
  echo "design,update_pct,ops,instructions,per_op" > "$icsv"
  tmp=$(mktemp -d)
  for u in 0 50; do
    for d in $("$exe" --list | cut -f1); do
      sym=$("$exe" --symbol "$d") || continue
      [ -n "$sym" ] || continue
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$sym" \
        "$exe" --designs "$d" --bench ops --threads 1 --updates "$u" --reps 1 \
        --duration 0.1 --nkeys "$nkeys" > "$tmp/cg.csv" 2>/dev/null ||
        { echo "hashapi: callgrind failed for $d" >&2; continue; }
      ops=$(awk -F, '$1 == "ops" && $7 == "ops" {print $6}' "$tmp/cg.csv" | tail -1)
      ir=$(awk '/^summary:/ {print $2; exit}' "$tmp/cg.out")
      [ -n "$ir" ] && [ "$ops" -gt 0 ] &&
        echo "$d,$u,$ops,$ir,$(awk -v i="$ir" -v o="$ops" 'BEGIN {printf "%.1f", i / o}')" >> "$icsv"
    done
  done
  rm -rf "$tmp"
else
  echo "hashapi: valgrind not found: no instruction counts" >&2
  rm -f "$icsv"
fi

py=/usr/bin/python3
[ -x $py ] || py=python3
args=(--csv "$out/hashapi.csv" --out "$out" --command "$cmd" --load-before "$load")
[ -f "$icsv" ] && args+=(--instr "$icsv")
[ $quick = 1 ] && args+=(--quick)
"$py" "$here/report.py" "${args[@]}"
echo "hashapi: $out/hashapi.md"
