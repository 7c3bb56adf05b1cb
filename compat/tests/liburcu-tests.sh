#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# liburcu's own test and benchmark programs, built unchanged against grace-urcu and against
# Debian's liburcu, run side by side (issue 16, item 4). A long run: not part of the test command.
#
#   compat/tests/liburcu-tests.sh [--quick] [--duration S] [--reps N] [--out FILE] [--build-dir DIR]
#                                 [--build-only]
#
# 1. Gets liburcu's sources from Debian's source package (apt-get source, with a private apt
#    configuration that adds a deb-src line for bookworm; nothing of liburcu is committed: it all
#    lands under the build directory, default build/liburcu-tests).
# 2. Builds grace (Release) and installs it into <build>/prefix.
# 3. Builds every program of tests/benchmark, tests/regression and tests/unit twice: with
#    `pkg-config liburcu*` from <prefix>/lib/grace-urcu/pkgconfig (grace-urcu) and from the
#    system (Debian's liburcu-dev). No source is edited.
# 4. Runs each program on both, interleaved (grace, liburcu, liburcu, grace, ...), --reps times
#    for the throughput programs, and writes a pass/fail table and a throughput table (medians,
#    grace/liburcu ratios) to --out (default docs/figures/liburcu-tests.md).
# Programs and modes: every benchmark program of liburcu's Makefile.am with its upstream
# arguments (2 readers / 2 writers, as upstream's floor of 4 CPUs gives), test_urcu_hash in the 17
# configurations of runhash.sh, rcutorture for every flavor x {perf, rperf, uperf, stress} x
# {callrcu_global, callrcu_percpu, callrcu_perthread}, test_urcu_fork, the unit tests.
# --quick: 1-second runs, one repetition, stress with callrcu_global only (a smoke run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/liburcu-tests
OUT=$ROOT/docs/figures/liburcu-tests.md
DUR=2
REPS=3
QUICK=0
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; DUR=1; REPS=1 ;;
    --duration) DUR=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --build-dir) B=$2; shift ;;
    --build-only) BUILD_ONLY=1 ;;
    -h|--help) sed -n '3,22p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$B"
B=$(cd "$B" && pwd)
LOG=$B/log
mkdir -p "$LOG"
START=$(date +%s)
log() { echo "[liburcu-tests $(( $(date +%s) - START ))s] $*"; }

# ---- 1. liburcu's sources ----
fetch_sources() {
  if ls -d "$B"/src/userspace-rcu-*/tests >/dev/null 2>&1; then
    return
  fi
  log "fetching liburcu's source package (Debian bookworm)"
  local A=$B/apt
  mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$B/src"
  cat > "$A/sources.list" <<EOS
deb-src http://deb.debian.org/debian bookworm main
EOS
  local opts=(-o "Dir::Etc::SourceList=$A/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$A/lists" -o "Dir::Cache=$A/cache"
              -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
  apt-get "${opts[@]}" update > "$LOG/apt-update.log" 2>&1 ||
    { echo "apt-get update failed: $LOG/apt-update.log" >&2; exit 1; }
  (cd "$B/src" && apt-get "${opts[@]}" source --download-only liburcu) > "$LOG/apt-source.log" 2>&1 ||
    { echo "apt-get source failed: $LOG/apt-source.log" >&2; exit 1; }
  (cd "$B/src" && tar xf "$(ls liburcu_*.orig.tar.* | grep -v '\.asc$' | head -1)")
}

# ---- 2. grace, installed ----
build_grace() {
  log "building and installing grace into $B/prefix"
  cmake -S "$ROOT" -B "$B/grace" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRACE_TESTS=OFF \
        -DGRACE_BENCH=OFF -DGRACE_EXAMPLES=OFF > "$LOG/grace-configure.log" 2>&1
  cmake --build "$B/grace" -j"$(nproc)" > "$LOG/grace-build.log" 2>&1 ||
    { echo "grace build failed: $LOG/grace-build.log" >&2; exit 1; }
  rm -rf "$B/prefix"
  cmake --install "$B/grace" --prefix "$B/prefix" > "$LOG/grace-install.log" 2>&1
}

fetch_sources
SRC=$(ls -d "$B"/src/userspace-rcu-*/ | head -1)
SRC=${SRC%/}
URCU_VERSION=$(basename "$SRC" | sed 's/userspace-rcu-//')
DSC=$(ls "$B"/src/liburcu_*.dsc 2>/dev/null | head -1)
DEB_VERSION=$(sed -n 's/^Version: //p' "$DSC" 2>/dev/null | head -1)
SYS_VERSION=$(pkg-config --modversion liburcu 2>/dev/null || echo unknown)
log "liburcu sources $URCU_VERSION (Debian $DEB_VERSION); system liburcu $SYS_VERSION"
build_grace
GPC=$(dirname "$(find "$B/prefix" -name liburcu-qsbr.pc | head -1)")
GLIB=$(dirname "$(find "$B/prefix" -name 'libgrace.so' | head -1)")

# liburcu's configure-generated config.h, the part the tests use.
cat > "$B/config.h" <<'EOS'
#define _GNU_SOURCE 1
#define HAVE_GETTID 1
#define HAVE_RAND_R 1
#define HAVE_SCHED_SETAFFINITY 1
#define HAVE_SCHED_GETCPU 1
#define HAVE_SYSCONF 1
EOS

# ---- 3. the programs (name | directory | sources | extra flags | pkg-config modules) ----
# As in liburcu's tests/*/Makefile.am. "tap" programs link tests/utils/tap.c, "yield" ones
# tests/common/debug-yield.c.
PROGRAMS=(
"test_urcu|benchmark|test_urcu.c||liburcu"
"test_urcu_dynamic_link|benchmark|test_urcu.c|-DDYNAMIC_LINK_TEST|liburcu"
"test_urcu_timing|benchmark|test_urcu_timing.c||liburcu"
"test_urcu_yield|benchmark|test_urcu.c yield|-DDEBUG_YIELD|liburcu"
"test_urcu_qsbr|benchmark|test_urcu_qsbr.c||liburcu-qsbr"
"test_urcu_qsbr_timing|benchmark|test_urcu_qsbr_timing.c||liburcu-qsbr"
"test_urcu_qsbr_dynamic_link|benchmark|test_urcu_qsbr.c|-DDYNAMIC_LINK_TEST|liburcu-qsbr"
"test_urcu_mb|benchmark|test_urcu.c|-DRCU_MB|liburcu-mb"
"test_urcu_signal|benchmark|test_urcu.c|-DRCU_SIGNAL|liburcu-signal"
"test_urcu_signal_dynamic_link|benchmark|test_urcu.c|-DRCU_SIGNAL -DDYNAMIC_LINK_TEST|liburcu-signal"
"test_urcu_signal_timing|benchmark|test_urcu_timing.c|-DRCU_SIGNAL|liburcu-signal"
"test_urcu_signal_yield|benchmark|test_urcu.c yield|-DRCU_SIGNAL -DDEBUG_YIELD|liburcu-signal"
"test_rwlock_timing|benchmark|test_rwlock_timing.c||liburcu-signal"
"test_rwlock|benchmark|test_rwlock.c||liburcu-signal"
"test_perthreadlock_timing|benchmark|test_perthreadlock_timing.c||liburcu-signal"
"test_perthreadlock|benchmark|test_perthreadlock.c||liburcu-signal"
"test_mutex|benchmark|test_mutex.c||liburcu"
"test_looplen|benchmark|test_looplen.c||liburcu"
"test_cycles_per_loop|benchmark|test_cycles_per_loop.c||liburcu"
"test_urcu_gc|benchmark|test_urcu_gc.c||liburcu"
"test_urcu_signal_gc|benchmark|test_urcu_gc.c|-DRCU_SIGNAL|liburcu-signal"
"test_urcu_mb_gc|benchmark|test_urcu_gc.c|-DRCU_MB|liburcu-mb"
"test_urcu_qsbr_gc|benchmark|test_urcu_qsbr_gc.c||liburcu-qsbr"
"test_urcu_qsbr_lgc|benchmark|test_urcu_qsbr_gc.c|-DTEST_LOCAL_GC|liburcu-qsbr"
"test_urcu_lgc|benchmark|test_urcu_gc.c|-DTEST_LOCAL_GC|liburcu"
"test_urcu_signal_lgc|benchmark|test_urcu_gc.c|-DRCU_SIGNAL -DTEST_LOCAL_GC|liburcu-signal"
"test_urcu_mb_lgc|benchmark|test_urcu_gc.c|-DTEST_LOCAL_GC -DRCU_MB|liburcu-mb"
"test_urcu_defer|benchmark|test_urcu_defer.c||liburcu"
"test_urcu_assign|benchmark|test_urcu_assign.c||liburcu"
"test_urcu_assign_dynamic_link|benchmark|test_urcu_assign.c|-DDYNAMIC_LINK_TEST|liburcu"
"test_urcu_bp|benchmark|test_urcu_bp.c||liburcu-bp"
"test_urcu_bp_dynamic_link|benchmark|test_urcu_bp.c|-DDYNAMIC_LINK_TEST|liburcu-bp"
"test_urcu_lfq|benchmark|test_urcu_lfq.c||liburcu liburcu-cds"
"test_urcu_lfq_dynlink|benchmark|test_urcu_lfq.c|-DDYNAMIC_LINK_TEST|liburcu liburcu-cds"
"test_urcu_wfq|benchmark|test_urcu_wfq.c||liburcu"
"test_urcu_wfq_dynlink|benchmark|test_urcu_wfq.c|-DDYNAMIC_LINK_TEST|liburcu"
"test_urcu_lfs|benchmark|test_urcu_lfs.c||liburcu liburcu-cds"
"test_urcu_lfs_dynlink|benchmark|test_urcu_lfs.c|-DDYNAMIC_LINK_TEST|liburcu liburcu-cds"
"test_urcu_lfs_rcu|benchmark|test_urcu_lfs_rcu.c||liburcu liburcu-cds"
"test_urcu_lfs_rcu_dynlink|benchmark|test_urcu_lfs_rcu.c|-DDYNAMIC_LINK_TEST|liburcu liburcu-cds"
"test_urcu_wfs|benchmark|test_urcu_wfs.c||liburcu"
"test_urcu_wfs_dynlink|benchmark|test_urcu_wfs.c|-DDYNAMIC_LINK_TEST|liburcu"
"test_urcu_wfcq|benchmark|test_urcu_wfcq.c||liburcu"
"test_urcu_wfcq_dynlink|benchmark|test_urcu_wfcq.c|-DDYNAMIC_LINK_TEST|liburcu"
"test_urcu_hash|benchmark|test_urcu_hash.c test_urcu_hash_rw.c test_urcu_hash_unique.c|-DRCU_QSBR|liburcu-qsbr liburcu-cds"
"test_urcu_fork|regression|test_urcu_fork.c tap||liburcu"
"rcutorture_urcu_membarrier|regression|urcutorture.c tap|-DRCU_MEMBARRIER|liburcu"
"rcutorture_urcu_signal|regression|urcutorture.c tap|-DRCU_SIGNAL|liburcu-signal"
"rcutorture_urcu_mb|regression|urcutorture.c tap|-DRCU_MB|liburcu-mb"
"rcutorture_urcu_bp|regression|urcutorture.c tap|-DRCU_BP|liburcu-bp"
"rcutorture_urcu_qsbr|regression|urcutorture.c tap|-DTORTURE_QSBR -DRCU_QSBR|liburcu-qsbr"
"test_arch|unit|test_arch.c tap||liburcu"
"test_uatomic|unit|test_uatomic.c tap||liburcu"
"test_urcu_multiflavor|unit|test_urcu_multiflavor.c test_urcu_multiflavor-memb.c test_urcu_multiflavor-mb.c test_urcu_multiflavor-signal.c test_urcu_multiflavor-qsbr.c test_urcu_multiflavor-bp.c tap||liburcu liburcu-mb liburcu-signal liburcu-qsbr liburcu-bp"
"test_urcu_multiflavor_dynlink|unit|test_urcu_multiflavor.c test_urcu_multiflavor-memb.c test_urcu_multiflavor-mb.c test_urcu_multiflavor-signal.c test_urcu_multiflavor-qsbr.c test_urcu_multiflavor-bp.c tap|-DDYNAMIC_LINK_TEST|liburcu liburcu-mb liburcu-signal liburcu-qsbr liburcu-bp"
"test_urcu_multiflavor_single_unit|unit|test_urcu_multiflavor_single_unit.c tap||liburcu liburcu-mb liburcu-signal liburcu-qsbr liburcu-bp"
"test_urcu_multiflavor_single_unit_dynlink|unit|test_urcu_multiflavor_single_unit.c tap|-DDYNAMIC_LINK_TEST|liburcu liburcu-mb liburcu-signal liburcu-qsbr liburcu-bp"
)

# pkg-config for one implementation: grace-urcu's files only, or the system's only.
pc() {
  local impl=$1; shift
  if [ "$impl" = grace ]; then
    PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$GPC" pkg-config "$@"
  else
    pkg-config "$@"
  fi
}

build_one() {
  local impl=$1 entry=$2 name dir srcs flags mods out
  IFS='|' read -r name dir srcs flags mods <<< "$entry"
  out=$B/bin/$impl/$name
  local files=() s
  for s in $srcs; do
    case "$s" in
      tap) files+=("$SRC/tests/utils/tap.c") ;;
      yield) files+=("$SRC/tests/common/debug-yield.c") ;;
      *) files+=("$SRC/tests/$dir/$s") ;;
    esac
  done
  # shellcheck disable=SC2046,SC2086
  if cc -O2 -g -include "$B/config.h" -I"$SRC/tests/common" -I"$SRC/tests/utils" -I"$SRC/src" \
        $flags "${files[@]}" -o "$out" $(pc "$impl" --cflags --libs $mods) -lpthread \
        $([ "$impl" = grace ] && echo "-Wl,-rpath,$GLIB") > "$LOG/build-$impl-$name.log" 2>&1; then
    echo ok
  else
    echo fail
  fi
}

log "building ${#PROGRAMS[@]} programs twice (grace-urcu, liburcu $SYS_VERSION)"
mkdir -p "$B/bin/grace" "$B/bin/liburcu"
: > "$B/build.tsv"
for entry in "${PROGRAMS[@]}"; do
  name=${entry%%|*}
  for impl in grace liburcu; do
    printf '%s\t%s\t%s\n' "$name" "$impl" "$(build_one "$impl" "$entry")" >> "$B/build.tsv"
  done
done

if [ "$BUILD_ONLY" = 1 ]; then
  awk -F'\t' '$3 != "ok" {print "  build failed: " $2 " " $1}' "$B/build.tsv"
  log "build only: $(awk -F'\t' '$2 == "grace" && $3 == "ok"' "$B/build.tsv" | wc -l) programs built against grace-urcu, $(awk -F'\t' '$2 == "liburcu" && $3 == "ok"' "$B/build.tsv" | wc -l) against liburcu (of ${#PROGRAMS[@]})"
  exit 0
fi

# ---- 4. the runs (name | program | arguments | throughput?) ----
NCPU=$(nproc)
RUNS=()
for p in test_urcu test_urcu_dynamic_link test_urcu_mb test_urcu_signal \
         test_urcu_signal_dynamic_link test_urcu_qsbr test_urcu_qsbr_dynamic_link \
         test_urcu_bp test_urcu_bp_dynamic_link test_urcu_assign test_urcu_assign_dynamic_link \
         test_urcu_defer test_rwlock test_perthreadlock test_mutex; do
  RUNS+=("$p|$p|2 2 $DUR -d 0|tput")
done
for p in test_urcu_yield test_urcu_signal_yield; do
  RUNS+=("$p|$p|2 2 $DUR -d 0 -r -w|tput")
done
for p in test_urcu_gc test_urcu_signal_gc test_urcu_mb_gc test_urcu_qsbr_gc test_urcu_lgc \
         test_urcu_signal_lgc test_urcu_mb_lgc test_urcu_qsbr_lgc; do
  RUNS+=("$p|$p|2 2 $DUR -d 0 -b 32768|tput")
done
for p in test_urcu_lfq test_urcu_lfq_dynlink test_urcu_wfq test_urcu_wfq_dynlink \
         test_urcu_lfs test_urcu_lfs_dynlink test_urcu_lfs_rcu test_urcu_lfs_rcu_dynlink \
         test_urcu_wfs test_urcu_wfs_dynlink test_urcu_wfcq test_urcu_wfcq_dynlink; do
  RUNS+=("$p|$p|2 2 $DUR|tput")
done
for p in test_urcu_timing test_urcu_signal_timing test_urcu_qsbr_timing test_rwlock_timing \
         test_perthreadlock_timing; do
  RUNS+=("$p|$p|2 2|once")
done
RUNS+=("test_looplen|test_looplen||once" "test_cycles_per_loop|test_cycles_per_loop||once")
# test_urcu_hash: the configurations of runhash.sh (thread multiplier 1: floor of 4 CPUs).
i=0
while IFS= read -r a; do
  i=$((i + 1))
  RUNS+=("test_urcu_hash#$i|test_urcu_hash|$a|tput")
done <<EOS
0 4 $DUR -A -s -M 1 -N 1 -O 1 -v
0 4 $DUR -A -u -M 1 -N 1 -O 1 -v
2 2 $DUR -A -s -M 1 -N 1 -O 1 -v
2 2 $DUR -A -M 1 -N 1 -O 1 -v
2 2 $DUR -A -v
2 2 $DUR -A -s -v
2 2 $DUR -A -u -v
2 2 $DUR -A -m 1 -n 1048576 -i -M 100000000 -N 100000000 -O 100000000 -B order -v
2 2 $DUR -A -m 1 -n 1048576 -i -M 100000000 -N 100000000 -O 100000000 -B chunk -v
2 2 $DUR -A -m 1 -n 1048576 -i -M 100000000 -N 100000000 -O 100000000 -B mmap -v
2 2 $DUR -A -R 1000000 -v
2 2 $DUR -A -M 10 -N 10 -O 10 -v
2 2 $DUR -A -M 10 -N 10 -O 10 -u -v
2 2 $DUR -A -M 10 -N 10 -O 10 -s -v
2 2 $DUR -A -M 10 -N 10 -O 10 -R 0 -T 0 -S 10 -k 10 -s -v
2 2 $DUR -A -U -v
2 2 $DUR -A -U -C 4 -v
EOS
# rcutorture: every flavor, mode and call_rcu worker arrangement.
for f in membarrier signal mb bp qsbr; do
  for m in perf rperf uperf stress; do
    for c in global percpu perthread; do
      if [ "$QUICK" = 1 ] && [ "$m" = stress ] && [ "$c" != global ]; then continue; fi
      RUNS+=("rcutorture_urcu_${f}_${m}_${c}|rcutorture_urcu_$f|$NCPU $m 1 callrcu_$c|$([ "$m" = stress ] && echo once || echo tput)")
    done
  done
done
RUNS+=("test_urcu_fork|test_urcu_fork||once")
for p in test_arch test_uatomic test_urcu_multiflavor test_urcu_multiflavor_dynlink \
         test_urcu_multiflavor_single_unit test_urcu_multiflavor_single_unit_dynlink; do
  RUNS+=("$p|$p||once")
done

# One run: "status<TAB>seconds" and the output in the log. A TAP program passes when it exits
# 0 and prints no "not ok"; the others when they exit 0.
run_one() {
  local impl=$1 run=$2 prog=$3 args=$4 rep=$5 logf rc t0 t1
  logf=$LOG/run-$impl-${run//[#\/]/_}-$rep.log
  if [ ! -x "$B/bin/$impl/$prog" ]; then
    printf 'nobuild\t0\n'
    return
  fi
  t0=$(date +%s.%N)
  set +e
  # shellcheck disable=SC2086
  (cd "$B/bin/$impl" && timeout -k 10 120 "./$prog" $args) > "$logf" 2>&1
  rc=$?
  set -e
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && ! grep -q '^not ok' "$logf"; then
    printf 'pass\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}')"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    printf 'timeout\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}')"
  else
    printf 'fail(%d)\t%s\n' "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}')"
  fi
}

log "running ${#RUNS[@]} configurations, $REPS repetition(s) of the throughput ones, interleaved"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$B/runs.tsv"
for entry in "${RUNS[@]}"; do
  IFS='|' read -r run prog args kind <<< "$entry"
  reps=1
  [ "$kind" = tput ] && reps=$REPS
  for ((r = 0; r < reps; r++)); do
    # Alternate which implementation goes first: grace, liburcu, then liburcu, grace, ...
    if [ $((r % 2)) -eq 0 ]; then order="grace liburcu"; else order="liburcu grace"; fi
    for impl in $order; do
      res=$(run_one "$impl" "$run" "$prog" "$args" "$r")
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$run" "$impl" "$r" "$kind" "$res" \
        "$LOG/run-$impl-${run//[#\/]/_}-$r.log" >> "$B/runs.tsv"
    done
  done
  log "$run: $(awk -F'\t' -v r="$run" '$1==r {printf "%s:%s ", $2, $5}' "$B/runs.tsv")"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 5. the report ----
python3 "$ROOT/compat/tests/liburcu_report.py" --build "$B/build.tsv" --runs "$B/runs.tsv" \
  --out "$OUT" --urcu-version "$URCU_VERSION" --deb-version "$DEB_VERSION" \
  --sys-version "$SYS_VERSION" --duration "$DUR" --reps "$REPS" --quick "$QUICK" \
  --load-before "$LOAD_BEFORE" --load-after "$LOAD_AFTER" \
  --elapsed "$(( $(date +%s) - START ))"
log "report: $OUT"
