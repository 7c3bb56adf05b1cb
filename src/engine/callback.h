/* SPDX-License-Identifier: MIT */
/*
 * The callback engine, internal interface: one callback domain per flavor (default flavor,
 * QSBR, each srcu domain that uses call_srcu), created by core/flavor.c on first use.
 *
 * A domain has one queue per CPU. call_* pushes onto the queue of the CPU it runs on (CPU
 * number from the rseq area) with no atomic read-modify-write: an rseq critical section whose
 * commit is a release store (a compare-and-swap for threads that cannot use rseq; see
 * callback.c). The queue's worker thread (one per CPU, pinned to it when possible, started
 * lazily) harvests it, tags the batch with the cookie of the grace period it needs
 * (grace__gp_snap), keeps batches in segments ordered by cookie, asks the domain's policy
 * (engine/policy.h) when to drive the grace period, and invokes every segment whose cookie has
 * completed: one grace period retires a whole batch.
 */
#ifndef GRACE_SRC_CALLBACK_H
#define GRACE_SRC_CALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/engine.h>
#include <grace/pointer.h>

#include "core/flavor.h"

struct grace__cbdom;

/* Create flavor f's domain. nworkers 0: one per CPU. Returns NULL on allocation failure. */
struct grace__cbdom *grace__cbdom_create(struct grace__flavor *f, unsigned int nworkers);
/* Destroy: -EBUSY (and nothing freed) if callbacks are pending; stops and joins the workers.
 * Returns 0, or 1 when the exit drain is running: then d is kept (the drain may be using it
 * without a lock) and so must be its flavor (the caller must not free d->f or its gp). */
int grace__cbdom_destroy(struct grace__cbdom *d);

/* grace__cbdom_call() is declared in core/flavor.h (its inline call path uses it). */
/* Wait until every callback queued before the call has been invoked. */
void grace__cbdom_barrier(struct grace__cbdom *d, const char *call);
/* Make sure a grace period completing `cookie` will run, without waiting for it. */
void grace__cbdom_request_gp(struct grace__cbdom *d, uint64_t cookie);
/* poll_state found `cookie` not complete: make sure a requested grace period has a worker to
 * run it (a fork child that only polls). Cheap when there is nothing to do. */
void grace__cbdom_poll_missed(struct grace__cbdom *d, uint64_t cookie);
/* Callbacks queued and not yet invoked. */
uint64_t grace__cbdom_pending(struct grace__cbdom *d);
int grace__cbdom_set_policy(struct grace__cbdom *d, enum grace_gp_policy p, unsigned int period_us);
int grace__cbdom_set_limits(struct grace__cbdom *d, size_t soft, size_t hard);
void grace__cbdom_stats(struct grace__cbdom *d, struct grace_cb_stats *st);

/* Is the calling thread a callback worker running a callback right now? */
bool grace__in_callback(void);

/* fork(): every domain's locks, taken in prepare and released or reset after. */
void grace__cb_atfork_pause(void); /* before any other prepare handler of grace */
void grace__cb_atfork_prepare(void);
void grace__cb_atfork_parent(void);
void grace__cb_atfork_child(void);
/* Callbacks a fork child counted as run unfinished (fork_pause_workers() gave up): for tests. */
extern uint32_t grace__cb_fork_abandoned_total;

#endif
