/* SPDX-License-Identifier: MIT */
/*
 * grace hazard pointers (<grace/hazptr.h>): no read-side section. A lookup protects each
 * element before it reads it, hand over hand in two hazard pointers per thread (held for the
 * whole run): publish the element, then check that the link it was loaded from still holds it
 * and is not marked; restart from the bucket's head when it does not. An update, under the
 * bucket's spinlock, marks the old element's next link (bit 0), unlinks it, links a fresh
 * element, drops the lock and retires the old one with hazptr_retire_fn(): freed by the
 * retiring thread, a few per later retire, once a scan (one membarrier per
 * GRACE_HAZPTR_BATCH retires) finds no hazard pointer on it.
 *
 * Why the mark: an unlinked element keeps its next link (readers standing on it go on), so "the
 * link still holds the element" alone would hold for a link inside an element that is already
 * unlinked, whose successor may be unlinked and retired after it. The mark, stored under the
 * bucket's lock before the unlink, makes such a link fail the validation: if the scan that
 * frees the successor missed this reader's hazard pointer, the reader's reload (after its
 * publication, ordered by the asymmetric fence) sees every store made before that scan, the
 * mark or the successor's unlink among them, and restarts.
 *
 * With one element per bucket (the benchmark's loading), a lookup protects one element:
 * a store, a compiler barrier and a reload of the bucket's head.
 */
#include <grace/hazptr.h>

#include <pthread.h>
#include "hb.h"

#define HP_MARK ((uintptr_t)1)

struct d_el {
	struct hb_el e; /* first */
};
#define D_EL_SIZE sizeof(struct d_el)

struct hb_bucket {
	pthread_spinlock_t lock; /* updaters only */
	struct hb_node head;
};

/* The calling thread's two hazard pointers, allocated at thread start. */
static __thread struct grace_hazptr *hp_slot[2];

static void hp_free(void *p)
{
	hb_el_free((struct hb_el *)p);
}

HB_SPIN_BUCKETS()

static inline void d_thread_start(struct hb_thread *th)
{
	(void)th;
	for (int i = 0; i < 2; i++)
		if (!(hp_slot[i] = grace_hazptr_alloc()))
			hb_fatal("hazptr_alloc: out of memory");
}
static inline void d_thread_stop(struct hb_thread *th)
{
	(void)th;
	for (int i = 0; i < 2; i++) {
		grace_hazptr_free(hp_slot[i]);
		hp_slot[i] = NULL;
	}
}
HB_INLINE void d_batch_end(struct hb_thread *th)
{
	(void)th;
}
static inline void d_settle(struct hb_run *run)
{
	(void)run;
	grace_hazptr_barrier(NULL); /* every element retired in the run is freed */
}

/* A link as a word: the element's address, | HP_MARK once the element holding the link is
 * unlinked. */
HB_INLINE uintptr_t hp_link(struct hb_node **p)
{
	/* Relaxed: as rcu_dereference(); the element's fields are read through the value
	 * (address dependency), and the publishing store of hb_chain_add() is a release. */
	return (uintptr_t)__atomic_load_n(p, __ATOMIC_RELAXED);
}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	struct hb_node *head = &b[key & mask].head;
	struct hb_el *found = NULL;

	(void)th;
retry:;
	struct hb_node **src = &head->next;
	unsigned int slot = 0;
	uintptr_t v = hp_link(src);

	for (;;) {
		struct hb_node *p = (struct hb_node *)(v & ~HP_MARK);

		if (p == head)
			break;
		/*
		 * Protect p: publish it (release store, then the compiler barrier of the asymmetric
		 * fence, paired with the scanner's membarrier), then reload the link: it must still
		 * hold p, unmarked (top of the file). The node holding src stays protected in the
		 * other slot.
		 */
		grace_hazptr_set(hp_slot[slot], p);
		if (hp_link(src) != (uintptr_t)p) {
			/* Rare: let go of both, so that the retry leaves no stale protection. */
			grace_hazptr_reset(hp_slot[0]);
			grace_hazptr_reset(hp_slot[1]);
			goto retry;
		}
		struct hb_el *e = hb_el_of(p);
		hb_check_el(e);
		if (e->key == key) {
			found = e;
			break;
		}
		src = &p->next;
		v = hp_link(src);
		slot ^= 1u;
	}
	if (found) {
		hb_check_found(found, key);
		*sum += found->data;
	}
	/* Release stores of NULL: this lookup's reads of the elements happen before a scan that
	 * sees the slots empty. The other slot was used only if the walk left the bucket's head
	 * (the common case, one element per bucket, uses one). */
	grace_hazptr_reset(hp_slot[slot]);
	if (src != &head->next)
		grace_hazptr_reset(hp_slot[slot ^ 1u]);
	return found != NULL; /* a miss is legal: between the delete and the reinsert */
}

HB_INLINE void d_update(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *n = hb_el_new(D_EL_SIZE, key);
	struct hb_el *old;

	(void)th;
	pthread_spin_lock(&bk->lock);
	old = hb_chain_find_upd(&bk->head, key);
	if (HB_UNLIKELY(!old))
		hb_fatal("%s: key %lu missing", "hazptr", key);
	struct hb_node *next = HB_LOAD_UPD(old->node.next);
	struct hb_node *prev = old->node.prev;
	/* The mark: relaxed, under the lock; a reader standing on old fails its validation
	 * from now on. The retire below follows it in program order, and the scan that frees
	 * a later-unlinked successor follows that retire (top of the file). */
	HB_STORE_UPD(old->node.next, (struct hb_node *)((uintptr_t)next | HP_MARK));
	HB_STORE_UPD(prev->next, next);
	next->prev = prev;
	hb_chain_add(&n->node, &bk->head); /* publishes n: store-release */
	pthread_spin_unlock(&bk->lock);
	grace_hazptr_retire_fn(NULL, hp_free, old);
}

#define HB_SYM hazptr
#define HB_NAME "grace-hazptr"
#define HB_LABEL "grace hazard pointers (hazptr_retire)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#define HB_SINGLE 0
#include "loop.h"
