/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/lfstack.h>: liburcu's lock-free stack (cds_lfs), own code: a Treiber stack.
 *
 * Push is a compare-and-exchange loop on the head (lock-free, full barrier, no exclusion
 * needed): the node's link is set to the head it read, then the head is swung to the node.
 * Pop reads the top node's link and swings the head past it; two pops must not race on the
 * same node once it may be freed and pushed again (ABA), so pops either exclude each other
 * (cds_lfs_pop_lock(), or cds_lfs_pop_blocking()), or run inside a read-side section and free
 * popped nodes only after a grace period (the RCU way; the node's link stays readable).
 * Pop-all is one exchange and needs no exclusion with pushes.
 */
#ifndef GRACE_URCU_LFSTACK_H
#define GRACE_URCU_LFSTACK_H

/* As liburcu's: assert() and the atomics come with it (programs rely on that). */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

GRACE_BEGIN_DECLS

struct cds_lfs_node {
	struct cds_lfs_node *next;
};

struct cds_lfs_head {
	struct cds_lfs_node node;
};

struct __cds_lfs_stack {
	struct cds_lfs_head *head;
};

struct cds_lfs_stack {
	struct cds_lfs_head *head;
	pthread_mutex_t lock;
};

#ifdef __cplusplus
struct cds_lfs_stack_ptr_t {
	union {
		struct __cds_lfs_stack *_s;
		struct cds_lfs_stack *s;
	};
	cds_lfs_stack_ptr_t(struct __cds_lfs_stack *p) : _s(p) {}
	cds_lfs_stack_ptr_t(struct cds_lfs_stack *p) : s(p) {}
};
#else
typedef union {
	struct __cds_lfs_stack *_s;
	struct cds_lfs_stack *s;
} __attribute__((__transparent_union__)) cds_lfs_stack_ptr_t;
#endif

GRACE_INLINE void cds_lfs_node_init(struct cds_lfs_node *node)
{
	(void)node;
}

GRACE_INLINE void __cds_lfs_init(struct __cds_lfs_stack *s)
{
	s->head = NULL;
}

GRACE_INLINE void cds_lfs_init(struct cds_lfs_stack *s)
{
	s->head = NULL;
	if (pthread_mutex_init(&s->lock, NULL) != 0)
		abort();
}

GRACE_INLINE void cds_lfs_destroy(struct cds_lfs_stack *s)
{
	pthread_mutex_destroy(&s->lock);
}

GRACE_INLINE bool cds_lfs_empty(cds_lfs_stack_ptr_t s)
{
	return grace_load_relaxed(&s._s->head) == NULL;
}

/* Push @node. Lock-free, no exclusion needed. Returns 0 if the stack was empty, 1 otherwise. */
GRACE_INLINE bool cds_lfs_push(cds_lfs_stack_ptr_t u_s, struct cds_lfs_node *node)
{
	struct __cds_lfs_stack *s = u_s._s;
	struct cds_lfs_head *head = grace_load_relaxed(&s->head);
	struct cds_lfs_head *new_head = caa_container_of(node, struct cds_lfs_head, node);

	for (;;) {
		/* Not reachable until the exchange below: a plain store of the link. */
		node->next = head ? &head->node : NULL;
		/* Full barrier (seq_cst): the node's contents and link are ordered before it is
		 * reachable; pairs with the acquire load of the head in pop. On failure, @head is
		 * reloaded and the link set again. */
		if (grace_cmpxchg_mo(&s->head, &head, new_head, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return head != NULL;
	}
}

/* Pop the top node, or NULL. Exclusion with other pops: see the top of the file. */
GRACE_INLINE struct cds_lfs_node *__cds_lfs_pop(cds_lfs_stack_ptr_t u_s)
{
	struct __cds_lfs_stack *s = u_s._s;

	for (;;) {
		/* Acquire: the top node's link and contents are visible (pairs with push). */
		struct cds_lfs_head *head = grace_load_acquire(&s->head), *next_head;
		struct cds_lfs_node *next;

		if (!head)
			return NULL;
		next = grace_load_relaxed(&head->node.next);
		next_head = next ? caa_container_of(next, struct cds_lfs_head, node) : NULL;
		/* Full barrier (seq_cst): ordered with the pushes and pops it races. */
		if (grace_cmpxchg_mo(&s->head, &head, next_head, __ATOMIC_SEQ_CST,
				     __ATOMIC_RELAXED))
			return &head->node;
	}
}

/* Take the whole stack (a chain from the returned head, NULL-terminated), or NULL. */
GRACE_INLINE struct cds_lfs_head *__cds_lfs_pop_all(cds_lfs_stack_ptr_t u_s)
{
	/* Full barrier (seq_cst exchange), acquire of the pushes that built the chain. */
	return grace_xchg(&u_s._s->head, (struct cds_lfs_head *)NULL, __ATOMIC_SEQ_CST);
}

GRACE_INLINE void cds_lfs_pop_lock(struct cds_lfs_stack *s)
{
	if (pthread_mutex_lock(&s->lock) != 0)
		abort();
}

GRACE_INLINE void cds_lfs_pop_unlock(struct cds_lfs_stack *s)
{
	if (pthread_mutex_unlock(&s->lock) != 0)
		abort();
}

GRACE_INLINE struct cds_lfs_node *cds_lfs_pop_blocking(struct cds_lfs_stack *s)
{
	struct cds_lfs_node *n;

	cds_lfs_pop_lock(s);
	n = __cds_lfs_pop(s);
	cds_lfs_pop_unlock(s);
	return n;
}

GRACE_INLINE struct cds_lfs_head *cds_lfs_pop_all_blocking(struct cds_lfs_stack *s)
{
	struct cds_lfs_head *h;

	cds_lfs_pop_lock(s);
	h = __cds_lfs_pop_all(s);
	cds_lfs_pop_unlock(s);
	return h;
}

GRACE_END_DECLS

/* Iterate over a chain taken with pop-all. */
#define cds_lfs_for_each(__head, __node)                                     \
	for ((__node) = (__head) ? &(__head)->node : NULL; (__node) != NULL; \
	     (__node) = (__node)->next)
#define cds_lfs_for_each_entry(__head, __entry, __member)                                     \
	for ((__entry) = (__head) ? caa_container_of(&(__head)->node, __typeof__(*(__entry)), \
						     __member)                                \
				  : NULL;                                                     \
	     (__entry) != NULL;                                                               \
	     (__entry) = (__entry)->__member.next                                             \
				 ? caa_container_of((__entry)->__member.next,                 \
						    __typeof__(*(__entry)), __member)         \
				 : NULL)
/* The body may free @__node: @__n holds the next one. */
#define cds_lfs_for_each_safe(__head, __node, __n)         \
	for ((__node) = (__head) ? &(__head)->node : NULL, \
	    (__n) = (__node) ? (__node)->next : NULL;      \
	     (__node) != NULL; (__node) = (__n), (__n) = (__node) ? (__node)->next : NULL)
#define cds_lfs_for_each_entry_safe(__head, __entry, __n, __member)                              \
	for ((__entry) = (__head) ? caa_container_of(&(__head)->node, __typeof__(*(__entry)),    \
						     __member)                                   \
				  : NULL,                                                        \
	    (__n) = ((__entry) && (__entry)->__member.next)                                      \
			    ? caa_container_of((__entry)->__member.next, __typeof__(*(__entry)), \
					       __member)                                         \
			    : NULL;                                                              \
	     (__entry) != NULL; (__entry) = (__n),                                               \
	    (__n) = ((__entry) && (__entry)->__member.next)                                      \
					? caa_container_of((__entry)->__member.next,             \
							   __typeof__(*(__entry)), __member)     \
					: NULL)

#endif
