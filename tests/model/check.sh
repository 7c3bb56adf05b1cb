#!/bin/sh
# SPDX-License-Identifier: MIT
# Check the Promela models with spin, and check that they catch bugs: each variant must reach
# its expected verdict.
#
# tests/model/memb.pml, the default flavor:
#   variant             macros                  expected
#   membarrier          (none)                  safety and liveness hold
#   fallback            FALLBACK                safety and liveness hold
#   idle                IDLE                    safety and liveness hold (the idle fast path)
#   no-barrier-A        NO_MB_A                 safety violated (a reader uses a freed object)
#   no-barrier-W        NO_MB_W                 liveness violated (lost wake-up)
#   fallback-no-fence   FALLBACK_NO_RFENCE      safety violated
#   one-flag-pass       ONE_FLAG_PASS           liveness violated (lost wake-up)
#   idle-no-reg-fence   IDLE NO_REG_FENCE       safety violated (registry_add()'s fence removed)
#
# tests/model/barrier.pml, the callback engine's barrier markers and in-flight batch across
# fork() (safety only; a barrier that never returns is an invalid end state, also an error):
#   barrier             (none)                  holds
#   shared-marker       SHARED_MARKER           violated (issue 12, fault 1: a stale marker)
#   local-batch         LOCAL_BATCH             violated (fault 2: the batch lost in the child)
#   no-pause            NO_PAUSE                violated (fork does not wait for the worker)
#
# One verification per variant: pan -a with the LTL claim updater_finishes (<> updater_done)
# also evaluates every assert (the safety property). Safety-violating variants are checked a
# second time in safety mode, ignoring end states (-E), so the verdict names the assertion.
#
# usage: check.sh [--quick|--full] [--keep DIR]
#   --quick  one grace period (NUPD=1), nesting in reader 0 only: ~2M states, the ctest run
#   --full   (default) two grace periods, every reader may nest: ~10M states, ~1 GB of memory
set -eu
here=$(cd "$(dirname "$0")" && pwd)
model=$here/memb.pml
bmodel=$here/barrier.pml
bounds="-DNUPD=2 -DNEST_ALL=1"
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) bounds="-DNUPD=1" ;;
	--full) bounds="-DNUPD=2 -DNEST_ALL=1" ;;
	--keep) keep=$2; shift ;;
	*) echo "usage: $0 [--quick|--full] [--keep DIR]" >&2; exit 2 ;;
	esac
	shift
done
command -v spin >/dev/null || { echo "check.sh: spin not found (Debian package spin)" >&2; exit 2; }
cc=${CC:-cc}
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
fails=0

# run VARIANT MACROS EXPECT   (EXPECT: pass | safety | liveness)
run() {
	name=$1 macros=$2 expect=$3
	dir=$work/$name
	mkdir -p "$dir"
	cp "$model" "$dir/memb.pml"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$dir" && spin -a $bounds $macros memb.pml >spin.log 2>&1 &&
		$cc -O1 -w -DCOLLAPSE -DVECTORSZ=2048 -o pan pan.c >cc.log 2>&1 &&
		./pan -a -m2000000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: $name: spin or cc failed"; cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	what=ok
	if grep -q "assertion violated" "$dir/pan.log"; then
		what="safety violated: $(grep -m1 'assertion violated' "$dir/pan.log" | sed 's/^pan:[0-9]*: //')"
	elif grep -q "acceptance cycle" "$dir/pan.log"; then
		what="liveness violated: the updater never finishes (lost wake-up or hang)"
	elif [ "${errs:-1}" != 0 ]; then
		what="error: $(grep -m1 '^pan:' "$dir/pan.log")"
	fi
	if [ "$expect" = safety ] && ! grep -q "assertion violated" "$dir/pan.log"; then
		# the liveness violation came first: look for the safety violation on its own
		(cd "$dir" && $cc -O1 -w -DCOLLAPSE -DSAFETY -DNOCLAIM -DVECTORSZ=2048 -o pans pan.c \
			>>cc.log 2>&1 && ./pans -E -m2000000 >pans.log 2>&1) || true
		if grep -q "assertion violated" "$dir/pans.log"; then
			what="safety violated: $(grep -m1 'assertion violated' "$dir/pans.log" | sed 's/^pan:[0-9]*: //')"
		fi
	fi
	t1=$(date +%s)
	case $expect in
	pass) [ "$errs" = 0 ] && ok=1 || ok=0 ;;
	safety) case $what in "safety violated"*) ok=1 ;; *) ok=0 ;; esac ;;
	liveness) case $what in "liveness violated"*) ok=1 ;; *) ok=0 ;; esac ;;
	esac
	if [ $ok = 1 ]; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		fails=$((fails + 1))
	fi
	printf 'model: %-18s expect %-8s -> %s (%s states, %ss) [%s]\n' "$name" "$expect" "$what" \
		"${states:-?}" $((t1 - t0)) "$verdict"
	if [ $ok = 0 ] && [ -f "$dir/memb.pml.trail" ]; then
		echo "model: $name: counterexample (spin -t -p):"
		(cd "$dir" && spin -t -p $bounds $macros memb.pml 2>&1 | tail -n 40)
	fi
}

# run_barrier VARIANT MACROS EXPECT   (EXPECT: pass | safety): barrier.pml, safety mode
run_barrier() {
	name=$1 macros=$2 expect=$3
	dir=$work/barrier-$name
	mkdir -p "$dir"
	cp "$bmodel" "$dir/barrier.pml"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$dir" && spin -a $macros barrier.pml >spin.log 2>&1 &&
		$cc -O1 -w -DSAFETY -o pan pan.c >cc.log 2>&1 && ./pan -m1000000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: barrier $name: spin or cc failed"; cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	what=ok
	if grep -q "assertion violated" "$dir/pan.log"; then
		what="violated: a barrier returned before a callback queued ahead of it had run once"
	elif grep -q "invalid end state" "$dir/pan.log" && [ "${errs:-1}" != 0 ]; then
		what="violated: a barrier never returns (invalid end state)"
	elif [ "${errs:-1}" != 0 ]; then
		what="error: $(grep -m1 '^pan:' "$dir/pan.log")"
	fi
	t1=$(date +%s)
	case $expect in
	pass) [ "$errs" = 0 ] && ok=1 || ok=0 ;;
	safety) case $what in violated*) ok=1 ;; *) ok=0 ;; esac ;;
	esac
	if [ $ok = 1 ]; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		fails=$((fails + 1))
	fi
	printf 'model: barrier %-14s expect %-8s -> %s (%s states, %ss) [%s]\n' "$name" "$expect" \
		"$what" "${states:-?}" $((t1 - t0)) "$verdict"
	if [ $ok = 0 ] && [ -f "$dir/barrier.pml.trail" ]; then
		echo "model: barrier $name: counterexample (spin -t -p):"
		(cd "$dir" && spin -t -p $macros barrier.pml 2>&1 | tail -n 40)
	fi
}

echo "model: $model, bounds $bounds, spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p')"
run membarrier "" pass
run fallback "-DFALLBACK" pass
run idle "-DIDLE" pass
run no-barrier-A "-DNO_MB_A" safety
run no-barrier-W "-DNO_MB_W" liveness
run fallback-no-fence "-DFALLBACK_NO_RFENCE" safety
run one-flag-pass "-DONE_FLAG_PASS" liveness
run idle-no-reg-fence "-DIDLE -DNO_REG_FENCE" safety
echo "model: $bmodel"
run_barrier barrier "" pass
run_barrier shared-marker "-DSHARED_MARKER" safety
run_barrier local-batch "-DLOCAL_BATCH" safety
run_barrier no-pause "-DNO_PAUSE" safety
if [ $fails -eq 0 ]; then
	echo "model: SUCCESS (the protocols hold; every broken variant is caught)"
	exit 0
fi
echo "model: FAILURE ($fails variant(s) with an unexpected verdict)"
exit 1
