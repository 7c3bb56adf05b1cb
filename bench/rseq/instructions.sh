#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per operation of the rseq primitives and their users, repeatable on any machine
# whatever its load (no timing): the numbers to compare before and after a change of
# include/grace/internal/rseq.h or internal/arch/rseq-*.h.
#
#   bench/rseq/instructions.sh [--out DIR] [--quick]
#
# Two counts per operation, because valgrind does not implement rseq(2):
#  - rseq path (static): bench/callbacks/pathcount.py walks the operation's function from the
#    disassembly, every branch on its likely side (the path a thread with rseq takes);
#  - fallback (callgrind): the whole program under valgrind --tool=callgrind with N and with 2N
#    calls; the difference of the two totals divided by N is the cost of one call (the start-up
#    cancels out; --toggle-collect would lose track at the jump to an abort handler, which lives
#    in a section of its own). Under valgrind both glibc and grace find no rseq, so this is the
#    atomic fallback.
# Operations: rseq_bench count --op OP (cpu, add, add_release, srcu_pair, push: one operation in a
# noinline function op_OP, its call's ret included), grace_rcu_call in libgrace.so (call_rcu's
# common path, as bench/callbacks counts it) and loop_srcu of srcu_bench (one lock+unlock
# iteration of the srcu benchmark's loop, with the loop's own prologue and epilogue).
# Builds nothing: takes the build directory from $GRACE_BUILD (default build/bench). Writes
# DIR/rseq_instr.csv (bench,design,threads,run,metric,value,unit) and prints a table.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/run-args.sh"

bin=$build/bench/rseq/rseq_bench
srcu=$build/bench/srcu/srcu_bench
lib=$build/src/libgrace.so
pathcount=$root/bench/callbacks/pathcount.py
bench_need "$bin" "$srcu" "$lib"
iters=200000
[ $quick = 1 ] && iters=20000
csv=$out/rseq_instr.csv
bench_csv_start "$csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { echo "instr,$1,1,0,$2,$3,instr" >>"$csv"; }

printf '%-16s %14s %16s\n' operation "rseq (static)" "fallback (cg)"
for op in cpu add add_release srcu_pair push; do
  s=$("$py" "$pathcount" --bin "$bin" --func "op_$op")
  row "$op" ir_rseq_path "$s"
  c=n/a
  if command -v valgrind >/dev/null; then
    ok=1
    for n in $iters $((2 * iters)); do
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$op.$n" \
        "$bin" count --op "$op" --iters $n >/dev/null 2>"$tmp/cg.$op.log" || ok=0
    done
    if [ $ok = 1 ]; then
      a=$(awk '/^totals:/ { print $2 }' "$tmp/cg.$op.$iters")
      b=$(awk '/^totals:/ { print $2 }' "$tmp/cg.$op.$((2 * iters))")
      c=$(awk -v a="$a" -v b="$b" -v n=$iters 'BEGIN { printf "%.2f", (b - a) / n }')
      row "$op" ir_fallback "$c"
    else
      echo "instructions.sh: callgrind failed for $op:" >&2
      cat "$tmp/cg.$op.log" >&2
    fi
  fi
  printf '%-16s %14s %16s\n' "$op" "$s" "$c"
done
s=$("$py" "$pathcount" --bin "$lib" --func grace_rcu_call)
row call_rcu ir_rseq_path "$s"
printf '%-16s %14s %16s\n' grace_rcu_call "$s" "(bench/callbacks)"
s=$("$py" "$pathcount" --bin "$srcu" --func loop_srcu)
row srcu_bench_loop ir_rseq_path "$s"
printf '%-16s %14s %16s\n' loop_srcu "$s" "-"
echo "instructions.sh: wrote $csv" >&2
