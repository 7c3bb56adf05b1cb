#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# defer_rcu() side by side: grace-urcu against liburcu (Debian's liburcu-dev), one source built
# twice (defer_flood.c), runs interleaved, medians. Points: a flood from 1 and 2 threads; 2
# threads deferring 1000 times a second each; 16 threads deferring 10000 times a second each
# (oversubscribed on a 2-CPU machine: labelled); and grace without membarrier
# (GRACE_NO_MEMBARRIER=1) on the floods. Columns: Mdefer/s (wall), CPU ns per deferral (the
# whole process), and grace's ratios (throughput: grace/liburcu; CPU: liburcu/grace; above 1
# grace is better). Each point also runs, interleaved, the same loop with no deferral against
# each library (defer_flood ... none): *extra* CPU is the run's CPU minus that baseline's, per
# deferral. On the paced points the sleeps and wake-ups between calls cost more than the
# deferrals (tens of microseconds per call on a VM): the whole CPU hides the difference, the
# extra CPU shows it.
#
#   bench/free/defer_flood.sh [--build DIR] [--reps R] [--out FILE]
#
# Run it on a quiet machine for figures you quote (../shared/tools/quiet -- ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench} reps=5 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,14p' "$0"; exit 0 ;;
    *) echo "defer_flood.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
g=$build/bench/free/defer_flood_grace u=$build/bench/free/defer_flood_urcu
[ -x "$g" ] || { echo "defer_flood.sh: build $g first (ninja -C $build defer_flood_grace)" >&2; exit 2; }
have_urcu=1; [ -x "$u" ] || have_urcu=0
load0=$(cut -d" " -f1-3 /proc/loadavg)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# label|threads n gap|grace env
points=(
  "flood 1 thread|1 4000000 0|"
  "flood 2 threads|2 2000000 0|"
  "2 threads x 1000/s|2 500 1000|"
  "16 threads x 10000/s (oversubscribed)|16 5000 100|"
  "flood 1 thread, grace without membarrier|1 4000000 0|GRACE_NO_MEMBARRIER=1"
  "flood 2 threads, grace without membarrier|2 2000000 0|GRACE_NO_MEMBARRIER=1"
)
for r in $(seq 1 "$reps"); do
  for i in "${!points[@]}"; do
    IFS='|' read -r label args genv <<<"${points[$i]}"
    # shellcheck disable=SC2086
    env $genv "$g" $args >>"$tmp/g$i" || echo "defer_flood.sh: grace run failed ($label)" >&2
    # shellcheck disable=SC2086
    [ $have_urcu = 1 ] && { "$u" $args >>"$tmp/u$i" || echo "defer_flood.sh: liburcu run failed ($label)" >&2; }
    # shellcheck disable=SC2086
    env $genv "$g" $args none >>"$tmp/gb$i" || echo "defer_flood.sh: grace baseline failed ($label)" >&2
    # shellcheck disable=SC2086
    [ $have_urcu = 1 ] && { "$u" $args none >>"$tmp/ub$i" || echo "defer_flood.sh: liburcu baseline failed ($label)" >&2; }
  done
done
med() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
{
  echo "| point | grace Mdefer/s | liburcu Mdefer/s | ratio | grace CPU ns/defer | liburcu CPU ns/defer | CPU ratio | grace extra CPU ns/defer | liburcu extra CPU ns/defer | extra CPU ratio |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for i in "${!points[@]}"; do
    IFS='|' read -r label _ _ <<<"${points[$i]}"
    gt=$(cut -d, -f7 "$tmp/g$i" | med); gc=$(cut -d, -f8 "$tmp/g$i" | med)
    gx=$(awk -v a="$gc" -v b="$(cut -d, -f8 "$tmp/gb$i" | med)" 'BEGIN {printf "%.1f", a - b}')
    if [ $have_urcu = 1 ]; then
      ut=$(cut -d, -f7 "$tmp/u$i" | med); uc=$(cut -d, -f8 "$tmp/u$i" | med)
      ux=$(awk -v a="$uc" -v b="$(cut -d, -f8 "$tmp/ub$i" | med)" 'BEGIN {printf "%.1f", a - b}')
      rt=$(awk -v a="$gt" -v b="$ut" 'BEGIN {printf "%.2f", a / b}')
      rc=$(awk -v a="$uc" -v b="$gc" 'BEGIN {printf "%.2f", a / b}')
      # An extra CPU at or below 0 is within the noise of the baseline: no ratio.
      rx=$(awk -v a="$ux" -v b="$gx" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a"}')
    else ut=- uc=- ux=- rt=- rc=- rx=-; fi
    echo "| $label | $gt | $ut | $rt | $gc | $uc | $rc | $gx | $ux | $rx |"
  done
  echo
  echo "Medians of $reps interleaved runs; extra CPU: a run's median less the median of the same loop with no deferral; load average before: $load0."
} | if [ -n "$out" ]; then tee "$out"; else cat; fi
