/* SPDX-License-Identifier: MIT */
/*
 * grace-srcu: a grace srcu domain of the benchmark's own: each operation is a section of the
 * domain (srcu_read_lock/unlock), a retired node goes to call_srcu() with a callback that frees
 * it, on the domain's callback worker.
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-srcu"
#define REC_LABEL "grace srcu domain, call_srcu, free() callback"
#define REC_ORDER 80
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

_Static_assert(sizeof(struct rcu_head) <= sizeof(struct smr_rhead), "rcu_head fits smr_rhead");

DEFINE_STATIC_SRCU(smr_srcu);

struct rec_thread {
	int idx; /* the index srcu_read_lock() returned for the current section */
};

static void s_free_cb(struct rcu_head *h)
{
	smr_node_free((struct smr_node *)(void *)h); /* the rcu_head is at offset 0 */
}

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	rec_of(t)->idx = srcu_read_lock(&smr_srcu);
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	srcu_read_unlock(&smr_srcu, rec_of(t)->idx);
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	(void)t;
	call_srcu(&smr_srcu, (struct rcu_head *)(void *)&n->rh, s_free_cb); /* legal inside */
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
	srcu_barrier(&smr_srcu);
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

	grace_srcu_callback_stats(&smr_srcu, &st);
	return st.grace_periods;
}

#include "design.h"
