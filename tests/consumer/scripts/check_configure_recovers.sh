#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/cmake-configure.sh recovers from a failed or stale configure (the test command's
# promise, scripts/test.sh): a directory left without a finished configure starts afresh, and
# a configure that fails on a stale cache (another generator) is retried in a fresh directory.
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(-G Ninja -DGRACE_TESTS=OFF -DGRACE_BENCH=OFF -DGRACE_EXAMPLES=OFF -DGRACE_URCU=OFF)
d=$work/b
"$root/scripts/cmake-configure.sh" "$d" "${args[@]}"
[ -f "$d/.grace-configured" ] || { echo "no stamp after a good configure"; exit 1; }
# A stale cache: the generator recorded is another one, so cmake refuses.
sed -i 's/^CMAKE_GENERATOR:INTERNAL=Ninja/CMAKE_GENERATOR:INTERNAL=Unix Makefiles/' "$d/CMakeCache.txt"
"$root/scripts/cmake-configure.sh" "$d" "${args[@]}" 2>"$work/err"
grep -q "retrying in a fresh directory" "$work/err" || { echo "stale cache not retried"; exit 1; }
[ -f "$d/.grace-configured" ] || { echo "no stamp after the retry"; exit 1; }
# An unfinished configure (no stamp) with a poisoned cache: removed before configuring.
rm "$d/.grace-configured"
echo "garbage" >"$d/CMakeCache.txt"
"$root/scripts/cmake-configure.sh" "$d" "${args[@]}" 2>"$work/err"
grep -q "starting afresh" "$work/err" || { echo "unfinished directory not started afresh"; exit 1; }
[ -f "$d/.grace-configured" ] || { echo "no stamp"; exit 1; }
echo "configure recovers: ok"
