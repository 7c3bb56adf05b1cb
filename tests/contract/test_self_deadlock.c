/* SPDX-License-Identifier: MIT */
/*
 * A call of grace that would wait for a lock its own thread holds (docs/api.md, "Signal
 * handlers and fork handlers"; docs/guide.md, "fork()"): reported and aborted, never a hang.
 *
 * A program's own pthread_atfork() handlers. POSIX runs prepare handlers in the reverse order of
 * their registration, parent and child handlers in that order. So handlers registered after
 * grace's (from main(), or from any code that runs once grace is initialised) run around
 * grace's: their prepare before grace's takes the library's locks, their parent or child handler
 * after grace's has released them, and they may call grace like any other code. Handlers
 * registered before grace's (here from the executable's .preinit_array, which runs before every
 * shared library's constructor) run inside them: every lock of the library is held by the
 * forking thread, and a call of grace would wait for it forever. That is reported, naming fork,
 * in every build, and aborts (run as contract_atfork).
 *
 * A signal handler: a thread stopped inside a grace period's scan of the registry (debug builds,
 * GRACE_TEST_PAUSE=park_mark), the registry's lock held, is signalled, and its handler opens
 * the thread's first read-side section, which registers it and so takes that lock: reported,
 * naming the signal handler (run as contract_signal_lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace/grace.h>

#include "../common/gtest_lite.h"

struct obj {
	struct rcu_head head;
	int v;
};

static int cb_runs;

static void obj_cb(struct rcu_head *h)
{
	__atomic_fetch_add(&cb_runs, 1, __ATOMIC_RELAXED);
	free((struct obj *)(void *)h);
}

static struct obj *gp_obj;

/* What a handler does: read under RCU, replace the object, retire the old one, queue a
 * callback and (where asked) wait for a grace period. */
static void use_grace(bool sync)
{
	struct obj *n = malloc(sizeof(*n)), *o;

	REQUIRE(n);
	n->v = 1;
	rcu_read_lock();
	o = rcu_dereference(gp_obj);
	if (o)
		REQUIRE(o->v == 1);
	rcu_read_unlock();
	o = rcu_xchg_pointer(&gp_obj, n);
	if (o)
		rcu_retire(o);
	rcu_retire(malloc(24));
	struct obj *c = malloc(sizeof(*c));
	REQUIRE(c);
	call_rcu(&c->head, obj_cb);
	if (sync)
		synchronize_rcu();
}

/* ---- handlers registered after grace's: they may call it ---- */

static int late_on, late_prepares, late_parents, late_childs;

static void late_prepare(void)
{
	if (!late_on)
		return;
	use_grace(true);
	late_prepares++;
}

static void late_parent(void)
{
	if (!late_on)
		return;
	use_grace(true);
	late_parents++;
}

static void late_child(void)
{
	if (!late_on)
		return;
	use_grace(true);
	late_childs++;
}

TEST(handlers_registered_after_grace_may_call_it)
{
	/* From main(): grace's constructor registered its handlers before. */
	REQUIRE(pthread_atfork(late_prepare, late_parent, late_child) == 0);
	use_grace(false); /* the thread's caches exist before the fork: the handlers take them */
#if defined(__SANITIZE_ADDRESS__)
	/* The worker that call_rcu() just started is up before the first fork. GCC 12's ASan
	 * allocator takes no lock around fork() (docs/torture.md, section 5), and a new thread
	 * allocates in ASan's own thread start: a fork there left the child's worker blocked in
	 * SizeClassAllocator64::GetFromAllocator and its main thread in rcu_barrier() (round 0,
	 * once in about 40 runs on a loaded machine). The other builds fork during that start. */
	rcu_barrier();
#endif
	late_on = 1;
	for (int round = 0; round < 3; round++) {
		int before = __atomic_load_n(&cb_runs, __ATOMIC_RELAXED);
		pid_t p = fork();
		REQUIRE(p >= 0);
		if (p == 0) {
			/* The child handler ran after grace's: the child uses grace as usual, and
			 * the callbacks its handlers and the parent's queued run here. */
			int ok = late_childs == 1 && late_prepares == round + 1;
			use_grace(true);
			rcu_barrier();
			ok = ok && __atomic_load_n(&cb_runs, __ATOMIC_RELAXED) >= before + 3;
			free_rcu_barrier();
			_exit(ok ? 0 : 3);
		}
		int st = 0;
		REQUIRE(waitpid(p, &st, 0) == p);
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
		CHECK(late_prepares == round + 1 && late_parents == round + 1 && late_childs == 0);
		rcu_barrier();
		CHECK(__atomic_load_n(&cb_runs, __ATOMIC_RELAXED) >= before + 2);
	}
	late_on = 0;
	free_rcu_barrier();
}

/* ---- handlers registered before grace's: reported ---- */

enum { EARLY_OFF, EARLY_RETIRE, EARLY_FREE_RCU, EARLY_BARRIER, EARLY_CHILD_RETIRE };
static int early_mode;
/* The rain test's window (below): 1 from its prepare handler, which runs before grace's, to
 * early_prepare(), which runs after it. */
static int fork_window;

static void early_prepare(void)
{
	if (__atomic_load_n(&fork_window, __ATOMIC_RELAXED) == 1)
		__atomic_store_n(&fork_window, 2, __ATOMIC_RELAXED);
	switch (early_mode) {
	case EARLY_RETIRE:
		rcu_retire(malloc(24));
		break;
	case EARLY_BARRIER:
		rcu_barrier();
		break;
	case EARLY_FREE_RCU: {
		struct obj *c = malloc(sizeof(*c));
		REQUIRE(c);
		free_rcu(c, head);
		break;
	}
	default:
		break;
	}
}

static void early_child(void)
{
	if (early_mode == EARLY_CHILD_RETIRE) {
		alarm(30); /* the child's own: fork() does not pass alarms on */
		rcu_retire(malloc(24));
	}
}

/* Before any shared library's constructor, grace's among them: these handlers are registered
 * before grace's. */
static void early_register(void)
{
	pthread_atfork(early_prepare, NULL, early_child);
}
__attribute__((section(".preinit_array"),
	       used)) static void (*const early_register_p)(void) = early_register;

/* In a child of the test: the thread's caches and the engine up, then a fork with the mode
 * set. A report aborts the process whose handler called (the grandchild for a child handler:
 * its abort is passed on). */
static void early_fork(void *arg)
{
	use_grace(true);
	rcu_barrier();
	alarm(30); /* a hang ends here, without the report the test looks for */
	early_mode = (int)(intptr_t)arg;
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	early_mode = EARLY_OFF;
	int st = 0;
	if (p > 0)
		waitpid(p, &st, 0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)
		abort();
	fprintf(stderr, "fork returned %d, child status 0x%x: nothing reported\n", (int)p, st);
}

static void expect_fork_report(int mode)
{
	CHECK(gt_child_aborts_with(early_fork, (void *)(intptr_t)mode, "grace: misuse", "fork"));
}

TEST(handler_registered_before_grace_retiring_in_prepare_is_reported)
{
	expect_fork_report(EARLY_RETIRE);
}

TEST(handler_registered_before_grace_freeing_in_prepare_is_reported)
{
	expect_fork_report(EARLY_FREE_RCU);
}

TEST(handler_registered_before_grace_waiting_for_callbacks_in_prepare_is_reported)
{
	expect_fork_report(EARLY_BARRIER);
}

TEST(handler_registered_before_grace_retiring_in_child_is_reported)
{
	expect_fork_report(EARLY_CHILD_RETIRE);
}

/* ---- a signal handler that retires while grace's prepare handler holds its cache ---- */

/* docs/api.md (rcu_retire() and hazptr_retire(), "Signals"): every build reports a retire that
 * a signal handler makes while grace's prepare handler holds the thread's own cache (the
 * handler's call would wait for it). A thread forks in a loop under a rain of signals; the
 * handler retires only inside grace's prepare handler (fork_window 1: the program's own
 * prepare handler, registered after grace's, runs before it, and early_prepare(), registered
 * before, after it) and once that has marked the thread's cache for taking. From there to the
 * end of grace's prepare handler (its other modules' barriers and locks) the handler's retire
 * waited for the cache its own thread held, until the alarm; it is reported. After grace's
 * prepare handler a thread-local flag reports it already (the fork tests above). */
static void *fork_pool[1024];
static int fork_pool_used, fork_hazptr;

static void window_prepare(void)
{
	__atomic_store_n(&fork_window, 1, __ATOMIC_RELAXED);
}

static void window_parent(void)
{
	__atomic_store_n(&fork_window, 0, __ATOMIC_RELAXED);
}

static void fork_window_handler(int sig)
{
	(void)sig;
	if (__atomic_load_n(&fork_window, __ATOMIC_RELAXED) != 1)
		return;
	struct grace__retire *t = fork_hazptr ? grace__hazptr_retire_tls : grace__memb_retire;
	if (!t || !__atomic_load_n(&t->steal, __ATOMIC_RELAXED))
		return;
	int i = __atomic_fetch_add(&fork_pool_used, 1, __ATOMIC_RELAXED);
	if (i >= 1024)
		return;
	if (fork_hazptr)
		hazptr_retire(NULL, fork_pool[i]);
	else
		rcu_retire(fork_pool[i]);
}

static void fork_in_rain(void *arg)
{
	struct sigaction sa;
	struct gt_rain rain;

	fork_hazptr = arg != NULL;
	alarm(60);
	for (int i = 0; i < 1024; i++)
		REQUIRE((fork_pool[i] = malloc(24)) != NULL);
	if (fork_hazptr)
		hazptr_retire(NULL, malloc(24)); /* the thread's cache, before the forks */
	else
		rcu_retire(malloc(24));
	REQUIRE(pthread_atfork(window_prepare, window_parent, NULL) == 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fork_window_handler;
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	/* Most runs are reported within a second; on a loaded machine under ASan, 2 runs in 60
	 * saw no signal land in the window within 10 s (forks are slow there): 40 s. */
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 40000000000ull) {
		pid_t p = fork();
		REQUIRE(p >= 0);
		if (p == 0)
			_exit(0);
		int st;
		while (waitpid(p, &st, 0) != p)
			; /* a signal may interrupt the wait */
	}
	gt_rain_stop(&rain);
	fprintf(stderr, "the forks returned: nothing reported\n");
}

/* The child aborted with a report of the handler's retire: inside grace's prepare handler the
 * retire's own check names the call; a signal that lands after grace's prepare handler has
 * returned, while fork_window is still 1 (the handlers registered before grace's run next), is
 * reported by the fork span's flag instead, naming fork (which one comes first depends on
 * where the rain lands: under qemu-user the second is common). Either is the promise. */
static int fork_rain_reported(void *arg, const char *call)
{
	char out[2048];
	int st = gt_run_child(fork_in_rain, arg, out, sizeof(out));
	int named = strstr(out, call) && strstr(out, "not async-signal-safe");
	int in_fork = strstr(out, "grace: misuse: fork:") && strstr(out, "which this thread holds");
	int ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && (named || in_fork);
	if (!ok)
		fprintf(stderr, "  expected an abort reporting %s: status 0x%x, stderr: %s\n", call,
			st, out);
	return ok;
}

TEST(a_handler_retiring_while_prepare_holds_the_threads_cache_is_reported)
{
#ifdef __SANITIZE_THREAD__
	printf("  (skipped under TSan, which delays a handler to the thread's next call)\n");
	return;
#endif
	CHECK(fork_rain_reported(NULL, "rcu_retire"));
	CHECK(fork_rain_reported((void *)1, "hazptr_retire"));
}

/* ---- a signal handler's call that needs a lock its thread holds ---- */

static int syncer_tid, syncer_stop;

static void first_section_handler(int sig)
{
	(void)sig;
	rcu_read_lock(); /* the thread's first: it registers, under the registry's lock */
	rcu_read_unlock();
}

static void *idle_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	while (!__atomic_load_n(&syncer_stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	__atomic_store_n(&syncer_tid, (int)gettid(), __ATOMIC_RELEASE);
	/* Never a reader itself: its handler's section is its first. The scans park the idle
	 * reader after one grace period (GRACE_PARK_AFTER=1), and stop at park_mark. */
	for (int i = 0; i < 100000 && !__atomic_load_n(&syncer_stop, __ATOMIC_ACQUIRE); i++)
		synchronize_rcu();
	return NULL;
}

static void signal_in_scan(void *arg)
{
	pthread_t r, w;
	int tid;

	(void)arg;
	alarm(30);
	signal(SIGUSR1, first_section_handler);
	REQUIRE(pthread_create(&r, NULL, idle_reader, NULL) == 0);
	REQUIRE(pthread_create(&w, NULL, syncer, NULL) == 0);
	while (!(tid = __atomic_load_n(&syncer_tid, __ATOMIC_ACQUIRE)))
		usleep(100);
	/* Its first sleep is the pause, with the registry's lock held. */
	uint64_t t0 = gt_now_ns();
	while (!gt_thread_sleeps(tid)) {
		REQUIRE(gt_now_ns() - t0 < 20000000000ull);
		usleep(100);
	}
	pthread_kill(w, SIGUSR1);
	pthread_join(w, NULL);
	fprintf(stderr, "the handler returned: nothing reported\n");
}

/* The same in every build, without a pause site: a rain of signals on a thread that runs
 * grace periods in a loop, the signal blocked but for synchronize_rcu(). Each handler's section
 * registers the thread (which unregisters again, the signal blocked, before its next grace
 * period), under the registry's lock; once a signal lands where the grace period's scan holds
 * that lock, the handler's call is reported (glibc's record of the mutex's owner), not a hang
 * until the alarm. */
static int rain_registered;

static void registering_handler(int sig)
{
	(void)sig;
	rcu_read_lock(); /* registers the thread, under the registry's lock */
	rcu_read_unlock();
	__atomic_store_n(&rain_registered, 1, __ATOMIC_RELAXED);
}

static void signal_in_sync_rain(void *arg)
{
	struct sigaction sa;
	struct gt_rain rain;
	sigset_t set;
	pthread_t r;

	(void)arg;
	alarm(30);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = registering_handler;
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	REQUIRE(pthread_create(&r, NULL, idle_reader, NULL) == 0);
	set = gt_block_signal(SIGUSR1);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 10000000000ull) {
		if (__atomic_load_n(&rain_registered, __ATOMIC_RELAXED)) {
			rcu_unregister_thread();
			__atomic_store_n(&rain_registered, 0, __ATOMIC_RELAXED);
		}
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		synchronize_rcu();
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	gt_rain_stop(&rain);
	__atomic_store_n(&syncer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	fprintf(stderr, "the handlers returned: nothing reported\n");
}

TEST(a_handler_waiting_for_a_lock_its_thread_holds_is_reported_in_every_build)
{
#ifdef __SANITIZE_THREAD__
	printf("  (skipped under TSan, which delays a handler to the thread's next call)\n");
	return;
#endif
	CHECK(gt_child_aborts_with(signal_in_sync_rain, NULL, "grace: misuse: signal handler",
				   "a lock of the library"));
}

TEST(a_handler_waiting_for_a_lock_its_thread_holds_is_reported)
{
	const char *e = getenv("GRACE_TEST_PAUSE");
	if (!GRACE__DEBUG || !e || !strstr(e, "park_mark:")) {
		printf("  (skipped: a debug library stopped at park_mark is needed)\n");
		return;
	}
	CHECK(gt_child_aborts_with(signal_in_scan, NULL, "grace: misuse: signal handler",
				   "a lock of the library"));
}

GT_MAIN()
