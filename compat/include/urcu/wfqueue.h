/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/wfqueue.h>: liburcu's deprecated wait-free queue (use <urcu/wfcqueue.h>).
 * Enqueue: exchange the tail (pointer to the last link) for the new node's link, then store the
 * node into the old last link with a store-release: wait-free, no exclusion. Dequeue (under the
 * queue's lock for cds_wfq_dequeue_blocking(), or by one consumer): the queue holds a dummy
 * node; taking the node after it waits for a link in its gap, and a dequeued dummy is enqueued
 * again so that the queue never runs out of nodes.
 */
#ifndef GRACE_URCU_WFQUEUE_H
#define GRACE_URCU_WFQUEUE_H

/* As liburcu's: assert() and the atomics come with it (programs rely on that). */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/grace/wait.h>

#ifndef CDS_WFQ_DEPRECATED
#define CDS_WFQ_DEPRECATED \
	CDS_DEPRECATED("urcu/wfqueue.h is deprecated. Please use urcu/wfcqueue.h instead.")
#endif

GRACE_BEGIN_DECLS

struct cds_wfq_node {
	struct cds_wfq_node *next;
};

struct cds_wfq_queue {
	struct cds_wfq_node *head, **tail;
	struct cds_wfq_node dummy;
	pthread_mutex_t lock;
};

static inline CDS_WFQ_DEPRECATED void cds_wfq_node_init(struct cds_wfq_node *node)
{
	node->next = NULL;
}

static inline CDS_WFQ_DEPRECATED void cds_wfq_init(struct cds_wfq_queue *q)
{
	q->dummy.next = NULL;
	q->head = &q->dummy;
	q->tail = &q->dummy.next;
	if (pthread_mutex_init(&q->lock, NULL) != 0)
		abort();
}

static inline CDS_WFQ_DEPRECATED int cds_wfq_destroy(struct cds_wfq_queue *q)
{
	return pthread_mutex_destroy(&q->lock);
}

static inline void grace_urcu__wfq_enqueue(struct cds_wfq_queue *q, struct cds_wfq_node *node)
{
	struct cds_wfq_node **old_tail;

	node->next = NULL; /* not reachable yet */
	/* Full barrier (seq_cst exchange): the node's contents are ordered before it is
	 * reachable through the tail. */
	old_tail = grace_xchg(&q->tail, &node->next, __ATOMIC_SEQ_CST);
	/* Release: a dequeuer that loads this link (acquire) sees the node initialised. */
	grace_store_release(old_tail, node);
}

static inline CDS_WFQ_DEPRECATED void cds_wfq_enqueue(struct cds_wfq_queue *q,
						      struct cds_wfq_node *node)
{
	grace_urcu__wfq_enqueue(q, node);
}

/* Exclusion with other dequeuers is the caller's (one consumer, or the queue's lock). */
static inline struct cds_wfq_node *grace_urcu__wfq_dequeue(struct cds_wfq_queue *q)
{
	for (;;) {
		struct cds_wfq_node *node = q->head, *next;

		/* Empty: only the dummy, and no enqueue has taken the tail after it. */
		if (node == &q->dummy && grace_load_acquire(&q->tail) == &q->dummy.next)
			return NULL;
		next = GRACE_URCU__WAIT_NONNULL(&node->next);
		q->head = next;
		if (node != &q->dummy)
			return node;
		/* The dummy: put it back at the end and take what follows it. */
		grace_urcu__wfq_enqueue(q, &q->dummy);
	}
}

static inline CDS_WFQ_DEPRECATED struct cds_wfq_node *__cds_wfq_dequeue_blocking(
	struct cds_wfq_queue *q)
{
	return grace_urcu__wfq_dequeue(q);
}

static inline CDS_WFQ_DEPRECATED struct cds_wfq_node *cds_wfq_dequeue_blocking(
	struct cds_wfq_queue *q)
{
	struct cds_wfq_node *n;

	if (pthread_mutex_lock(&q->lock) != 0)
		abort();
	n = grace_urcu__wfq_dequeue(q);
	if (pthread_mutex_unlock(&q->lock) != 0)
		abort();
	return n;
}

GRACE_END_DECLS

#endif
