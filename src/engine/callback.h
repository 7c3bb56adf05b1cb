/* SPDX-License-Identifier: MIT */
/*
 * The callback engine, internal interface: one callback domain per grace-period domain
 * (default flavor, QSBR, each srcu_struct that uses call_srcu).
 *
 * A domain has one queue per CPU. call_* pushes onto the queue of the CPU it runs on (CPU
 * number from the rseq area via sched_getcpu) with one atomic read-modify-write; the queue's
 * worker thread (one per CPU, pinned to it when possible, started lazily) harvests it, tags the
 * batch with the cookie of the grace period it needs (grace__gp_snap), keeps batches in
 * segments ordered by cookie, drives or awaits grace periods according to the policy, and
 * invokes every segment whose cookie has completed: one grace period retires a whole batch.
 */
#ifndef GRACE_SRC_CALLBACK_H
#define GRACE_SRC_CALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/engine.h>
#include <grace/pointer.h>

#include "core/gp.h"

struct grace__cbdom;

/* How the engine asks the flavor whether the calling thread may block on a grace period. */
struct grace__cbdom_ops {
	/* Prepare the caller for a blocking wait on this domain: abort with a misuse message
	 * naming `call` if waiting would deadlock (inside a read-side section), or make the caller
	 * quiescent (QSBR: offline). Returns a token for leave_wait. */
	int (*enter_wait)(const char *call);
	void (*leave_wait)(int token);
	/* Would a wait deadlock right now (caller inside a read-side section of the domain)?
	 * The engine then skips the optional waits (helping, the hard limit). */
	bool (*caller_is_reader)(void);
};

/* Create a domain bound to gp. nworkers 0: one per CPU. Returns NULL on allocation failure. */
struct grace__cbdom *grace__cbdom_create(struct grace__gp *gp, const struct grace__cbdom_ops *ops,
					 const char *name, unsigned int nworkers);
/* Destroy: -EBUSY (and nothing freed) if callbacks are pending; stops and joins the workers. */
int grace__cbdom_destroy(struct grace__cbdom *d);

void grace__cbdom_call(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func,
		       const char *call);
/* Wait until every callback queued before the call has been invoked. */
void grace__cbdom_barrier(struct grace__cbdom *d, const char *call);
/* Make sure a grace period completing `cookie` will run, without waiting for it. */
void grace__cbdom_request_gp(struct grace__cbdom *d, uint64_t cookie);
/* Callbacks queued and not yet invoked. */
uint64_t grace__cbdom_pending(struct grace__cbdom *d);
int grace__cbdom_set_policy(struct grace__cbdom *d, enum grace_gp_policy p, unsigned int period_us);
int grace__cbdom_set_limits(struct grace__cbdom *d, size_t soft, size_t hard);
void grace__cbdom_stats(struct grace__cbdom *d, struct grace_cb_stats *st);

/* Is the calling thread a callback worker running a callback right now? */
bool grace__in_callback(void);

#endif
