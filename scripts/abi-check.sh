#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI check (docs/abi.md), run by scripts/test.sh: compare the libgrace.so of a build that
# has debug information (RelWithDebInfo or Debug) with the committed baseline abi/libgrace.abi,
# or with another description (abi/libgrace-<version>.abi: the ABI of each release).
#   identical, or only additions            pass (additions are listed: new API for the next
#                                           release; the baseline is regenerated at the release)
#   anything removed or changed (a symbol,  fail: an ABI break. Undo it, or declare it: bump
#   a function's type, a layout the inline  GRACE_SOVERSION (and GRACE_SOVERSION_SINCE) in
#   fast paths use, a symbol version)       CMakeLists.txt, then the new SONAME passes here
#   a different SONAME than the baseline    pass, with a notice: a declared break; regenerate
#                                           the baseline with scripts/abi-update.sh
# Usage: scripts/abi-check.sh [build-dir [baseline.abi]]
#        (defaults: build/test-release, abi/libgrace.abi; at a release, compare with the previous
#        release's abi/libgrace-<version>.abi to decide whether the SONAME must change)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/abi-common.sh
build=${1:-build/test-release}
abi_baseline=${2:-$abi_baseline}
lib=$build/src/libgrace.so
abi_need_tools
[ -f "$lib" ] || { echo "abi-check: $lib not built" >&2; exit 1; }
[ -f "$abi_baseline" ] || { echo "abi-check: no baseline $abi_baseline (scripts/abi-update.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abi_describe "$lib" "$tmp/new.abi"
soname() { sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$1" | head -1; }
old_so=$(soname "$abi_baseline")
new_so=$(soname "$tmp/new.abi")
set +e
abidiff --no-show-locs "$abi_baseline" "$tmp/new.abi" >"$tmp/diff" 2>&1
rc=$?
set -e
if [ $((rc & 3)) -ne 0 ]; then
	cat "$tmp/diff"
	echo "abi-check: abidiff failed (status $rc)"
	exit 1
fi
if [ "$old_so" != "$new_so" ]; then
	echo "abi-check: SONAME $old_so -> $new_so: a declared ABI break; regenerate the baseline"
	echo "           (scripts/abi-update.sh) and say so in CHANGELOG.md."
	exit 0
fi
# "N Removed, N Changed, N Added" on the function, variable and ELF-symbol summary lines.
count() { { grep 'changes summary' "$tmp/diff" || true; } | { grep -oE "[0-9]+ $1" || true; } |
	awk '{s += $1} END {print s + 0}'; }
removed=$(count Removed)
changed=$(count Changed)
added=$(count Added)
if [ "$removed" -ne 0 ] || [ "$changed" -ne 0 ]; then
	cat "$tmp/diff"
	echo "abi-check: FAIL: $removed removed and $changed changed against $abi_baseline ($old_so)."
	echo "  An ABI break. Undo it, or declare it: bump GRACE_SOVERSION in CMakeLists.txt (see"
	echo "  docs/abi.md). If the baseline itself is stale on purpose, scripts/abi-update.sh."
	exit 1
fi
if [ "$added" -ne 0 ]; then
	grep -E '^\s+\[A\]' "$tmp/diff" || true
	echo "abi-check: ok: $added addition(s) to $old_so since the baseline (compatible)"
else
	echo "abi-check: ok: identical to the baseline ($old_so)"
fi
