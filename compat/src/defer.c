/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu(): glue onto libgrace's deferred caches (src/engine/defer.c, whose
 * opening argument, points D1-D9, is the correctness argument of defer_rcu()).
 *
 * Each thread has one deferred cache per grace domain (the default flavors share grace_rcu's;
 * QSBR has its own), of the same blocks and per-thread machinery as free_rcu() and rcu_retire():
 * the inline append of <grace/internal/retire.h> (a few plain stores per call while the cache
 * lets it), sealed blocks with grace-period cookies, the owner/stealer pair, the thread-exit and
 * fork hand-overs. What differs from rcu_retire() is who runs the entries: never the thread that
 * deferred (it may hold a lock a deferred function takes), but the cache's pass, one callback
 * of the domain per cache, which runs them in order on a grace worker, one at a time; and, as in
 * liburcu, rcu_defer_barrier[_thread]() and rcu_defer_unregister_thread(), on the calling
 * thread. Every property the queues of this file used to give (order per thread across CPU
 * migrations and thread exit, never on the deferring thread, a bounded backlog with a bounded
 * wait, the fork child's orphans and barriers in flight) is argued there.
 *
 * Tests and documents that cite "defer.c, point N" cite the argument this file held when it kept
 * queues of its own; its points map onto engine/defer.c's: 1 (a grace period after the append) D1,
 * 2 (once, in order) D2, 3 (no entry stranded) D3, 4 (blocks) D2 and D4, 5 (queues outlive their
 * owners) D4, 6 (the waiting owner is woken) D5, 7 (no callback waits for fork's lock) D7,
 * 8 (fork) D6.
 *
 * Here: the flavor checks, liburcu's registration contract (debug builds report a defer_rcu()
 * from a thread that did not register, or inside a read-side section), the misuse checks of the
 * barriers, and the out-of-memory path (no block for the entry: a grace period, then the
 * function on the caller, as liburcu's full queue does).
 */
#include <errno.h>
#include <stdbool.h>

#include <grace/diag.h>
#include <grace/internal/retire.h>

#include "compat.h"

/* rcu_defer_register_thread() count per flavor (liburcu requires it before defer_rcu()). */
static __thread unsigned int defer_registered[GRACE_URCU_NR_FLAVORS];

static int dom_of(int flavor)
{
	return grace_urcu__is_qsbr(flavor) ? 1 : 0;
}

/* Inside a read-side section of the flavor (QSBR: inside rcu_read_lock(), known when the caller
 * was compiled with GRACE_DEBUG)? */
static bool in_section(int flavor)
{
	if (grace_urcu__is_qsbr(flavor))
		return grace_urcu__qsbr_nest != 0;
	return grace_rcu_read_ongoing();
}

void grace_urcu_defer_rcu(int flavor, void (*fct)(void *p), void *p)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS || !fct)
		grace_urcu__misuse("defer_rcu", "%s", !fct ? "NULL function" : "unknown flavor");
#ifdef GRACE_DEBUG
	/* liburcu's contract, which liburcu itself does not check. */
	if (!defer_registered[flavor])
		grace_urcu__misuse("defer_rcu", "thread not registered with "
						"rcu_defer_register_thread()");
	if (in_section(flavor))
		grace_urcu__misuse("defer_rcu",
				   "called inside rcu_read_lock(): defer_rcu() may wait "
				   "for a grace period");
#endif
	int dom = dom_of(flavor);

	/* Relaxed: written (the same value each time) before this thread's cache opened. */
	if (GRACE_LIKELY(grace__retire_fast_as(dom ? grace__qsbr_defer : grace__memb_defer, fct, p,
					       grace_load_relaxed(&grace__defer_fenced) != 0)))
		return;
	if (GRACE_LIKELY(grace__defer_slow(dom, fct, p)))
		return;
	/* Out of memory: liburcu's full-queue path for this one deferral. */
	if (dom)
		grace_qsbr_synchronize();
	else
		grace_rcu_synchronize();
	fct(p);
}

int grace_urcu_defer_register_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return -EINVAL;
	int err = grace__defer_register(dom_of(flavor));

	if (err)
		return err;
	defer_registered[flavor]++;
	return 0;
}

static void barrier_checks(const char *call, int flavor)
{
	if (in_section(flavor))
		grace_urcu__misuse(call, "called inside rcu_read_lock(): it waits for "
					 "a grace period (deadlock)");
	if (grace__defer_running())
		grace_urcu__misuse(call, "called from a deferred function: it would wait for "
					 "itself (deadlock)");
}

void grace_urcu_defer_unregister_thread(int flavor)
{
	int dom;
	unsigned int left = 0;

	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	if (defer_registered[flavor] == 0)
		grace_urcu__misuse("rcu_defer_unregister_thread",
				   "thread not registered with rcu_defer_register_thread()");
	defer_registered[flavor]--;
	dom = dom_of(flavor);
	for (int f = 0; f < GRACE_URCU_NR_FLAVORS; f++)
		if (dom_of(f) == dom)
			left += defer_registered[f];
	if (left)
		return;
	barrier_checks("rcu_defer_unregister_thread", flavor);
	/* liburcu runs the thread's deferrals here; so do we, then the cache goes. */
	grace__defer_unregister(dom);
}

void grace_urcu_defer_barrier(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	barrier_checks("rcu_defer_barrier", flavor);
	grace__defer_barrier(dom_of(flavor), false);
}

void grace_urcu_defer_barrier_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	barrier_checks("rcu_defer_barrier_thread", flavor);
	grace__defer_barrier(dom_of(flavor), true);
}
