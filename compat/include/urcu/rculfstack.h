/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rculfstack.h>: liburcu's deprecated RCU lock-free stack (use
 * <urcu/lfstack.h>). Push: compare-exchange loop on the head (full barrier). Pop: inside a
 * read-side section, swing the head past the top node; free popped nodes after a grace period
 * (which rules out ABA: a node seen by a concurrent pop cannot be freed and pushed again).
 */
#ifndef GRACE_URCU_RCULFSTACK_H
#define GRACE_URCU_RCULFSTACK_H

#include <urcu/compiler.h>
#include <urcu/pointer.h>

#ifndef CDS_LFS_RCU_DEPRECATED
#define CDS_LFS_RCU_DEPRECATED \
	CDS_DEPRECATED("urcu/rculfstack.h is deprecated. Please use urcu/lfstack.h instead.")
#endif

GRACE_BEGIN_DECLS

struct cds_lfs_node_rcu {
	struct cds_lfs_node_rcu *next;
};

struct cds_lfs_stack_rcu {
	struct cds_lfs_node_rcu *head;
};

static inline CDS_LFS_RCU_DEPRECATED void cds_lfs_node_init_rcu(struct cds_lfs_node_rcu *node)
{
	(void)node;
}

static inline void cds_lfs_init_rcu(struct cds_lfs_stack_rcu *s)
{
	s->head = NULL;
}

/* Returns 0 if the stack was empty, 1 otherwise. */
static inline CDS_LFS_RCU_DEPRECATED int cds_lfs_push_rcu(struct cds_lfs_stack_rcu *s,
							  struct cds_lfs_node_rcu *node)
{
	struct cds_lfs_node_rcu *head = grace_load_relaxed(&s->head);

	for (;;) {
		node->next = head; /* not reachable yet: plain store */
		/* Full barrier (seq_cst): publishes @node; pairs with rcu_dereference() in pop. */
		if (grace_cmpxchg_mo(&s->head, &head, node, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return head != NULL;
	}
}

/* Inside a read-side section; free the node returned after a grace period. */
static inline CDS_LFS_RCU_DEPRECATED struct cds_lfs_node_rcu *cds_lfs_pop_rcu(
	struct cds_lfs_stack_rcu *s)
{
	for (;;) {
		struct cds_lfs_node_rcu *head = rcu_dereference(s->head), *next;

		if (!head)
			return NULL;
		next = rcu_dereference(head->next);
		/* Full barrier (seq_cst): only one pop takes @head. */
		if (grace_cmpxchg_mo(&s->head, &head, next, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return head;
	}
}

GRACE_END_DECLS

#endif
