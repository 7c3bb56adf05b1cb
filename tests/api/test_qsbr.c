/* SPDX-License-Identifier: MIT */
/* QSBR flavor API: registration, quiescent states, offline threads, synchronize, stall report. */
#include <pthread.h>
#include <grace/grace.h>
#include "gtest_lite.h"

TEST(register_online_offline)
{
	CHECK(!grace_qsbr_thread_is_online());
	qsbr_register_thread();
	CHECK(grace_qsbr_thread_is_online());
	qsbr_read_lock();
	qsbr_read_unlock();
	qsbr_quiescent_state();
	qsbr_thread_offline();
	CHECK(!grace_qsbr_thread_is_online());
	qsbr_thread_offline(); /* idempotent */
	qsbr_thread_online();
	CHECK(grace_qsbr_thread_is_online());
	synchronize_qsbr(); /* online caller: offline for the wait, online after */
	CHECK(grace_qsbr_thread_is_online());
	qsbr_unregister_thread();
	CHECK(!grace_qsbr_thread_is_online());
}

struct qs_holder {
	int phase; /* 1: online and not reporting; 2: report now; 3: done */
	int sync_done;
};

static void *silent_reader(void *arg)
{
	struct qs_holder *h = (struct qs_holder *)arg;
	qsbr_register_thread();
	__atomic_store_n(&h->phase, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) != 2)
		gt_sleep_ms(1); /* online, no quiescent state: holds every grace period */
	REQUIRE(!__atomic_load_n(&h->sync_done, __ATOMIC_SEQ_CST));
	qsbr_quiescent_state();
	qsbr_unregister_thread();
	return NULL;
}

static void *qsbr_syncer(void *arg)
{
	struct qs_holder *h = (struct qs_holder *)arg;
	synchronize_qsbr();
	__atomic_store_n(&h->sync_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(online_thread_blocks_until_quiescent_state)
{
	struct qs_holder h = { 0, 0 };
	pthread_t r, s;
	pthread_create(&r, NULL, silent_reader, &h);
	while (__atomic_load_n(&h.phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	pthread_create(&s, NULL, qsbr_syncer, &h);
	gt_sleep_ms(100);
	CHECK(!__atomic_load_n(&h.sync_done, __ATOMIC_SEQ_CST));
	__atomic_store_n(&h.phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	CHECK(h.sync_done);
}

static void *offline_sleeper(void *arg)
{
	int *stop = (int *)arg;
	qsbr_register_thread();
	qsbr_thread_offline();
	while (!__atomic_load_n(stop, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1); /* offline: never delays a grace period */
	qsbr_thread_online();
	qsbr_unregister_thread();
	return NULL;
}

TEST(offline_threads_never_delay)
{
	int stop = 0;
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, offline_sleeper, &stop);
	gt_sleep_ms(20);
	for (int i = 0; i < 100; i++)
		synchronize_qsbr();
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

static void *exit_registered(void *arg)
{
	(void)arg;
	qsbr_register_thread(); /* exits online, without unregistering: cleaned up at exit */
	qsbr_quiescent_state();
	return NULL;
}

TEST(thread_exit_unregisters)
{
	for (int i = 0; i < 100; i++) {
		pthread_t t;
		pthread_create(&t, NULL, exit_registered, NULL);
		pthread_join(t, NULL);
	}
	synchronize_qsbr(); /* would hang (or read freed TLS) if a dead thread stayed online */
}

static void stall_child(void *arg)
{
	(void)arg;
	struct qs_holder h = { 0, 0 };
	pthread_t r;
	grace_set_stall_timeout_ms(200);
	pthread_create(&r, NULL, silent_reader, &h);
	while (__atomic_load_n(&h.phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	pthread_t s;
	pthread_create(&s, NULL, qsbr_syncer, &h);
	gt_sleep_ms(600);
	__atomic_store_n(&h.phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
}

TEST(stalled_online_thread_is_named)
{
	char out[4096];
	int st = gt_run_child(stall_child, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
	CHECK_MSG(strstr(out, "stall warning: qsbr reader thread") != NULL, "stderr: %s", out);
	/* Once per stall. */
	const char *first = strstr(out, "stall warning");
	CHECK_MSG(strstr(first + 1, "stall warning") == NULL, "reported twice: %s", out);
}

static void register_twice(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	qsbr_register_thread();
}

TEST(register_twice_is_reported)
{
	char out[4096];
	int st = gt_run_child(register_twice, NULL, out, sizeof(out));
	CHECK_MSG(strstr(out, "qsbr_register_thread: thread already registered") != NULL, "%s",
		  out);
#ifdef GRACE_DEBUG
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
#else
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
#endif
}

static void qs_while_offline(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	qsbr_thread_offline();
	qsbr_quiescent_state();
}

TEST(quiescent_state_while_offline_is_fatal)
{
	char out[4096];
	int st = gt_run_child(qs_while_offline, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "qsbr_quiescent_state: thread is offline") != NULL, "%s", out);
}

GT_MAIN()
