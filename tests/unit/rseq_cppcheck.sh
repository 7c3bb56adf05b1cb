#!/bin/sh
# SPDX-License-Identifier: MIT
# cppcheck analyses the files that include <grace/internal/rseq.h>, rseq paths included
# (internal/arch/rseq-cppcheck.h stands in for the asm goto it cannot parse):
#  1. the plain command over src/ reports no file it could not parse;
#  2. so do runs that name an architecture (-D__x86_64__, -D__aarch64__), which used to select
#     the asm and failed with "AST broken";
#  3. on the probe, cppcheck reports the deliberate finding inside #if GRACE__RSEQ_OPS, which
#     proves that the analysed configuration has the rseq primitives on.
# Usage: rseq_cppcheck.sh CPPCHECK SOURCE_DIR
set -eu
cppcheck=$1
root=$2
cd "$root"
tmpl='{file}:{line}:{severity}:{id}:{message}'
base="--enable=warning,style,performance,portability --std=c11 --template=$tmpl -q -I include -I src"
unparsed='syntaxError|internalAstError|cppcheckError|preprocessorErrorDirective|unknownMacro'
fail=0

# shellcheck disable=SC2086
out=$("$cppcheck" $base src/ 2>&1) || true
if printf '%s\n' "$out" | grep -E "$unparsed"; then
  echo "FAIL: cppcheck could not parse a file of src/"
  fail=1
fi
for arch in __x86_64__ __aarch64__; do
  # shellcheck disable=SC2086
  out=$("$cppcheck" $base -D__GNUC__ -D$arch src/rseq/rseq.c src/engine/callback.c \
    src/flavor/srcu.c tests/unit/rseq_cppcheck_probe.c 2>&1) || true
  if printf '%s\n' "$out" | grep -E "$unparsed"; then
    echo "FAIL: cppcheck -D$arch could not parse an rseq user"
    fail=1
  fi
done
# shellcheck disable=SC2086
out=$("$cppcheck" $base tests/unit/rseq_cppcheck_probe.c 2>&1) || true
if ! printf '%s\n' "$out" | grep -q 'rseq_cppcheck_probe.c:.*arrayIndexOutOfBounds'; then
  printf '%s\n' "$out"
  echo "FAIL: cppcheck did not analyse the rseq paths of the probe (GRACE__RSEQ_OPS was 0)"
  fail=1
fi
[ $fail = 0 ] && echo "cppcheck parses every rseq user and sees the rseq paths"
exit $fail
