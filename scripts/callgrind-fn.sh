# SPDX-License-Identifier: MIT
# Shell functions (source this file) that count one function's instructions: the straight path
# of its disassembly and callgrind's counts. Used by tests/hazptr/check_instructions.sh (the
# fast-path tests) and bench/free/retire_cost.sh (what a deferred free costs its caller).
#
# Every awk here reads its input to the end: one that left at its match would end the producer
# (objdump, callgrind_annotate) by SIGPIPE, which a caller's pipefail turns into a failure.

# cg_straight_path EXE FN: FN's instructions from its entry to its first ret, straight through
# (what a caller that inlines FN's body executes when it stays on the fast path), one per line
# as objdump prints them.
cg_straight_path() {
  objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '
    $2 == f && !done { on = 1; next }
    on && /^$/ { on = 0; done = 1 }
    on && NF > 1 { print; if ($2 == "ret" || $2 == "retq") { on = 0; done = 1 } }'
}

# cg_fast_count: how many of the instructions on stdin (cg_straight_path's output) are not the
# function's own frame (push, pop, ret, endbr64, the adjustment of %rsp).
cg_fast_count() {
  awk '$2 ~ /^(push|pop|ret|retq|endbr64)$/ { next }
    $2 ~ /^(sub|add)$/ && $3 ~ /,%rsp$/ { next } { k++ } END { print k + 0 }'
}

# cg_fn_count CGOUT FN self|inclusive: FN's instructions in callgrind's output CGOUT. A function
# whose code comes from several files (an inline header's body) has one line per file,
# "file:FN [object]": its own count is their sum; its inclusive count is the largest, the piece
# it was entered by, which callgrind charges with everything FN calls from any of its lines
# (the other pieces show only their own counts, so a sum would count them twice).
cg_fn_count() {
  local incl=no
  [ "$3" = inclusive ] && incl=yes
  callgrind_annotate --auto=no --threshold=100 --inclusive=$incl "$1" 2>/dev/null |
    awk -v f="$2" -v how="$3" '
      $1 ~ /^[0-9,]+$/ {
        for (i = 2; i < NF; i++) if ($i ~ /%\)$/) break  # "( 1.96%)" or "(32.11%)": the name follows
        w = $(i + 1); sub(/^.*:/, "", w)
        if (w == f) { c = $1; gsub(",", "", c); c += 0; s += c; if (c > m) m = c } }
      END { print (how == "self" ? s : m) + 0 }'
}

# cg_calls_out CGOUT FN: the calls FN made to functions whose names end in _slow (its out-of-line
# path). CGOUT must be written with --compress-strings=no --compress-pos=no.
cg_calls_out() {
  awk -v f="$2" '
    /^fn=/ { cur = $0 } /^cfn=/ { callee = $0 }
    /^calls=/ { if (index(cur, f) && callee ~ /_slow/) { split($1, c, "="); s += c[2] } }
    END { print s + 0 }' "$1"
}
