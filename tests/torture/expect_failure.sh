#!/bin/sh
# SPDX-License-Identifier: MIT
# Run a torture command that must FAIL: succeed only if it exits with status 1 (a detected
# failure, not a crash, signal or sanitizer abort), prints its flavor's FAILURE line, reports
# its first error within LIMIT seconds and, unless KIND is "any", counts errors of kind KIND
# (a name from the "errors:" line, e.g. "age>=2"; or several, comma-separated: errors of any of
# them count).
# usage: expect_failure.sh LIMIT KIND torture-binary args...
limit=$1
kind=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
	echo "expect_failure: $*"
	exit 1
}
[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1 (a detected FAILURE)"
printf '%s\n' "$out" | grep -q '^torture: [a-z0-9_-]*: FAILURE$' || fail "no FAILURE line"
first=$(printf '%s\n' "$out" |
	sed -n 's/^torture: [a-z0-9_-]*: first error after \([0-9.]*\) s$/\1/p' | head -n 1)
[ -n "$first" ] || fail "no error was reported"
awk -v t="$first" -v l="$limit" 'BEGIN { exit !(t <= l) }' ||
	fail "first error after $first s, limit $limit s"
if [ "$kind" != any ]; then
	n=$(printf '%s\n' "$out" | grep '^torture: [a-z0-9_-]*: errors:' | head -n 1 |
		awk -v k="$kind" 'BEGIN { nk = split(k, ks, ","); s = 0 }
			{ for (i = 1; i < NF; i++) for (j = 1; j <= nk; j++) if ($i == ks[j]) s += $(i + 1) }
			END { print s }')
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no \"$kind\" error counted"
fi
echo "expect_failure: FAILURE detected after $first s (limit $limit s), kind $kind"
exit 0
