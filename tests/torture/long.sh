#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Long torture runs, outside the test command: every flavor and mode for an hour (by default),
# then the deliberately broken flavor, which must be caught. Writes one log per run and a
# markdown summary (age histogram, reader sections and grace periods per second, errors,
# verdict) to the output directory; exit status 0 only if every run ended as it must.
#
# usage: tests/torture/long.sh [--duration SEC] [--jobs N] [--nice N] [--build DIR] [--out DIR]
#                              [--runs "name name ..."] [--list]
#   --duration SEC  per run (default 3600)
#   --jobs N        runs at once (default 1; the machine is shared, so niced by default)
#   --nice N        nice level of the runs (default 10)
#   --build DIR     build directory with tests/torture/torture (default: build/torture-long,
#                   configured and built here as RelWithDebInfo if it does not exist)
#   --out DIR       logs and summary.md (default: torture-long-<date> in the build directory)
#   --runs LIST     subset of the run names (--list shows them)
# Also registered with ctest as torture_long_<name> (label "long": ctest -L long).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# name | flavor | environment | extra arguments: tests/torture/runs.list (shared with
# tests/torture/torture.cmake), "#" comments left out
all_runs=()
while IFS= read -r line; do
	case $line in [a-z]*) all_runs+=("$line") ;; esac
done <tests/torture/runs.list
duration=3600 jobs=1 nicelvl=10 build= out= only=
while [ $# -gt 0 ]; do
	case $1 in
	--duration) duration=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--nice) nicelvl=$2; shift ;;
	--build) build=$2; shift ;;
	--out) out=$2; shift ;;
	--runs) only=$2; shift ;;
	--list) for r in "${all_runs[@]}"; do echo "${r%%|*}"; done; exit 0 ;;
	*) sed -n '3,17p' "$0"; exit 2 ;;
	esac
	shift
done
if [ -z "$build" ]; then
	build=build/torture-long
	if [ ! -x "$build/tests/torture/torture" ]; then
		cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRACE_TESTS=ON -DGRACE_BENCH=OFF \
			-DGRACE_EXAMPLES=OFF >/dev/null
		cmake --build "$build" --target torture >/dev/null
	fi
fi
bin=$root/$build/tests/torture/torture
[ -x "$bin" ] || { echo "long.sh: $bin not found (build the torture target)" >&2; exit 2; }
out=${out:-$build/torture-long-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

# Runs whose flavor this binary was built without (urcu-*: GRACE_URCU off) are left out.
built=" $("$bin" --list | awk '{ printf "%s ", $1 }')"
runs=()
for r in "${all_runs[@]}"; do
	name=${r%%|*}
	flavor=${r#*|}
	flavor=${flavor%%|*}
	if [[ "$built" != *" $flavor "* ]]; then
		echo "long.sh: $name left out: this torture binary has no flavor $flavor" >&2
		continue
	fi
	if [ -z "$only" ] || [[ " $only " == *" $name "* ]]; then
		runs+=("$r")
	fi
done
echo "long.sh: ${#runs[@]} runs of ${duration}s, $jobs at a time, nice $nicelvl; logs in $out"
echo "long.sh: start $(date -u '+%F %T') UTC; uptime: $(uptime)" | tee "$out/conditions.txt"

start_run() {
	local r=$1 name flavor env extra
	IFS='|' read -r name flavor env extra <<<"$r"
	(
		[ -n "$env" ] && export "${env?}"
		# shellcheck disable=SC2086 # extra holds several arguments
		nice -n "$nicelvl" "$bin" --flavor "$flavor" --duration "$duration" --stall 600 \
			$extra >"$out/$name.log" 2>&1
		echo $? >"$out/$name.rc"
	) &
}
running=0
for r in "${runs[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	start_run "$r"
	running=$((running + 1))
done
wait || true
echo "long.sh: end $(date -u '+%F %T') UTC; uptime: $(uptime)" | tee -a "$out/conditions.txt"

# The checker must still catch the broken flavor (within 10 s).
"$bin" --flavor broken --duration 10 --fail-fast >"$out/broken.log" 2>&1 && brc=0 || brc=$?
echo $brc >"$out/broken.rc"

# Summary.
fail=0
field() { sed -n "s/^torture: [a-z0-9-]*: $1/\\1/p" "$2" | head -n 1; }
{
	echo "# Long torture runs"
	echo
	echo "$(cat "$out/conditions.txt")"
	echo
	echo "| run | flavor, mode | s | reader sections/s | grace periods/s | updates/s | age histogram | errors | verdict |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for r in "${runs[@]}"; do
		IFS='|' read -r name flavor env extra <<<"$r"
		log=$out/$name.log
		rc=$(cat "$out/$name.rc" 2>/dev/null || echo "?")
		mode=$(sed -n 's/^torture: [a-z0-9-]*: mode \([^;]*\);.*/\1/p' "$log" | head -n 1)
		secs=$(sed -n 's/^torture: [a-z0-9-]*: mode [^;]*; \([0-9.]*\) s,.*/\1/p' "$log" | head -n 1)
		rs=$(sed -n 's/^torture: [a-z0-9-]*: reader sections [0-9]* (\([0-9]*\)\/s).*/\1/p' "$log" | head -n 1)
		gp=$(sed -n 's/^torture: [a-z0-9-]*: grace periods [0-9]* (\([0-9]*\)\/s.*/\1/p' "$log" | head -n 1)
		up=$(sed -n 's/^torture: [a-z0-9-]*: updates [0-9]* (\([0-9]*\)\/s).*/\1/p' "$log" | head -n 1)
		hist=$(field "age histogram: \\(.*\\)" "$log")
		errs=$(sed -n 's/^torture: [a-z0-9-]*: errors: //p' "$log" | head -n 1 |
			awk '{ n = 0; for (i = 2; i <= NF; i += 2) n += $i; print n }')
		verdict=$(sed -n 's/^torture: [a-z0-9-]*: \(SUCCESS\|FAILURE\)$/\1/p' "$log" | head -n 1)
		[ "$rc" = 0 ] && [ "$verdict" = SUCCESS ] || { fail=1; verdict="${verdict:-no verdict} (exit $rc)"; }
		echo "| $name | $flavor, ${mode:-?}${env:+, $env}${extra:+, $extra} | ${secs:-?} | ${rs:-?} | ${gp:-?} | ${up:-?} | ${hist:-?} | ${errs:-?} | $verdict |"
	done
	first=$(field "first error after \\([0-9.]*\\) s" "$out/broken.log")
	bverdict=$(sed -n 's/^torture: broken: \(SUCCESS\|FAILURE\)$/\1/p' "$out/broken.log" | head -n 1)
	if [ "$brc" = 1 ] && [ "$bverdict" = FAILURE ]; then
		echo
		echo "Broken flavor: FAILURE reported after ${first:-?} s, as required (caught)."
	else
		fail=1
		echo
		echo "Broken flavor: NOT caught (exit $brc, verdict ${bverdict:-none}): the checker is broken."
	fi
} >"$out/summary.md"
cat "$out/summary.md"
exit $fail
