/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu() on grace's callback engine.
 *
 * liburcu queues deferrals per thread and has a thread of its own run them after a grace
 * period; when a thread's queue is full, defer_rcu() waits for a grace period and runs them
 * itself. Here each deferral is one callback of the flavor (a 32-byte record, call_rcu), so the
 * engine's per-CPU queues, batching and bound on pending work apply. Everything goes through
 * defer_enqueue(): when the engine's batched free (issue 13) lands, only that function moves.
 */
#include <stdlib.h>

#include "compat.h"

struct deferred {
	struct rcu_head rh;
	void (*fct)(void *p);
	void *p;
};

/* rcu_defer_register_thread() count per flavor (liburcu requires it before defer_rcu()). */
static __thread unsigned int defer_registered[GRACE_URCU_NR_FLAVORS];

static void deferred_run(struct rcu_head *rh)
{
	struct deferred *d = grace_container_of(rh, struct deferred, rh);
	void (*fct)(void *p) = d->fct;
	void *p = d->p;

	free(d);
	fct(p);
}

static void flavor_synchronize(int flavor)
{
	if (grace_urcu__is_qsbr(flavor))
		grace_qsbr_synchronize();
	else
		grace_rcu_synchronize();
}

/* The one place deferrals reach the engine. */
static void defer_enqueue(int flavor, void (*fct)(void *p), void *p)
{
	struct deferred *d = (struct deferred *)malloc(sizeof(*d));

	if (!d) {
		/* Out of memory: liburcu's full-queue path, wait for a grace period and run it. */
		flavor_synchronize(flavor);
		fct(p);
		return;
	}
	d->fct = fct;
	d->p = p;
	if (grace_urcu__is_qsbr(flavor))
		grace_qsbr_call(&d->rh, deferred_run);
	else
		grace_rcu_call(&d->rh, deferred_run);
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
	defer_enqueue(flavor, fct, p);
}

int grace_urcu_defer_register_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return -EINVAL;
	defer_registered[flavor]++;
	return 0;
}

void grace_urcu_defer_unregister_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	if (defer_registered[flavor] == 0)
		grace_urcu__misuse("rcu_defer_unregister_thread",
				   "thread not registered with rcu_defer_register_thread()");
	defer_registered[flavor]--;
}

void grace_urcu_defer_barrier(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	if (in_section(flavor))
		grace_urcu__misuse("rcu_defer_barrier",
				   "called inside rcu_read_lock(): it waits for "
				   "a grace period (deadlock)");
	/* Every deferral queued before is a callback queued before: the barrier covers them. */
	if (grace_urcu__is_qsbr(flavor))
		grace_qsbr_barrier();
	else
		grace_rcu_barrier();
}
