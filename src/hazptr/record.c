/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers: the records. Allocation from a per-thread cache and a pool, blocks of
 * BLK_RECS records one per cache line, and the out-of-line publish of debug builds and TSan
 * mode. Where a record's value is read, by the scan, and why protect is safe: hazptr.c's top
 * comment (Claim 1); the inline fast paths: include/grace/hazptr.h.
 */
#include "hazptr/record.h"

#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>
#include <grace/hazptr.h>

#include "core/diag.h"
#include "core/lock.h"
#include "core/wait.h" /* grace__use_membarrier */

struct hp_block *grace__hp_blocks;
uint64_t grace__hp_nrecords;
struct grace__lock grace__hp_rec_lock = GRACE__LOCK_INIT;
static struct grace_hazptr *pool; /* free records, under grace__hp_rec_lock */

GRACE_API __thread struct grace__hazptr_tls grace__hazptr_tls GRACE_TLS_IE;

/* A new block's records go to the pool. grace__hp_rec_lock held. */
static bool block_new(void)
{
	struct hp_block *b = NULL;
	uint32_t fence = !grace__use_membarrier; /* fixed before any reader sees the record */

	if (posix_memalign((void **)&b, GRACE_CACHE_LINE, sizeof(*b)) != 0)
		return false;
	memset(b, 0, sizeof(*b));
	for (int i = BLK_RECS - 1; i >= 0; i--) {
		b->rec[i].r.fence = fence;
		b->rec[i].r.grace__next = pool;
		pool = &b->rec[i].r;
	}
	b->next = grace__hp_blocks;
	/* Release: the records' initialisation before a scanner that loads the head (acquire)
	 * reads them. */
	grace_store_release(&grace__hp_blocks, b);
	grace_store_relaxed(&grace__hp_nrecords, grace__hp_nrecords + BLK_RECS);
	return true;
}

static struct grace_hazptr *pool_take(void)
{
	struct grace_hazptr *h;

	grace__lock(&grace__hp_rec_lock);
	if (!pool && !block_new()) {
		grace__unlock(&grace__hp_rec_lock);
		return NULL;
	}
	h = pool;
	pool = h->grace__next;
	h->grace__next = NULL;
	grace__unlock(&grace__hp_rec_lock);
	return h;
}

void grace__hp_pool_put_locked(struct grace_hazptr *h)
{
	grace__lock_assert_held(&grace__hp_rec_lock);
	h->grace__state = 0;
	h->grace__owner = NULL;
	h->grace__next = pool;
	pool = h;
}

void grace__hp_pool_put(struct grace_hazptr *h)
{
	grace__lock(&grace__hp_rec_lock);
	grace__hp_pool_put_locked(h);
	grace__unlock(&grace__hp_rec_lock);
}

GRACE_API struct grace_hazptr *grace__hazptr_alloc_slow(void)
{
	struct grace__hazptr_tls *t = &grace__hazptr_tls;
	struct grace_hazptr *h;

	grace__hp_once();
	if (t->n != 0) { /* debug builds of the program come here every time */
		h = t->rec[--t->n];
	} else {
		(void)grace__hp_thread_register(); /* the cache needs the exit hook that empties it */
		h = pool_take();
		if (!h)
			return NULL;
	}
	h->grace__owner = NULL;
	h->grace__state = GRACE__HAZPTR_HELD;
	return h;
}

GRACE_API void grace__hazptr_free_slow(struct grace_hazptr *h)
{
	struct grace__hazptr_tls *t = &grace__hazptr_tls;

	if (!h)
		return;
#if GRACE__LIB_DEBUG
	if (grace_load_relaxed(&h->grace__state) != GRACE__HAZPTR_HELD)
		grace__misuse_fatal(
			"hazptr_free",
			"hazard pointer %p is not held (freed twice, or never allocated)",
			(void *)h);
#endif
	/* Release: the protection's accesses precede a scan that reads NULL (R). */
	grace_store_release(&h->ptr, (void *)0);
	h->grace__owner = NULL;
	if (t->cap == 0)
		(void)grace__hp_thread_register();
	if (t->n < t->cap) {
		h->grace__state = GRACE__HAZPTR_CACHED;
		t->rec[t->n++] = h;
		return;
	}
	grace__hp_pool_put(h);
}

GRACE_API void grace__hazptr_fence(void)
{
	grace_smp_mb(); /* fallback: pairs with the scan's full fence (barrier M) */
}

/* Publish out of line: debug builds (checks, and the owner of the protection) and TSan mode. */
GRACE_API void grace__hazptr_publish_slow(struct grace_hazptr *h, void *p, const char *call)
{
#if GRACE__LIB_DEBUG
	if (!h)
		grace__misuse_fatal(call, "NULL hazard pointer (hazptr_alloc() failed?)");
	if (grace_load_relaxed(&h->grace__state) != GRACE__HAZPTR_HELD)
		grace__misuse_fatal(call,
				    "hazard pointer %p is not held (used after hazptr_free()?)",
				    (void *)h);
	/* Relaxed: only the owner writes it; the exit check and barriers read it as a hint
	 * about who holds the protection. */
	grace_store_relaxed(&h->grace__owner, p ? grace__hp_self() : NULL);
#else
	(void)call;
#endif
#if GRACE__TSAN_MODE
	/* TSan sees neither membarrier nor fences: a seq_cst exchange (a full barrier on x86)
	 * and the seq_cst reload of grace__hazptr_load() stand in for barrier P. */
	(void)__atomic_exchange_n(&h->ptr, p, __ATOMIC_SEQ_CST);
#else
	/* Release (R), then barrier P: as the inline publish (include/grace/hazptr.h). */
	grace_store_release(&h->ptr, p);
	if (h->fence)
		grace_smp_mb(); /* fallback: pairs with the scan's fence (M) */
	else
		grace_barrier(); /* pairs with the scan's membarrier (M) */
#endif
}
