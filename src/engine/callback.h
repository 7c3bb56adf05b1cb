/* SPDX-License-Identifier: MIT */
/*
 * The callback engine, internal interface: one callback domain per flavor (default flavor,
 * QSBR, each srcu domain that uses call_srcu), created on first use (grace__engine_of()).
 * Above the ground floor (core/) and below the flavors: the flavors' update side
 * (flavor/update.c) and the per-thread frees (engine/free.c) reach a flavor's domain through
 * its descriptor, with the grace__engine_*() calls at the end of this file.
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

/* call_*: queue head; call_*_hurry: and start the grace period it needs without pacing. */
void grace__cbdom_call(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func);
void grace__cbdom_call_hurry(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func);
/* Wait until every callback queued before the call has been invoked. */
void grace__cbdom_barrier(struct grace__cbdom *d, const char *call);
/* Make sure a grace period completing `cookie` will run, without waiting for it. */
void grace__cbdom_request_gp(struct grace__cbdom *d, uint64_t cookie);
/* LAZY: end every lazy wait of d and hurry what its workers hold, as memory pressure does
 * (docs/policies.md, "Lazy callbacks"): for a thread that waits for callbacks it queued. */
void grace__cbdom_press(struct grace__cbdom *d);
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
/* ... one of d's callbacks? */
bool grace__in_callback_of(const struct grace__cbdom *d);

/* fork(): every domain's locks, taken in prepare and released or reset after. */
void grace__cb_atfork_pause(void); /* before any other prepare handler of grace */
void grace__cb_atfork_prepare(void);
void grace__cb_atfork_parent(void);
void grace__cb_atfork_child(void);
/* Callbacks a fork child counted as run unfinished (fork_pause_workers() gave up): for tests. */
extern uint32_t grace__cb_fork_abandoned_total;

/* ---- a flavor's engine, through its descriptor ---- */

/* Create f's domain (once; fatal with a message naming `call` if memory runs out). */
struct grace__cbdom *grace__engine_create(struct grace__flavor *f, const char *call);
/* The callback domain of f, created on first use. */
static inline struct grace__cbdom *grace__engine_of(struct grace__flavor *f, const char *call)
{
	struct grace__cbdom *d = grace__flavor_cb_peek(f);
	return GRACE_LIKELY(d != NULL) ? d : grace__engine_create(f, call);
}
/* call_rcu() on f: a load, a test and a tail call. */
static inline void grace__engine_call(struct grace__flavor *f, struct rcu_head *head,
				      rcu_callback_t func)
{
	grace__cbdom_call(grace__engine_of(f, f->calls[GRACE__CALL_CALL]), head, func);
}
/* grace__engine_call() for a callback with no latency to keep (free.c's monitor, which only
 * looks for a thread that stopped calling). While such callbacks are all that waits (no other
 * callback, no polled request, nothing urgent), a worker lets them wait STEP_PATIENT_NS before
 * it drives or awaits their grace period (callback.c, worker_advance()): with threads stepping,
 * it looks every 100 ms, not every STEP_DEFER_NS. func's first act is
 * grace__engine_patient_begun(f). */
void grace__engine_call_patient(struct grace__flavor *f, struct rcu_head *head,
				rcu_callback_t func);
void grace__engine_patient_begun(struct grace__flavor *f);
/* start_poll on f: the cookie of a grace period that starts after this call (full fence
 * first, core/gp.h), which the engine will run without being asked again. */
unsigned long grace__engine_start_poll(struct grace__flavor *f, const char *call);
/* rcu_barrier() on f, named `call` in reports: the context checks of a wait, then every callback
 * queued before the call has been invoked. */
void grace__engine_barrier(struct grace__flavor *f, const char *call);
/* A wait on f from the thread that drives its grace period (a stall handler) would never end:
 * misuse, fatal, naming `call`. */
void grace__engine_check_not_driving(struct grace__flavor *f, const char *call);

#endif
