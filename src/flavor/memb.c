/* SPDX-License-Identifier: MIT */
/*
 * The default flavor ("memb"): per-thread nesting counters, membarrier on the update side.
 *
 * State. Each reader thread owns `ctr` in its initial-exec TLS struct grace__reader (layout in
 * include/grace/internal/reader.h): nesting depth in the low 16 bits, a SLOW bit, and in the
 * high bits the thread's section number, which each outermost rcu_read_lock() advances by one
 * unit (GRACE__R_SEQ_UNIT; a 47-bit count that wraps after about 27 hours of back-to-back
 * sections, harmlessly: holding is equality with what the first scan recorded, so a wrap can
 * only make a wait longer, never shorter; design.md section 3, "The wrap"). Readers
 * read no word that another thread writes on their fast path but their own `waiter`.
 *
 * Grace period (memb_wait_readers, run by the single driver of the domain, see core/gp.c):
 *   A. membarrier(PRIVATE_EXPEDITED): every thread of the process executes a full barrier.
 *   S. scan the registry: the first scan after A records, for each scanned thread found in a
 *      section (nesting != 0), the ctr it read (`seen`, core/registry.c); wait until each such
 *      thread's ctr shows nesting 0 or another section number.
 *   B. (non-TSO CPUs only) membarrier again.
 *
 * Claim: when S ends, every read-side section that began before the grace period started has
 * ended, and its accesses happen before the updater's next step.
 *
 * Consider a reader R and the point a where barrier A executes in R's instruction stream (a
 * full barrier at an instruction boundary, or a context switch if R was not running).
 *  - If R's outermost lock store (ctr := next number, nesting 1) comes after a, the section's
 *    loads come after a too, and a is after the updater's removal (core/gp.c argument (1)):
 *    the section sees the new state and cannot hold what the updater removed.
 *  - If R's lock store comes before a, the store is visible to the first scan, which runs
 *    after membarrier returns: the scan reads that store or a later store of R. If it reads
 *    the store itself (nesting != 0, number n), S waits until R's ctr shows nesting 0 or a
 *    number other than n: nested locks and unlocks change only the nesting bits, the
 *    outermost unlock sets nesting 0 and keeps n, and only the next outermost lock writes
 *    another number, so either value means that R's section n has ended. If the scan reads a
 *    later store, the section had already ended.
 *  - A thread the first scan found outside any section, one that registers after it (under
 *    the registry lock, so after A), and a parked thread handed back after it (core/registry.c,
 *    "Parking") start their sections after a: nothing to wait for. So holders only ever leave
 *    during a grace period, and each is waited for one section at most: a reader that enters
 *    sections back to back cannot hold a grace period for ever.
 * S ends when each such R's ctr has been read, by an acquire load, with nesting 0 or another
 * number. The outermost unlock is a store-release, so R's section happens before the updater's
 * acquire load (on TSO CPUs every store is a release and a later store of R to ctr is ordered
 * after it; elsewhere barrier B makes R complete every access before the updater proceeds, so
 * observing any later value of ctr is enough).
 *
 * Why per-thread numbers and not a snapshot of a shared counter (grace up to 0.2, and liburcu's
 * grace-period counter): the lock loads nothing but the thread's own line, one load fewer per
 * section, and no reader's cache line is invalidated by each grace period's store to the shared
 * counter. The price is the driver's: the first scan records what it read (one word per thread,
 * kept with the thread's slot).
 *
 * Readers never fence. Without membarrier (old kernels, seccomp, TSan mode) the fallback is
 * chosen once at start-up: readers carry the SLOW bit, so every outermost lock goes through
 * grace__memb_lock_slow(), which adds smp_mb after the lock store, and the GRACE__W_FALLBACK bit,
 * so every unlock goes through grace__memb_unlock_flagged(), which adds smp_mb between its
 * (release) store and its load of waiter; A and B become smp_mb, and the SB pattern "reader:
 * store ctr; mb; load data / updater: store data; mb; load ctr" replaces the membarrier
 * argument.
 *
 * Waiting (core/registry.c): bounded spin, then the updater sets `waiter` in each holder's own
 * cache line and sleeps on a futex; the holder's outermost unlock sees the flag and wakes it.
 *
 * Parking (core/registry.c, "Parking", for the argument). A thread idle over several grace
 * periods is no longer scanned: the updater sets GRACE__W_PARK in its waiter word and, after
 * the next barrier A, moves it out of the scanned part of the registry if it is still idle. So
 * that the thread cannot start a section the scans do not see, the outermost lock loads waiter
 * after its store (rcu_read_lock(); the same store-buffering pair with membarrier as barrier A
 * and the lock store): any bit sends it to grace__memb_lock_flagged(), which clears PARK,
 * pushes the thread back to the registry and runs a full barrier before the section's loads.
 * The load is paid for by the unlock, which tests nothing but waiter after its store: the
 * fallback and an exiting thread carry a waiter bit of their own (GRACE__W_FALLBACK,
 * GRACE__W_EXITING) instead of reaching the slow path through ctr, and an unlock without a
 * lock, which borrows into nesting bits no lock reaches, is reported by the thread's next lock
 * (grace__memb_lock_slow()) or by the next grace period's wait (reg_arm()) in release builds,
 * at the call in debug builds. A grace period in which every thread but the (idle) driver is
 * parked needs neither barrier A nor a scan (memb_wait_readers()).
 *
 * Asking (docs/design.md section 3, "Asking"). A driver that starts a grace period, a step
 * (memb_step()) or a blocking driver (memb_wait_readers(), after its idle fast paths), may,
 * instead of barrier A, take the unpark stack and set GRACE__W_ASK in every scanned thread's
 * waiter word (under the registry lock, after the full barrier that follows seq_start); a step
 * looks for the answers at its later calls, a blocking driver spins for them. A thread answers
 * at its next boundary: after an outermost unlock's store, or at an outermost lock before its
 * section's loads, it runs a full barrier and clears the bit with a seq_cst RMW
 * (memb_answer()); nested locks and unlocks never answer. Claim: once every scanned thread has
 * answered (the bit read clear, then an acquire fence), no section that began before the grace
 * period started is still running, and each ended before that read. For a thread T: its answer follows its read of the bit, which
 * follows the removal (message passing between the updater's full barrier and T's), so T's
 * later sections see the removal; every section T began before the answer had ended by then
 * (a boundary at nesting 0, or an outermost lock whose section has read nothing; a handler's
 * section nested in that lock ended before the handler returned), and the full barrier before
 * the clear, with the updater's acquire, orders its accesses before the grace period's end.
 * Threads not asked: those that register later (under the lock, after the asks), parked ones
 * (the parking argument) and those that hand themselves back after the asks took the stack
 * (their full barrier after the push: the same store-buffering pair as for a first scan). No
 * barrier B is needed: each answer is a full barrier of its thread after its sections. If the
 * answers do not all come within ASK_WAIT_NS, the driver runs barrier A and the first scan and
 * the argument above applies from there. A blocking driver may sleep for the answers instead
 * of spinning (memb_sleep_for_answers()): the claim is unchanged, since only the answers end
 * the wait; the sleep's wake-up protocol is liveness only.
 */
#include "flavor/memb.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <grace/flavor.h>
#include <grace/rcu.h>

#include "core/annotate.h"
#include "core/debug.h"
#include "core/diag.h"
#include "engine/free.h"
#include "flavor/update.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/options.h"
#include "core/registry.h"
#include "core/sys.h"
#include "core/wait.h"

/* Unregistered threads start with SLOW set: their first lock takes the slow path. */
GRACE_API __thread struct grace__reader grace__memb_reader GRACE_TLS_IE = { .ctr = GRACE__R_SLOW };

static struct grace__registry memb_registry;
static void memb_wait_readers(struct grace__gp *gp, unsigned int flags);
static bool memb_step(struct grace__gp *gp, uint64_t s, bool may_begin);
static void memb_resume_readers(struct grace__gp *gp, unsigned int flags);
static uint32_t memb_answer(struct grace__reader *r);
static bool memb_wait_asked(void);
static struct grace__gp memb_gp = GRACE__GP_INIT(memb_wait_readers, &memb_registry, "rcu");
static pthread_key_t memb_key;

/* The at-rest value of a registered thread's ctr: SLOW in the fallback, and for an exiting
 * thread, whose locks must take grace__memb_lock_slow() (their unlocks reach
 * grace__memb_unlock_flagged() by the waiter bits set in memb_register()). */
static inline uint64_t memb_rest(const struct grace__reader *r)
{
	return grace__use_membarrier && !(r->flags & GRACE__F_EXITING) ? 0 : GRACE__R_SLOW;
}

/* The reader's own waiter bits while registered (memb_register()). */
static inline uint32_t memb_own_bits(const struct grace__reader *r)
{
	return (grace__use_membarrier ? 0 : GRACE__W_FALLBACK) |
	       ((r->flags & GRACE__F_EXITING) ? GRACE__W_EXITING : 0);
}

/* An earlier unlock without a lock leaves nesting bits no lock reaches (0 - 1 borrows). */
static inline bool memb_underflow(uint64_t c)
{
	return (c & GRACE__R_NEST_HIGH) != 0;
}

/* Is no thread registered but, at most, the caller outside any section? The caller runs a full
 * fence first (see memb_wait_readers()). */
static bool memb_alone(void)
{
	const struct grace__reader *self = &grace__memb_reader;

	return grace__registry_alone(&memb_registry, (self->flags & GRACE__F_REGISTERED) &&
							     !(grace_load_relaxed(&self->ctr) &
							       GRACE__R_NEST_MASK));
}

static void memb_wait_readers(struct grace__gp *gp, unsigned int flags)
{
	/*
	 * Idle fast path: no registered thread but, at most, the driver itself outside any
	 * section, so nothing to wait for and no membarrier. A thread that registers meanwhile
	 * executes a full fence after adding itself (registry_add) and before its first section;
	 * the driver executed one after seq_start (core/gp.c) before reading the count. Chained
	 * with the updater's fence before its snapshot (core/gp.c argument (1)), that is a
	 * store-buffering cycle with full fences everywhere: either the count read here includes
	 * the new thread, or the thread's first section sees the removal.
	 */
	if (memb_alone()) {
		grace__ann_readers(&memb_registry); /* race detectors: sections before this end */
		return;
	}
	/*
	 * The same with parked threads: every registered thread but, at most, the idle driver is
	 * parked (or on the unpark stack, which the check takes first). A parked thread's next
	 * lock finds its PARK bit, pushes itself and runs a full barrier before its section; the
	 * driver ran one after seq_start and takes the stack after it: either the check sees the
	 * push (the thread is scanned again and the check fails) or the section sees the removal
	 * (core/registry.c, "Parking"). No membarrier interrupts anyone.
	 */
	{
		const struct grace__reader *self = &grace__memb_reader;
		if (grace__registry_quiet(&memb_registry, self,
					  !(grace_load_relaxed(&self->ctr) & GRACE__R_NEST_MASK))) {
			grace__ann_readers(&memb_registry);
			return;
		}
	}
	/* Asking, as a step's start does (the argument above, "Asking"): this driver too ran the
	 * full barrier that follows seq_start before it sets the asks. */
	if (memb_wait_asked()) {
		grace__ann_readers(&memb_registry);
		return;
	}
	/* Barrier A: see the argument above; pairs with the compiler barrier after the reader's
	 * lock store (smp_mb in the fallback, memb_lock_slow). Timed: the steps' pace. */
	grace__heavy_barrier_timed(&gp->step_cost);
	/* Step S: the registry records what its first scan reads (per-thread section numbers). */
	grace__registry_wait(&memb_registry, 0, (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
			     flags & GRACE__GP_EXPEDITED);
	grace__ann_readers(&memb_registry); /* race detectors: the readers' ends (annotate.h) */
	/* Barrier B on CPUs that are not TSO: every reader seen quiescent has completed its
	 * section's accesses before the grace period ends. Pairs with the reader's unlock store. */
	if (!GRACE_ARCH_TSO)
		grace__heavy_barrier();
}

/*
 * Stepped grace periods (core/gp.c, "Stepped grace periods"): a thread that retires objects
 * (engine/free.c), usually from inside its own section, advances the grace period without
 * blocking. A step that starts one runs what memb_wait_readers() runs up to its wait (barrier A,
 * then the first scan, which records the threads in a section), without the idle fast paths;
 * a later step rescans; the step that finds none of them still in its section runs barrier B
 * (non-TSO) and ends it. The registry's lock is only tried, before the grace period is started
 * or adopted, so a step never waits and never leaves a started grace period unscanned: a
 * signal handler that interrupts a thread holding the lock (a driver's scan) steps nothing.
 * The stepper itself, if it is in a section, is recorded like any reader and stops holding at
 * its next section: it never waits for itself.
 */
/* Asking: the driver's state, written only by the thread that holds the grace period (a stepper
 * between its start or adoption and its park or end, or a blocking driver): seq's state bits
 * order one holder after the last (core/gp.c). */
static struct {
	bool on;        /* read-only after start-up: membarrier, and GRACE_NO_ASK unset */
	bool asking;    /* the grace period under way waits for answers, not for a first scan */
	uint32_t skip;  /* grace periods to start with barrier A before asking again */
	uint32_t fails; /* asks in a row that ran out of time: the back-off's exponent */
	uint64_t since; /* when the asks were set */
} memb_ask;

/* How long a grace period waits for answers before it falls back to barrier A. */
#define ASK_WAIT_NS 20000u
#define ASK_FAILS_MAX 6u

/* Have all scanned threads answered (lock held)? The caller answers for itself when it is
 * outside any section (a thread that retires outside its sections, free_rcu_mightsleep(), may
 * enter none for a long time): that is its own boundary, as at an unlock. */
static bool memb_answered(void)
{
	struct grace__reader *self = &grace__memb_reader;

	/* Relaxed: the thread's own words (only it writes ctr, only it clears ASK); the answer's
	 * own full barriers order it (memb_answer()), as at an unlock. */
	if ((grace_load_relaxed(&self->waiter) & GRACE__W_ASK) &&
	    !(grace_load_relaxed(&self->ctr) & GRACE__R_NEST_MASK))
		memb_answer(self);
	return grace__registry_answered(&memb_registry);
}

/* Start the grace period by asking (lock held, after gp_start's full barrier). true: some
 * thread has yet to answer. */
static bool memb_ask_start(void)
{
	memb_ask.asking = true;
	memb_ask.since = grace__now_ns();
	grace__registry_ask(&memb_registry);
	return !memb_answered();
}

/* Asks that went unanswered for ASK_WAIT_NS: the next 2^fails - 1 grace periods start with
 * barrier A (the back-off; an answered ask resets fails). */
static void memb_ask_missed(void)
{
	memb_ask.asking = false;
	if (memb_ask.fails < ASK_FAILS_MAX)
		memb_ask.fails++;
	memb_ask.skip = (1u << memb_ask.fails) - 1;
}

/* Does this start ask? Not when asking is off, nor while the back-off lasts (this start is one
 * of the 2^fails - 1 that go straight to barrier A). */
static bool memb_ask_turn(void)
{
	if (!memb_ask.on)
		return false;
	if (memb_ask.skip) {
		memb_ask.skip--;
		return false;
	}
	return true;
}

/* Every asked thread answered: the grace period ends, and the back-off starts over. */
static void memb_ask_answered(void)
{
	memb_ask.asking = false;
	memb_ask.fails = 0;
}

/* The step's fallback: barrier A and the first scan, as a start without asking (lock held). */
static bool memb_ask_give_up(struct grace__gp *gp)
{
	memb_ask_missed();
	grace__heavy_barrier_timed(&gp->step_cost);
	return grace__registry_first_scan(&memb_registry, 0);
}

/* A blocking driver's wait for the answers (lock not held): it spins for what is left of
 * ASK_WAIT_NS. true: every scanned thread answered, the grace period's wait is over (no barrier
 * B: memb_step()); false: the back-off is recorded, and the caller runs barrier A and the whole
 * wait. Between two looks it pauses ASK_POLL_FIRST, then twice as many, up to ASK_POLL_MAX
 * times: each look reads every asked thread's waiter word, on the cache line its next lock or
 * unlock stores into, and so costs each of them a transfer of that line back. Looking without a
 * pause, back-to-back synchronize_rcu() calls took a busy reader down to about half of its
 * sections (readside_bench sync, one pinned reader); with the pauses a call takes about 0.6 us
 * instead of 0.2, and the reader keeps more sections than under membarrier(2). */
#define ASK_POLL_FIRST 16u
#define ASK_POLL_MAX 256u

/* The longest a blocking driver sleeps for answers before it falls back to barrier A. It
 * sleeps only for threads inside a section: each must end it before the grace period can end,
 * whichever way the driver waits, and a preempted one may get its CPU only after another
 * runnable thread's slice (4-8 ms seen with two readers and the driver on one CPU). The bound
 * covers an answer missed to a stale read of a section that had just ended, by a thread that
 * then went idle. */
#define ASK_SLEEP_NS 10000000ll
/* When a blocking driver first reads the hint of memb_await_answers(). */
#define ASK_HINT_NS 2000u

unsigned long grace__memb_ask_sleeps, grace__memb_ask_sleeps_out;

/*
 * Sleeping for the answers (lock not held; "Asking" above). Each round stores SLEEPING into the
 * futex word, then flags every thread that has not answered with GRACE__W_WAITING
 * (grace__registry_ask_arm(): release RMWs), then looks; each answer returns its thread's flag,
 * and the thread wakes the driver (memb_answer()'s callers, grace__registry_wake()). No lost
 * wake-up: the flag and the answer are RMWs of one word, so one comes first. If the answer
 * did, the round's look, which reads that word after the flag, sees it. If the flag did, the
 * answer returns it, and the thread reads SLEEPING through the flag's release. A wake-up left
 * over from an earlier round may clear a flag after this round set it, but it wakes the driver
 * as it does, and the next round flags again. A thread that unregisters instead of answering
 * wakes it too (memb_unregister_blocked()). Not grace__wait_for_readers(): its protocol rests
 * on barrier W (wait.h), the cost this sleep exists to save; this one rests on the order of two
 * RMWs of one word, and ends at a bound where that wait reports stalls. Only the answers end
 * the grace period, as when the
 * driver spins: a hint that misled costs time (ASK_SLEEP_NS at most), never safety. true: every
 * scanned thread answered.
 */
static bool memb_sleep_for_answers(void)
{
	uint32_t *futex = &memb_registry.wq.futex;
	const uint64_t t0 = grace__now_ns();
	bool answered;

	/* Relaxed counter: a statistic (tests). */
	grace_fetch_add(&grace__memb_ask_sleeps, 1, __ATOMIC_RELAXED);
	for (;;) {
		/* Relaxed: the release RMWs of the arm order it before the flags. */
		grace_store_relaxed(futex, GRACE__WAIT_SLEEPING);
		grace__registry_lock(&memb_registry);
		grace__registry_ask_arm(&memb_registry);
		answered = grace__registry_answered(&memb_registry);
		grace__registry_unlock(&memb_registry);
		int64_t left = ASK_SLEEP_NS - (int64_t)(grace__now_ns() - t0);
		if (answered || left <= 0)
			break;
		grace__futex_wait(futex, GRACE__WAIT_SLEEPING, left);
	}
	grace_store_relaxed(futex, GRACE__WAIT_AWAKE);
	if (!answered) /* relaxed: a statistic */
		grace_fetch_add(&grace__memb_ask_sleeps_out, 1, __ATOMIC_RELAXED);
	return answered;
}

/*
 * Spinning cannot help while a thread that has not answered last ran on the driver's CPU: it
 * waits in that CPU's run queue for the driver to give it up. If every thread that has not
 * answered is inside a section, the driver sleeps for the answers: those sections must end
 * before the grace period can end anyway. If that thread is outside any section, it falls
 * back to barrier A at once, which proves it quiescent without its running; that is no miss
 * for the back-off, since nothing was spent. If it is inside a section but a thread elsewhere
 * is not (about to answer, if it runs), the driver spins on and looks again. When the spin is
 * spent and every thread that has not answered is inside a section, it sleeps too (a long
 * section elsewhere). On two CPUs,
 * call_rcu()'s worker runs beside busy readers and preempts one of them for each grace period:
 * it used to spin ASK_WAIT_NS, then run barrier A, then barrier W before it slept anyway (2.3
 * membarrier(2) calls a grace period, bench/smr's grace-call).
 */
static bool memb_await_answers(void)
{
	unsigned int pause = ASK_POLL_FIRST;
	bool answered, missed = true;

	for (unsigned int look = 0;; look++) {
		bool spent = false;
		unsigned int st = 0;

		grace__registry_lock(&memb_registry);
		answered = memb_answered();
		if (!answered) {
			/* The hint once ASK_HINT_NS have passed, then every fourth look, and at the
			 * last: a running thread has answered by then. It reads each thread's rseq
			 * cpu_id, on a line of that thread's own: read at the first look, while a
			 * busy reader's answer was still on its way, it cost the reader 9% of its
			 * sections and the calls 7% at the median (readside_bench sync, one busy
			 * reader, quiet interleaved runs). */
			uint64_t waited = grace__now_ns() - memb_ask.since;
			spent = waited >= ASK_WAIT_NS;
			if (spent || (waited >= ASK_HINT_NS && (look & 3) == 0))
				st = grace__registry_ask_state(&memb_registry);
		}
		grace__registry_unlock(&memb_registry);
		if (answered)
			break;
		if ((st & GRACE__ASK_SECTIONS) && ((st & GRACE__ASK_HERE) || spent)) {
			answered = memb_sleep_for_answers();
			break;
		}
		if (st & GRACE__ASK_HERE_OUT) {
			missed = false;
			break;
		}
		if (spent)
			break;
		for (unsigned int i = 0; i < pause; i++)
			grace_cpu_relax();
		if (pause < ASK_POLL_MAX)
			pause *= 2;
	}
	if (answered) {
		memb_ask_answered();
		return true;
	}
	if (missed)
		memb_ask_missed();
	else
		memb_ask.asking = false;
	return false;
}

/* A blocking grace period's start (memb_wait_readers(), after its idle fast paths): ask as a
 * step does, unless the back-off says barrier A. Expedited ones too: answers from running
 * readers come within a microsecond, a membarrier(2) takes several, and a reader that does not
 * answer costs ASK_WAIT_NS once, then the back-off. true: the answers ended the grace period. */
static bool memb_wait_asked(void)
{
	bool pending;

	if (!memb_ask_turn())
		return false;
	grace__registry_lock(&memb_registry);
	pending = memb_ask_start();
	grace__registry_unlock(&memb_registry);
	if (pending)
		return memb_await_answers();
	memb_ask_answered();
	return true;
}

static bool memb_step(struct grace__gp *gp, uint64_t s, bool may_begin)
{
	uint64_t base;
	bool held;

	if (!grace__registry_trylock(&memb_registry))
		return grace__gp_done(gp, s);
	if (grace__gp_step_adopt(gp, &base)) {
		if (!memb_ask.asking)
			held = grace__registry_holds(&memb_registry, 0);
		else if (memb_answered())
			held = false;
		else if (grace__now_ns() - memb_ask.since < ASK_WAIT_NS)
			held = true;
		else
			held = memb_ask_give_up(gp);
	} else if (may_begin && !grace__gp_done(gp, s) && grace__gp_step_start(gp, &base)) {
		if (memb_ask_turn()) {
			held = memb_ask_start();
		} else {
			memb_ask.asking = false;
			/* Barrier A, as in memb_wait_readers(): pairs with the compiler barrier after
			 * the reader's lock store (smp_mb in the fallback). Timed: the steps' pace. */
			grace__heavy_barrier_timed(&gp->step_cost);
			held = grace__registry_first_scan(&memb_registry, 0);
		}
	} else {
		grace__registry_unlock(&memb_registry);
		return grace__gp_done(gp, s);
	}
	grace__registry_unlock(&memb_registry);
	if (held) {
		grace__gp_step_park(gp, base);
		return false;
	}
	grace__ann_readers(&memb_registry); /* race detectors: the readers' ends (annotate.h) */
	/* Barrier B on CPUs that are not TSO, as in memb_wait_readers(); not after answers, each a
	 * full barrier of its reader after its sections. */
	if (!GRACE_ARCH_TSO && !memb_ask.asking)
		grace__heavy_barrier();
	if (memb_ask.asking)
		memb_ask_answered();
	grace__gp_step_end(gp, base);
	return grace__gp_done(gp, s);
}

/* The rest of a stepped grace period, for a driver that adopted it (it may block). Asking: the
 * answers for what is left of ASK_WAIT_NS, then barrier A and the whole wait. */
static void memb_resume_readers(struct grace__gp *gp, unsigned int flags)
{
	if (memb_ask.asking) {
		if (memb_await_answers()) {
			grace__ann_readers(&memb_registry);
			return;
		}
		grace__heavy_barrier_timed(&gp->step_cost); /* barrier A */
		grace__registry_wait(&memb_registry, 0,
				     (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
				     flags & GRACE__GP_EXPEDITED);
	} else {
		grace__registry_wait_resume(&memb_registry, 0,
					    (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
					    flags & GRACE__GP_EXPEDITED);
	}
	grace__ann_readers(&memb_registry);
	if (!GRACE_ARCH_TSO)
		grace__heavy_barrier(); /* barrier B, as in memb_wait_readers() */
}

static void memb_thread_exit(void *arg);

/*
 * Thread exit. memb_thread_exit() is a pthread key destructor: glibc runs the destructors in
 * rounds, at most PTHREAD_DESTRUCTOR_ITERATIONS (4), another round only while some key still
 * has a value. Another key's destructor that reads under RCU after ours ran registers the
 * thread again; if that happened in the last round, the thread would leave the registry
 * holding a pointer into its dead TLS (a later scan reads, and grace__registry_del() writes,
 * memory that a new thread's TLS, or nothing, now occupies). So once the exit destructor has
 * run (GRACE__F_EXITING), a section registers the thread for its own length only: its
 * outermost unlock, which the GRACE__W_EXITING bit sends to grace__memb_unlock_flagged(),
 * unregisters it again. An explicit rcu_register_thread() then does nothing (registration is optional). A
 * section still open when the thread is gone is the misuse memb_thread_exit() reports in any
 * round that sees it.
 */
static void memb_register_blocked(struct grace__reader *r, bool explicit_);

/*
 * Registration and unregistration run with the thread's signals blocked, so that a handler of
 * the thread never sees them half done. A handler's section on a thread between leaving the
 * registry and the store that sends its next lock to the slow path would run unscanned
 * (fast path: at-rest ctr, no waiter bit), and on a parked thread its lock would push a thread
 * that is no longer registered onto the unpark stack, which the next drain would link back
 * into the registry by a stale index (docs/api.md, Process events; the contract tests
 * contract_signal_exit*). Likewise a handler that interrupted a registration would register
 * the thread a second time. With the block, a handler runs before (the thread is registered,
 * or not yet) or after (unregistered: its section registers the thread, for the section's
 * length after the exit destructor). Two system calls per registration and per
 * unregistration; the read side is untouched.
 */
static void memb_register(struct grace__reader *r, bool explicit_)
{
	sigset_t all, old;

	grace__init();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	memb_register_blocked(r, explicit_);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void memb_register_blocked(struct grace__reader *r, bool explicit_)
{
	if (explicit_ && (r->flags & GRACE__F_EXITING))
		return; /* see above: the sections register themselves */
	if (r->flags & GRACE__F_REGISTERED) {
		if (explicit_) {
			if (r->flags & GRACE__F_EXPLICIT) {
				grace__misuse("rcu_register_thread", "thread already registered");
				return;
			}
			r->flags |= GRACE__F_EXPLICIT;
		}
		return;
	}
	r->tid = grace__gettid();
	r->stall_seq = 0;
	r->flags = GRACE__F_REGISTERED | (explicit_ ? GRACE__F_EXPLICIT : 0) |
		   (r->flags & (GRACE__F_EXITING | GRACE__F_KEYED));
	/* No updater writes the word before grace__registry_add() publishes the thread. */
	r->waiter = memb_own_bits(r);
	grace__ann_ignore(r, sizeof(*r)); /* Valgrind: ctr and waiter are shared atomics */
	/* At rest before it becomes visible to scans: not holding any grace period. */
	grace_store_relaxed(&r->ctr, memb_rest(r));
	grace__registry_add(&memb_registry, r);
	/*
	 * Unregister at thread exit (pthread key destructors run while TLS is still valid). The
	 * key stays set from the first registration to the exit destructor, across
	 * rcu_unregister_thread(): a thread that unregistered and then enters a section after
	 * glibc's key destructors are done (a handler in libc's last steps of thread exit, or
	 * another key's destructor in the last round) would otherwise register for good with no
	 * destructor left to run, leaving its dead TLS in the registry. With the key kept, the
	 * destructor runs for every thread that ever registered and sets GRACE__F_EXITING, after
	 * which a section registers the thread for its own length only. An exiting thread's
	 * section sets nothing: it unregisters at its unlock, and a key set again would only cost
	 * glibc another round.
	 */
	if (!(r->flags & GRACE__F_EXITING) && !(r->flags & GRACE__F_KEYED)) {
		pthread_setspecific(memb_key, r);
		r->flags |= GRACE__F_KEYED;
	}
}

/* Signals blocked: see memb_register(). A handler that ran a section before the block may
 * have unregistered the thread already (an exiting thread's section, memb_register()). */
static void memb_unregister_blocked(struct grace__reader *r)
{
	if (!(r->flags & GRACE__F_REGISTERED))
		return;
	grace__registry_del(&memb_registry, r);
	GRACE__TEST_PAUSE("unregister"); /* debug builds: tests signal the thread here */
	r->flags &= GRACE__F_EXITING | GRACE__F_KEYED; /* the key stays: see memb_register() */
	grace_store_relaxed(&r->ctr, GRACE__R_SLOW);
	/* No updater writes it any more (grace__registry_del() under the lock). A flag it left: a
	 * driver sleeping for this thread's answer (memb_sleep_for_answers()), which no longer
	 * needs it; it took the lock before the removal, after its store of SLEEPING, so the wake
	 * reads SLEEPING or a later value. */
	if (grace_xchg(&r->waiter, 0, __ATOMIC_RELAXED) & GRACE__W_WAITING)
		grace__wait_wake(&memb_registry.wq.futex);
}

static void memb_unregister(struct grace__reader *r)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	memb_unregister_blocked(r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The exit destructor, with the thread's signals blocked throughout (memb_register()): a
 * handler between the unregistration and the EXITING flag would register the thread for good,
 * and the flag would then hide it, leaving the dead thread's TLS in the registry. */
static void memb_thread_exit_blocked(struct grace__reader *r);

static void memb_thread_exit(void *arg)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	memb_thread_exit_blocked((struct grace__reader *)arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void memb_thread_exit_blocked(struct grace__reader *r)
{
	uint64_t c = grace_load_relaxed(&r->ctr);

	if (!(r->flags & GRACE__F_REGISTERED)) {
		/* Unregistered by rcu_unregister_thread() (the key stays: memb_register()). */
		r->flags = GRACE__F_EXITING;
		return;
	}
	if (memb_underflow(c))
		grace__misuse_fatal(
			"rcu_read_unlock",
			"unlock without a matching rcu_read_lock() (found at thread exit)");
	if (c & GRACE__R_NEST_MASK) {
		/* Diagnosed, not hung on: end the section for the dead thread. */
		grace__misuse("thread exit",
			      "thread exited inside an rcu_read_lock() section (nesting %llu); "
			      "the section is ended for it",
			      (unsigned long long)(c & GRACE__R_NEST_MASK));
		/* As the fallback's outermost unlock: fence, then the quiescent store with release
		 * (pairs with the scan's acquire load and barrier B), then a fence before the
		 * waiter load (pairs with barrier W in core/registry.c). */
		grace_smp_mb();
		grace__ann_release(&r->ctr); /* race detectors: the section ends here */
		grace_store_release(&r->ctr, memb_rest(r));
		grace_smp_mb();
		if (grace_load_relaxed(&r->waiter) & GRACE__W_WAITING)
			grace__registry_wake(&memb_registry, r);
	}
	memb_unregister_blocked(r);
	r->flags = GRACE__F_EXITING; /* see memb_register() */
}

void grace__memb_lock_slow(void)
{
	struct grace__reader *r = &grace__memb_reader;
	uint64_t c = grace_load_relaxed(&r->ctr);

	/* Before registering (which would overwrite it): an earlier unlock without a lock. */
	if (memb_underflow(c))
		grace__misuse_fatal("rcu_read_unlock",
				    "unlock without a matching rcu_read_lock() (found by the "
				    "thread's next rcu_read_lock())");
	if (GRACE_UNLIKELY(!(r->flags & GRACE__F_REGISTERED))) {
		memb_register(r, false); /* implicit registration on the first section */
		c = grace_load_relaxed(&r->ctr);
	}
	if ((c & GRACE__R_NEST_MASK) == 0) {
		if (grace__use_membarrier && !(c & GRACE__R_SLOW)) {
			/* As the inline fast path: next section number and nesting 1, compiler
			 * barrier, then waiter. */
			grace_store_relaxed(&r->ctr, c + GRACE__R_SEQ_UNIT + 1);
			grace_barrier();
			if (grace_load_relaxed(&r->waiter))
				grace__memb_lock_flagged();
		} else {
			/* The fallback, or an exiting thread (SLOW kept: see memb_register()). */
			grace_store_relaxed(&r->ctr, c + GRACE__R_SEQ_UNIT + 1);
			/* Fallback: full fence between the lock store and the section's loads. Pairs
			 * with barrier A (smp_mb in the fallback, membarrier otherwise: stronger) in
			 * memb_wait_readers(). */
			grace_smp_mb();
			/* Parking is off in the fallback and an exiting thread unregisters at its
			 * unlock, so no PARK bit is expected here; should one be, it is honoured. */
			if (grace_load_relaxed(&r->waiter) & GRACE__W_PARK)
				grace__memb_lock_flagged();
		}
		return;
	}
	/* The same limit as the inline fast path's (rcu.h): 32767 nested sections. */
	if ((c & GRACE__R_NEST_MASK) >= GRACE__R_NEST_HIGH - 1)
		grace__misuse_fatal("rcu_read_lock", "read-side sections nested deeper than %llu",
				    (unsigned long long)(GRACE__R_NEST_HIGH - 1));
	grace_store_relaxed(&r->ctr, c + 1);
}

/*
 * Asking: the thread is outside any section (after an outermost unlock's store) or at an
 * outermost lock before its section reads anything, and found GRACE__W_ASK. A full barrier,
 * then the seq_cst clear that answers: every access of the thread's earlier sections precedes
 * the clear (pairs with the acquire of grace__registry_answered()), and every access after it
 * follows the read of the bit, which followed the updater's removal (its full barrier after
 * seq_start, then the relaxed set: the fences' message-passing pair). The RMW clears only the
 * bit; a handler that answered first leaves this clear nothing to do, and a clear that meets a
 * later grace period's bit answers that one too, by the same two orders. Async-signal-safe.
 */
static uint32_t memb_answer(struct grace__reader *r)
{
	grace_smp_mb();
	uint32_t old = grace_fetch_and(&r->waiter, ~GRACE__W_ASK, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
	return old; /* GRACE__W_WAITING in it: a sleeping driver waits for this answer */
}

/*
 * A lock (outermost or nested) found a waiter bit after its store. PARK: the updater stopped
 * scanning this thread; clear the bit and, if this call cleared it, hand the thread back (a push
 * onto the registry's unpark stack with a full barrier after it, before the section reads
 * anything: core/registry.c, "Parking"). With the thread's signals blocked from before the
 * clear until after the barrier: a handler that interrupted between the two would find the bit
 * clear and the thread not yet pushed, and run a section no grace period sees (the Promela
 * model found it, tests/model/memb.pml, PARK_SIGNAL). A handler that runs before the block
 * does the hand-back itself, and this call's RMW then finds the bit clear. Once per hand-back:
 * two system calls, against the scans of the thread parking saves. WAITING: left from an
 * earlier section that ended without seeing it (a flag set after that unlock's load); an
 * outermost lock wakes the updater once, which is harmless; a nested one leaves it to the
 * section's end. Lock-free and async-signal-safe, as a signal handler's lock may land here.
 */
void grace__memb_lock_flagged(void)
{
	struct grace__reader *r = &grace__memb_reader;
	uint32_t w = grace_load_relaxed(&r->waiter);

	if (w & GRACE__W_PARK) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		/* seq_cst RMW: only the call that clears the bit pushes (the updater may clear it
		 * first, undoing a park it could not confirm). */
		if (grace_fetch_and(&r->waiter, ~GRACE__W_PARK, __ATOMIC_SEQ_CST) & GRACE__W_PARK) {
			GRACE__TEST_PAUSE(
				"unpark"); /* debug builds: tests signal the thread here */
			grace__registry_unpark(&memb_registry, r);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	/* ASK: only the outermost lock answers, before its section reads anything; a nested one
	 * leaves it to the section's end (the outer section may hold what was removed). */
	if ((w & GRACE__W_ASK) && (grace_load_relaxed(&r->ctr) & GRACE__R_NEST_MASK) == 1)
		w |= memb_answer(r); /* a flag set since the load: memb_sleep_for_answers() */
	if ((w & GRACE__W_WAITING) && (grace_load_relaxed(&r->ctr) & GRACE__R_NEST_MASK) == 1)
		grace__registry_wake(&memb_registry, r);
}

/*
 * The unlock found a waiter bit after its store (or, in debug builds, its new ctr shows an unlock
 * without a lock). The store was a release: the section's accesses precede it. ctr, which only
 * this thread writes, holds the value stored.
 */
void grace__memb_unlock_flagged(void)
{
	struct grace__reader *r = &grace__memb_reader;
	uint64_t c = grace_load_relaxed(&r->ctr);

	if (memb_underflow(c))
		grace__misuse_fatal("rcu_read_unlock", "unlock without a matching rcu_read_lock()");
	uint32_t w = grace_load_relaxed(&r->waiter);
	if (w & GRACE__W_FALLBACK) {
		/* Fence: the store before the load of waiter (pairs with barrier W, smp_mb in the
		 * fallback). */
		grace_smp_mb();
		w = grace_load_relaxed(&r->waiter);
	}
	if (c & GRACE__R_NEST_MASK)
		return; /* nested: the section goes on (PARK was cleared by its lock) */
	grace__ann_release(&r->ctr); /* race detectors: the outermost section ends here */
	if (w & GRACE__W_ASK)
		w |= memb_answer(r); /* a flag set since the load: memb_sleep_for_answers() */
	if (w & GRACE__W_WAITING)
		grace__registry_wake(&memb_registry, r);
	if (GRACE_UNLIKELY(r->flags & GRACE__F_EXITING))
		memb_unregister(r); /* a section after the exit destructor (memb_register()) */
}

void grace_rcu_register_thread(void)
{
	struct grace__reader *r = &grace__memb_reader;
	if ((r->flags & GRACE__F_REGISTERED) &&
	    (grace_load_relaxed(&r->ctr) & GRACE__R_NEST_MASK)) {
		grace__misuse("rcu_register_thread", "called inside a read-side section");
		return;
	}
	memb_register(r, true);
}

void grace_rcu_unregister_thread(void)
{
	struct grace__reader *r = &grace__memb_reader;

	if (!(r->flags & GRACE__F_REGISTERED))
		return;
	if (grace_load_relaxed(&r->ctr) & GRACE__R_NEST_MASK)
		grace__misuse_fatal("rcu_unregister_thread", "called inside a read-side section");
	memb_unregister(r);
}

/* ---- the flavor descriptor (core/flavor.h) ---- */

static bool memb_is_reader(struct grace__flavor *f)
{
	(void)f;
	return grace_rcu_read_ongoing();
}

/* Deadlock check shared by every default-flavor wait. */
static int memb_enter_wait(struct grace__flavor *f, const char *call)
{
	(void)f;
	if (memb_underflow(grace_load_relaxed(&grace__memb_reader.ctr)))
		grace__misuse_fatal("rcu_read_unlock",
				    "unlock without a matching rcu_read_lock() (found by %s())",
				    call);
	if (grace_load_relaxed(&grace__memb_reader.ctr) & GRACE__R_NEST_MASK)
		grace__misuse_fatal(call,
				    "called inside an rcu_read_lock() section (would deadlock)");
	return 0;
}

static void memb_leave_wait(struct grace__flavor *f, int token)
{
	(void)f;
	(void)token;
}

static int memb_read_lock_op(struct grace__flavor *f)
{
	(void)f;
	grace_rcu_read_lock();
	return 0;
}

static void memb_read_unlock_op(struct grace__flavor *f, int token)
{
	(void)f;
	(void)token;
	grace_rcu_read_unlock();
}

static const struct grace__flavor_hooks memb_hooks = {
	.is_reader = memb_is_reader,
	.enter_wait = memb_enter_wait,
	.leave_wait = memb_leave_wait,
	.read_lock = memb_read_lock_op,
	.read_unlock = memb_read_unlock_op,
	.atfork_child = NULL,
};

static const char *const memb_calls[GRACE__CALL_N] = {
	[GRACE__CALL_SYNC] = "synchronize_rcu",
	[GRACE__CALL_SYNC_EXP] = "synchronize_rcu_expedited",
	[GRACE__CALL_CALL] = "call_rcu",
	[GRACE__CALL_CALL_HURRY] = "call_rcu_hurry",
	[GRACE__CALL_BARRIER] = "rcu_barrier",
	[GRACE__CALL_COND_SYNC] = "cond_synchronize_rcu",
	[GRACE__CALL_POLL_STATE] = "poll_state_synchronize_rcu",
	[GRACE__CALL_START_POLL] = "start_poll_synchronize_rcu",
	[GRACE__CALL_SET_POLICY] = "grace_rcu_set_policy",
	[GRACE__CALL_SET_LIMITS] = "grace_rcu_set_callback_limits",
	[GRACE__CALL_FREE] = "free_rcu",
	[GRACE__CALL_FREE_PTR] = "free_rcu_mightsleep",
	[GRACE__CALL_FREE_BARRIER] = "free_rcu_barrier",
	[GRACE__CALL_RETIRE] = "rcu_retire",
	[GRACE__CALL_SET_FREE_HOOK] = "grace_rcu_set_free_hook",
};

struct grace__flavor grace__memb_flavor = {
	.name = "rcu",
	.calls = memb_calls,
	.gp = &memb_gp,
	.hooks = &memb_hooks,
	.reg = &memb_registry,
	.cb_workers = 0,
	.call_may_wait = true,
	.cb = NULL,
	.cb_lock = GRACE__LOCK_INIT,
	.owner = NULL,
	.free_slot = 0,
	.exit_in_reader = "exit() was called inside a read-side section",
};

GRACE_API const struct grace_flavor_ops grace_flavor_rcu =
	GRACE__FLAVOR_OPS_INIT(&grace__memb_flavor, "rcu", grace_rcu_register_thread,
			       grace_rcu_unregister_thread, NULL, NULL, NULL);

/* ---- the update side: the generic functions of flavor/update.c ---- */

void grace_rcu_synchronize(void)
{
	grace__flavor_synchronize(&grace__memb_flavor, 0);
}

void grace_rcu_synchronize_expedited(void)
{
	grace__flavor_synchronize(&grace__memb_flavor, GRACE__GP_EXPEDITED);
}

void grace_rcu_call(struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call(&grace__memb_flavor, head, func);
}

void grace_rcu_call_hurry(struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call_hurry(&grace__memb_flavor, head, func);
}

void grace_rcu_barrier(void)
{
	grace__flavor_barrier(&grace__memb_flavor);
}

unsigned long grace_rcu_get_state(void)
{
	return grace__flavor_get_state(&grace__memb_flavor);
}

unsigned long grace_rcu_start_poll(void)
{
	return grace__flavor_start_poll(&grace__memb_flavor);
}

bool grace_rcu_poll_state(unsigned long cookie)
{
	return grace__flavor_poll_state(&grace__memb_flavor, cookie);
}

void grace_rcu_cond_synchronize(unsigned long cookie)
{
	grace__flavor_cond_synchronize(&grace__memb_flavor, cookie);
}

int grace_rcu_set_policy(enum grace_gp_policy policy, unsigned int period_us)
{
	return grace__flavor_set_policy(&grace__memb_flavor, policy, period_us);
}

int grace_rcu_set_callback_limits(size_t soft, size_t hard)
{
	return grace__flavor_set_limits(&grace__memb_flavor, soft, hard);
}

/* free_rcu() and its twins: engine/free.c, over this descriptor. */
void grace_rcu_free(void *ptr, struct rcu_head *head)
{
	grace__free(&grace__memb_flavor, ptr, head);
}

void grace_rcu_free_ptr(void *ptr)
{
	grace__free_ptr(&grace__memb_flavor, ptr);
}

void grace_rcu_free_barrier(void)
{
	grace__free_barrier(&grace__memb_flavor);
}

/* rcu_retire() past its inline fast path (grace/internal/retire.h). */
void grace__memb_retire_slow(void (*fn)(void *), void *ptr)
{
	grace__retire(&grace__memb_flavor, fn, ptr);
}

int grace_rcu_set_free_hook(void (*fn)(void *))
{
	return grace__free_hook(&grace__memb_flavor, fn);
}

void grace_rcu_callback_stats(struct grace_cb_stats *stats)
{
	grace__flavor_stats(&grace__memb_flavor, stats);
}

void grace_rcu_reader_stats(unsigned long *registered, unsigned long *scanned, unsigned long *parks,
			    unsigned long *unparks)
{
	grace__init();
	grace__registry_stats(&memb_registry, registered, scanned, parks, unparks);
}

/* ---- start-up ---- */

static struct grace__reader *memb_self(void)
{
	return &grace__memb_reader;
}

void grace__memb_init(void)
{
	/* Valgrind: the flavor's words that threads share through atomics. */
	grace__ann_ignore(&grace__memb_flavor, sizeof(grace__memb_flavor));
	grace__ann_ignore(grace__memb_flavor.gp, sizeof(*grace__memb_flavor.gp));
	/* A reader holds the grace period while it is still in the section the first scan found
	 * it in: nesting != 0 and the same section number (the argument at the top of this file;
	 * GRACE__REG_SEEN). Done is not ordered: readers store with no fence, so barrier W is part
	 * of the proof (no light sleep). */
	grace__registry_init(&memb_registry, GRACE__R_NEST_MASK, ~(GRACE__R_SEQ_UNIT - 1),
			     GRACE__REG_SEEN, memb_self, "rcu");
	/* Parking needs membarrier (its confirmation is barrier A); GRACE_NO_PARK=1 turns it off
	 * (comparisons, benchmarks); GRACE_PARK_AFTER=K (1..4096) parks every thread seen idle in
	 * K passes in a row, with no adaptation (tests: parking as often as possible). The misuse
	 * mask: nesting no lock reaches. */
	if (grace__use_membarrier && !grace__opt(GRACE__OPT_GRACE_NO_PARK))
		grace__registry_enable_parking(&memb_registry, GRACE__R_NEST_HIGH,
					       (unsigned int)grace__opt(
						       GRACE__OPT_GRACE_PARK_AFTER));
	/* Retiring threads step grace periods themselves (engine/free.c); GRACE_NO_STEP=1 leaves
	 * every grace period to the engine's workers and to synchronize, as before 0.4. */
	if (!grace__opt(GRACE__OPT_GRACE_NO_STEP)) {
		memb_gp.resume = memb_resume_readers;
		memb_gp.step = memb_step;
	}
	/* Asking needs membarrier (its fallback is barrier A, and the fence fallback's readers
	 * fence at every section anyway); GRACE_NO_ASK=1 turns it off. Blocking grace periods ask
	 * whether or not threads step (GRACE_NO_STEP=1 turns off the steps alone). */
	memb_ask.on = grace__use_membarrier && !grace__opt(GRACE__OPT_GRACE_NO_ASK);
	if (pthread_key_create(&memb_key, memb_thread_exit) != 0)
		grace__fatal("grace init", "pthread_key_create failed");
}
