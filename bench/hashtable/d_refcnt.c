/* SPDX-License-Identifier: MIT */
/*
 * refcnt: per-bucket spinlock plus a reference count in each element (LJ Fig. 1). A reader
 * takes the bucket lock only to find the element and take a reference, then uses the element
 * outside the lock and drops the reference; whoever drops the last reference frees it. An
 * update unlinks under the lock and drops the table's reference.
 */
#include <pthread.h>
#include "hb.h"

struct hb_bucket {
	pthread_spinlock_t lock;
	struct hb_node head;
};
#define D_EL_SIZE sizeof(struct hb_el)

HB_SPIN_BUCKETS()

static inline void d_thread_start(struct hb_thread *th) {}
static inline void d_thread_stop(struct hb_thread *th) {}
static inline void d_batch_end(struct hb_thread *th) {}
static inline void d_settle(struct hb_run *run) {}

/* Drop a reference. Release: this thread's reads of the element happen before the count
 * drops; the acquire on the last drop makes every other holder's reads happen before the
 * free (the usual kref pairing). */
HB_INLINE void refcnt_put(struct hb_el *e)
{
	if (__atomic_sub_fetch(&e->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
		hb_el_free(e);
}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *e;

	pthread_spin_lock(&bk->lock);
	e = hb_chain_find(&bk->head, key);
	/* Relaxed: the bucket lock orders the increment before any unlink of e. */
	if (e)
		__atomic_add_fetch(&e->refcnt, 1, __ATOMIC_RELAXED);
	pthread_spin_unlock(&bk->lock);
	if (!e) {
#if HB_CHECK
		hb_fatal("refcnt: key %lu missing under the lock", key);
#endif
		return false;
	}
	hb_check_el(e);
	hb_check_found(e, key);
	*sum += e->data;
	refcnt_put(e);
	return true;
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
		hb_fatal("refcnt: key %lu missing", key);
	hb_chain_del(&old->node);
	hb_chain_add(&n->node, &bk->head);
	pthread_spin_unlock(&bk->lock);
	refcnt_put(old); /* the table's reference */
}

#define HB_SYM refcnt
#define HB_NAME "refcnt"
#define HB_LABEL "refcnt (per-bucket spinlock + refcount)"
#define HB_KIND "lock"
#define HB_SINGLE 0
#define HB_UNAVAILABLE NULL
#include "loop.h"
