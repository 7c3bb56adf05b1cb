#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run race_prog under a race detector and check the verdict.
#   run_detector.sh tsan     clean|race <prog> <scenario> [rounds]
#   run_detector.sh helgrind|drd clean|race <valgrind> <prog> <scenario> [rounds]
# clean: the run succeeds and the detector reports nothing.
# race:  the detector reports a race, and one of its reports names payload_read() or
#        payload_scribble() (the accesses the broken scenario leaves unordered), so that an
#        unrelated report cannot pass for the expected one.
set -uo pipefail
tool=$1
expect=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case "$tool" in
tsan)
	# halt at the first report; a distinctive exit status; no leak of the test's own settings
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 die_after_fork=0" \
		"$@" >"$out" 2>&1
	rc=$?
	reported=$(grep -c "WARNING: ThreadSanitizer" "$out")
	;;
helgrind | drd)
	vg=$1
	shift
	"$vg" --tool="$tool" --error-exitcode=99 "$@" >"$out" 2>&1
	rc=$?
	reported=$(grep -cE "^==[0-9]+== (Possible data race|Conflicting (load|store))" "$out")
	;;
*)
	echo "unknown tool $tool"
	exit 2
	;;
esac
if [ "$expect" = clean ]; then
	if [ "$rc" -ne 0 ] || [ "$reported" -ne 0 ]; then
		cat "$out"
		echo "FAIL: $tool reported $reported race(s), exit status $rc (expected none)"
		exit 1
	fi
	grep -E "done|ERROR SUMMARY" "$out"
	echo "ok: $tool reports no race"
	exit 0
fi
if [ "$reported" -eq 0 ] || ! grep -qE "payload_(read|scribble)" "$out"; then
	cat "$out"
	echo "FAIL: $tool did not report the race of the broken scenario (exit status $rc)"
	exit 1
fi
grep -E "WARNING: ThreadSanitizer|Possible data race|Conflicting|payload_|ERROR SUMMARY" "$out" | head -12
echo "ok: $tool reports the free without a grace period ($reported report(s))"
exit 0
