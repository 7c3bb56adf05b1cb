/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu() and fork() while a queue's pass is inside a deferred function (defer.c, points 7
 * and 8). libgrace pauses its workers for fork() between two callbacks, for FORK_PAUSE_NS
 * (100 ms) at most; a callback still running then counts as run in the child.
 *  - A deferred function that runs past the pause: the child's copy of the queue must not stay
 *    armed with no pass posted (its later deferrals would run only at a barrier, and at the
 *    queue's bound the thread would wait and warn). The child defers and, with no barrier, its
 *    deferrals must run.
 *  - A deferred function that creates its thread's queue (rcu_defer_register_thread() on the
 *    worker) while fork() is being prepared: defer.c's prepare handler holds its list of queues
 *    then, and libgrace's waits for the worker. The worker must not wait for that lock (every
 *    fork would stall for the whole pause and the child inherit the callback half run). A fork
 *    handler of this test, which runs between the two, lets the deferred function go on and
 *    waits for it to get through (3 s: a deadlock detector, not a timing check).
 * Fork of a threaded parent whose child starts threads: not under TSan ("dup thread").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/uatomic.h>

#include "fork_gate.h"

#include "gtest_lite.h"

static long child_ran;

static void count(void *arg)
{
	uatomic_inc((long *)arg);
}

/* The child: deferrals with no barrier, which the queue's pass must run. */
static int child(void)
{
	for (int i = 0; i < 10; i++)
		urcu_memb_defer_rcu(count, &child_ran);
	for (int i = 0; i < 300 && uatomic_read(&child_ran) != 10; i++)
		usleep(10000);
	if (uatomic_read(&child_ran) != 10) {
		fprintf(stderr, "child: %ld of 10 deferrals ran after 3 s (no pass posted)\n",
			uatomic_read(&child_ran));
		return 3;
	}
	urcu_memb_defer_unregister_thread();
	return 0;
}

static void fork_and_check(void)
{
	int status;
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		_exit(child());
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}

/* ---- a deferred function longer than the fork pause ---- */

static int slow_started, forked;

static void slow(void *arg)
{
	(void)arg;
	uatomic_set(&slow_started, 1);
	/* Until the parent is back from fork(): longer than the pause, whatever the load. */
	for (int i = 0; i < 10000 && !uatomic_read(&forked); i++)
		usleep(1000);
}

TEST(fork_during_long_deferred_function_child_deferrals_run)
{
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (its fork child cannot start threads)\n");
	return;
#endif
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(slow, NULL);
	while (!uatomic_read(&slow_started))
		usleep(1000);
	fork_and_check();
	uatomic_set(&forked, 1);
	urcu_memb_defer_barrier();
	urcu_memb_defer_unregister_thread();
}

/* ---- a deferred function that creates its queue while fork() is prepared ---- */

static long redefer_ran;

static void creates_queue(void *arg)
{
	(void)arg;
	uatomic_set(&started, 1);
	for (int i = 0; i < 10000 && !uatomic_read(&go); i++)
		usleep(1000);
	/* This worker's first defer call: it creates the worker's queue. */
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(count, &redefer_ran);
	uatomic_set(&returned, 1);
}

TEST(fork_while_deferred_function_creates_its_queue)
{
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (its fork child cannot start threads)\n");
	return;
#endif
	urcu_memb_defer_register_thread();
	uatomic_set(&in_test, 1);
	urcu_memb_defer_rcu(creates_queue, NULL);
	while (!uatomic_read(&started))
		usleep(1000);
	fork_and_check();
	uatomic_set(&in_test, 0);
	CHECK_MSG(uatomic_read(&prepare_saw) == 1,
		  "the deferred function was still inside rcu_defer_register_thread() 3 s into "
		  "fork()'s prepare: it waits for a lock fork() holds");
	urcu_memb_defer_barrier();
	CHECK(uatomic_read(&redefer_ran) == 1);
	urcu_memb_defer_unregister_thread();
}

GT_MAIN()
