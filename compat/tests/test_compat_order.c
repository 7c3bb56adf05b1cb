/* SPDX-License-Identifier: MIT */
/*
 * Callback order on grace-urcu (docs/compat.md, "call_rcu() and defer_rcu(): order"):
 * call_rcu() of every liburcu flavor runs a thread's callbacks in the order it queued them
 * while the thread stays on one CPU (liburcu's default worker runs them in queue order, and
 * programs rely on it: the callbacks that still use an object are queued first, the one that
 * releases it last); defer_rcu() runs each thread's deferrals in order, also when the thread
 * exits with deferrals pending (its queue is handed over and run later).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>
#include <urcu/urcu-mb.h>
#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>
#include <urcu/urcu-signal.h>
#include <urcu-defer.h>

#include "gtest_lite.h"

enum { F_MEMB, F_MB, F_SIGNAL, F_BP, F_QSBR, F_N };
static const char *const fname[F_N] = { "urcu_memb", "urcu_mb", "urcu_signal", "urcu_bp",
					"urcu_qsbr" };

struct rec {
	struct rcu_head h;
	int seq;
	int *dead;
	int release;
};

static int next_seq, out_of_order, used_after_release;

static void ran(int seq)
{
	if (seq != next_seq)
		out_of_order = 1;
	next_seq = seq + 1;
}

static void on_cb(struct rcu_head *h)
{
	struct rec *r = caa_container_of(h, struct rec, h);

	ran(r->seq);
	if (r->dead) {
		if (r->release)
			*r->dead = 1;
		else if (*r->dead)
			used_after_release = 1;
	}
	free(r);
}

static void queue(int f, int seq, int *dead, int release)
{
	struct rec *r = (struct rec *)calloc(1, sizeof(*r));

	REQUIRE(r);
	r->seq = seq;
	r->dead = dead;
	r->release = release;
	switch (f) {
	case F_MEMB:
		urcu_memb_call_rcu(&r->h, on_cb);
		break;
	case F_MB:
		urcu_mb_call_rcu(&r->h, on_cb);
		break;
	case F_SIGNAL:
		urcu_signal_call_rcu(&r->h, on_cb);
		break;
	case F_BP:
		urcu_bp_call_rcu(&r->h, on_cb);
		break;
	default:
		urcu_qsbr_call_rcu(&r->h, on_cb);
		break;
	}
}

static void barrier(int f)
{
	switch (f) {
	case F_MEMB:
		urcu_memb_barrier();
		break;
	case F_MB:
		urcu_mb_barrier();
		break;
	case F_SIGNAL:
		urcu_signal_barrier();
		break;
	case F_BP:
		urcu_bp_barrier();
		break;
	default:
		urcu_qsbr_barrier();
		break;
	}
}

static void pin_here(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	REQUIRE(cpu >= 0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
}

/* The program of the report: 8 callbacks use an object, the 9th releases it, 200 rounds. */
TEST(call_rcu_users_then_release)
{
	static int dead[200];

	pin_here();
	urcu_qsbr_register_thread();
	urcu_qsbr_thread_offline();
	for (int f = 0; f < F_N; f++) {
		memset(dead, 0, sizeof(dead));
		next_seq = 0;
		out_of_order = used_after_release = 0;
		for (int r = 0; r < 200; r++)
			for (int i = 0; i < 9; i++)
				queue(f, r * 9 + i, &dead[r], i == 8);
		barrier(f);
		CHECK_MSG(!out_of_order && !used_after_release,
			  "%s: callbacks ran out of the order call_rcu() queued them in", fname[f]);
		CHECK_MSG(next_seq == 1800, "%s: %d callbacks ran", fname[f], next_seq);
	}
	urcu_qsbr_unregister_thread();
}

/* Bursts across harvests, with pauses. */
TEST(call_rcu_fifo_across_harvests)
{
	unsigned int seed = 7;

	pin_here();
	for (int f = 0; f < F_N; f++) {
		int seq = 0;
		next_seq = 0;
		out_of_order = 0;
		if (f == F_QSBR) {
			urcu_qsbr_register_thread();
			urcu_qsbr_thread_offline();
		}
		while (seq < 2000) {
			int burst = 1 + (int)(rand_r(&seed) % 50);
			for (int i = 0; i < burst; i++)
				queue(f, seq++, NULL, 0);
			usleep(rand_r(&seed) % 200);
		}
		barrier(f);
		if (f == F_QSBR)
			urcu_qsbr_unregister_thread();
		CHECK_MSG(!out_of_order && next_seq == seq, "%s: order broken", fname[f]);
	}
}

/* defer_rcu(): a thread's deferrals in order, the thread exiting with some pending. */
static int dnext, dbad, dcount;

static void deferred(void *p)
{
	int seq = (int)(intptr_t)p;

	if (seq != dnext)
		dbad = 1;
	dnext = seq + 1;
	dcount++;
}

static void *deferrer(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	REQUIRE(urcu_memb_defer_register_thread() == 0);
	for (int i = 0; i < 3000; i++)
		urcu_memb_defer_rcu(deferred, (void *)(intptr_t)i);
	/* Exits without rcu_defer_unregister_thread(): the queue is handed over. */
	urcu_memb_unregister_thread();
	return NULL;
}

TEST(defer_rcu_order_across_thread_exit)
{
	pthread_t t;

	dnext = dbad = dcount = 0;
	REQUIRE(pthread_create(&t, NULL, deferrer, NULL) == 0);
	pthread_join(t, NULL);
	urcu_memb_defer_barrier();
	CHECK_MSG(!dbad, "defer_rcu(): deferrals ran out of order");
	CHECK_MSG(dcount == 3000, "defer_rcu(): %d of 3000 deferrals ran", dcount);
}

GT_MAIN()
