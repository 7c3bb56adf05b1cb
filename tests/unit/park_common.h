/* SPDX-License-Identifier: MIT */
/*
 * Shared by the parking tests (test_park.c, test_park_window.c): the object readers hold, the
 * grace period that must wait for them, and a signal handler that holds one inside a section.
 * An object is poisoned when its grace period ends, so a reader that sees the poison was left
 * behind by a grace period.
 */
#ifndef GRACE_TEST_PARK_COMMON_H
#define GRACE_TEST_PARK_COMMON_H

#include <pthread.h>
#include <grace/grace.h>

#include "gtest_lite.h"

#define POISON 0x6b6b6b6b

struct obj {
	int value;
};

static struct obj *gp;

static inline struct obj *obj_new(int v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->value = v;
	return o;
}

/* ---- a grace period that readers hold up ---- */

static struct obj *retired;
static int sync_done;

static inline void *retire_thread(void *arg)
{
	(void)arg;
	synchronize_rcu();
	/* The grace period is over: poison (a reader still holding it would see this). */
	__atomic_store_n(&retired->value, POISON, __ATOMIC_RELAXED);
	__atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Replace gp's object and retire the old one in a thread (synchronize_rcu(), then poison);
 * return whether that grace period ended within ms while the readers hold the old object (it
 * must not); then let_go() lets them leave, and the grace period is waited for and the object
 * freed.
 */
static inline bool retire_ended_early(unsigned ms, void (*let_go)(void))
{
	pthread_t r;

	__atomic_store_n(&sync_done, 0, __ATOMIC_RELAXED);
	retired = rcu_xchg_pointer(&gp, obj_new(2));
	REQUIRE(pthread_create(&r, NULL, retire_thread, NULL) == 0);
	gt_sleep_ms(ms);
	bool early = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE);
	let_go();
	pthread_join(r, NULL);
	free(retired);
	return early;
}

/* ---- a section in a signal handler: holds gp's object until sig_release ---- */

static int sig_holding, sig_release, sig_bad;

static inline void sig_reset(void)
{
	sig_holding = sig_release = sig_bad = 0;
}

static inline void sig_let_go(void)
{
	__atomic_store_n(&sig_release, 1, __ATOMIC_RELEASE);
}

static inline void on_signal(int sig)
{
	(void)sig;
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	__atomic_store_n(&sig_holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sig_release, __ATOMIC_ACQUIRE))
		; /* spin in the handler, inside the section */
	if (__atomic_load_n(&o->value, __ATOMIC_RELAXED) == POISON)
		__atomic_store_n(&sig_bad, 1, __ATOMIC_RELAXED);
	rcu_read_unlock();
}

static inline void install_on_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(sig, &sa, NULL) == 0);
}

#endif
