/* SPDX-License-Identifier: MIT */
/*
 * urcu-defer: liburcu (Debian's liburcu-dev), memb flavor, read side inlined (_LGPL_SOURCE),
 * with defer_rcu(free, node): liburcu's deferred free with no rcu_head, a per-thread queue that
 * a defer thread flushes (one synchronize_rcu per batch). defer_rcu() may wait for a grace
 * period itself (when its queue is full), so it must not be called inside a read-side section:
 * the nodes an operation retires are kept (t->stash) and handed over after the operation.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "smr.h"

#define REC_NAME "urcu-defer"
#define REC_LABEL "liburcu memb defer_rcu(free, node), after the operation"
#define REC_ORDER 45
#define REC_FLAGS SMR_F_FREES

struct rec_thread {
	int unused_;
};

static void u_free(void *p)
{
	smr_node_free((struct smr_node *)p);
}

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	(void)t;
	urcu_memb_read_lock();
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	(void)t;
	urcu_memb_read_unlock();
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	smr_stash_push(&t->stash, n);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	for (size_t i = 0; i < t->stash.n; i++)
		urcu_memb_defer_rcu(u_free, t->stash.v[i]);
	t->stash.n = 0;
}
static void rec_init(struct smr_run *run)
{
	(void)run;
}
static void rec_fini(struct smr_run *run)
{
	(void)run; /* each thread's queue was flushed when it unregistered */
}
static void rec_thread_init(struct smr_thread *t)
{
	(void)t;
	urcu_memb_register_thread();
	if (urcu_memb_defer_register_thread() != 0)
		smr_fail("rcu_defer_register_thread failed");
}
static void rec_thread_fini(struct smr_thread *t)
{
	(void)t;
	urcu_memb_defer_unregister_thread(); /* flushes this thread's queue */
	urcu_memb_unregister_thread();
}
static uint64_t rec_gps(void)
{
	return 0;
}

#include "design.h"
