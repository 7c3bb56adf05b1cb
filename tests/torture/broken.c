/* SPDX-License-Identifier: MIT */
/*
 * The deliberately broken flavor, built only into the torture program: proof that the checker
 * can fail. Its readers use the real default-flavor read-side section (so debug-build checks
 * such as rcu_dereference() outside a section stay quiet), but its update side does not wait:
 *  - synchronize and expedited synchronize return at once;
 *  - call invokes the callback at once, in the caller;
 *  - barrier returns at once (trivially "correct", since every callback already ran);
 *  - every cookie is reported complete at once, cond_synchronize never waits;
 *  - free and headless "free" at once: the element is poisoned (its mark cleared, its payload
 *    scribbled, as elem_free() does) and kept in a quarantine ring, which really frees it only
 *    long after, so that a reader finds the poison rather than reused memory or a crash.
 * A correct checker must report FAILURE for it within seconds (tests/torture/torture.cmake,
 * torture_broken, requires it within 10 s).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <grace/rcu.h>

#include "torture.h"

#define QUARANTINE 65536
#define POISON_WORDS 8 /* the words after the rcu_head: mark, gen, age, domain, ... payload */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static void *q_ring[QUARANTINE];
static unsigned long q_next;

static unsigned long broken_cookie;

static int broken_lock(unsigned int d)
{
	(void)d;
	rcu_read_lock();
	return 0;
}
static void broken_unlock(unsigned int d, int idx)
{
	(void)d;
	(void)idx;
	rcu_read_unlock();
}
static bool broken_ongoing(void)
{
	return rcu_read_ongoing();
}
static void broken_sync(unsigned int d)
{
	(void)d; /* the bug: no wait for pre-existing readers */
}
static void broken_call(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	(void)d;
	f(h); /* the bug: no grace period before the callback */
}
static void broken_barrier(unsigned int d)
{
	(void)d;
}
static unsigned long broken_get_state(unsigned int d)
{
	(void)d;
	return __atomic_add_fetch(&broken_cookie, 1, __ATOMIC_RELAXED);
}
static bool broken_poll_state(unsigned int d, unsigned long c)
{
	(void)d;
	(void)c;
	return true; /* the bug: every grace period "has completed" */
}
static void broken_cond_sync(unsigned int d, unsigned long c)
{
	(void)d;
	(void)c;
}
static void broken_free_headless(unsigned int d, void *p)
{
	(void)d; /* the bug: no grace period before the free */
	uint32_t *w = (uint32_t *)((struct rcu_head *)p + 1);
	for (int i = 0; i < POISON_WORDS; i++)
		__atomic_store_n(&w[i], 0xdeadbeefu, __ATOMIC_RELAXED);
	pthread_mutex_lock(&q_lock);
	void *victim = q_ring[q_next % QUARANTINE];
	q_ring[q_next % QUARANTINE] = p;
	q_next++;
	pthread_mutex_unlock(&q_lock);
	free(victim);
}
static void broken_free(unsigned int d, void *p, struct rcu_head *h)
{
	(void)h;
	broken_free_headless(d, p);
}
static void broken_free_barrier(unsigned int d)
{
	(void)d;
}
static const char *broken_mode(void)
{
	return "synchronize does not wait, callbacks run at once";
}

const struct torture_ops torture_broken_ops = {
	.name = "broken",
	.desc = "deliberately broken flavor: the run must report FAILURE",
	.ndomains = 1,
	.broken = true,
	.read_lock = broken_lock,
	.read_unlock = broken_unlock,
	.read_ongoing = broken_ongoing,
	.sync = broken_sync,
	.exp_sync = broken_sync,
	.call = broken_call,
	.barrier = broken_barrier,
	.get_state = broken_get_state,
	.start_poll = broken_get_state,
	.poll_state = broken_poll_state,
	.cond_sync = broken_cond_sync,
	.free = broken_free,
	.free_headless = broken_free_headless,
	.free_barrier = broken_free_barrier,
	.mode = broken_mode,
};
