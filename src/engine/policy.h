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
 *  GRACE_POLICY_LAZY      (Linux's RCU_LAZY) BATCH whose wait counts from when a callback could
 *                         first have been found: a callback found after the worker napped is
 *                         taken to have waited since the nap began (grace__policy_stamp()), so none waits
 *                         more than period_us for its grace period to start. While callbacks
 *                         keep coming (found at least once per two periods), the worker naps
 *                         for period_us between grace periods instead of sleeping until a push
 *                         wakes it: one wake-up and one grace period per period, whatever the
 *                         rate. A polled request (start_poll) does not wait: it starts its
 *                         grace period at once, keeping POLL's least gap after one that has
 *                         just ended. Memory pressure ends the wait of everything queued: the
 *                         threads that queue callbacks see it (grace__policy_pressure(): the
 *                         domain's pending callbacks past a quarter of its soft limit, or the
 *                         PSI file's memory stall time at 1% of the time or more since its
 *                         last sample, taken at most every 100 ms process-wide) and bump a
 *                         generation; each worker that sees it hurries every callback it then
 *                         holds, as call_rcu_hurry() would (the engine's worker_pass()).
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

#define GRACE__POLICY_DEFAULT_PERIOD_US 10000u        /* BATCH: one 100 Hz tick, as rcu-ltimer */
#define GRACE__POLICY_DEFAULT_LAZY_PERIOD_US 1000000u /* LAZY: 1 s */
#define GRACE__POLICY_LAZY_SOFT_SHARE 4u        /* LAZY: pressure past soft limit / 4 pending */
#define GRACE__POLICY_PSI_EVERY_NS 100000000ull /* LAZY: one PSI sample per 100 ms at most */
#define GRACE__POLICY_PSI_STALL_PPM 10000u      /* LAZY: pressure at 1% memory stall time */
#define GRACE__POLICY_DEFAULT_MIN_GAP_US 50u    /* POLL */
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
	uint32_t period_us;  /* BATCH, LAZY: how long the oldest callback waits; ADAPTIVE: cap */
	uint32_t min_gap_us; /* POLL: least time between two grace periods driven back to back */
	uint64_t pace_ns;    /* ADAPTIVE: current pacing interval (see above) */
	uint64_t last_end;   /* when a worker's grace period last ended (any worker) */
	uint32_t pressure;   /* LAZY: bumped each time memory pressure is seen */
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
	bool requested;       /* a polled request (start_poll) waits */
};

struct grace__policy_decision {
	int64_t sleep_ns;     /* > 0: sleep this long (woken early only by an urgent request) */
	unsigned int gpflags; /* sleep_ns == 0: drive the grace period now with these flags */
	bool gap;             /* the sleep is only the least gap after a grace period that has
			       * just ended: neither pushes, hurries nor memory pressure end it */
};

/* Defaults, overridden by the environment: GRACE_POLICY=poll|batch|adaptive|lazy (or the older
 * GRACE_POLICY_BATCH=1), GRACE_BATCH_PERIOD_US, GRACE_LAZY_PERIOD_US, GRACE_PACE_CAP_US
 * (ADAPTIVE's cap), GRACE_POLL_MIN_GAP_US. */
void grace__policy_init(struct grace__policy *p);
/* For grace_rcu_set_policy() and its twins: 0, or -EINVAL for an unknown policy or a period
 * outside 1..GRACE__POLICY_MAX_PERIOD_US (BATCH; ADAPTIVE also takes 0: the default cap; LAZY
 * too: the default period, GRACE__POLICY_DEFAULT_LAZY_PERIOD_US). */
int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us);
struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v);
/* A worker's grace period ended at `now`; cost_ns is the worker CPU time it took when it was
 * sampled (0: not sampled). */
void grace__policy_gp_done(struct grace__policy *p, uint64_t now, uint64_t cost_ns);
/* Nothing waits: how long should the worker nap before looking again (0: sleep until woken)?
 * arrival_ns is the worker's running mean of the time between passes that found new callbacks,
 * last_new when a pass last found some.
 * ADAPTIVE naps for pace while grace periods have been running back to back and callbacks have
 * been arriving at least once per two paces: then a nap (a timer, no barrier) is cheaper than a
 * sleep that each new callback ends with a wake-up call and that starts with a heavy barrier.
 * LAZY naps for its period while callbacks have been found at least once per two periods. */
int64_t grace__policy_linger_ns(const struct grace__policy *p, uint64_t now, uint64_t arrival_ns,
				uint64_t last_new);
/* The time a pass at `now` stamps the callbacks it finds with (their wait counts from it).
 * floor_ns: when the worker last looked at its queues before a sleep that a push does not end
 * (a nap or a timed wait; 0 after a sleep that the first push ends, or none). LAZY: the floor,
 * when there is one: a callback found now may have been pushed just after it. Others: now. */
uint64_t grace__policy_stamp(const struct grace__policy *p, uint64_t now, uint64_t floor_ns);
/* LAZY only, for a thread that queues callbacks (every few calls): backlog is the domain's
 * pending callbacks, soft_total its soft limit times its CPUs. Returns true, having bumped the
 * pressure generation, when pending callbacks pass soft_total / GRACE__POLICY_LAZY_SOFT_SHARE
 * or when this call's sample of the PSI file (one per GRACE__POLICY_PSI_EVERY_NS process-wide)
 * finds memory stall time at GRACE__POLICY_PSI_STALL_PPM or more; the caller then wakes the
 * workers that wait. Never blocks: at most one read of the PSI file. */
bool grace__policy_pressure(struct grace__policy *p, uint64_t now, int64_t backlog,
			    int64_t soft_total);
/* Bump the pressure generation unconditionally (a queuing thread that must not wait a lazy
 * period: the deferral passes' backlog, engine/defer.c point D8); the caller then wakes the
 * workers that wait, as after grace__policy_pressure(). */
void grace__policy_press(struct grace__policy *p);
/* The pressure generation: a worker that finds it changed since it last looked hurries what it
 * holds, and does not begin a timed sleep. */
uint32_t grace__policy_pressure_gen(const struct grace__policy *p);

#endif
