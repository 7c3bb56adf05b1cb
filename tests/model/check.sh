#!/bin/sh
# SPDX-License-Identifier: MIT
# Check the Promela models with spin, and check that they catch bugs: each variant must reach
# its expected verdict.
#
# tests/model/memb.pml, the default flavor (per-thread section numbers; a grace period waits
# for the readers its first scan after barrier A found in a section, each until that section
# ends: the rule of seen, see the top of memb.pml):
#   variant             macros                  expected
#   membarrier          (none)                  safety and liveness hold
#   fallback            FALLBACK                safety and liveness hold
#   idle                IDLE                    safety and liveness hold (the idle fast path)
#   no-barrier-A        NO_MB_A                 safety violated (a reader uses a freed object)
#   no-barrier-W        NO_MB_W                 liveness violated (lost wake-up)
#   fallback-no-fence   FALLBACK_NO_RFENCE      safety violated
#   one-flag-pass       ONE_FLAG_PASS           safety and liveness hold. Under the old rule (a
#                                               snapshot of a shared counter) a reader could
#                                               become a holder after the flag loop, unflagged,
#                                               and this mutant lost its wake-up; under the rule
#                                               of seen holders only leave, every holder the
#                                               re-read finds was flagged, and a flag is cleared
#                                               only by its reader's wake, which also clears the
#                                               futex word: kept as a pass, the evidence that the
#                                               default flavor no longer needs the second flag
#                                               pass (reg_recheck(); QSBR still does)
#   idle-no-reg-fence   IDLE NO_REG_FENCE       safety violated (registry_add()'s fence removed)
#   seq-bump-nested     SEQ_BUMP_NESTED         safety violated (nested locks take a new section
#                                               number: the hold ends inside the section)
#   seen-any-change     SEEN_ANY_CHANGE         safety violated (any change of ctr, a nested
#                                               lock's included, ends the hold)
#   seen-before-a       SEEN_BEFORE_A           safety violated (seen recorded before barrier A)
#   seen-seq-only       SEEN_SEQ_ONLY           liveness violated (the holds rule ignores the
#                                               nesting: the last section never ends)
#   seq-no-bump         SEQ_NO_BUMP             safety and liveness hold (--full only): the
#                                               outermost lock keeping the number is not a safety
#                                               bug (the rule becomes "wait until seen outside a
#                                               section"); the number buys progress against
#                                               back-to-back sections, which bounded readers
#                                               cannot show, so it is no mutant the model catches
#
# Parking (PARK: src/core/registry.c, "Parking"), with bounds of their own: $pbounds (one
# reader, more grace periods: a park set, confirmed, then skipped by the quiet path) and
# $pbounds2 (two readers):
#   park                PARK                    safety and liveness hold (other threads' exits,
#                                               registry_del()'s drain, in the middle of the
#                                               wait included)
#   park-2r             PARK, $pbounds2         safety and liveness hold (--full only; also
#                                               park-2r-both: both readers parkable)
#   park-drain-resets-seen  PARK DRAIN_RESETS_SEEN  safety violated: drain() resetting seen of
#                                               every reader it takes back (src/core/registry.c
#                                               as first written for the rule of seen) lets a
#                                               reader that handed itself back from a nested
#                                               lock, in the section the first scan found it in,
#                                               stop holding when another thread's exit drains
#                                               the stack mid-wait; only a reader that was
#                                               parked (not scanned by the first scan) may get
#                                               seen = none
#   park-check-first    PARK PARK_CHECK_BEFORE_STORE  safety violated (waiter loaded, and PARK
#                                               acted on, before the lock store)
#   park-no-check       PARK PARK_NO_CHECK      safety violated (the lock ignores PARK)
#   park-no-drain       PARK PARK_NO_DRAIN      safety violated (the unpark stack never taken)
#   park-no-barrier     PARK PARK_NO_BARRIER    safety violated (confirmed by the pass that set
#                                               PARK, no barrier A in between)
#   park-no-push-fence  PARK PARK_NO_PUSH_FENCE safety violated (the push a plain store)
#   park-signal         PARK PARK_SIGNAL=3 PARK_SIGNAL_FIX  safety and liveness hold (a signal
#                                               handler's section nested in an outermost lock
#                                               whose hand-back is not done yet: the library
#                                               since the model found it, the nested lock tests
#                                               waiter too and the hand-back runs with signals
#                                               blocked)
#   park-signal-open    PARK PARK_SIGNAL=3      safety violated (the library before that fix:
#                                               the nested lock tests nothing, signals open)
#   park-one-flag-pass  PARK ONE_FLAG_PASS      safety and liveness hold (--full only; an
#                                               outermost lock's test may clear a holder's flag)
#   park-reach          PARK PROBE=1,2,3,4,6    every probe reached (safety mode, pan -c0): a
#                                               grace period takes the quiet path; a drain takes
#                                               a parked reader's push back; the quiet path is
#                                               taken while a parked reader is in a section (its
#                                               push missed: the section must see the new
#                                               pointer); a reader that cleared PARK itself is
#                                               found unparking; a drain in the middle of the
#                                               wait takes back a reader the first scan found in
#                                               a section
#   park-reach-2r       PARK PROBE=5, $pbounds2 reached: a scan waits for a holder while the
#                                               other reader is parked
#
# Stepped grace periods (STEP: src/core/gp.c, "Stepped grace periods"; memb_step() in
# src/flavor/memb.c), with bounds of their own, $sbounds: reader 0 steps from inside its
# sections (2 of them; 3 with --full), reader 1 runs 1 section, no nesting, one update:
#   step                STEP                    safety and liveness hold (a step begins the
#                                               grace period: barrier A, first scan, park; later
#                                               steps adopt and rescan; the blocking updater
#                                               adopts a STEPPED one and finishes it, starts its
#                                               own when idle, sleeps while RUNNING)
#   step-2u             STEP, $sbounds2         safety and liveness hold (--full only: two
#                                               updates)
#   step-reset-seen     STEP STEP_RESET_SEEN    safety violated (an adoption, the stepper's or
#                                               the updater's, loses the first scan's records)
#   step-no-barrier-A   STEP STEP_NO_MB_A       safety violated (the begin step skips barrier
#                                               A: a lock store still buffered reads as none)
#   step-sleep-on-stepped  STEP STEP_SLEEP_ON_STEPPED  liveness violated (the waiter sleeps
#                                               while it reads STEPPED too, as grace__gp_wait()
#                                               did before stepping: a park that found no
#                                               sleeper counted wakes nobody, and no driver is
#                                               left to wake it)
#   step-park-no-wake   STEP STEP_PARK_NO_WAKE  liveness violated (a park wakes nobody: the
#                                               updater asleep on the step's RUNNING stays so)
#   step-reach          STEP PROBE=7,8,9        every probe reached (safety mode, pan -c0): the
#                                               updater adopts the grace period it waits for; a
#                                               poll step ends it; a step wakes the updater
#                                               asleep on it
#   step-ask            STEP ASK                safety and liveness hold (a step that begins a
#                                               grace period asks the readers, which answer at
#                                               their outermost boundaries; later steps and the
#                                               updater end it on the answers or give up: barrier
#                                               A and the first scan; the updater's own grace
#                                               periods ask too)
#   step-ask-nested-answer  STEP ASK ASK_NESTED_ANSWER, reader 0 nests  safety violated
#                                               (--full only; a nested lock answers while its
#                                               outer section uses the old object)
#   step-ask-self-only  STEP ASK ASK_SELF_ONLY  safety violated (--full only; the step asks
#                                               only itself)
#   step-ask-updater-no-wait  STEP ASK ASK_UPDATER_NO_WAIT  safety violated (--full only;
#                                               the updater ends the grace period it asked
#                                               without waiting for the answers)
#   step-ask-reach      STEP ASK PROBE=10       reached: a grace period a step began ends on
#                                               the answers
#   step-ask-reach-updater  STEP ASK PROBE=11   reached: one the updater began ends on them
#
# tests/model/barrier.pml, the callback engine's barrier markers and in-flight batch across
# fork() (safety only; a barrier that never returns is an invalid end state, also an error):
#   barrier             (none)                  holds
#   shared-marker       SHARED_MARKER           violated (issue 12, fault 1: a stale marker)
#   local-batch         LOCAL_BATCH             violated (fault 2: the batch lost in the child)
#   no-pause            NO_PAUSE                violated (fork does not wait for the worker)
#
# tests/model/hazptr.pml, hazard-pointer protect against the asymmetric fence and the scan
# (x86-TSO store buffers; safety only: a reader never uses a freed object):
#   hazptr              (none)                  holds (store, compiler barrier, reload; the scan
#                                               pays membarrier)
#   hazptr-fallback     FALLBACK                holds (fences on both sides)
#   hazptr-no-membarrier NO_MEMBARRIER          violated (the scan loads with no barrier M)
#   hazptr-no-validate  NO_VALIDATE             violated (publish without validate)
#   hazptr-no-barrier-p NO_BARRIER_P            violated (the reload hoisted above the publish)
#   hazptr-fallback-no-rfence FALLBACK FALLBACK_NO_RFENCE  violated (the reader's fence removed)
#   hazptr-scan-first   SCAN_FIRST              violated (a scan judges an object unlinked after
#                                               its barrier)
#
# tests/model/answers.pml, a blocking grace period's sleep for the answers (memb_sleep_for_answers():
# the futex word, the WAITING flags, the answers' wake-ups, unregistration; liveness only, as
# "the driver never sleeps for good": the futex wait has no timeout in the model, so a lost
# wake-up is an invalid end state; safety mode, bounds $abounds, with UNREG $aubounds):
#   answers             (none)                  holds (two grace periods, two readers)
#   answers-unreg       UNREG                   holds (readers also unregister, or exit inside
#                                               their last section)
#   answers-sleeping-late  SLEEPING_LATE        violated (SLEEPING stored after the flags and
#                                               the look: an answer between them wakes nobody)
#   answers-check-before-arm  CHECK_BEFORE_ARM  violated (the look before the flags)
#   answers-drops-flag  ANSWER_DROPS_FLAG       violated (a boundary ignores the WAITING its
#                                               answer's RMW returned)
#   answers-unreg-no-wake  UNREG UNREG_NO_WAKE  violated (an unregistration wakes nobody)
#   answers-reach       PROBE=1,2,3,5; UNREG PROBE=4  each probe reached (one run each): a reader's wake ends
#                                               a futex wait; a second round in one grace
#                                               period; a flag taken back; a wake from a reader
#                                               flagged in an earlier round; an unregistration
#                                               wakes the driver
#
# One verification per variant: pan -a with the LTL claim updater_finishes (<> updater_done)
# also evaluates every assert (the safety property); a variant that must violate safety is
# checked in safety mode alone, ignoring end states (-E), so the verdict names the assertion.
# The quick check compiles the small variants' verifiers at -O0 (see opt()).
#
# usage: check.sh [--quick|--full|--hazptr|--answers|--step|--no-step] [--shard I/N] [--keep DIR]
#   (--hazptr: hazptr.pml only, 1 s; --answers: answers.pml only, about 15 s quick; --step: the stepped variants (STEP) only; --no-step: all
#   but them (ctest runs --full as two tests side by side: --no-step and --step); --shard I/N:
#   only shard I of N, I from 1 to N: the heaviest variant in the last, the others by their
#   position in the order below (see mine()): ctest runs the quick check as three shards side
#   by side)
#   --quick  one grace period (NUPD=1), nesting in reader 0 only: ~2-3M states; parking: one
#            reader, 3 sections, 4 grace periods (~0.5M states); stepped: the stepper 2
#            sections, ~5.5M states, ~0.8 GB, ~13 s, with asking ~26.5M states, ~3.6 GB, ~82 s
#            (asking's two mutants run with --full only); about 300 s of CPU (opt())
#   --full   (default) two grace periods, every reader may nest: ~14-18M states, up to ~1.7 GB
#            of memory; parking: one reader, 4 sections, 6 grace periods (~1.2M states), and
#            two readers of one section each: 3 grace periods with reader 0 parkable (~7M
#            states, ~0.6 GB) and 2 grace periods with both parkable (~6.5M states); stepped:
#            the stepper 3 sections (~16.5M states, 1.1 GB, ~45 s) and two updates with 2
#            (~18.7M states, 1.7 GB, ~50 s), with asking ~69M states, 6.4 GB, ~190 s (its
#            nested-answer mutant ~98M states, 8 GB, ~270 s), about 11 min more (its own ctest
#            entry); about 5 min
set -eu
here=$(cd "$(dirname "$0")" && pwd)
model=$here/memb.pml
bmodel=$here/barrier.pml
hmodel=$here/hazptr.pml
amodel=$here/answers.pml
full=1
only_hp=0
steps=1 # 1: the stepped variants with the others; 2: only them (--step); 0: not them
keep=
shard=1 nshards=1
while [ $# -gt 0 ]; do
	case $1 in
	--quick) full=0 ;;
	--full) full=1 ;;
	--hazptr) only_hp=1 ;;
	--answers) only_hp=2 ;;
	--step) steps=2 ;;
	--no-step) steps=0 ;;
	--keep) keep=$2; shift ;;
	--shard) shard=${2%/*} nshards=${2#*/}; shift ;;
	*) echo "usage: $0 [--quick|--full|--hazptr|--answers|--step|--no-step] [--shard I/N] [--keep DIR]" >&2
		exit 2 ;;
	esac
	shift
done
if [ $full = 1 ]; then
	bounds="-DNUPD=2 -DNEST_ALL=1"
	pbounds="-DNR=1 -DNSECT=4 -DNUPD=6"
	pbounds2="-DNR=2 -DNSECT=1 -DNUPD=3 -DPARK_ONLY=0"
	pbounds2b="-DNR=2 -DNSECT=1 -DNUPD=2"
	sbounds="-DNR=2 -DNSECT=3 -DNSECT1=1 -DNEST0=0 -DNUPD=1"
	sbounds2="-DNR=2 -DNSECT=2 -DNSECT1=1 -DNEST0=0 -DNUPD=2"
	abounds="-DNR=2 -DNSECT=2 -DNGP=2"
	aubounds="-DNR=2 -DNSECT=2 -DNGP=2"
else
	bounds="-DNUPD=1"
	pbounds="-DNR=1 -DNSECT=3 -DNUPD=4"
	pbounds2="-DNR=2 -DNSECT=1 -DNUPD=2 -DPARK_ONLY=0"
	sbounds="-DNR=2 -DNSECT=2 -DNSECT1=1 -DNEST0=0 -DNUPD=1"
	sbounds2=
	abounds="-DNR=2 -DNSECT=2 -DNGP=2"
	aubounds="-DNR=2 -DNSECT=1 -DNGP=2"
fi
command -v spin >/dev/null || { echo "check.sh: spin not found (Debian package spin)" >&2; exit 2; }
cc=${CC:-cc}
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
fails=0
# mine VARIANT: counts the variants in order; true for this shard's (--shard I/N). The heavy
# variants ($heavy: in the quick check, step-ask takes about half of the model's time, 57 s of
# about 105 s alone) go to the last shard, one after another, and every other variant to shard
# 1 to N-1 by position (position I mod N-1): with plain positions mod N the last shard got
# step-ask beside a third of the rest and ran 199 s of the release ctest's 261 s, the others
# 75-83 s. With one shard, everything.
heavy=" step-ask "
nvar=0
mine() {
	nvar=$((nvar + 1))
	[ "$nshards" -gt 1 ] || return 0
	case $heavy in
	*" $1 "*) [ "$shard" = "$nshards" ] ;;
	*) [ $(((nvar - 1) % (nshards - 1) + 1)) = "$shard" ] ;;
	esac
}

# opt VARIANT: how the variant's verifier is compiled. pan.c is some 600 KB of C: -O1
# compiles it in about 5 s on the 2-CPU machine, -O0 in about 1.4 s, and the -O1 verifier runs
# about 1.8 times as fast. A variant that stores under a million states runs for seconds at
# most, less than the compile -O1 costs: in the quick check every variant but those of $big
# (over a million states each) is compiled at -O0. The list sets only the speed: a variant on
# the wrong side of it gets the same verdict, later. The quick check stores its states whole:
# compressing them (COLLAPSE) takes about a third of the time (step-ask: 82 s and 3.6 GB
# whole, 102 s and 2.2 GB compressed); the full check, with up to 98M states, compresses.
# Before these choices compiling took more than half of the quick check's 484 s of CPU; the
# whole check now takes 296 s (2-CPU machine, 2026-12).
big=" membarrier fallback idle no-barrier-A one-flag-pass idle-no-reg-fence seq-bump-nested \
 seen-any-change seen-before-a park-signal step step-reset-seen step-no-barrier-A step-reach \
 step-ask answers answers-unreg "
opt() {
	if [ $full = 1 ]; then
		echo -O1 -DCOLLAPSE
	else
		case $big in *" $1 "*) echo -O1 ;; *) echo -O0 ;; esac
	fi
}

# run VARIANT MACROS EXPECT [BOUNDS]   (EXPECT: pass | safety | liveness; BOUNDS replaces
# $bounds). A variant that must break safety is checked in safety mode alone (pan -E: end
# states ignored), the mode that names the assertion; the others with the LTL claim (pan -a),
# which evaluates every assertion too.
run() {
	mine "$1" || return 0
	name=$1 macros="$2 ${4-$bounds}" expect=$3
	dir=$work/$name
	mkdir -p "$dir"
	cp "$model" "$dir/memb.pml"
	o=$(opt "$name")
	t0=$(date +%s)
	mode="-DVECTORSZ=2048" search=-a # with the claim: liveness and every assertion
	[ "$expect" != safety ] || mode="-DVECTORSZ=2048 -DSAFETY -DNOCLAIM" search=-E
	# shellcheck disable=SC2086 # $o, $mode: flags, split on purpose
	(cd "$dir" && spin -a $macros memb.pml >spin.log 2>&1 &&
		$cc $o -w $mode -o pan pan.c >cc.log 2>&1 &&
		./pan $search -m2000000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: $name: spin or cc failed"; cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	mem=$(sed -n 's/^ *\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p' "$dir/pan.log" |
		head -n 1)
	what=ok
	if grep -q "assertion violated" "$dir/pan.log"; then
		what="safety violated: $(grep -m1 'assertion violated' "$dir/pan.log" | sed 's/^pan:[0-9]*: //')"
	elif grep -q "acceptance cycle" "$dir/pan.log"; then
		what="liveness violated: the updater never finishes (lost wake-up or hang)"
	elif [ "${errs:-1}" != 0 ]; then
		what="error: $(grep -m1 '^pan:' "$dir/pan.log")"
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
	printf 'model: %-22s expect %-8s -> %s (%s states, %s MB, %ss) [%s]\n' "$name" "$expect" \
		"$what" "${states:-?}" "${mem:-?}" $((t1 - t0)) "$verdict"
	if [ $ok = 0 ] && [ -f "$dir/memb.pml.trail" ]; then
		echo "model: $name: counterexample (spin -t -p):"
		# shellcheck disable=SC2086
		(cd "$dir" && spin -t -p $macros memb.pml 2>&1 | tail -n 40)
	fi
}

# run_reach VARIANT MACROS PROBES BOUNDS: memb.pml with -DPROBE=mask of PROBES, in safety mode
# going on past errors (pan -c0; -c1 for one probe): every probe's assertion must fail somewhere
# (reached), and no other assertion.
run_reach() {
	mine "$1" || return 0
	name=$1 macros="$2 $4" probes=$3
	dir=$work/$name
	mkdir -p "$dir"
	cp "$model" "$dir/memb.pml"
	mask=0 np=0
	for n in $probes; do mask=$((mask | (1 << n))) np=$((np + 1)); done
	stop=0 # one probe: stop at its first failure; several: go on past errors
	[ $np != 1 ] || stop=1
	t0=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$dir" && spin -a $macros -DPROBE=$mask memb.pml >spin.log 2>&1 &&
		$cc $(opt "$name") -w -DSAFETY -DNOCLAIM -DVECTORSZ=2048 -o pan pan.c \
			>cc.log 2>&1 &&
		./pan -c$stop -E -m2000000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: $name: spin or cc failed"; cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	mem=$(sed -n 's/^ *\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p' "$dir/pan.log" |
		head -n 1)
	reached= missed=
	for n in $probes; do
		if grep -qF "assertion violated (((${mask}>>${n})&1)==0)" "$dir/pan.log"; then
			reached="$reached $n"
		else
			missed="$missed $n"
		fi
	done
	other=$(grep 'assertion violated' "$dir/pan.log" | grep -vF "assertion violated (((${mask}>>" |
		head -n 1 | sed 's/^pan:[0-9]*: //')
	t1=$(date +%s)
	if [ -z "$missed" ] && [ -z "$other" ]; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		fails=$((fails + 1))
	fi
	printf 'model: %-22s expect reach    -> reached:%s%s%s (%s states, %s MB, %ss) [%s]\n' \
		"$name" "$reached" "${missed:+; NOT reached:$missed}" "${other:+; $other}" \
		"${states:-?}" "${mem:-?}" $((t1 - t0)) "$verdict"
}

# run_sm MODEL VARIANT MACROS EXPECT ASSERTED STUCK [TAG]: a model checked in safety mode only (EXPECT:
# pass, or the kind of break it must find: safety | liveness). ASSERTED says what a failed
# assertion means, STUCK what an invalid end state means (a process blocked for good: a barrier
# that never returns, a driver whose wake-up was lost); either one is the break. TAG prefixes the
# variant's name in the output.
run_sm() {
	mine "$2" || return 0
	mfile=$1 name=$2 macros=$3 expect=$4 asserted=$5 stuck=$6 tag=${7-}
	base=$(basename "$mfile")
	dir=$work/${base%.pml}-$name
	mkdir -p "$dir"
	cp "$mfile" "$dir/$base"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$dir" && spin -a $macros "$base" >spin.log 2>&1 &&
		$cc $(opt "$name") -w -DSAFETY -o pan pan.c >cc.log 2>&1 &&
		./pan -m1000000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: $base $name: spin or cc failed"
		cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	what=ok
	if grep -q "assertion violated" "$dir/pan.log"; then
		what="violated: $asserted"
	elif grep -q "invalid end state" "$dir/pan.log" && [ "${errs:-1}" != 0 ]; then
		what="violated: $stuck"
	elif [ "${errs:-1}" != 0 ]; then
		what="error: $(grep -m1 '^pan:' "$dir/pan.log")"
	fi
	t1=$(date +%s)
	case $expect in
	pass) [ "$errs" = 0 ] && ok=1 || ok=0 ;;
	*) case $what in violated*) ok=1 ;; *) ok=0 ;; esac ;;
	esac
	if [ $ok = 1 ]; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		fails=$((fails + 1))
	fi
	printf 'model: %-26s expect %-8s -> %s (%s states, %ss) [%s]\n' "$tag$name" \
		"$expect" "$what" "${states:-?}" $((t1 - t0)) "$verdict"
	if [ $ok = 0 ] && [ -f "$dir/$base.trail" ]; then
		echo "model: $base $name: counterexample (spin -t -p):"
		# shellcheck disable=SC2086
		(cd "$dir" && spin -t -p $macros "$base" 2>&1 | tail -n 40)
	fi
}

# run_barrier VARIANT MACROS EXPECT   (EXPECT: pass | safety): barrier.pml
run_barrier() {
	run_sm "$bmodel" "$1" "$2" "$3" \
		"a barrier returned before a callback queued ahead of it had run once" \
		"a barrier never returns (invalid end state)" "barrier "
}

# run_hp VARIANT MACROS EXPECT   (EXPECT: pass | safety): hazptr.pml, safety mode
run_hp() {
	mine "$1" || return 0
	name=$1 macros=$2 expect=$3
	dir=$work/$name
	mkdir -p "$dir"
	cp "$hmodel" "$dir/hazptr.pml"
	# shellcheck disable=SC2086
	(cd "$dir" && spin -a $macros hazptr.pml >spin.log 2>&1 &&
		$cc $(opt "$name") -w -DSAFETY -o pan pan.c >cc.log 2>&1 &&
		./pan -m100000 >pan.log 2>&1) || true
	if [ ! -s "$dir/pan.log" ]; then
		echo "model: $name: spin or cc failed"; cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n 1)
	what=ok
	if grep -q "assertion violated" "$dir/pan.log"; then
		what="violated: a reader used a freed object"
	elif [ "${errs:-1}" != 0 ]; then
		what="error: $(grep -m1 '^pan:' "$dir/pan.log")"
	fi
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
	printf 'model: %-26s expect %-6s -> %s (%s states) [%s]\n' "$name" "$expect" "$what" \
		"${states:-?}" "$verdict"
}

# run_ans VARIANT MACROS EXPECT   (EXPECT: pass | liveness): answers.pml (a lost wake-up is an
# invalid end state: the model's futex wait has no timeout); MACROS include the bounds
run_ans() {
	run_sm "$amodel" "$1" "$2" "$3" "(no assertion outside PROBE)" \
		"the driver sleeps for good (lost wake-up)"
}

# run_ans_reach VARIANT MACROS PROBES: answers.pml with -DPROBE=(1 << n) for each probe n, safety
# mode, end states ignored, stopping at the first error (pan -c1: going on past errors writes a
# trail per error, hundreds of thousands here): each probe's assertion must fail (reached)
run_ans_reach() {
	mine "$1" || return 0
	name=$1 macros=$2 probes=$3
	reached= missed= other=
	for n in $probes; do
		dir=$work/$name-$n
		mkdir -p "$dir"
		cp "$amodel" "$dir/answers.pml"
		mask=$((1 << n))
		# shellcheck disable=SC2086
		(cd "$dir" && spin -a $macros -DPROBE=$mask answers.pml >spin.log 2>&1 &&
			$cc $(opt "$name") -w -DSAFETY -o pan pan.c >cc.log 2>&1 &&
			./pan -c1 -E -m1000000 >pan.log 2>&1) || true
		if grep -qF "assertion violated (((${mask}>>${n})&1)==0)" "$dir/pan.log"; then
			reached="$reached $n"
		else
			missed="$missed $n"
			[ -s "$dir/pan.log" ] || other="spin or cc failed"
		fi
	done
	if [ -z "$missed" ]; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		fails=$((fails + 1))
	fi
	printf 'model: %-26s expect reach    -> reached:%s%s%s [%s]\n' "$name" "$reached" \
		"${missed:+; NOT reached:$missed}" "${other:+; $other}" "$verdict"
}

run_answers() {
	echo "model: $amodel, bounds $abounds; with UNREG $aubounds"
	run_ans answers "$abounds" pass
	run_ans answers-unreg "-DUNREG $aubounds" pass
	run_ans answers-sleeping-late "-DSLEEPING_LATE $abounds" liveness
	run_ans answers-check-before-arm "-DCHECK_BEFORE_ARM $abounds" liveness
	run_ans answers-drops-flag "-DANSWER_DROPS_FLAG $abounds" liveness
	run_ans answers-unreg-no-wake "-DUNREG -DUNREG_NO_WAKE $aubounds" liveness
	run_ans_reach answers-reach "$abounds" "1 2 3 5"
	run_ans_reach answers-reach-unreg "-DUNREG $aubounds" "4"
}

run_hazptr() {
	echo "model: $hmodel"
	run_hp hazptr "" pass
	run_hp hazptr-fallback "-DFALLBACK" pass
	run_hp hazptr-no-membarrier "-DNO_MEMBARRIER" safety
	run_hp hazptr-no-validate "-DNO_VALIDATE" safety
	run_hp hazptr-no-barrier-p "-DNO_BARRIER_P" safety
	run_hp hazptr-fallback-no-rfence "-DFALLBACK -DFALLBACK_NO_RFENCE" safety
	run_hp hazptr-scan-first "-DSCAN_FIRST" safety
}

run_step() {
	echo "model: stepped grace periods, bounds $sbounds${sbounds2:+; two updates $sbounds2}"
	run step "-DSTEP" pass "$sbounds"
	[ $full = 0 ] || run step-2u "-DSTEP" pass "$sbounds2"
	run step-reset-seen "-DSTEP -DSTEP_RESET_SEEN" safety "$sbounds"
	run step-no-barrier-A "-DSTEP -DSTEP_NO_MB_A" safety "$sbounds"
	run step-sleep-on-stepped "-DSTEP -DSTEP_SLEEP_ON_STEPPED" liveness "$sbounds"
	run step-park-no-wake "-DSTEP -DSTEP_PARK_NO_WAKE" liveness "$sbounds"
	run_reach step-reach "-DSTEP" "7 8 9" "$sbounds"
	run step-ask "-DSTEP -DASK" pass "$sbounds"
	# asking's mutants: --full only (the quick bounds take 90 s of CPU to find them)
	[ $full = 0 ] || run step-ask-nested-answer "-DSTEP -DASK -DASK_NESTED_ANSWER" safety \
		"$(echo "$sbounds" | sed 's/NEST0=0/NEST0=1/')"
	[ $full = 0 ] || run step-ask-self-only "-DSTEP -DASK -DASK_SELF_ONLY" safety "$sbounds"
	[ $full = 0 ] || run step-ask-updater-no-wait "-DSTEP -DASK -DASK_UPDATER_NO_WAIT" safety \
		"$sbounds"
	run_reach step-ask-reach "-DSTEP -DASK" "10" "$sbounds"
	run_reach step-ask-reach-updater "-DSTEP -DASK" "11" "$sbounds"
}

if [ $steps = 2 ]; then
	echo "model: $model, spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p')"
	run_step
	[ $fails -eq 0 ] && { echo "model: SUCCESS (memb.pml, stepped grace periods)"; exit 0; }
	echo "model: FAILURE ($fails variant(s) with an unexpected verdict)"
	exit 1
fi
if [ $only_hp = 2 ]; then
	run_answers
	[ $fails -eq 0 ] && { echo "model: SUCCESS (answers.pml)"; exit 0; }
	echo "model: FAILURE ($fails variant(s) with an unexpected verdict)"
	exit 1
fi
if [ $only_hp = 1 ]; then
	run_hazptr
	[ $fails -eq 0 ] && { echo "model: SUCCESS (hazptr.pml)"; exit 0; }
	echo "model: FAILURE ($fails variant(s) with an unexpected verdict)"
	exit 1
fi

echo "model: $model, bounds $bounds, spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p')"
run membarrier "" pass
run fallback "-DFALLBACK" pass
run idle "-DIDLE" pass
run no-barrier-A "-DNO_MB_A" safety
run no-barrier-W "-DNO_MB_W" liveness
run fallback-no-fence "-DFALLBACK_NO_RFENCE" safety
run one-flag-pass "-DONE_FLAG_PASS" pass
run idle-no-reg-fence "-DIDLE -DNO_REG_FENCE" safety
run seq-bump-nested "-DSEQ_BUMP_NESTED" safety
run seen-any-change "-DSEEN_ANY_CHANGE" safety
run seen-before-a "-DSEEN_BEFORE_A" safety
run seen-seq-only "-DSEEN_SEQ_ONLY" liveness
[ $full = 0 ] || run seq-no-bump "-DSEQ_NO_BUMP" pass
echo "model: parking, bounds $pbounds; two readers $pbounds2"
run park "-DPARK" pass "$pbounds"
[ $full = 0 ] || run park-2r "-DPARK" pass "$pbounds2"
[ $full = 0 ] || run park-2r-both "-DPARK" pass "$pbounds2b"
run park-check-first "-DPARK -DPARK_CHECK_BEFORE_STORE" safety "$pbounds"
run park-no-check "-DPARK -DPARK_NO_CHECK" safety "$pbounds"
run park-no-drain "-DPARK -DPARK_NO_DRAIN" safety "$pbounds"
run park-no-barrier "-DPARK -DPARK_NO_BARRIER" safety "$pbounds"
run park-no-push-fence "-DPARK -DPARK_NO_PUSH_FENCE" safety "$pbounds"
run park-signal "-DPARK -DPARK_SIGNAL=3 -DPARK_SIGNAL_FIX" pass "$pbounds"
run park-signal-open "-DPARK -DPARK_SIGNAL=3" safety "$pbounds"
run park-drain-resets-seen "-DPARK -DDRAIN_RESETS_SEEN" safety "$pbounds"
[ $full = 0 ] || run park-one-flag-pass "-DPARK -DONE_FLAG_PASS" pass "$pbounds"
run_reach park-reach "-DPARK" "1 2 3 4 6" "$pbounds"
run_reach park-reach-2r "-DPARK" "5" "$pbounds2"
[ $steps = 0 ] || run_step
echo "model: $bmodel"
run_barrier barrier "" pass
run_barrier shared-marker "-DSHARED_MARKER" safety
run_barrier local-batch "-DLOCAL_BATCH" safety
run_barrier no-pause "-DNO_PAUSE" safety
run_hazptr
run_answers
if [ $fails -eq 0 ]; then
	[ "$nshards" = 1 ] || echo "model: shard $shard/$nshards of the $nvar variants"
	echo "model: SUCCESS (the protocols hold; every broken variant is caught)"
	exit 0
fi
echo "model: FAILURE ($fails variant(s) with an unexpected verdict)"
exit 1
