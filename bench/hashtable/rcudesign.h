/* SPDX-License-Identifier: MIT */
/*
 * The RCU designs, from one template (LJ Table 3's transformation of the rwlock code): readers
 * search inside a read-side section with no lock, no atomic read-modify-write and no store to a
 * shared line; an update takes the bucket's spinlock (the updater-side lock of the seeds),
 * unlinks the old element, links a fresh one, drops the lock and retires the old element after
 * a grace period, either by waiting (synchronize) or by a callback (call_rcu).
 *
 * The including file includes its RCU library's header first (so struct rcu_head and
 * rcu_dereference are that library's), then defines:
 *   RD_LOCK(), RD_UNLOCK()        read-side section
 *   RD_RETIRE(el)                 free struct d_el *el after a grace period (may block)
 *   RD_THREAD_START(th), RD_THREAD_STOP(th), RD_BATCH_END(th), RD_SETTLE()
 *   HB_SYM, HB_NAME, HB_LABEL, HB_KIND, HB_UNAVAILABLE
 * and HB_DEREF / HB_PUBLISH as the library's rcu_dereference / rcu_assign_pointer.
 */
#include <pthread.h>
#include "hb.h"

struct d_el {
	struct hb_el e; /* first */
	struct rcu_head rh;
};
#define D_EL_SIZE sizeof(struct d_el)

struct hb_bucket {
	pthread_spinlock_t lock; /* updaters only */
	struct hb_node head;
};

/* Deferred free, run after a grace period (callback designs). */
static __attribute__((unused)) void rd_free_cb(struct rcu_head *h)
{
	hb_el_free(&((struct d_el *)(void *)((char *)h - offsetof(struct d_el, rh)))->e);
}

HB_SPIN_BUCKETS()

static inline void d_thread_start(struct hb_thread *th)
{
	RD_THREAD_START(th);
}
static inline void d_thread_stop(struct hb_thread *th)
{
	RD_THREAD_STOP(th);
}
HB_INLINE void d_batch_end(struct hb_thread *th)
{
	RD_BATCH_END(th);
}
static inline void d_settle(struct hb_run *run)
{
	RD_SETTLE();
}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	struct hb_el *e;

	RD_LOCK();
	e = hb_chain_find(&b[key & mask].head, key);
	if (e) {
		hb_check_found(e, key);
		*sum += e->data;
	}
	RD_UNLOCK();
	return e != NULL; /* a miss is legal: the search may fall between delete and reinsert */
}

HB_INLINE void d_update(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *n = hb_el_new(D_EL_SIZE, key);
	struct hb_el *old;

	pthread_spin_lock(&bk->lock);
	old = hb_chain_find_upd(&bk->head, key);
	if (HB_UNLIKELY(!old))
		hb_fatal("%s: key %lu missing", HB_NAME, key);
	hb_chain_del(&old->node);
	hb_chain_add(&n->node, &bk->head); /* publishes n: store-release (HB_PUBLISH) */
	pthread_spin_unlock(&bk->lock);
	RD_RETIRE((struct d_el *)(void *)old);
}

#define HB_SINGLE 0
#include "loop.h"
