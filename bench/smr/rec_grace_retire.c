/* SPDX-License-Identifier: MIT */
/*
 * grace-retire: grace's default flavor with rcu_retire(node): the inline, per-thread retire
 * that is legal inside a read-side section, called where the node is unlinked, inside the
 * operation. The library frees through the flavor's free hook (grace_rcu_set_free_hook()),
 * set to smr_node_free() here: garbage is counted and check mode poisons the nodes, as for
 * the designs that free themselves. The frees run on the retiring thread, a few per later
 * retire.
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-retire"
#define REC_LABEL "grace rcu_retire (inline, inside the section)"
#define REC_ORDER 55
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

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
	rcu_retire(n);
}
static void g_free_hook(void *p)
{
	smr_node_free((struct smr_node *)p);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
}
static void rec_init(struct smr_run *run)
{
	(void)run;
	/* One design per process: no object of the default flavor was queued before. */
	if (grace_rcu_set_free_hook(g_free_hook) != 0) {
		fprintf(stderr, "smr: grace_rcu_set_free_hook: objects were queued before it\n");
		exit(1);
	}
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
	free_rcu_barrier(); /* every node retired so far is freed */
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
