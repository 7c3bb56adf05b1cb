/* SPDX-License-Identifier: MIT */
/*
 * Parking (core/registry.c, "Parking"; flavor/memb.c): a default-flavor thread idle over several
 * grace periods is no longer scanned; its next rcu_read_lock() hands it back. What must hold:
 *  - idle registered threads get parked, so grace periods stop scanning them
 *    (grace_rcu_reader_stats(): scanned drops to the threads that read);
 *  - a parked thread's next section is waited for like any other: a grace period that starts
 *    while it holds an object does not end before its unlock (the object is poisoned when the
 *    grace period ends: a reader that sees the poison was left behind);
 *  - the same when the section runs in a signal handler of a parked thread blocked in pause();
 *  - parked threads and threads on the unpark stack may exit at any time, and the process may
 *    fork with parked threads: no dangling reference (ASan), the child's grace periods work.
 * Run three ways: adaptive parking (the default), GRACE_PARK_AFTER=1 (every idle thread parked
 * after one pass) and GRACE_NO_PARK=1 (nothing parked: the same sections must hold, parks 0).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <grace/grace.h>

#include "park_common.h"

#define NT 32

static bool parking; /* parking is on in this run (GRACE_NO_PARK unset) */

struct rstats {
	unsigned long reg, scanned, parks, unparks;
};
static struct rstats rs(void)
{
	struct rstats s;
	grace_rcu_reader_stats(&s.reg, &s.scanned, &s.parks, &s.unparks);
	return s;
}

/* Enough grace periods for every idle thread to be parked (the streak, then the confirmation;
 * the adaptive threshold starts at 2). */
static void park_everyone(void)
{
	for (int i = 0; i < 12; i++)
		synchronize_rcu();
}

/* ---- sleepers: read once (register), block until released, then hold a section ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 0: idle; 1: take a section and hold it; 2: leave it; 3: exit */
static int ready, holding, bad;

static void wait_phase(int p)
{
	pthread_mutex_lock(&mu);
	while (phase < p)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}
static void set_phase(int p)
{
	pthread_mutex_lock(&mu);
	phase = p;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void *sleeper(void *arg)
{
	(void)arg;
	rcu_read_lock(); /* registers the thread */
	rcu_read_unlock();
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	wait_phase(1); /* blocked: parked meanwhile */
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	__atomic_fetch_add(&holding, 1, __ATOMIC_RELEASE);
	wait_phase(2); /* blocked inside the section */
	if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	rcu_read_unlock();
	wait_phase(3);
	return NULL;
}

static void let_sleepers_go(void)
{
	set_phase(2);
}

static void wait_count(int *c, int n)
{
	uint64_t t0 = gt_now_ns();
	while (__atomic_load_n(c, __ATOMIC_ACQUIRE) < n) {
		REQUIRE(gt_now_ns() - t0 < 20000000000ull);
		gt_sleep_ms(1);
	}
}

TEST(idle_threads_are_parked_and_come_back)
{
	pthread_t t[NT];

	phase = ready = holding = bad = 0;
	struct obj *a = obj_new(1);
	rcu_assign_pointer(gp, a);
	struct rstats s0 = rs();
	for (int i = 0; i < NT; i++)
		REQUIRE(pthread_create(&t[i], NULL, sleeper, NULL) == 0);
	wait_count(&ready, NT);
	gt_sleep_ms(5); /* into pthread_cond_wait */
	park_everyone();
	struct rstats s1 = rs();
	CHECK(s1.reg >= s0.reg + NT);
	if (parking) {
		/* Every sleeper parked; scanned: at most the threads of this process that read
		 * and are not sleepers (none here but, perhaps, the main thread). */
		CHECK_MSG(s1.parks - s0.parks >= NT, "parks %lu", s1.parks - s0.parks);
		CHECK_MSG(s1.scanned <= s0.scanned + 1, "scanned %lu -> %lu", s0.scanned,
			  s1.scanned);
	} else {
		CHECK(s1.parks == 0 && s1.scanned == s1.reg);
	}
	/* Each sleeper takes a section holding a; then a grace period must wait for all. */
	set_phase(1);
	wait_count(&holding, NT);
	bool early = retire_ended_early(50, let_sleepers_go);
	set_phase(3);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	CHECK_MSG(!early, "a grace period ended while %d handed-back readers held the object", NT);
	CHECK(bad == 0);
	struct rstats s2 = rs();
	if (parking)
		CHECK_MSG(s2.unparks - s0.unparks >= NT, "unparks %lu", s2.unparks - s0.unparks);
	CHECK(s2.reg == s0.reg); /* the sleepers unregistered at exit */
}

/* ---- exits: parked, and handed back but not yet taken by a grace period ---- */

static int exit_mode; /* 0: exit while parked; 1: read once more (hand back), then exit */
static void *reader_then_exit(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	wait_phase(1);
	if (exit_mode == 1) {
		rcu_read_lock(); /* pushes the thread onto the unpark stack */
		(void)rcu_dereference(gp);
		rcu_read_unlock();
	}
	return NULL; /* the exit destructor unregisters a parked or pushed thread */
}

/* NT threads that read once and block until phase 1, parked by the time this returns. */
static void start_idle_threads(pthread_t *t, int mode)
{
	phase = ready = 0;
	exit_mode = mode;
	for (int i = 0; i < NT; i++)
		REQUIRE(pthread_create(&t[i], NULL, reader_then_exit, NULL) == 0);
	wait_count(&ready, NT);
	gt_sleep_ms(5); /* into pthread_cond_wait */
	park_everyone();
}

static void exits(int mode)
{
	pthread_t t[NT];
	struct rstats s0 = rs();

	start_idle_threads(t, mode);
	set_phase(1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	/* The registry holds no pointer into the dead threads' TLS: ASan would report these. */
	park_everyone();
	struct rstats s1 = rs();
	CHECK(s1.reg == s0.reg);
	CHECK(s1.scanned <= s1.reg);
}

TEST(parked_threads_exit)
{
	exits(0);
}

TEST(handed_back_threads_exit_before_a_grace_period_takes_them)
{
	exits(1);
}

/* ---- fork with parked threads ---- */

TEST(fork_with_parked_threads)
{
	pthread_t t[NT];

	start_idle_threads(t, 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* The child has this thread only: its grace periods and sections work. */
		alarm(20);
		struct obj *o = obj_new(3);
		struct obj *old = rcu_xchg_pointer(&gp, o);
		rcu_read_lock();
		(void)rcu_dereference(gp);
		rcu_read_unlock();
		synchronize_rcu();
		park_everyone();
		unsigned long reg = 0, scanned = 0;
		grace_rcu_reader_stats(&reg, &scanned, NULL, NULL);
		_exit(reg <= 1 && scanned <= reg && old != o ? 0 : 3);
	}
	REQUIRE(pid > 0);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
	set_phase(1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
}

/* ---- a section in a signal handler of a parked thread ---- */

static void *pauser(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sig_release, __ATOMIC_ACQUIRE))
		pause(); /* blocked in the kernel: parked */
	return NULL;
}

TEST(section_in_a_signal_handler_of_a_parked_thread)
{
	pthread_t t;

	install_on_signal(SIGUSR1);
	ready = 0;
	sig_reset();
	struct obj *a = obj_new(4);
	struct obj *old = rcu_xchg_pointer(&gp, a);
	synchronize_rcu();
	free(old);
	struct rstats s0 = rs();
	REQUIRE(pthread_create(&t, NULL, pauser, NULL) == 0);
	wait_count(&ready, 1);
	gt_sleep_ms(5);
	park_everyone();
	if (parking)
		CHECK(rs().parks > s0.parks);
	pthread_kill(t, SIGUSR1);
	wait_count(&sig_holding, 1);
	bool early = retire_ended_early(50, sig_let_go);
	pthread_kill(t, SIGUSR1); /* out of pause(); the handler runs a short section */
	pthread_join(t, NULL);
	CHECK_MSG(!early, "a grace period ended under a signal handler's section");
	CHECK(!sig_bad);
}

__attribute__((constructor)) static void setup(void)
{
	const char *e = getenv("GRACE_NO_PARK");
	parking = !(e && *e && strcmp(e, "0") != 0) &&
		  !strcmp(grace_membarrier_mode(), "membarrier");
}

GT_MAIN()
