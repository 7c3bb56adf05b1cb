/* SPDX-License-Identifier: MIT */
/*
 * fork() while another thread arms its deferred cache (src/engine/defer.c, points D3 and D6).
 * A thread's first defer_rcu() arms its cache's pass and posts it after the call. A fork that
 * copied the cache armed but with no pass posted would strand it in the child: the thread does
 * not exist there, so its cache is dead, and a dead cache is drained only by its pass. So the
 * owner arms and posts under the cache's lock, which fork's prepare takes first (darm()).
 * Debug builds hold the owner 200 ms inside that window (GRACE_TEST_PAUSE=defer_arm) while
 * the main thread forks; the child must see the other thread's deferral run, with no barrier.
 * Release builds skip the test. Fork of a threaded parent whose child starts threads: not under
 * TSan ("dup thread").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "gtest_lite.h"
#include "pause_site.h"

#ifdef GRACE_DEBUG
static int ran, deferring, forked;

static void mark(void *p)
{
	(void)p;
	__atomic_store_n(&ran, 1, __ATOMIC_RELEASE);
}

static void other(void *p)
{
	(void)p;
}

static void *arming_thread(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	__atomic_store_n(&deferring, 1, __ATOMIC_RELEASE);
	urcu_memb_defer_rcu(mark, NULL); /* arms the cache: held 200 ms before the post */
	while (!__atomic_load_n(&forked, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();
	return NULL;
}
#endif

TEST(fork_while_another_thread_arms_its_cache)
{
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (its fork child cannot start threads)\n");
#elif defined(GRACE_DEBUG)
	pthread_t t;

	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	REQUIRE(pthread_create(&t, NULL, arming_thread, NULL) == 0);
	while (!__atomic_load_n(&deferring, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	sleep_ms(50); /* inside the 200 ms pause */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		/* One deferral of this thread (no barrier): its slow call starts the engine for
		 * what the child inherited. 10 s bounds liveness; it is not a timing check. */
		urcu_memb_defer_rcu(other, NULL);
		if (!wait_flag(&ran, 10000)) {
			fprintf(stderr, "child: the other thread's deferral never ran (its cache "
					"armed with no pass)\n");
			_exit(3);
		}
		_exit(0);
	}
	__atomic_store_n(&forked, 1, __ATOMIC_RELEASE);
	int status;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	REQUIRE(pthread_join(t, NULL) == 0);
	CHECK(__atomic_load_n(&ran, __ATOMIC_ACQUIRE));
	pause_site_test_done();
#else
	PAUSE_SITE_SKIPPED();
#endif
}

PAUSE_SITE_MAIN("defer_arm:200000")
