/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu(): an entry appended while a pass of its queue, having found nothing new, is about
 * to disarm the queue. The owner sees the queue armed and posts nothing; the pass must look at
 * the queue's end again after disarming and post itself (compat/src/defer.c, point 3). Without
 * that re-check the entry waits for the thread's next defer_rcu() or a barrier, and this test,
 * which makes neither, sees it never run. The window is a few instructions: debug builds widen
 * it with GRACE_TEST_PAUSE (100 ms before the disarm); release builds skip the test. The
 * mutation audit's "a pass that disarms never posts again" survived every test before this one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <urcu/urcu-memb.h>

#include "gtest_lite.h"
#include "pause_site.h"

#ifdef GRACE_DEBUG
static int ran1, ran2;

static void first(void *p)
{
	(void)p;
	__atomic_store_n(&ran1, 1, __ATOMIC_RELEASE);
}

static void second(void *p)
{
	(void)p;
	__atomic_store_n(&ran2, 1, __ATOMIC_RELEASE);
}
#endif

TEST(entry_appended_while_the_pass_disarms)
{
#ifdef GRACE_DEBUG
	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(first, NULL);
	/* The pass runs the first entry, finds nothing new and stops for 100 ms before it
	 * disarms the queue: append the second entry then. */
	for (int i = 0; i < 10000 && !__atomic_load_n(&ran1, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	REQUIRE(__atomic_load_n(&ran1, __ATOMIC_ACQUIRE));
	sleep_ms(20);
	urcu_memb_defer_rcu(second, NULL);
	/* No other deferral and no barrier: only the pass's re-check can run it. 10 s is a bound
	 * on liveness (it takes a grace period and a pass), not a timing check. */
	for (int i = 0; i < 10000 && !__atomic_load_n(&ran2, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	CHECK_MSG(__atomic_load_n(&ran2, __ATOMIC_ACQUIRE),
		  "an entry appended while its queue's pass disarmed never ran");
	urcu_memb_defer_barrier();
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();
#else
	printf("  skipped: the window is widened only in debug builds (GRACE_TEST_PAUSE)\n");
#endif
}

PAUSE_SITE_MAIN("defer_disarm:100000")
