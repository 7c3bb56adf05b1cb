#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command: set up a fresh Debian machine, run the static checks, then build (warnings
# are errors) and run every quick test in four configurations, plus the documentation checks
# (once) and the ABI check (release build). Long torture runs, the Debian package check and
# benchmarks are separate (see README).
#   lint         scripts/lint.sh: formatting, names in comments, clang-tidy, cppcheck
#   release      RelWithDebInfo, the build users get
#   debug        GRACE_DEBUG=ON: misuse is diagnosed and aborts (death tests check messages)
#   asan         GRACE_DEBUG=ON + ASan/UBSan/LSan
#   tsan         TSan mode (read side uses acquire/release; fence fallback)
# Usage: scripts/test.sh [config...]   (default: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(lint release debug asan tsan)
jobs=$(nproc)
fail=0
docs_done=0
for c in "${configs[@]}"; do
  if [ "$c" = lint ]; then
    scripts/lint.sh || fail=1
    continue
  fi
  case "$c" in
    release) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    debug)   flags=(-DCMAKE_BUILD_TYPE=Debug -DGRACE_DEBUG=ON) ;;
    asan)    flags=(-DCMAKE_BUILD_TYPE=Debug -DGRACE_DEBUG=ON -DGRACE_SANITIZE=ON) ;;
    tsan)    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRACE_TSAN=ON) ;;
    *) echo "unknown config $c"; exit 2 ;;
  esac
  dir=build/test-$c
  echo "=== $c: configure and build ($dir)"
  cmake -S . -B "$dir" -G Ninja -DGRACE_WERROR=ON \
    -DGRACE_BENCH=$([ "$c" = release ] && echo ON || echo OFF) "${flags[@]}" >/dev/null
  if ! cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
    grep -E "error|warning" "$dir/build.log" | head -n 40
    echo "=== $c: build FAILED (full log: $dir/build.log)"
    fail=1
    continue
  fi
  if [ $docs_done = 0 ]; then
    # Once per run (they do not depend on the configuration): docs/api.md covers every public
    # name and every exported symbol, and no relative link of the markdown dangles.
    echo "=== docs: API coverage and links"
    python3 tests/consumer/scripts/check_api_docs.py . --lib "$dir/src/libgrace.so" || fail=1
    python3 tests/consumer/scripts/check_doc_links.py . || fail=1
    docs_done=1
  fi
  if [ "$c" = release ]; then
    # The ABI against the committed baseline (docs/abi.md): additions pass, breaks fail.
    echo "=== release: ABI check (abi/libgrace.abi)"
    scripts/abi-check.sh "$dir" || fail=1
  fi
  echo "=== $c: ctest"
  label=quick
  env_extra=()
  if [ "$c" = asan ]; then env_extra=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1); fi
  if [ "$c" = tsan ]; then env_extra=(TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 die_after_fork=0 suppressions=$PWD/tests/tsan.supp"); fi
  if ! env "${env_extra[@]}" ctest --test-dir "$dir" -L "$label" -j"$jobs" --output-on-failure --timeout 600; then
    fail=1
  fi
done
exit $fail
