/* SPDX-License-Identifier: MIT */
/*
 * Regression of issue 12, fault 10: the ID registry's growth called the flavor's call() with
 * the registry lock held. At the hard limit call_rcu() waits for callbacks to run; a callback
 * that needs the registry lock (one that removes an ID) then stalls growth for the whole wait.
 * The rule hash.c follows for its own locks applies: no flavor call with the lock held. The
 * test wraps the flavor's call() and checks, on every call, that the registry lock is free.
 */
#include <grace/grace.h>

#include "gtest_lite.h"

static struct grace_idr idr10;
static unsigned long calls_locked, calls_total;

static void idr_checking_call(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	/* The test is single-threaded: a busy lock is held by this thread, inside the idr. */
	if (pthread_mutex_trylock(&idr10.lock) == 0)
		pthread_mutex_unlock(&idr10.lock);
	else
		calls_locked++;
	calls_total++;
	grace_flavor_rcu.call(ctx, head, func);
}

TEST(idr_growth_calls_flavor_unlocked)
{
	struct grace_flavor_ops ops = grace_flavor_rcu;
	struct grace_idr_params p = { 4096, 1, 0, &ops };
	static int objs[4096];

	ops.call = idr_checking_call;
	CHECK(grace_idr_init(&idr10, &p) == 0);
	for (int i = 0; i < 4096; i++)
		CHECK(grace_idr_alloc(&idr10, &objs[i]) >= 0);
	printf("  %lu calls of ops->call during growth, %lu with the registry lock held\n",
	       calls_total, calls_locked);
	CHECK(calls_total >= 12); /* 1 -> 4096 slots: 12 doublings, each retires an array */
	CHECK(calls_locked == 0);
	for (int i = 0; i < 4096; i++)
		grace_idr_remove(&idr10, i);
	grace_idr_destroy(&idr10);
}

GT_MAIN()
