/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu()'s inline append against a take of its queue, without membarrier (ctest runs it
 * with GRACE_NO_MEMBARRIER=1; docs/compat.md: "without `membarrier` the append takes one full
 * barrier"). One thread defers as fast as it can while another calls rcu_defer_barrier() in a
 * loop: each barrier takes the deferring thread's queue to seal it (src/engine/defer.c, point
 * D4), racing with the appends. The owner's store that says it is appending and the taker's
 * store that says it takes form a store-buffering pair: without the owner's full barrier
 * (mutant defer-fenced-off) both may go ahead, and an entry appended past the seal is lost,
 * or run twice. The deferred function checks that the deferrals run exactly once each, in the
 * order they were made.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <urcu/urcu-memb.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

enum { RUN_MS = 2000 };

static long next_want = 1, bad, done_deferring, barriers;
static long first_bad_got, first_bad_want;

/* Deferred functions run one at a time, in order (docs/compat.md): plain accesses. */
static void check_order(void *p)
{
	long got = (long)(intptr_t)p;

	if (got != next_want) {
		if (!bad) {
			first_bad_got = got;
			first_bad_want = next_want;
		}
		bad++;
	}
	next_want = got + 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *deferrer(void *arg)
{
	long *made = (long *)arg;
	uint64_t end = now_ms() + RUN_MS;
	long i = 1;

	urcu_memb_defer_register_thread();
	while (now_ms() < end) {
		for (int k = 0; k < 4096; k++, i++)
			urcu_memb_defer_rcu(check_order, (void *)(intptr_t)i);
	}
	*made = i - 1;
	uatomic_set(&done_deferring, 1);
	urcu_memb_defer_unregister_thread(); /* runs what is left */
	return NULL;
}

static void *taker(void *arg)
{
	(void)arg;
	while (!uatomic_read(&done_deferring)) {
		urcu_memb_defer_barrier();
		uatomic_inc(&barriers);
	}
	return NULL;
}

TEST(appends_race_takes_of_their_queue)
{
	pthread_t d, t;
	long made = 0;

	REQUIRE(pthread_create(&d, NULL, deferrer, &made) == 0);
	REQUIRE(pthread_create(&t, NULL, taker, NULL) == 0);
	REQUIRE(pthread_join(d, NULL) == 0);
	REQUIRE(pthread_join(t, NULL) == 0);
	urcu_memb_defer_barrier();
	printf("%ld deferrals, %ld barriers\n", made, uatomic_read(&barriers));
	CHECK_MSG(bad == 0, "%ld deferrals out of order or lost (first: got %ld, wanted %ld)", bad,
		  first_bad_got, first_bad_want);
	CHECK_MSG(next_want == made + 1, "%ld deferrals made, the last to run was %ld", made,
		  next_want - 1);
}

GT_MAIN()
