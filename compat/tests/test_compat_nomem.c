/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu with no memory left: the calls whose documented results include -ENOMEM
 * (docs/compat.md) return it and leave the flavor working.
 *  - create_all_cpu_call_rcu_data(): -ENOMEM (errno ENOMEM); with memory again, 0, and a
 *    call_rcu() through the per-CPU handles runs;
 *  - rcu_defer_register_thread(): -ENOMEM; with memory again, 0, and a deferral runs.
 * The allocations fail through tests/common/fail_alloc.h (the calling thread's malloc() and its
 * kin fail while fail_alloc is set; not under the sanitizers). The engine that runs callbacks
 * and deferrals is set up first, with memory, on the one CPU the thread is pinned to: its
 * queues and its worker thread are environment the library cannot do without, and with no
 * memory for them it stops with "grace: fatal: ..." (docs/api.md, "Conventions"), which is not
 * what these cases test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu/urcu-memb.h>

#include "gtest_lite.h"

#include "fail_alloc.h"

static int ran;

static __attribute__((unused)) void count_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

static __attribute__((unused)) void count_defer(void *p)
{
	(void)p;
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

/* Pin the thread to the CPU it runs on and start the engine's queues and that CPU's worker,
 * with memory: a call_rcu() and a barrier. */
static __attribute__((unused)) void engine_up_here(void)
{
	static struct rcu_head warm;
	cpu_set_t one;
	int cpu = sched_getcpu();

	CPU_ZERO(&one);
	CPU_SET(cpu >= 0 ? cpu : 0, &one);
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
	urcu_memb_register_thread();
	urcu_memb_call_rcu(&warm, count_cb);
	urcu_memb_unregister_thread();
	urcu_memb_barrier();
}

TEST(create_all_cpu_call_rcu_data_without_memory)
{
#ifdef GT_FAIL_ALLOC
	static struct rcu_head rh;

	engine_up_here();
	errno = 0;
	fail_alloc = GT_FAIL_ALL;
	int r = urcu_memb_create_all_cpu_call_rcu_data(0);
	int e = errno;
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM && e == ENOMEM,
		  "create_all_cpu_call_rcu_data() with no memory: %d, errno %d", r, e);
	CHECK(urcu_memb_create_all_cpu_call_rcu_data(0) == 0);
	ran = 0;
	urcu_memb_register_thread();
	urcu_memb_call_rcu(&rh, count_cb);
	urcu_memb_unregister_thread();
	urcu_memb_barrier();
	CHECK_MSG(ran == 1, "the callback ran %d times", ran);
	urcu_memb_free_all_cpu_call_rcu_data();
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

TEST(defer_register_thread_without_memory)
{
#ifdef GT_FAIL_ALLOC
	engine_up_here();
	urcu_memb_register_thread();
	fail_alloc = GT_FAIL_ALL;
	int r = urcu_memb_defer_register_thread();
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM, "rcu_defer_register_thread() with no memory: %d", r);
	if (r == 0)
		urcu_memb_defer_unregister_thread();
	CHECK(urcu_memb_defer_register_thread() == 0);
	ran = 0;
	urcu_memb_defer_rcu(count_defer, NULL);
	urcu_memb_defer_barrier();
	CHECK_MSG(ran == 1, "the deferral ran %d times", ran);
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

GT_MAIN()
