#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The reader's cost of a hazard pointer (issue 34): hazptr_protect() + hazptr_reset() around one
# load of the object, in the noinline function hp_protect_reset of protect_cost.c, counted by
# callgrind (instructions per call on include/grace/hazptr.h's lines) and read from the
# disassembly: no fence (mfence, lfence, sfence) and no locked or exchanging instruction.
# Instruction counts do not depend on the load: this runs anywhere.
#
#   tests/hazptr/check_instructions.sh EXE [MAX]   (MAX: the most instructions allowed, 10)
#   tests/hazptr/check_instructions.sh EXE MAX alloc|retire|rcu_retire
#
# Prints "protect+reset: N instructions per call (...)" and exits 1 past MAX or on a fence.
#
# alloc: hazptr_alloc() + hazptr_free() (hp_alloc_free), retire: hazptr_retire(NULL, p)
# (hp_retire), rcu_retire: rcu_retire(p) (rc_retire), whose fast path must also make no call.
# For those the figure checked against MAX is the fast path, read from the
# disassembly: the instructions from the function's entry to its first ret, straight through,
# less the function's own frame (push, pop, the adjustment of %rsp, the ret): what a caller that
# inlines the calls executes when they stay inline. callgrind gives, per call, the instructions
# executed in the function itself (fast path or not; with debug information, those on
# hazptr.h's and internal/retire.h's lines) and, for retire, the share of calls that went out of
# line and the instructions per call including them (the scans, and the frees they make).
set -euo pipefail
# shellcheck source=../../scripts/callgrind-fn.sh
. "$(dirname "$0")/../../scripts/callgrind-fn.sh"
exe=$1
max=${2:-10}
mode=${3:-protect}
n=200000
command -v valgrind >/dev/null || { echo "check_instructions: valgrind not found: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fences='\b(mfence|lfence|sfence|lock|xchg|cmpxchg)\b'
if [ "$mode" != protect ]; then
  case "$mode" in
    alloc) fn=hp_alloc_free what="alloc+free" ;;
    retire) fn=hp_retire what="retire" ;;
    rcu_retire) fn=rc_retire what="rcu_retire" ;;
    *) echo "check_instructions: unknown mode $mode" >&2; exit 2 ;;
  esac
  GRACE_NO_MEMBARRIER= valgrind --tool=callgrind --compress-strings=no --compress-pos=no \
    --callgrind-out-file="$tmp/cg.out" "$exe" "$n" \
    "$mode" >/dev/null 2>"$tmp/vg.log" || { tail -n 5 "$tmp/vg.log"; exit 1; }
  path=$(cg_straight_path "$exe" "$fn")
  echo "$path"
  fast=$(echo "$path" | cg_fast_count)
  self=$(cg_fn_count "$tmp/cg.out" "$fn" self)
  incl=$(cg_fn_count "$tmp/cg.out" "$fn" inclusive)
  slow=$(cg_calls_out "$tmp/cg.out" "$fn")
  echo "$what: fast path $fast instructions (the straight path, frame left out); in $fn" \
    "itself $(awk -v a="$self" -v n=$n 'BEGIN { printf "%.2f", a / n }') per call, frame" \
    "included; $(awk -v a="$incl" -v n=$n 'BEGIN { printf "%.2f", a / n }') per call with" \
    "its callees; out of line: $slow of $n calls (callgrind)"
  [ "$fast" -gt 0 ] || { echo "check_instructions: no $fn found" >&2; exit 1; }
  if echo "$path" | grep -Eq "$fences"; then
    echo "check_instructions: a fence or an atomic read-modify-write in the fast path" >&2
    exit 1
  fi
  if [ "$mode" = rcu_retire ] && echo "$path" | grep -Eq '\bcall'; then
    echo "check_instructions: a call in the fast path" >&2
    exit 1
  fi
  [ "$fast" -le "$max" ] || { echo "check_instructions: $fast instructions > $max" >&2; exit 1; }
  exit 0
fi
GRACE_NO_MEMBARRIER= valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$exe" "$n" \
  >/dev/null 2>"$tmp/vg.log" || { tail -n 5 "$tmp/vg.log"; exit 1; }
# callgrind attributes each instruction to its source line: those of include/grace/hazptr.h
# inside hp_protect_reset are protect + reset, inlined (what any caller executes); the rest
# of the function (its frame, the object's load, the ret) is attributed to protect_cost.c.
ann=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null)
num() { tr -d , | awk '{ print $1 + 0 }'; }
inl=$(echo "$ann" | grep -E "include/grace/hazptr\.h:hp_protect_reset" | awk 'NR == 1' | num)
own=$(echo "$ann" | grep -E "protect_cost\.c:hp_protect_reset" | awk 'NR == 1' | num)
pr=$(awk -v s="$inl" -v n=$n 'BEGIN { printf "%.2f", s / n }')
per=$(awk -v a="$inl" -v b="$own" -v n=$n 'BEGIN { printf "%.2f", (a + b) / n }')
body=$(objdump -d --no-show-raw-insn "$exe" | awk '
  $2 == "<hp_protect_reset>:" { on = 1; next }
  on && /^$/ { on = 0 }
  on && NF > 1 { print }')
echo "$body"
echo "protect+reset: $pr instructions per call (hazptr.h's lines; $per in all of" \
  "hp_protect_reset with its frame, the object's load and the ret; callgrind, $n calls)"
[ "$inl" -gt 0 ] || { echo "check_instructions: no hazptr.h lines found" >&2; exit 1; }
if echo "$body" | grep -Eq "$fences"; then
  echo "check_instructions: a fence or an atomic read-modify-write in the fast path" >&2
  exit 1
fi
awk -v p="$pr" -v m="$max" 'BEGIN { exit !(p <= m) }' ||
  { echo "check_instructions: $pr instructions > $max" >&2; exit 1; }
