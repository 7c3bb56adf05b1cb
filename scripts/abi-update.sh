#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerate the ABI baseline abi/libgrace.abi on purpose (docs/abi.md): at a release (then also
# copy it to abi/libgrace-<version>.abi, the release's record), and after a declared ABI break
# (GRACE_SOVERSION bumped). One command:
#   scripts/abi-update.sh               configure and build build/abi (RelWithDebInfo: the
#                                       release build, with the debug information abidw reads)
#   scripts/abi-update.sh <build-dir>   use an existing build with debug information
# Then review `git diff abi/` (scripts/abi-check.sh against the old baseline says what
# changed) and commit it with the release.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/abi-common.sh
abi_need_tools
build=${1:-}
if [ -z "$build" ]; then
	build=build/abi
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRACE_TESTS=OFF \
		-DGRACE_BENCH=OFF -DGRACE_EXAMPLES=OFF >/dev/null
	cmake --build "$build" --target grace >/dev/null
fi
lib=$build/src/libgrace.so
[ -f "$lib" ] || { echo "abi-update: $lib not built" >&2; exit 1; }
if [ -f "$abi_baseline" ] && scripts/abi-check.sh "$build" >/dev/null 2>&1; then
	echo "abi-update: compatible with the old baseline (additions only, or none)"
fi
mkdir -p "$(dirname "$abi_baseline")"
abi_describe "$lib" "$abi_baseline"
echo "abi-update: wrote $abi_baseline from $lib ($(grep -c '<elf-symbol ' "$abi_baseline") symbols)"
