/* SPDX-License-Identifier: MIT */
/*
 * struct grace_flavor_ops: one RCU flavor's whole API as a table, so that generic code (a data
 * structure, a test harness, a compatibility layer) works whatever flavor its readers use.
 */
#ifndef GRACE_FLAVOR_H
#define GRACE_FLAVOR_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/compiler.h>
#include <grace/engine.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

/**
 * struct grace_flavor_ops - the operations of one RCU flavor (or one srcu domain).
 *
 * Every operation takes @ctx first. They behave exactly as the flavor's named functions
 * (rcu.h, qsbr.h, srcu.h), with the same context rules and misuse reports; an indirect call
 * is the only cost. The tables are built by the library: grace_flavor_rcu, grace_flavor_qsbr,
 * grace_flavor_ops_srcu().
 * @name:                  "rcu", "qsbr" or "srcu", for messages.
 * @call:                  call_rcu(): queue func(head) to run after a grace period. Never
 *                         blocks for a grace period in the common case; may be called with
 *                         locks held.
 * @synchronize:           synchronize_rcu(). Blocks; never inside a read-side section.
 * @barrier:               rcu_barrier(): wait until every callback queued with @call so far
 *                         has run. Used by destroy functions.
 * @ctx:                   passed to each operation (identifies the flavor or the domain).
 * @synchronize_expedited: synchronize_rcu_expedited().
 * @get_state, @start_poll, @poll_state, @cond_synchronize: the polled grace-period API.
 * @read_lock:             enter a read-side section; returns the token @read_unlock takes
 *                         (the srcu index; 0 for the other flavors).
 * @read_unlock:           leave the section @read_lock entered.
 * @read_ongoing:          is the calling thread inside a read-side section of this flavor?
 *                         Exact for rcu and qsbr (qsbr: "online"); for srcu it knows only the
 *                         sections entered from code built with GRACE_DEBUG.
 * @set_policy, @set_callback_limits, @callback_stats: the callback engine's controls.
 * @register_thread, @unregister_thread: reader-thread registration (rcu: optional; qsbr:
 *                         required; srcu: NULL, nothing to do).
 * @quiescent_state, @thread_offline, @thread_online: QSBR only; NULL for the others.
 * @call_hurry:            call_rcu_hurry(): as @call, and the grace period starts without the
 *                         adaptive policy's pacing.
 * @free:                  free_rcu(): free(ptr) after a grace period; head is the object's
 *                         struct rcu_head (within its first 4096 bytes). NULL ptr: nothing.
 *                         Same context as @call.
 * @free_headless:         free_rcu_mightsleep(): the same with no rcu_head; may wait for a
 *                         grace period (not inside a read-side section or a callback).
 * @free_barrier:          free_rcu_barrier(): wait until every object queued with @free or
 *                         @free_headless (by any thread) before the call has been freed.
 */
struct grace_flavor_ops {
	const char *name;
	void (*call)(void *ctx, struct rcu_head *head, rcu_callback_t func);
	void (*synchronize)(void *ctx);
	void (*barrier)(void *ctx);
	void *ctx;
	void (*synchronize_expedited)(void *ctx);
	unsigned long (*get_state)(void *ctx);
	unsigned long (*start_poll)(void *ctx);
	bool (*poll_state)(void *ctx, unsigned long cookie);
	void (*cond_synchronize)(void *ctx, unsigned long cookie);
	int (*read_lock)(void *ctx);
	void (*read_unlock)(void *ctx, int token);
	bool (*read_ongoing)(void *ctx);
	int (*set_policy)(void *ctx, enum grace_gp_policy policy, unsigned int period_us);
	int (*set_callback_limits)(void *ctx, size_t soft, size_t hard);
	void (*callback_stats)(void *ctx, struct grace_cb_stats *stats);
	void (*register_thread)(void);
	void (*unregister_thread)(void);
	void (*quiescent_state)(void);
	void (*thread_offline)(void);
	void (*thread_online)(void);
	void (*call_hurry)(void *ctx, struct rcu_head *head, rcu_callback_t func);
	void (*free)(void *ctx, void *ptr, struct rcu_head *head);
	void (*free_headless)(void *ctx, void *ptr);
	void (*free_barrier)(void *ctx);
};

/* The default flavor (call_rcu, synchronize_rcu, rcu_barrier, ...). */
GRACE_API extern const struct grace_flavor_ops grace_flavor_rcu;
/* QSBR (call_qsbr, synchronize_qsbr, qsbr_barrier, ...). */
GRACE_API extern const struct grace_flavor_ops grace_flavor_qsbr;
struct srcu_struct;
/**
 * grace_flavor_ops_srcu() - fill *ops with the operations of the srcu domain ssp.
 *
 * Sets the domain up if it is a DEFINE_SRCU() domain not used yet. The domain must outlive
 * every user of ops (cleanup_srcu_struct() invalidates them). Misuse (NULL or uninitialised
 * ssp) is reported with a message naming grace_flavor_ops_srcu and aborts.
 */
GRACE_API void grace_flavor_ops_srcu(struct grace_flavor_ops *ops, struct srcu_struct *ssp);

GRACE_END_DECLS

#endif /* GRACE_FLAVOR_H */
