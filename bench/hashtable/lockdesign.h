/* SPDX-License-Identifier: MIT */
/*
 * The four plain locking designs of LJ Fig. 1 and the slides, from one template: a global or a
 * per-bucket lock, a spinlock (pthread_spinlock_t) or a reader-writer lock (pthread_rwlock_t,
 * writer-preferring so updaters do not starve, like the starvation-avoiding kernel rwlock the
 * paper measured). Readers take the lock shared (rwlock) or exclusive (spinlock) around the
 * search; an update takes it exclusive around delete + reinsert and frees the old element at
 * once, since no reader can hold it.
 *
 * The including file defines LD_GLOBAL (1: one lock for the table, 0: one per bucket),
 * LD_RW (1: rwlock, 0: spinlock), then HB_SYM/HB_NAME/HB_LABEL.
 */
#include <pthread.h>
#include "hb.h"

#if LD_RW
typedef pthread_rwlock_t ld_lock_t;
static void ld_init(ld_lock_t *l)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (pthread_rwlock_init(l, &a))
		hb_fatal("pthread_rwlock_init failed");
	pthread_rwlockattr_destroy(&a);
}
#define ld_destroy(l) pthread_rwlock_destroy(l)
#define ld_read_lock(l) pthread_rwlock_rdlock(l)
#define ld_read_unlock(l) pthread_rwlock_unlock(l)
#define ld_write_lock(l) pthread_rwlock_wrlock(l)
#define ld_write_unlock(l) pthread_rwlock_unlock(l)
#else
typedef pthread_spinlock_t ld_lock_t;
static void ld_init(ld_lock_t *l)
{
	if (pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE))
		hb_fatal("pthread_spin_init failed");
}
#define ld_destroy(l) pthread_spin_destroy(l)
#define ld_read_lock(l) pthread_spin_lock(l)
#define ld_read_unlock(l) pthread_spin_unlock(l)
#define ld_write_lock(l) pthread_spin_lock(l)
#define ld_write_unlock(l) pthread_spin_unlock(l)
#endif

#if LD_GLOBAL
struct hb_bucket {
	struct hb_node head;
};
/* The global lock on a line of its own: the contention is the lock's, not false sharing. */
static struct {
	ld_lock_t l;
} HB_ALIGNED ld_global;
#define LD_LOCK(bk) (&ld_global.l)
#else
/* Dense array: lock and chain head side by side, as a kernel hash bucket. */
struct hb_bucket {
	ld_lock_t lock;
	struct hb_node head;
};
#define LD_LOCK(bk) (&(bk)->lock)
#endif

#define D_EL_SIZE sizeof(struct hb_el)

static inline void d_table_init(struct hb_bucket *b, unsigned long n, struct hb_run *run)
{
#if LD_GLOBAL
	ld_init(&ld_global.l);
#else
	for (unsigned long i = 0; i < n; i++)
		ld_init(&b[i].lock);
#endif
}

static inline void d_table_fini(struct hb_bucket *b, unsigned long n)
{
#if LD_GLOBAL
	ld_destroy(&ld_global.l);
#else
	for (unsigned long i = 0; i < n; i++)
		ld_destroy(&b[i].lock);
#endif
}

static inline void d_thread_start(struct hb_thread *th) {}
static inline void d_thread_stop(struct hb_thread *th) {}
static inline void d_batch_end(struct hb_thread *th) {}
static inline void d_settle(struct hb_run *run) {}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *e;

	ld_read_lock(LD_LOCK(bk));
	e = hb_chain_find(&bk->head, key);
	if (e) {
		hb_check_found(e, key);
		*sum += e->data;
	}
	ld_read_unlock(LD_LOCK(bk));
#if HB_CHECK
	if (!e)
		hb_fatal("%s: key %lu missing under the lock", HB_NAME, key);
#endif
	return e != NULL;
}

HB_INLINE void d_update(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *n = hb_el_new(D_EL_SIZE, key);
	struct hb_el *old;

	ld_write_lock(LD_LOCK(bk));
	old = hb_chain_find_upd(&bk->head, key);
	if (HB_UNLIKELY(!old))
		hb_fatal("%s: key %lu missing", HB_NAME, key);
	hb_chain_del(&old->node);
	hb_chain_add(&n->node, &bk->head);
	ld_write_unlock(LD_LOCK(bk));
	hb_el_free(old);
}

#define HB_KIND "lock"
#define HB_SINGLE 0
#define HB_UNAVAILABLE NULL
#include "loop.h"
