/* SPDX-License-Identifier: MIT */
/*
 * The wait's "blocked" signal (core/wait.h, reg_blocked() in core/registry.c): a grace-period
 * driver that waits for a reader last seen on its own CPU stops spinning and sleeps at once,
 * and that reader, once it runs, ends its section (or reports its quiescent state), sees the
 * flag and wakes the driver.
 *
 * Every thread of each test is pinned to one CPU, so the readers the driver waits for are
 * always preempted on the driver's CPU: the signal fires on nearly every grace period, and the
 * sleep/wake path it leads to is exercised hundreds of times. What must hold:
 *  - no reader sees a freed object (each is poisoned before free: a grace period that ended
 *    early shows up as a poisoned read);
 *  - no wait hangs (a lost wake-up: the test's timeout fails it);
 *  - with rseq, the signal fires (grace__wait_nblocked grows, or for the default flavor's asks
 *    grace__memb_ask_sleeps): without the signal the driver would spin its budget first and
 *    the counts would stay put;
 *  - for QSBR, whose scan alone proves the readers done, the driver sleeps light (a local
 *    fence instead of membarrier, core/wait.c), and the default flavor never does. How many
 *    light sleeps ran out of time is printed, not checked: a loaded machine can delay the
 *    reader past the bound without any wake-up being lost.
 * A third test makes the hint mislead on purpose: an online QSBR reader blocks 20 ms in the
 * kernel after running on the driver's CPU; the light sleep must run out and the wait fall back
 * to the exact protocol, ending when the reader reports.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <grace/grace.h>
#include <grace/qsbr.h>
#include <grace/internal/rseq.h>

#include "core/wait.h"
#include "flavor/memb.h"
#include "gt_cpu.h"
#include "gtest_lite.h"

#define GPS 300
#define POISON 0x6b6b6b6b

struct obj {
	int value;
};

static struct obj *gp;

/* The first object readers find (value 0). */
static void publish_first(void)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));

	REQUIRE(o);
	o->value = 0;
	rcu_assign_pointer(gp, o);
}
static int stop;
static unsigned long bad_reads, nreads, started;
static int here_cpu; /* the driver's CPU, which its readers share */

static bool pin_here(void)
{
	here_cpu = gt_pin(pthread_self(), -1);
	return here_cpu >= 0;
}

static void check_obj(const struct obj *o)
{
	if (o && grace_load_relaxed(&o->value) == POISON)
		grace_fetch_add(&bad_reads, 1, __ATOMIC_RELAXED);
}

/* A few hundred nanoseconds inside the section, so a preemption lands inside one. */
static void dwell(void)
{
	for (int i = 0; i < 200; i++)
		grace_cpu_relax();
}

/* A reader pinned to the driver's CPU: QSBR (arg non-NULL: online, a quiescent state every 64
 * reads) or the default flavor (a section per read, two dereferences each). */
static void *reader(void *arg)
{
	const bool qsbr = arg != NULL;
	unsigned long n = 0;

	(void)gt_pin(pthread_self(), here_cpu);
	if (qsbr)
		qsbr_register_thread();
	else
		rcu_register_thread();
	grace_fetch_add(&started, 1, __ATOMIC_RELAXED); /* a count only: the driver just waits */
	/* Acquire: pairs with the driver's release store of stop (nothing to order but the exit). */
	while (!grace_load_acquire(&stop)) {
		if (!qsbr)
			rcu_read_lock();
		check_obj(rcu_dereference(gp));
		dwell();
		check_obj(rcu_dereference(gp));
		if (!qsbr)
			rcu_read_unlock();
		if (qsbr && (++n & 63) == 0)
			qsbr_quiescent_state();
		else if (!qsbr)
			n++;
	}
	if (qsbr)
		qsbr_unregister_thread();
	else
		rcu_unregister_thread();
	grace_fetch_add(&nreads, n, __ATOMIC_RELAXED);
	return NULL;
}

/* GPS updates: publish, wait (sync), poison and free the old object. */
static void run(bool qsbr, void (*sync)(void))
{
	pthread_t t[2];
	unsigned long before = grace_load_relaxed(&grace__wait_nblocked);
	unsigned long light0 = grace_load_relaxed(&grace__wait_nlight);
	unsigned long lightto0 = grace_load_relaxed(&grace__wait_nlight_timeout);
	unsigned long as0 = grace_load_relaxed(&grace__memb_ask_sleeps);
	unsigned long aso0 = grace_load_relaxed(&grace__memb_ask_sleeps_out);

	if (!pin_here()) {
		printf("  (cannot pin to one CPU: the signal is not exercised)\n");
		return;
	}
	grace_store_relaxed(&stop, 0);
	grace_store_relaxed(&bad_reads, 0ul);
	grace_store_relaxed(&nreads, 0ul);
	grace_store_relaxed(&started, 0ul);
	publish_first();
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, reader, qsbr ? &here_cpu : NULL) == 0);
	while (grace_load_relaxed(&started) < 2) /* both readers registered and reading */
		sched_yield();
	for (int i = 1; i <= GPS; i++) {
		struct obj *n = (struct obj *)malloc(sizeof(*n));
		REQUIRE(n);
		n->value = i;
		struct obj *old = rcu_xchg_pointer(&gp, n);
		sync();
		grace_store_relaxed(&old->value, POISON);
		free(old);
	}
	grace_store_release(&stop, 1); /* pairs with the readers' acquire loads of stop */
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free(rcu_xchg_pointer(&gp, (struct obj *)NULL));
	gt_unpin();

	unsigned long nb = grace_load_relaxed(&grace__wait_nblocked) - before;
	unsigned long nl = grace_load_relaxed(&grace__wait_nlight) - light0;
	unsigned long nlt = grace_load_relaxed(&grace__wait_nlight_timeout) - lightto0;
	unsigned long as = grace_load_relaxed(&grace__memb_ask_sleeps) - as0;
	unsigned long aso = grace_load_relaxed(&grace__memb_ask_sleeps_out) - aso0;
	printf("  %d grace periods, %lu reads, %lu waits cut short by the signal, %lu light "
	       "sleeps (%lu ran out), %lu sleeps for answers (%lu ran out)\n",
	       GPS, grace_load_relaxed(&nreads), nb, nl, nlt, as, aso);
	CHECK(grace_load_relaxed(&bad_reads) == 0);
	if (grace__rseq_thread_ready()) {
		/* The default flavor's grace periods ask first: a reader inside its section on
		 * the driver's CPU makes it sleep for the answers (flavor/memb.c), one outside
		 * makes it fall back to the wait at once, where the signal fires. */
		CHECK_MSG(nb + as > 0, "no wait saw its reader blocked on the driver's CPU");
		if (qsbr) {
			CHECK_MSG(nl > 0, "no light sleep");
		} else {
			CHECK_MSG(nl == 0, "the default flavor needs barrier W: no light sleep");
		}
	}
}

static void sync_qsbr(void)
{
	synchronize_qsbr();
}

static void sync_rcu(void)
{
	synchronize_rcu();
}

TEST(qsbr_readers_on_the_drivers_cpu)
{
	run(true, sync_qsbr);
}

TEST(default_readers_on_the_drivers_cpu)
{
	run(false, sync_rcu);
}

/* An online QSBR reader that last ran on the driver's CPU, then blocks 20 ms in the kernel
 * without a quiescent state: the hint says "here", the driver sleeps light, the sleep runs out
 * (nobody can wake it within 1 ms) and the wait must fall back to the exact protocol and end
 * when the reader, awake again, reports its quiescent state. */
static void *sleepy_reader(void *arg)
{
	(void)arg;
	(void)gt_pin(pthread_self(), here_cpu);
	qsbr_register_thread();
	grace_fetch_add(&started, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++) {
		check_obj(rcu_dereference(gp));
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL); /* online: holds the grace period meanwhile */
		check_obj(rcu_dereference(gp));
		qsbr_quiescent_state();
	}
	qsbr_unregister_thread();
	return NULL;
}

TEST(qsbr_light_sleep_runs_out_and_falls_back)
{
	pthread_t t;
	unsigned long lt0 = grace_load_relaxed(&grace__wait_nlight_timeout);

	if (!pin_here())
		return;
	grace_store_relaxed(&started, 0ul);
	grace_store_relaxed(&bad_reads, 0ul);
	publish_first();
	REQUIRE(pthread_create(&t, NULL, sleepy_reader, NULL) == 0);
	while (grace_load_relaxed(&started) < 1)
		sched_yield();
	for (int i = 1; i <= 3; i++) {
		struct obj *n = (struct obj *)malloc(sizeof(*n));
		REQUIRE(n);
		n->value = i;
		struct obj *old = rcu_xchg_pointer(&gp, n);
		synchronize_qsbr(); /* must end: the reader reports after its sleep */
		grace_store_relaxed(&old->value, POISON);
		free(old);
	}
	pthread_join(t, NULL);
	free(rcu_xchg_pointer(&gp, (struct obj *)NULL));
	gt_unpin();
	unsigned long lt = grace_load_relaxed(&grace__wait_nlight_timeout) - lt0;
	printf("  light sleeps that ran out: %lu\n", lt);
	CHECK(grace_load_relaxed(&bad_reads) == 0);
	if (grace__rseq_thread_ready())
		CHECK_MSG(lt > 0, "no light sleep ran out though the reader slept 20 ms");
}

GT_MAIN()
