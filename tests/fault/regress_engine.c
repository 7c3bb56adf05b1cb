/* SPDX-License-Identifier: MIT */
/*
 * Regressions of the callback engine's faults found by an independent review (wave 2). Each
 * case runs in a child process (a fresh engine) with a hang limit many times what it needs;
 * the checks are on behaviour (counts, a warning's absence, a call that returns), never on
 * how fast something happens:
 *  1. limits_saturate: grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) means no limit; the
 *     limit times the CPUs wrapped to a negative number and every 32nd call_rcu() waited.
 *  2. barrier_hurries_batch: rcu_barrier() and the exit drain under GRACE_POLICY_BATCH with a
 *     10 s period must not wait for the period: they ask for their grace periods at once.
 *  3. exit_while_forking: exit() while another thread forks in a loop: the exit drain held
 *     the engine's list lock, a fork's prepare paused the workers and then waited for that
 *     lock, so the drain timed out and the callbacks were lost.
 *  4. hurry_then_idle: call_rcu_hurry() whose grace period another thread completes must not
 *     leave the workers busy once idle.
 *  5. poll_in_fork_child: a start_poll cookie inherited by a fork child that only polls must
 *     complete there.
 *  6. exit_creates_domain: a callback run by the exit drain that makes the first use of
 *     another domain (call_srcu on a DEFINE_SRCU domain) must not block the drain.
 *  7. exit_while_cleanup: exit() while another thread runs cleanup_srcu_struct() on domains
 *     whose workers run: the exit drain and the cleanup each joined the same worker (a
 *     second pthread_join() of a thread already joined: undefined, a crash or a hang).
 *  8. hurry_flood_keeps_gap: a flood of call_rcu_hurry() from one CPU ran grace periods back
 *     to back (36000/s on a 2-CPU VM) and woke the worker on every call. Hurried grace
 *     periods keep the least gap after one that just ended (GRACE_POLL_MIN_GAP_US, 50 us), so
 *     the one worker that serves the flood completes at most one per 50 us: a bound by design
 *     that a slower or loaded machine only stays further below.
 *  9. bad_min_gap: GRACE_POLL_MIN_GAP_US was read with no check; -1 became a 71-minute gap,
 *     which hurried callbacks and barriers now keep too. Out of range or not a number, it
 *     gives the default with a warning naming it.
 * 10. barriers_ignore_gap: the least gap is for floods of hurried callbacks only; a barrier
 *     that kept it made back-to-back rcu_barrier() calls wait it each (60 us against 7 us
 *     with the default gap). With a 5 s gap, 20 barriers right after grace periods must
 *     return long before 20 gaps could pass.
 * 11. barrier_after_harvest: a worker harvests a queue, then takes its barrier requests; a
 *     thread that calls call_rcu() and then rcu_barrier() in between must find its callback
 *     run when the barrier returns (the worker harvests again before queuing the marker).
 *     The window is a few instructions; debug builds widen it with GRACE_TEST_PAUSE (200 us
 *     at that point of every pass). The mutation audit's "barrier marker queued without
 *     harvesting" survived every test before this one. Release builds skip the case.
 * 12. srcu_straggler: an srcu reader that chose its index before a grace period's flip and
 *     counts itself after that grace period's scan of the index (a straggler: new for that
 *     grace period) must be waited for by the next one, whose first wait (S1) is on that
 *     index. Debug builds stop the reader there with GRACE_TEST_PAUSE; the mutation audit's
 *     "S1 skipped" mutant survived the quick runs before. Release builds skip the case.
 * 13. hurry_flood_fork_exit: the hostile paths of a hurried flood (its worker mostly waits out
 *     the least gap, GAP_SLEEP): fork() in another thread during the flood, a child that
 *     queues hurried callbacks and runs a barrier, a child that queues them and calls exit()
 *     (the exit drain must run them, gap or not), and the parent's own exit() with the flood's
 *     callbacks still pending (every one must have run, checked after the drain).
 * 14. srcu_balance: a balance check reads the unlock counters before the lock counters. A
 *     reader R1 holds a section; a reader R2 on the same index locks and unlocks while the
 *     check is between its two sums. Read in the other order, R2's unlock would be counted and
 *     not its lock, matching R1's lock with R2's unlock: the grace period would end under R1.
 *     Debug builds stop R2 between choosing its index and counting itself and the check
 *     between its sums (GRACE_TEST_PAUSE); the mutation audit's "locks summed first" mutant
 *     survived every test before this one. Release builds skip the case.
 * 16. flush_outlives_need: a worker that took a barrier's marker under BATCH (10 s) looks at
 *     what its callbacks wait for, finds it pending, and a grace period that another thread
 *     drives completes right after. The barrier's flush must still hold: the worker must not
 *     sleep the batch period with the marker ready. Debug builds hold the worker 300 ms at
 *     that point (pause site "advance") while this thread's synchronize_rcu() completes the
 *     grace period; the old order (the flush cleared after the look) failed
 *     barrier_hurries_batch about 1 run in 50 under qemu-user. Release builds skip the case.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <grace/grace.h>

#include <sched.h>
#include <time.h>

#include "engine_helpers.h"
#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 60
#define EXIT_TIMEOUT_MS "3000"

/* Run fn in a child; it must exit with status 7 and print nothing containing `bad`. */
static int run_case(void (*fn)(void *), const char *what, const char *bad)
{
	return fault_expect_exit7(fn, what, HANG_S, bad);
}

/* ---- 1 ---- */

static void limits_saturate(void *arg)
{
	struct grace_cb_stats st;
	(void)arg;
	if (grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) != 0)
		exit(2);
	for (int i = 0; i < 256; i++)
		call_rcu(head_new(), count_free);
	grace_rcu_callback_stats(&st);
	if (st.waits != 0) {
		fprintf(stderr, "  %llu waits at a hard limit of SIZE_MAX\n",
			(unsigned long long)st.waits);
		exit(3);
	}
	rcu_barrier();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == 256 ? 7 : 4);
}
TEST(limits_saturate)
{
	CHECK(run_case(limits_saturate, "limits SIZE_MAX", "hard limit") == 0);
}

/* ---- 2 ---- */
/* Exit handler registered before the library's (so it runs after the drain): every one of
 * `expect_ran` callbacks must have run, else status 5. */
static unsigned long expect_ran;
static int hfe_in_child; /* case 13: a fork child that inherited the handler */
static void check_ran_at_exit(void)
{
	if (hfe_in_child)
		return;
	unsigned long n = __atomic_load_n(&ran, __ATOMIC_RELAXED);
	if (n != expect_ran) {
		fprintf(stderr, "  exit: %lu of %lu callbacks ran\n", n, expect_ran);
		fflush(stderr);
		_exit(5);
	}
}

static void barrier_batch(void *arg)
{
	(void)arg;
	atexit(check_ran_at_exit);
	if (grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	for (int i = 0; i < 100; i++)
		call_rcu(head_new(), count_free);
	/* The period is 10 s: a barrier that waited for it is caught here. */
	fault_watch("rcu_barrier() under BATCH(10 s)", 5.0);
	rcu_barrier();
	fault_unwatch();
	if (__atomic_load_n(&ran, __ATOMIC_RELAXED) != 100)
		exit(3);
	/* And the exit drain (3 s, shorter than the period) must run these. */
	for (int i = 0; i < 100; i++)
		call_rcu(head_new(), count_free);
	expect_ran = 200;
	exit(7);
}
TEST(barrier_hurries_batch)
{
	CHECK(run_case(barrier_batch, "barrier and exit under BATCH(10 s)", "not run") == 0);
}

/* ---- 3 ---- */

/* Under TSan every fork stops the world for long: fewer callbacks. The drain's bound is long
 * (a debug build at load 10 on 2 CPUs ran 6689 of 20000 in 3 s): the fault this catches held
 * the drain until its bound whatever the bound, so the bound only has to be long enough for
 * the callbacks' own 0.4 s of CPU on a loaded machine. */
#if defined(__SANITIZE_THREAD__)
#define FORK_N 2000
#else
#define FORK_N 20000
#endif
#define FORK_EXIT_TIMEOUT_MS "30000"
/* About 20 us each: the drain lasts long enough for forks to land in it. */
static void spin_cb(struct rcu_head *h)
{
	double t0 = fault_now();
	while (fault_now() - t0 < 20e-6) {
	}
	count_free(h);
}

static void *forker(void *arg)
{
	(void)arg;
	for (;;)
		gt_fork_and_wait();
	return NULL;
}

static void exit_while_forking(void *arg)
{
	pthread_t t;
	(void)arg;
	setenv("GRACE_EXIT_TIMEOUT_MS", FORK_EXIT_TIMEOUT_MS, 1); /* read at exit */
	atexit(check_ran_at_exit);
	call_rcu(head_new(), count_free); /* start a worker (and the library's exit handler) */
	rcu_barrier();
	pthread_create(&t, NULL, forker, NULL);
	fault_sleep_ms(20);
	for (int i = 0; i < FORK_N; i++)
		call_rcu(head_new(), spin_cb);
	expect_ran = FORK_N + 1;
	exit(7);
}
TEST(exit_while_forking)
{
	CHECK(run_case(exit_while_forking, "exit while another thread forks", "not run") == 0);
}

/* ---- 4 ---- */

static int hurry_ran, syncer_stop;

static void hurry_cb(struct rcu_head *h)
{
	__atomic_store_n(&hurry_ran, 1, __ATOMIC_RELEASE);
	free(h);
}

static void *syncer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&syncer_stop, __ATOMIC_ACQUIRE))
		synchronize_rcu();
	return NULL;
}

static uint64_t worker_cpu_ns(void)
{
	struct grace_cb_stats st;
	grace_rcu_callback_stats(&st);
	return st.worker_cpu_ns;
}

/*
 * A worker that sleeps while the process is idle uses next to no CPU time; one that spins
 * (the fault) uses a large share of a CPU: over 300 ms of idleness, 30 ms (10%) separates
 * them by orders of magnitude whatever the load.
 */
static void hurry_then_idle(void *arg)
{
	(void)arg;
	/* First, the hurry itself, where the pacing is longest (hurried callbacks and the grace
	 * periods they need now live on the queue they were pushed on). */
	if (grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	fault_watch("call_rcu_hurry() under BATCH(10 s)", 5.0);
	call_rcu_hurry(head_new(), hurry_cb);
	while (!__atomic_load_n(&hurry_ran, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	fault_unwatch();
	if (grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0) != 0)
		exit(2);
	double t0 = fault_now();
	for (int it = 0; it < 60 && fault_now() - t0 < 3.0; it++) {
		pthread_t t;
		__atomic_store_n(&syncer_stop, 0, __ATOMIC_RELAXED);
		pthread_create(&t, NULL, syncer, NULL);
		__atomic_store_n(&hurry_ran, 0, __ATOMIC_RELAXED);
		call_rcu_hurry(head_new(), hurry_cb);
		while (!__atomic_load_n(&hurry_ran, __ATOMIC_ACQUIRE))
			fault_sleep_ms(1);
		__atomic_store_n(&syncer_stop, 1, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
		fault_sleep_ms(5);
		if (it % 20 != 19)
			continue; /* measure now and then: the fault, once there, stays */
		uint64_t a = worker_cpu_ns();
		fault_sleep_ms(300);
		uint64_t b = worker_cpu_ns();
		if (b - a > 30000000ull) {
			fprintf(stderr,
				"  iteration %d: workers used %.1f ms of CPU in 300 ms idle\n", it,
				(double)(b - a) / 1e6);
			exit(3);
		}
	}
	exit(7);
}
TEST(hurry_then_idle)
{
	CHECK(run_case(hurry_then_idle, "call_rcu_hurry then idle", NULL) == 0);
}

/* ---- 5 ---- */

static int reader_in, reader_release;

static void *reader_main(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&reader_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&reader_release, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	rcu_read_unlock();
	return NULL;
}

static void poll_in_fork_child(void *arg)
{
	pthread_t t;
	(void)arg;
	pthread_create(&t, NULL, reader_main, NULL);
	while (!__atomic_load_n(&reader_in, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	unsigned long c = start_poll_synchronize_rcu();
	fault_sleep_ms(10); /* a worker drives the grace period the reader holds */
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		/* Nothing but polls: the request inherited must be served (5 s of polling; a
		 * grace period of the child takes microseconds). */
		for (double t0 = fault_now(); fault_now() - t0 < 5.0;) {
			if (poll_state_synchronize_rcu(c))
				_exit(0);
			fault_sleep_ms(1);
		}
		fprintf(stderr, "  fork child: start_poll cookie still not complete\n");
		_exit(1);
	}
	int st = 0;
	waitpid(p, &st, 0);
	__atomic_store_n(&reader_release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 7 : 3);
}
TEST(poll_in_fork_child)
{
	CHECK(run_case(poll_in_fork_child, "poll a start_poll cookie in a fork child", NULL) == 0);
}

/* ---- 6 ---- */

#define HOPS_N 1000
struct hops {
	struct rcu_head rh;
	int hops;
};
DEFINE_SRCU(exit_srcu);

static void stage2(struct rcu_head *h)
{
	count_free(h);
}

static void stage1(struct rcu_head *h)
{
	call_srcu(&exit_srcu, h, stage2); /* the domain's first call_srcu() */
}

static void stage0(struct rcu_head *h)
{
	struct hops *o = grace_container_of(h, struct hops, rh);
	/* A few hops first, so the first call_srcu() happens inside the exit drain. */
	call_rcu(h, ++o->hops < 4 ? stage0 : stage1);
}

static void exit_creates_domain(void *arg)
{
	(void)arg;
	atexit(check_ran_at_exit);
	for (int i = 0; i < HOPS_N; i++)
		call_rcu(&((struct hops *)calloc(1, sizeof(struct hops)))->rh, stage0);
	expect_ran = HOPS_N;
	exit(7);
}
TEST(exit_creates_domain)
{
	CHECK(run_case(exit_creates_domain, "a callback of the exit drain creates a domain",
		       "not run") == 0);
}

/* ---- 7 ----
 * Also: the cleanup that the exit drain's join beat must still wait for the workers to return
 * before srcu frees its state (ASan saw a worker read the freed grace-period state). */

#define CLEANUP_DOMAINS 64
#define CLEANUP_TRIALS 12
static struct srcu_struct cleanup_ss[CLEANUP_DOMAINS];
static int cleanup_started;

static void *cleaner(void *arg)
{
	(void)arg;
	__atomic_store_n(&cleanup_started, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < CLEANUP_DOMAINS; i++)
		cleanup_srcu_struct(&cleanup_ss[i]);
	return NULL;
}

static void exit_while_cleanup(void *arg)
{
	pthread_t t;
	(void)arg;
	/* Every domain gets running workers: one callback each, from both CPUs if there are. */
	for (int i = 0; i < CLEANUP_DOMAINS; i++) {
		if (init_srcu_struct(&cleanup_ss[i]) != 0)
			exit(2);
		call_srcu(&cleanup_ss[i], head_new(), count_free);
		srcu_barrier(&cleanup_ss[i]);
	}
	/* The cleaner walks the domains in creation order, the exit drain newest first: they
	 * meet on some domain whose workers both stop and join. */
	pthread_create(&t, NULL, cleaner, NULL);
	pthread_detach(t); /* still running at exit: not a thread leak for TSan */
	while (!__atomic_load_n(&cleanup_started, __ATOMIC_ACQUIRE)) {
	}
	/* A join of a thread already joined may wait for ever: the drain's bound is long, the
	 * watchdog's shorter (nothing here waits for a reader: exit takes milliseconds). */
	setenv("GRACE_EXIT_TIMEOUT_MS", "60000", 1);
	fault_watch("exit() while cleanup_srcu_struct() runs", 20.0);
	exit(7);
}
TEST(exit_while_cleanup)
{
	for (int i = 0; i < CLEANUP_TRIALS; i++)
		CHECK(run_case(exit_while_cleanup,
			       "exit while another thread cleans up srcu domains", NULL) == 0);
}

/* ---- 8 ---- */

/* Pin the calling thread (and the threads it creates later) to the first CPU it may use; exit
 * status 2 if it cannot. */
#define FLOOD_S 0.3
#define FLOOD_GAP_US "1000" /* GRACE_POLL_MIN_GAP_US for the flood (default 50 us) */
#define FLOOD_GAP_S 1e-3

static int flood_stop;

/* A reader that keeps a section open most of the time: grace periods must wait for it. */
static void *flood_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&flood_stop, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		for (volatile int i = 0; i < 100; i++) {
		}
		rcu_read_unlock();
	}
	return NULL;
}

static void hurry_flood(void *arg)
{
	pthread_t rd;
	struct grace_cb_stats st0, st1;
	unsigned long n = 0;
	(void)arg;
	/* A gap longer than the default, so that the bound stands far from what the machine can
	 * do without it (read when the domain is set up, at its first use below). */
	setenv("GRACE_POLL_MIN_GAP_US", FLOOD_GAP_US, 1);
	/* One CPU, so one queue and its one worker serve the flood (the bound is per worker). */
	fault_pin_to_first_cpu();
	/* No soft limit: its urgent grace periods are not the hurry's. And BATCH with a 10 s
	 * period: a callback harvested between its push and its caller's hurry flag would
	 * otherwise wait only for the adaptive pacing (50 us to 1 ms), which is not this bound's;
	 * under BATCH it waits for the next hurry, so every grace period here is a hurried one. */
	if (grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) != 0 ||
	    grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	call_rcu(head_new(), count_free); /* start the worker */
	rcu_barrier();
	/* The reader is not pinned: on a machine with more CPUs it runs beside the flood. */
	if (pthread_create(&rd, NULL, flood_reader, NULL) != 0)
		exit(2);
	grace_rcu_callback_stats(&st0);
	double t0 = fault_now(), t;
	do {
		for (int i = 0; i < 64; i++, n++)
			call_rcu_hurry(head_new(), count_free);
		struct timespec ts = { 0, 20000 }; /* about 10^6 calls/s at most: bounded memory */
		nanosleep(&ts, NULL);
		t = fault_now();
	} while (t - t0 < FLOOD_S);
	grace_rcu_callback_stats(&st1);
	t = fault_now();
	__atomic_store_n(&flood_stop, 1, __ATOMIC_RELEASE);
	pthread_join(rd, NULL);
	uint64_t gps = st1.grace_periods - st0.grace_periods;
	/* One per gap over the flood, plus the one under way at its start. */
	uint64_t bound = (uint64_t)((t - t0) / FLOOD_GAP_S) + 2;
	if (gps > bound) {
		fprintf(stderr,
			"  %llu grace periods in %.3f s of hurried flood (%lu calls): more "
			"than one per %.0f us (bound %llu)\n",
			(unsigned long long)gps, t - t0, n, FLOOD_GAP_S * 1e6,
			(unsigned long long)bound);
		exit(3);
	}
	rcu_barrier();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == n + 1 ? 7 : 4);
}
TEST(hurry_flood_keeps_gap)
{
	CHECK(run_case(hurry_flood, "a flood of call_rcu_hurry()", NULL) == 0);
}

/* ---- 9 ---- */

static const char *bad_gap;

static void bad_min_gap(void *arg)
{
	(void)arg;
	setenv("GRACE_POLL_MIN_GAP_US", bad_gap, 1); /* read at the domain's first use */
	/* A grace period that has just ended, then a hurried callback and a barrier, which wait
	 * for the gap after it. */
	call_rcu(head_new(), count_free);
	rcu_barrier();
	__atomic_store_n(&hurry_ran, 0, __ATOMIC_RELAXED);
	fault_watch("call_rcu_hurry() after a grace period, bad GRACE_POLL_MIN_GAP_US", 20.0);
	call_rcu_hurry(head_new(), hurry_cb);
	while (!__atomic_load_n(&hurry_ran, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	call_rcu(head_new(), count_free);
	rcu_barrier();
	fault_unwatch();
	exit(7);
}
TEST(bad_min_gap)
{
	static const char *const vals[] = { "-1", "abc", "10000001", "50us" };
	static char err[4096];
	char how[96];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		bad_gap = vals[i];
		struct fault_child c = fault_run(bad_min_gap, NULL, HANG_S, err, sizeof(err));
		printf("  GRACE_POLL_MIN_GAP_US=%s: child %s\n", vals[i],
		       fault_how(&c, how, sizeof(how)));
		CHECK_MSG(fault_exited(&c, 7), "GRACE_POLL_MIN_GAP_US=%s: child %s; stderr: %.300s",
			  vals[i], how, err);
		CHECK_MSG(
			strstr(err, "GRACE_POLL_MIN_GAP_US") != NULL,
			"GRACE_POLL_MIN_GAP_US=%s: no warning naming the variable; stderr: %.300s",
			vals[i], err);
	}
}

/* ---- 10 ---- */

static void barriers_ignore_gap(void *arg)
{
	(void)arg;
	setenv("GRACE_POLL_MIN_GAP_US", "5000000", 1); /* read at the domain's first use */
	call_rcu(head_new(), count_free);
	rcu_barrier();
	fault_watch("back-to-back rcu_barrier() with a 5 s least gap", 30.0);
	for (int i = 0; i < 20; i++) {
		call_rcu(head_new(), count_free);
		rcu_barrier();
		rcu_barrier(); /* nothing queued: its markers alone */
	}
	fault_unwatch();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == 21 ? 7 : 4);
}
TEST(barriers_ignore_gap)
{
	CHECK(run_case(barriers_ignore_gap, "back-to-back barriers", NULL) == 0);
}

/* ---- 11 ---- */

#ifdef GRACE_DEBUG
#define HARVEST_ROUNDS 300
static int harvest_flag[HARVEST_ROUNDS];

struct flagged {
	struct rcu_head rh;
	int i;
};

static void flag_cb(struct rcu_head *h)
{
	struct flagged *f = (struct flagged *)h;
	/* Release: pairs with the acquire load after the barrier (the barrier orders it too). */
	__atomic_store_n(&harvest_flag[f->i], 1, __ATOMIC_RELEASE);
	free(f);
}

static int harvest_stop;

/* Keeps callbacks waiting on the queue, so that its worker makes pass after pass (each with
 * the pause) instead of sleeping until this thread's next call wakes it. */
static void *harvest_feeder(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&harvest_stop, __ATOMIC_ACQUIRE)) {
		call_rcu(head_new(), count_free);
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void barrier_after_harvest(void *arg)
{
	(void)arg;
	int early = 0;
	pthread_t feeder;

	setenv("GRACE_TEST_PAUSE", "collect:200", 1); /* read at the first pass */
	/* This thread and the feeder on one CPU: one queue, one worker. */
	fault_pin_to_first_cpu();
	if (pthread_create(&feeder, NULL, harvest_feeder, NULL) != 0) /* inherits the CPU */
		exit(2);
	unsigned int seed = 12345;
	for (int i = 0; i < HARVEST_ROUNDS; i++) {
		/* At a random point of the worker's cycle of passes (its naps last up to 1 ms), not
		 * right after the last barrier, whose wake-up starts the next pass itself. */
		struct timespec gap = { 0, (long)(rand_r(&seed) % 1000) * 1000 };
		nanosleep(&gap, NULL);
		struct flagged *f = (struct flagged *)calloc(1, sizeof(*f));
		if (!f)
			exit(2);
		f->i = i;
		call_rcu(&f->rh, flag_cb);
		rcu_barrier();
		if (!__atomic_load_n(&harvest_flag[i], __ATOMIC_ACQUIRE))
			early++;
	}
	__atomic_store_n(&harvest_stop, 1, __ATOMIC_RELEASE);
	pthread_join(feeder, NULL);
	rcu_barrier();
	if (early) {
		fprintf(stderr,
			"  rcu_barrier() returned before the callback queued just before it "
			"ran, %d times of %d\n",
			early, HARVEST_ROUNDS);
		exit(3);
	}
	exit(7);
}
#endif
TEST(barrier_after_harvest)
{
#ifdef GRACE_DEBUG
	CHECK(run_case(barrier_after_harvest, "call_rcu() and rcu_barrier() during a harvest",
		       NULL) == 0);
#else
	printf("  skipped: the window is widened only in debug builds (GRACE_TEST_PAUSE)\n");
#endif
}

/* ---- 12 ---- */

#ifdef GRACE_DEBUG
#define STRAGGLER_MAGIC 0x5eed
#define STRAGGLER_DEAD 0xdead

static struct srcu_struct straggler_ss;
static int *straggler_ptr;
static int straggler_locking, straggler_in, straggler_seen;

static void *straggler_reader(void *arg)
{
	(void)arg;
	__atomic_store_n(&straggler_locking, 1, __ATOMIC_RELEASE);
	int idx = srcu_read_lock(&straggler_ss); /* paused 200 ms after choosing its index */
	int *p = rcu_dereference(straggler_ptr);
	__atomic_store_n(&straggler_in, 1, __ATOMIC_RELEASE);
	fault_sleep_ms(200); /* the updater's second grace period must wait for this */
	/* Relaxed: the updater's poison store races with this load only if the grace period
	 * did not wait, which is the fault this detects. */
	__atomic_store_n(&straggler_seen, __atomic_load_n(p, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
	srcu_read_unlock(&straggler_ss, idx);
	return NULL;
}

/* One try: 1 if grace period 2 waited for the straggler, 0 if it did not, -1 if the reader
 * was counted before grace period 1 ended (a slow machine: no straggler, nothing shown). */
static int straggler_try(void)
{
	pthread_t t;
	int *a = (int *)malloc(sizeof(int)), *b = (int *)malloc(sizeof(int));
	if (!a || !b)
		exit(2);
	*a = STRAGGLER_MAGIC;
	*b = STRAGGLER_MAGIC;
	__atomic_store_n(&straggler_locking, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&straggler_in, 0, __ATOMIC_RELAXED);
	rcu_assign_pointer(straggler_ptr, a);
	synchronize_srcu(&straggler_ss); /* nobody reads yet */
	pthread_create(&t, NULL, straggler_reader, NULL);
	while (!__atomic_load_n(&straggler_locking, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	fault_sleep_ms(50);
	/* Grace period 1, while the reader has its index but is not counted: it must not (and
	 * need not) wait for the reader, whose section will see whatever is published by then. */
	synchronize_srcu(&straggler_ss);
	bool straggler = !__atomic_load_n(&straggler_in, __ATOMIC_ACQUIRE);
	while (!__atomic_load_n(&straggler_in, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	/* Grace period 2: the reader holds a, counted on the index grace period 1 flipped away
	 * from; S1 of this grace period waits for it. */
	rcu_assign_pointer(straggler_ptr, b);
	synchronize_srcu(&straggler_ss);
	__atomic_store_n(a, STRAGGLER_DEAD, __ATOMIC_RELAXED); /* "free" a */
	pthread_join(t, NULL);
	int seen = __atomic_load_n(&straggler_seen, __ATOMIC_ACQUIRE);
	free(a);
	rcu_assign_pointer(straggler_ptr, NULL);
	synchronize_srcu(&straggler_ss);
	free(b);
	if (seen != STRAGGLER_MAGIC)
		return 0;
	return straggler ? 1 : -1;
}

static void srcu_straggler(void *arg)
{
	(void)arg;
	setenv("GRACE_TEST_PAUSE", "srcu_lock:200000", 1); /* read at the first pass */
	if (init_srcu_struct(&straggler_ss) != 0)
		exit(2);
	fault_watch("srcu straggler", 60.0);
	int r = -1;
	for (int k = 0; k < 5 && r < 0; k++)
		r = straggler_try();
	fault_unwatch();
	if (r == 0) {
		fprintf(stderr,
			"  the reader saw its object freed: grace period 2 ended before its "
			"section\n");
		exit(3);
	}
	if (r < 0)
		printf("  not shown: in 5 tries grace period 1 never ended within the reader's "
		       "200 ms pause (a very slow machine)\n");
	cleanup_srcu_struct(&straggler_ss);
	exit(7);
}
#endif
TEST(srcu_straggler)
{
#ifdef GRACE_DEBUG
	CHECK(run_case(srcu_straggler, "an srcu reader counted after a flip", NULL) == 0);
#else
	printf("  skipped: the reader is stopped only in debug builds (GRACE_TEST_PAUSE)\n");
#endif
}

/* ---- 13 ---- */

#define HFE_FORKS 12
#define HFE_CHILD_CBS 50
static int hfe_stop, hfe_pipe[2];
static unsigned long hfe_queued, hfe_child_ran;

static void hfe_child_cb(struct rcu_head *h)
{
	/* Relaxed: the child's workers run callbacks of their own queues at the same time (a
	 * child thread that migrates queues on two CPUs); read after a barrier, which orders. */
	__atomic_fetch_add(&hfe_child_ran, 1, __ATOMIC_RELAXED);
	free(h);
}

/* In a child that exits without a barrier: one byte per callback, read by the parent. */
static void hfe_pipe_cb(struct rcu_head *h)
{
	char c = 1;
	if (write(hfe_pipe[1], &c, 1) != 1)
		_exit(9);
	free(h);
}

/* The flood's heads come from a pool and its callbacks free nothing: no thread of the parent
 * is inside malloc() or free() for the flood when another forks. ASan's allocator takes no
 * lock around fork(), so a child could inherit its lock held and hang in its first calloc(). */
#define HFE_POOL (1u << 20)
static struct rcu_head *hfe_pool;

static void hfe_count(struct rcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

static void *hfe_flooder(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&hfe_stop, __ATOMIC_ACQUIRE) && hfe_queued + 32 <= HFE_POOL) {
		for (int i = 0; i < 32; i++)
			call_rcu_hurry(&hfe_pool[hfe_queued + (unsigned long)i], hfe_count);
		/* Relaxed: read by the same thread's creator only after pthread_join(). */
		__atomic_fetch_add(&hfe_queued, 32, __ATOMIC_RELAXED);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void hurry_flood_fork_exit(void *arg)
{
	pthread_t fl;
	(void)arg;
	atexit(check_ran_at_exit);
	hfe_pool = (struct rcu_head *)calloc(HFE_POOL, sizeof(struct rcu_head));
	if (!hfe_pool)
		exit(2);
	if (pthread_create(&fl, NULL, hfe_flooder, NULL) != 0)
		exit(2);
	for (int k = 0; k < HFE_FORKS; k++) {
		fault_sleep_ms(10);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
		bool by_exit = false;
#else
		bool by_exit = k & 1;
#endif
		if (by_exit && pipe(hfe_pipe) != 0)
			exit(2);
		pid_t p = fork();
		if (p < 0)
			exit(2);
		if (p == 0) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
			/* Under the sanitizers the child starts no thread, and only the parent's side
			 * of the fork is checked here; the debug and release configurations run the
			 * children's barriers and exit drains.
			 * - TSan: a child that starts threads after a fork taken while another user
			 *   thread ran reports "dup thread with used id" (its registry still holds the
			 *   flooder).
			 * - ASan (GCC 12): its allocator takes no lock around fork(), and its own start
			 *   of a thread allocates (AsanThread::Init, pthread_getattr_np's calloc and
			 *   free). A child inherits a size-class or quarantine lock held by a parent
			 *   thread at the fork, and the restarted worker blocks on it before running
			 *   any of the library's code (gdb: GetFromAllocator and Quarantine::Put under
			 *   AsanThread::ThreadStart; 3 hangs in 1200 runs beside a CPU hog, the
			 *   barrier's 10 s warning in CI). A child that exits through exit() with
			 *   workers running trips LeakSanitizer's stop-the-world ("Running thread ...
			 *   was not suspended"). */
			_exit(0);
#endif
			if (by_exit) {
				close(hfe_pipe[0]);
				for (int i = 0; i < HFE_CHILD_CBS; i++)
					call_rcu_hurry(head_new(), hfe_pipe_cb);
				hfe_in_child =
					1; /* the parent's exit check is not this process's */
				exit(0);   /* the exit drain must run them */
			}
			for (int i = 0; i < HFE_CHILD_CBS; i++)
				call_rcu_hurry(head_new(), hfe_child_cb);
			rcu_barrier();
			_exit(__atomic_load_n(&hfe_child_ran, __ATOMIC_RELAXED) == HFE_CHILD_CBS
				      ? 0
				      : 1);
		}
		int got = 0;
		if (by_exit) {
			close(hfe_pipe[1]);
			char buf[64];
			ssize_t r;
			while ((r = read(hfe_pipe[0], buf, sizeof(buf))) > 0)
				got += (int)r;
			close(hfe_pipe[0]);
		}
		int st;
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "  fork %d: child status 0x%x\n", k, st);
			exit(3);
		}
		if (by_exit && got != HFE_CHILD_CBS) {
			fprintf(stderr,
				"  fork %d: the child's exit ran %d of %d hurried callbacks\n", k,
				got, HFE_CHILD_CBS);
			exit(4);
		}
	}
	__atomic_store_n(&hfe_stop, 1, __ATOMIC_RELEASE);
	pthread_join(fl, NULL);
	/* exit() with the flood's last callbacks pending: the drain runs them (checked by
	 * check_ran_at_exit, registered first, so it runs after the library's drain). */
	expect_ran = __atomic_load_n(&hfe_queued, __ATOMIC_RELAXED);
	exit(7);
}
TEST(hurry_flood_fork_exit)
{
	CHECK(run_case(hurry_flood_fork_exit, "a hurried flood with forks and exits", "not run") ==
	      0);
}

/* ---- 14 ---- */

#ifdef GRACE_DEBUG
static struct srcu_struct bal_ss;
static int bal_held, bal_release, bal_r2_locking, bal_r2_done, bal_gp_done, bal_early;

static void *bal_r1(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(&bal_ss);
	__atomic_store_n(&bal_held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&bal_release, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	__atomic_store_n(&bal_held, 0, __ATOMIC_RELEASE);
	srcu_read_unlock(&bal_ss, idx);
	return NULL;
}

static void *bal_r2(void *arg)
{
	(void)arg;
	__atomic_store_n(&bal_r2_locking, 1, __ATOMIC_RELEASE);
	int idx = srcu_read_lock(&bal_ss); /* paused after choosing its index (R1's) */
	srcu_read_unlock(&bal_ss, idx);
	__atomic_store_n(&bal_r2_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *bal_updater(void *arg)
{
	(void)arg;
	synchronize_srcu(&bal_ss); /* must wait for R1, which holds a section begun before */
	/* Acquire: R1 stores 0 before its unlock, which the grace period waits for. */
	__atomic_store_n(&bal_early, __atomic_load_n(&bal_held, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&bal_gp_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One try: 1 if the grace period ended while R1 held its section. R2's 300 ms pause at its
 * lock ends while the updater's checks of R1's index (100 ms each, back to back while they
 * fail) are between their sums; the offset varies with the try. */
static int balance_try(int k)
{
	pthread_t r1, r2, u;

	__atomic_store_n(&bal_release, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bal_r2_locking, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bal_r2_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bal_gp_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bal_early, 0, __ATOMIC_RELAXED);
	pthread_create(&r1, NULL, bal_r1, NULL);
	while (!__atomic_load_n(&bal_held, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	pthread_create(&r2, NULL, bal_r2, NULL);
	while (!__atomic_load_n(&bal_r2_locking, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	fault_sleep_ms(10 + 17 * k);
	pthread_create(&u, NULL, bal_updater, NULL);
	/* Let R2 lock and unlock (about 300 ms after it began) while the grace period waits for
	 * R1, then a little more, then release R1. */
	while (!__atomic_load_n(&bal_r2_done, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	fault_sleep_ms(400);
	__atomic_store_n(&bal_release, 1, __ATOMIC_RELEASE);
	pthread_join(r1, NULL);
	pthread_join(r2, NULL);
	pthread_join(u, NULL);
	return __atomic_load_n(&bal_early, __ATOMIC_RELAXED);
}

static void srcu_balance(void *arg)
{
	(void)arg;
	setenv("GRACE_TEST_PAUSE", "srcu_lock:300000,srcu_balance:100000", 1); /* read once */
	if (init_srcu_struct(&bal_ss) != 0)
		exit(2);
	fault_watch("srcu balance check", 60.0);
	for (int k = 0; k < 4; k++) {
		if (balance_try(k)) {
			fprintf(stderr,
				"  try %d: the grace period ended while a reader that began before it "
				"still held its section\n",
				k);
			exit(3);
		}
	}
	fault_unwatch();
	cleanup_srcu_struct(&bal_ss);
	exit(7);
}
#endif
TEST(srcu_balance)
{
#ifdef GRACE_DEBUG
	CHECK(run_case(srcu_balance, "an srcu reader in and out between a check's sums", NULL) ==
	      0);
#else
	printf("  skipped: the reader and the check are stopped only in debug builds "
	       "(GRACE_TEST_PAUSE)\n");
#endif
}

/* ---- 15 ---- */

/*
 * The cookie of a harvested chain is taken after the chain is detached (callback.c, the
 * argument at the top). The mutation audit's "snap-before-harvest" took it first: a callback
 * pushed between the two waited for a grace period that may have begun before its call_rcu(),
 * and no test saw it (a window of a few instructions). Debug builds widen it: the pause site
 * "harvest" stops every harvest for 300 ms before it detaches the chain. Meanwhile a grace
 * period runs to its end, a reader enters a section and holds the object, and the object is
 * removed and queued: its callback must wait for the reader.
 */
#ifdef GRACE_DEBUG
#define SNAP_LIVE 0x5eed
#define SNAP_DEAD 0xdead
struct snap_obj {
	int magic;
	struct rcu_head rh;
};
static struct snap_obj *snap_gp;
static int snap_holding, snap_bad;

static void snap_kill(struct rcu_head *h)
{
	struct snap_obj *o = grace_container_of(h, struct snap_obj, rh);
	/* Not freed: the reader may still look (the test checks the poison instead). */
	__atomic_store_n(&o->magic, SNAP_DEAD, __ATOMIC_RELAXED);
}

static void *snap_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	struct snap_obj *o = rcu_dereference(snap_gp);
	__atomic_store_n(&snap_holding, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 400; i++) {
		if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != SNAP_LIVE)
			__atomic_store_n(&snap_bad, 1, __ATOMIC_RELAXED);
		fault_sleep_ms(1);
	}
	rcu_read_unlock();
	return NULL;
}

static void *snap_syncer(void *arg)
{
	(void)arg;
	synchronize_rcu();
	return NULL;
}

static void snap_after_harvest(void *arg)
{
	static struct snap_obj a = { SNAP_LIVE, { NULL, NULL } }, b = { SNAP_LIVE, { NULL, NULL } };
	pthread_t r, s;
	(void)arg;

	setenv("GRACE_TEST_PAUSE", "harvest:300000", 1); /* read at the first harvest */
	fault_pin_to_first_cpu(); /* one queue: the one whose harvest pauses */
	snap_gp = &a;
	call_rcu(head_new(), count_free); /* starts the worker: its first harvest pauses */
	fault_sleep_ms(30);
	if (pthread_create(&s, NULL, snap_syncer, NULL) != 0)
		exit(2);
	pthread_join(s, NULL); /* a whole grace period, inside the pause */
	if (pthread_create(&r, NULL, snap_reader, NULL) != 0)
		exit(2);
	while (!__atomic_load_n(&snap_holding, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	struct snap_obj *old = rcu_xchg_pointer(&snap_gp, &b);
	call_rcu(&old->rh, snap_kill); /* pushed inside the same pause */
	pthread_join(r, NULL);
	rcu_barrier();
	if (__atomic_load_n(&snap_bad, __ATOMIC_RELAXED)) {
		fprintf(stderr, "  a callback pushed during a harvest ran under a reader that "
				"entered its section before the call\n");
		exit(3);
	}
	exit(7);
}
#endif
TEST(snap_after_harvest)
{
#ifdef GRACE_DEBUG
	CHECK(run_case(snap_after_harvest, "call_rcu() during a harvest, a grace period before it",
		       NULL) == 0);
#else
	printf("  skipped: the window is widened only in debug builds (GRACE_TEST_PAUSE)\n");
#endif
}

/* ---- 16 ---- */

#ifdef GRACE_DEBUG
static void *late_synchronize(void *arg)
{
	(void)arg;
	/* The worker takes the marker within a few ms of the barrier's start, then holds 300 ms
	 * at "advance": the grace period completes inside that window. */
	struct timespec t = { 0, 100 * 1000 * 1000 };
	nanosleep(&t, NULL);
	synchronize_rcu();
	return NULL;
}

static void flush_outlives_need(void *arg)
{
	pthread_t th;
	(void)arg;
	setenv("GRACE_TEST_PAUSE", "advance:300000", 1); /* read at the first pass */
	fault_pin_to_first_cpu();                        /* one queue, one worker */
	if (grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	for (int i = 0; i < 10; i++)
		call_rcu(head_new(), count_free);
	/* Let the worker harvest them and settle into its batch sleep (its first advance holds
	 * 300 ms too). */
	struct timespec t = { 0, 600 * 1000 * 1000 };
	nanosleep(&t, NULL);
	if (pthread_create(&th, NULL, late_synchronize, NULL) != 0)
		exit(2);
	fault_watch("rcu_barrier() under BATCH(10 s), its grace period completed by another thread",
		    5.0);
	rcu_barrier();
	fault_unwatch();
	pthread_join(th, NULL);
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == 10 ? 7 : 3);
}
#endif

TEST(flush_outlives_need)
{
#ifdef GRACE_DEBUG
	CHECK(run_case(flush_outlives_need, "a barrier's flush across a grace period ending",
		       NULL) == 0);
#else
	printf("  skipped: the worker is held only in debug builds (GRACE_TEST_PAUSE)\n");
#endif
}

int main(int argc, char **argv)
{
	setenv("GRACE_EXIT_TIMEOUT_MS", EXIT_TIMEOUT_MS, 1);
	return gt_main(argc, argv);
}
