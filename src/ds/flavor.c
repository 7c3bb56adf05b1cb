/* SPDX-License-Identifier: MIT */
/*
 * Update-side flavor operations for the data structures (ID registry, hash table): the default
 * flavor and QSBR. An srcu domain fills in its own struct grace_flavor_ops with the domain as ctx.
 */
#include <grace/rcu.h>
#include <grace/qsbr.h>
#include <grace/srcu.h>
#include <grace/idr.h>

static void rcu_call_op(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	(void)ctx;
	grace_rcu_call(head, func);
}

static void rcu_sync_op(void *ctx)
{
	(void)ctx;
	grace_rcu_synchronize();
}

static void rcu_barrier_op(void *ctx)
{
	(void)ctx;
	grace_rcu_barrier();
}

static void qsbr_call_op(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	(void)ctx;
	grace_qsbr_call(head, func);
}

static void qsbr_sync_op(void *ctx)
{
	(void)ctx;
	grace_qsbr_synchronize();
}

static void qsbr_barrier_op(void *ctx)
{
	(void)ctx;
	grace_qsbr_barrier();
}

GRACE_API const struct grace_flavor_ops grace_flavor_rcu = {
	"rcu", rcu_call_op, rcu_sync_op, rcu_barrier_op, NULL,
};

GRACE_API const struct grace_flavor_ops grace_flavor_qsbr = {
	"qsbr", qsbr_call_op, qsbr_sync_op, qsbr_barrier_op, NULL,
};

static void srcu_call_op(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	grace_srcu_call((struct srcu_struct *)ctx, head, func);
}

static void srcu_sync_op(void *ctx)
{
	grace_srcu_synchronize((struct srcu_struct *)ctx);
}

static void srcu_barrier_op(void *ctx)
{
	grace_srcu_barrier((struct srcu_struct *)ctx);
}

void grace_flavor_ops_srcu(struct grace_flavor_ops *ops, struct srcu_struct *ssp)
{
	ops->name = "srcu";
	ops->call = srcu_call_op;
	ops->synchronize = srcu_sync_op;
	ops->barrier = srcu_barrier_op;
	ops->ctx = ssp;
}
