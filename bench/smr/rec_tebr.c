/* SPDX-License-Identifier: MIT */
/*
 * token-ebr: epoch-based reclamation with a token and amortized freeing, after "Are Your Epochs
 * Too Epic? Batch Free Can Be Harmful" (Kim, Brown, Singh, PPoPP 2024), written from the paper's
 * description.
 *
 *  - A token (the id of the thread that holds it) goes round the worker threads in order. A
 *    thread looks at it every TEBR_K operations, at an operation boundary; when it holds it, it
 *    passes it on at once, to the next thread. No announcements, no fence on the read side.
 *  - Why that is a grace period: between two receipts of the token by thread i (r1, then r2),
 *    every other thread received and passed it once, each at an operation boundary after r1.
 *    An operation that could hold a node i unlinked before r1 began before that thread received
 *    the token (an operation beginning after the receipt sees the unlink, through the chain of
 *    release/acquire hand-offs), so it ended by the time the thread passed it on. Hence at r2
 *    every node i retired before r1 is safe.
 *  - Bags: current (retired since the last receipt) and previous (retired between the two
 *    receipts before). At a receipt, previous joins the ready list, current becomes previous.
 *  - Amortized free: the ready list is not freed in one batch; each operation frees at most
 *    TEBR_FREE_PER_OP of it, after it ends, so frees follow the thread's allocations one for
 *    one (the paper's point: bulk frees overflow the allocator's thread cache and pay for it).
 *  - A grace period, for the report: one full round of the token (counted by thread 0).
 *
 * Memory ordering:
 *  (A) the load of the token is acquire: pairs with the release store (B) of the thread that
 *      passed it, so everything every earlier holder did before passing it (its unlinks, the
 *      end of its operations) happens before what this thread does next.
 *  (B) passing the token is a release store: this thread's operations so far, and its unlinks,
 *      happen before the next holder's receipt.
 */
#include "smr.h"

#define REC_NAME "token-ebr"
#define REC_LABEL "token EBR, amortized free (Too Epic, PPoPP 2024)"
#define REC_ORDER 30
#define REC_FLAGS (SMR_F_FREES | SMR_F_GPS)

/* Operations between two looks at the token (the same amortization as ebr's EBR_K). */
#define TEBR_K 32
/* Ready nodes freed after each operation, at most. Above the retire rate of every workload
 * measured (a BST delete retires two nodes; at 50% updates, a quarter of the operations are
 * deletes), so the ready list drains. */
#define TEBR_FREE_PER_OP 4

static struct {
	unsigned int holder; /* the worker that holds the token */
	char pad_[SMR_LINE - sizeof(unsigned int)];
} tebr_tok SMR_ALIGNED;
static struct {
	uint64_t rounds; /* written by worker 0 only */
	char pad_[SMR_LINE - sizeof(uint64_t)];
} tebr_stat SMR_ALIGNED;
static unsigned int tebr_n; /* workers in the ring */

struct tebr_list {
	struct smr_node *head, *tail;
	uint64_t n;
};

struct rec_thread {
	unsigned int ops, me;
	bool in_ring;
	struct tebr_list cur, prev, ready;
};

SMR_INLINE struct smr_node **tebr_link(struct smr_node *n)
{
	return (struct smr_node **)(void *)&n->rh.w[0];
}

/* dst += src (src emptied). */
static void tebr_splice(struct tebr_list *dst, struct tebr_list *src)
{
	if (!src->head)
		return;
	if (dst->head)
		*tebr_link(dst->tail) = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	dst->n += src->n;
	src->head = src->tail = NULL;
	src->n = 0;
}

static __attribute__((noinline)) void tebr_receive(struct rec_thread *r)
{
	tebr_splice(&r->ready, &r->prev); /* retired before the last receipt: safe now */
	r->prev = r->cur;
	r->cur.head = r->cur.tail = NULL;
	r->cur.n = 0;
	if (r->me == 0) /* single writer; relaxed: a count the driver reads */
		__atomic_store_n(&tebr_stat.rounds, tebr_stat.rounds + 1, __ATOMIC_RELAXED);
	/* (B): pass it on; release, pairs with the next holder's acquire (A). */
	__atomic_store_n(&tebr_tok.holder, (r->me + 1) % tebr_n, __ATOMIC_RELEASE);
}

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);

	/* An operation boundary: the thread holds no node. (A): acquire, pairs with (B). */
	if (SMR_UNLIKELY(++r->ops >= TEBR_K)) {
		r->ops = 0;
		if (r->in_ring && __atomic_load_n(&tebr_tok.holder, __ATOMIC_ACQUIRE) == r->me)
			tebr_receive(r);
	}
}

SMR_INLINE void rec_end(struct smr_thread *t)
{
	(void)t;
}

SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	struct rec_thread *r = rec_of(t);

	*tebr_link(n) = NULL; /* the reclaimer's word: no reader reads it */
	if (r->cur.head)
		*tebr_link(r->cur.tail) = n;
	else
		r->cur.head = n;
	r->cur.tail = n;
	r->cur.n++;
}

SMR_INLINE void rec_between(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);

	for (int i = 0; i < TEBR_FREE_PER_OP && r->ready.head; i++) {
		struct smr_node *n = r->ready.head;

		r->ready.head = *tebr_link(n);
		r->ready.n--;
		smr_node_free(n);
	}
}

static void rec_init(struct smr_run *run)
{
	tebr_n = run->nthreads;
	/* Relaxed: no thread of the run exists yet; pthread_create orders it. */
	__atomic_store_n(&tebr_tok.holder, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tebr_stat.rounds, 0, __ATOMIC_RELAXED);
}

static void free_list(struct tebr_list *l)
{
	struct smr_node *n = l->head, *next;

	for (; n; n = next) {
		next = *tebr_link(n);
		smr_node_free(n);
	}
	l->head = l->tail = NULL;
	l->n = 0;
}

static void rec_fini(struct smr_run *run)
{
	/* Every thread has finished: nothing is reachable by a reader any more. */
	for (unsigned int i = 0; i <= run->nthreads; i++) {
		struct rec_thread *r = rec_of(&run->threads[i]);

		free_list(&r->ready);
		free_list(&r->prev);
		free_list(&r->cur);
	}
}

static void rec_thread_init(struct smr_thread *t)
{
	struct rec_thread *r = rec_of(t);

	memset(r, 0, sizeof(*r));
	r->me = t->id;
	r->in_ring = t->id < tebr_n; /* the prefill thread is not in the ring */
}

static void rec_thread_fini(struct smr_thread *t)
{
	(void)t; /* the lists wait for rec_fini */
}

static uint64_t rec_gps(void)
{
	return __atomic_load_n(&tebr_stat.rounds, __ATOMIC_RELAXED); /* relaxed: a count */
}

#include "design.h"
