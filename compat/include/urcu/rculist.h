/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rculist.h>: RCU operations on struct cds_list_head. Updaters hold their own
 * lock; readers traverse inside a read-side section with no lock.
 *  - Publication: the new entry's links are set first, then the one pointer that makes it
 *    reachable is stored with rcu_assign_pointer() (store-release); readers load ->next with
 *    rcu_dereference() (address dependency). That is the pair.
 *  - cds_list_del_rcu() unlinks and leaves the entry's ->next intact so readers standing on it
 *    go on; free it after a grace period.
 */
#ifndef GRACE_URCU_RCULIST_H
#define GRACE_URCU_RCULIST_H

#include <urcu/list.h>
#include <urcu/pointer.h>

GRACE_BEGIN_DECLS

/** Add @newp after @head, publishing it to readers. */
GRACE_INLINE void cds_list_add_rcu(struct cds_list_head *newp, struct cds_list_head *head)
{
	grace_urcu__list_check("cds_list_add_rcu", newp, head, head->next);
	newp->next = head->next; /* not reachable yet: plain stores */
	newp->prev = head;
	head->next->prev = newp;
	/* Publish: store-release, pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(head->next, newp);
}

/** Add @newp before @head (at the tail), publishing it to readers. */
GRACE_INLINE void cds_list_add_tail_rcu(struct cds_list_head *newp, struct cds_list_head *head)
{
	grace_urcu__list_check("cds_list_add_tail_rcu", newp, head->prev, head);
	newp->next = head;
	newp->prev = head->prev;
	/* Publish: store-release, pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(head->prev->next, newp);
	head->prev = newp;
}

/** Put @newp in the place of @old: each reader sees one of them, never neither. */
GRACE_INLINE void cds_list_replace_rcu(struct cds_list_head *old, struct cds_list_head *newp)
{
	grace_urcu__list_check_del("cds_list_replace_rcu", old);
	newp->next = old->next;
	newp->prev = old->prev;
	/* Publish: store-release, pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(newp->prev->next, newp);
	newp->next->prev = newp;
}

/** Unlink @elem from readers' view; its ->next stays valid for readers standing on it. */
GRACE_INLINE void cds_list_del_rcu(struct cds_list_head *elem)
{
	grace_urcu__list_check_del("cds_list_del_rcu", elem);
	elem->next->prev = elem->prev;
	/* The successor was published before: the release store only keeps the pointer whole. */
	GRACE_URCU__SET_NEXT(elem->prev, elem->next);
}

GRACE_END_DECLS

/* Readers, inside a read-side section. */
#define cds_list_for_each_rcu(pos, head)                             \
	for ((pos) = rcu_dereference((head)->next); (pos) != (head); \
	     (pos) = rcu_dereference((pos)->next))
#define cds_list_for_each_entry_rcu(pos, head, member)                                             \
	for ((pos) = cds_list_entry(rcu_dereference((head)->next), __typeof__(*(pos)), member);    \
	     &(pos)->member != (head); (pos) = cds_list_entry(rcu_dereference((pos)->member.next), \
							      __typeof__(*(pos)), member))

#endif
