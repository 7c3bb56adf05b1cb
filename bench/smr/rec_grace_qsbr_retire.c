/* SPDX-License-Identifier: MIT */
/*
 * grace-qsbr-retire: grace's QSBR flavor with qsbr_retire(node): the inline, per-thread retire
 * that is legal inside a read-side section, called where the node is unlinked, inside the
 * operation. The library frees through the flavor's free hook (grace_qsbr_set_free_hook()),
 * set to smr_node_free() here: garbage is counted and check mode poisons the nodes, as for
 * the designs that free themselves. The frees run on the retiring thread, a few per later
 * retire.
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-qsbr-retire"
#define REC_LABEL "grace QSBR, qsbr_retire (inline, inside the operation)"
#define REC_ORDER 72
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

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
	(void)t;
	qsbr_retire(n); /* never waits: legal online, inside the operation */
}
static void g_free_hook(void *p)
{
	smr_node_free((struct smr_node *)p);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
	qsbr_quiescent_state();
}
static void rec_init(struct smr_run *run)
{
	(void)run;
	/* One design per process: no object of the default flavor was queued before. */
	if (grace_qsbr_set_free_hook(g_free_hook) != 0) {
		fprintf(stderr, "smr: grace_qsbr_set_free_hook: objects were queued before it\n");
		exit(1);
	}
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
	qsbr_unregister_thread();
}
static uint64_t rec_gps(void)
{
	struct grace_cb_stats st;

	grace_qsbr_callback_stats(&st);
	return st.grace_periods;
}

#include "design.h"
