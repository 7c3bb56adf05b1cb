/* SPDX-License-Identifier: MIT */
/*
 * brlock ("big-reader lock", the 2.4 kernel's): one spinlock per thread, each on its own cache
 * line. A reader takes only its own lock (uncontended: the line stays in its cache); a writer
 * takes every thread's lock, in index order, so it excludes all readers and other writers.
 * Reads scale; each write costs one lock per thread and pulls every reader's line.
 */
#include <pthread.h>
#include "hb.h"

struct hb_bucket {
	struct hb_node head;
};
#define D_EL_SIZE sizeof(struct hb_el)

static struct {
	pthread_spinlock_t l;
} HB_ALIGNED br_locks[HB_MAX_THREADS];
static unsigned int br_n;

static inline void d_table_init(struct hb_bucket *b, unsigned long n, struct hb_run *run)
{
	br_n = run->nthreads;
	for (unsigned int i = 0; i < br_n; i++)
		if (pthread_spin_init(&br_locks[i].l, PTHREAD_PROCESS_PRIVATE))
			hb_fatal("pthread_spin_init failed");
}

static inline void d_table_fini(struct hb_bucket *b, unsigned long n)
{
	for (unsigned int i = 0; i < br_n; i++)
		pthread_spin_destroy(&br_locks[i].l);
}

static inline void d_thread_start(struct hb_thread *th) {}
static inline void d_thread_stop(struct hb_thread *th) {}
static inline void d_batch_end(struct hb_thread *th) {}
static inline void d_settle(struct hb_run *run) {}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	pthread_spinlock_t *mine = &br_locks[th->id].l;
	struct hb_el *e;

	pthread_spin_lock(mine);
	e = hb_chain_find(&b[key & mask].head, key);
	if (e) {
		hb_check_found(e, key);
		*sum += e->data;
	}
	pthread_spin_unlock(mine);
#if HB_CHECK
	if (!e)
		hb_fatal("brlock: key %lu missing under the lock", key);
#endif
	return e != NULL;
}

HB_INLINE void d_update(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *n = hb_el_new(D_EL_SIZE, key);
	struct hb_el *old;
	unsigned int nl = br_n;

	for (unsigned int i = 0; i < nl; i++)
		pthread_spin_lock(&br_locks[i].l);
	old = hb_chain_find_upd(&bk->head, key);
	if (HB_UNLIKELY(!old))
		hb_fatal("brlock: key %lu missing", key);
	hb_chain_del(&old->node);
	hb_chain_add(&n->node, &bk->head);
	for (unsigned int i = nl; i-- > 0;)
		pthread_spin_unlock(&br_locks[i].l);
	hb_el_free(old);
}

#define HB_SYM brlock
#define HB_NAME "brlock"
#define HB_LABEL "brlock (per-thread reader locks)"
#define HB_KIND "lock"
#define HB_SINGLE 0
#define HB_UNAVAILABLE NULL
#include "loop.h"
