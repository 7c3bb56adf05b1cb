/* SPDX-License-Identifier: MIT */
/*
 * Parking's window (debug builds): a reader preempted inside rcu_read_lock(), after it loaded
 * its nesting word and before its store, while the updater parks it. Its check of the waiter
 * word must come after the store (rcu.h): then it sees the PARK bit, hands itself back, and
 * the next grace period waits for its section. A check before the store (a plausible
 * "optimisation") sees no bit, and the section runs with no grace period scanning it.
 *
 * The preemption is GRACE_TEST_PAUSE=rcu_lock:<us> (the environment of this ctest: every
 * outermost lock of the process sleeps that long right before its store), with
 * GRACE_PARK_AFTER=1 so that three grace periods park an idle thread. One reader thread
 * only; the main thread runs no section. Release builds have no pause site: skipped there.
 * Checked to fail with the check moved before the store (docs/torture.md, mutation audit).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <grace/grace.h>

#include "gtest_lite.h"

#define POISON 0x6b6b6b6b

#if GRACE__DEBUG
struct obj {
	int value;
};
static struct obj *gp;
static int ready, go, holding, release, bad, sync_done;
static struct obj *retired;

static void wait_flag(int *f)
{
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE)) {
		REQUIRE(gt_now_ns() - t0 < 20000000000ull);
		gt_sleep_ms(1);
	}
}

static void *reader(void *arg)
{
	(void)arg;
	rcu_register_thread(); /* no section: nothing pauses yet */
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_flag(&go);
	rcu_read_lock(); /* sleeps before its store: parked meanwhile */
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		gt_sleep_ms(1);
	}
	rcu_read_unlock();
	return NULL;
}

static void *retire(void *arg)
{
	(void)arg;
	synchronize_rcu();
	__atomic_store_n(&retired->value, POISON, __ATOMIC_RELAXED);
	__atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}
#endif

TEST(parked_inside_rcu_read_lock)
{
#if GRACE__DEBUG
	pthread_t t, r;
	unsigned long parks0 = 0, parks1 = 0, unparks1 = 0;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "rcu_lock:") || strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=rcu_lock:<us> and membarrier\n");
		return;
	}
	struct obj *a = (struct obj *)malloc(sizeof(*a));
	REQUIRE(a);
	a->value = 1;
	rcu_assign_pointer(gp, a);
	grace_rcu_reader_stats(NULL, NULL, &parks0, NULL);
	REQUIRE(pthread_create(&t, NULL, reader, NULL) == 0);
	wait_flag(&ready);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	gt_sleep_ms(50); /* the reader is inside rcu_read_lock(), before its store */
	for (int i = 0; i < 8; i++)
		synchronize_rcu(); /* parks it: idle, same word, three passes */
	grace_rcu_reader_stats(NULL, NULL, &parks1, NULL);
	CHECK_MSG(parks1 > parks0, "the reader was not parked: the test missed its window");
	CHECK_MSG(!__atomic_load_n(&holding, __ATOMIC_ACQUIRE),
		  "the pause ended before the reader was parked: the test missed its window");
	wait_flag(&holding);
	retired = rcu_xchg_pointer(&gp, (struct obj *)malloc(sizeof(struct obj)));
	REQUIRE(pthread_create(&r, NULL, retire, NULL) == 0);
	gt_sleep_ms(100);
	int early = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	pthread_join(t, NULL);
	grace_rcu_reader_stats(NULL, NULL, NULL, &unparks1);
	CHECK_MSG(!early, "a grace period ended while the reader parked inside its lock held the "
			  "object");
	CHECK(!bad);
	CHECK(unparks1 >= 1);
	free(retired);
	free(gp);
	gp = NULL;
#else
	printf("  skipped: the pause site is compiled into debug builds only\n");
#endif
}

/*
 * A signal handler's section on a parked thread that is handing itself back: the handler runs
 * between the hand-back's clear of PARK and its push, nested in the outermost lock (so its own
 * lock is a nested one and finds no PARK bit any more). The hand-back blocks the thread's
 * signals across that window (grace__memb_lock_flagged()); without the block, the handler's
 * section runs unscanned and the grace period below frees what it holds (found by the Promela
 * model, PARK_SIGNAL; checked to fail with the block removed). Pause site "unpark": 300 ms
 * between the clear and the push.
 */
#if GRACE__DEBUG
static int sig_holding, sig_release, sig_bad;
static void on_signal(int sig)
{
	(void)sig;
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&sig_holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sig_release, __ATOMIC_ACQUIRE))
		; /* inside the section, in the handler */
	if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
		__atomic_store_n(&sig_bad, 1, __ATOMIC_RELAXED);
	rcu_read_unlock();
}

static void *handing_back(void *arg)
{
	(void)arg;
	rcu_register_thread();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_flag(&go);
	rcu_read_lock(); /* pauses before its store (rcu_lock), then in its hand-back (unpark) */
	(void)rcu_dereference(gp);
	rcu_read_unlock();
	return NULL;
}
#endif

TEST(signal_inside_the_hand_back)
{
#if GRACE__DEBUG
	pthread_t t, r;
	struct sigaction sa;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "rcu_lock:500000") || !strstr(e, "unpark:") ||
	    strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=rcu_lock:500000,unpark:<us> and "
		       "membarrier\n");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	ready = go = sync_done = 0;
	struct obj *a = (struct obj *)malloc(sizeof(*a));
	REQUIRE(a);
	a->value = 1;
	struct obj *prev = rcu_xchg_pointer(&gp, a);
	synchronize_rcu();
	free(prev); /* NULL after the first case */
	REQUIRE(pthread_create(&t, NULL, handing_back, NULL) == 0);
	wait_flag(&ready);
	for (int i = 0; i < 8; i++)
		synchronize_rcu(); /* parks the idle thread */
	uint64_t t0 = gt_now_ns();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	/* 500 ms before the store, then the hand-back's pause: signal in its middle. */
	while (gt_now_ns() - t0 < 650000000ull)
		gt_sleep_ms(5);
	pthread_kill(t, SIGUSR1);
	wait_flag(&sig_holding);
	retired = rcu_xchg_pointer(&gp, (struct obj *)malloc(sizeof(struct obj)));
	REQUIRE(pthread_create(&r, NULL, retire, NULL) == 0);
	gt_sleep_ms(100);
	int early = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&sig_release, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	pthread_join(t, NULL);
	CHECK_MSG(!early, "a grace period ended under a signal handler's section run inside a "
			  "parked thread's hand-back");
	CHECK(!sig_bad);
	free(retired);
	free(gp);
#else
	printf("  skipped: the pause sites are compiled into debug builds only\n");
#endif
}

GT_MAIN()
