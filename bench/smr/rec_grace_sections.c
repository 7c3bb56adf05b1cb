/* SPDX-License-Identifier: MIT */
/*
 * grace-sections: the default flavor's read-side sections around every operation, and never a
 * free (retired nodes are leaked, as by none). It takes the reclaimer apart: none to
 * grace-sections is what the sections cost (rcu_read_lock() and rcu_read_unlock(): the
 * thread-local word stored twice, the waiter word tested twice), grace-sections to
 * grace-retire what retiring and freeing cost; the epoch schemes pay only the second kind.
 * No grace period is ever asked for.
 */
#include <grace/grace.h>

#include "smr.h"

#define REC_NAME "grace-sections"
#define REC_LABEL "grace default-flavor sections, never free (the read side alone)"
#define REC_ORDER 12
#define REC_FLAGS (SMR_F_FREES | SMR_F_NEVER_FREES)

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
	(void)n; /* leaked, as by none */
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
	return 0;
}

#include "design.h"
