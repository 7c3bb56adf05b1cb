/* SPDX-License-Identifier: MIT */
/*
 * Grace-period sequence engine (see gp.h).
 *
 * Ordering argument, shared by every flavor:
 *  (1) An updater removes an object, then takes a cookie with grace__gp_snap(): its removal
 *      stores are followed by a full fence and then the read of seq. The grace period that
 *      completes the cookie starts after that read (the cookie names a start that had not yet
 *      happened), i.e. its seq_start store is coherence-after the value the updater read. The
 *      driver executes a full fence after seq_start and only then begins the flavor's part
 *      (membarrier, publish a new reader snapshot, scan readers). By the SB pattern with full
 *      fences on both sides, the removal is visible to every CPU before the flavor's part runs,
 *      so any reader that the flavor later judges "began after the grace period" sees it.
 *  (2) The flavor's part returns only after every reader that might hold the object has been
 *      observed quiescent by acquire loads (pairs with the readers' release stores), plus, where
 *      the flavor needs it, a membarrier. The driver then fences and stores seq_end with release;
 *      a waiter that sees it with the acquire load in grace__gp_done() is ordered after all of
 *      those readers' sections.
 */
#include "core/gp.h"

#include <limits.h>
#include "core/sys.h"

void grace__gp_init(struct grace__gp *gp, grace__wait_readers_fn fn, void *flavor, const char *name)
{
	gp->seq = 0;
	gp->event = 0;
	gp->nsleepers = 0;
	grace__lock_init(&gp->drive_lock);
	gp->wait_readers = fn;
	gp->flavor = flavor;
	gp->name = name;
	gp->started_ns = 0;
}

/* Called with drive_lock held: run one complete grace period. */
static void gp_run_one(struct grace__gp *gp, unsigned int flags)
{
	uint64_t s = grace_load_relaxed(&gp->seq);

	grace__lock_assert_held(&gp->drive_lock);
	gp->started_ns = grace__now_ns();
	grace_store_relaxed(&gp->seq, s + 1); /* seq_start: state 1 */
	/* Full fence: seq_start before the flavor's part. Pairs with the fence in grace__gp_snap(),
	 * argument (1) above. */
	grace_smp_mb();
	gp->wait_readers(gp, flags);
	/* Full fence, then seq_end with release: the flavor's observations of quiescent readers
	 * happen before any waiter that sees the new seq (argument (2), pairs with
	 * grace__gp_done()). */
	grace_smp_mb();
	grace_store_release(&gp->seq, (s | GRACE__SEQ_STATE_MASK) + 1);
}

static void gp_release(struct grace__gp *gp)
{
	grace__unlock(&gp->drive_lock);
	/* seq_cst RMW, then read nsleepers: pairs with the seq_cst increment of nsleepers in
	 * grace__gp_wait() so a sleeper either sees the new event value or is counted here. */
	grace_fetch_add(&gp->event, 1u, __ATOMIC_SEQ_CST);
	if (grace_load_seq_cst(&gp->nsleepers))
		grace__futex_wake(&gp->event, INT_MAX);
}

bool grace__gp_try_drive(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	while (!grace__gp_done(gp, s)) {
		if (!grace__trylock(&gp->drive_lock))
			return grace__gp_done(gp, s);
		if (!grace__gp_done(gp, s))
			gp_run_one(gp, flags);
		gp_release(gp);
	}
	return true;
}

void grace__gp_wait(struct grace__gp *gp, uint64_t s, unsigned int flags)
{
	while (!grace__gp_done(gp, s)) {
		/* Read event before trying the lock: if the holder releases after this read, the
		 * value changes and the futex wait below cannot miss it. */
		uint32_t ev = grace_load_acquire(&gp->event);

		if (grace__trylock(&gp->drive_lock)) {
			if (!grace__gp_done(gp, s))
				gp_run_one(gp, flags);
			gp_release(gp);
			continue;
		}
		grace_fetch_add(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
		if (!grace__gp_done(gp, s))
			grace__futex_wait(&gp->event, ev, -1);
		grace_fetch_sub(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
	}
}

void grace__gp_reset_after_fork(struct grace__gp *gp)
{
	/* fork() does not wait for drive_lock (a forking reader inside a section would deadlock
	 * against the driver waiting for it), so the child may inherit it held by a thread that no
	 * longer exists, mid grace period. Re-initialise the lock and roll the unfinished grace
	 * period back to "not started": completed counts never move backwards, cookies that named
	 * it are completed by the child's next grace period, and the child's only thread is
	 * waited for like any other reader. */
	grace__lock_reinit(&gp->drive_lock);
	gp->nsleepers = 0;
	gp->seq &= ~GRACE__SEQ_STATE_MASK;
}
