/* SPDX-License-Identifier: MIT */
/*
 * struct grace__flavor: one flavor (the default flavor, QSBR) or one srcu domain, as the rest of
 * the library sees it. A flavor is a grace-period sequence (core/gp.h) whose driver runs the
 * flavor's reader wait, a callback domain (engine/callback.h) created on first use, the hooks
 * below, the names of its public calls, and its engine policy (held by the callback domain).
 *
 * Everything the update side offers is written once over this descriptor (core/flavor.c):
 * synchronize, expedited, the polled API, call, barrier, policy, limits, stats, and the public
 * struct grace_flavor_ops derived from it. Each flavor's file (flavor/memb.c, qsbr.c, srcu.c)
 * defines its descriptor, its reader side and its exported functions as one-line calls of the
 * generic ones.
 */
#ifndef GRACE_SRC_FLAVOR_H
#define GRACE_SRC_FLAVOR_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/engine.h>
#include <grace/flavor.h>
#include <grace/pointer.h>

#include "core/gp.h"
#include "core/lock.h"

struct grace__cbdom;
struct grace__registry;
struct grace__flavor;

/* engine/callback.h (declared here too for the inline call path below). */
void grace__cbdom_call(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func);

/* The public calls of a flavor, for messages that name the call the user made. */
enum grace__call {
	GRACE__CALL_SYNC,       /* synchronize_rcu */
	GRACE__CALL_SYNC_EXP,   /* synchronize_rcu_expedited */
	GRACE__CALL_CALL,       /* call_rcu */
	GRACE__CALL_CALL_HURRY, /* call_rcu_hurry */
	GRACE__CALL_BARRIER,    /* rcu_barrier */
	GRACE__CALL_COND_SYNC,  /* cond_synchronize_rcu */
	GRACE__CALL_POLL_STATE, /* poll_state_synchronize_rcu */
	GRACE__CALL_START_POLL, /* start_poll_synchronize_rcu */
	GRACE__CALL_SET_POLICY, /* grace_rcu_set_policy */
	GRACE__CALL_SET_LIMITS, /* grace_rcu_set_callback_limits */
	GRACE__CALL_N
};

struct grace__flavor_hooks {
	/* Is the calling thread inside a read-side section of this flavor, as far as the library
	 * can tell? (srcu: only sections entered from GRACE_DEBUG code.) */
	bool (*is_reader)(struct grace__flavor *f);
	/* Get the caller ready to block on a grace period of f: abort with a message naming `call`
	 * if that would deadlock; QSBR puts an online caller offline. Returns a token for
	 * leave_wait. */
	int (*enter_wait)(struct grace__flavor *f, const char *call);
	void (*leave_wait)(struct grace__flavor *f, int token);
	/* The read side, for struct grace_flavor_ops (the inline paths are in the headers). */
	int (*read_lock)(struct grace__flavor *f);
	void (*read_unlock)(struct grace__flavor *f, int token);
	/* fork() child, after the generic reset (may be NULL): the flavor's own state. */
	void (*atfork_child)(struct grace__flavor *f);
};

struct grace__flavor {
	const char *name;         /* "rcu", "qsbr", "srcu" */
	const char *const *calls; /* [GRACE__CALL_N] */
	struct grace__gp *gp;
	const struct grace__flavor_hooks *hooks;
	struct grace__registry *reg; /* reader registry (NULL: srcu) */
	unsigned int cb_workers;     /* callback workers: 0 = one per CPU */
	/* May call_*() wait up to the stall timeout at the hard limit on pending callbacks? Not
	 * srcu, whose callers may be inside a section of the same domain without the library
	 * knowing: there a call waits briefly at most (engine/callback.c, check_backlog()). */
	bool call_may_wait;
	struct grace__cbdom *cb; /* created on first use: grace__flavor_cb() */
	struct grace__lock cb_lock;
	void *owner; /* srcu: its struct srcu_struct */
};

/* The callback domain of f: NULL if none was ever created. Acquire: pairs with the release
 * publication in grace__flavor_cb_create(): the domain is complete. */
static inline struct grace__cbdom *grace__flavor_cb_peek(struct grace__flavor *f)
{
	return grace_load_acquire(&f->cb);
}
/* Create it (once; fatal with a message naming `call` if memory runs out). */
struct grace__cbdom *grace__flavor_cb_create(struct grace__flavor *f, const char *call);
/* The callback domain of f, created on first use. */
static inline struct grace__cbdom *grace__flavor_cb(struct grace__flavor *f, const char *call)
{
	struct grace__cbdom *d = grace__flavor_cb_peek(f);
	return GRACE_LIKELY(d != NULL) ? d : grace__flavor_cb_create(f, call);
}

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

void grace__cbdom_call_hurry(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func);

/* call_rcu(): inline, so that each flavor's exported call is a load, a test and a tail call. */
static inline void grace__flavor_call(struct grace__flavor *f, struct rcu_head *head,
				      rcu_callback_t func)
{
	grace__cbdom_call(grace__flavor_cb(f, f->calls[GRACE__CALL_CALL]), head, func);
}

/* call_rcu_hurry(): the same, and the grace period it needs starts without pacing. */
static inline void grace__flavor_call_hurry(struct grace__flavor *f, struct rcu_head *head,
					    rcu_callback_t func)
{
	grace__cbdom_call_hurry(grace__flavor_cb(f, f->calls[GRACE__CALL_CALL_HURRY]), head, func);
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
/* free_rcu() and its twins (engine/free.c). */
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
