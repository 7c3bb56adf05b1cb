/* SPDX-License-Identifier: MIT */
/*
 * grace-qsbr: grace's QSBR flavor: no read-side code at all (qsbr_read_lock/unlock compile to
 * nothing in a release build); each thread registers and reports a quiescent state after every
 * operation; retired nodes go to free_qsbr(node, rh) (free_rcu's amortized, caller-side free,
 * for QSBR). free_qsbr() may wait for a grace period when a thread holds too many, and in QSBR
 * the library cannot tell that the caller is inside an operation (the read side is empty), so
 * the nodes an operation retires are kept (t->stash) and handed over after it, before the
 * quiescent state.
 *
 * grace calls free() itself: garbage outstanding is not visible from here, and check mode cannot
 * poison these nodes (see rec_grace_free.c).
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-qsbr"
#define REC_LABEL "grace QSBR, free_qsbr after the operation"
#define REC_ORDER 70
#define REC_FLAGS SMR_F_GPS

_Static_assert(sizeof(struct rcu_head) <= sizeof(struct smr_rhead), "rcu_head fits smr_rhead");

struct rec_thread {
	int unused_;
};

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	(void)t;
	qsbr_read_lock();
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	(void)t;
	qsbr_read_unlock();
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	smr_stash_push(&t->stash, n);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	for (size_t i = 0; i < t->stash.n; i++)
		grace_qsbr_free(t->stash.v[i], (struct rcu_head *)(void *)&t->stash.v[i]->rh);
	t->stash.n = 0;
	qsbr_quiescent_state();
}
static void rec_init(struct smr_run *run)
{
	(void)run;
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
	free_qsbr_barrier(); /* from an unregistered thread */
}
static void rec_thread_init(struct smr_thread *t)
{
	(void)t;
	qsbr_register_thread();
}
static void rec_thread_fini(struct smr_thread *t)
{
	(void)t;
	qsbr_unregister_thread(); /* offline: no longer delays grace periods */
}
static uint64_t rec_gps(void)
{
	struct grace_cb_stats st;

	grace_qsbr_callback_stats(&st);
	return st.grace_periods;
}

#include "design.h"
