/* SPDX-License-Identifier: MIT */
/*
 * grace-free-ms: grace's default flavor with free_rcu_mightsleep(node): no rcu_head needed.
 * It may wait for a grace period itself (when it has no memory to queue the pointer), so it
 * must not be called inside a read-side section: the nodes an operation retires are kept
 * (t->stash) and handed over after rcu_read_unlock().
 *
 * grace calls free() itself: garbage outstanding is not visible from here, and check mode cannot
 * poison these nodes (see rec_grace_free.c).
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-free-ms"
#define REC_LABEL "grace free_rcu_mightsleep, after the operation"
#define REC_ORDER 65
#define REC_FLAGS SMR_F_GPS

struct rec_thread {
	int unused_;
};

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	(void)t;
	rcu_read_lock();
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	(void)t;
	rcu_read_unlock();
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	smr_stash_push(&t->stash, n);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	for (size_t i = 0; i < t->stash.n; i++)
		free_rcu_mightsleep(t->stash.v[i]);
	t->stash.n = 0;
}
static void rec_init(struct smr_run *run)
{
	(void)run;
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
	free_rcu_barrier();
}
static void rec_thread_init(struct smr_thread *t)
{
	(void)t;
}
static void rec_thread_fini(struct smr_thread *t)
{
	(void)t;
}
static uint64_t rec_gps(void)
{
	struct grace_cb_stats st;

	grace_rcu_callback_stats(&st);
	return st.grace_periods;
}

#include "design.h"
