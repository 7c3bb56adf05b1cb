/* SPDX-License-Identifier: MIT */
/*
 * ebr: epoch-based reclamation in the style of DEBRA (Brown, PODC 2015), written from the paper.
 *
 *  - A global epoch E. Each thread announces, in a cache line of its own, the epoch it saw when
 *    its current operation began, with a quiescent bit that is set between operations.
 *  - No background thread: every EBR_K operations a thread scans the announcements, and when
 *    every thread is quiescent or has announced the current epoch e, it advances E from e to
 *    e + 1 with a CAS. (DEBRA reads one announcement per operation; scanning them all every
 *    EBR_K operations amortizes the same way for the thread counts measured here.)
 *  - Retired nodes go into the thread's current limbo bag. Each thread has three bags, current,
 *    previous and oldest; when it begins an operation and sees an epoch it had not seen, it
 *    frees the oldest bag whole (in bulk, on its own thread), and the bags rotate. A node
 *    retired while the thread was in epoch e is freed when the thread sees some epoch >= e + 3,
 *    that is once epochs e + 1 and e + 2 have passed whole. Why not e + 2: when the node was
 *    unlinked, E may already have been e + 1, and a reader that began in e + 1 and holds the
 *    node does not stop E from reaching e + 2; it does stop E from reaching e + 3.
 *  - The bags are intrusive lists through the node's reclaimer word (smr_rhead), which readers
 *    never touch.
 *
 * Memory ordering (each pairing also named where it is used):
 *  (A) begin: the announcement store (release), then a seq_cst fence, then the operation's
 *      loads. Store-buffering pattern with (B): either the scan sees the announcement, or this
 *      operation sees every unlink that happened before the scan.
 *  (B) scan: a seq_cst fence, then acquire loads of the announcements. The acquire pairs with
 *      the release of the announcement and of the quiescent store (C): what a thread did in
 *      operations the scan saw finished happens before the advance.
 *  (C) end: the quiescent store is a release: the operation's loads are done before a scanner
 *      can see the thread quiescent.
 *  (D) the advance is a CAS, acq_rel; the loads of E are acquire: a thread that sees epoch
 *      e + 3 (and frees) sees everything the scans that advanced E had seen.
 */
#include "smr.h"

#define REC_NAME "ebr"
#define REC_LABEL "EBR, DEBRA style (3 limbo bags, bulk free)"
#define REC_ORDER 20
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

/* Operations between two scans of the announcements. */
#define EBR_K 32

struct ebr_slot {
	uint64_t ann; /* epoch << 1 | quiescent */
} SMR_ALIGNED;

static struct {
	uint64_t epoch;
	char pad_[SMR_LINE - sizeof(uint64_t)]; /* E keeps its line to itself */
} ebr_global SMR_ALIGNED;
static struct ebr_slot *ebr_slots;
static unsigned int ebr_nslots;

struct ebr_bag {
	struct smr_node *head;
	uint64_t n;
};

struct rec_thread {
	struct ebr_slot *slot;
	uint64_t epoch;   /* the last epoch this thread saw */
	unsigned int ops; /* operations since the last scan */
	unsigned int cur; /* index of the current bag; (cur + 1) % 3 is the oldest */
	struct ebr_bag bag[3];
};

SMR_INLINE struct smr_node **ebr_link(struct smr_node *n)
{
	return (struct smr_node **)(void *)&n->rh.w[0];
}

static void ebr_free_bag(struct ebr_bag *b)
{
	struct smr_node *n = b->head, *next;

	for (; n; n = next) {
		next = *ebr_link(n);
		smr_node_free(n);
	}
	b->head = NULL;
	b->n = 0;
}

/* A new epoch for this thread: free the oldest bag, which becomes the current one. */
static __attribute__((noinline)) void ebr_new_epoch(struct rec_thread *r, uint64_t e)
{
	r->cur = (r->cur + 1) % 3;
	ebr_free_bag(&r->bag[r->cur]);
	r->epoch = e;
}

static __attribute__((noinline)) void ebr_try_advance(uint64_t e)
{
#if !SMR_TSAN
	/* (B): pairs with the fence after the announcement in rec_begin(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	for (unsigned int i = 0; i < ebr_nslots; i++) {
		/* (B): acquire, pairs with the release stores of (A) and (C). Under TSan, seq_cst
		 * in place of the fence. */
		uint64_t a = __atomic_load_n(&ebr_slots[i].ann,
					     SMR_TSAN ? __ATOMIC_SEQ_CST : __ATOMIC_ACQUIRE);

		if (!(a & 1) && (a >> 1) != e)
			return;
	}
	/* (D): acq_rel; another thread may have advanced it already (then nothing happens). */
	__atomic_compare_exchange_n(&ebr_global.epoch, &e, e + 1, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);
	/* (D): acquire, pairs with the advancing CAS. */
	uint64_t e = __atomic_load_n(&ebr_global.epoch, __ATOMIC_ACQUIRE);

	if (SMR_UNLIKELY(e != r->epoch))
		ebr_new_epoch(r, e);
#if !SMR_TSAN
	/* (A): announce e, not quiescent; release, pairs with the scan's acquire (B). */
	__atomic_store_n(&r->slot->ann, e << 1, __ATOMIC_RELEASE);
	/* (A): the announcement is visible before any load of the operation; pairs with the
	 * scan's fence (B). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#else
	/* (A) under TSan, which does not model fences: a seq_cst exchange. */
	__atomic_exchange_n(&r->slot->ann, e << 1, __ATOMIC_SEQ_CST);
#endif
	if (SMR_UNLIKELY(++r->ops >= EBR_K)) {
		r->ops = 0;
		ebr_try_advance(e);
	}
}

SMR_INLINE void rec_end(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);

	/* (C): quiescent; release, pairs with the scan's acquire (B). */
	__atomic_store_n(&r->slot->ann, (r->epoch << 1) | 1, __ATOMIC_RELEASE);
}

SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	struct rec_thread *r = rec_of(t);
	struct ebr_bag *b = &r->bag[r->cur];

	*ebr_link(n) = b->head; /* the reclaimer's word: no reader reads it */
	b->head = n;
	b->n++;
}

SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
}

static void rec_init(struct smr_run *run)
{
	void *p = NULL;

	ebr_nslots = run->nthreads + 1; /* the workers and the prefill thread */
	free(ebr_slots);
	if (posix_memalign(&p, SMR_LINE, ebr_nslots * sizeof(*ebr_slots)))
		smr_fail("out of memory");
	ebr_slots = (struct ebr_slot *)p;
	for (unsigned int i = 0; i < ebr_nslots; i++)
		ebr_slots[i].ann = 1; /* quiescent */
	/* Relaxed: no thread of the run exists yet; pthread_create orders it. */
	__atomic_store_n(&ebr_global.epoch, 0, __ATOMIC_RELAXED);
}

static void rec_fini(struct smr_run *run)
{
	/* Every thread has finished: nothing is reachable by a reader any more. */
	for (unsigned int i = 0; i <= run->nthreads; i++) {
		struct rec_thread *r = rec_of(&run->threads[i]);

		for (int b = 0; b < 3; b++)
			ebr_free_bag(&r->bag[b]);
	}
}

static void rec_thread_init(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);

	memset(r, 0, sizeof(*r));
	r->slot = &ebr_slots[t->id];
	r->epoch = __atomic_load_n(&ebr_global.epoch, __ATOMIC_ACQUIRE); /* (D) */
	r->ops = t->id * (EBR_K / 4) % EBR_K; /* stagger the threads' scans */
}

static void rec_thread_fini(struct smr_thread *t)
{
	/* Quiescent for good (it already is after rec_end); the bags wait for rec_fini. */
	__atomic_store_n(&rec_of(t)->slot->ann, 1, __ATOMIC_RELEASE); /* (C) */
}

static uint64_t rec_gps(void)
{
	/* Epoch advances so far (the epoch starts at 0). Relaxed: a count. */
	return __atomic_load_n(&ebr_global.epoch, __ATOMIC_RELAXED);
}

#include "design.h"
