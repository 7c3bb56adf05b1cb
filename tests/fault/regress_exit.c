/* SPDX-License-Identifier: MIT */
/*
 * Regressions of issue 12, fault 6: exit() must finish within the exit handler's documented
 * bound (GRACE_EXIT_TIMEOUT_MS, here 300 ms) whatever the readers do:
 *  - exit() from inside a default-flavor section with a callback pending;
 *  - exit() from an online QSBR thread with a callback pending;
 *  - exit() while another thread sits in a 60 s section with a start_poll request outstanding;
 *  - exit() from a reader thread other than main, inside its section;
 *  - exit() from a callback;
 *  - GRACE_EXIT_TIMEOUT_MS=0 (docs/build.md: "`0`: run nothing at exit"): ten callbacks queued
 *    under BATCH with a 10 s period are not run by the exit handler, which says so once.
 * Each runs in a child process; the test fails if the child is still running after 30 s (a
 * hang, not a measurement: the bound is 300 ms).
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 30

struct obj {
	struct rcu_head rh;
	int v;
};

static void obj_free(struct rcu_head *h)
{
	free(grace_container_of(h, struct obj, rh));
}

static struct obj *obj_new(void)
{
	return (struct obj *)calloc(1, sizeof(struct obj));
}

static int run_exit_child(void (*fn)(void *), const char *what)
{
	return fault_expect_exit7(fn, what, HANG_S, NULL);
}

static void exit_in_rcu_section(void *arg)
{
	(void)arg;
	call_rcu(&obj_new()->rh, obj_free);
	rcu_read_lock();
	call_rcu(&obj_new()->rh, obj_free);
	exit(7);
}
TEST(exit_inside_rcu_section_with_callback)
{
	CHECK(run_exit_child(exit_in_rcu_section, "exit in an rcu section") == 0);
}

static void exit_online_qsbr(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	call_qsbr(&obj_new()->rh, obj_free);
	qsbr_quiescent_state();
	exit(7);
}
TEST(exit_online_qsbr_with_callback)
{
	CHECK(run_exit_child(exit_online_qsbr, "exit from an online QSBR thread") == 0);
}

static void *long_section(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
	sleep(60);
	rcu_read_unlock();
	return NULL;
}

static void exit_with_poll_and_long_section(void *arg)
{
	static int in;
	pthread_t th;

	(void)arg;
	pthread_create(&th, NULL, long_section, &in);
	while (!__atomic_load_n(&in, __ATOMIC_ACQUIRE))
		fault_sleep_ms(1);
	(void)start_poll_synchronize_rcu();
	fault_sleep_ms(20); /* the worker is now driving the grace period the section holds */
	exit(7);
}
TEST(exit_with_start_poll_and_60s_section)
{
	CHECK(run_exit_child(exit_with_poll_and_long_section,
			     "exit with start_poll outstanding and a 60 s section") == 0);
}

static void *exit_from_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	call_rcu(&obj_new()->rh, obj_free);
	exit(7);
}

static void exit_in_thread_section(void *arg)
{
	pthread_t th;
	(void)arg;
	pthread_create(&th, NULL, exit_from_reader, NULL);
	pause();
}
TEST(exit_from_reader_thread)
{
	CHECK(run_exit_child(exit_in_thread_section, "exit from a reader thread in a section") ==
	      0);
}

static void exit_cb(struct rcu_head *h)
{
	free(grace_container_of(h, struct obj, rh));
	exit(7);
}

static void exit_from_callback(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		call_rcu(&obj_new()->rh, obj_free);
	call_rcu(&obj_new()->rh, exit_cb);
	for (int i = 0; i < 100; i++)
		call_rcu(&obj_new()->rh, obj_free);
	pause();
}
TEST(exit_from_callback)
{
	CHECK(run_exit_child(exit_from_callback, "exit from a callback") == 0);
}

static void loud_free(struct rcu_head *h)
{
	static const char msg[] = "callback ran\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);
	(void)w;
	obj_free(h);
}

static void exit_timeout_zero(void *arg)
{
	(void)arg;
	setenv("GRACE_EXIT_TIMEOUT_MS", "0", 1); /* read at exit */
	if (grace_rcu_set_policy(GRACE_POLICY_BATCH, 10000000) != 0)
		exit(2);
	for (int i = 0; i < 10; i++)
		call_rcu(&obj_new()->rh, loud_free);
	exit(7);
}
TEST(exit_timeout_zero_runs_nothing)
{
	char err[4096];
	struct fault_child c = fault_run(exit_timeout_zero, NULL, HANG_S, err, sizeof(err));
	CHECK_MSG(fault_exited(&c, 7), "the child did not exit 7: %s", err);
	CHECK_MSG(strstr(err, "callback ran") == NULL, "the exit handler ran callbacks: %s", err);
	CHECK_MSG(strstr(err, "exit: 10 callbacks of") &&
			  strstr(err, "not run: GRACE_EXIT_TIMEOUT_MS=0"),
		  "no word about the callbacks left: %s", err);
	const char *w = strstr(err, "not run");
	CHECK_MSG(!w || !strstr(w + 1, "not run"), "said more than once: %s", err);
	printf("  %s", err);
}

int main(int argc, char **argv)
{
	setenv("GRACE_EXIT_TIMEOUT_MS", "300", 1);
	return gt_main(argc, argv);
}
