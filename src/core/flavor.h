/* SPDX-License-Identifier: MIT */
/*
 * struct grace__flavor: one flavor (the default flavor, QSBR) or one srcu domain, as the rest of
 * the library sees it. A flavor is a grace-period sequence (core/gp.h) whose driver runs the
 * flavor's reader wait, a callback domain (engine/callback.h) created on first use, the hooks
 * below, the names of its public calls, and its engine policy (held by the callback domain).
 * The descriptor says what the modules above would otherwise guess from names or addresses:
 * the names of its calls (for messages), its per-thread free cache, the words of its exit
 * report.
 *
 * Only the descriptor lives here, on the ground floor. The update side written once over it
 * (synchronize, the polled API, call, barrier, policy, limits, stats, struct grace_flavor_ops)
 * is flavor/update.c, which may use the engine; each flavor's file (flavor/memb.c, qsbr.c,
 * srcu.c) defines its descriptor, its reader side and its exported functions.
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

/* The public calls of a flavor, for messages that name the call the user made. */
enum grace__call {
	GRACE__CALL_SYNC,          /* synchronize_rcu */
	GRACE__CALL_SYNC_EXP,      /* synchronize_rcu_expedited */
	GRACE__CALL_CALL,          /* call_rcu */
	GRACE__CALL_CALL_HURRY,    /* call_rcu_hurry */
	GRACE__CALL_BARRIER,       /* rcu_barrier */
	GRACE__CALL_COND_SYNC,     /* cond_synchronize_rcu */
	GRACE__CALL_POLL_STATE,    /* poll_state_synchronize_rcu */
	GRACE__CALL_START_POLL,    /* start_poll_synchronize_rcu */
	GRACE__CALL_SET_POLICY,    /* grace_rcu_set_policy */
	GRACE__CALL_SET_LIMITS,    /* grace_rcu_set_callback_limits */
	GRACE__CALL_FREE,          /* free_rcu */
	GRACE__CALL_FREE_PTR,      /* free_rcu_mightsleep */
	GRACE__CALL_FREE_BARRIER,  /* free_rcu_barrier */
	GRACE__CALL_RETIRE,        /* rcu_retire */
	GRACE__CALL_SET_FREE_HOOK, /* grace_rcu_set_free_hook */
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
	struct grace__cbdom *cb; /* created on first use: grace__engine_of() */
	struct grace__lock cb_lock;
	void *owner; /* srcu: its struct srcu_struct */
	/* free_rcu(): the slot of the calling thread's cache of this flavor (engine/free.c), or -1
	 * when every free goes to the engine (srcu domains come and go). */
	int free_slot;
	/* The function that frees its objects once their grace period has ended (NULL: free()),
	 * and whether one was queued already, after which it is fixed (engine/free.c). */
	void (*free_fn)(void *);
	uint32_t free_used;
	/* Why exit() from a thread inside a section cannot wait for this flavor's callbacks (the
	 * exit handler's warning, engine/callback.c). */
	const char *exit_in_reader;
};

/* The callback domain of f: NULL if none was ever created. Acquire: pairs with the release
 * publication in grace__engine_create() (engine/callback.c): the domain is complete. */
static inline struct grace__cbdom *grace__flavor_cb_peek(struct grace__flavor *f)
{
	return grace_load_acquire(&f->cb);
}

#endif
