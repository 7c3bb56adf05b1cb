/* SPDX-License-Identifier: MIT */
/*
 * grace hash lists: NULL-terminated doubly linked lists whose head is a single pointer, half
 * the size of a struct grace_list_head, for large hash tables (Linux Journal 2003: "the hlist
 * primitives ... reduce memory requirements for large hash tables"). RCU operations as for
 * <grace/list.h>: readers traverse with the _rcu iterators and no lock; one updater at a time
 * (the caller's lock) adds, deletes and replaces. Header-only.
 *
 * Memory ordering, as in <grace/list.h>: a new node's links are set, then the pointer that
 * makes it reachable (h->first or prev->next) is stored with rcu_assign_pointer() (release);
 * readers load ->first and ->next with rcu_dereference() (address dependency, no fence).
 * Deletion keeps ->next so readers on the node continue; ->pprev is poisoned (double deletion is
 * reported in debug builds). ->next and ->first are always written with one atomic store-release;
 * ->pprev is update-side only.
 *
 * Kernel names: docs/ds.md maps each grace_hlist_* to its hlist_* counterpart.
 */
#ifndef GRACE_HLIST_H
#define GRACE_HLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

struct grace_hlist_node {
	struct grace_hlist_node *next, **pprev;
};

struct grace_hlist_head {
	struct grace_hlist_node *first;
};

/* Values stored in a deleted node: dereferencing them faults. */
#define GRACE_HLIST_POISON1 ((struct grace_hlist_node *)(uintptr_t)0x100)  /* ->next, plain del */
#define GRACE_HLIST_POISON2 ((struct grace_hlist_node **)(uintptr_t)0x122) /* ->pprev, any del */

#define GRACE_HLIST_HEAD_INIT \
	{                     \
		NULL          \
	}
#define GRACE_HLIST_HEAD(name) struct grace_hlist_head name = GRACE_HLIST_HEAD_INIT

/* Link stores: atomic store-release (as GRACE__LIST_SET_NEXT in <grace/list.h>). */
#define GRACE__HLIST_SET(p, v) grace_store_release(&(p), (v))

GRACE_INLINE void grace_hlist_head_init(struct grace_hlist_head *h)
{
	GRACE__HLIST_SET(h->first, (struct grace_hlist_node *)NULL);
}

/** Initialise a node that is on no list (unhashed). */
GRACE_INLINE void grace_hlist_node_init(struct grace_hlist_node *n)
{
	GRACE__HLIST_SET(n->next, (struct grace_hlist_node *)NULL);
	n->pprev = NULL;
}

/** Is @n on no list (never added, or removed with a _init deletion)? Update side. */
GRACE_INLINE bool grace_hlist_unhashed(const struct grace_hlist_node *n)
{
	return n->pprev == NULL;
}

/** Is the list empty? One relaxed load: usable without a lock (the answer may be stale). */
GRACE_INLINE bool grace_hlist_empty(const struct grace_hlist_head *h)
{
	return grace_load_relaxed(&h->first) == NULL;
}

GRACE_INLINE void grace__hlist_check_del(const char *call, struct grace_hlist_node *n)
{
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(n->pprev == GRACE_HLIST_POISON2))
		grace__list_corrupt(call, n, "node already deleted (double deletion)");
	if (GRACE_UNLIKELY(n->pprev == NULL))
		grace__list_corrupt(call, n, "node is not on a list (unhashed)");
	if (GRACE_UNLIKELY(*n->pprev != n))
		grace__list_corrupt(call, n, "*pprev does not point to the node");
	if (GRACE_UNLIKELY(n->next && n->next->pprev != &n->next))
		grace__list_corrupt(call, n, "next->pprev does not point to the node");
#else
	(void)call;
	(void)n;
#endif
}

GRACE_INLINE void grace__hlist_del(struct grace_hlist_node *n)
{
	struct grace_hlist_node *next = n->next, **pprev = n->pprev;

	/* Unlink: store-release, so a reader reaching next through this link sees it initialised
	 * in the memory model too (pairs with rcu_dereference()). */
	grace_store_release(pprev, next);
	if (next)
		next->pprev = pprev;
}

/* ---- update side, plain ---- */

/** Unlink @n and poison both its links. */
GRACE_INLINE void grace_hlist_del(struct grace_hlist_node *n)
{
	grace__hlist_check_del("grace_hlist_del", n);
	grace__hlist_del(n);
	GRACE__HLIST_SET(n->next, GRACE_HLIST_POISON1);
	n->pprev = GRACE_HLIST_POISON2;
}

/** Unlink @n if it is on a list, and mark it unhashed. */
GRACE_INLINE void grace_hlist_del_init(struct grace_hlist_node *n)
{
	if (!grace_hlist_unhashed(n)) {
		grace__hlist_check_del("grace_hlist_del_init", n);
		grace__hlist_del(n);
		grace_hlist_node_init(n);
	}
}

/** Add @n at the front of @h. */
GRACE_INLINE void grace_hlist_add_head(struct grace_hlist_node *n, struct grace_hlist_head *h)
{
	struct grace_hlist_node *first = h->first;

	GRACE__HLIST_SET(n->next, first);
	if (first)
		first->pprev = &n->next;
	GRACE__HLIST_SET(h->first, n);
	n->pprev = &h->first;
}

/** Add @n before @next (which is on a list). */
GRACE_INLINE void grace_hlist_add_before(struct grace_hlist_node *n, struct grace_hlist_node *next)
{
	n->pprev = next->pprev;
	GRACE__HLIST_SET(n->next, next);
	next->pprev = &n->next;
	grace_store_release(n->pprev, n);
}

/** Add @n after @prev (which is on a list). */
GRACE_INLINE void grace_hlist_add_behind(struct grace_hlist_node *n, struct grace_hlist_node *prev)
{
	GRACE__HLIST_SET(n->next, prev->next);
	GRACE__HLIST_SET(prev->next, n);
	n->pprev = &prev->next;
	if (n->next)
		n->next->pprev = &n->next;
}

/** Move the whole list from @old to @n (@old becomes empty). */
GRACE_INLINE void grace_hlist_move_list(struct grace_hlist_head *old, struct grace_hlist_head *n)
{
	GRACE__HLIST_SET(n->first, old->first);
	if (n->first)
		n->first->pprev = &n->first;
	GRACE__HLIST_SET(old->first, (struct grace_hlist_node *)NULL);
}

/* ---- update side, RCU ---- */

/**
 * grace_hlist_add_head_rcu() (the kernel's hlist_add_head_rcu): add @n at the front of @h,
 * publishing it.
 * The caller holds the update-side lock and has initialised @n's fields.
 */
GRACE_INLINE void grace_hlist_add_head_rcu(struct grace_hlist_node *n, struct grace_hlist_head *h)
{
	struct grace_hlist_node *first = h->first;

	n->next = first; /* not reachable yet: plain store */
	n->pprev = &h->first;
	/* Publish: store-release, pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(h->first, n);
	if (first)
		first->pprev = &n->next;
}

/**
 * grace_hlist_add_tail_rcu() (the kernel's hlist_add_tail_rcu): add @n at the end of @h (walks the
 * list:
 * O(length)).
 */
GRACE_INLINE void grace_hlist_add_tail_rcu(struct grace_hlist_node *n, struct grace_hlist_head *h)
{
	struct grace_hlist_node **pp = &h->first;

	while (*pp)
		pp = &(*pp)->next;
	n->next = NULL;
	n->pprev = pp;
	/* Publish: store-release (pairs with rcu_dereference()). */
	grace_store_release(pp, n);
}

/** grace_hlist_add_before_rcu() (the kernel's hlist_add_before_rcu): add @n before @next. */
GRACE_INLINE void grace_hlist_add_before_rcu(struct grace_hlist_node *n,
					     struct grace_hlist_node *next)
{
	n->pprev = next->pprev;
	n->next = next;
	/* Publish: store-release (pairs with rcu_dereference()). */
	grace_store_release(n->pprev, n);
	next->pprev = &n->next;
}

/** grace_hlist_add_behind_rcu() (the kernel's hlist_add_behind_rcu): add @n after @prev. */
GRACE_INLINE void grace_hlist_add_behind_rcu(struct grace_hlist_node *n,
					     struct grace_hlist_node *prev)
{
	n->next = prev->next;
	n->pprev = &prev->next;
	/* Publish: store-release (pairs with rcu_dereference()). */
	rcu_assign_pointer(prev->next, n);
	if (n->next)
		n->next->pprev = &n->next;
}

/**
 * grace_hlist_del_rcu() (the kernel's hlist_del_rcu): unlink @n from readers' view; ->next is kept
 * for
 * readers standing on it, ->pprev is poisoned. Free it after a grace period.
 */
GRACE_INLINE void grace_hlist_del_rcu(struct grace_hlist_node *n)
{
	grace__hlist_check_del("grace_hlist_del_rcu", n);
	grace__hlist_del(n);
	n->pprev = GRACE_HLIST_POISON2;
}

/**
 * grace_hlist_del_init_rcu() (the kernel's hlist_del_init_rcu): unlink @n if it is on a list and
 * mark it
 * unhashed (->next kept for readers). It may be added again only after a grace period.
 */
GRACE_INLINE void grace_hlist_del_init_rcu(struct grace_hlist_node *n)
{
	if (!grace_hlist_unhashed(n)) {
		grace__hlist_check_del("grace_hlist_del_init_rcu", n);
		grace__hlist_del(n);
		n->pprev = NULL;
	}
}

/**
 * grace_hlist_replace_rcu() (the kernel's hlist_replace_rcu): put @n in the place of @old; readers
 * see one
 * or the other. Free @old after a grace period.
 */
GRACE_INLINE void grace_hlist_replace_rcu(struct grace_hlist_node *old, struct grace_hlist_node *n)
{
	struct grace_hlist_node *next = old->next;

	grace__hlist_check_del("grace_hlist_replace_rcu", old);
	n->next = next;
	n->pprev = old->pprev;
	/* Publish @n: store-release (pairs with rcu_dereference()). */
	grace_store_release(n->pprev, n);
	if (next)
		next->pprev = &n->next;
	old->pprev = GRACE_HLIST_POISON2;
}

GRACE_END_DECLS

/* ---- entries and iterators ---- */

#define grace_hlist_entry(ptr, type, member) grace_container_of(ptr, type, member)
#define grace_hlist_entry_safe(ptr, type, member)                                      \
	__extension__({                                                                \
		struct grace_hlist_node *grace__hn = (ptr);                            \
		grace__hn ? grace_hlist_entry(grace__hn, type, member) : (type *)NULL; \
	})

/* Update side. */
#define grace_hlist_for_each(pos, head) for ((pos) = (head)->first; (pos); (pos) = (pos)->next)
#define grace_hlist_for_each_safe(pos, n, head) \
	for ((pos) = (head)->first; (pos) && ((n) = (pos)->next, 1); (pos) = (n))
#define grace_hlist_for_each_entry(pos, head, member)                                          \
	for ((pos) = grace_hlist_entry_safe((head)->first, __typeof__(*(pos)), member); (pos); \
	     (pos) = grace_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))
#define grace_hlist_for_each_entry_continue(pos, member)                                     \
	for ((pos) = grace_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member); \
	     (pos);                                                                          \
	     (pos) = grace_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))
#define grace_hlist_for_each_entry_from(pos, member) \
	for (; (pos);                                \
	     (pos) = grace_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))
/* The body may delete (and free) @pos: @n holds the next node. */
#define grace_hlist_for_each_entry_safe(pos, n, head, member)                           \
	for ((pos) = grace_hlist_entry_safe((head)->first, __typeof__(*(pos)), member); \
	     (pos) && ((n) = (pos)->member.next, 1);                                    \
	     (pos) = grace_hlist_entry_safe(n, __typeof__(*(pos)), member))

/* Readers (inside a read-side section): dependency-ordered loads. */

/* hlist_first_rcu / hlist_next_rcu: the raw node pointers. */
#define grace_hlist_first_rcu(head) rcu_dereference((head)->first)
#define grace_hlist_next_rcu(node) rcu_dereference((node)->next)
/* grace_hlist_for_each_entry_rcu() (the kernel's hlist_for_each_entry_rcu): every entry present
 * during the whole traversal is visited once. */
#define grace_hlist_for_each_entry_rcu(pos, head, member)                                       \
	for ((pos) = grace_hlist_entry_safe(rcu_dereference((head)->first), __typeof__(*(pos)), \
					    member);                                            \
	     (pos); (pos) = grace_hlist_entry_safe(rcu_dereference((pos)->member.next),         \
						   __typeof__(*(pos)), member))
/* grace_hlist_for_each_entry_continue_rcu() (the kernel's hlist_for_each_entry_continue_rcu):
 * continue after @pos, found in the same section. */
#define grace_hlist_for_each_entry_continue_rcu(pos, member)                            \
	for ((pos) = grace_hlist_entry_safe(rcu_dereference((pos)->member.next),        \
					    __typeof__(*(pos)), member);                \
	     (pos); (pos) = grace_hlist_entry_safe(rcu_dereference((pos)->member.next), \
						   __typeof__(*(pos)), member))
/* grace_hlist_for_each_entry_from_rcu() (the kernel's hlist_for_each_entry_from_rcu): start at @pos
 * itself. */
#define grace_hlist_for_each_entry_from_rcu(pos, member)                                  \
	for (; (pos); (pos) = grace_hlist_entry_safe(rcu_dereference((pos)->member.next), \
						     __typeof__(*(pos)), member))
/* As grace_list_for_each_entry_safe_rcu(): @n is loaded before the body, which may unlink @pos. */
#define grace_hlist_for_each_entry_safe_rcu(pos, n, head, member)                               \
	for ((pos) = grace_hlist_entry_safe(rcu_dereference((head)->first), __typeof__(*(pos)), \
					    member);                                            \
	     (pos) && ((n) = rcu_dereference((pos)->member.next), 1);                           \
	     (pos) = grace_hlist_entry_safe(n, __typeof__(*(pos)), member))

#endif /* GRACE_HLIST_H */
