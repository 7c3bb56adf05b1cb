/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/wfcqueue.h>: liburcu's wait-free concurrent queue (cds_wfcq), own code.
 *
 * A queue is a head (holding a dummy node) and a tail pointer to the last node.
 * Enqueue is wait-free and needs no exclusion: the node's link is cleared, the tail is exchanged
 * for the node (one atomic exchange, a full barrier, as liburcu documents), then the previous
 * last node's link is set to it with a store-release. Between those two steps the queue is
 * momentarily disconnected: dequeue, splice and iteration, which must exclude each other
 * (cds_wfcq_dequeue_lock(), or a single consumer), wait for the link when they meet the gap
 * ("blocking"), or return CDS_WFCQ_WOULDBLOCK ("nonblocking").
 * Dequeue takes the node after the dummy. If it was the last one, the head's link is cleared and
 * the tail compare-exchanged back to the dummy; if that fails an enqueue is in its gap, and the
 * dequeuer waits for the node's link. Contents written before the enqueue are visible to the
 * dequeuer (release store of the link, acquire load by the dequeuer).
 */
#ifndef GRACE_URCU_WFCQUEUE_H
#define GRACE_URCU_WFCQUEUE_H

/* As liburcu's: assert() and the atomics come with it (programs rely on that). */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/grace/wait.h>

GRACE_BEGIN_DECLS

#define CDS_WFCQ_WOULDBLOCK ((struct cds_wfcq_node *)-1UL)

enum cds_wfcq_ret {
	CDS_WFCQ_RET_WOULDBLOCK = -1,
	CDS_WFCQ_RET_DEST_EMPTY = 0,
	CDS_WFCQ_RET_DEST_NON_EMPTY = 1,
	CDS_WFCQ_RET_SRC_EMPTY = 2,
};

enum cds_wfcq_state {
	CDS_WFCQ_STATE_LAST = (1U << 0),
};

struct cds_wfcq_node {
	struct cds_wfcq_node *next;
};

/* Head with the dequeue lock, and head without (for single-consumer or external locking). */
struct cds_wfcq_head {
	struct cds_wfcq_node node;
	pthread_mutex_t lock;
};

struct __cds_wfcq_head {
	struct cds_wfcq_node node;
};

struct cds_wfcq_tail {
	struct cds_wfcq_node *p;
};

/* Either kind of head (liburcu: a transparent union in C, overloads in C++). */
#ifdef __cplusplus
struct cds_wfcq_head_ptr_t {
	union {
		struct __cds_wfcq_head *_h;
		struct cds_wfcq_head *h;
	};
	cds_wfcq_head_ptr_t(struct __cds_wfcq_head *p) : _h(p) {}
	cds_wfcq_head_ptr_t(struct cds_wfcq_head *p) : h(p) {}
};
#else
typedef union {
	struct __cds_wfcq_head *_h;
	struct cds_wfcq_head *h;
} __attribute__((__transparent_union__)) cds_wfcq_head_ptr_t;
#endif

/* The dummy node of either kind of head (the node is the first member of both). */
GRACE_INLINE struct cds_wfcq_node *grace_urcu__wfcq_dummy(cds_wfcq_head_ptr_t head)
{
	return &head._h->node;
}

GRACE_INLINE void cds_wfcq_node_init(struct cds_wfcq_node *node)
{
	node->next = NULL;
}

GRACE_INLINE void __cds_wfcq_init(struct __cds_wfcq_head *head, struct cds_wfcq_tail *tail)
{
	cds_wfcq_node_init(&head->node);
	tail->p = &head->node;
}

GRACE_INLINE void cds_wfcq_init(struct cds_wfcq_head *head, struct cds_wfcq_tail *tail)
{
	cds_wfcq_node_init(&head->node);
	tail->p = &head->node;
	if (pthread_mutex_init(&head->lock, NULL) != 0)
		abort();
}

GRACE_INLINE void cds_wfcq_destroy(struct cds_wfcq_head *head, struct cds_wfcq_tail *tail)
{
	(void)tail;
	pthread_mutex_destroy(&head->lock);
}

/* Empty? Two relaxed loads, no barrier, no exclusion needed (liburcu's contract). */
GRACE_INLINE bool cds_wfcq_empty(cds_wfcq_head_ptr_t head, struct cds_wfcq_tail *tail)
{
	struct cds_wfcq_node *dummy = grace_urcu__wfcq_dummy(head);

	return grace_load_relaxed(&dummy->next) == NULL && grace_load_relaxed(&tail->p) == dummy;
}

GRACE_INLINE void cds_wfcq_dequeue_lock(struct cds_wfcq_head *head, struct cds_wfcq_tail *tail)
{
	(void)tail;
	if (pthread_mutex_lock(&head->lock) != 0)
		abort();
}

GRACE_INLINE void cds_wfcq_dequeue_unlock(struct cds_wfcq_head *head, struct cds_wfcq_tail *tail)
{
	(void)tail;
	if (pthread_mutex_unlock(&head->lock) != 0)
		abort();
}

/* Link [first..last] (linked among themselves) after the tail. Returns false if the queue was
 * empty before. */
GRACE_INLINE bool grace_urcu__wfcq_append(cds_wfcq_head_ptr_t head, struct cds_wfcq_tail *tail,
					  struct cds_wfcq_node *first, struct cds_wfcq_node *last)
{
	/* Full barrier (seq_cst exchange): the nodes' contents, and everything before the call,
	 * are ordered before the nodes become reachable through the tail. */
	struct cds_wfcq_node *old = grace_xchg(&tail->p, last, __ATOMIC_SEQ_CST);

	/* Release: a dequeuer that loads this link (acquire) sees the nodes initialised. Until this
	 * store, dequeuers that reach `old` wait for the link. */
	grace_store_release(&old->next, first);
	return old != grace_urcu__wfcq_dummy(head);
}

/* Enqueue @node. Wait-free; no exclusion needed. Returns false if the queue was empty. */
GRACE_INLINE bool cds_wfcq_enqueue(cds_wfcq_head_ptr_t head, struct cds_wfcq_tail *tail,
				   struct cds_wfcq_node *node)
{
	node->next = NULL; /* not reachable yet: plain store */
	return grace_urcu__wfcq_append(head, tail, node, node);
}

/* The link after @node: wait for it while an enqueue is in its gap, or WOULDBLOCK. */
GRACE_INLINE struct cds_wfcq_node *grace_urcu__wfcq_next(struct cds_wfcq_node *node, int blocking)
{
	struct cds_wfcq_node *next = grace_load_acquire(&node->next);

	if (next)
		return next;
	if (!blocking)
		return CDS_WFCQ_WOULDBLOCK;
	return GRACE_URCU__WAIT_NONNULL(&node->next);
}

GRACE_INLINE struct cds_wfcq_node *grace_urcu__wfcq_first(cds_wfcq_head_ptr_t head,
							  struct cds_wfcq_tail *tail, int blocking)
{
	if (cds_wfcq_empty(head, tail))
		return NULL;
	return grace_urcu__wfcq_next(grace_urcu__wfcq_dummy(head), blocking);
}

GRACE_INLINE struct cds_wfcq_node *grace_urcu__wfcq_iter_next(struct cds_wfcq_tail *tail,
							      struct cds_wfcq_node *node,
							      int blocking)
{
	struct cds_wfcq_node *next = grace_load_acquire(&node->next);

	if (next)
		return next;
	/* No link yet: the end of the queue, or an enqueue in its gap after @node. */
	if (grace_load_acquire(&tail->p) == node)
		return NULL;
	return grace_urcu__wfcq_next(node, blocking);
}

GRACE_INLINE struct cds_wfcq_node *grace_urcu__wfcq_dequeue(cds_wfcq_head_ptr_t head,
							    struct cds_wfcq_tail *tail, int *state,
							    int blocking)
{
	struct cds_wfcq_node *dummy = grace_urcu__wfcq_dummy(head), *node, *next;

	if (state)
		*state = 0;
	if (cds_wfcq_empty(head, tail))
		return NULL;
	node = grace_urcu__wfcq_next(dummy, blocking);
	if (node == CDS_WFCQ_WOULDBLOCK)
		return node;
	next = grace_load_acquire(&node->next);
	if (next == NULL) {
		struct cds_wfcq_node *expect = node;

		/* The last node, unless an enqueue follows it: detach it from the head, then move
		 * the tail back to the dummy. */
		grace_store_relaxed(&dummy->next, (struct cds_wfcq_node *)NULL);
		/* Full barrier (seq_cst): the head's link is cleared before the tail can be seen
		 * pointing at the dummy again (pairs with the exchange in grace_urcu__wfcq_append:
		 * an enqueuer that gets the dummy as predecessor links it after this clearing). */
		if (grace_cmpxchg_mo(&tail->p, &expect, dummy, __ATOMIC_SEQ_CST,
				     __ATOMIC_SEQ_CST)) {
			if (state)
				*state |= CDS_WFCQ_STATE_LAST;
			return node;
		}
		/* An enqueue took the tail after @node: its link follows. */
		next = grace_load_acquire(&node->next);
		if (next == NULL) {
			if (!blocking) {
				/* Put the head back as it was (only the consumer writes it while
				 * the tail is not the dummy) and let the caller retry. */
				grace_store_relaxed(&dummy->next, node);
				return CDS_WFCQ_WOULDBLOCK;
			}
			next = GRACE_URCU__WAIT_NONNULL(&node->next);
		}
	}
	/* Release: the new first node was published before; keeps the store whole and ordered
	 * after the load of node->next for the next dequeuer (under the same exclusion). */
	grace_store_release(&dummy->next, next);
	return node;
}

/* ---- the caller ensures exclusion (dequeue lock, or one consumer) ---- */

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_dequeue_blocking(cds_wfcq_head_ptr_t head,
							       struct cds_wfcq_tail *tail)
{
	return grace_urcu__wfcq_dequeue(head, tail, NULL, 1);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_dequeue_with_state_blocking(
	cds_wfcq_head_ptr_t head, struct cds_wfcq_tail *tail, int *state)
{
	return grace_urcu__wfcq_dequeue(head, tail, state, 1);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_dequeue_nonblocking(cds_wfcq_head_ptr_t head,
								  struct cds_wfcq_tail *tail)
{
	return grace_urcu__wfcq_dequeue(head, tail, NULL, 0);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_dequeue_with_state_nonblocking(
	cds_wfcq_head_ptr_t head, struct cds_wfcq_tail *tail, int *state)
{
	return grace_urcu__wfcq_dequeue(head, tail, state, 0);
}

GRACE_INLINE enum cds_wfcq_ret grace_urcu__wfcq_splice(cds_wfcq_head_ptr_t dest_q_head,
						       struct cds_wfcq_tail *dest_q_tail,
						       cds_wfcq_head_ptr_t src_q_head,
						       struct cds_wfcq_tail *src_q_tail,
						       int blocking)
{
	struct cds_wfcq_node *sdummy = grace_urcu__wfcq_dummy(src_q_head), *first, *last;

	if (cds_wfcq_empty(src_q_head, src_q_tail))
		return CDS_WFCQ_RET_SRC_EMPTY;
	/* Claim the chain by exchanging the dummy's link with NULL: splices of one source need no
	 * exclusion between them (liburcu's contract; its test_urcu_wfcq splices from two
	 * threads), so exactly one of them may take [first..]. NULL: an enqueue is in its gap
	 * after the dummy, or another splice has claimed the chain and not yet reset the tail;
	 * wait until the link appears or the tail is back at the dummy (empty). Seq_cst exchange:
	 * acquire pairs with the enqueuer's release store of the link; the full barrier orders the
	 * clearing before the tail exchange below, which enqueuers rely on. */
	for (unsigned int spins = 0;; spins++) {
		first = grace_xchg(&sdummy->next, (struct cds_wfcq_node *)NULL, __ATOMIC_SEQ_CST);
		if (first)
			break;
		/* Acquire: pairs with the seq_cst tail exchange of the splice that emptied the
		 * source (below), so "empty" is not seen before its claim of the chain. */
		if (grace_load_acquire(&src_q_tail->p) == sdummy)
			return CDS_WFCQ_RET_SRC_EMPTY;
		if (!blocking)
			return CDS_WFCQ_RET_WOULDBLOCK;
		if (spins < GRACE_URCU__WAIT_SPINS) {
			caa_cpu_relax();
		} else { /* the other side may be preempted: let it run */
			(void)poll(NULL, 0, 1);
			spins = 0;
		}
	}
	/* Full barrier (seq_cst exchange): the source is empty again from here; enqueuers that
	 * get the source dummy as predecessor link after the clearing above. */
	last = grace_xchg(&src_q_tail->p, sdummy, __ATOMIC_SEQ_CST);
	/* [first..last] may still have gaps (enqueues of the source in progress): whoever walks
	 * the destination waits for them as for its own. */
	return grace_urcu__wfcq_append(dest_q_head, dest_q_tail, first, last)
		       ? CDS_WFCQ_RET_DEST_NON_EMPTY
		       : CDS_WFCQ_RET_DEST_EMPTY;
}

GRACE_INLINE enum cds_wfcq_ret __cds_wfcq_splice_blocking(cds_wfcq_head_ptr_t dest_q_head,
							  struct cds_wfcq_tail *dest_q_tail,
							  cds_wfcq_head_ptr_t src_q_head,
							  struct cds_wfcq_tail *src_q_tail)
{
	return grace_urcu__wfcq_splice(dest_q_head, dest_q_tail, src_q_head, src_q_tail, 1);
}

GRACE_INLINE enum cds_wfcq_ret __cds_wfcq_splice_nonblocking(cds_wfcq_head_ptr_t dest_q_head,
							     struct cds_wfcq_tail *dest_q_tail,
							     cds_wfcq_head_ptr_t src_q_head,
							     struct cds_wfcq_tail *src_q_tail)
{
	return grace_urcu__wfcq_splice(dest_q_head, dest_q_tail, src_q_head, src_q_tail, 0);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_first_blocking(cds_wfcq_head_ptr_t head,
							     struct cds_wfcq_tail *tail)
{
	return grace_urcu__wfcq_first(head, tail, 1);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_first_nonblocking(cds_wfcq_head_ptr_t head,
								struct cds_wfcq_tail *tail)
{
	return grace_urcu__wfcq_first(head, tail, 0);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_next_blocking(cds_wfcq_head_ptr_t head,
							    struct cds_wfcq_tail *tail,
							    struct cds_wfcq_node *node)
{
	(void)head;
	return grace_urcu__wfcq_iter_next(tail, node, 1);
}

GRACE_INLINE struct cds_wfcq_node *__cds_wfcq_next_nonblocking(cds_wfcq_head_ptr_t head,
							       struct cds_wfcq_tail *tail,
							       struct cds_wfcq_node *node)
{
	(void)head;
	return grace_urcu__wfcq_iter_next(tail, node, 0);
}

/* ---- with the dequeue lock taken inside ---- */

GRACE_INLINE struct cds_wfcq_node *cds_wfcq_dequeue_blocking(struct cds_wfcq_head *head,
							     struct cds_wfcq_tail *tail)
{
	struct cds_wfcq_node *n;

	cds_wfcq_dequeue_lock(head, tail);
	n = __cds_wfcq_dequeue_blocking(head, tail);
	cds_wfcq_dequeue_unlock(head, tail);
	return n;
}

GRACE_INLINE struct cds_wfcq_node *cds_wfcq_dequeue_with_state_blocking(struct cds_wfcq_head *head,
									struct cds_wfcq_tail *tail,
									int *state)
{
	struct cds_wfcq_node *n;

	cds_wfcq_dequeue_lock(head, tail);
	n = __cds_wfcq_dequeue_with_state_blocking(head, tail, state);
	cds_wfcq_dequeue_unlock(head, tail);
	return n;
}

/* Takes the source's dequeue lock (the destination needs none: splicing in is an enqueue). */
GRACE_INLINE enum cds_wfcq_ret cds_wfcq_splice_blocking(struct cds_wfcq_head *dest_q_head,
							struct cds_wfcq_tail *dest_q_tail,
							struct cds_wfcq_head *src_q_head,
							struct cds_wfcq_tail *src_q_tail)
{
	enum cds_wfcq_ret r;

	cds_wfcq_dequeue_lock(src_q_head, src_q_tail);
	r = __cds_wfcq_splice_blocking(dest_q_head, dest_q_tail, src_q_head, src_q_tail);
	cds_wfcq_dequeue_unlock(src_q_head, src_q_tail);
	return r;
}

GRACE_END_DECLS

#define __cds_wfcq_for_each_blocking(head, tail, node)                       \
	for ((node) = __cds_wfcq_first_blocking(head, tail); (node) != NULL; \
	     (node) = __cds_wfcq_next_blocking(head, tail, node))
/* The body may free @node: @n holds the next one. */
#define __cds_wfcq_for_each_blocking_safe(head, tail, node, n)                  \
	for ((node) = __cds_wfcq_first_blocking(head, tail),                    \
	    (n) = ((node) ? __cds_wfcq_next_blocking(head, tail, node) : NULL); \
	     (node) != NULL;                                                    \
	     (node) = (n), (n) = ((node) ? __cds_wfcq_next_blocking(head, tail, node) : NULL))

#endif
