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

#include "park_common.h"

#if GRACE__DEBUG
static int ready, go, holding, release, bad;

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

static void let_reader_go(void)
{
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
}
#endif

TEST(parked_inside_rcu_read_lock)
{
#if GRACE__DEBUG
	pthread_t t;
	unsigned long parks0 = 0, parks1 = 0, unparks1 = 0;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "rcu_lock:") || strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=rcu_lock:<us> and membarrier\n");
		return;
	}
	rcu_assign_pointer(gp, obj_new(1));
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
	bool early = retire_ended_early(100, let_reader_go);
	pthread_join(t, NULL);
	grace_rcu_reader_stats(NULL, NULL, NULL, &unparks1);
	CHECK_MSG(!early, "a grace period ended while the reader parked inside its lock held the "
			  "object");
	CHECK(!bad);
	CHECK(unparks1 >= 1);
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
	pthread_t t;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "rcu_lock:500000") || !strstr(e, "unpark:") ||
	    strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=rcu_lock:500000,unpark:<us> and "
		       "membarrier\n");
		return;
	}
	install_on_signal(SIGUSR1);
	sig_reset();
	ready = go = 0;
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
	bool early = retire_ended_early(100, sig_let_go);
	pthread_join(t, NULL);
	CHECK_MSG(!early, "a grace period ended under a signal handler's section run inside a "
			  "parked thread's hand-back");
	CHECK(!sig_bad);
#else
	printf("  skipped: the pause sites are compiled into debug builds only\n");
#endif
}

/*
 * A section that begins after the scan that found the thread idle and before its PARK bit is
 * set: the lock's check of waiter came before the bit, so the section runs with the bit set and
 * the thread pending. The next grace period's confirmation must find it busy and undo the park;
 * a confirmation that parks a pending thread without looking at its word leaves the section
 * unscanned, and the grace period below frees what it holds (the mutation audit's
 * "park-confirm-busy", which every other test missed). Pause site "park_mark": 300 ms between
 * the scan and the bit.
 */
#if GRACE__DEBUG
static int pm_started, pm_holding, pm_release, pm_bad;
static void *busy_when_marked(void *arg)
{
	(void)arg;
	rcu_register_thread();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_flag(&pm_started); /* the grace period is under way: its pass pauses at the mark */
	gt_sleep_ms(100);
	rcu_read_lock(); /* inside the pause: no bit yet */
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&pm_holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&pm_release, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
			__atomic_store_n(&pm_bad, 1, __ATOMIC_RELAXED);
		gt_sleep_ms(1);
	}
	rcu_read_unlock();
	return NULL;
}
static void pm_let_go(void)
{
	__atomic_store_n(&pm_release, 1, __ATOMIC_RELEASE);
}
#endif

TEST(section_begun_while_the_park_is_marked)
{
#if GRACE__DEBUG
	pthread_t t;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "park_mark:") || strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=park_mark:<us> and membarrier\n");
		return;
	}
	if (!gp)
		rcu_assign_pointer(gp, obj_new(1));
	ready = 0;
	REQUIRE(pthread_create(&t, NULL, busy_when_marked, NULL) == 0);
	wait_flag(&ready);
	synchronize_rcu(); /* the first pass records the idle word */
	uint64_t t0 = gt_now_ns();
	__atomic_store_n(&pm_started, 1, __ATOMIC_RELEASE);
	synchronize_rcu(); /* the second finds it idle again and marks it, pausing first */
	CHECK_MSG(gt_now_ns() - t0 >= 250000000ull,
		  "the grace period did not pause at the mark: the test missed its window");
	wait_flag(&pm_holding);
	bool early = retire_ended_early(100, pm_let_go);
	pthread_join(t, NULL);
	CHECK_MSG(!early, "a grace period ended under a section begun between the scan that found "
			  "its thread idle and the mark of the park");
	CHECK(!pm_bad);
#else
	printf("  skipped: the pause sites are compiled into debug builds only\n");
#endif
}

/*
 * The drain keeps what the first scan recorded (the Promela model's DRAIN_RESETS_SEEN, in the
 * library). A thread in a section with its PARK bit set (begun at the mark, as above) hands
 * itself back from a nested lock while the next grace period's pass is about to undo the park
 * (pause site "park_confirm"): it is still scanned, the grace period waits for its section,
 * and it is on the unpark stack. Another thread's exit then drains the stack in the middle of
 * the wait. A drain that resets the record ends the grace period under the section.
 */
#if GRACE__DEBUG
static int dr_nested_go, dr_nested_done;
static void *nested_hand_back(void *arg)
{
	(void)arg;
	rcu_register_thread();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	wait_flag(&pm_started);
	gt_sleep_ms(100);
	rcu_read_lock(); /* inside the mark's pause: no bit yet */
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&pm_holding, 1, __ATOMIC_RELEASE);
	wait_flag(&dr_nested_go);
	rcu_read_lock(); /* nested: finds the bit, hands the thread back */
	rcu_read_unlock();
	__atomic_store_n(&dr_nested_done, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&pm_release, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
			__atomic_store_n(&pm_bad, 1, __ATOMIC_RELAXED);
		gt_sleep_ms(1);
	}
	rcu_read_unlock();
	return NULL;
}
static void *reads_once_and_exits(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	return NULL; /* its exit drains the unpark stack */
}
#endif

TEST(drain_in_the_middle_of_a_wait_keeps_the_record)
{
#if GRACE__DEBUG
	pthread_t t, r, x;
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!e || !strstr(e, "park_mark:") || !strstr(e, "park_confirm:") ||
	    strcmp(grace_membarrier_mode(), "membarrier") != 0) {
		printf("  skipped: needs GRACE_TEST_PAUSE=park_mark:<us>,park_confirm:<us> and "
		       "membarrier\n");
		return;
	}
	if (!gp)
		rcu_assign_pointer(gp, obj_new(1));
	ready = pm_started = pm_holding = pm_release = pm_bad = 0;
	REQUIRE(pthread_create(&t, NULL, nested_hand_back, NULL) == 0);
	wait_flag(&ready);
	synchronize_rcu(); /* records the idle word */
	__atomic_store_n(&pm_started, 1, __ATOMIC_RELEASE);
	synchronize_rcu(); /* marks the park, pausing first: the section begins meanwhile */
	wait_flag(&pm_holding);
	/* The grace period that retires the object: its pass finds the thread pending and busy,
	 * and pauses before undoing the park; the thread's nested lock hands it back then. */
	__atomic_store_n(&sync_done, 0, __ATOMIC_RELAXED);
	retired = rcu_xchg_pointer(&gp, obj_new(2));
	uint64_t t0 = gt_now_ns();
	REQUIRE(pthread_create(&r, NULL, retire_thread, NULL) == 0);
	gt_sleep_ms(100);
	__atomic_store_n(&dr_nested_go, 1, __ATOMIC_RELEASE);
	wait_flag(&dr_nested_done);
	/* Past the 300 ms pause: the grace period waits for the section, asleep. Its stall
	 * timeout (400 ms, the ctest's environment) wakes it once to report, and it looks at
	 * the threads again then: after the drain below. */
	while (gt_now_ns() - t0 < 350000000ull)
		gt_sleep_ms(5);
	REQUIRE(pthread_create(&x, NULL, reads_once_and_exits, NULL) == 0);
	pthread_join(x, NULL); /* its exit drained the stack in the middle of the wait */
	while (gt_now_ns() - t0 < 1000000000ull)
		gt_sleep_ms(5);
	bool early = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE);
	pm_let_go();
	pthread_join(r, NULL);
	pthread_join(t, NULL);
	free(retired);
	CHECK_MSG(!early, "a drain in the middle of a grace period ended the hold of a thread "
			  "still in the section its first scan recorded");
	CHECK(!pm_bad);
#else
	printf("  skipped: the pause sites are compiled into debug builds only\n");
#endif
}

GT_MAIN()
