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
	REQUIRE(wait_flag(&ran1, 10000));
	sleep_ms(20);
	urcu_memb_defer_rcu(second, NULL);
	/* No other deferral and no barrier: only the pass's re-check can run it. 10 s is a bound
	 * on liveness (it takes a grace period and a pass), not a timing check. */
	CHECK_MSG(wait_flag(&ran2, 10000),
		  "an entry appended while its queue's pass disarmed never ran");
	pause_site_test_done();
#else
	PAUSE_SITE_SKIPPED();
#endif
}

PAUSE_SITE_MAIN("defer_disarm:100000")
