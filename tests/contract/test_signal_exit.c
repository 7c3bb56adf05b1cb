/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers on a thread that unregisters or exits (docs/api.md, "Process events":
 * read-side sections in a signal handler are safe on a registered thread). A thread is
 * registered until rcu_unregister_thread() returns, or until its exit destructor has run; a
 * handler that interrupts either must have its section waited for like any other, parked
 * thread or not, with membarrier and in the fence fallback, and must leave the registry and
 * its unpark stack whole: later threads are scanned, grace periods go on.
 *
 * Debug builds stop the thread inside its unregistration (GRACE_TEST_PAUSE=unregister:<us>,
 * right after it leaves the registry) and signal it there; the handler holds gp's object
 * while another thread retires it. Release builds have no pause site: there the stress case
 * alone runs (threads registering, unregistering and exiting under a rain of signals whose
 * handlers hold objects).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <grace/grace.h>

#include "../unit/park_common.h"

static int ready, go;

static void wait_flag(int *f)
{
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE)) {
		REQUIRE(gt_now_ns() - t0 < 20000000000ull);
		gt_sleep_ms(1);
	}
}

static bool pause_site_on(void)
{
	const char *e = getenv("GRACE_TEST_PAUSE");
	return GRACE__DEBUG && e && strstr(e, "unregister:");
}

enum how { UNREGISTER, EXIT };

static void *leaver(void *arg)
{
	enum how how = (enum how)(intptr_t)arg;

	rcu_register_thread();
	rcu_read_lock();
	(void)rcu_dereference(gp);
	rcu_read_unlock();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_flag(&go); /* idle: parked meanwhile where parking is on */
	if (how == UNREGISTER) {
		rcu_unregister_thread(); /* pauses inside (debug builds) */
		/* Unregistered now: stay alive until the test is done with the thread. */
		while (!__atomic_load_n(&sig_release, __ATOMIC_ACQUIRE))
			gt_sleep_ms(1);
	}
	return NULL; /* EXIT: the exit destructor unregisters, and pauses inside */
}

/* Is the registry whole? Registered threads counted right, and a new reader is scanned: its
 * section holds a grace period (a cut or cyclic unpark stack fails one or the other, or
 * hangs, which the harness reports with every thread's backtrace). */
static int hold_go, hold_holding, hold_bad;
static void *holder(void *arg)
{
	(void)arg;
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&hold_holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
		__atomic_store_n(&hold_bad, 1, __ATOMIC_RELAXED);
	rcu_read_unlock();
	return NULL;
}
static void hold_let_go(void)
{
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
}

static void registry_is_whole(unsigned long reg0)
{
	pthread_t t;
	unsigned long reg = 0;

	for (int i = 0; i < 8; i++)
		synchronize_rcu(); /* takes the unpark stack */
	grace_rcu_reader_stats(&reg, NULL, NULL, NULL);
	CHECK_MSG(reg == reg0, "%lu threads registered after the leaver left, %lu before it came",
		  reg, reg0);
	hold_go = hold_holding = hold_bad = 0;
	REQUIRE(pthread_create(&t, NULL, holder, NULL) == 0);
	wait_flag(&hold_holding);
	bool early = retire_ended_early(100, hold_let_go);
	pthread_join(t, NULL);
	CHECK_MSG(!early && !hold_bad, "a new thread's section was not waited for after the race");
}

static void one_case(enum how how, bool park)
{
	pthread_t t;
	unsigned long reg0 = 0, parks0 = 0, parks1 = 0;
	const char *what = how == UNREGISTER ? "rcu_unregister_thread()" : "thread exit";

	if (!pause_site_on()) {
		printf("  skipped: needs a debug build and GRACE_TEST_PAUSE=unregister:<us>\n");
		return;
	}
	if (!gp)
		rcu_assign_pointer(gp, obj_new(1));
	install_on_signal(SIGUSR1);
	sig_reset();
	ready = go = 0;
	grace_rcu_reader_stats(&reg0, NULL, &parks0, NULL);
	REQUIRE(pthread_create(&t, NULL, leaver, (void *)(intptr_t)how) == 0);
	wait_flag(&ready);
	if (park) {
		for (int i = 0; i < 12; i++)
			synchronize_rcu();
		grace_rcu_reader_stats(NULL, NULL, &parks1, NULL);
		if (parks1 == parks0) {
			printf("  (parking is off in this run: the thread was not parked)\n");
		}
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	gt_sleep_ms(100); /* inside its unregistration, which pauses 500 ms */
	pthread_kill(t, SIGUSR1);
	wait_flag(&sig_holding);
	bool early = retire_ended_early(100, sig_let_go);
	pthread_join(t, NULL);
	CHECK_MSG(!early, "a grace period ended under a signal handler's section run during %s%s",
		  what, park ? " of a parked thread" : "");
	CHECK(!sig_bad);
	registry_is_whole(reg0);
}

TEST(handler_during_unregister)
{
	one_case(UNREGISTER, false);
}

TEST(handler_during_exit)
{
	one_case(EXIT, false);
}

TEST(handler_during_unregister_parked)
{
	one_case(UNREGISTER, true);
}

TEST(handler_during_exit_parked)
{
	one_case(EXIT, true);
}

/* ---- stress: every build ---- */

#define NCHURN 3
static int stop;
static uint64_t stress_ms = 2000;

static void *churn_unregister(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		rcu_register_thread();
		rcu_read_lock();
		(void)rcu_dereference(gp);
		rcu_read_unlock();
		if (rand() % 4 == 0)
			gt_sleep_ms(1); /* parked now and then (GRACE_PARK_AFTER=1) */
		rcu_unregister_thread();
	}
	return NULL;
}

static void *short_life(void *arg)
{
	(void)arg;
	rcu_read_lock();
	(void)rcu_dereference(gp);
	rcu_read_unlock();
	return NULL;
}

static pthread_t churners[NCHURN];
static void *signaller(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		/* Threads that live and die: signal each until it is gone. */
		pthread_t t;
		REQUIRE(pthread_create(&t, NULL, short_life, NULL) == 0);
		while (pthread_tryjoin_np(t, NULL) != 0) {
			pthread_kill(t, SIGUSR2);
			for (int i = 0; i < NCHURN; i++)
				pthread_kill(churners[i], SIGUSR2);
		}
	}
	return NULL;
}

static int stress_bad;
static void stress_handler(int sig)
{
	(void)sig;
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	for (int i = 0; i < 200; i++) {
		if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
			__atomic_store_n(&stress_bad, 1, __ATOMIC_RELAXED);
		__asm__ __volatile__("" ::: "memory");
	}
	rcu_read_unlock();
}

TEST(stress_signals_while_threads_leave)
{
	pthread_t sg;
	struct sigaction sa;
	const char *e = getenv("GT_STRESS_MS");
	unsigned long reg0 = 0;

	if (pause_site_on()) {
		printf("  skipped: every unregistration pauses in this run (see the stress runs)\n");
		return;
	}
	if (e)
		stress_ms = strtoull(e, NULL, 10);
	if (!gp)
		rcu_assign_pointer(gp, obj_new(1));
	grace_rcu_reader_stats(&reg0, NULL, NULL, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stress_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR2, &sa, NULL) == 0);
	stop = 0;
	stress_bad = 0;
	for (int i = 0; i < NCHURN; i++)
		REQUIRE(pthread_create(&churners[i], NULL, churn_unregister, NULL) == 0);
	REQUIRE(pthread_create(&sg, NULL, signaller, NULL) == 0);
	uint64_t t0 = gt_now_ns();
	unsigned long gps = 0;
	while (gt_now_ns() - t0 < stress_ms * 1000000ull) {
		struct obj *old = rcu_xchg_pointer(&gp, obj_new(1));
		synchronize_rcu();
		__atomic_store_n(&old->value, POISON, __ATOMIC_RELAXED);
		synchronize_rcu(); /* a handler that saw the poison has left */
		free(old);
		gps++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(sg, NULL);
	for (int i = 0; i < NCHURN; i++)
		pthread_join(churners[i], NULL);
	printf("  %lu objects retired\n", gps);
	CHECK_MSG(!stress_bad, "a signal handler's section saw its object freed: its thread was "
			       "unregistering or exiting");
	registry_is_whole(reg0);
}

GT_MAIN()
