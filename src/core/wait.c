/* SPDX-License-Identifier: MIT */
/*
 * The wait for readers (see wait.h for the protocol and its lost-wake-up argument).
 *
 * Light sleep. Barrier W (membarrier) costs the waiter a system call and every CPU running the
 * process an interrupt; with more threads than CPUs it is paid on nearly every grace period,
 * because the reader the wait needs is preempted on the waiter's own CPU (ops->blocked). Where
 * done() alone proves the readers finished (ops->done_is_ordered: QSBR) and every holder is
 * blocked on the waiter's CPU, W only has to make the wake-up certain, and the CPU gives that
 * for free in the common case: a holder preempted here next runs on this CPU, after the waiter
 * blocks (its flag store precedes the futex wait in this CPU's program order, and the kernel's
 * switch to the holder follows it), so the holder's load of the flag sees it. The waiter then
 * uses a local full fence and sleeps at most GRACE__WAIT_LIGHT_NS. Where the hint misleads, the
 * wake-up may be lost: the holder had just moved to another CPU, or it was blocked in the
 * kernel (an online QSBR thread in a system call) and wakes on another CPU; there its store of
 * ctr and its load of the flag, with no fence between, can both miss the waiter's (store
 * buffering). Then the sleep runs out and the waiter falls back to W and the exact protocol:
 * the cost is at most GRACE__WAIT_LIGHT_NS of delay. Nothing but the wake-up depends on the
 * hint: done() still decides when the wait ends.
 */
#include "core/wait.h"

#include <errno.h>
#include <limits.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/sys.h"

bool grace__use_membarrier;
unsigned long grace__wait_nblocked;
unsigned long grace__wait_nlight, grace__wait_nlight_timeout;

void grace__heavy_barrier(void)
{
	if (grace__use_membarrier)
		grace__sys_membarrier();
	else
		grace_smp_mb();
}

/*
 * grace__heavy_barrier(), timed into *bc. The callers weigh the result against the garbage one
 * barrier covers (engine/free.c's step_pace(), hazptr.c's thr_next()). A sample counts 1/8 in
 * the average and may at most double it, so one preemption inside the call moves the pace by
 * an eighth, not to its bound. Relaxed: the words are hints, racy by design (two callers may
 * fold at once and a sample is lost); nothing is ordered by them.
 */
void grace__heavy_barrier_timed(struct grace__barrier_cost *bc)
{
	uint64_t t0 = grace__now_ns();

	grace__heavy_barrier();

	uint64_t ns = grace__now_ns() - t0;
	uint32_t old = grace_load_relaxed(&bc->avg_ns);
	uint32_t least = grace_load_relaxed(&bc->least_ns);

	if (ns > UINT32_MAX / 4)
		ns = UINT32_MAX / 4;
	if (!ns)
		ns = 1;
	if (!least || ns < least)
		grace_store_relaxed(&bc->least_ns, (uint32_t)ns);
	if (old && ns > 2ull * old)
		ns = 2ull * old;
	uint32_t v = old ? old - old / 8 + (uint32_t)ns / 8 : (uint32_t)ns;
	grace_store_relaxed(&bc->avg_ns, v ? v : 1u);
}

/*
 * What one barrier costs the process, as far as its caller can tell: its average time, times
 * avg / least. A membarrier that interrupts no other CPU costs its caller a system call (about
 * 0.4 us on the 2-CPU VM) and nobody else: the ratio is about 1. One that interrupts busy CPUs
 * makes the caller wait for their interrupts (5 to 15 us), and costs each of them more than
 * that wait shows (the interrupt, on a virtual machine an exit, the lines it evicts): the
 * ratio, 10 or more, stands for them. Measured on bench/smr's list (2^10 keys, 2 threads):
 * scans paced by the caller's time alone ran at 0.90x of scans every 1024 objects.
 */
uint64_t grace__barrier_weight(const struct grace__barrier_cost *bc)
{
	uint64_t avg = grace_load_relaxed(&bc->avg_ns);
	uint64_t least = grace_load_relaxed(&bc->least_ns);

	uint64_t w = least ? avg * avg / least : 0;

	return w < 1000000000ull ? w : 1000000000ull; /* 1 s: the products below stay in 64 bits */
}

/*
 * The one pace rule of the callers that batch behind a heavy barrier (engine/free.c's steps,
 * hazptr.c's scans): a batch as large as the slots the caller adds in `gap` barrier weights,
 * at the rate it added the last ones. Its barriers then take about 1/gap of its time, and
 * within that its batches, the garbage it keeps, are as small as they can be.
 */
uint64_t grace__barrier_pace(const struct grace__barrier_cost *bc, uint64_t slots, uint64_t ns,
			     unsigned int gap)
{
	if (!ns)
		return 0;
	if (slots > (1u << 24))
		slots = 1u << 24;
	return slots * grace__barrier_weight(bc) * gap / ns;
}

enum spin_end { SPIN_DONE, SPIN_SPENT, SPIN_BLOCKED };

/* Spin until done, the budget is spent, or a holder is seen unable to run (ops->blocked). */
static enum spin_end wait_spin(const struct grace__wait_ops *ops, void *ctx, uint64_t budget_ns)
{
	uint64_t t0 = grace__now_ns();

	/* Back off 1, 2, 4 ... 64 pauses between checks: a check reads every reader's line, and
	 * re-reading lines the readers are writing only slows them down. The blocked() check
	 * comes after the first failed check and then every fourth: a holder preempted on this
	 * CPU is found within about a microsecond, for a few loads per check. Two holders that
	 * share another CPU end the spin. Where the sleep can be light (done_is_ordered), a
	 * holder here ends it only once every holder left is here (the light sleep needs that;
	 * the holders running elsewhere end their sections meanwhile); elsewhere the sleep pays
	 * barrier W anyway, so one holder here ends it. */
	unsigned int round = 0;
	bool here = false; /* a holder waits on this CPU: only the others' ends are awaited */
	const unsigned int stop_on = GRACE__BLOCKED_SHARED |
				     (ops->done_is_ordered ? GRACE__BLOCKED_ALL_HERE
							   : GRACE__BLOCKED_HERE);
	for (unsigned int spins = 1;; spins = spins < 64 ? spins * 2 : 64, round++) {
		/* Once a holder is known to wait here, every round checks (no backoff): each
		 * microsecond spent past the others' ends delays the one that needs this CPU. */
		for (unsigned int i = 0; i < (here ? 1u : spins); i++)
			grace_cpu_relax();
		if (ops->done(ctx))
			return SPIN_DONE;
		if (ops->blocked && (here || (round & 3) == 0)) {
			unsigned int b = ops->blocked(ctx);
			if (b & stop_on)
				return SPIN_BLOCKED;
			here = (b & GRACE__BLOCKED_HERE) != 0;
		}
		if (grace__now_ns() - t0 >= budget_ns)
			return SPIN_SPENT;
	}
}

enum arm_end { ARM_DONE, ARM_SLEEP, ARM_SLEEP_LIGHT };

/* Arm, run barrier W, recheck; again while a holder is not flagged. light: first try the light
 * sleep's local fence (see the top of this file). */
static enum arm_end wait_arm(const struct grace__wait_ops *ops, void *ctx, uint32_t *futex,
			     bool light)
{
	enum grace__recheck r;

	/* Relaxed: the release RMWs of arm() order it before the flags (wait.h). */
	grace_store_relaxed(futex, GRACE__WAIT_SLEEPING);
	do {
		ops->arm(ctx);
		if (light) {
			/* Full fence: the futex word and the flags before the recheck's loads of the
			 * readers' words. It pairs with no barrier of the reader: a holder that runs
			 * on this CPU next is ordered after it by this CPU's program order and the
			 * kernel's context switch; one that runs elsewhere may miss the flag, which
			 * the bounded light sleep covers (see the top of this file). */
			grace_smp_mb();
			r = ops->recheck(ctx);
			if (r == GRACE__RECHECK_DONE)
				return ARM_DONE;
			if (r == GRACE__RECHECK_SLEEP &&
			    (ops->blocked(ctx) & GRACE__BLOCKED_ALL_HERE))
				return ARM_SLEEP_LIGHT;
			/* A holder may run elsewhere (or one is not flagged yet): the exact
			 * protocol from here on. */
			light = false;
			if (r == GRACE__RECHECK_AGAIN)
				continue; /* arm again */
		}
		/* Barrier W: the futex word and the flags before the recheck's loads of the readers'
		 * words. Pairs with the compiler barrier (smp_mb in the fallback) between a reader's
		 * "done" store and its load of the flag; see wait.h. */
		grace__heavy_barrier();
		r = ops->recheck(ctx);
	} while (r == GRACE__RECHECK_AGAIN);
	return r == GRACE__RECHECK_DONE ? ARM_DONE : ARM_SLEEP;
}

/* The budget for the next wait, from how long this one took (see struct grace__waitq). */
static uint32_t adapt_spin(uint32_t budget, uint64_t took_ns)
{
	if (took_ns <= GRACE__WAIT_SPIN_NS) {
		uint64_t b = took_ns + took_ns / 4;
		return (uint32_t)(b < GRACE__WAIT_SPIN_NS_MIN ? GRACE__WAIT_SPIN_NS_MIN : b);
	}
	budget /= 2;
	return budget < GRACE__WAIT_SPIN_NS_MIN ? (uint32_t)GRACE__WAIT_SPIN_NS_MIN : budget;
}

void grace__wait_for_readers(const struct grace__wait_ops *ops, void *ctx, struct grace__waitq *q,
			     bool expedited)
{
	bool reported = false;
	uint32_t budget = grace_load_relaxed(&q->spin_ns);

	if (ops->done(ctx))
		return;
	if (budget == 0)
		budget = (uint32_t)GRACE__WAIT_SPIN_NS;
	uint64_t t0 = grace__now_ns(), since_ns = t0;
	enum spin_end e = wait_spin(ops, ctx, expedited ? GRACE__WAIT_SPIN_NS_EXPEDITED : budget);
	if (e == SPIN_DONE) {
		grace_store_relaxed(&q->spin_ns, adapt_spin(budget, grace__now_ns() - t0));
		return;
	}
	if (e == SPIN_BLOCKED) /* relaxed: a statistic; drivers of several domains may race */
		grace_fetch_add(&grace__wait_nblocked, 1, __ATOMIC_RELAXED);
	/* The light sleep, once per wait: only when the spin ended on a blocked holder. */
	bool light = e == SPIN_BLOCKED && ops->done_is_ordered;
	for (;;) {
		enum arm_end a = wait_arm(ops, ctx, &q->futex, light);
		if (a == ARM_DONE)
			break;
		light = false;
		/* Sleep until woken or until the stall report is due. Re-read the timeout each
		 * round: a change applies to waits already under way. */
		uint64_t stall_ns = grace__stall_timeout_ns();
		uint64_t now = grace__now_ns();
		int64_t timeout = -1;
		if (stall_ns && !reported) {
			uint64_t waited = now - since_ns;
			timeout = waited >= stall_ns ? 0 : (int64_t)(stall_ns - waited);
		}
		if (a == ARM_SLEEP_LIGHT) {
			/* Relaxed counters: statistics (several domains' drivers may race). */
			grace_fetch_add(&grace__wait_nlight, 1, __ATOMIC_RELAXED);
			if (timeout < 0 || timeout > GRACE__WAIT_LIGHT_NS)
				timeout = GRACE__WAIT_LIGHT_NS;
		}
		if (timeout != 0 &&
		    grace__futex_wait(&q->futex, GRACE__WAIT_SLEEPING, timeout) == -ETIMEDOUT &&
		    a == ARM_SLEEP_LIGHT)
			grace_fetch_add(&grace__wait_nlight_timeout, 1, __ATOMIC_RELAXED);
		now = grace__now_ns();
		if (stall_ns && !reported && now - since_ns >= stall_ns) {
			ops->stall(ctx, now - since_ns);
			reported = true;
		}
		if (ops->done(ctx))
			break;
	}
	ops->disarm(ctx);
	grace_store_relaxed(&q->futex, GRACE__WAIT_AWAKE);
	/* Relaxed: only the domain's one driver reads and writes the budget. A wait cut short by
	 * blocked() says nothing about how long running readers take: the budget stays. */
	if (e != SPIN_BLOCKED)
		grace_store_relaxed(&q->spin_ns, adapt_spin(budget, grace__now_ns() - t0));
}

void grace__wait_wake(uint32_t *futex)
{
	/* Acquire fence: the caller's relaxed load saw a flag set by a release RMW that follows
	 * the waiter's store of SLEEPING (wait_arm), so the load below sees SLEEPING or a later
	 * value. Only the first reader after the waiter armed pays for the exchange. */
	grace_fence_acquire();
	if (grace_load_relaxed(futex) == GRACE__WAIT_SLEEPING &&
	    grace_xchg(futex, GRACE__WAIT_AWAKE, __ATOMIC_SEQ_CST) == GRACE__WAIT_SLEEPING)
		grace__futex_wake(futex, INT_MAX);
}
