#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure a build directory so that a failed configure never poisons the next one:
#   scripts/cmake-configure.sh DIR [cmake arguments...]
# A directory whose last configure did not finish (no DIR/.grace-configured stamp: it failed,
# or was interrupted) is removed first, and a configure that fails on an existing cache (a
# stale CMakeCache.txt: another compiler, "requires changing an RPATH ... not supported with
# the Ninja generator") is retried once in a fresh directory. The stamp is written only after
# a configure succeeds. Output of cmake is kept in DIR/configure.log.
set -euo pipefail
dir=$1
shift
src=$(cd "$(dirname "$0")/.." && pwd)
stamp=$dir/.grace-configured
if [ -d "$dir" ] && [ ! -f "$stamp" ]; then
  echo "configure: $dir has no finished configure: starting afresh" >&2
  rm -rf "$dir"
fi
rm -f "$stamp"
mkdir -p "$dir"
if ! cmake -S "$src" -B "$dir" "$@" >"$dir/configure.log" 2>&1; then
  echo "configure: failed in $dir (tail of the log below); retrying in a fresh directory" >&2
  tail -n 5 "$dir/configure.log" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  if ! cmake -S "$src" -B "$dir" "$@" >"$dir/configure.log" 2>&1; then
    tail -n 30 "$dir/configure.log" >&2
    echo "configure: failed again in a fresh $dir" >&2
    exit 1
  fi
fi
touch "$stamp"
