/* SPDX-License-Identifier: MIT */
/*
 * grace's default flavor as users get it: <grace/rcu.h>, call_rcu() and rcu_barrier() from
 * libgrace.so, the policy chosen with grace_rcu_set_policy(). No thread registers: call_rcu() is
 * legal from any thread, and a reader registers on its first section.
 */
#include <grace/rcu.h>

#include "cb.h"

_Static_assert(sizeof(struct rcu_head) <= CB_HEAD_BYTES, "grace's rcu_head fits struct cb_obj");
_Static_assert(offsetof(struct cb_obj, head_) == 0, "the rcu_head is at offset 0");

static void g_cb_flag(struct rcu_head *h)
{
	cb_done_flag((struct cb_obj *)(void *)h);
}

static void g_cb_lat(struct rcu_head *h)
{
	cb_done_lat((struct cb_obj *)(void *)h);
}

static void g_cb_lat_wake(struct rcu_head *h)
{
	cb_done_lat_wake((struct cb_obj *)(void *)h);
}

static void g_cb_free(struct rcu_head *h)
{
	cb_done_free((struct cb_obj *)(void *)h);
}

#define G_CALL(o) call_rcu((struct rcu_head *)(void *)(o), g_cb_flag)
#define G_CALL_LAT(o) call_rcu((struct rcu_head *)(void *)(o), g_cb_lat)
#define G_CALL_FREE(o) call_rcu((struct rcu_head *)(void *)(o), g_cb_free)
#define G_HURRY(o) call_rcu_hurry((struct rcu_head *)(void *)(o), g_cb_flag)
#define G_HURRY_LAT(o) call_rcu_hurry((struct rcu_head *)(void *)(o), g_cb_lat)

CB_DEFINE_ENQUEUE(cb_enqueue_grace, G_CALL)
CB_DEFINE_FLOOD(cb_flood_grace, G_CALL)
CB_DEFINE_FLOOD_FREE(cb_flood_free_grace, G_CALL_FREE)
CB_DEFINE_PACED(cb_paced_grace, G_CALL, G_CALL_LAT)
CB_DEFINE_PACED(cb_paced_hurry_grace, G_HURRY, G_HURRY_LAT)

static long g_value = 42;
static long *g_ptr = &g_value;

CB_DEFINE_READER(cb_reader_grace, rcu_read_lock(), rcu_read_unlock(), rcu_dereference, g_ptr)

static void g_call_lat_wake(struct cb_obj *o)
{
	call_rcu((struct rcu_head *)(void *)o, g_cb_lat_wake);
}

static int g_setup(const struct cb_setup *cs)
{
	unsigned int period_us = cs->period_us;

	if (cs->soft && grace_rcu_set_callback_limits(cs->soft, cs->hard)) {
		fprintf(stderr, "callbacks_bench: bad --soft/--hard\n");
		return -1;
	}
	switch (cs->policy) {
	case CB_POLICY_DEFAULT:
		return 0;
	case CB_POLICY_POLL:
		return grace_rcu_set_policy(GRACE_POLICY_POLL, 0) == 0 ? 0 : -1;
	case CB_POLICY_BATCH:
		return grace_rcu_set_policy(GRACE_POLICY_BATCH, period_us) == 0 ? 0 : -1;
	case CB_POLICY_ADAPTIVE:
		return grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0) == 0 ? 0 : -1;
	case CB_POLICY_LAZY:
		return grace_rcu_set_policy(GRACE_POLICY_LAZY, period_us) == 0 ? 0 : -1;
	}
	return -1;
}

static void g_nothing(void) {}

static void g_barrier(void)
{
	rcu_barrier();
}

static void g_stats(struct cb_engine_stats *s)
{
	struct grace_cb_stats st;

	grace_rcu_callback_stats(&st);
	s->have = CB_STATS_GP | CB_STATS_WORKER;
	s->grace_periods = st.grace_periods;
	s->worker_cpu_ns = st.worker_cpu_ns;
	s->waits = st.waits;
}

const struct cb_design cb_design_grace = {
	.name = "grace",
	.enqueue_symbol = "cb_enqueue_grace",
	.label = "grace default flavor: call_rcu from libgrace.so, per-CPU queues and workers",
	.setup = g_setup,
	.teardown = g_nothing,
	.thread_init = g_nothing,
	.thread_fini = g_nothing,
	.enqueue = cb_enqueue_grace,
	.flood = cb_flood_grace,
	.flood_free = cb_flood_free_grace,
	.paced = cb_paced_grace,
	.paced_hurry = cb_paced_hurry_grace,
	.call_lat_wake = g_call_lat_wake,
	.barrier = g_barrier,
	.reader = cb_reader_grace,
	.stats = g_stats,
};
