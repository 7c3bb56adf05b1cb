/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/list.h>: liburcu's circular doubly linked lists (struct cds_list_head).
 *
 * Behaviour as liburcu's: cds_list_del() unlinks and leaves the entry's own links as they were
 * (no poisoning, so code that deletes while walking with the non-safe iterators behaves as it
 * did with liburcu). Every ->next store is a single atomic store-release, so lockless
 * cds_list_empty() checks and the _rcu readers of <urcu/rculist.h> see whole pointers and
 * initialised entries (pairs with rcu_dereference()). Debug builds (GRACE_DEBUG) check each add
 * and delete for corruption (neighbours that do not point back, a double deletion) and abort
 * with a message naming the cds_list_* call.
 */
#ifndef GRACE_URCU_LIST_H
#define GRACE_URCU_LIST_H

#include <urcu/grace/base.h>
#include <urcu/compiler.h>
#include <grace/list.h> /* grace__list_corrupt(): the debug report */

GRACE_BEGIN_DECLS

struct cds_list_head {
	struct cds_list_head *next, *prev;
};

#define CDS_LIST_HEAD_INIT(name) \
	{                        \
		&(name), &(name) \
	}
#define CDS_LIST_HEAD(name) struct cds_list_head name = CDS_LIST_HEAD_INIT(name)
#define CDS_INIT_LIST_HEAD(ptr)                           \
	do {                                              \
		grace_store_release(&(ptr)->next, (ptr)); \
		(ptr)->prev = (ptr);                      \
	} while (0)

/* The one ->next store: atomic, release (see the top). */
#define GRACE_URCU__SET_NEXT(e, v) grace_store_release(&(e)->next, (v))

GRACE_INLINE void grace_urcu__list_check(const char *call, struct cds_list_head *e,
					 struct cds_list_head *prev, struct cds_list_head *next)
{
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(prev->next != next || next->prev != prev))
		grace__list_corrupt(
			call, e,
			prev->next == e && next->prev == e
				? "entry already on this list"
				: "neighbours do not point to each other (corrupt list, or "
				  "an entry deleted twice)");
#else
	(void)call;
	(void)e;
	(void)prev;
	(void)next;
#endif
}

GRACE_INLINE void grace_urcu__list_check_del(const char *call, struct cds_list_head *e)
{
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(e->prev->next != e || e->next->prev != e))
		grace__list_corrupt(call, e,
				    "the entry's neighbours do not point to it (not on a list, "
				    "deleted twice, or a corrupt list)");
#else
	(void)call;
	(void)e;
#endif
}

GRACE_INLINE void grace_urcu__list_add(struct cds_list_head *n, struct cds_list_head *prev,
				       struct cds_list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	GRACE_URCU__SET_NEXT(prev, n);
}

/** Add @newp after @head. */
GRACE_INLINE void cds_list_add(struct cds_list_head *newp, struct cds_list_head *head)
{
	grace_urcu__list_check("cds_list_add", newp, head, head->next);
	grace_urcu__list_add(newp, head, head->next);
}

/** Add @newp before @head (at the tail). */
GRACE_INLINE void cds_list_add_tail(struct cds_list_head *newp, struct cds_list_head *head)
{
	grace_urcu__list_check("cds_list_add_tail", newp, head->prev, head);
	grace_urcu__list_add(newp, head->prev, head);
}

/** Link @prev and @next to each other (what is between them is left out). */
GRACE_INLINE void __cds_list_del(struct cds_list_head *prev, struct cds_list_head *next)
{
	next->prev = prev;
	GRACE_URCU__SET_NEXT(prev, next);
}

/** Unlink @elem; its own links are left as they were. */
GRACE_INLINE void cds_list_del(struct cds_list_head *elem)
{
	grace_urcu__list_check_del("cds_list_del", elem);
	__cds_list_del(elem->prev, elem->next);
}

/** Unlink @elem and make it an empty list. */
GRACE_INLINE void cds_list_del_init(struct cds_list_head *elem)
{
	grace_urcu__list_check_del("cds_list_del_init", elem);
	__cds_list_del(elem->prev, elem->next);
	CDS_INIT_LIST_HEAD(elem);
}

/** Move @elem to the front of @head. */
GRACE_INLINE void cds_list_move(struct cds_list_head *elem, struct cds_list_head *head)
{
	grace_urcu__list_check_del("cds_list_move", elem);
	__cds_list_del(elem->prev, elem->next);
	cds_list_add(elem, head);
}

/** Put @newp in the place of @old (old's links are left as they were). */
GRACE_INLINE void cds_list_replace(const struct cds_list_head *old, struct cds_list_head *newp)
{
	newp->next = old->next;
	newp->prev = old->prev;
	GRACE_URCU__SET_NEXT(newp->prev, newp);
	newp->next->prev = newp;
}

/** Insert the entries of @add at the front of @head (@add is left stale). */
GRACE_INLINE void cds_list_splice(struct cds_list_head *add, struct cds_list_head *head)
{
	if (add != add->next) {
		add->next->prev = head;
		GRACE_URCU__SET_NEXT(add->prev, head->next);
		head->next->prev = add->prev;
		GRACE_URCU__SET_NEXT(head, add->next);
	}
}

/** Is @head empty? One relaxed load: usable without a lock (the answer may be stale). */
GRACE_INLINE int cds_list_empty(const struct cds_list_head *head)
{
	return grace_load_relaxed(&head->next) == head;
}

/** Put @newp in the place of @old, then make @old an empty list. */
GRACE_INLINE void cds_list_replace_init(struct cds_list_head *old, struct cds_list_head *newp)
{
	struct cds_list_head *head = old->next;

	cds_list_del(old);
	cds_list_add_tail(newp, head);
	CDS_INIT_LIST_HEAD(old);
}

GRACE_END_DECLS

#define cds_list_entry(ptr, type, member) caa_container_of(ptr, type, member)
#define cds_list_first_entry(ptr, type, member) cds_list_entry((ptr)->next, type, member)

#define cds_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define cds_list_for_each_safe(pos, p, head)                           \
	for ((pos) = (head)->next, (p) = (pos)->next; (pos) != (head); \
	     (pos) = (p), (p) = (pos)->next)
#define cds_list_for_each_prev(pos, head) \
	for ((pos) = (head)->prev; (pos) != (head); (pos) = (pos)->prev)
#define cds_list_for_each_prev_safe(pos, p, head)                      \
	for ((pos) = (head)->prev, (p) = (pos)->prev; (pos) != (head); \
	     (pos) = (p), (p) = (pos)->prev)
#define cds_list_for_each_entry(pos, head, member)                             \
	for ((pos) = cds_list_entry((head)->next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                         \
	     (pos) = cds_list_entry((pos)->member.next, __typeof__(*(pos)), member))
#define cds_list_for_each_entry_reverse(pos, head, member)                     \
	for ((pos) = cds_list_entry((head)->prev, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                         \
	     (pos) = cds_list_entry((pos)->member.prev, __typeof__(*(pos)), member))
/* The body may delete @pos: @p holds the next entry. */
#define cds_list_for_each_entry_safe(pos, p, head, member)                        \
	for ((pos) = cds_list_entry((head)->next, __typeof__(*(pos)), member),    \
	    (p) = cds_list_entry((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                            \
	     (pos) = (p), (p) = cds_list_entry((pos)->member.next, __typeof__(*(pos)), member))
/* As cds_list_for_each_entry_safe(), starting at @pos itself (an entry of the list). */
#define cds_list_for_each_entry_safe_from(pos, p, head, member)                    \
	for ((p) = cds_list_entry((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                             \
	     (pos) = (p), (p) = cds_list_entry((pos)->member.next, __typeof__(*(pos)), member))

#endif
