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
 *
 * Stepped grace periods. A flavor that sets gp->step lets threads that must not block (a
 * thread retiring objects inside its own read-side section, engine/free.c) advance a grace
 * period in steps, each of which returns at once: start it (seq_start, the flavor's barrier A
 * and first scan), then, at later steps, rescan the readers the first scan recorded; the step
 * that finds none left ends it. Between steps the grace period is STEPPED: under way, with no
 * driver. The state bits stay the drivers' only lock, with one more transition: whoever finds
 * STEPPED may adopt it (a compare-and-swap to RUNNING) and continue from the recorded scan, a
 * stepper without blocking, a waiter (grace__gp_wait) by blocking in gp->resume. A stepper that
 * finds readers still holding puts it back to STEPPED. What a grace period's correctness
 * needs is unchanged: (1) every step that starts one runs gp_start's barrier and then the
 * flavor's barrier A before its first scan, as a driver does; (2) the grace period ends (seq_end)
 * only once every reader the first scan recorded has been seen quiescent by acquire loads,
 * by one thread or, across adoptions, by several, each adoption ordered after the previous
 * holder's park by the seq_cst exchanges on seq (and the flavor's scan state under its own
 * lock). No thread sleeps on a STEPPED grace period: a waiter sleeps only while it reads
 * RUNNING, and a park wakes the sleepers exactly as seq_end does (the same store-buffering
 * pair on nsleepers), so they come back and adopt it.
 */
#include "core/gp.h"

#include <limits.h>
#include "core/sys.h"

void grace__gp_init(struct grace__gp *gp, grace__wait_readers_fn fn, void *flavor, const char *name)
{
	gp->seq = 0;
	gp->event = 0;
	gp->nsleepers = 0;
	gp->steps = 0;
	gp->wait_readers = fn;
	gp->step = NULL;
	gp->resume = NULL;
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

/*
 * adopt: become the driver of a STEPPED grace period (see the top of this file). The seq_cst
 * compare-and-swap orders the adopter after the stepper's park, which followed its scans.
 */
static bool gp_adopt(struct grace__gp *gp, uint64_t *s)
{
	uint64_t cur = grace_load_relaxed(&gp->seq);

	if ((cur & GRACE__SEQ_STATE_MASK) != GRACE__SEQ_STEPPED)
		return false;
	if (!grace_cmpxchg(&gp->seq, &cur, cur - GRACE__SEQ_STEPPED + GRACE__SEQ_RUNNING,
			   __ATOMIC_SEQ_CST))
		return false;
	grace_smp_mb_after_rmw();
	*s = cur - GRACE__SEQ_STEPPED;
	return true;
}

/* Wake the threads asleep on event, after the store to seq they wait for. The caller's
 * seq_cst exchange of seq and grace_smp_mb_after_rmw() order that store before the load of
 * nsleepers: the store-buffering pair of a sleeper's increment of nsleepers and its check of
 * seq in grace__gp_wait(): either the sleeper sees the new seq, or it is counted here. */
static void gp_wake_sleepers(struct grace__gp *gp)
{
	if (grace_load_relaxed(&gp->nsleepers)) {
		/* The sleeper read event before checking seq: changing it makes its futex wait
		 * return at once if it had not slept yet. */
		grace_fetch_add(&gp->event, 1u, __ATOMIC_RELEASE);
		grace__futex_wake(&gp->event, INT_MAX);
	}
}

/* seq_end with a seq_cst exchange: its release half orders the flavor's observations of
 * quiescent readers before any waiter that sees the new seq (argument (2), pairs with the
 * acquire in grace__gp_done()); with grace_smp_mb_after_rmw() it is a full barrier before
 * gp_wake_sleepers()'s load of nsleepers. */
static void gp_end(struct grace__gp *gp, uint64_t s)
{
	grace__ann_release(&gp->seq); /* race detectors: see grace__gp_done() (core/annotate.h) */
	grace_xchg(&gp->seq, (s | GRACE__SEQ_STATE_MASK) + 1, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
	gp_wake_sleepers(gp);
}

bool grace__gp_step_start(struct grace__gp *gp, uint64_t *base)
{
	return gp_start(gp, base);
}

bool grace__gp_step_adopt(struct grace__gp *gp, uint64_t *base)
{
	return gp_adopt(gp, base);
}

void grace__gp_step_end(struct grace__gp *gp, uint64_t base)
{
	gp_end(gp, base);
	/* Relaxed: a hint for the engine's workers, which defer to steppers (callback.c). */
	grace_store_relaxed(&gp->steps, grace_load_relaxed(&gp->steps) + 1);
}

void grace__gp_step_park(struct grace__gp *gp, uint64_t base)
{
	/* seq_cst exchange: a release of the scan state to the next adopter (pairs with its
	 * compare-and-swap), and with the barrier after it the first half of the store-buffering
	 * pair of gp_wake_sleepers(): a sleeper that read RUNNING is counted, or sees STEPPED. */
	grace_xchg(&gp->seq, base + GRACE__SEQ_STEPPED, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
	gp_wake_sleepers(gp);
}

/* The grace-period sequence the calling thread drives now (NULL: none). Owner-only. */
static __thread const struct grace__gp *gp_driving GRACE_TLS_IE;

bool grace__gp_driving(const struct grace__gp *gp)
{
	return gp_driving == gp;
}

/* The driver's grace period, from seq_start (or an adoption) to seq_end and the wake-up of
 * sleepers: part is the flavor's wait_readers, or its resume for a STEPPED grace period the
 * caller adopted. */
static void gp_drive_and_end(struct grace__gp *gp, uint64_t s, unsigned int flags,
			     grace__wait_readers_fn part)
{
	/* A driver drives one sequence at a time; the stall handler it may call can drive
	 * another flavor's (and restores this one's on its return). */
	const struct grace__gp *outer = gp_driving;

	gp_driving = gp;
	part(gp, flags);
	gp_driving = outer;
	gp_end(gp, s);
}

static void gp_run_and_end(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	gp_drive_and_end(gp, s, flags, gp->wait_readers);
}

static void gp_resume_and_end(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	gp_drive_and_end(gp, s, flags, gp->resume);
}

bool grace__gp_try_drive(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	uint64_t cur;

	while (!grace__gp_done(gp, s)) {
		if (gp_start(gp, &cur))
			gp_run_and_end(gp, cur, flags);
		else if (gp_adopt(gp, &cur))
			gp_resume_and_end(gp, cur, flags);
		else
			return grace__gp_done(gp, s);
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
		if (gp_adopt(gp, &cur)) {
			gp_resume_and_end(gp, cur, flags);
			continue;
		}
		grace_fetch_add(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
		/* Full barrier: the count before the check of seq (see gp_wake_sleepers()). */
		grace_smp_mb_after_rmw();
		/* Sleep only while a driver runs a grace period: when idle, or STEPPED (no driver),
		 * drive instead. */
		if (!grace__gp_done(gp, s) &&
		    (grace_load_relaxed(&gp->seq) & GRACE__SEQ_STATE_MASK) == GRACE__SEQ_RUNNING)
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
	 * grace period, and the child's only thread is waited for like any other reader. A
	 * STEPPED grace period goes the same way: the child's next start scans afresh. */
	gp->nsleepers = 0;
	gp->seq &= ~GRACE__SEQ_STATE_MASK;
}
