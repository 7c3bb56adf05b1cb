/* SPDX-License-Identifier: MIT */
/*
 * The update side of every flavor, written once over the descriptor (core/flavor.h), on the
 * flavors' floor: it uses the callback engine (engine/callback.h) and the per-thread frees
 * (engine/free.h) openly. Each flavor's exported functions (flavor/memb.c, qsbr.c, srcu.c) are
 * one-line calls of these.
 */
#ifndef GRACE_SRC_FLAVOR_UPDATE_H
#define GRACE_SRC_FLAVOR_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/engine.h>
#include <grace/flavor.h>
#include <grace/pointer.h>

#include "core/flavor.h"
#include "engine/callback.h"

/* The update side, written once. gpflags: GRACE__GP_EXPEDITED or 0. */
void grace__flavor_synchronize(struct grace__flavor *f, unsigned int gpflags);
unsigned long grace__flavor_get_state(struct grace__flavor *f);
unsigned long grace__flavor_start_poll(struct grace__flavor *f);
bool grace__flavor_poll_state(struct grace__flavor *f, unsigned long cookie);
void grace__flavor_cond_synchronize(struct grace__flavor *f, unsigned long cookie);
void grace__flavor_barrier(struct grace__flavor *f);
int grace__flavor_set_policy(struct grace__flavor *f, enum grace_gp_policy policy,
			     unsigned int period_us);
int grace__flavor_set_limits(struct grace__flavor *f, size_t soft, size_t hard);
void grace__flavor_stats(struct grace__flavor *f, struct grace_cb_stats *st);

/* call_rcu(): inline, so that each flavor's exported call is a load, a test and a tail call. */
static inline void grace__flavor_call(struct grace__flavor *f, struct rcu_head *head,
				      rcu_callback_t func)
{
	grace__engine_call(f, head, func);
}

/* call_rcu_hurry(): the same, and the grace period it needs starts without pacing. */
static inline void grace__flavor_call_hurry(struct grace__flavor *f, struct rcu_head *head,
					    rcu_callback_t func)
{
	grace__cbdom_call_hurry(grace__engine_of(f, f->calls[GRACE__CALL_CALL_HURRY]), head, func);
}

/* fork(): the registry's and the sequence's handlers, in order, for a static flavor. */
void grace__flavor_atfork_prepare(struct grace__flavor *f);
void grace__flavor_atfork_parent(struct grace__flavor *f);
void grace__flavor_atfork_child(struct grace__flavor *f);

/* The generic operations of struct grace_flavor_ops; ctx is the struct grace__flavor. */
void grace__op_call(void *ctx, struct rcu_head *head, rcu_callback_t func);
void grace__op_call_hurry(void *ctx, struct rcu_head *head, rcu_callback_t func);
void grace__op_synchronize(void *ctx);
void grace__op_barrier(void *ctx);
void grace__op_synchronize_expedited(void *ctx);
unsigned long grace__op_get_state(void *ctx);
unsigned long grace__op_start_poll(void *ctx);
bool grace__op_poll_state(void *ctx, unsigned long cookie);
void grace__op_cond_synchronize(void *ctx, unsigned long cookie);
int grace__op_read_lock(void *ctx);
void grace__op_read_unlock(void *ctx, int token);
bool grace__op_read_ongoing(void *ctx);
int grace__op_set_policy(void *ctx, enum grace_gp_policy policy, unsigned int period_us);
int grace__op_set_callback_limits(void *ctx, size_t soft, size_t hard);
void grace__op_callback_stats(void *ctx, struct grace_cb_stats *stats);
void grace__op_free(void *ctx, void *ptr, struct rcu_head *head);
void grace__op_free_ptr(void *ctx, void *ptr);
void grace__op_free_barrier(void *ctx);

/* A struct grace_flavor_ops initializer for flavor descriptor f named name_ (a string literal,
 * for a static initializer); the thread functions are the flavor's own (NULL where it has
 * none). */
#define GRACE__FLAVOR_OPS_INIT(f, name_, reg_, unreg_, qs_, off_, on_)                             \
	{                                                                                          \
		.name = (name_), .call = grace__op_call, .synchronize = grace__op_synchronize,     \
		.barrier = grace__op_barrier, .ctx = (f),                                          \
		.synchronize_expedited = grace__op_synchronize_expedited,                          \
		.get_state = grace__op_get_state, .start_poll = grace__op_start_poll,              \
		.poll_state = grace__op_poll_state,                                                \
		.cond_synchronize = grace__op_cond_synchronize, .read_lock = grace__op_read_lock,  \
		.read_unlock = grace__op_read_unlock, .read_ongoing = grace__op_read_ongoing,      \
		.set_policy = grace__op_set_policy,                                                \
		.set_callback_limits = grace__op_set_callback_limits,                              \
		.callback_stats = grace__op_callback_stats, .register_thread = (reg_),             \
		.unregister_thread = (unreg_), .quiescent_state = (qs_), .thread_offline = (off_), \
		.thread_online = (on_), .call_hurry = grace__op_call_hurry,                        \
		.free = grace__op_free, .free_headless = grace__op_free_ptr,                       \
		.free_barrier = grace__op_free_barrier                                             \
	}

#endif
