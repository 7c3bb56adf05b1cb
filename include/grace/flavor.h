/* SPDX-License-Identifier: MIT */
/*
 * struct grace_flavor_ops: the update-side operations of one flavor, so that a data structure
 * (hash table, ID registry, your own) works whatever flavor its readers use.
 */
#ifndef GRACE_FLAVOR_H
#define GRACE_FLAVOR_H

#include <grace/compiler.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

/**
 * struct grace_flavor_ops - the update-side operations of one RCU flavor, so that a data
 * structure (ID registry, hash table) works whatever flavor its readers use.
 * @name:        flavor name for messages ("rcu", "qsbr", ...).
 * @call:        queue func(head) to run after a grace period (call_rcu()). Must not block for a
 *               grace period in the common case; may be called with the structure's locks held.
 * @synchronize: wait for a grace period (synchronize_rcu()). Used only where waiting is part of
 *               the algorithm (hash-table resizing); never with a lock held.
 * @barrier:     wait until every callback queued with @call so far has run (rcu_barrier()).
 *               Used by destroy functions, so that nothing they retired is still pending.
 * @ctx:         passed to each operation (an srcu domain, for example); NULL for rcu and qsbr.
 */
struct grace_flavor_ops {
	const char *name;
	void (*call)(void *ctx, struct rcu_head *head, rcu_callback_t func);
	void (*synchronize)(void *ctx);
	void (*barrier)(void *ctx);
	void *ctx;
};
/* The default flavor (call_rcu, synchronize_rcu, rcu_barrier). */
GRACE_API extern const struct grace_flavor_ops grace_flavor_rcu;
/* QSBR (call_qsbr, synchronize_qsbr, qsbr_barrier). */
GRACE_API extern const struct grace_flavor_ops grace_flavor_qsbr;
struct srcu_struct;
/* Fill *ops for readers of the srcu domain ssp (call_srcu, synchronize_srcu, srcu_barrier);
 * the domain must outlive every structure that uses ops. */
GRACE_API void grace_flavor_ops_srcu(struct grace_flavor_ops *ops, struct srcu_struct *ssp);

GRACE_END_DECLS

#endif /* GRACE_FLAVOR_H */
