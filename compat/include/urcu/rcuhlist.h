/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rcuhlist.h>: RCU operations on liburcu's hash lists. Updaters hold their own
 * lock; readers traverse inside a read-side section. Publication by rcu_assign_pointer()
 * (store-release) of the one pointer that makes a node reachable, after its links are set;
 * readers load with rcu_dereference(). cds_hlist_del_rcu() leaves ->next intact for readers
 * standing on the node: free it after a grace period.
 */
#ifndef GRACE_URCU_RCUHLIST_H
#define GRACE_URCU_RCUHLIST_H

#include <urcu/hlist.h>
#include <urcu/pointer.h>

GRACE_BEGIN_DECLS

/** Add @newp at the front of @head, publishing it to readers. */
GRACE_INLINE void cds_hlist_add_head_rcu(struct cds_hlist_node *newp, struct cds_hlist_head *head)
{
	newp->next = head->next; /* not reachable yet: plain stores */
	newp->prev = (struct cds_hlist_node *)(void *)head;
	if (head->next)
		head->next->prev = newp;
	/* Publish: store-release, pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(head->next, newp);
}

/** Unlink @elem from readers' view. */
GRACE_INLINE void cds_hlist_del_rcu(struct cds_hlist_node *elem)
{
	if (elem->next)
		elem->next->prev = elem->prev;
	/* The successor was published before: the release store only keeps the pointer whole. */
	grace_store_release(&elem->prev->next, elem->next);
}

GRACE_END_DECLS

#define cds_hlist_for_each_rcu(pos, head)                          \
	for ((pos) = rcu_dereference((head)->next); (pos) != NULL; \
	     (pos) = rcu_dereference((pos)->next))
#define cds_hlist_for_each_entry_rcu(entry, pos, head, member)                                   \
	for ((pos) = rcu_dereference((head)->next);                                              \
	     (pos) != NULL && ((entry) = cds_hlist_entry(pos, __typeof__(*(entry)), member), 1); \
	     (pos) = rcu_dereference((pos)->next))
#define cds_hlist_for_each_entry_rcu_2(entry, head, member)                                      \
	for ((entry) = cds_hlist_entry_safe(rcu_dereference((head)->next), __typeof__(*(entry)), \
					    member);                                             \
	     (entry) != NULL;                                                                    \
	     (entry) = cds_hlist_entry_safe(rcu_dereference((entry)->member.next),               \
					    __typeof__(*(entry)), member))

#endif
