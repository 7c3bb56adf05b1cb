/* SPDX-License-Identifier: MIT */
/*
 * The grace-period sequence engine, one per domain (the default flavor, QSBR, each srcu domain).
 *
 * seq is a 64-bit counter in the style of Linux's rcu_seq: bits 0-1 hold the state (0 idle,
 * 1 a grace period in progress), the rest count completed grace periods. A cookie is the value
 * seq must reach for a full grace period to have elapsed since the cookie was taken; every way
 * of waiting (synchronize, cond_synchronize, poll_state, the callback engine) waits for seq to
 * pass a cookie, so concurrent waiters share grace periods and the polled API comes for free.
 *
 * One thread at a time drives grace periods: the one whose compare-and-swap moves seq from idle
 * to "in progress" (the state bits are the driver's lock: there is no other). The others sleep
 * on the `event` futex, bumped when a driver finishes while someone sleeps, and take over
 * driving when they need a later grace period.
 */
#ifndef GRACE_SRC_GP_H
#define GRACE_SRC_GP_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include "core/annotate.h"
#include "core/wait.h" /* struct grace__barrier_cost */

#define GRACE__SEQ_STATE_MASK 3ull
#define GRACE__SEQ_RUNNING 1ull /* under way, with a driver */
#define GRACE__SEQ_STEPPED 2ull /* under way, no driver: the next to come adopts it (gp.c) */
#define GRACE__GP_EXPEDITED 1u

struct grace__gp;
typedef void (*grace__wait_readers_fn)(struct grace__gp *gp, unsigned int flags);
/* A non-blocking step toward cookie s (gp.c, "Stepped grace periods"): true if s completed. */
typedef bool (*grace__gp_step_fn)(struct grace__gp *gp, uint64_t s, bool may_begin);

struct grace__gp {
	uint64_t seq GRACE_ALIGNED_CACHE;
	uint32_t event;     /* futex word: bumped when a driver finishes and someone sleeps */
	uint32_t nsleepers; /* threads sleeping on event */
	uint64_t steps;     /* grace periods ended by steppers (relaxed: the engine's hint) */
	struct grace__barrier_cost step_cost; /* barrier A's (grace__heavy_barrier_timed()) */
	grace__wait_readers_fn wait_readers GRACE_ALIGNED_CACHE; /* the flavor's part of a GP */
	/* Flavors whose grace periods can be stepped (NULL: not this one): the non-blocking step,
	 * and the rest of a stepped grace period for a driver that adopts it and may block. */
	grace__gp_step_fn step;
	grace__wait_readers_fn resume;
	/* The shortest step of the threads that step it, in slots (engine/free.c, step_len_of());
	 * 0: the engine's least. Set with step, before any thread retires. */
	uint32_t step_least;
	void *flavor; /* the flavor's state for wait_readers */
	const char *name;
};

#define GRACE__GP_INIT(fn, flv, nm)                                                          \
	{                                                                                    \
		.seq = 0, .event = 0, .nsleepers = 0, .wait_readers = (fn), .flavor = (flv), \
		.name = (nm)                                                                 \
	}

void grace__gp_init(struct grace__gp *gp, grace__wait_readers_fn fn, void *flavor,
		    const char *name);

/* The cookie for a grace period that starts after this call. Full barrier first: the caller's
 * earlier accesses are ordered before the read of seq (pairs with the smp_mb after seq_start in
 * gp.c, see the argument there). */
static inline uint64_t grace__gp_snap(struct grace__gp *gp)
{
	grace_smp_mb();
	uint64_t s = grace_load_acquire(&gp->seq);
	return (s + 2 * GRACE__SEQ_STATE_MASK + 1) & ~GRACE__SEQ_STATE_MASK;
}
/* The cookie of a grace period already under way or, if idle, of the next one: a lower bound
 * no wait can be shorter than. Used by get_state (same value Linux returns). */
static inline uint64_t grace__gp_current(struct grace__gp *gp)
{
	return grace__gp_snap(gp);
}
/* Has the grace period of cookie s completed? Acquire: everything the readers of that grace
 * period did happens before what the caller does next (pairs with the release in seq_end). */
static inline bool grace__gp_done(struct grace__gp *gp, uint64_t s)
{
	return grace__ann_done(&gp->seq, (int64_t)(grace_load_acquire(&gp->seq) - s) >= 0);
}
static inline bool grace__gp_in_progress(struct grace__gp *gp)
{
	return (grace_load_relaxed(&gp->seq) & GRACE__SEQ_STATE_MASK) != 0;
}

/* Is the calling thread driving a grace period of gp right now? Only a stall handler (the
 * one piece of program code a driver runs, core/diag.c) can ask while it is: a wait for gp
 * from there would wait for itself. */
bool grace__gp_driving(const struct grace__gp *gp);
/* Block until cookie s has completed, driving grace periods as needed. */
void grace__gp_wait(struct grace__gp *gp, uint64_t s, unsigned int flags);
/* Wait for a grace period that starts after the call (synchronize): the cookie of
 * grace__gp_snap(), except that a caller that finds no grace period under way drives one at
 * once, ordered by the compare-and-swap that starts it (no fence of its own). */
void grace__gp_synchronize(struct grace__gp *gp, unsigned int flags);
/* Drive grace periods until s completes if nobody else is driving; never sleeps on another
 * driver. Returns true if s has completed on return. */
bool grace__gp_try_drive(struct grace__gp *gp, uint64_t s, unsigned int flags);
/* The primitives of a stepped grace period (gp.c, "Stepped grace periods"), for a flavor's
 * step function. start: from idle to RUNNING (a full barrier after); adopt: from STEPPED to
 * RUNNING; both set *base to the idle value the grace period started from. end: the driver's
 * seq_end. park: from RUNNING back to STEPPED, waking the threads asleep on a driver. */
bool grace__gp_step_start(struct grace__gp *gp, uint64_t *base);

bool grace__gp_step_adopt(struct grace__gp *gp, uint64_t *base);
void grace__gp_step_end(struct grace__gp *gp, uint64_t base);
void grace__gp_step_park(struct grace__gp *gp, uint64_t base);
/* Fork: roll an unfinished grace period back in the child. */
void grace__gp_reset_after_fork(struct grace__gp *gp);

#endif
