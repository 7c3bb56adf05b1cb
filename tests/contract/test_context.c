/* SPDX-License-Identifier: MIT */
/*
 * The "allowed" cells of docs/api.md's context summary: every call the table says is legal
 * inside a section, from a callback, or from a thread that never registered is made there,
 * and must do what its entry promises (its callback runs, its object is freed, its cookie
 * completes only after the caller's section, its wait returns). The "misuse" cells are the
 * death tests of tests/unit/test_misuse.c; locks held across every update call are
 * tests/fault/suite_locks.c. Each case runs under alarm(): a call that deadlocks where the
 * table says it is legal fails the test instead of hanging it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <grace/grace.h>

#include "gtest_lite.h"

static struct srcu_struct d1, d2;
static int ran; /* callbacks that ran */

struct obj {
	struct rcu_head h;
	int v;
};

static void count_cb(struct rcu_head *h)
{
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
	free(grace_container_of(h, struct obj, h));
}

static struct obj *obj_new(void)
{
	struct obj *o = (struct obj *)calloc(1, sizeof(*o));
	REQUIRE(o);
	return o;
}

static void setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	REQUIRE(init_srcu_struct(&d1) == 0);
	REQUIRE(init_srcu_struct(&d2) == 0);
	alarm(118); /* after the hang dump at 110 s (GT_HANG_DUMP_S, ctest TIMEOUT 120) */
}

static void all_barriers(void)
{
	rcu_barrier();
	qsbr_barrier();
	srcu_barrier(&d1);
	srcu_barrier(&d2);
	free_rcu_barrier();
	free_qsbr_barrier();
}

/* ---- inside a section of the same flavor ---- */

TEST(update_calls_inside_a_default_section)
{
	setup();
	ran = 0;
	rcu_read_lock();
	call_rcu(&obj_new()->h, count_cb);
	call_rcu_hurry(&obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_rcu(f, h);
	unsigned long c = start_poll_synchronize_rcu();
	unsigned long g = get_state_synchronize_rcu();
	/* The caller's own section began before both cookies: neither can complete inside it. */
	bool early = poll_state_synchronize_rcu(c) || poll_state_synchronize_rcu(g);
	rcu_read_unlock();
	CHECK_MSG(!early, "a cookie taken inside a section completed before the section ended");
	/* Each cookie completes once waited for. Not c alone for both: g names a grace period
	 * that had not started when it was taken, and the one c names may have started by then
	 * (the worker starts it at once, though it cannot end inside the section), so g may name
	 * the next one (docs/api.md, get_state_synchronize_rcu()). */
	cond_synchronize_rcu(c);
	CHECK(poll_state_synchronize_rcu(c));
	cond_synchronize_rcu(g);
	CHECK(poll_state_synchronize_rcu(g));
	/* cond_synchronize_rcu() on a completed cookie is legal inside a section: no wait. */
	rcu_read_lock();
	cond_synchronize_rcu(c);
	rcu_read_unlock();
	all_barriers();
	CHECK_MSG(ran == 2, "%d of 2 callbacks queued inside a section ran", ran);
}

TEST(update_calls_inside_a_qsbr_section)
{
	setup();
	ran = 0;
	qsbr_register_thread();
	qsbr_read_lock();
	call_qsbr(&obj_new()->h, count_cb);
	call_qsbr_hurry(&obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_qsbr(f, h);
	unsigned long c = start_poll_synchronize_qsbr();
	bool early = poll_state_synchronize_qsbr(c);
	/* The default flavor does not wait for QSBR readers (guide.md, section 2): its waits
	 * return inside this section, online, where a QSBR grace period cannot end. */
	synchronize_rcu();
	rcu_barrier();
	early = early || poll_state_synchronize_qsbr(c);
	qsbr_read_unlock();
	qsbr_thread_offline();
	CHECK_MSG(!early, "a QSBR cookie completed while its online caller reported nothing");
	cond_synchronize_qsbr(c);
	all_barriers();
	qsbr_unregister_thread();
	CHECK_MSG(ran == 2, "%d of 2 QSBR callbacks queued inside a section ran", ran);
}

TEST(update_calls_inside_an_srcu_section)
{
	setup();
	ran = 0;
	int i = srcu_read_lock(&d1);
	call_srcu(&d1, &obj_new()->h, count_cb);
	call_srcu_hurry(&d1, &obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_srcu(&d1, f, h);
	unsigned long c = start_poll_synchronize_srcu(&d1);
	bool early = poll_state_synchronize_srcu(&d1, c);
	/* Other domains and other flavors: legal inside a section of d1. */
	synchronize_srcu(&d2);
	srcu_barrier(&d2);
	synchronize_rcu();
	srcu_read_unlock(&d1, i);
	CHECK_MSG(!early, "an srcu cookie completed inside a section of its domain");
	cond_synchronize_srcu(&d1, c);
	all_barriers();
	CHECK_MSG(ran == 2, "%d of 2 srcu callbacks queued inside a section ran", ran);
}

TEST(other_flavors_waits_inside_a_default_section)
{
	setup();
	rcu_read_lock();
	synchronize_srcu(&d1); /* another flavor: legal */
	srcu_barrier(&d1);
	rcu_read_unlock();
	int i = srcu_read_lock(&d1);
	synchronize_rcu(); /* the default flavor inside an srcu section: legal */
	rcu_barrier();
	srcu_read_unlock(&d1, i);
}

/* Sections of different srcu domains may overlap (lock A, lock B, unlock A, unlock B). */
TEST(srcu_sections_of_two_domains_overlap)
{
	setup();
	int a = srcu_read_lock(&d1);
	int b = srcu_read_lock(&d2);
	srcu_read_unlock(&d1, a);
	synchronize_srcu(&d1); /* d1 has no section left: returns */
	srcu_read_unlock(&d2, b);
	synchronize_srcu(&d2);
}

/* ---- from a callback of the same flavor ---- */

static int cb_ok, cb_requeued;
static struct obj *requeue_obj;

static void requeue_cb(struct rcu_head *h)
{
	if (!cb_requeued) {
		cb_requeued = 1;
		call_rcu(h, requeue_cb); /* a callback may queue itself again */
		return;
	}
	free(grace_container_of(h, struct obj, h));
	__atomic_store_n(&cb_ok, 2, __ATOMIC_RELEASE);
}

static void rcu_cb_body(struct rcu_head *h)
{
	/* Sections, call_rcu, free_rcu, the polled API; other flavors' and domains' barriers. */
	rcu_read_lock();
	rcu_read_unlock();
	call_rcu(&obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_rcu(f, h);
	unsigned long c = start_poll_synchronize_rcu();
	(void)poll_state_synchronize_rcu(c);
	(void)get_state_synchronize_rcu();
	srcu_barrier(&d1);
	qsbr_barrier();
	int i = srcu_read_lock(&d1);
	srcu_read_unlock(&d1, i);
	free(grace_container_of(h, struct obj, h));
	__atomic_store_n(&cb_ok, 1, __ATOMIC_RELEASE);
}

TEST(calls_from_a_default_callback)
{
	setup();
	ran = 0;
	cb_ok = 0;
	call_rcu(&obj_new()->h, rcu_cb_body);
	rcu_barrier();
	rcu_barrier(); /* the callback queued another */
	CHECK_MSG(__atomic_load_n(&cb_ok, __ATOMIC_ACQUIRE) == 1, "the callback did not finish");
	all_barriers();
	CHECK(ran == 1);
	cb_ok = 0;
	cb_requeued = 0;
	requeue_obj = obj_new();
	call_rcu(&requeue_obj->h, requeue_cb);
	rcu_barrier();
	rcu_barrier();
	CHECK_MSG(__atomic_load_n(&cb_ok, __ATOMIC_ACQUIRE) == 2,
		  "a requeued callback did not run");
}

static void srcu_cb_body(struct rcu_head *h)
{
	int i = srcu_read_lock(&d1);
	call_srcu(&d1, &obj_new()->h, count_cb);
	srcu_read_unlock(&d1, i);
	struct obj *f = obj_new();
	free_srcu(&d1, f, h);
	synchronize_srcu(&d2); /* another domain: legal */
	rcu_barrier();         /* another flavor: legal */
	free(grace_container_of(h, struct obj, h));
	__atomic_store_n(&cb_ok, 1, __ATOMIC_RELEASE);
}

TEST(calls_from_an_srcu_callback)
{
	setup();
	ran = 0;
	cb_ok = 0;
	call_srcu(&d1, &obj_new()->h, srcu_cb_body);
	srcu_barrier(&d1);
	srcu_barrier(&d1);
	CHECK(__atomic_load_n(&cb_ok, __ATOMIC_ACQUIRE) == 1);
	all_barriers();
	CHECK(ran == 1);
}

static void qsbr_cb_body(struct rcu_head *h)
{
	call_qsbr(&obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_qsbr(f, h);
	rcu_barrier(); /* another flavor's barrier from a QSBR callback: legal */
	free(grace_container_of(h, struct obj, h));
	__atomic_store_n(&cb_ok, 1, __ATOMIC_RELEASE);
}

TEST(calls_from_a_qsbr_callback)
{
	setup();
	ran = 0;
	cb_ok = 0;
	call_qsbr(&obj_new()->h, qsbr_cb_body);
	qsbr_barrier();
	qsbr_barrier();
	CHECK(__atomic_load_n(&cb_ok, __ATOMIC_ACQUIRE) == 1);
	all_barriers();
	CHECK(ran == 1);
}

/* ---- from threads that never registered ---- */

static void *fresh(void *arg)
{
	(void)arg;
	call_rcu(&obj_new()->h, count_cb);
	struct obj *f = obj_new();
	free_rcu(f, h);
	free_rcu_mightsleep(malloc(8));
	synchronize_rcu();
	synchronize_rcu_expedited();
	rcu_barrier();
	free_rcu_barrier();
	cond_synchronize_rcu(start_poll_synchronize_rcu());
	call_qsbr(&obj_new()->h, count_cb);
	synchronize_qsbr();
	qsbr_barrier();
	call_srcu(&d1, &obj_new()->h, count_cb);
	synchronize_srcu(&d1);
	srcu_barrier(&d1);
	return (void *)1;
}

TEST(update_calls_from_a_thread_that_never_registered)
{
	pthread_t t;
	void *r = NULL;

	setup();
	ran = 0;
	REQUIRE(pthread_create(&t, NULL, fresh, NULL) == 0);
	pthread_join(t, &r);
	CHECK(r == (void *)1);
	all_barriers();
	CHECK_MSG(ran == 3, "%d of 3 callbacks of an unregistered thread ran", ran);
}

/* An online QSBR thread that calls synchronize_qsbr() is taken offline for the wait. */
TEST(synchronize_qsbr_from_an_online_thread)
{
	setup();
	qsbr_register_thread();
	CHECK(grace_qsbr_thread_is_online());
	synchronize_qsbr();
	qsbr_barrier();
	CHECK_MSG(grace_qsbr_thread_is_online(), "the caller was left offline after the wait");
	qsbr_unregister_thread();
}

/* ---- signal handlers: srcu_read_lock() is async-signal-safe ---- */

static struct obj *sgp;
static int sig_in, sig_go, sig_bad;

static void srcu_handler(int s)
{
	(void)s;
	int i = srcu_read_lock(&d1);
	struct obj *o = srcu_dereference(sgp, &d1);
	__atomic_store_n(&sig_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sig_go, __ATOMIC_ACQUIRE))
		;
	if (__atomic_load_n(&o->v, __ATOMIC_RELAXED) == 0xdead)
		__atomic_store_n(&sig_bad, 1, __ATOMIC_RELAXED);
	srcu_read_unlock(&d1, i);
}

static int sleeper_stop, sleeper_ready;
static void *sleeper(void *arg)
{
	(void)arg;
	__atomic_store_n(&sleeper_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sleeper_stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

static int sync_done;
static struct obj *retired;
static void *retire(void *arg)
{
	(void)arg;
	synchronize_srcu(&d1);
	__atomic_store_n(&retired->v, 0xdead, __ATOMIC_RELAXED);
	__atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(srcu_section_in_a_signal_handler_is_waited_for)
{
	pthread_t t, r;
	struct sigaction sa;

	setup();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = srcu_handler;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	sgp = obj_new();
	sleeper_stop = sleeper_ready = sig_in = sig_go = sig_bad = sync_done = 0;
	REQUIRE(pthread_create(&t, NULL, sleeper, NULL) == 0);
	/* The signal goes to a thread that runs: under TSan, one sent while the thread is still
	 * being created can be lost (a run hung here for 100 s). Sent again every 2 s until the
	 * handler runs (a second one waits for the first handler to return, and then reads the
	 * new object: harmless). */
	while (!__atomic_load_n(&sleeper_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (int ms = 0; !__atomic_load_n(&sig_in, __ATOMIC_ACQUIRE); ms++) {
		if (ms % 2000 == 0)
			pthread_kill(t, SIGUSR1);
		usleep(1000);
	}
	retired = sgp;
	rcu_assign_pointer(sgp, obj_new());
	REQUIRE(pthread_create(&r, NULL, retire, NULL) == 0);
	usleep(100000);
	bool early = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&sig_go, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	__atomic_store_n(&sleeper_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	free(retired);
	free(sgp);
	CHECK_MSG(!early, "synchronize_srcu() returned under a signal handler's srcu section");
	CHECK(!sig_bad);
}

/* ---- liveness: sections that begin after a grace period cannot hold it ---- */

static int b2b_stop, b2b_started;
static void *back_to_back(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&b2b_stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		__atomic_store_n(&b2b_started, 1, __ATOMIC_RELAXED);
		uint64_t t0 = gt_now_ns();
		while (gt_now_ns() - t0 < 200000)
			; /* 200 us inside, then straight into the next section */
		rcu_read_unlock();
	}
	return NULL;
}

/* synchronize_rcu() waits for the sections that began before it (docs/api.md), not for the
 * ones a reader enters back to back after it: each reader is waited for one section at most.
 * A wait for "any section" would starve here (the reader is outside a section for a few
 * instructions per 200 us). Liveness, not timing: the bound is the alarm. */
TEST(back_to_back_sections_cannot_hold_a_grace_period)
{
	pthread_t t[2];

	setup();
	b2b_stop = b2b_started = 0;
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, back_to_back, NULL) == 0);
	while (!__atomic_load_n(&b2b_started, __ATOMIC_RELAXED))
		usleep(100);
	alarm(60);
	for (int i = 0; i < 50; i++)
		synchronize_rcu();
	alarm(118); /* after the hang dump at 110 s (GT_HANG_DUMP_S, ctest TIMEOUT 120) */
	__atomic_store_n(&b2b_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* Each reader is waited for one section at most: a reader in the section a grace period found
 * leaves it and at once enters another, which it holds; the grace period must end meanwhile
 * (the new section began after it). A wait for "any section" holds the updater until the
 * second section ends, which here is 10 s later: that is the bound, a liveness check. */
static int h_phase, h_sync_done, h_gave_up;
static void *holder2(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&h_phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h_phase, __ATOMIC_ACQUIRE) < 2)
		;
	rcu_read_unlock();
	rcu_read_lock(); /* the next section, straight away */
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(&h_sync_done, __ATOMIC_ACQUIRE)) {
		if (gt_now_ns() - t0 > 10000000000ull) {
			__atomic_store_n(&h_gave_up, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	rcu_read_unlock();
	return NULL;
}

static void *h_sync(void *arg)
{
	(void)arg;
	synchronize_rcu();
	__atomic_store_n(&h_sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(a_reader_is_waited_for_one_section_at_most)
{
	pthread_t r, u;

	setup();
	h_phase = h_sync_done = h_gave_up = 0;
	REQUIRE(pthread_create(&r, NULL, holder2, NULL) == 0);
	while (__atomic_load_n(&h_phase, __ATOMIC_ACQUIRE) < 1)
		usleep(100);
	REQUIRE(pthread_create(&u, NULL, h_sync, NULL) == 0);
	usleep(50000); /* the grace period found the reader in its first section */
	__atomic_store_n(&h_phase, 2, __ATOMIC_RELEASE);
	pthread_join(u, NULL);
	pthread_join(r, NULL);
	/* The reader gives up its second section at 10 s; the grace period ended before. */
	CHECK_MSG(!h_gave_up, "synchronize_rcu() waited for a section that began after it");
}

GT_MAIN()
