/* SPDX-License-Identifier: MIT */
/*
 * The callback engine's grace-period policy: when a worker that has callbacks waiting for a
 * grace period starts that grace period, and how it sleeps when nothing waits. The decisions are
 * the only thing a policy owns; the worker (engine/callback.c) gathers what it knows into a
 * struct grace__policy_view, asks, and either drives the grace period at once or sleeps for the
 * time the decision names and asks again. The OLS 2002 trade-off lives here (docs/policies.md):
 *  GRACE_POLICY_POLL      start at once (rcu-poll): lowest latency. When grace periods run
 *                         back to back, leave at least min_gap_us between them so each serves
 *                         a larger batch; a lone callback never waits for that.
 *  GRACE_POLICY_BATCH     wait until the oldest callback has waited period_us (rcu-ltimer):
 *                         fewest grace periods per callback.
 *  GRACE_POLICY_ADAPTIVE  (the default) POLL's latency when the domain is idle, paced when it is
 *                         busy: a grace period starts at once unless the last one ended less
 *                         than `pace` ago, else when `pace` has passed. pace follows the cost of
 *                         a grace period: 200 times the worker CPU time the last sampled grace
 *                         period cost, kept within [GRACE__POLICY_PACE_MIN_NS, cap] (cap: 1 ms,
 *                         or the period given to the set_policy call). So the grace periods
 *                         the engine drives cost at most 0.5% of one CPU per domain while pace
 *                         is below the cap, and there are at most 1/pace of them per second;
 *                         a callback waits at most pace (+ the grace period) for its grace
 *                         period to start. While callbacks keep arriving at least once per two
 *                         paces, the worker naps for pace between grace periods (no barrier, no
 *                         wake-up call from the queuing threads) rather than sleeping until
 *                         woken.
 * Whatever the policy, an urgent request (a flood past the soft limit, an expedited wait) or
 * shutdown starts the grace period at once, expedited when urgent; a barrier (rcu_barrier(),
 * the exit drain) starts it at once, not expedited; a hurried callback (call_rcu_hurry())
 * starts it without pacing or batch period, not expedited, keeping only POLL's least gap
 * (min_gap_us) after a grace period that has just ended: a flood of hurried callbacks runs
 * grace periods as POLL does.
 */
#ifndef GRACE_SRC_POLICY_H
#define GRACE_SRC_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/engine.h>

#define GRACE__POLICY_DEFAULT_PERIOD_US 10000u /* BATCH: one 100 Hz tick, as rcu-ltimer */
#define GRACE__POLICY_DEFAULT_MIN_GAP_US 50u   /* POLL */
#define GRACE__POLICY_MAX_PERIOD_US 10000000u
#define GRACE__POLICY_PACE_MIN_NS 50000ull      /* ADAPTIVE: never paced below 50 us */
#define GRACE__POLICY_DEFAULT_PACE_CAP_US 1000u /* ADAPTIVE: latency cap of the pacing */
#define GRACE__POLICY_COST_FACTOR 200u          /* pace = 200 x cost: 0.5% of a CPU */
#define GRACE__POLICY_SAMPLE_EVERY 16u          /* sample the cost of 1 grace period in 16 */

/* A domain's policy settings and pacing state. Written by grace_rcu_set_policy() and its QSBR
 * and srcu twins, and by the workers, while other workers read them: every field is accessed
 * with relaxed atomics (a worker acts on the old or the new value). */
struct grace__policy {
	uint32_t kind;       /* enum grace_gp_policy */
	uint32_t period_us;  /* BATCH: how long the oldest callback waits; ADAPTIVE: pacing cap */
	uint32_t min_gap_us; /* POLL: least time between two grace periods driven back to back */
	uint64_t pace_ns;    /* ADAPTIVE: current pacing interval (see above) */
	uint64_t last_end;   /* when a worker's grace period last ended (any worker) */
};

/* What a worker knows when it decides, for a grace period that callbacks or a polled request
 * wait for. */
struct grace__policy_view {
	uint64_t now;
	uint64_t oldest_ns;   /* when the oldest waiting callback (or request) was harvested */
	uint64_t last_gp_end; /* when this worker's last grace-period wait ended (0: never) */
	bool urgent;          /* expedite: soft limit passed, or someone waits on the engine */
	bool hurry;           /* a call_rcu_hurry() callback waits: no pacing, only the
			       * least gap after a grace period that just ended */
	bool flush;           /* a barrier waits: at once */
	bool stopping;        /* shutdown: never wait */
};

struct grace__policy_decision {
	int64_t sleep_ns;     /* > 0: sleep this long (woken early only by an urgent request) */
	unsigned int gpflags; /* sleep_ns == 0: drive the grace period now with these flags */
};

/* Defaults, overridden by the environment: GRACE_POLICY=poll|batch|adaptive (or the older
 * GRACE_POLICY_BATCH=1), GRACE_BATCH_PERIOD_US, GRACE_PACE_CAP_US (ADAPTIVE's cap),
 * GRACE_POLL_MIN_GAP_US. */
void grace__policy_init(struct grace__policy *p);
/* For grace_rcu_set_policy() and its twins: 0, or -EINVAL for an unknown policy or a period
 * outside 1..GRACE__POLICY_MAX_PERIOD_US (BATCH; ADAPTIVE also takes 0: the default cap). */
int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us);
struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v);
/* A worker's grace period ended at `now`; cost_ns is the worker CPU time it took when it was
 * sampled (0: not sampled). */
void grace__policy_gp_done(struct grace__policy *p, uint64_t now, uint64_t cost_ns);
/* Nothing waits: how long should the worker nap before looking again (0: sleep until woken)?
 * arrival_ns is the worker's running mean of the time between passes that found new callbacks.
 * ADAPTIVE naps for pace while grace periods have been running back to back and callbacks have
 * been arriving at least once per two paces: then a nap (a timer, no barrier) is cheaper than a
 * sleep that each new callback ends with a wake-up call and that starts with a heavy barrier. */
int64_t grace__policy_linger_ns(const struct grace__policy *p, uint64_t now, uint64_t arrival_ns);

#endif
