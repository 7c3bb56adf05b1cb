#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Smoke test of the scaling family (ctest: bench_scaling_selftest). Happy paths: every scalebench
# command writes its rows. Hostile paths: a thread count the machine cannot create is reported,
# not crashed on; a run past its budget stops and says so; unknown designs and bad run.sh
# arguments are refused with status 2.
#   bench/scaling/selftest.sh SCALEBENCH
set -uo pipefail
sb=${1:?usage: selftest.sh SCALEBENCH}
here=$(cd "$(dirname "$0")" && pwd)
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
has_row() { grep -q "$2" "$1"; }

# Happy paths.
"$sb" sweep --design grace --threads 8 --samples 100 >"$tmp/sweep" 2>"$tmp/sweep.err"
check "sweep writes p50 and p99" has_row "$tmp/sweep" '^sweep,grace,8,0,p99_us,'
check "sweep writes its setup time" has_row "$tmp/sweep" '^sweep,grace,8,0,setup_ms,'
"$sb" sweep --design grace-qsbr --threads 8 --samples 100 >"$tmp/qsbr" 2>&1
check "QSBR sweep with offline threads" has_row "$tmp/qsbr" '^sweep,grace-qsbr,8,0,p50_us,'
"$sb" lifecycle --design grace --iters 50 >"$tmp/life" 2>&1
check "lifecycle writes p50" has_row "$tmp/life" '^lifecycle,grace,1,0,p50_us,'
"$sb" memory --design grace --threads 16 >"$tmp/mem" 2>&1
check "memory writes the TLS size" has_row "$tmp/mem" '^memory,grace,16,0,tls_bytes,'
"$sb" membarrier --spinners 1 --sleepers 0 --samples 50 >"$tmp/mb" 2>&1
check "membarrier writes p50 or says it is unsupported" \
  grep -Eq '^membarrier,private-expedited,2,0,(p50_us|unsupported),' "$tmp/mb"

# More threads than the machine can create (address space capped): reported, exit 0.
(ulimit -v 400000 && exec "$sb" sweep --design grace --threads 100000 --samples 10) \
  >"$tmp/many" 2>"$tmp/many.err"
rc=$?
check "too many threads: exit 0" [ "$rc" = 0 ]
check "too many threads: rows created and failed" has_row "$tmp/many" '^sweep,grace,100000,0,failed,1,'
check "too many threads: a message with the count reached" \
  grep -q "the machine created [0-9]* of the 100000 threads" "$tmp/many.err"

# A run longer than its budget stops at the budget and says so. Parking off: with the idle
# threads parked a grace period takes about 30 ns and 5 million fit in the budget.
GRACE_NO_PARK=1 "$sb" sweep --design grace --threads 256 --samples 5000000 --budget-s 1 \
  >"$tmp/budget" 2>"$tmp/budget.err"
check "budget: stopped_at_budget = 1" has_row "$tmp/budget" '^sweep,grace,256,0,stopped_at_budget,1,'
check "budget: says so" grep -q "stopped at its time budget" "$tmp/budget.err"

# Bad input.
"$sb" sweep --design nope --threads 1 >/dev/null 2>"$tmp/bad"
rc=$?
check "unknown design: exit 2 with a message" [ "$rc" = 2 ]
check "unknown design: message names it" grep -q "unknown design 'nope'" "$tmp/bad"
GRACE_BUILD=$tmp/nobuild "$here/run.sh" --out "$tmp/o" --only nope >/dev/null 2>&1
check "run.sh --only with an unknown phase: exit 2" [ $? = 2 ]
GRACE_BUILD=$tmp/nobuild "$here/run.sh" --out "$tmp/o" --threads 0 >/dev/null 2>&1
check "run.sh --threads 0: exit 2" [ $? = 2 ]

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
