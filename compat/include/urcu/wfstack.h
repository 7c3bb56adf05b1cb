/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/wfstack.h>: liburcu's wait-free stack (cds_wfs), own code.
 *
 * Push is wait-free and needs no exclusion: the head is exchanged for the new node (one atomic
 * exchange, a full barrier), then the node's link is set to the old head with a store-release.
 * A node whose link is still NULL is being pushed; the bottom of the stack is marked by
 * CDS_WFS_END (not NULL), so "not linked yet" and "last" differ. Pop (compare-exchange of the
 * head) must exclude other pops (cds_wfs_pop_lock(), or one consumer) so that a node is not
 * popped, freed and pushed again under a concurrent pop (ABA); pop-all (one exchange) and
 * iteration of what pop-all returned need no exclusion. Pops wait for a link in its gap
 * ("blocking") or return CDS_WFS_WOULDBLOCK ("nonblocking").
 */
#ifndef GRACE_URCU_WFSTACK_H
#define GRACE_URCU_WFSTACK_H

/* As liburcu's: assert() and the atomics come with it (programs rely on that). */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/grace/wait.h>

GRACE_BEGIN_DECLS

#define CDS_WFS_END ((struct cds_wfs_head *)0x1UL)
#define CDS_WFS_WOULDBLOCK ((struct cds_wfs_node *)-1UL)

enum cds_wfs_state {
	CDS_WFS_STATE_LAST = (1U << 0),
};

struct cds_wfs_node {
	struct cds_wfs_node *next;
};

/* What pop-all returns: the top node, seen as the head of the popped chain. */
struct cds_wfs_head {
	struct cds_wfs_node node;
};

struct __cds_wfs_stack {
	struct cds_wfs_head *head;
};

struct cds_wfs_stack {
	struct cds_wfs_head *head;
	pthread_mutex_t lock;
};

#ifdef __cplusplus
struct cds_wfs_stack_ptr_t {
	union {
		struct __cds_wfs_stack *_s;
		struct cds_wfs_stack *s;
	};
	cds_wfs_stack_ptr_t(struct __cds_wfs_stack *p) : _s(p) {}
	cds_wfs_stack_ptr_t(struct cds_wfs_stack *p) : s(p) {}
};
#else
typedef union {
	struct __cds_wfs_stack *_s;
	struct cds_wfs_stack *s;
} __attribute__((__transparent_union__)) cds_wfs_stack_ptr_t;
#endif

GRACE_INLINE bool grace_urcu__wfs_end(const void *p)
{
	return p == (const void *)CDS_WFS_END;
}

GRACE_INLINE void cds_wfs_node_init(struct cds_wfs_node *node)
{
	node->next = NULL;
}

GRACE_INLINE void __cds_wfs_init(struct __cds_wfs_stack *s)
{
	s->head = CDS_WFS_END;
}

GRACE_INLINE void cds_wfs_init(struct cds_wfs_stack *s)
{
	s->head = CDS_WFS_END;
	if (pthread_mutex_init(&s->lock, NULL) != 0)
		abort();
}

GRACE_INLINE void cds_wfs_destroy(struct cds_wfs_stack *s)
{
	pthread_mutex_destroy(&s->lock);
}

/* Empty? One relaxed load, no barrier. */
GRACE_INLINE bool cds_wfs_empty(cds_wfs_stack_ptr_t u_stack)
{
	return grace_urcu__wfs_end(grace_load_relaxed(&u_stack._s->head));
}

/* Push @node. Wait-free. Returns 0 if the stack was empty, 1 otherwise. */
GRACE_INLINE int cds_wfs_push(cds_wfs_stack_ptr_t u_stack, struct cds_wfs_node *node)
{
	struct __cds_wfs_stack *s = u_stack._s;
	struct cds_wfs_head *new_head = caa_container_of(node, struct cds_wfs_head, node);
	struct cds_wfs_head *old_head;

	/* Full barrier (seq_cst exchange): the node's contents and everything before are ordered
	 * before the node is reachable from the head. */
	old_head = grace_xchg(&s->head, new_head, __ATOMIC_SEQ_CST);
	/* Release: a popper that loads the link (acquire) sees what was below initialised; until
	 * this store, poppers that reach @node wait for its link. */
	/* The node is the head's only member: a cast, not &old_head->node, which would be a
	 * member access through CDS_WFS_END (undefined; UBSan reports it). */
	grace_store_release(&node->next, (struct cds_wfs_node *)(void *)old_head);
	return !grace_urcu__wfs_end(old_head);
}

/* The link of @node: wait while its push is in its gap, or WOULDBLOCK. */
GRACE_INLINE struct cds_wfs_node *grace_urcu__wfs_next(struct cds_wfs_node *node, int blocking)
{
	struct cds_wfs_node *next = grace_load_acquire(&node->next);

	if (next)
		return next;
	if (!blocking)
		return CDS_WFS_WOULDBLOCK;
	return GRACE_URCU__WAIT_NONNULL(&node->next);
}

GRACE_INLINE struct cds_wfs_node *grace_urcu__wfs_pop(cds_wfs_stack_ptr_t u_stack, int *state,
						      int blocking)
{
	struct __cds_wfs_stack *s = u_stack._s;

	if (state)
		*state = 0;
	for (;;) {
		/* Acquire: the top node's contents are visible (pairs with the push's exchange). */
		struct cds_wfs_head *head = grace_load_acquire(&s->head), *new_head;
		struct cds_wfs_node *next;

		if (grace_urcu__wfs_end(head))
			return NULL;
		next = grace_urcu__wfs_next(&head->node, blocking);
		if (next == CDS_WFS_WOULDBLOCK)
			return CDS_WFS_WOULDBLOCK;
		new_head = caa_container_of(next, struct cds_wfs_head, node);
		/* Full barrier (seq_cst): the pop is ordered with the pushes it races. Pops exclude
		 * each other, so @head cannot be popped, freed and pushed again meanwhile. */
		if (grace_cmpxchg_mo(&s->head, &head, new_head, __ATOMIC_SEQ_CST,
				     __ATOMIC_SEQ_CST)) {
			if (state && grace_urcu__wfs_end(new_head))
				*state |= CDS_WFS_STATE_LAST;
			return &head->node;
		}
		/* A push changed the head: retry from the new top. */
	}
}

GRACE_INLINE struct cds_wfs_node *__cds_wfs_pop_blocking(cds_wfs_stack_ptr_t u_stack)
{
	return grace_urcu__wfs_pop(u_stack, NULL, 1);
}

GRACE_INLINE struct cds_wfs_node *__cds_wfs_pop_with_state_blocking(cds_wfs_stack_ptr_t u_stack,
								    int *state)
{
	return grace_urcu__wfs_pop(u_stack, state, 1);
}

GRACE_INLINE struct cds_wfs_node *__cds_wfs_pop_nonblocking(cds_wfs_stack_ptr_t u_stack)
{
	return grace_urcu__wfs_pop(u_stack, NULL, 0);
}

GRACE_INLINE struct cds_wfs_node *__cds_wfs_pop_with_state_nonblocking(cds_wfs_stack_ptr_t u_stack,
								       int *state)
{
	return grace_urcu__wfs_pop(u_stack, state, 0);
}

/* Take the whole stack; iterate it with cds_wfs_for_each_blocking(). NULL if it was empty. */
GRACE_INLINE struct cds_wfs_head *__cds_wfs_pop_all(cds_wfs_stack_ptr_t u_stack)
{
	/* Full barrier (seq_cst exchange), acquire of the pushes that built the chain. */
	struct cds_wfs_head *head = grace_xchg(&u_stack._s->head, CDS_WFS_END, __ATOMIC_SEQ_CST);

	return grace_urcu__wfs_end(head) ? NULL : head;
}

GRACE_INLINE struct cds_wfs_node *cds_wfs_first(struct cds_wfs_head *head)
{
	return (!head || grace_urcu__wfs_end(head)) ? NULL : &head->node;
}

GRACE_INLINE struct cds_wfs_node *cds_wfs_next_blocking(struct cds_wfs_node *node)
{
	struct cds_wfs_node *next = grace_urcu__wfs_next(node, 1);

	return grace_urcu__wfs_end(next) ? NULL : next;
}

GRACE_INLINE struct cds_wfs_node *cds_wfs_next_nonblocking(struct cds_wfs_node *node)
{
	struct cds_wfs_node *next = grace_urcu__wfs_next(node, 0);

	return grace_urcu__wfs_end(next) ? NULL : next;
}

GRACE_INLINE void cds_wfs_pop_lock(struct cds_wfs_stack *s)
{
	if (pthread_mutex_lock(&s->lock) != 0)
		abort();
}

GRACE_INLINE void cds_wfs_pop_unlock(struct cds_wfs_stack *s)
{
	if (pthread_mutex_unlock(&s->lock) != 0)
		abort();
}

GRACE_INLINE struct cds_wfs_node *cds_wfs_pop_with_state_blocking(struct cds_wfs_stack *s,
								  int *state)
{
	struct cds_wfs_node *n;

	cds_wfs_pop_lock(s);
	n = __cds_wfs_pop_with_state_blocking(s, state);
	cds_wfs_pop_unlock(s);
	return n;
}

GRACE_INLINE struct cds_wfs_node *cds_wfs_pop_blocking(struct cds_wfs_stack *s)
{
	return cds_wfs_pop_with_state_blocking(s, NULL);
}

GRACE_INLINE struct cds_wfs_head *cds_wfs_pop_all_blocking(struct cds_wfs_stack *s)
{
	struct cds_wfs_head *h;

	cds_wfs_pop_lock(s);
	h = __cds_wfs_pop_all(s);
	cds_wfs_pop_unlock(s);
	return h;
}

GRACE_END_DECLS

#define cds_wfs_for_each_blocking(head, node) \
	for ((node) = cds_wfs_first(head); (node) != NULL; (node) = cds_wfs_next_blocking(node))
/* The body may free @node: @n holds the next one. */
#define cds_wfs_for_each_blocking_safe(head, node, n)                                           \
	for ((node) = cds_wfs_first(head), (n) = ((node) ? cds_wfs_next_blocking(node) : NULL); \
	     (node) != NULL; (node) = (n), (n) = ((node) ? cds_wfs_next_blocking(node) : NULL))

#endif
