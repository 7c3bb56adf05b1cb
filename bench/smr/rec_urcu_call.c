/* SPDX-License-Identifier: MIT */
/*
 * urcu-call: liburcu (Debian's liburcu-dev), memb flavor, read side inlined (_LGPL_SOURCE):
 * each operation is a read-side section; a retired node goes to call_rcu() with a callback that
 * frees it, on liburcu's call_rcu thread (one per process, as liburcu comes). Every thread
 * registers. liburcu exposes no count of its grace periods: that column stays empty.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "smr.h"

#define REC_NAME "urcu-call"
#define REC_LABEL "liburcu memb call_rcu, free() callback"
#define REC_ORDER 40
#define REC_FLAGS SMR_F_FREES

_Static_assert(sizeof(struct rcu_head) <= sizeof(struct smr_rhead), "rcu_head fits smr_rhead");

struct rec_thread {
	int unused_;
};

static void u_free_cb(struct rcu_head *h)
{
	smr_node_free((struct smr_node *)(void *)h); /* the rcu_head is at offset 0 */
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
	(void)t;
	urcu_memb_call_rcu((struct rcu_head *)(void *)&n->rh, u_free_cb);
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
	urcu_memb_register_thread();
	urcu_memb_barrier(); /* every callback queued so far has run */
	urcu_memb_unregister_thread();
}
static void rec_thread_init(struct smr_thread *t)
{
	(void)t;
	urcu_memb_register_thread();
}
static void rec_thread_fini(struct smr_thread *t)
{
	(void)t;
	urcu_memb_unregister_thread();
}
static uint64_t rec_gps(void)
{
	return 0;
}

#include "design.h"
