/* SPDX-License-Identifier: MIT */
/*
 * Defer queues in a fork child (compat/src/defer.c, points 5 and 8). The child has none of the
 * parent's other threads: their queues become orphans there, and a barrier that was running in
 * one of them never unpins what it pinned. Nothing else in the child would free those queues
 * (their owners and that barrier are gone, no pass of theirs is posted), so the child handler
 * must: each fork would otherwise leave the child one queue (a 4 KiB block) per thread of the
 * parent that had deferred, and a child that forks again hands them on.
 *   - orphans: NT threads have deferred (everything ran, every pass ended) and wait; fork. The child's heap in
 *     use (mallinfo2(), every arena) must be below the parent's just before the fork by most of
 *     the NT queues;
 *   - pinned: the same with a barrier in flight in another thread, held in its grace period by a
 *     reader, which has pinned every queue;
 *   - in both children defer_rcu() and rcu_defer_barrier() still work, and in the parent the
 *     barrier returns once the reader leaves.
 * Under ASan and TSan the children only exit: the child handler runs (and is checked for
 * use-after-free and races), but mallinfo2() does not see the sanitizers' heaps and TSan does
 * not support a child of a threaded parent that starts threads.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

enum { NT = 64, QUEUE_BYTES = 4096 /* at least: each queue keeps the block it fills */ };

static long ran;
static int settled, release_threads, release_reader, reader_in, barrier_done;

static void count(void *arg)
{
	uatomic_inc((long *)arg);
}

static void *deferrer(void *arg)
{
	(void)arg;
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(count, &ran);
	urcu_memb_defer_barrier_thread();
	uatomic_inc(&settled);
	while (!uatomic_read(&release_threads))
		usleep(1000);
	urcu_memb_defer_unregister_thread();
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	uatomic_set(&reader_in, 1);
	while (!uatomic_read(&release_reader))
		usleep(1000);
	urcu_memb_read_unlock();
	urcu_memb_unregister_thread();
	return NULL;
}

static void *barrier(void *arg)
{
	(void)arg;
	urcu_memb_defer_barrier(); /* pins every queue, then waits for the reader */
	uatomic_set(&barrier_done, 1);
	return NULL;
}

/* The child: the parent's queues are gone from its heap; its own deferrals run. */
static int child(size_t parent_inuse)
{
	if (SANITIZED)
		return 0;
	size_t inuse = mallinfo2().uordblks;
	size_t want = (size_t)NT * QUEUE_BYTES * 3 / 4;

	if (inuse + want > parent_inuse) {
		fprintf(stderr,
			"child: %zu bytes in use, parent %zu before fork(): %zd freed, want >= %zu "
			"(the %d orphaned queues)\n",
			inuse, parent_inuse, (ssize_t)(parent_inuse - inuse), want, NT);
		return 2;
	}
	long c = 0;

	urcu_memb_defer_register_thread();
	for (int i = 0; i < 100; i++)
		urcu_memb_defer_rcu(count, &c);
	urcu_memb_defer_barrier();
	if (uatomic_read(&c) != 100) {
		fprintf(stderr, "child: %ld of 100 deferrals ran after the barrier\n", c);
		return 3;
	}
	urcu_memb_defer_unregister_thread();
	return 0;
}

static void fork_and_check(const char *what)
{
	int status;
	size_t parent_inuse = SANITIZED ? 0 : mallinfo2().uordblks;
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(60);
		_exit(child(parent_inuse));
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %#x", what,
		  status);
}

TEST(orphans_and_pinned_queues_freed_in_the_child)
{
	pthread_t t[NT], r, b;

	for (int i = 0; i < NT; i++)
		REQUIRE(pthread_create(&t[i], NULL, deferrer, NULL) == 0);
	for (int i = 0; i < 60000 && uatomic_read(&settled) != NT; i++)
		usleep(1000);
	REQUIRE(uatomic_read(&settled) == NT);
	REQUIRE(uatomic_read(&ran) == NT);
	/* Each queue still has its pass posted (armed) until a grace period after its
	 * defer_rcu(): the child handler rightly keeps such a queue, for that pass to free in the
	 * child. Let the passes end first, so that every queue is an unarmed, idle one at the fork.
	 * A pass that found its owner's barrier_thread consuming posted itself again before that
	 * owner counted itself settled: one barrier, after they all have, waits for every pass. */
	urcu_memb_barrier();

	fork_and_check("orphans");

	REQUIRE(pthread_create(&r, NULL, reader, NULL) == 0);
	while (!uatomic_read(&reader_in))
		usleep(1000);
	REQUIRE(pthread_create(&b, NULL, barrier, NULL) == 0);
	/* Let the barrier pin the queues and wait in its grace period: the reader holds it there
	 * until released, so it is still in flight at the fork. */
	usleep(200000);
	REQUIRE(!uatomic_read(&barrier_done));

	fork_and_check("pinned by a barrier in flight");

	uatomic_set(&release_reader, 1);
	pthread_join(r, NULL);
	pthread_join(b, NULL);
	CHECK(uatomic_read(&barrier_done));
	uatomic_set(&release_threads, 1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	urcu_memb_defer_barrier();
}

GT_MAIN()
