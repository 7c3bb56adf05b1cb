#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The reader's cost of a hazard pointer (issue 34): hazptr_protect() + hazptr_reset() around one
# load of the object, in the noinline function hp_protect_reset of protect_cost.c, counted by
# callgrind (instructions per call on include/grace/hazptr.h's lines) and read from the
# disassembly: no fence (mfence, lfence, sfence) and no locked or exchanging instruction.
# Instruction counts do not depend on the load: this runs anywhere.
#
#   tests/hazptr/check_instructions.sh EXE [MAX]   (MAX: the most instructions allowed, 10)
#
# Prints "protect+reset: N instructions per call (...)" and exits 1 past MAX or on a fence.
set -euo pipefail
exe=$1
max=${2:-10}
n=200000
command -v valgrind >/dev/null || { echo "check_instructions: valgrind not found: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GRACE_NO_MEMBARRIER= valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$exe" "$n" \
  >/dev/null 2>"$tmp/vg.log" || { tail -n 5 "$tmp/vg.log"; exit 1; }
# callgrind attributes each instruction to its source line: those of include/grace/hazptr.h
# inside hp_protect_reset are protect + reset, inlined (what any caller executes); the rest
# of the function (its frame, the object's load, the ret) is attributed to protect_cost.c.
ann=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null)
num() { tr -d , | awk '{ print $1 + 0 }'; }
inl=$(echo "$ann" | grep -E "include/grace/hazptr\.h:hp_protect_reset" | head -n 1 | num)
own=$(echo "$ann" | grep -E "protect_cost\.c:hp_protect_reset" | head -n 1 | num)
pr=$(awk -v s="$inl" -v n=$n 'BEGIN { printf "%.2f", s / n }')
per=$(awk -v a="$inl" -v b="$own" -v n=$n 'BEGIN { printf "%.2f", (a + b) / n }')
body=$(objdump -d --no-show-raw-insn "$exe" | awk '
  $2 == "<hp_protect_reset>:" { on = 1; next }
  on && /^$/ { exit }
  on && NF > 1 { print }')
echo "$body"
echo "protect+reset: $pr instructions per call (hazptr.h's lines; $per in all of" \
  "hp_protect_reset with its frame, the object's load and the ret; callgrind, $n calls)"
[ "$inl" -gt 0 ] || { echo "check_instructions: no hazptr.h lines found" >&2; exit 1; }
if echo "$body" | grep -Eq '\b(mfence|lfence|sfence|lock|xchg|cmpxchg)\b'; then
  echo "check_instructions: a fence or an atomic read-modify-write in the fast path" >&2
  exit 1
fi
awk -v p="$pr" -v m="$max" 'BEGIN { exit !(p <= m) }' ||
  { echo "check_instructions: $pr instructions > $max" >&2; exit 1; }
