/* SPDX-License-Identifier: MIT */
/*
 * grace-free: grace's default flavor with free_rcu(node, rh): no callback; the retiring thread
 * keeps the pointer in a per-thread block and frees ready ones itself, a few per later call, as
 * it allocates (the amortized free of "Are Your Epochs Too Epic?", inside the library). Legal
 * inside a read-side section, so it is called where the node is unlinked.
 *
 * grace calls free() itself: the garbage outstanding is not visible from here (no counter), and
 * check mode cannot poison these nodes (it still checks the structure, the readers' view of the
 * nodes, and the per-key replay).
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-free"
#define REC_LABEL "grace free_rcu (caller frees, amortized)"
#define REC_ORDER 60
#define REC_FLAGS SMR_F_GPS

_Static_assert(sizeof(struct rcu_head) <= sizeof(struct smr_rhead), "rcu_head fits smr_rhead");

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
	(void)t;
	grace_rcu_free(n, (struct rcu_head *)(void *)&n->rh); /* free_rcu(n, rh) */
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
