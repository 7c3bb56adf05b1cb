# SPDX-License-Identifier: MIT
# The benchmark harness, shell side: sourced (not run) by every family's run.sh. Its C side is
# bench.h beside this file, its Python side bench/report/gracereport.py.
#
#   run.sh [--out DIR] [--quick] [--budget SECONDS] [family options]
#
# Expects `here` (the calling script's folder). Reads the build directory from $GRACE_BUILD
# (default build/bench) and the time budget from --budget or $GRACE_FAMILY_BUDGET_S (which
# scripts/report.sh sets to what is left of the report's budget; default: none).
# Sets: root, build, out (absolute, created), quick (0/1), budget_s (0: none), py (the Python
# with matplotlib), cpu_model, build_type (from the build's CMakeCache.txt), t_begin (seconds
# since the epoch), report_args (the arguments every report.py takes). A family that takes options of its own sets allow_extra=1 before sourcing
# and finds them, in order, in the array extra_args; otherwise an unknown option is an error.
# --help prints the calling script's header comment.
root=$(cd "$here/../.." && pwd)
build=${GRACE_BUILD:-$root/build/bench}
case "$build" in /*) ;; *) build=$root/$build ;; esac
out=""
quick=0
budget_s=${GRACE_FAMILY_BUDGET_S:-0}
extra_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --quick) quick=1; shift ;;
    --budget) budget_s=${2:?--budget needs seconds}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *)
      if [ "${allow_extra:-0}" = 1 ]; then
        extra_args+=("$1"); shift
      else
        echo "run.sh: unknown argument '$1' (usage: run.sh [--out DIR] [--quick] [--budget S])" >&2
        exit 2
      fi ;;
  esac
done
case "$budget_s" in ''|*[!0-9]*) echo "run.sh: --budget wants whole seconds, not '$budget_s'" >&2; exit 2 ;; esac
[ -n "$out" ] || out=$build/results
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
cpu_model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
build_type=${build_type:-unknown}
t_begin=$(date +%s)

# bench_need FILE...: every file must exist and be executable, else say how to build, exit 1.
bench_need() {
  local f
  for f in "$@"; do
    if [ ! -x "$f" ]; then
      echo "run.sh: $f not found; build first:" >&2
      echo "  cmake -S . -B ${GRACE_BUILD:-build/bench} -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C ${GRACE_BUILD:-build/bench}" >&2
      exit 1
    fi
  done
}

# bench_csv_start CSV: a fresh long-format CSV with its header and the machine's row 0 (kernel,
# CPUs, load average at the start).
bench_csv_start() {
  echo "bench,design,threads,run,metric,value,unit" >"$1"
  echo "machine,$(uname -r),$(nproc),0,load1,$(cut -d' ' -f1 /proc/loadavg),load" >>"$1"
}

# bench_csv_end CSV: the machine's closing rows (load average at the end, elapsed seconds).
bench_csv_end() {
  echo "machine,$(uname -r),$(nproc),1,load1,$(cut -d' ' -f1 /proc/loadavg),load" >>"$1"
  echo "machine,$(uname -r),$(nproc),0,elapsed_s,$(( $(date +%s) - t_begin )),s" >>"$1"
}

# bench_csv_raw NAME: a fresh CSV and raw-sample folder for the family: sets csv=DIR/NAME.csv and
# raw=DIR/NAME-raw (emptied), and starts the CSV (bench_csv_start).
bench_csv_raw() {
  csv=$out/$1.csv
  raw=$out/$1-raw
  rm -rf "$raw"
  mkdir -p "$raw"
  bench_csv_start "$csv"
}

# bench_designs BIN: the designs BIN offers (the first column of `BIN list`: the liburcu peers
# are absent from a build without liburcu-dev) into the array designs; then `has NAME` tests
# for one and `sym NAME` prints its measured function (the second column).
bench_designs() {
  design_bin=$1
  mapfile -t designs < <("$design_bin" list | cut -f1)
}
has() { local d; for d in "${designs[@]}"; do [ "$d" = "$1" ] && return 0; done; return 1; }
sym() { "$design_bin" list | awk -F'\t' -v d="$1" '$1 == d { print $2 }'; }

# bench_cmd NAME: the command line that reproduces this run, for the report ("bench/NAME/run.sh
# --quick").
bench_cmd() {
  local c=$1
  [ "$quick" = 1 ] && c="$c --quick"
  echo "$c"
}

# bench_time_left: seconds left of the budget (a large number when there is none).
bench_time_left() {
  if [ "$budget_s" -gt 0 ]; then
    echo $(( budget_s - ($(date +%s) - t_begin) ))
  else
    echo 1000000
  fi
}

# The arguments every family's report.py takes (gracereport.family_argparser()); the family adds
# --csv and --cmd.
report_args=(--out "$out" --build-type "$build_type" --cpu "${cpu_model:-unknown}")
if [ "$quick" = 1 ]; then report_args+=(--quick); fi
