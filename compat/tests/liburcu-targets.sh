#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The runs of liburcu's own programs where issue 13 (item 6) found grace behind liburcu, repeated
# and interleaved so that their medians can be quoted. Needs the programs built by
# compat/tests/liburcu-tests.sh (--build-only is enough) in the same build directory.
#
#   compat/tests/liburcu-targets.sh [--build-dir DIR] [--reps N] [--duration S] [--out FILE]
#                                   [--only REGEX]   (only the runs whose name matches)
#                                   [--page FILE]    (write the figures page: the method, the
#                                                     run's command, machine and load, the table;
#                                                     docs/figures/liburcu-targets.md is this,
#                                                     from a quiet machine: ../shared/tools/quiet)
#
# Runs (each grace-urcu and liburcu alternately, N times, the first of each pair alternating):
#   rcutorture_urcu_{membarrier,qsbr} T uperf S   T = 1, 2 updaters and no reader: synchronize
#                                                 with nothing to wait for (ns per update, lower
#                                                 is better)
#   test_urcu_qsbr 2 1 S -d 0, test_urcu 2 1 S -d 0   2 readers, 1 writer on the machine's CPUs
#                                                 (oversubscribed past 2 threads on 2 CPUs):
#                                                 writes/s and reads/s (higher is better)
#   test_urcu_qsbr 2 1 S -d 0 -a ...              the same with the threads pinned: two on one
#                                                 CPU, one on the other (the program gives the
#                                                 CPUs out in the order its threads start, so
#                                                 which thread is alone varies between runs)
#   test_urcu_qsbr 1 1 S -d 0, test_urcu 1 1 S -d 0   the same, not oversubscribed (the
#                                                 writer's waits end while it spins)
# Writes a markdown table (medians, grace/liburcu speed ratio: > 1 means grace is faster).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/liburcu-tests
REPS=7
DUR=2
OUT=
ONLY=
PAGE=
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) B=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --duration) DUR=$2; shift ;;
    --out) OUT=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --page) PAGE=$2; shift ;;
    -h|--help) sed -n '3,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
for impl in grace liburcu; do
  [ -x "$B/bin/$impl/rcutorture_urcu_qsbr" ] ||
    { echo "liburcu-targets: $B/bin/$impl not built (compat/tests/liburcu-tests.sh --build-only)" >&2; exit 1; }
done
tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# name | program | arguments | metric (awk program over the output printing one number)
uperf='/ns\/update:/ { for (i = 1; i <= NF; i++) if ($i == "ns/update:") print $(i + 1) }'
writes='/^SUMMARY/ { for (i = 1; i <= NF; i++) { if ($i == "nr_writes") w = $(i + 1); if ($i == "testdur") d = $(i + 1) } } END { if (d > 0) print w / d }'
reads='/^SUMMARY/ { for (i = 1; i <= NF; i++) { if ($i == "nr_reads") r = $(i + 1); if ($i == "testdur") d = $(i + 1) } } END { if (d > 0) print r / d }'
RUNS=(
  "memb uperf 1 updater|rcutorture_urcu_membarrier|1 uperf $DUR|ns/update|$uperf"
  "memb uperf 2 updaters|rcutorture_urcu_membarrier|2 uperf $DUR|ns/update|$uperf"
  "qsbr uperf 1 updater|rcutorture_urcu_qsbr|1 uperf $DUR|ns/update|$uperf"
  "qsbr uperf 2 updaters|rcutorture_urcu_qsbr|2 uperf $DUR|ns/update|$uperf"
  "test_urcu_qsbr 2 1: writes|test_urcu_qsbr|2 1 $DUR -d 0|writes/s|$writes"
  "test_urcu_qsbr 2 1: reads|test_urcu_qsbr|2 1 $DUR -d 0|reads/s|$reads"
  "test_urcu 2 1: writes|test_urcu|2 1 $DUR -d 0|writes/s|$writes"
  "test_urcu 2 1: reads|test_urcu|2 1 $DUR -d 0|reads/s|$reads"
  "test_urcu_qsbr 2 1 -a 0 -a 1 -a 0: writes|test_urcu_qsbr|2 1 $DUR -d 0 -a 0 -a 1 -a 0|writes/s|$writes"
  "test_urcu_qsbr 2 1 -a 1 -a 1 -a 0: writes|test_urcu_qsbr|2 1 $DUR -d 0 -a 1 -a 1 -a 0|writes/s|$writes"
  "test_urcu_qsbr 1 1: writes|test_urcu_qsbr|1 1 $DUR -d 0|writes/s|$writes"
  "test_urcu 1 1: writes|test_urcu|1 1 $DUR -d 0|writes/s|$writes"
)
for rep in $(seq 1 "$REPS"); do
  order=(grace liburcu)
  [ $((rep % 2)) = 0 ] && order=(liburcu grace)
  for r in "${RUNS[@]}"; do
    IFS='|' read -r name prog args unit prog_awk <<<"$r"
    if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then continue; fi
    for impl in "${order[@]}"; do
      # shellcheck disable=SC2086
      v=$(cd "$B/bin/$impl" && timeout -k 5 60 "./$prog" $args 2>&1 | awk "$prog_awk" | tail -1)
      printf '%s\t%s\t%s\t%s\n' "$name" "$impl" "$unit" "${v:-nan}" >>"$tsv"
    done
  done
  echo "[liburcu-targets] repetition $rep of $REPS done" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
  echo "liburcu's programs where issue 13 found grace behind (compat/tests/liburcu-targets.sh):"
  echo "$REPS interleaved repetitions of ${DUR} s, medians; $(nproc) CPUs; load average $load0 before, $load1 after."
  echo
  echo "| run | unit | grace-urcu | liburcu | grace speed / liburcu | grace min-max | liburcu min-max |"
  echo "|---|---|---|---|---|---|---|"
  python3 - "$tsv" <<'EOF'
import sys, statistics
rows = {}
order = []
for line in open(sys.argv[1]):
    name, impl, unit, v = line.rstrip("\n").split("\t")
    if name not in rows:
        rows[name] = {"unit": unit, "grace": [], "liburcu": []}
        order.append(name)
    try:
        rows[name][impl].append(float(v))
    except ValueError:
        pass
def fmt(x):
    return f"{x:.1f}" if x < 1000 else f"{x / 1e6:.3f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"
for name in order:
    r = rows[name]
    if not r["grace"] or not r["liburcu"]:
        print(f"| {name} | {r['unit']} | n/a | n/a | n/a | | |")
        continue
    g, l = statistics.median(r["grace"]), statistics.median(r["liburcu"])
    speed = (l / g) if r["unit"].startswith("ns/") else (g / l)
    rg = f"{fmt(min(r['grace']))} - {fmt(max(r['grace']))}"
    rl = f"{fmt(min(r['liburcu']))} - {fmt(max(r['liburcu']))}"
    print(f"| {name} | {r['unit']} | {fmt(g)} | {fmt(l)} | {speed:.2f}x | {rg} | {rl} |")
EOF
}
if [ -n "$OUT" ]; then report | tee "$OUT"; else report; fi
if [ -n "$PAGE" ]; then
  commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . &&
    echo " (with uncommitted changes)" || true)
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  lv=$(dpkg-query -W -f '${Version}' liburcu-dev 2>/dev/null || echo "?")
  {
    echo "<!-- SPDX-License-Identifier: MIT -->"
    echo "<!-- Written by compat/tests/liburcu-targets.sh --page: edit the script, not this page."
    echo "     Earlier runs are in git's history. -->"
    echo "# liburcu's programs where grace was once behind: the re-measurement"
    echo
    printf 'Latest run: `compat/tests/liburcu-targets.sh --reps %s --duration %s --page %s` on %s, ' \
      "$REPS" "$DUR" "$PAGE" "$(date -u +%Y-%m-%d)"
    printf 'grace-urcu at commit %s%s beside Debian'"'"'s liburcu %s; %s, %s CPUs, Linux %s; ' \
      "$commit" "$dirty" "$lv" "$cpu" "$(nproc)" "$(uname -r)"
    printf 'load average %s before, %s after (the run'"'"'s own threads count in the second).\n' \
      "$load0" "$load1"
    cat <<'TEXT'

## What is measured

liburcu's own programs (from Debian's source package, built unchanged by
`compat/tests/liburcu-tests.sh --build-only`, once against grace-urcu and once against liburcu)
in the runs where grace-urcu was once behind liburcu:

- `rcutorture_urcu_{membarrier,qsbr} T uperf`: 1 or 2 updaters and no reader, each calling
  `synchronize_rcu()` with nothing to wait for: nanoseconds per update, lower is better;
- `test_urcu[_qsbr] 2 1`: 2 readers and 1 writer on 2 CPUs (oversubscribed), writes and
  reads per second; the same pinned two on one CPU and one on the other (`-a`: which thread is
  alone varies between runs, as the program gives CPUs out in the order its threads start);
  and `1 1`, not oversubscribed.

Each repetition runs every row with grace-urcu and liburcu alternately, the first of each pair
alternating between repetitions. The table gives the medians, the speed ratio (grace over
liburcu: above 1 means grace is faster, whatever the unit) and each side's range: a wide range
means a run that depends on how the scheduler places the threads, to be read with it.

## Figures of this run

TEXT
    report | tail -n +4
  } >"$PAGE"
  echo "liburcu-targets: wrote $PAGE" >&2
fi
