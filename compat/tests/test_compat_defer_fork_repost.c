/* SPDX-License-Identifier: MIT */
/*
 * fork() while a deferred cache's pass posts itself again (src/engine/defer.c, point D6). The
 * pass clears in_pass and then posts; a fork that copied it between the two would leave the
 * child's cache armed with no pass, and its entries would wait for a barrier. So the pass does
 * both under the cache's lock, which fork's prepare takes first. And a pass the child inherits
 * posted runs only once something in the child calls the engine: the child's first slow
 * defer_rcu() starts it (dadopt()). Debug builds widen the window with GRACE_TEST_PAUSE (200 ms
 * between the clear and the post); release builds skip the test. Each of the two faults
 * (the post outside the lock; no engine start in the child) leaves the child's second entry
 * never run, which the child reports.
 * Fork of a threaded parent whose child starts threads: not under TSan ("dup thread").
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void third(void *p)
{
	(void)p;
}
#endif

TEST(fork_while_the_pass_posts_itself_again)
{
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (its fork child cannot start threads)\n");
#elif defined(GRACE_DEBUG)
	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	/* The first is sealed by the call that arms the pass; the second opens a new block. The
	 * pass seals that block, runs the first entry and, the second not ready yet, posts itself
	 * again: it stops 200 ms between clearing in_pass and the post. Fork then. */
	urcu_memb_defer_rcu(first, NULL);
	urcu_memb_defer_rcu(second, NULL);
	REQUIRE(wait_flag(&ran1, 10000));
	sleep_ms(20);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		/* One deferral (no barrier): the second entry must run through the pass. 10 s is
		 * a bound on liveness, not a timing check. */
		urcu_memb_defer_rcu(third, NULL);
		if (!wait_flag(&ran2, 10000)) {
			fprintf(stderr,
				"child: the entry deferred before fork() never ran (no pass "
				"posted, or the engine not started)\n");
			_exit(3);
		}
		_exit(0);
	}
	int status;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	urcu_memb_defer_barrier();
	CHECK(__atomic_load_n(&ran2, __ATOMIC_ACQUIRE));
	pause_site_test_done();
#else
	PAUSE_SITE_SKIPPED();
#endif
}

PAUSE_SITE_MAIN("defer_repost:200000")
