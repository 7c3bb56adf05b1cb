#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cxx_rcu_domain_instructions: instructions per read-side region of each C++ route, counted by
# callgrind over N iterations of its loop (tests/cxx/rcu_domain_count.cpp), net of the empty
# loop. Fails unless grace::rcu_domain (directly, and through std::lock_guard, std::scoped_lock
# and std::unique_lock) costs exactly what rcu_read_lock()+rcu_read_unlock() costs, and
# qsbr_domain costs nothing. Prints the table, with the model of the libc++ draft's reader.
# Usage: check_instructions.sh <valgrind> <rcu_domain_count> [iterations]
set -euo pipefail
vg=$1
bin=$2
n=${3:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { # instructions collected inside function $1 over n iterations
	"$vg" --tool=callgrind --callgrind-out-file="$tmp/cg.$1" --toggle-collect="$1" \
		"$bin" "$1" "$n" >/dev/null 2>"$tmp/log.$1" || { cat "$tmp/log.$1" >&2; return 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.$1"
}
per() { # instructions per iteration, two decimals
	awk -v a="$1" -v n="$n" 'BEGIN { printf "%.2f", a / n }'
}

empty=$(count loop_empty)
declare -A net
fail=0
printf '%-18s %10s %8s\n' loop "instr/it" net
for l in loop_c loop_domain loop_lock_guard loop_scoped_lock loop_unique_lock loop_qsbr_domain \
	loop_draft_model; do
	c=$(count "$l")
	net[$l]=$(per $((c - empty)))
	printf '%-18s %10s %8s\n' "$l" "$(per "$c")" "${net[$l]}"
done
# The fences and locked read-modify-writes of the draft model (GCC emits a seq_cst fence as
# "lock or $0,(%rsp)" or "mfence"); grace's loops have none.
echo "serialising instructions in loop_draft_model (objdump):"
objdump -d --no-show-raw-insn "$bin" | awk '/<loop_draft_model>:/,/^$/' |
	grep -E 'mfence|lock ' | sed 's/^[[:space:]]*[0-9a-f]*:[[:space:]]*/  /' || true
for l in loop_c loop_domain loop_lock_guard loop_scoped_lock; do
	if objdump -d --no-show-raw-insn "$bin" | awk "/<$l>:/,/^\$/" | grep -qE 'mfence|lock '; then
		echo "FAIL: $l contains a fence or a locked instruction"
		fail=1
	fi
done
for l in loop_domain loop_lock_guard loop_scoped_lock; do
	if [ "${net[$l]}" != "${net[loop_c]}" ]; then
		echo "FAIL: $l costs ${net[$l]} instructions per region, rcu_read_lock+unlock ${net[loop_c]}"
		fail=1
	fi
done
# unique_lock keeps an owns flag: its stores may cost an instruction or two; report, do not fail.
if [ "${net[loop_qsbr_domain]}" != "0.00" ]; then
	echo "FAIL: qsbr_domain costs ${net[loop_qsbr_domain]} instructions per region (expected 0)"
	fail=1
fi
[ $fail = 0 ] && echo "ok: rcu_domain::lock()+unlock() = rcu_read_lock()+rcu_read_unlock() = ${net[loop_c]} instructions"
exit $fail
