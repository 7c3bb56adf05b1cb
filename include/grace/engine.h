/* SPDX-License-Identifier: MIT */
/*
 * Callback-engine policy and statistics types, shared by every flavor (rcu.h, qsbr.h, srcu.h).
 *
 * Policies (the OLS 2002 paper's latency/overhead trade-off; docs/policies.md maps them to its
 * seven implementations):
 *  GRACE_POLICY_ADAPTIVE  the default: the latency of POLL when the domain is idle, paced when
 *                      it is busy. A grace period starts at once unless one ended less than
 *                      `pace` ago, else as soon as pace has passed; pace is 200 times the CPU
 *                      time a grace period costs the engine, between 50 us and a cap (1 ms;
 *                      the set_policy period in microseconds if not 0). So there are at most
 *                      1/pace grace periods per second (1000/s at the 1 ms cap), costing
 *                      about 0.5% of one CPU per domain below the cap (cost / 1 ms at it),
 *                      and a callback's grace period starts at most
 *                      pace after it is queued. call_rcu_hurry() skips the pacing.
 *  GRACE_POLICY_POLL   a worker starts a grace period as soon as callbacks wait for one and
 *                      drives it to the end (rcu-poll): lowest callback latency. All callbacks
 *                      queued while a grace period runs share the next one. When grace
 *                      periods run back to back, a worker leaves at least 50 us between them
 *                      (GRACE_POLL_MIN_GAP_US, 0 to disable) so each serves a larger batch;
 *                      a lone callback never waits for that.
 *  GRACE_POLICY_BATCH  callbacks wait until the oldest has waited `period_us` (default 10000,
 *                      one 100 Hz tick as in rcu-ltimer), then one grace period serves all of
 *                      them: fewest grace periods and wake-ups per callback, lowest overhead.
 *  GRACE_POLICY_LAZY   lazy callbacks (Linux's RCU_LAZY): a callback waits at most `period_us`
 *                      (0: the default, 1 s) for its grace period to start, and while callbacks
 *                      keep coming the worker wakes once per period, not at each call_rcu(),
 *                      so one grace period and one wake-up serve every callback of the period.
 *                      call_rcu_hurry(), barriers, the exit drain and start_poll_synchronize_*()
 *                      do not wait; memory pressure ends the wait early: pending callbacks past
 *                      a quarter of the soft limit, or the kernel's memory pressure (PSI, file
 *                      GRACE_MEMORY_PRESSURE, default /proc/pressure/memory) showing tasks
 *                      stalled on memory 1% of the time or more (docs/policies.md).
 * Expediting on demand: synchronize_*_expedited(), and the engine itself when a queue passes
 * its soft limit (a flood, or a stalled reader), whatever the policy. The environment variable
 * GRACE_POLICY=adaptive|poll|batch|lazy chooses the start-up policy of every domain.
 *
 * Memory bound: more than `soft` x CPUs callbacks queued and not yet invoked make the engine
 * expedite its grace periods and wake its workers (the queuing thread never drives a grace
 * period itself: that has no time bound); past `hard` x CPUs the queuing thread waits (for a
 * grace period and the invocations it allows) before returning, so pending callbacks never
 * exceed about hard x CPUs (+ 32 per thread queuing at that moment, the check being amortised
 * over 32 calls; + the callbacks of threads that queue from inside a read-side section or a
 * callback, where waiting would deadlock). One call waits at most the stall timeout (at least
 * 1 s; 100 ms for call_srcu(), whose caller may be a reader of the domain): so call_* may be
 * called with any lock held. If no callback ran during that wait (a reader stalled, or
 * blocked on a lock the queuing thread holds; the stall warning names it), a warning naming
 * the domain says so, and calls queue without waiting, memory growing, until a callback runs
 * again. Defaults: soft 10000, hard 100000 per CPU.
 *
 * Process events: fork() pauses the workers between two callbacks (100 ms at most); the child
 * runs every callback its parent had queued, the batch a worker was invoking included (a
 * callback still running after those 100 ms counts as run). At exit() a handler runs what it
 * can within GRACE_EXIT_TIMEOUT_MS milliseconds (default 2000, all flavors together) and leaves
 * the rest, with a warning (docs/api.md, "Process events").
 */
#ifndef GRACE_ENGINE_H
#define GRACE_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>

GRACE_BEGIN_DECLS

enum grace_gp_policy {
	GRACE_POLICY_POLL = 0,
	GRACE_POLICY_BATCH = 1,
	GRACE_POLICY_ADAPTIVE = 2,
	GRACE_POLICY_LAZY = 3, /* after 0.3.0 */
};

struct grace_cb_stats {
	uint64_t queued;        /* callbacks ever queued */
	uint64_t invoked;       /* callbacks ever invoked */
	uint64_t pending;       /* queued - invoked, at the time of the call */
	uint64_t grace_periods; /* grace periods completed by the flavor (any cause) */
	uint64_t waits;         /* times a call_* waited at the hard limit */
	uint64_t worker_cpu_ns; /* CPU time consumed by the flavor's callback workers */
	unsigned int workers;   /* worker threads running */
};

GRACE_END_DECLS

#endif /* GRACE_ENGINE_H */
