#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The figures pages: docs/figures/<family>.md is what this script writes for the family's latest
# quiet run, and nothing else (history lives in git and CHANGELOG.md).
#   scripts/figures.sh [--quick] [--load L] [family...]     (default: every family)
# For each family it waits until the machine is quiet (1-minute load average below L, default
# 0.5; at most 10 minutes, then it runs anyway and the page says so), runs the family's run.sh
# into out/figures/<family>, and writes docs/figures/<family>.md:
#   - a generated header: the command, date, commit, machine, load average before and after, and
#     how far apart the first two CPUs were before and after (bench_placement: the round trip of a
#     cache line between them; on a VM the host moves the vCPUs, and a two-thread cell moves with
#     them while the load average says nothing);
#   - the family's stable text, bench/<family>/about.md (ipc/bench/about.md for semop): what is
#     measured, how to run it, how to read the figures;
#   - the tables and plots its report.py wrote (the PNGs are copied beside the page).
# Builds build/bench (Release) first, as scripts/report.sh does. --quick: a smoke run whose
# pages say so (not for committing).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
max_load=0.5
fams=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); shift ;;
    --load) max_load=$2; shift 2 ;;
    -h|--help) sed -n '3,15p' "$0"; exit 0 ;;
    *) fams+=("$1"); shift ;;
  esac
done
[ ${#fams[@]} -gt 0 ] || fams=(readside callbacks rseq srcu hashtable free smr hashapi semop scaling)
script_of() { case "$1" in semop) echo ipc/bench/run.sh ;; *) echo "bench/$1/run.sh" ;; esac; }
about_of() { case "$1" in semop) echo ipc/bench/about.md ;; *) echo "bench/$1/about.md" ;; esac; }

scripts/setup-debian.sh
build=build/bench
scripts/cmake-configure.sh "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRACE_TESTS=OFF -DGRACE_BENCH=ON
cmake --build "$build" -j"$(nproc)" >"$build.figures.log" 2>&1 || { tail -n 40 "$build.figures.log"; exit 1; }

load1() { cut -d' ' -f1 /proc/loadavg; }
# "p10/median/p90 ns, slow in K of N samples; both at once Sx" from bench_placement, or nothing
placement() {
  "$build/bench/bench_placement" --seconds 5 2>/dev/null |
    sed -n 's/.*round trip \([0-9]*\) ns (p10), \([0-9]*\) (median), \([0-9]*\) (p90); slow ([^)]*) in \([0-9]*\) of \([0-9]*\) samples over [0-9]* s; both CPUs at once \([0-9.]*\)x (median).*/\1\/\2\/\3 ns (p10\/median\/p90), slow in \4 of \5 samples, a multiply chain on both at once \6x of one alone/p'
}
wait_quiet() { # prints "quiet" or "busy" on stdout
  local t=0
  while awk -v a="$(load1)" -v m="$max_load" 'BEGIN { exit !(a >= m) }'; do
    if [ $t -ge 600 ]; then echo busy; return; fi
    sleep 5
    t=$((t + 5))
  done
  echo quiet
}

commit=$(git rev-parse --short HEAD)
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
for f in "${fams[@]}"; do
  s=$(script_of "$f")
  a=$(about_of "$f")
  [ -x "$s" ] || { echo "figures: no $s" >&2; exit 2; }
  [ -f "$a" ] || { echo "figures: no $a (the page's stable text)" >&2; exit 2; }
  dir=out/figures/$f
  rm -rf "$dir"
  mkdir -p "$dir"
  state=$(wait_quiet)
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  place_before=$(placement)
  t0=$(date +%s)
  echo "figures: $f ($state, load $before)" >&2
  GRACE_BUILD=$build "$s" --out "$dir" "${quick[@]}" >"$dir/run.log" 2>&1 ||
    { tail -n 30 "$dir/run.log" >&2; echo "figures: $f failed" >&2; exit 1; }
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  secs=$(( $(date +%s) - t0 ))
  place_after=$(placement)
  frag=$dir/$f.md
  [ -f "$frag" ] || { echo "figures: $s wrote no $frag" >&2; exit 1; }
  page=docs/figures/$f.md
  title=$(sed -n '1s/^# //p' "$a")
  {
    echo "<!-- SPDX-License-Identifier: MIT -->"
    echo "<!-- Written by scripts/figures.sh $f: edit $a (the text) or the family's report.py"
    echo "     (the tables), not this page. Earlier runs are in git's history. -->"
    echo "# $title"
    echo
    printf 'Latest run: `scripts/figures.sh %s%s` on %s, grace at commit %s%s; %s, %s CPUs, Linux %s; ' \
      "${quick[*]:+--quick }" "$f" "$(date -u +%Y-%m-%d)" "$commit" "$dirty" "$cpu" "$(nproc)" "$(uname -r)"
    printf 'load average %s before, %s after; %s s.' "$before" "$after" "$secs"
    if [ -n "$place_before" ]; then
      printf ' Cache-line round trip between the first two CPUs (`bench_placement`, 5 s): %s before, %s after.' \
        "$place_before" "$place_after"
    fi
    if [ "$state" = busy ]; then
      printf ' **The machine was not quiet (load above %s for 10 minutes): read the figures as ratios of interleaved runs only.**' "$max_load"
    fi
    if [ ${#quick[@]} -gt 0 ]; then printf ' **A --quick smoke run: not figures to quote.**'; fi
    echo
    echo
    tail -n +3 "$a"
    echo
    echo "## Figures of this run"
    echo
    cat "$frag"
  } >"$page"
  for png in "$dir"/*.png; do
    [ -f "$png" ] && cp "$png" docs/figures/
  done
  echo "figures: wrote $page" >&2
done
