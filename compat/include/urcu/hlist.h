/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/hlist.h>: liburcu's hash lists. Unlike Linux's hlist, liburcu's node keeps a
 * plain ->prev pointer to the previous node, the head standing in as a node (its ->next is at
 * the same offset): kept exactly so.
 */
#ifndef GRACE_URCU_HLIST_H
#define GRACE_URCU_HLIST_H

#include <stddef.h>
#include <urcu/grace/base.h>
#include <urcu/compiler.h>

GRACE_BEGIN_DECLS

struct cds_hlist_head {
	struct cds_hlist_node *next;
};

struct cds_hlist_node {
	struct cds_hlist_node *next, *prev;
};

/** Initialise an empty hash list head. */
GRACE_INLINE void CDS_INIT_HLIST_HEAD(struct cds_hlist_head *ptr)
{
	grace_store_release(&ptr->next, (struct cds_hlist_node *)NULL);
}

#define CDS_HLIST_HEAD(name) struct cds_hlist_head name = { NULL }
#define CDS_HLIST_HEAD_INIT(name) \
	{                         \
		.next = NULL      \
	}

/** Add @newp at the front of @head. */
GRACE_INLINE void cds_hlist_add_head(struct cds_hlist_node *newp, struct cds_hlist_head *head)
{
	if (head->next)
		head->next->prev = newp;
	newp->next = head->next;
	newp->prev = (struct cds_hlist_node *)(void *)head;
	grace_store_release(&head->next, newp);
}

/** Unlink @elem; its own links are left as they were. */
GRACE_INLINE void cds_hlist_del(struct cds_hlist_node *elem)
{
	if (elem->next)
		elem->next->prev = elem->prev;
	grace_store_release(&elem->prev->next, elem->next);
}

GRACE_END_DECLS

#define cds_hlist_entry(ptr, type, member) caa_container_of(ptr, type, member)
#define cds_hlist_entry_safe(ptr, type, member)                                      \
	__extension__({                                                              \
		__typeof__(ptr) grace_urcu__h = (ptr);                               \
		grace_urcu__h ? cds_hlist_entry(grace_urcu__h, type, member) : NULL; \
	})

#define cds_hlist_for_each(pos, head) for ((pos) = (head)->next; (pos) != NULL; (pos) = (pos)->next)
#define cds_hlist_for_each_safe(pos, p, head) \
	for ((pos) = (head)->next; (pos) != NULL && ((p) = (pos)->next, 1); (pos) = (p))
/* @entry: the object; @pos: its struct cds_hlist_node. */
#define cds_hlist_for_each_entry(entry, pos, head, member)                                       \
	for ((pos) = (head)->next;                                                               \
	     (pos) != NULL && ((entry) = cds_hlist_entry(pos, __typeof__(*(entry)), member), 1); \
	     (pos) = (pos)->next)
#define cds_hlist_for_each_entry_safe(entry, pos, p, head, member)                                 \
	for ((pos) = (head)->next;                                                                 \
	     (pos) != NULL &&                                                                      \
	     ((p) = (pos)->next, (entry) = cds_hlist_entry(pos, __typeof__(*(entry)), member), 1); \
	     (pos) = (p))
/* Without the node cursor. */
#define cds_hlist_for_each_entry_2(entry, head, member)                                  \
	for ((entry) = cds_hlist_entry_safe((head)->next, __typeof__(*(entry)), member); \
	     (entry) != NULL;                                                            \
	     (entry) = cds_hlist_entry_safe((entry)->member.next, __typeof__(*(entry)), member))
#define cds_hlist_for_each_entry_safe_2(entry, e, head, member)                                   \
	for ((entry) = cds_hlist_entry_safe((head)->next, __typeof__(*(entry)), member);          \
	     (entry) != NULL &&                                                                   \
	     ((e) = cds_hlist_entry_safe((entry)->member.next, __typeof__(*(entry)), member), 1); \
	     (entry) = (e))

#endif
