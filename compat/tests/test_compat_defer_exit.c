/* SPDX-License-Identifier: MIT */
/*
 * exit() with deferrals pending (docs/compat.md, "defer_rcu"; docs/api.md, "exit()"): the exit
 * handler's drain runs the deferral passes like any callback, and a pass that finds its
 * entries' grace period not over posts itself again, which the drain also waits for. Each case
 * runs in a child process that has not used grace before it registers its own exit check, so
 * the check runs after the library's drain (exit handlers run last registered first):
 *   - the main thread defers 1, 100 and 400 functions (a partial block, two full blocks and a
 *     partial one) and calls exit() with no barrier and no unregistration;
 *   - a thread defers 300 and returns without unregistering (its queue is left to its pass),
 *     and main calls exit() at once.
 * The check: every deferral ran exactly once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

static long ran, expect;

static void count(void *arg)
{
	(void)arg;
	uatomic_inc(&ran);
}

/* Registered before the library's exit handler, so it runs after the drain. */
static void check_at_exit(void)
{
	long n = uatomic_read(&ran);

	if (n != expect) {
		fprintf(stderr, "  exit: %ld of %ld deferrals ran\n", n, expect);
		fflush(stderr);
		_exit(5);
	}
}

static void *defer_and_leave(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	for (int i = 0; i < 300; i++)
		urcu_memb_defer_rcu(count, NULL);
	/* No unregistration: the thread's exit hands its queue to the pass. */
	return NULL;
}

static void child_main_defers(void)
{
	static const long sizes[] = { 1, 100, 400 };

	urcu_memb_register_thread();
	urcu_memb_defer_register_thread();
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (long k = 0; k < sizes[i]; k++)
			urcu_memb_defer_rcu(count, NULL);
		expect += sizes[i];
	}
	exit(0);
}

static void child_thread_left(void)
{
	pthread_t t;

	expect = 300;
	if (pthread_create(&t, NULL, defer_and_leave, NULL) != 0 || pthread_join(t, NULL) != 0)
		_exit(2);
	exit(0);
}

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(60); /* a hang is a failure, not a stuck test */
		atexit(check_at_exit);
		fn();
		_exit(3);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

TEST(exit_runs_the_main_threads_pending_deferrals)
{
	int st = run_child(child_main_defers);

	CHECK_MSG(st == 0, "child exit status %d (5: deferrals lost at exit)", st);
}

TEST(exit_runs_a_departed_threads_pending_deferrals)
{
	int st = run_child(child_thread_left);

	CHECK_MSG(st == 0, "child exit status %d (5: deferrals lost at exit)", st);
}

GT_MAIN()
