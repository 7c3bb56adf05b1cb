/* SPDX-License-Identifier: MIT */
/*
 * grace-call: grace's default flavor: each operation a read-side section (rcu_read_lock/unlock,
 * inline), a retired node handed to call_rcu() with a callback that frees it, on grace's
 * callback workers. No registration: grace needs none.
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-call"
#define REC_LABEL "grace call_rcu, free() callback"
#define REC_ORDER 50
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

_Static_assert(sizeof(struct rcu_head) <= sizeof(struct smr_rhead), "rcu_head fits smr_rhead");

struct rec_thread {
	int unused_;
};

static void g_free_cb(struct rcu_head *h)
{
	smr_node_free((struct smr_node *)(void *)h); /* the rcu_head is at offset 0 */
}

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
	(void)t;
	call_rcu((struct rcu_head *)(void *)&n->rh, g_free_cb); /* legal inside a section */
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
}
static void rec_init(struct smr_run *run)
{
	(void)run;
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
	rcu_barrier(); /* every callback queued so far has run */
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
