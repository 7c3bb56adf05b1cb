/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu() (compat/src/defer.c): each thread's queue, run by a callback of the flavor.
 *   - nothing runs before the readers that could hold it are done, and each thread's deferrals
 *     run once, in order (default flavor and QSBR);
 *   - the barriers wait for every deferral queued before them; unregistration runs the thread's;
 *   - threads that exit without unregistering: their deferrals still run; with no barrier and
 *     the thread alive, they run too (the passes drive their grace periods), also while the
 *     thread keeps deferring (before its block fills);
 *   - a stalled reader: the queue stays bounded (the owner runs its own backlog);
 *   - a deferred function that takes a lock the deferring thread holds across defer_rcu();
 *   - fork() while other threads defer: the child defers, waits and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

#define CHECK_EQL(a, b) \
	CHECK_MSG((long)(a) == (long)(b), "%s = %ld, want %ld", #a, (long)(a), (long)(b))

enum { LIVE = 0x11, DEAD = 0xdd, NWRITERS = 2, NREADERS = 2, PER_WRITER = 250000 };

struct obj {
	int magic;
	int retirer; /* the writer whose exchange took it out of gp */
	long seq;    /* that writer's count of retirements */
};

static struct obj *gp;
static int stop;
static long bad_reads, out_of_order, ran, ran_other;
static long last_seq[NWRITERS];

static void retire(void *arg)
{
	struct obj *o = (struct obj *)arg;

	/* Each writer's deferrals run in the order it made them, one at a time. */
	if (o->seq != last_seq[o->retirer] + 1)
		uatomic_inc(&out_of_order);
	last_seq[o->retirer] = o->seq;
	uatomic_set(&o->magic, DEAD);
	free(o);
	uatomic_inc(&ran);
}

static void other(void *arg)
{
	(void)arg;
	uatomic_inc(&ran_other);
}

static struct obj *new_obj(void)
{
	struct obj *o = (struct obj *)calloc(1, sizeof(*o));

	REQUIRE(o);
	o->magic = LIVE;
	return o;
}

/* A reader holds the object a while and looks at it twice: a retirement that does not wait for
 * it is seen (the writers' exchanges and the passes run while it holds it, or is preempted). */
static void check(struct obj *o)
{
	if (!o)
		return;
	if (uatomic_read(&o->magic) != LIVE)
		uatomic_inc(&bad_reads);
	for (int i = 0; i < 1000; i++)
		cmm_barrier();
	if (uatomic_read(&o->magic) != LIVE)
		uatomic_inc(&bad_reads);
}

static void *memb_reader(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	while (!uatomic_read(&stop)) {
		urcu_memb_read_lock();
		check(rcu_dereference(gp));
		urcu_memb_read_unlock();
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void *qsbr_reader(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	urcu_qsbr_register_thread();
	while (!uatomic_read(&stop)) {
		urcu_qsbr_read_lock();
		check(rcu_dereference(gp));
		urcu_qsbr_read_unlock();
		if ((++n & 63) == 0)
			urcu_qsbr_quiescent_state();
	}
	urcu_qsbr_unregister_thread();
	return NULL;
}

static int use_qsbr;

static void *writer(void *arg)
{
	int w = (int)(long)arg;

	if (use_qsbr) {
		urcu_qsbr_register_thread();
		urcu_qsbr_defer_register_thread();
	} else {
		urcu_memb_defer_register_thread();
	}
	for (long s = 1; s <= PER_WRITER; s++) {
		/* The exchange takes the old object out of gp and makes it this writer's. */
		struct obj *old = rcu_xchg_pointer(&gp, new_obj());

		old->retirer = w;
		old->seq = s;
		if (use_qsbr) {
			urcu_qsbr_defer_rcu(retire, old);
			urcu_qsbr_defer_rcu(other, NULL);
			urcu_qsbr_quiescent_state();
		} else {
			urcu_memb_defer_rcu(retire, old);
			urcu_memb_defer_rcu(other, NULL);
		}
	}
	if (use_qsbr) {
		urcu_qsbr_defer_unregister_thread();
		urcu_qsbr_unregister_thread();
	} else {
		urcu_memb_defer_unregister_thread();
	}
	return NULL;
}

/*
 * The writers replace gp's object and defer the old one's retirement: a reader may still be
 * reading it, so an early retirement is a bad read (or, under ASan, a use after free). The
 * last object published stays in gp until main takes it out.
 */
static void run_flavor(int qsbr)
{
	pthread_t r[NREADERS], wt[NWRITERS];

	use_qsbr = qsbr;
	uatomic_set(&stop, 0);
	bad_reads = out_of_order = ran = ran_other = 0;
	for (int i = 0; i < NWRITERS; i++)
		last_seq[i] = 0;
	rcu_assign_pointer(gp, new_obj());
	for (int i = 0; i < NREADERS; i++)
		REQUIRE(pthread_create(&r[i], NULL, qsbr ? qsbr_reader : memb_reader, NULL) == 0);
	for (int i = 0; i < NWRITERS; i++)
		REQUIRE(pthread_create(&wt[i], NULL, writer, (void *)(long)i) == 0);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(wt[i], NULL);
	/* Unregistration ran each writer's deferrals. */
	CHECK_EQL(uatomic_read(&ran), (long)NWRITERS * PER_WRITER);
	CHECK_EQL(uatomic_read(&ran_other), (long)NWRITERS * PER_WRITER);
	uatomic_set(&stop, 1);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);
	CHECK_EQL(uatomic_read(&bad_reads), 0L);
	CHECK_EQL(uatomic_read(&out_of_order), 0L);
	free(rcu_xchg_pointer(&gp, NULL)); /* no reader left */
}

TEST(runs_after_readers_once_in_order_memb)
{
	run_flavor(0);
}

TEST(runs_after_readers_once_in_order_qsbr)
{
	run_flavor(1);
}

/* ---- barriers, exits without unregistration ---- */

static void count(void *arg)
{
	uatomic_inc((long *)arg);
}

static long counted;

static void *defer_and_exit(void *arg)
{
	int n = (int)(long)arg;

	urcu_memb_defer_register_thread();
	for (int i = 0; i < n; i++)
		urcu_memb_defer_rcu(count, &counted);
	return NULL; /* no rcu_defer_unregister_thread(): the queue is left to its callbacks */
}

TEST(barrier_covers_threads_that_exited_without_unregistering)
{
	pthread_t t[8];

	counted = 0;
	for (int round = 0; round < 20; round++) {
		long before = uatomic_read(&counted);
		for (int i = 0; i < 8; i++)
			REQUIRE(pthread_create(&t[i], NULL, defer_and_exit,
					       (void *)(long)(1 + i * 97 + round)) == 0);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		urcu_memb_defer_barrier();
		long want = 0;
		for (int i = 0; i < 8; i++)
			want += 1 + i * 97 + round;
		CHECK_EQL(uatomic_read(&counted) - before, want);
	}
}

TEST(barrier_thread_waits_for_own_deferrals)
{
	long c = 0;

	urcu_memb_defer_register_thread();
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 300; i++)
			urcu_memb_defer_rcu(count, &c);
		urcu_memb_defer_barrier_thread();
		CHECK_EQL(uatomic_read(&c), 300L * (round + 1));
	}
	urcu_memb_defer_unregister_thread();
}

/*
 * docs/compat.md: rcu_barrier() of the flavor also waits for the passes queued before it (they
 * are callbacks, lazy ones on a queue of their own). A thread's first defer_rcu() seals its
 * entry and posts the pass, which runs the entry once its grace period has ended: so when the
 * barrier returns, that deferral has run, with no lazy period to wait out first.
 */
static void *defer_once_then_barrier(void *arg)
{
	long *c = (long *)arg;

	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(count, c);
	urcu_memb_barrier();
	long seen = uatomic_read(c);
	urcu_memb_defer_unregister_thread();
	return (void *)seen;
}

TEST(rcu_barrier_waits_for_the_lazy_pass)
{
	for (int i = 0; i < 20; i++) {
		long c = 0;
		void *seen;
		pthread_t t;

		REQUIRE(pthread_create(&t, NULL, defer_once_then_barrier, &c) == 0);
		REQUIRE(pthread_join(t, &seen) == 0);
		CHECK_MSG((long)seen == 1,
			  "round %d: %ld deferrals ran before rcu_barrier() returned", i,
			  (long)seen);
	}
}

/*
 * docs/compat.md: a deferral runs within about 100 ms and a grace period or two, whether its
 * thread keeps deferring or stops. With no barrier, no unregistration and the thread still
 * registered (a QSBR thread reporting quiescent states), 1, 100 (a partial block) and 400 (two
 * full blocks and a partial one) deferrals all run: the passes drive the grace periods their
 * blocks wait for. The wait allows 20 s: it tests that they run, not how fast. One counter per
 * case, never reused: the wait is a plain poll, with no barrier to order a deferred function's
 * last increment before a new use of its counter.
 */
static long run_counts[2][3];

/* Each flavor's calls, so that one loop runs both. */
struct defer_api {
	const char *name;
	void (*defer)(void (*fct)(void *), void *p);
	void (*quiescent)(void); /* QSBR: report a quiescent state while waiting; else NULL */
};

static void run_without_barrier(const struct defer_api *api, long *counts)
{
	static const long sizes[] = { 1, 100, 400 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long *c = &counts[i];

		for (long k = 0; k < sizes[i]; k++)
			api->defer(count, c);
		for (int ms = 0; ms < 20000 && uatomic_read(c) < sizes[i]; ms++) {
			if (api->quiescent)
				api->quiescent();
			usleep(1000);
		}
		CHECK_MSG(uatomic_read(c) == sizes[i],
			  "%s: %ld of %ld deferrals ran within 20 s, no barrier", api->name,
			  uatomic_read(c), sizes[i]);
	}
}

/* Run fn(api, i) on a registered thread of each flavor (i: 0 memb, 1 qsbr), unregistered after. */
static void on_each_flavor(void (*fn)(const struct defer_api *api, int i))
{
	static const struct defer_api memb = { "memb", urcu_memb_defer_rcu, NULL };
	static const struct defer_api qsbr = { "qsbr", urcu_qsbr_defer_rcu,
					       urcu_qsbr_quiescent_state };

	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	fn(&memb, 0);
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();

	urcu_qsbr_register_thread();
	urcu_qsbr_defer_register_thread();
	fn(&qsbr, 1);
	urcu_qsbr_defer_unregister_thread();
	urcu_qsbr_unregister_thread();
}

static void without_barrier(const struct defer_api *api, int i)
{
	run_without_barrier(api, run_counts[i]);
}

TEST(deferrals_run_without_a_barrier)
{
	on_each_flavor(without_barrier);
}

/* ---- a thread that keeps deferring: its deferrals run before its block fills ---- */

/* The marker goes into a block that already holds an entry (the first deferral of a queue is
 * sealed at once, when it posts the pass), then the thread keeps deferring, one entry every
 * 50 ms. The promise (docs/compat.md) is about 100 ms and a grace period or two: about 5 more
 * deferrals. A queue whose partly filled block is sealed only when the block fills (168
 * entries), or at the owner's next slow call (32 entries), fails: the bound is 20. */
static long keep_marker, keep_other;

static void keep_deferring(const struct defer_api *api, int flavor)
{
	(void)flavor;
	long more = 0;

	keep_marker = 0;
	api->defer(count, &keep_other);
	api->defer(count, &keep_marker);
	while (!uatomic_read(&keep_marker) && more < 20) {
		for (int i = 0; i < 50; i++) {
			if (api->quiescent)
				api->quiescent();
			usleep(1000);
		}
		api->defer(count, &keep_other);
		more++;
	}
	CHECK_MSG(uatomic_read(&keep_marker) == 1,
		  "%s: a deferral had not run after its thread deferred %ld more, one every 50 ms",
		  api->name, more);
}

TEST(deferrals_run_while_the_thread_keeps_deferring)
{
	on_each_flavor(keep_deferring);
}

/* ---- a stalled reader: the backlog stays bounded ---- */

static long stall_ran;
static int stall_go;

static void *stalling_reader(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	uatomic_set(&stall_go, 1);
	usleep(200 * 1000);
	urcu_memb_read_unlock();
	urcu_memb_unregister_thread();
	return NULL;
}

TEST(stalled_reader_bounds_the_backlog)
{
	pthread_t t;
	long max_pending = 0;
	const long n = 100000;

	stall_ran = 0;
	stall_go = 0;
	urcu_memb_defer_register_thread();
	REQUIRE(pthread_create(&t, NULL, stalling_reader, NULL) == 0);
	while (!uatomic_read(&stall_go))
		usleep(100);
	for (long i = 0; i < n; i++) {
		urcu_memb_defer_rcu(count, &stall_ran);
		long pending = (i + 1) - uatomic_read(&stall_ran);
		if (pending > max_pending)
			max_pending = pending;
	}
	pthread_join(t, NULL);
	urcu_memb_defer_unregister_thread();
	CHECK_EQL(uatomic_read(&stall_ran), n);
	/* 16320 entries is the bound (defer.c, DQ_CAP), checked when a block of 255 fills, so it
	 * may be passed by the rest of one block; the reader stalls long enough to reach it. */
	CHECK_MSG(max_pending <= 16320 + 254 + 8 && max_pending >= 16000, "max pending %ld",
		  max_pending);
}

/* ---- a deferred function that takes a lock its deferrer holds ---- */

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static long locked_ran;

static void takes_app_lock(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&app_lock);
	locked_ran++;
	pthread_mutex_unlock(&app_lock);
}

/*
 * The deferrer holds app_lock across its defer_rcu() calls, enough of them to pass the backlog
 * bound (the owner then waits for a grace period and runs its own), while the passes call
 * takes_app_lock() on the workers. No lock of the queue may be held while a deferred function
 * runs: else the owner, holding app_lock, waits for the queue's lock, and the pass holding it
 * waits for app_lock.
 */
TEST(deferred_function_takes_a_lock_the_deferrer_holds)
{
	const long n = 200000;

	locked_ran = 0;
	urcu_memb_defer_register_thread();
	for (long i = 0; i < n; i += 1000) {
		pthread_mutex_lock(&app_lock);
		for (int k = 0; k < 1000; k++)
			urcu_memb_defer_rcu(takes_app_lock, NULL);
		pthread_mutex_unlock(&app_lock);
	}
	urcu_memb_defer_barrier();
	pthread_mutex_lock(&app_lock);
	CHECK_EQL(locked_ran, n);
	pthread_mutex_unlock(&app_lock);
	urcu_memb_defer_unregister_thread();
}

/* ---- fork while other threads defer ---- */

static long fork_ran;

static void *busy_deferrer(void *arg)
{
	(void)arg;
	urcu_memb_defer_register_thread();
	while (!uatomic_read(&stop)) {
		for (int i = 0; i < 1000; i++)
			urcu_memb_defer_rcu(count, &fork_ran);
		if (rand() % 4 == 0)
			urcu_memb_defer_barrier_thread();
	}
	urcu_memb_defer_unregister_thread();
	return NULL;
}

static int fork_child(void)
{
	long c = 0;

	urcu_memb_defer_register_thread();
	for (int i = 0; i < 5000; i++)
		urcu_memb_defer_rcu(count, &c);
	urcu_memb_defer_barrier();
	if (uatomic_read(&c) != 5000)
		return 2;
	urcu_memb_defer_unregister_thread();
	return 0;
}

TEST(fork_while_other_threads_defer)
{
	pthread_t t[2];
	int failed = 0, first = 0;

#if defined(__SANITIZE_ADDRESS__)
	/* GCC 12's ASan allocator takes no lock around fork(): a child can inherit one of its
	 * size-class locks held by a parent thread and hang in malloc() (docs/torture.md, §5; the
	 * test command skips fault_fork and compat_lfht_fork under ASan for the same reason). */
	printf("  skipped under ASan: its allocator is not fork-safe\n");
	return;
#elif defined(__SANITIZE_THREAD__)
	/* The children start threads (libgrace's workers restart at their first callback), which
	 * TSan does not support after a fork of a threaded parent (docs/torture.md, §5). */
	printf("  skipped under TSan: the children start threads\n");
	return;
#endif
	uatomic_set(&stop, 0);
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, busy_deferrer, NULL) == 0);
	for (int i = 0; i < 30; i++) {
		int status;
		pid_t pid = fork();

		REQUIRE(pid >= 0);
		if (pid == 0) {
			alarm(60);
			_exit(fork_child());
		}
		REQUIRE(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!failed++)
				first = status;
		}
		usleep(2000);
	}
	uatomic_set(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_MSG(failed == 0, "%d of 30 children failed; the first: status %#x", failed, first);
	urcu_memb_defer_barrier();
}

GT_MAIN()
