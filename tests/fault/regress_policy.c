/* SPDX-License-Identifier: MIT */
/*
 * The policies' bounds on how many grace periods the engine runs (docs/policies.md, "The
 * policies"; docs/api.md, grace_rcu_set_policy()). Each case runs in a child (a fresh engine)
 * pinned to one CPU, so that one queue and its one worker serve a flood of call_rcu() (about
 * 10^6 calls/s at most, 64 per 20 us nap) with no soft limit (its expedited grace periods
 * are not any policy's) and no synchronize_rcu(): every grace period counted is one the engine
 * started for callbacks under the policy. Every check is an upper bound on a count, or a lower
 * bound on a wait, which a slower or loaded machine only stays further from:
 *   poll_flood_keeps_gap      POLL: "when grace periods run back to back a worker leaves
 *                             GRACE_POLL_MIN_GAP_US between them": with a 2 ms gap, at most
 *                             one grace period per 2 ms of flood (plus the one under way)
 *   adaptive_flood_keeps_pace ADAPTIVE: "the engine's grace periods number at most 1/pace per
 *                             second", pace at least 50 us: at most 20000/s; and "while callbacks
 *                             keep arriving, the workers nap between grace periods instead of
 *                             being woken by every call_rcu()": the workers' wake-ups (voluntary
 *                             context switches) stay within 3 per grace period plus 10 (about
 *                             1.1 per grace period here)
 *   adaptive_chain_keeps_pace ADAPTIVE: "when grace periods follow each other, the next starts
 *                             pace after the last ended": a chain of 2000 callbacks, each
 *                             queued by the one before, takes at least 1999 x 50 us (unpaced,
 *                             a link costs well under a microsecond here: no reader threads)
 *   batch_flood_one_per_period BATCH (50 ms): "when the oldest harvested callback has waited
 *                             P; one grace period then serves every callback queued so far":
 *                             at most one grace period per 50 ms of flood
 *   batch_lone_callback_waits BATCH (100 ms): a callback queued on an idle domain is not run
 *                             before it has waited the period
 *   batch_soft_limit_expedites expedited (docs/policies.md): "the engine itself past a queue's
 *                             soft limit (flood or stalled reader), whatever the policy": under
 *                             BATCH with a 10 s period, of 5000 callbacks queued past a soft
 *                             limit of 10 per CPU, all but what the soft limit lets wait (10 x
 *                             the possible CPUs, plus the 31 calls after a thread's last look
 *                             at the backlog: docs/api.md, "every 32 calls a thread checks the
 *                             backlog"; these may wait for the period) run long before
 *                             the period ends (checked at 8 s: the bound is the policy's 10 s,
 *                             not a speed)
 *   lazy_wakeups_one_per_period LAZY (100 ms): "while callbacks keep coming ... the worker naps a
 *                             period between passes, and call_rcu() never wakes it: one timer
 *                             wake-up per period. A domain that goes quiet costs one empty nap,
 *                             then the worker sleeps until a push wakes it" (docs/policies.md):
 *                             over 1 s of a callback a millisecond, the rcu workers' wake-ups
 *                             (voluntary context switches, /proc/self/task/TID/status) stay
 *                             within one per period plus 4 (a worker woken by each call_rcu()
 *                             makes about 1000, one not napping two per period); over the
 *                             next second, once the last callbacks ran, within 4
 *   fork_child_keeps_policies  a fork() child keeps the policies the parent set (docs/api.md,
 *                             "fork()"): with BATCH 100 ms set on the default flavor and on an
 *                             srcu domain, a lone callback of each in the child waits the period
 *   poll_gap_follows_last_end POLL with a 0.5 s least gap (GRACE_POLL_MIN_GAP_US): a callback that
 *                             finds no grace period ended within the gap runs at once (checked
 *                             against half the gap), and one queued right after a grace period
 *                             ended waits for the gap (at least 0.45 s)
 *   set_policy_reaches_waiting_callbacks grace_rcu_set_policy() "takes effect at the workers'
 *                             next decision" (docs/api.md): a callback waiting under BATCH 10 s
 *                             runs soon after the policy becomes POLL (checked at 8 s, against
 *                             the 10 s it would otherwise wait)
 *   policies_are_per_engine   "as the default flavor's, for the QSBR engine"; srcu's "for the
 *                             callbacks of ssp only" (docs/api.md): with BATCH 10 s on the
 *                             default flavor and on srcu domain A, callbacks of QSBR and of
 *                             domain B run long before 10 s (checked at 8 s), and A's and the
 *                             default flavor's have not run by the time they did
 * Every callback of each flood has run when the final rcu_barrier() returns.
 * The environment (docs/build.md, "Environment variables"): env_lone_callback_waits sets no
 * policy itself; the ctest entries fault_regress_policy_env_* run it with GRACE_POLICY=batch
 * and GRACE_BATCH_PERIOD_US, the older GRACE_POLICY_BATCH=1, and GRACE_POLICY=lazy with
 * GRACE_LAZY_PERIOD_US, and EXPECT_WAIT_MS, the period: a callback queued on an idle domain
 * must not run before it (under the default policy it runs within a millisecond). Without
 * EXPECT_WAIT_MS (the plain entry) the case says it skipped.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <grace/grace.h>

#include <dirent.h>
#include <sched.h>
#include <time.h>

#include "engine_helpers.h"
#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 60
#define FLOOD_S 0.3

/* Wake-ups so far of this process's default-flavor callback workers (threads named
 * "grace-rcu/..."): their voluntary context switches, from /proc/self/task/TID/{comm,status}
 * (being preempted is not a wake-up). */
static unsigned long rcu_worker_switches(void)
{
	unsigned long total = 0;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		exit(2);
	for (struct dirent *e; (e = readdir(dir)) != NULL;) {
		char path[300], line[128];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* the thread has just ended */
		bool worker = fgets(line, sizeof(line), f) && strncmp(line, "grace-rcu", 9) == 0;
		fclose(f);
		if (!worker)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long v;
			if (sscanf(line, "voluntary_ctxt_switches: %lu", &v) == 1)
				total += v; /* its sleeps: each ends in a wake-up */
		}
		fclose(f);
	}
	closedir(dir);
	return total;
}

/* The flood under `policy`/`period_us`; exits 3 when the engine ran more grace periods than
 * one per `least_gap_s` of flood, plus the one under way at its start and one for the
 * arrivals that end it; 4 when a callback did not run by the barrier; 7 when all is well. */
static void flood(enum grace_gp_policy policy, unsigned int period_us, double least_gap_s,
		  const char *what, unsigned long wakes_per_gp)
{
	struct grace_cb_stats st0, st1;
	unsigned long n = 0;

	fault_pin_to_first_cpu();
	if (grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) != 0 ||
	    grace_rcu_set_policy(policy, period_us) != 0)
		exit(2);
	call_rcu(head_new(), count_free); /* start the worker */
	rcu_barrier();
	grace_rcu_callback_stats(&st0);
	unsigned long w0 = rcu_worker_switches();
	double t0 = fault_now(), t;
	do {
		for (int i = 0; i < 64; i++, n++)
			call_rcu(head_new(), count_free);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
		t = fault_now();
	} while (t - t0 < FLOOD_S);
	grace_rcu_callback_stats(&st1);
	unsigned long wakes = rcu_worker_switches() - w0;
	t = fault_now();
	uint64_t gps = st1.grace_periods - st0.grace_periods;
	fprintf(stderr, "  %s: %lu worker wake-ups\n", what, wakes);
	if (wakes_per_gp && wakes > wakes_per_gp * gps + 10)
		exit(3);
	uint64_t bound = (uint64_t)((t - t0) / least_gap_s) + 2;
	fprintf(stderr, "  %s: %llu grace periods in %.3f s of flood (%lu calls), bound %llu\n",
		what, (unsigned long long)gps, t - t0, n, (unsigned long long)bound);
	if (gps > bound)
		exit(3);
	rcu_barrier();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == n + 1 ? 7 : 4);
}

static void poll_flood(void *arg)
{
	(void)arg;
	setenv("GRACE_POLL_MIN_GAP_US", "2000", 1); /* read at the domain's first use */
	flood(GRACE_POLICY_POLL, 0, 2e-3, "POLL, 2 ms least gap", 0);
}
TEST(poll_flood_keeps_gap)
{
	CHECK(fault_expect_exit7(poll_flood, "a call_rcu() flood under POLL", HANG_S, NULL) == 0);
}

static void adaptive_flood(void *arg)
{
	(void)arg;
	flood(GRACE_POLICY_ADAPTIVE, 0, 50e-6, "ADAPTIVE, pace at least 50 us", 3);
}
TEST(adaptive_flood_keeps_pace)
{
	CHECK(fault_expect_exit7(adaptive_flood, "a call_rcu() flood under ADAPTIVE", HANG_S,
				 NULL) == 0);
}

/* Set the default flavor's policy, start its worker and let it go idle (exit 2 on refusal). */
static void start_under(enum grace_gp_policy policy, unsigned int period_us)
{
	if (grace_rcu_set_policy(policy, period_us) != 0)
		exit(2);
	call_rcu(head_new(), count_free);
	rcu_barrier();
}

#define CHAIN 2000
static int chain_left;
static struct rcu_head chain_head;
static void chain_cb(struct rcu_head *h)
{
	if (__atomic_sub_fetch(&chain_left, 1, __ATOMIC_ACQ_REL) > 0)
		call_rcu(h, chain_cb);
}
static void adaptive_chain(void *arg)
{
	(void)arg;
	start_under(GRACE_POLICY_ADAPTIVE, 0);
	__atomic_store_n(&chain_left, CHAIN, __ATOMIC_RELEASE);
	double t0 = fault_now();
	call_rcu(&chain_head, chain_cb);
	while (__atomic_load_n(&chain_left, __ATOMIC_ACQUIRE) > 0)
		fault_sleep_ms(1);
	double took = fault_now() - t0, least = (CHAIN - 1) * 50e-6;
	fprintf(stderr, "  a chain of %d callbacks under ADAPTIVE took %.1f ms (at least %.1f)\n",
		CHAIN, took * 1e3, least * 1e3);
	exit(took >= least ? 7 : 3);
}
TEST(adaptive_chain_keeps_pace)
{
	CHECK(fault_expect_exit7(adaptive_chain, "a callback chain under ADAPTIVE", HANG_S, NULL) ==
	      0);
}

static void batch_flood(void *arg)
{
	(void)arg;
	flood(GRACE_POLICY_BATCH, 50000, 50e-3, "BATCH, 50 ms", 0);
}
TEST(batch_flood_one_per_period)
{
	CHECK(fault_expect_exit7(batch_flood, "a call_rcu() flood under BATCH", HANG_S, NULL) == 0);
}

static uint64_t lone_ran_ns; /* fault_now() in ns when the callback ran */
static void lone_cb(struct rcu_head *h)
{
	__atomic_store_n(&lone_ran_ns, (uint64_t)(fault_now() * 1e9), __ATOMIC_RELEASE);
	free(h);
}
/* After idle_ms with nothing queued, queue one callback: the seconds until it ran. */
static double lone_wait(unsigned int idle_ms)
{
	fault_sleep_ms(idle_ms);
	double t0 = fault_now();
	call_rcu(head_new(), lone_cb);
	while (__atomic_load_n(&lone_ran_ns, __ATOMIC_ACQUIRE) == 0)
		fault_sleep_ms(1);
	return (double)__atomic_load_n(&lone_ran_ns, __ATOMIC_ACQUIRE) * 1e-9 - t0;
}
static void batch_lone(void *arg)
{
	(void)arg;
	start_under(GRACE_POLICY_BATCH, 100000);
	double waited = lone_wait(300); /* idle: nothing queued, no grace period under way */
	fprintf(stderr, "  a lone callback under BATCH (100 ms) ran after %.1f ms\n", waited * 1e3);
	exit(waited >= 0.1 ? 7 : 3);
}
TEST(batch_lone_callback_waits)
{
	CHECK(fault_expect_exit7(batch_lone, "a lone call_rcu() under BATCH", HANG_S, NULL) == 0);
}

/* The possible CPUs (/sys/devices/system/cpu/possible, "0-3,6"), which the limits are per. */
static unsigned long possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned long n = 0, a, b;
	char sep;

	if (f) {
		while (fscanf(f, "%lu", &a) == 1) {
			b = a;
			if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
				if (fscanf(f, "%lu", &b) != 1)
					break;
				if (fscanf(f, "%c", &sep) != 1)
					sep = '\n';
			}
			n += b - a + 1;
			if (sep != ',')
				break;
		}
		fclose(f);
	}
	return n ? n : (unsigned long)sysconf(_SC_NPROCESSORS_CONF);
}

static void batch_soft(void *arg)
{
	(void)arg;
	fault_pin_to_first_cpu();
	if (grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0 ||
	    grace_rcu_set_callback_limits(10, SIZE_MAX) != 0)
		exit(2);
	unsigned long cpus = possible_cpus(), may_wait = 10 * cpus + 31;
	double t0 = fault_now();
	for (int i = 0; i < 5000; i++)
		call_rcu(head_new(), count_free);
	while (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) + may_wait < 5000 && fault_now() - t0 < 8.0)
		fault_sleep_ms(1);
	unsigned long got = __atomic_load_n(&ran, __ATOMIC_ACQUIRE);
	fprintf(stderr,
		"  BATCH 10 s, soft limit 10 x %lu CPUs: %lu of 5000 ran in %.3f s (at least %lu)\n",
		cpus, got, fault_now() - t0, 5000 - may_wait);
	exit(got + may_wait >= 5000 ? 7 : 3);
}
TEST(batch_soft_limit_expedites)
{
	CHECK(fault_expect_exit7(batch_soft, "a flood past the soft limit under BATCH", HANG_S,
				 NULL) == 0);
}

static void lazy_wakeups(void *arg)
{
	(void)arg;
	fault_pin_to_first_cpu();
	if (grace_rcu_set_policy(GRACE_POLICY_LAZY, 100000) != 0 ||
	    grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) != 0)
		exit(2);
	call_rcu(head_new(), count_free); /* start the worker */
	rcu_barrier();
	unsigned long w0 = rcu_worker_switches(), n = 1;
	double t0 = fault_now(), t;
	do {
		call_rcu(head_new(), count_free);
		n++;
		fault_sleep_ms(1);
		t = fault_now();
	} while (t - t0 < 1.0);
	unsigned long w1 = rcu_worker_switches();
	/* One wake-up per period, plus a few for the start and the grace periods' own waits;
	 * without the naps, each period costs two (a call_rcu() wakes the idle worker, then
	 * the period's timed wait ends): 19 against 11 on the 2-CPU VM. */
	unsigned long bound = (unsigned long)((t - t0) / 0.1 + 1) + 4;
	/* Quiet: the last callbacks run within two periods; then at most one empty nap. */
	while (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) < n && fault_now() - t < 5.0)
		fault_sleep_ms(1);
	fault_sleep_ms(300);
	unsigned long w2 = rcu_worker_switches();
	fault_sleep_ms(1000);
	unsigned long w3 = rcu_worker_switches();
	fprintf(stderr,
		"  LAZY 100 ms, %lu calls in %.3f s: %lu worker wake-ups (bound %lu); "
		"quiet 1 s: %lu (bound 4)\n",
		n - 1, t - t0, w1 - w0, bound, w3 - w2);
	if (w1 - w0 > bound || w3 - w2 > 4)
		exit(3);
	rcu_barrier();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == n ? 7 : 4);
}
TEST(lazy_wakeups_one_per_period)
{
	CHECK(fault_expect_exit7(lazy_wakeups, "a callback a millisecond under LAZY", HANG_S,
				 NULL) == 0);
}

static void poll_gap(void *arg)
{
	(void)arg;
	setenv("GRACE_POLL_MIN_GAP_US", "500000", 1); /* read at the domain's first use */
	/* The gap is each worker's ("a worker leaves ... between them"): one CPU, one worker.
	 * Unpinned, the second callback may land on another CPU's queue, whose worker has run
	 * no grace period (seen once under ASan: 0.4 ms). */
	fault_pin_to_first_cpu();
	if (grace_rcu_set_policy(GRACE_POLICY_POLL, 0) != 0)
		exit(2);
	call_rcu(head_new(), count_free); /* start the worker */
	rcu_barrier();                    /* a barrier does not keep the gap */
	double lone = lone_wait(600);     /* the last grace period ended 0.6 s ago */
	__atomic_store_n(&lone_ran_ns, 0, __ATOMIC_RELEASE);
	double next = lone_wait(0); /* right after the lone one's grace period */
	fprintf(stderr, "  POLL, 0.5 s gap: lone callback %.1f ms, the next %.1f ms\n", lone * 1e3,
		next * 1e3);
	exit(lone < 0.25 && next >= 0.45 ? 7 : 3);
}
TEST(poll_gap_follows_last_end)
{
	CHECK(fault_expect_exit7(poll_gap, "callbacks under POLL with a 0.5 s gap", HANG_S, NULL) ==
	      0);
}

static void policy_switch(void *arg)
{
	(void)arg;
	start_under(GRACE_POLICY_BATCH, 10000000);
	double t0 = fault_now();
	call_rcu(head_new(), lone_cb);
	fault_sleep_ms(100); /* the worker waits for the batch period now */
	if (grace_rcu_set_policy(GRACE_POLICY_POLL, 0) != 0)
		exit(2);
	while (__atomic_load_n(&lone_ran_ns, __ATOMIC_ACQUIRE) == 0 && fault_now() - t0 < 8.0)
		fault_sleep_ms(1);
	uint64_t r = __atomic_load_n(&lone_ran_ns, __ATOMIC_ACQUIRE);
	fprintf(stderr, "  BATCH 10 s, then POLL after 100 ms: the callback ran after %.1f ms\n",
		r ? ((double)r * 1e-9 - t0) * 1e3 : -1.0);
	exit(r ? 7 : 3);
}
TEST(set_policy_reaches_waiting_callbacks)
{
	CHECK(fault_expect_exit7(policy_switch, "a policy switch under a waiting callback", HANG_S,
				 NULL) == 0);
}

static unsigned long other_ran;
static void other_cb(struct rcu_head *h)
{
	__atomic_fetch_add(&other_ran, 1, __ATOMIC_RELEASE);
	free(h);
}
static void per_engine(void *arg)
{
	static struct srcu_struct a, b;
	(void)arg;
	if (init_srcu_struct(&a) != 0 || init_srcu_struct(&b) != 0 ||
	    grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0 ||
	    grace_srcu_set_policy(&a, GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	double t0 = fault_now();
	call_rcu(head_new(), count_free);      /* waits 10 s */
	call_srcu(&a, head_new(), count_free); /* waits 10 s */
	call_qsbr(head_new(), other_cb);       /* the QSBR engine's own policy */
	call_srcu(&b, head_new(), other_cb);   /* domain B's own policy */
	while (__atomic_load_n(&other_ran, __ATOMIC_ACQUIRE) < 2 && fault_now() - t0 < 8.0)
		fault_sleep_ms(1);
	unsigned long o = __atomic_load_n(&other_ran, __ATOMIC_ACQUIRE);
	unsigned long r = __atomic_load_n(&ran, __ATOMIC_ACQUIRE);
	fprintf(stderr,
		"  after %.1f ms: %lu of 2 callbacks of QSBR and domain B ran, %lu of the "
		"2 under BATCH 10 s\n",
		(fault_now() - t0) * 1e3, o, r);
	if (o != 2 || r != 0)
		exit(3);
	rcu_barrier(); /* barriers do not wait for the period */
	srcu_barrier(&a);
	exit(__atomic_load_n(&ran, __ATOMIC_ACQUIRE) == 2 ? 7 : 4);
}
TEST(policies_are_per_engine)
{
	CHECK(fault_expect_exit7(per_engine, "BATCH on one flavor and one domain", HANG_S, NULL) ==
	      0);
}

static struct srcu_struct fork_srcu;
static uint64_t srcu_ran_ns;
static void srcu_lone_cb(struct rcu_head *h)
{
	__atomic_store_n(&srcu_ran_ns, (uint64_t)(fault_now() * 1e9), __ATOMIC_RELEASE);
	free(h);
}
static void fork_policies(void *arg)
{
	(void)arg;
	if (init_srcu_struct(&fork_srcu) != 0 ||
	    grace_rcu_set_policy(GRACE_POLICY_BATCH, 100000) != 0 ||
	    grace_srcu_set_policy(&fork_srcu, GRACE_POLICY_BATCH, 100000) != 0)
		exit(2);
	call_rcu(head_new(), count_free); /* the workers run before the fork */
	rcu_barrier();
	call_srcu(&fork_srcu, head_new(), count_free);
	srcu_barrier(&fork_srcu);
	pid_t pid = fork();
	if (pid < 0)
		exit(2);
	if (pid == 0) {
		double rcu_waited = lone_wait(200);
		fault_sleep_ms(200);
		double t0 = fault_now();
		call_srcu(&fork_srcu, head_new(), srcu_lone_cb);
		while (__atomic_load_n(&srcu_ran_ns, __ATOMIC_ACQUIRE) == 0)
			fault_sleep_ms(1);
		double srcu_waited =
			(double)__atomic_load_n(&srcu_ran_ns, __ATOMIC_ACQUIRE) * 1e-9 - t0;
		fprintf(stderr, "  child: lone callbacks ran after %.1f ms (rcu), %.1f ms (srcu)\n",
			rcu_waited * 1e3, srcu_waited * 1e3);
		_exit(rcu_waited >= 0.1 && srcu_waited >= 0.1 ? 0 : 1);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		exit(2);
	exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 7 : 3);
}
TEST(fork_child_keeps_policies)
{
	CHECK(fault_expect_exit7(fork_policies, "a fork child of BATCH domains", HANG_S, NULL) ==
	      0);
}

static unsigned int env_wait_ms;
static void env_lone(void *arg)
{
	(void)arg;
	call_rcu(head_new(), count_free); /* start the worker under the environment's policy */
	rcu_barrier();
	/* Idle for three periods: a lazy worker naps one period after its last callbacks, then
	 * sleeps until a push wakes it, and the period of a callback found then counts from
	 * the push. */
	double waited = lone_wait(3 * env_wait_ms);
	fprintf(stderr,
		"  a lone callback ran after %.1f ms (period %u ms, from the environment)\n",
		waited * 1e3, env_wait_ms);
	exit(waited * 1e3 >= env_wait_ms ? 7 : 3);
}
TEST(env_lone_callback_waits)
{
	const char *w = getenv("EXPECT_WAIT_MS");
	if (!w) {
		printf("  skipped: run by the fault_regress_policy_env_* entries\n");
		return;
	}
	env_wait_ms = (unsigned int)atoi(w);
	REQUIRE(env_wait_ms > 0);
	CHECK(fault_expect_exit7(env_lone, "a lone call_rcu() under the environment's policy",
				 HANG_S, NULL) == 0);
}

GT_MAIN()
