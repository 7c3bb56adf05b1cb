/* SPDX-License-Identifier: MIT */
/*
 * The callback engine's grace-period policy: when a worker that has callbacks waiting for a
 * grace period starts that grace period. The decision is the only thing a policy owns; the
 * worker (engine/callback.c) gathers what it knows into a struct grace__policy_view, asks
 * grace__policy_decide(), and either drives the grace period at once or sleeps for the time
 * the decision names and asks again. The OLS 2002 trade-off lives here (docs/policies.md):
 *  GRACE_POLICY_POLL   start at once (rcu-poll): lowest latency. When grace periods run back
 *                      to back, leave at least min_gap_us between them so each serves a larger
 *                      batch; a lone callback never waits for that.
 *  GRACE_POLICY_BATCH  wait until the oldest callback has waited period_us (rcu-ltimer):
 *                      fewest grace periods per callback.
 * Whatever the policy, an urgent request (a flood past the soft limit, an expedited wait) or
 * shutdown starts the grace period at once, expedited when urgent.
 */
#ifndef GRACE_SRC_POLICY_H
#define GRACE_SRC_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/engine.h>

#define GRACE__POLICY_DEFAULT_PERIOD_US 10000u /* one 100 Hz tick, as rcu-ltimer */
#define GRACE__POLICY_DEFAULT_MIN_GAP_US 50u
#define GRACE__POLICY_MAX_PERIOD_US 10000000u

/* A domain's policy settings. Written by grace_rcu_set_policy() and its QSBR and srcu twins
 * while workers read them: every field is accessed with relaxed atomics (a worker acts on the
 * old or the new value). */
struct grace__policy {
	uint32_t kind;       /* enum grace_gp_policy */
	uint32_t period_us;  /* BATCH: how long the oldest callback waits */
	uint32_t min_gap_us; /* POLL: least time between two grace periods driven back to back */
};

/* What a worker knows when it decides, for a grace period that callbacks or a polled request
 * wait for. */
struct grace__policy_view {
	uint64_t now;
	uint64_t oldest_ns;   /* when the oldest waiting callback (or request) was harvested */
	uint64_t last_gp_end; /* when this worker's last grace-period wait ended (0: never) */
	bool urgent;          /* expedite: soft limit passed, or someone waits on the engine */
	bool stopping;        /* shutdown: never wait */
};

struct grace__policy_decision {
	int64_t sleep_ns;     /* > 0: sleep this long (woken early only by an urgent request) */
	unsigned int gpflags; /* sleep_ns == 0: drive the grace period now with these flags */
};

/* Defaults, overridden by the environment: GRACE_POLICY_BATCH=1, GRACE_BATCH_PERIOD_US,
 * GRACE_POLL_MIN_GAP_US. */
void grace__policy_init(struct grace__policy *p);
/* For grace_rcu_set_policy() and its twins: 0, or -EINVAL for an unknown policy or a period
 * outside 1..GRACE__POLICY_MAX_PERIOD_US (BATCH). */
int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us);
struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v);

#endif
