#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: set up a fresh Debian machine, build grace and its benchmarks (Release, in
# build/bench), run every benchmark family and write the report to out/report/REPORT.md: a
# summary screen of every family's headline figures, the run log, then each family's detail,
# with its CSV and PNG plots beside it. About 30 minutes on 2 cores.
#   scripts/report.sh [--quick] [--out DIR]
#     --quick   a short smoke run of every family (two minutes or so): checks that it all works
# Each family is bench/<name>/run.sh [--out DIR] [--quick], reading the build directory from
# $GRACE_BUILD and its time budget from $GRACE_FAMILY_BUDGET_S (what is left of the report's),
# and writing DIR/<name>.md and DIR/<name>.headlines.json (+ CSV, PNG); a family without run.sh
# is skipped. GRACE_REPORT_BUDGET_S (default 2400) caps the whole report: a family that would
# overrun is stopped, and the families after it are skipped, each said so in the report.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=out/report
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: scripts/report.sh [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
done
budget=${GRACE_REPORT_BUDGET_S:-2400} # whole report, seconds: stop a family that would overrun
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
say() { printf '[report %3ss] %s\n' "$(elapsed)" "$*"; }

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
say "setup (scripts/setup-debian.sh)"
scripts/setup-debian.sh
py=/usr/bin/python3
[ -x $py ] || py=python3

build=build/bench
say "configure and build $build (Release)"
scripts/cmake-configure.sh "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRACE_TESTS=OFF -DGRACE_BENCH=ON ||
  exit 1
cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
# How far apart the first two CPUs are (bench_placement): on a VM the host moves the vCPUs, and
# a two-thread figure moves with them while the load average says nothing. Before and after.
place_start=$("$build/bench/bench_placement" --seconds 5 2>/dev/null | sed -n 's/^placement: //p' || true)

# Fixed order first, then any other family in name order. A family is bench/NAME/run.sh, or
# the run.sh of a self-contained component (semop: the IPC case study in ipc/).
script_of() {
  case "$1" in
    semop) echo ipc/bench/run.sh ;;
    *) echo "bench/$1/run.sh" ;;
  esac
}
order=(readside callbacks rseq srcu hashtable free hashapi semop scaling)
families=()
missing=()
for f in "${order[@]}"; do
  if [ -f "$(script_of "$f")" ]; then families+=("$f"); else missing+=("$f"); fi
done
for d in bench/*/; do
  f=$(basename "$d")
  case " ${order[*]} " in *" $f "*) continue ;; esac
  [ -f "bench/$f/run.sh" ] && families+=("$f")
done

# Start from an empty directory; refuse to wipe one that does not look like an old report.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/REPORT.md" ] && [ ! -d "$out/logs" ]; then
  echo "report: $out is not empty and holds no earlier report: choose another --out" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/logs"
ran=()
failed=()
times=()
scripts=()
n=${#families[@]}
i=0
for f in "${families[@]}"; do
  i=$((i + 1))
  scripts+=("$f=$(script_of "$f")")
  left=$(( budget - $(elapsed) ))
  if [ "$left" -lt 20 ]; then
    say "($i/$n) $f: skipped, the report's time budget is spent"
    failed+=("$f=was skipped: the report's time budget (${budget} s) was spent")
    ran+=("$f")
    continue
  fi
  say "($i/$n) $f: $(script_of "$f") --out $out ${quick[*]}"
  t_f=$(date +%s)
  set +e
  # The family gets what is left, less a margin to write its report; the timeout is the backstop.
  GRACE_BUILD=$root/$build GRACE_FAMILY_BUDGET_S=$(( left > 40 ? left - 15 : left )) \
    timeout --signal=INT --kill-after=10 "$left" \
    bash "$(script_of "$f")" --out "$out" "${quick[@]}" 2>&1 | tee "$out/logs/$f.log"
  rc=${PIPESTATUS[0]}
  set -e
  dt=$(( $(date +%s) - t_f ))
  ran+=("$f")
  times+=("$f=$dt")
  if [ "$rc" = 124 ]; then
    failed+=("$f=was stopped after ${left} s (the report's time budget)")
    say "($i/$n) $f: stopped after $dt s, over the time budget"
  elif [ "$rc" != 0 ]; then
    failed+=("$f=failed (exit $rc) after $dt s")
    say "($i/$n) $f: failed (exit $rc) after $dt s, see $out/logs/$f.log"
  else
    say "($i/$n) $f: done in $dt s"
  fi
done

place_end=$("$build/bench/bench_placement" --seconds 5 2>/dev/null | sed -n 's/^placement: //p' || true)
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
join() { local IFS=,; echo "$*"; }
"$py" bench/report/assemble.py --out "$out" --families "$(join "${ran[@]}")" \
  --failed "$(join "${failed[@]}")" --missing "$(join "${missing[@]}")" \
  --times "$(join "${times[@]}")" --scripts "$(join "${scripts[@]}")" \
  --build-type "${btype:-unknown}" --load-start "$load_start" --elapsed "$(elapsed)" \
  --placement-start "${place_start:-}" --placement-end "${place_end:-}" \
  "${quick[@]}" >/dev/null
case "$out" in /*) report=$out/REPORT.md ;; *) report=$root/$out/REPORT.md ;; esac
say "wrote $report"
