/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rculfqueue.h>: liburcu's RCU lock-free queue (cds_lfq_*_rcu), own code: the
 * Michael-Scott queue, with RCU instead of hazard pointers or counted pointers.
 *
 * The queue always holds at least one node. Enqueue appends with a compare-exchange on the last
 * node's link, then swings the tail (anyone who finds the tail lagging helps swing it). Dequeue
 * swings the head to its successor and returns the old head, the queue's first element; when
 * the first element has no successor, dequeue appends a placeholder ("dummy") node first, so
 * the head can always move, and placeholders taken off the front are freed through
 * queue_call_rcu after a grace period. Both run inside a read-side section of the queue's
 * flavor: a node a thread is looking at cannot be freed under it (dequeued nodes are freed
 * after a grace period by the caller, placeholders through queue_call_rcu), which rules out
 * ABA.
 */
#ifndef GRACE_URCU_RCULFQUEUE_H
#define GRACE_URCU_RCULFQUEUE_H

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <urcu/grace/base.h>
#include <urcu/compiler.h>
#include <urcu/pointer.h>
/* With _LGPL_SOURCE, liburcu's inline queue brings poll(). */
#if GRACE_URCU__LGPL
#include <poll.h>
#endif

GRACE_BEGIN_DECLS

struct cds_lfq_queue_rcu;

struct cds_lfq_node_rcu {
	struct cds_lfq_node_rcu *next;
	int dummy;
};

struct cds_lfq_queue_rcu {
	struct cds_lfq_node_rcu *head, *tail;
	void (*queue_call_rcu)(struct rcu_head *head, void (*func)(struct rcu_head *head));
};

/* A placeholder the queue allocates when it runs empty. */
struct grace_urcu__lfq_dummy {
	struct cds_lfq_node_rcu parent;
	struct rcu_head head;
};

GRACE_INLINE struct cds_lfq_node_rcu *grace_urcu__lfq_make_dummy(struct cds_lfq_node_rcu *next)
{
	struct grace_urcu__lfq_dummy *d = (struct grace_urcu__lfq_dummy *)malloc(
		sizeof(struct grace_urcu__lfq_dummy));

	if (!d)
		grace_urcu__misuse("cds_lfq_enqueue_rcu", "out of memory for a queue placeholder");
	d->parent.next = next;
	d->parent.dummy = 1;
	return &d->parent;
}

GRACE_INLINE void grace_urcu__lfq_free_dummy_cb(struct rcu_head *head)
{
	free(caa_container_of(head, struct grace_urcu__lfq_dummy, head));
}

GRACE_INLINE void grace_urcu__lfq_retire_dummy(struct cds_lfq_queue_rcu *q,
					       struct cds_lfq_node_rcu *node)
{
	struct grace_urcu__lfq_dummy *d = caa_container_of(node, struct grace_urcu__lfq_dummy,
							   parent);

	q->queue_call_rcu(&d->head, grace_urcu__lfq_free_dummy_cb);
}

GRACE_INLINE void cds_lfq_node_init_rcu(struct cds_lfq_node_rcu *node)
{
	node->next = NULL;
	node->dummy = 0;
}

GRACE_INLINE void cds_lfq_init_rcu(struct cds_lfq_queue_rcu *q,
				   void (*queue_call_rcu)(struct rcu_head *head,
							  void (*func)(struct rcu_head *head)))
{
	q->tail = grace_urcu__lfq_make_dummy(NULL);
	q->head = q->tail;
	q->queue_call_rcu = queue_call_rcu;
}

/* 0, or -EPERM if the queue is not empty. No concurrent use. */
GRACE_INLINE int cds_lfq_destroy_rcu(struct cds_lfq_queue_rcu *q)
{
	struct cds_lfq_node_rcu *head = q->head;

	if (!(head->dummy && head->next == NULL))
		return -EPERM;
	/* No reader can still see it: the queue is being destroyed. */
	free(caa_container_of(head, struct grace_urcu__lfq_dummy, parent));
	return 0;
}

/* Append @node. Inside a read-side section of the queue's flavor. */
GRACE_INLINE void cds_lfq_enqueue_rcu(struct cds_lfq_queue_rcu *q, struct cds_lfq_node_rcu *node)
{
	for (;;) {
		struct cds_lfq_node_rcu *tail = rcu_dereference(q->tail), *next = NULL;

		/* Full barrier (seq_cst): @node (initialised by the caller) is published by this
		 * exchange; pairs with rcu_dereference() of ->next in dequeue. */
		if (grace_cmpxchg_mo(&tail->next, &next, node, __ATOMIC_SEQ_CST,
				     __ATOMIC_ACQUIRE)) {
			/* Swing the tail; failure means someone helped already. */
			struct cds_lfq_node_rcu *t = tail;
			(void)grace_cmpxchg_mo(&q->tail, &t, node, __ATOMIC_SEQ_CST,
					       __ATOMIC_RELAXED);
			return;
		}
		/* The tail lags behind a node appended meanwhile: help, then retry. */
		(void)grace_cmpxchg_mo(&q->tail, &tail, next, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	}
}

GRACE_INLINE void grace_urcu__lfq_enqueue_dummy(struct cds_lfq_queue_rcu *q)
{
	cds_lfq_enqueue_rcu(q, grace_urcu__lfq_make_dummy(NULL));
}

/*
 * Take the first element, or NULL. Inside a read-side section of the queue's flavor; free the
 * node returned only after a grace period.
 */
GRACE_INLINE struct cds_lfq_node_rcu *cds_lfq_dequeue_rcu(struct cds_lfq_queue_rcu *q)
{
	for (;;) {
		struct cds_lfq_node_rcu *head = rcu_dereference(q->head);
		struct cds_lfq_node_rcu *next = rcu_dereference(head->next);

		if (head->dummy && next == NULL)
			return NULL; /* empty */
		/* The head is a real node with nothing behind it: put a placeholder behind it, so
		 * the head can move on and the node be handed out. */
		if (next == NULL) {
			grace_urcu__lfq_enqueue_dummy(q);
			next = rcu_dereference(head->next);
		}
		/* Full barrier (seq_cst): the node becomes ours; only one dequeuer wins. */
		if (!grace_cmpxchg_mo(&q->head, &head, next, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		if (head->dummy) {
			/* A placeholder: free it after a grace period and take the next one. */
			grace_urcu__lfq_retire_dummy(q, head);
			continue;
		}
		return head;
	}
}

GRACE_END_DECLS

#endif
