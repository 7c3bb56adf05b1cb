/* SPDX-License-Identifier: MIT */
/*
 * Regressions of issue 12, faults 1 and 2: fork() while the callback engine is busy.
 *  1. fork() while another thread is inside rcu_barrier(): the parent's barrier markers are
 *     still queued in the child; the child's own barrier must wait for every callback the child
 *     queued, not return on a marker of the parent's barrier.
 *  2. fork() while a worker is invoking a batch: the batch already taken for invocation must
 *     run in the child (docs/guide.md: the parent's queued callbacks run in the child), so that
 *     after srcu_barrier() nothing is pending and cleanup_srcu_struct() frees the domain.
 * And one found later by an independent review:
 *  3. the child runs the callbacks it inherited on other CPUs' queues after its first call,
 *     without a barrier (it started only the worker of the CPU it called from).
 * And one found by a CI run under load (unit_free_worker, fork_with_cached_objects):
 *  4. fork() stopped waiting for a worker inside a callback after 100 ms even when the worker
 *     was runnable (preempted), not blocked: the callback counted as run in the child, which
 *     lost it without a word. Now fork waits up to 2 s for a runnable worker, and gives up on a
 *     blocked one (perhaps on a lock the forking thread holds) after 100 ms, with a warning in
 *     the child.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

/* ---- 1: fork during rcu_barrier() ---- */

struct cb_obj {
	struct rcu_head rh;
};

static unsigned long child_cbs; /* callbacks queued by the child that have run */
static int reader_state;        /* 1: inside its section; 2: told to leave */

static void slow_child_cb(struct rcu_head *h)
{
	fault_sleep_ms(1); /* slow: a barrier that returns early is caught before they all run */
	__atomic_fetch_add(&child_cbs, 1, __ATOMIC_RELAXED);
	free(h);
}

static void plain_cb(struct rcu_head *h)
{
	free(h);
}

static void *reader_main(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&reader_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&reader_state, __ATOMIC_ACQUIRE) != 2)
		fault_sleep_ms(1);
	rcu_read_unlock();
	return NULL;
}

static int barrier_state; /* 1: about to call rcu_barrier(); 2: returned */

static void *barrier_main(void *arg)
{
	(void)arg;
	__atomic_store_n(&barrier_state, 1, __ATOMIC_RELEASE);
	rcu_barrier();
	__atomic_store_n(&barrier_state, 2, __ATOMIC_RELEASE);
	return NULL;
}

/* Queue one callback from each CPU, so that every queue has a worker (and gets a marker). */
static void queue_on_every_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t old;

	sched_getaffinity(0, sizeof(old), &old);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++) {
		cpu_set_t one;
		if (!CPU_ISSET((int)c, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET((int)c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			call_rcu(&((struct cb_obj *)calloc(1, sizeof(struct cb_obj)))->rh,
				 plain_cb);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

#define CHILD_CBS 100

static void child_barrier(void *arg)
{
	(void)arg;
	alarm(60);
	for (int i = 0; i < CHILD_CBS; i++)
		call_rcu(&((struct cb_obj *)calloc(1, sizeof(struct cb_obj)))->rh, slow_child_cb);
	rcu_barrier();
	unsigned long ran = __atomic_load_n(&child_cbs, __ATOMIC_RELAXED);
	if (ran != CHILD_CBS) {
		fprintf(stderr, "child: rcu_barrier() returned with %lu of %d callbacks run\n", ran,
			CHILD_CBS);
		_exit(1);
	}
	_exit(0);
}

TEST(fork_during_rcu_barrier)
{
	static char err[8192];
	pthread_t rd, br;

	queue_on_every_cpu();
	rcu_barrier(); /* every worker started and idle */
	for (int round = 0; round < 3; round++) {
		__atomic_store_n(&reader_state, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&barrier_state, 0, __ATOMIC_RELAXED);
		pthread_create(&rd, NULL, reader_main, NULL);
		while (__atomic_load_n(&reader_state, __ATOMIC_ACQUIRE) != 1)
			fault_sleep_ms(1);
		queue_on_every_cpu();
		pthread_create(&br, NULL, barrier_main, NULL);
		while (__atomic_load_n(&barrier_state, __ATOMIC_ACQUIRE) != 1)
			fault_sleep_ms(1);
		/* The barrier waits for the reader: its markers are queued behind the grace period
		 * the reader holds. Give the workers time to queue them. */
		fault_sleep_ms(100);
		CHECK(__atomic_load_n(&barrier_state, __ATOMIC_ACQUIRE) == 1);
		struct fault_child c = fault_run(child_barrier, NULL, 60, err, sizeof(err));
		__atomic_store_n(&reader_state, 2, __ATOMIC_RELEASE);
		pthread_join(rd, NULL);
		pthread_join(br, NULL);
		char how[96];
		CHECK_MSG(fault_exited(&c, 0), "round %d: child %s: %s", round,
			  fault_how(&c, how, sizeof(how)), err);
	}
}

/* ---- 2: fork while a worker invokes a batch ---- */

#define SLOW_CBS 300
static unsigned long slow_ran;
static struct cb_obj slow_objs[SLOW_CBS];
static struct srcu_struct fork_srcu;

static void slow_cb(struct rcu_head *h)
{
	(void)h;
	fault_sleep_ms(1);
	__atomic_fetch_add(&slow_ran, 1, __ATOMIC_RELAXED);
}

static void child_inflight(void *arg)
{
	(void)arg;
	alarm(60);
	srcu_barrier(&fork_srcu);
	struct grace_cb_stats st;
	grace_srcu_callback_stats(&fork_srcu, &st);
	unsigned long ran = __atomic_load_n(&slow_ran, __ATOMIC_RELAXED);
	if (ran != SLOW_CBS || st.pending != 0) {
		fprintf(stderr,
			"child: after srcu_barrier(): %lu of %d callbacks ran, %llu pending\n", ran,
			SLOW_CBS, (unsigned long long)st.pending);
		_exit(1);
	}
	cleanup_srcu_struct(&fork_srcu);
	_exit(0);
}

TEST(fork_while_worker_invokes)
{
	static char err[8192];

	CHECK(init_srcu_struct(&fork_srcu) == 0);
	for (int round = 0; round < 3; round++) {
		__atomic_store_n(&slow_ran, 0, __ATOMIC_RELAXED);
		for (int i = 0; i < SLOW_CBS; i++)
			call_srcu(&fork_srcu, &slow_objs[i].rh, slow_cb);
		/* Fork while the worker is in the middle of the batch. */
		while (__atomic_load_n(&slow_ran, __ATOMIC_RELAXED) < 20)
			fault_sleep_ms(1);
		struct fault_child c = fault_run(child_inflight, NULL, 60, err, sizeof(err));
		srcu_barrier(&fork_srcu);
		CHECK(__atomic_load_n(&slow_ran, __ATOMIC_RELAXED) == SLOW_CBS);
		char how[96];
		CHECK_MSG(fault_exited(&c, 0), "round %d: child %s: %s", round,
			  fault_how(&c, how, sizeof(how)), err);
	}
	cleanup_srcu_struct(&fork_srcu);
}

/* ---- 3: a child runs the callbacks it inherited on every CPU's queue ---- */

#define OTHER_CBS 200
static unsigned long other_ran;
static struct cb_obj other_objs[OTHER_CBS];
static int other_cpu = -1, other_state; /* 1: queued */

static void other_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&other_ran, 1, __ATOMIC_RELAXED);
}

/* Pinned to another CPU than the forking thread: its callbacks wait on that CPU's queue. */
static void *other_cpu_main(void *arg)
{
	cpu_set_t one;

	(void)arg;
	CPU_ZERO(&one);
	CPU_SET(other_cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		fprintf(stderr, "  sched_setaffinity(%d) failed\n", other_cpu);
	for (int i = 0; i < OTHER_CBS; i++)
		call_rcu(&other_objs[i].rh, other_cb);
	__atomic_store_n(&other_state, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The child: one call on its own CPU (not a barrier), then the inherited callbacks must run. */
static void child_other_cpu(void *arg)
{
	(void)arg;
	(void)start_poll_synchronize_rcu();
	for (int i = 0; i < 20000; i++) {
		if (__atomic_load_n(&other_ran, __ATOMIC_RELAXED) == OTHER_CBS)
			_exit(0);
		fault_sleep_ms(1);
	}
	fprintf(stderr, "child: %lu of %d inherited callbacks of CPU %d run after 20 s\n",
		__atomic_load_n(&other_ran, __ATOMIC_RELAXED), OTHER_CBS, other_cpu);
	_exit(1);
}

/*
 * A fork child starts the worker of the CPU it calls from; the callbacks it inherited on other
 * CPUs' queues must run too, without a barrier (they waited for one, or for a call made on
 * that CPU, for ever).
 */
TEST(fork_child_runs_other_cpus_callbacks)
{
	static char err[8192];
	cpu_set_t all, one;
	pthread_t r, t;
	int self = -1;

	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		if (self < 0)
			self = c;
		else if (other_cpu < 0)
			other_cpu = c;
	}
	if (other_cpu < 0) {
		printf("  one CPU only: nothing to check\n");
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(self, &one);
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
	/* A reader holds the grace period, so the callbacks are still queued at the fork. */
	__atomic_store_n(&reader_state, 0, __ATOMIC_RELAXED);
	REQUIRE(pthread_create(&r, NULL, reader_main, NULL) == 0);
	while (__atomic_load_n(&reader_state, __ATOMIC_ACQUIRE) != 1)
		fault_sleep_ms(1);
	REQUIRE(pthread_create(&t, NULL, other_cpu_main, NULL) == 0);
	while (__atomic_load_n(&other_state, __ATOMIC_ACQUIRE) != 1)
		fault_sleep_ms(1);
	pthread_join(t, NULL);
	struct fault_child c = fault_run(child_other_cpu, NULL, 60, err, sizeof(err));
	__atomic_store_n(&reader_state, 2, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	sched_setaffinity(0, sizeof(all), &all);
	rcu_barrier();
	CHECK(__atomic_load_n(&other_ran, __ATOMIC_RELAXED) == OTHER_CBS);
	char how[96];
	CHECK_MSG(fault_exited(&c, 0), "child %s: %s", fault_how(&c, how, sizeof(how)), err);
}

/* ---- 4: fork while a worker is inside a long callback ---- */

static int long_state; /* 1: the callback started; 2: it finished */
static pthread_mutex_t long_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cb_obj long_obj;

/* Runnable for 400 ms: what a worker preempted on a loaded machine looks like to fork. */
static void spinning_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&long_state, 1, __ATOMIC_RELEASE);
	double t0 = fault_now();
	while (fault_now() - t0 < 0.4)
		__asm__ __volatile__("" ::: "memory");
	__atomic_store_n(&long_state, 2, __ATOMIC_RELEASE);
}

/* Blocked on a lock the forking thread holds: fork must not wait for it for ever. */
static void blocked_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&long_state, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&long_lock);
	__atomic_store_n(&long_state, 2, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&long_lock);
}

static void child_after_spin(void *arg)
{
	(void)arg;
	alarm(60);
	int st = __atomic_load_n(&long_state, __ATOMIC_ACQUIRE);
	if (st != 2) {
		fprintf(stderr, "child: the parent's callback was counted as run unfinished\n");
		_exit(1);
	}
	rcu_barrier();
	_exit(0);
}

static void child_after_block(void *arg)
{
	(void)arg;
	alarm(60);
	/* The callback counts as run here (it never finishes: its worker does not exist); the
	 * child's own barrier must not wait for it. */
	rcu_barrier();
	_exit(__atomic_load_n(&long_state, __ATOMIC_ACQUIRE) == 1 ? 0 : 1);
}

/* fault_run(), with what the child printed from fork's child handler (before fault_run()
 * redirects the child's stderr) caught in warn. */
static struct fault_child run_catching_fork_warning(void (*fn)(void *), char *err, size_t errsz,
						    char *warn, size_t warnsz)
{
	FILE *tf = tmpfile();
	REQUIRE(tf);
	fflush(stderr);
	int saved = dup(2);
	REQUIRE(saved >= 0 && dup2(fileno(tf), 2) == 2);
	struct fault_child c = fault_run(fn, NULL, 60, err, errsz);
	REQUIRE(dup2(saved, 2) == 2);
	close(saved);
	rewind(tf);
	size_t n = fread(warn, 1, warnsz - 1, tf);
	warn[n] = '\0';
	fclose(tf);
	return c;
}

static void queue_long(void (*fn)(struct rcu_head *))
{
	__atomic_store_n(&long_state, 0, __ATOMIC_RELAXED);
	call_rcu(&long_obj.rh, fn);
	while (__atomic_load_n(&long_state, __ATOMIC_ACQUIRE) == 0)
		fault_sleep_ms(1);
}

TEST(fork_waits_for_a_preempted_callback)
{
	static char err[8192];

	char warn[512];

	queue_long(spinning_cb);
	struct fault_child c = run_catching_fork_warning(child_after_spin, err, sizeof(err), warn,
							 sizeof(warn));
	rcu_barrier();
	char how[96];
	CHECK_MSG(fault_exited(&c, 0), "child %s: %s", fault_how(&c, how, sizeof(how)), err);
	CHECK_MSG(!strstr(warn, "fork:"), "child warned: %s", warn);
}

TEST(fork_gives_up_on_a_blocked_callback)
{
	static char err[8192];

	pthread_mutex_lock(&long_lock);
	queue_long(blocked_cb);
	fault_sleep_ms(20); /* inside pthread_mutex_lock() */
	char warn[512];
	struct fault_child c = run_catching_fork_warning(child_after_block, err, sizeof(err), warn,
							 sizeof(warn));
	pthread_mutex_unlock(&long_lock);
	rcu_barrier();
	CHECK(__atomic_load_n(&long_state, __ATOMIC_ACQUIRE) == 2);
	char how[96];
	CHECK_MSG(fault_exited(&c, 0), "child %s: %s", fault_how(&c, how, sizeof(how)), err);
	CHECK_MSG(strstr(warn, "fork: 1 callback was still running"), "no warning: '%s'", warn);
}

/* ---- a callback that forks: its own worker counts itself, nothing is given up on ---- */

static void plain_cb_static(struct rcu_head *h)
{
	(void)h;
}

static int cbfork_status = -1; /* the child's wait status, or -1 */
static char cbfork_warn[512];

static void forking_cb(struct rcu_head *h)
{
	(void)h;
	FILE *tf = tmpfile();
	REQUIRE(tf);
	fflush(stderr);
	int saved = dup(2);
	REQUIRE(saved >= 0 && dup2(fileno(tf), 2) == 2);
	pid_t pid = fork();
	if (pid == 0) {
		/* The child's only thread is this copy of the worker, inside its callback (where
		 * a barrier is misuse): it may still queue and request grace periods. */
		static struct cb_obj again;
		call_rcu(&again.rh, plain_cb_static);
		(void)start_poll_synchronize_rcu();
		_exit(0);
	}
	REQUIRE(dup2(saved, 2) == 2);
	close(saved);
	int st = 0;
	REQUIRE(pid > 0 && waitpid(pid, &st, 0) == pid);
	rewind(tf);
	size_t n = fread(cbfork_warn, 1, sizeof(cbfork_warn) - 1, tf);
	cbfork_warn[n] = '\0';
	fclose(tf);
	/* Release, paired with the test's acquire load (rcu_barrier() orders them as well). */
	__atomic_store_n(&cbfork_status, st, __ATOMIC_RELEASE);
}

TEST(fork_from_a_callback)
{
	static struct cb_obj o;

	call_rcu(&o.rh, forking_cb);
	rcu_barrier();
	int st = __atomic_load_n(&cbfork_status, __ATOMIC_ACQUIRE);
	CHECK_MSG(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x: %s", st,
		  cbfork_warn);
	CHECK_MSG(!strstr(cbfork_warn, "fork:"), "child warned: %s", cbfork_warn);
}

GT_MAIN()
