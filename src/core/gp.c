/* SPDX-License-Identifier: MIT */
/*
 * Grace-period sequence engine (see gp.h).
 *
 * Ordering argument, shared by every flavor:
 *  (1) An updater removes an object, then takes a cookie with grace__gp_snap(): its removal
 *      stores are followed by a full fence and then the read of seq. The grace period that
 *      completes the cookie starts after that read (the cookie names a start that had not yet
 *      happened), i.e. its seq_start store is coherence-after the value the updater read.
 *      seq_start is a seq_cst compare-and-swap followed by grace_smp_mb_after_rmw(), a full
 *      barrier, and only then does the driver begin the flavor's part (membarrier, publish a
 *      new reader snapshot, scan readers). By the SB pattern with full
 *      fences on both sides, the removal is visible to every CPU before the flavor's part runs,
 *      so any reader that the flavor later judges "began after the grace period" sees it.
 *  (2) The flavor's part returns only after every reader that might hold the object has been
 *      observed quiescent by acquire loads (pairs with the readers' release stores), plus, where
 *      the flavor needs it, a membarrier. The driver then stores seq_end with a seq_cst exchange
 *      (a release); a waiter that sees it with the acquire load in grace__gp_done() is ordered
 *      after all of those readers' sections.
 *  (3) synchronize from an idle domain starts the grace period itself: its own earlier
 *      accesses precede its seq_start in program order, so (1) holds with no cookie.
 */
#include "core/gp.h"

#include <limits.h>
#include "core/sys.h"

void grace__gp_init(struct grace__gp *gp, grace__wait_readers_fn fn, void *flavor, const char *name)
{
	gp->seq = 0;
	gp->event = 0;
	gp->nsleepers = 0;
	gp->wait_readers = fn;
	gp->flavor = flavor;
	gp->name = name;
}

/*
 * seq_start: become the driver by moving seq from idle to "in progress". Returns false if a
 * grace period is under way (or another thread won the race), else sets *s to the idle value.
 * The compare-and-swap is seq_cst and followed by grace_smp_mb_after_rmw(): together a full
 * barrier (a locked instruction on x86), so seq_start, and every access the caller made before
 * it, precede the flavor's part. Pairs with the fence in grace__gp_snap(): argument (1) above.
 */
static bool gp_start(struct grace__gp *gp, uint64_t *s)
{
	uint64_t cur = grace_load_relaxed(&gp->seq);

	if (cur & GRACE__SEQ_STATE_MASK)
		return false;
	if (!grace_cmpxchg(&gp->seq, &cur, cur + 1, __ATOMIC_SEQ_CST))
		return false;
	grace_smp_mb_after_rmw();
	*s = cur;
	return true;
}

/* The grace-period sequence the calling thread drives now (NULL: none). Owner-only. */
static __thread const struct grace__gp *gp_driving GRACE_TLS_IE;

bool grace__gp_driving(const struct grace__gp *gp)
{
	return gp_driving == gp;
}

/* The driver's grace period from seq_start to seq_end, and the wake-up of sleepers. */
static void gp_run_and_end(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	/* A driver drives one sequence at a time; the stall handler it may call can drive
	 * another flavor's (and restores this one's on its return). */
	const struct grace__gp *outer = gp_driving;

	gp_driving = gp;
	gp->wait_readers(gp, flags);
	gp_driving = outer;
	/*
	 * seq_end with a seq_cst exchange: its release half orders the flavor's observations of
	 * quiescent readers before any waiter that sees the new seq (argument (2), pairs with the
	 * acquire in grace__gp_done()); with grace_smp_mb_after_rmw() it is also a full barrier
	 * between seq_end and the load of nsleepers below, the store-buffering pair of a sleeper's
	 * increment of nsleepers and its check of seq in grace__gp_wait(): either the sleeper sees
	 * seq_end, or it is counted here and woken.
	 */
	grace__ann_release(&gp->seq); /* race detectors: see grace__gp_done() (core/annotate.h) */
	grace_xchg(&gp->seq, (s | GRACE__SEQ_STATE_MASK) + 1, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
	if (grace_load_relaxed(&gp->nsleepers)) {
		/* The sleeper read event before checking seq: changing it makes its futex wait
		 * return at once if it had not slept yet. */
		grace_fetch_add(&gp->event, 1u, __ATOMIC_RELEASE);
		grace__futex_wake(&gp->event, INT_MAX);
	}
}

bool grace__gp_try_drive(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	uint64_t cur;

	while (!grace__gp_done(gp, s)) {
		if (!gp_start(gp, &cur))
			return grace__gp_done(gp, s);
		gp_run_and_end(gp, cur, flags);
	}
	return true;
}

void grace__gp_wait(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	uint64_t cur;

	while (!grace__gp_done(gp, s)) {
		/* Read event before checking: if the driver finishes after this read, the value
		 * changes and the futex wait below cannot miss it. */
		uint32_t ev = grace_load_acquire(&gp->event);

		if (gp_start(gp, &cur)) {
			gp_run_and_end(gp, cur, flags);
			continue;
		}
		grace_fetch_add(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
		/* Full barrier: the count before the check of seq (see gp_run_and_end()). */
		grace_smp_mb_after_rmw();
		/* Sleep only while a grace period is under way: when idle, try to drive instead. */
		if (!grace__gp_done(gp, s) && grace__gp_in_progress(gp))
			grace__futex_wait(&gp->event, ev, -1);
		grace_fetch_sub(&gp->nsleepers, 1u, __ATOMIC_RELAXED);
	}
}

void grace__gp_synchronize(struct grace__gp *gp, unsigned int flags)
{
	uint64_t cur;

	/* Idle: start a grace period now. It covers the caller, whose earlier accesses precede
	 * seq_start (gp_start() is a full barrier), so no cookie or fence is needed first. */
	if (gp_start(gp, &cur)) {
		gp_run_and_end(gp, cur, flags);
		return;
	}
	grace__gp_wait(gp, grace__gp_snap(gp), flags);
}

void grace__gp_reset_after_fork(struct grace__gp *gp)
{
	/* fork() does not wait for a driver (a forking reader inside a section would deadlock
	 * against the driver waiting for it), so the child may inherit a grace period that a
	 * thread which no longer exists was driving. Roll it back to "not started": completed
	 * counts never move backwards, cookies that named it are completed by the child's next
	 * grace period, and the child's only thread is waited for like any other reader. */
	gp->nsleepers = 0;
	gp->seq &= ~GRACE__SEQ_STATE_MASK;
}
