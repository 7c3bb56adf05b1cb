/* SPDX-License-Identifier: MIT */
/*
 * docs/guide.md's promises that no other test checked:
 *  - rcu_assign_pointer() is a release store: a reader that sees the new pointer sees the object
 *    fully initialised (readers check every field; on x86 this passes whatever the store, the
 *    tsan configuration is what fails a plain store: it reports the race);
 *  - exit() with a reader stuck in a section: what cannot run in time is left, with a warning;
 *  - fork() while another thread holds an srcu section: a grace period of that domain in the
 *    child stalls and is reported;
 *  - debug builds: an srcu unlock on another thread than the lock is a named abort.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <grace/grace.h>

#include "gtest_lite.h"

#define NF 8
struct item {
	int f[NF];
	struct rcu_head rh;
};
static struct item *pub;
static int stop_pub;
static unsigned long torn;

static void *pub_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_pub, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		struct item *it = rcu_dereference(pub);
		if (it) {
			int v = it->f[0];
			for (int i = 1; i < NF; i++)
				if (it->f[i] != v)
					__atomic_fetch_add(&torn, 1, __ATOMIC_RELAXED);
		}
		rcu_read_unlock();
	}
	return NULL;
}

TEST(a_reader_sees_the_published_object_initialised)
{
	pthread_t r[2];

	stop_pub = 0;
	torn = 0;
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&r[i], NULL, pub_reader, NULL) == 0);
	for (int n = 1; n <= 20000; n++) {
		struct item *it = (struct item *)malloc(sizeof(*it));
		REQUIRE(it);
		for (int i = 0; i < NF; i++)
			it->f[i] = n; /* plain stores, before the publication */
		struct item *old = rcu_dereference_protected(pub, 1);
		rcu_assign_pointer(pub, it);
		if (old)
			free_rcu(old, rh);
	}
	__atomic_store_n(&stop_pub, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	free_rcu_barrier();
	free(pub);
	pub = NULL;
	CHECK_MSG(torn == 0, "%lu reads saw a published object not fully initialised", torn);
}

/* ---- exit with a stuck reader ---- */

static void never(struct rcu_head *h)
{
	free(h);
}

static void *stuck(void *arg)
{
	(void)arg;
	rcu_read_lock();
	for (;;)
		pause();
	return NULL;
}

static void exit_with_stuck_reader(void *arg)
{
	pthread_t t;
	(void)arg;
	/* What the test process had queued before the fork (the previous test's frees, not yet
	 * run on a loaded machine) runs first: the warning must count this child's one callback. */
	rcu_barrier();
	setenv("GRACE_EXIT_TIMEOUT_MS", "300", 1); /* read at exit */
	grace_set_stall_timeout_ms(0);
	REQUIRE(pthread_create(&t, NULL, stuck, NULL) == 0);
	usleep(50000);
	call_rcu((struct rcu_head *)malloc(sizeof(struct rcu_head)), never);
	exit(0);
}

TEST(exit_leaves_what_cannot_run_with_a_warning)
{
	char out[8192];
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("  skipped under the sanitizers (a thread left running at exit)\n");
	return;
#endif
	int st = gt_run_child(exit_with_stuck_reader, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child did not exit normally: %s",
		  out);
	/* This child's callback at least: a free cache's monitor, requeued by a ghost cache of the
	 * parent's exited threads after the barrier, may be left too (seen once under load). */
	const char *w = strstr(out, "warning: exit: ");
	unsigned long left = 0;
	CHECK_MSG(w && sscanf(w, "warning: exit: %lu callback", &left) == 1 && left >= 1 &&
			  strstr(w, " of rcu not run"),
		  "no warning named what exit() left:\n%s", out);
}

/* ---- fork while another thread holds an srcu section ---- */

static struct srcu_struct fd;
static int fholding;
static void *srcu_holder(void *arg)
{
	(void)arg;
	(void)srcu_read_lock(&fd);
	__atomic_store_n(&fholding, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static void *child_sync(void *arg)
{
	(void)arg;
	synchronize_srcu(&fd); /* never returns: the holder does not exist in the child */
	return NULL;
}

static void fork_with_srcu_holder(void *arg)
{
	pthread_t t;
	(void)arg;
	grace_set_stall_timeout_ms(200);
	REQUIRE(pthread_create(&t, NULL, child_sync, NULL) == 0);
	usleep(1000000);
	fflush(stderr);
	_exit(0);
}

TEST(fork_child_reports_a_stall_held_by_a_parent_thread)
{
	pthread_t h;
	char out[8192];
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (threads in a fork child of a multi-threaded process)\n");
	return;
#endif
	REQUIRE(init_srcu_struct(&fd) == 0);
	REQUIRE(pthread_create(&h, NULL, srcu_holder, NULL) == 0);
	while (!__atomic_load_n(&fholding, __ATOMIC_ACQUIRE))
		usleep(1000);
	int st = gt_run_child(fork_with_srcu_holder, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st), "the child did not exit");
	CHECK_MSG(strstr(out, "stall warning: srcu readers of srcu_struct"),
		  "the child's stalled srcu grace period was not reported:\n%s", out);
	(void)h; /* the holder stays (in its section) until the process exits */
}

/* ---- debug builds: srcu unlock on the wrong thread ---- */

static struct srcu_struct wd;
static int widx;
static void *unlock_elsewhere(void *arg)
{
	(void)arg;
	srcu_read_unlock(&wd, widx);
	return NULL;
}

static __attribute__((unused)) void wrong_thread_unlock(void *arg)
{
	pthread_t t;
	(void)arg;
	REQUIRE(init_srcu_struct(&wd) == 0);
	widx = srcu_read_lock(&wd);
	REQUIRE(pthread_create(&t, NULL, unlock_elsewhere, NULL) == 0);
	pthread_join(t, NULL);
}

TEST(debug_srcu_unlock_on_another_thread_is_named)
{
#if GRACE__DEBUG
	char out[4096];
	int st = gt_run_child(wrong_thread_unlock, NULL, out, sizeof(out));
	CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
		  "an srcu unlock on another thread did not abort");
	CHECK_MSG(strstr(out, "misuse: srcu_read_unlock"), "the abort did not name the call:\n%s",
		  out);
#else
	printf("  skipped: a debug-build check\n");
#endif
}

GT_MAIN()
