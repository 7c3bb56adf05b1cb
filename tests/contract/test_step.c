/* SPDX-License-Identifier: MIT */
/*
 * Grace periods stepped by the threads that retire (core/gp.c, "Stepped grace periods";
 * engine/free.c, step_of()), as docs/api.md and docs/design.md promise them:
 *  - a thread that retires, inside its sections or not, never waits, even while a reader is
 *    stuck, and nothing it retired after that reader began is freed before the reader ends;
 *  - a grace period left STEPPED (under way, no driver) is finished by whoever comes next:
 *    synchronize_rcu() from another thread returns once the reader ends, never earlier, and
 *    never hangs;
 *  - the same for QSBR, where the stuck reader is an online thread that reports no quiescent
 *    state;
 *  - a fork child that inherits a STEPPED grace period completes grace periods of its own;
 *  - callbacks still run while threads step (the workers leave grace periods to them), the
 *    retiring threads' monitors run about 10 times a second, not at every look, and exit()
 *    from inside a section or a callback ends the process while threads step;
 *  - asking: a nested section never answers for its outer one, a thread that retires alone
 *    steps grace periods with no membarrier(2), and synchronize_rcu() with a busy reader needs
 *    none either, nor with a reader preempted inside its section on the caller's own CPU.
 * The registration sets GRACE_STEP_GARBAGE=1 (a step may start a grace period at every slow
 * call, the most stepping there can be); the same file also runs with GRACE_NO_STEP=1 (the
 * engine's workers drive every grace period), where every promise holds as well, and without
 * membarrier.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace/grace.h>

#include "gt_cpu.h"
#include "gtest_lite.h"

#define MAGIC 0x57e9u
struct node {
	uint32_t magic;
	uint32_t freed;
	struct node *next;
};

static unsigned long frees;
static int freed_twice;
static struct node *graveyard;
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

static struct node *node_new(void)
{
	struct node *n = (struct node *)calloc(1, sizeof(*n));
	REQUIRE(n);
	n->magic = MAGIC;
	return n;
}

/* The deleter of every object: marks it freed and keeps its bytes readable until the end of the
 * test, so that a reader that still holds it sees the mark, not a crash. */
static void bury(void *p)
{
	struct node *n = (struct node *)p;

	if (__atomic_exchange_n(&n->freed, 1u, __ATOMIC_RELAXED))
		__atomic_store_n(&freed_twice, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&n->magic, 0u, __ATOMIC_RELAXED);
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&grave_lock);
	n->next = graveyard;
	graveyard = n;
	pthread_mutex_unlock(&grave_lock);
}

static void empty_graveyard(void)
{
	pthread_mutex_lock(&grave_lock);
	while (graveyard) {
		struct node *nx = graveyard->next;
		free(graveyard);
		graveyard = nx;
	}
	pthread_mutex_unlock(&grave_lock);
}

/* ---- a stuck reader ---- */

static struct node *gnode;
static int holding, release, saw_freed, sync_done, sync_early;
static int qsbr_mode;

static void *stuck_reader(void *arg)
{
	(void)arg;
	if (qsbr_mode) {
		qsbr_register_thread();
		qsbr_read_lock();
	} else {
		rcu_read_lock();
	}
	struct node *n = rcu_dereference(gnode);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	/* Holds until told, 20 s at most (a retirer that waits for it fails the test). */
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE) && gt_now_ns() - t0 < 20000000000ull) {
		if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC)
			__atomic_store_n(&saw_freed, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	__atomic_store_n(&holding, 2, __ATOMIC_RELEASE); /* about to end its section */
	if (qsbr_mode) {
		qsbr_read_unlock();
		qsbr_unregister_thread();
	} else {
		rcu_read_unlock();
	}
	return NULL;
}

/* Another thread's synchronize, started while the reader holds: it adopts or waits for the
 * stepped grace period and must not return before the reader ends its section. */
static void *syncer(void *arg)
{
	(void)arg;
	if (qsbr_mode)
		synchronize_qsbr();
	else
		synchronize_rcu();
	if (__atomic_load_n(&holding, __ATOMIC_ACQUIRE) != 2)
		__atomic_store_n(&sync_early, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void retire_one(struct node *n)
{
	if (qsbr_mode) {
		qsbr_read_lock();
		qsbr_retire_fn(bury, n);
		qsbr_read_unlock();
	} else {
		rcu_read_lock();
		rcu_retire_fn(bury, n);
		rcu_read_unlock();
	}
}

static void stuck_reader_case(void)
{
	pthread_t r, s;

	frees = 0;
	freed_twice = holding = release = saw_freed = sync_done = sync_early = 0;
	gnode = node_new();
	if (qsbr_mode)
		qsbr_register_thread();
	REQUIRE(pthread_create(&r, NULL, stuck_reader, NULL) == 0);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		usleep(1000);
	struct node *old = gnode;
	rcu_assign_pointer(gnode, node_new());
	retire_one(old);
	/* 40000 retires, in sections: blocks seal, this thread starts grace periods and rescans
	 * them at its slow calls; the reader holds every one of them. */
	REQUIRE(pthread_create(&s, NULL, syncer, NULL) == 0);
	uint64_t t0 = gt_now_ns();
	for (int i = 0; i < 40000; i++) {
		retire_one(node_new());
		if (qsbr_mode && i % 64 == 0)
			qsbr_quiescent_state();
	}
	double ms = (double)(gt_now_ns() - t0) / 1e6;
	/* Give the steps and the worker time to (wrongly) end the grace period. */
	for (int i = 0; i < 100; i++) {
		retire_one(node_new());
		if (qsbr_mode)
			qsbr_quiescent_state();
		usleep(1000);
	}
	int still = __atomic_load_n(&holding, __ATOMIC_ACQUIRE) == 1;
	bool early = __atomic_load_n(&old->freed, __ATOMIC_RELAXED) != 0;
	bool sync_returned = __atomic_load_n(&sync_done, __ATOMIC_ACQUIRE) != 0;
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	if (qsbr_mode)
		qsbr_thread_offline(); /* this thread holds QSBR grace periods while online */
	pthread_join(r, NULL);
	pthread_join(s, NULL);
	if (qsbr_mode) {
		qsbr_thread_online();
		free_qsbr_barrier();
		qsbr_unregister_thread();
	} else {
		free_rcu_barrier();
	}
	printf("  40000 retires in %.1f ms while a reader held\n", ms);
	CHECK_MSG(still, "the retiring thread waited for the stuck reader (it let go after 20 s)");
	CHECK_MSG(!early, "a retired object was freed while a reader that began before held it");
	CHECK(!saw_freed);
	CHECK_MSG(!sync_returned && !sync_early,
		  "synchronize returned while a reader that began before it held");
	CHECK_MSG(old->freed, "the barrier returned before the retired object was freed");
	CHECK_MSG(frees == 40101, "%lu of 40101 freed", frees);
	CHECK(!freed_twice);
	free(gnode);
	empty_graveyard();
}

TEST(a_retiring_thread_never_waits_and_frees_nothing_a_stuck_reader_holds)
{
	qsbr_mode = 0;
	stuck_reader_case();
}

TEST(qsbr_retiring_thread_never_waits_for_an_online_reader)
{
	qsbr_mode = 1;
	stuck_reader_case();
}

/* ---- many retirers and synchronizers at once ---- */

static int stop_all;
static unsigned long reader_errors;

static void *reader_loop(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		struct node *n = rcu_dereference(gnode);
		for (int k = 0; k < 50; k++)
			if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC)
				__atomic_fetch_add(&reader_errors, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
	}
	return NULL;
}

/* Updaters swap gnode and retire the old one (under a lock, as a program would): steppers,
 * synchronize's adoptions and the worker all end grace periods, and no reader sees a freed
 * node. */
static pthread_mutex_t upd_lock = PTHREAD_MUTEX_INITIALIZER;
static void *updater_loop(void *arg)
{
	long id = (long)arg;
	unsigned long i = 0;

	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		struct node *nw = node_new();
		pthread_mutex_lock(&upd_lock);
		struct node *old = rcu_xchg_pointer(&gnode, nw);
		pthread_mutex_unlock(&upd_lock);
		rcu_read_lock();
		rcu_retire_fn(bury, old);
		rcu_read_unlock();
		if (id == 0 && ++i % 2000 == 0)
			synchronize_rcu();
	}
	return NULL;
}

TEST(steps_synchronize_and_the_worker_share_grace_periods_safely)
{
	pthread_t t[5];

	frees = 0;
	freed_twice = 0;
	reader_errors = 0;
	stop_all = 0;
	gnode = node_new();
	for (long i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, reader_loop, NULL) == 0);
	for (long i = 0; i < 3; i++)
		REQUIRE(pthread_create(&t[2 + i], NULL, updater_loop, (void *)i) == 0);
	usleep(700000);
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	free_rcu_barrier();
	CHECK_MSG(reader_errors == 0, "readers saw %lu freed nodes", reader_errors);
	CHECK(!freed_twice);
	printf("  %lu nodes retired and freed\n", frees);
	CHECK(frees > 0);
	free(gnode);
	empty_graveyard();
}

/* ---- fork ---- */

TEST(a_fork_child_finishes_what_a_stepped_grace_period_left)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan cannot start threads in the child of a multi-threaded process ("dup thread with
	 * used id"), and the child's library starts its worker; the other configurations run
	 * this case. */
	printf("  skipped under TSan\n");
	return;
#endif
	frees = 0;
	rcu_read_lock();
	/* Inside this section: the steps start a grace period that records this thread and
	 * leave it STEPPED (this thread holds it until its unlock). */
	for (int i = 0; i < 1000; i++)
		rcu_retire_fn(bury, node_new());
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20); /* a hang is a failure, not a stuck test */
		rcu_read_unlock();
		synchronize_rcu();
		for (int i = 0; i < 1000; i++) {
			rcu_read_lock();
			rcu_retire_fn(bury, node_new());
			rcu_read_unlock();
		}
		free_rcu_barrier();
		synchronize_rcu();
		_exit(__atomic_load_n(&frees, __ATOMIC_RELAXED) == 2000 ? 0 : 3);
	}
	rcu_read_unlock();
	free_rcu_barrier();
	int st = 0;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child did not finish its grace periods (status %#x)", st);
	empty_graveyard();
}

/* ---- callbacks and exit while threads step ---- */

static void *stepper_loop(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		rcu_retire_fn(bury, node_new());
		rcu_read_unlock();
	}
	return NULL;
}

static int cb_ran;
static void cb_count(struct rcu_head *h)
{
	__atomic_fetch_add(&cb_ran, 1, __ATOMIC_RELAXED);
	free(h);
}

/* A worker leaves grace periods to the stepping threads (it looks again every 4 ms): callbacks
 * queued meanwhile still run, with no barrier to hurry them (liveness, not timing: the bound
 * is 20 s). */
TEST(callbacks_run_while_threads_step)
{
	pthread_t t[2];

	stop_all = 0;
	cb_ran = 0;
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, stepper_loop, NULL) == 0);
	for (int i = 0; i < 100; i++) {
		struct rcu_head *h = (struct rcu_head *)malloc(sizeof(*h));
		REQUIRE(h);
		call_rcu(h, cb_count);
		usleep(500);
	}
	uint64_t t0 = gt_now_ns();
	while (__atomic_load_n(&cb_ran, __ATOMIC_RELAXED) < 100 &&
	       gt_now_ns() - t0 < 20000000000ull)
		usleep(1000);
	int ran = __atomic_load_n(&cb_ran, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free_rcu_barrier();
	CHECK_MSG(ran == 100, "%d of 100 callbacks ran in 20 s while threads stepped", ran);
	empty_graveyard();
}

static void *retire_loop(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		void *p = malloc(32);
		REQUIRE(p);
		rcu_read_lock();
		rcu_retire(p);
		rcu_read_unlock();
	}
	return NULL;
}

/* While threads retire and nothing else uses the engine, their monitors (one callback per
 * thread, which only looks for a thread that stopped calling) are patient: the workers run
 * them about 10 times a second each, not at every 4 ms look (docs/api.md, free_rcu(), "Who
 * runs the grace periods"). Counted: the callbacks the default flavor invokes during 1.5 s of
 * two threads retiring, the two monitors alone; the bound is 30 a second each (three times
 * the pace; a worker that ran them at every look ran about 250). A count, not a time: a slow
 * machine only runs fewer. Not with GRACE_NO_STEP=1, where the workers drive every grace
 * period the blocks ask for. */
TEST(monitors_are_patient_while_threads_retire)
{
	const char *ns = getenv("GRACE_NO_STEP");
	struct grace_cb_stats a, b;
	pthread_t t[2];

	if (ns && strcmp(ns, "1") == 0) {
		printf("  skipped: GRACE_NO_STEP=1 (no stepping)\n");
		return;
	}
	rcu_barrier();
	free_rcu_barrier();
	stop_all = 0;
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, retire_loop, NULL) == 0);
	usleep(100000); /* both monitors are queued */
	grace_rcu_callback_stats(&a);
	uint64_t t0 = gt_now_ns();
	usleep(1500000);
	grace_rcu_callback_stats(&b);
	double secs = (double)(gt_now_ns() - t0) / 1e9;
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free_rcu_barrier();
	unsigned long long runs = (unsigned long long)(b.invoked - a.invoked);
	CHECK_MSG(runs <= (unsigned long long)(2 * 30 * secs) + 4,
		  "%llu callbacks (the two retiring threads' monitors) ran in %.2f s: more than "
		  "30 a second each",
		  runs, secs);
}

/* Are all of the default flavor's callback workers ("grace-rcu/<n>") asleep? */
struct worker_census {
	int n;
	bool all_asleep;
};

static void census_worker(int tid, const char *comm, void *arg)
{
	struct worker_census *c = (struct worker_census *)arg;
	if (strncmp(comm, "grace-rcu/", 10) == 0) {
		c->n++;
		c->all_asleep = c->all_asleep && gt_thread_sleeps(tid);
	}
}

static bool rcu_workers_asleep(void)
{
	struct worker_census c = { 0, true };

	gt_for_each_thread(census_worker, &c);
	return c.n > 0 && c.all_asleep;
}

/* docs/api.md (free_rcu(), "Who runs the grace periods"): the monitors' patient wait ends at
 * a push of any other callback. Run as contract_step_patience, a debug library with
 * GRACE_TEST_PAUSE=patience:60000000 (the patient wait lasts a minute, not 100 ms): the thread
 * retires, so its monitor waits patiently; once the workers sleep, a call_rcu() callback must
 * run within 20 s, which it does only if its push ends the wait. Liveness, not timing: a
 * worker that slept on would run it after the minute. */
TEST(a_push_ends_the_monitors_patient_wait)
{
	const char *e = getenv("GRACE_TEST_PAUSE");

	if (!GRACE__DEBUG || !e || !strstr(e, "patience:")) {
		printf("  skipped: a debug library with GRACE_TEST_PAUSE=patience:US is needed\n");
		return;
	}
	rcu_barrier();
	free_rcu_barrier();
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 64; i++)
			rcu_retire(malloc(32)); /* the thread's monitor is queued, patient */
		uint64_t t0 = gt_now_ns();
		do {
			REQUIRE(gt_now_ns() - t0 < 20000000000ull);
			usleep(20000);
		} while (!rcu_workers_asleep());
		usleep(20000);
		__atomic_store_n(&cb_ran, 0, __ATOMIC_RELAXED);
		struct rcu_head *h = (struct rcu_head *)malloc(sizeof(*h));
		REQUIRE(h);
		call_rcu(h, cb_count);
		t0 = gt_now_ns();
		while (!__atomic_load_n(&cb_ran, __ATOMIC_RELAXED) &&
		       gt_now_ns() - t0 < 20000000000ull)
			usleep(1000);
		CHECK_MSG(
			__atomic_load_n(&cb_ran, __ATOMIC_RELAXED) == 1,
			"round %d: a callback queued while the monitors waited did not run in 20 s",
			round);
	}
	free_rcu_barrier();
}

/* ---- asking (docs/api.md, free_rcu(), "Who runs the grace periods"; design.md section 3) ---- */

static struct node *nested_node;
static int nested_holding, nested_release, nested_saw_freed;

/* Holds a node in its outer section while it opens and closes nested sections back to back:
 * every nested lock and unlock finds the asks of the grace periods the retiring thread starts,
 * and none of them may answer for the outer section, which still uses the node. */
static void *nested_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	struct node *n = rcu_dereference(nested_node);
	__atomic_store_n(&nested_holding, 1, __ATOMIC_RELEASE);
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(&nested_release, __ATOMIC_ACQUIRE) &&
	       gt_now_ns() - t0 < 20000000000ull) {
		rcu_read_lock();
		if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC ||
		    __atomic_load_n(&n->freed, __ATOMIC_RELAXED))
			__atomic_store_n(&nested_saw_freed, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
	}
	rcu_read_unlock();
	return NULL;
}

/* A nested lock or unlock is no boundary of the outer section: a grace period that a retiring
 * thread starts while the reader's outer section holds a node does not end, however many
 * nested sections the reader opens and closes, until the outer one ends. */
TEST(a_nested_section_never_answers_for_its_outer_section)
{
	pthread_t r;

	qsbr_mode = 0; /* retire_one() retires to the default flavor */
	/* First 200 grace periods of this thread alone, answered at its own unlocks: a back-off
	 * left by earlier cases (asks that fell back) is over, and the grace period that covers
	 * the node starts by asking, as it would in a program whose threads all answer. */
	struct grace_cb_stats a, b;
	grace_rcu_callback_stats(&a);
	b = a;
	for (uint64_t t1 = gt_now_ns();
	     b.grace_periods - a.grace_periods < 200 && gt_now_ns() - t1 < 5000000000ull;) {
		for (int i = 0; i < 100; i++)
			retire_one(node_new());
		grace_rcu_callback_stats(&b);
	}
	nested_node = node_new();
	nested_holding = nested_release = nested_saw_freed = 0;
	REQUIRE(pthread_create(&r, NULL, nested_reader, NULL) == 0);
	while (!__atomic_load_n(&nested_holding, __ATOMIC_ACQUIRE))
		usleep(100);
	struct node *n = nested_node;
	rcu_assign_pointer(nested_node, NULL);
	retire_one(n);
	/* 300 ms of retiring: every call may step or start a grace period (GRACE_STEP_GARBAGE=1). */
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 300000000ull)
		retire_one(node_new());
	unsigned int freed_early = __atomic_load_n(&n->freed, __ATOMIC_RELAXED);
	__atomic_store_n(&nested_release, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	CHECK_MSG(!freed_early, "the node was freed while the reader's outer section used it");
	CHECK_MSG(!nested_saw_freed, "the reader saw its node freed inside its outer section");
	free_rcu_barrier();
	CHECK_MSG(__atomic_load_n(&n->freed, __ATOMIC_RELAXED) == 1,
		  "the node was not freed after the reader's section and free_rcu_barrier()");
	CHECK(!freed_twice);
	empty_graveyard();
}

/* A thread that retires inside its sections, alone: the grace periods its steps start end on
 * its own answers (at its unlocks), with no membarrier(2). Counted: membarrier calls against
 * grace periods while the thread retires (each call free to start one: GRACE_STEP_GARBAGE=1)
 * until 2000 grace periods have ended, 5 s at most. The engine's workers make a few of their
 * own (their idle sleeps, and the grace periods they drive for callbacks): 50 a second and one
 * for every tenth grace period are allowed for them. Started with barrier A, every grace
 * period would cost one. A count, not a time. Not where there are no asks: the
 * fence fallback, GRACE_NO_STEP=1, GRACE_NO_ASK=1. */
TEST(stepped_grace_periods_of_a_thread_alone_make_no_membarrier)
{
	const char *ns = getenv("GRACE_NO_STEP"), *na = getenv("GRACE_NO_ASK");
	struct grace_cb_stats a, b;

	if (strcmp(grace_membarrier_mode(), "membarrier") != 0 || (ns && strcmp(ns, "1") == 0) ||
	    (na && strcmp(na, "1") == 0)) {
		printf("  skipped: no asks in this configuration\n");
		return;
	}
	qsbr_mode = 0;
	free_rcu_barrier();
	rcu_barrier();
	grace_rcu_callback_stats(&a);
	b = a;
	uint64_t m0 = grace_membarrier_calls(), t0 = gt_now_ns();
	while (b.grace_periods - a.grace_periods < 2000 && gt_now_ns() - t0 < 5000000000ull) {
		for (int i = 0; i < 1000; i++)
			retire_one(node_new());
		grace_rcu_callback_stats(&b);
	}
	uint64_t m = grace_membarrier_calls() - m0;
	double secs = (double)(gt_now_ns() - t0) / 1e9;
	unsigned long long gps = (unsigned long long)(b.grace_periods - a.grace_periods);
	printf("  %llu grace periods, %llu membarrier calls in %.3f s\n", gps,
	       (unsigned long long)m, secs);
	CHECK_MSG(gps >= 2000, "only %llu grace periods in %.3f s of retiring", gps, secs);
	CHECK_MSG(m <= (uint64_t)(50 * secs) + 8 + gps / 10,
		  "%llu membarrier calls for %llu stepped grace periods in %.3f s",
		  (unsigned long long)m, gps, secs);
	free_rcu_barrier();
	empty_graveyard();
}

/* ---- asking by blocking grace periods (docs/api.md, synchronize_rcu(), "Cost") ---- */

static int busy_stop, busy_started;
static uint64_t busy_sections; /* the reader's sections, counted by it alone */
static int busy_cpu = -1;      /* where the busy reader runs (-1: anywhere) */

/* Short sections back to back: each unlock is a boundary that answers. */
static void *busy_reader(void *arg)
{
	(void)arg;
	if (busy_cpu >= 0)
		(void)gt_pin(pthread_self(), busy_cpu);
	rcu_register_thread();
	while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		__atomic_store_n(&busy_started, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
		__atomic_store_n(&busy_sections, busy_sections + 1, __ATOMIC_RELAXED);
	}
	rcu_unregister_thread();
	return NULL;
}

/* synchronize_rcu() and synchronize_rcu_expedited() in turn, back to back, while a busy reader
 * answers, until n grace periods have ended (5 s at most): a back-off left by earlier asks that
 * fell back is over after it. Where the process may run on two CPUs or more, the caller and the
 * reader are pinned to two of them (the caller is unpinned after), so that the reader runs
 * while the calls do: on one CPU with the caller it would mostly wait in the run queue, and the
 * grace periods would not need its answers (parking takes a thread that does not run out of
 * them). Returns how many sections the reader ran during the calls. */
static uint64_t synchronize_while_a_reader_answers(unsigned int n)
{
	pthread_t r;

	busy_stop = busy_started = 0;
	busy_cpu = -1;
	if (gt_cpu_nth(1) >= 0 && gt_pin(pthread_self(), gt_cpu_nth(0)) >= 0)
		busy_cpu = gt_cpu_nth(1);
	REQUIRE(pthread_create(&r, NULL, busy_reader, NULL) == 0);
	while (!__atomic_load_n(&busy_started, __ATOMIC_RELAXED))
		usleep(100);
	uint64_t s0 = __atomic_load_n(&busy_sections, __ATOMIC_RELAXED);
	uint64_t t0 = gt_now_ns();
	for (unsigned int i = 0; i < n && gt_now_ns() - t0 < 5000000000ull; i++) {
		if (i & 1)
			synchronize_rcu_expedited();
		else
			synchronize_rcu();
	}
	uint64_t ran = __atomic_load_n(&busy_sections, __ATOMIC_RELAXED) - s0;
	__atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
	pthread_join(r, NULL);
	if (busy_cpu >= 0)
		gt_unpin();
	return ran;
}

static int nested_sync_done;

/* A thread's synchronize_rcu(), then *done = 1 (arg: the int to set). */
static void *sync_then_mark(void *done)
{
	synchronize_rcu();
	/* Release: the return of synchronize_rcu() before the mark; pairs with the acquire load
	 * of the thread that reads it (fsl_finish(), the nested-section tests). */
	__atomic_store_n((int *)done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The same promise for a grace period that synchronize_rcu() starts by asking: however many
 * nested sections the reader opens and closes, it does not return until the outer one ends.
 * Three rounds: a reader kept off its CPU during the warm-up leaves the back-off on, and that
 * round's grace period starts with membarrier(2) instead of asking. */
static void nested_synchronize_round(void)
{
	pthread_t r, u;

	synchronize_while_a_reader_answers(200);
	nested_node = node_new();
	nested_holding = nested_release = nested_saw_freed = 0;
	nested_sync_done = 0;
	REQUIRE(pthread_create(&r, NULL, nested_reader, NULL) == 0);
	while (!__atomic_load_n(&nested_holding, __ATOMIC_ACQUIRE))
		usleep(100);
	REQUIRE(pthread_create(&u, NULL, sync_then_mark, &nested_sync_done) == 0);
	usleep(300000);
	int early = __atomic_load_n(&nested_sync_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&nested_release, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	pthread_join(u, NULL);
	CHECK_MSG(!early, "synchronize_rcu() returned while the reader's outer section, which "
			  "began before it, was still running");
	free(nested_node);
}

TEST(a_nested_section_never_answers_for_a_synchronize)
{
	for (int round = 0; round < 3; round++)
		nested_synchronize_round();
}

/* synchronize_rcu() and its expedited form from a thread that never registered while one
 * registered thread runs short sections back to back: their grace periods end on the reader's
 * answers, with no membarrier(2). Counted as for the steps above (50 a second, 8, and one for
 * every tenth grace period allowed for the engine's workers and the fallbacks), over 2000
 * calls. A try counts only if the reader ran at least a section per call meanwhile: a reader
 * that does not run is parked, and grace periods then end with no membarrier and no ask, so
 * such a try proves nothing (seen: 2000 calls in 0.3 ms with asking off). A reader preempted
 * for more than 20 us makes one call fall back and the next ones go straight to membarrier(2)
 * for a while (the back-off), and on a loaded machine (ctest -j on 2 CPUs) a try of some 25 ms
 * often sees one: up to ten tries, each cheap. With asking off every try fails (about one
 * membarrier a call). A count, not a time. */
TEST(synchronize_with_a_busy_reader_makes_no_membarrier)
{
	const char *na = getenv("GRACE_NO_ASK");
	uint64_t m = 0, ran = 0;
	double secs = 0;
	int tries;

	if (strcmp(grace_membarrier_mode(), "membarrier") != 0 || (na && strcmp(na, "1") == 0)) {
		printf("  skipped: no asks in this configuration\n");
		return;
	}
	synchronize_while_a_reader_answers(200);
	for (tries = 1; tries <= 10; tries++) {
		uint64_t m0 = grace_membarrier_calls(), t0 = gt_now_ns();
		ran = synchronize_while_a_reader_answers(2000);
		m = grace_membarrier_calls() - m0;
		secs = (double)(gt_now_ns() - t0) / 1e9;
		printf("  try %d: %llu membarrier calls for 2000 calls in %.1f ms, the reader ran "
		       "%llu sections\n",
		       tries, (unsigned long long)m, secs * 1e3, (unsigned long long)ran);
		if (ran >= 2000 && m <= (uint64_t)(50 * secs) + 8 + 2000 / 10)
			break;
	}
	CHECK_MSG(tries <= 10,
		  "%llu membarrier calls for 2000 synchronize_rcu() calls with a busy reader that "
		  "ran %llu sections, in %.3f s (the last of ten tries)",
		  (unsigned long long)m, (unsigned long long)ran, secs);
}

/* A reader that shares the caller's CPU and spends nearly all its time inside sections. */
static int here_stop, here_started;
static uint64_t here_sections;

static void *here_reader(void *arg)
{
	(void)gt_pin(pthread_self(), *(int *)arg);
	rcu_register_thread();
	while (!__atomic_load_n(&here_stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		__atomic_store_n(&here_started, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < 2000; i++) /* a few microseconds inside the section */
			grace_cpu_relax();
		rcu_read_unlock();
		__atomic_store_n(&here_sections, here_sections + 1, __ATOMIC_RELAXED);
	}
	rcu_unregister_thread();
	return NULL;
}

/* docs/api.md, synchronize_rcu(), "Cost": a thread that has not answered and waits for the
 * caller's CPU, inside a section, makes the caller sleep until its answer wakes it, with no
 * membarrier(2). The caller and the reader are pinned to one CPU; the caller sleeps 1 ms
 * between calls, so that each call finds the reader preempted where it was, nearly always
 * inside its section (outside one, the caller falls back to membarrier at once: allowed for a
 * quarter of the calls). Before the sleep for answers, each such call spun 20 us and then paid
 * two membarrier calls (barrier A, then barrier W before it slept anyway). A try counts only
 * if the reader ran meanwhile; up to five tries (a loaded machine may run other work on the
 * CPU). A count, not a time. Other work on that CPU for seconds (ctest running a stress test
 * beside it) made all five tries fall back, so the case runs alone: as its own ctest entry,
 * contract_step_cpu_sleep (RUN_SERIAL, GRACE_TEST_SERIAL=1), and is skipped elsewhere. */
TEST(synchronize_with_a_reader_preempted_on_its_cpu_makes_no_membarrier)
{
	const char *na = getenv("GRACE_NO_ASK"), *serial = getenv("GRACE_TEST_SERIAL");
	const unsigned int calls = 200;
	uint64_t m = 0, ran = 0;
	int cpu = gt_cpu_nth(0), tries;
	pthread_t r;

	if (!serial || strcmp(serial, "1") != 0) {
		printf("  skipped: run alone as contract_step_cpu_sleep (GRACE_TEST_SERIAL=1)\n");
		return;
	}
	if (strcmp(grace_membarrier_mode(), "membarrier") != 0 || (na && strcmp(na, "1") == 0) ||
	    gt_pin(pthread_self(), cpu) < 0) {
		printf("  skipped: no asks in this configuration, or no CPU to pin to\n");
		return;
	}
	for (tries = 1; tries <= 5; tries++) {
		here_stop = here_started = 0;
		REQUIRE(pthread_create(&r, NULL, here_reader, &cpu) == 0);
		while (!__atomic_load_n(&here_started, __ATOMIC_RELAXED))
			usleep(100);
		for (int i = 0; i < 20; i++) /* a back-off left by earlier tests runs out */
			synchronize_rcu();
		uint64_t s0 = __atomic_load_n(&here_sections, __ATOMIC_RELAXED);
		uint64_t m0 = grace_membarrier_calls();
		for (unsigned int i = 0; i < calls; i++) {
			usleep(1000);
			synchronize_rcu();
		}
		m = grace_membarrier_calls() - m0;
		ran = __atomic_load_n(&here_sections, __ATOMIC_RELAXED) - s0;
		__atomic_store_n(&here_stop, 1, __ATOMIC_RELAXED);
		pthread_join(r, NULL);
		printf("  try %d: %llu membarrier calls for %u calls, the reader ran %llu sections\n",
		       tries, (unsigned long long)m, calls, (unsigned long long)ran);
		if (ran >= calls && m <= calls / 4 + 8)
			break;
	}
	gt_unpin();
	CHECK_MSG(tries <= 5,
		  "%llu membarrier calls for %u synchronize_rcu() calls with a reader preempted "
		  "on the caller's CPU, which ran %llu sections (the last of five tries)",
		  (unsigned long long)m, calls, (unsigned long long)ran);
}

/* fork() in another thread while synchronize_rcu() sleeps for the answer of a reader in a long
 * section (the 20 us spent, every thread still to answer inside a section: flavor/memb.c,
 * "Sleeping for the answers"). The child, which has only the forking thread, completes grace
 * periods of its own; the parent's call returns once the reader's section ends, not before. */
static int fsl_holding, fsl_release, fsl_done;

static void *fsl_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	/* Release: the section's start before the flag; pairs with fsl_start()'s acquire load,
	 * so the synchronize_rcu() started after it must wait for this section. */
	__atomic_store_n(&fsl_holding, 1, __ATOMIC_RELEASE);
	/* Acquire: pairs with fsl_finish()'s release store, after its look at fsl_done. */
	while (!__atomic_load_n(&fsl_release, __ATOMIC_ACQUIRE))
		usleep(100);
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

/* Start a reader in a long section, then a thread's synchronize_rcu() that must wait for it. */
static void fsl_start(pthread_t *r, pthread_t *u)
{
	fsl_holding = fsl_release = fsl_done = 0;
	REQUIRE(pthread_create(r, NULL, fsl_reader, NULL) == 0);
	/* Acquire: pairs with fsl_reader()'s release store, made inside its section. */
	while (!__atomic_load_n(&fsl_holding, __ATOMIC_ACQUIRE))
		usleep(100);
	REQUIRE(pthread_create(u, NULL, sync_then_mark, &fsl_done) == 0);
}

/* 20 ms more, then end the reader's section and join both: true if synchronize_rcu() returned
 * before the section ended. */
static bool fsl_finish(pthread_t r, pthread_t u)
{
	usleep(20000);
	/* Acquire: pairs with sync_then_mark()'s release store. The release store of
	 * fsl_release comes after this look, so a mark seen here was made before the section
	 * ended: synchronize_rcu() returned early. */
	bool early = __atomic_load_n(&fsl_done, __ATOMIC_ACQUIRE) != 0;
	__atomic_store_n(&fsl_release, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	pthread_join(u, NULL);
	return early;
}

TEST(fork_while_synchronize_sleeps_for_an_answer)
{
	pthread_t r, u;
	int status = 0;

	fsl_start(&r, &u);
	usleep(2000); /* the caller is in its sleep for the answer (10 ms at most) or after it */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(10); /* a hang is a failure (SIGALRM) */
		rcu_read_lock();
		rcu_read_unlock();
		synchronize_rcu();
		synchronize_rcu_expedited();
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the fork child's grace periods did not complete (status %#x)", status);
	CHECK_MSG(!fsl_finish(r, u),
		  "synchronize_rcu() returned while a reader's section that began before "
		  "it was still running");
}

/* Signal handlers' sections on a reader for whose answer synchronize_rcu() sleeps (docs/api.md
 * allows sections in handlers on registered threads): each handler's section nests in the
 * reader's long outer section, so it must neither answer nor end the wait; the call returns once
 * the outer section ends. The handlers run while the caller is in its sleep or after it (10 ms at
 * most, then barrier A and the wait of the rule of seen): both must hold. */
static int sig_sections;

static void sig_section(int sig)
{
	(void)sig;
	rcu_read_lock();
	rcu_read_unlock();
	/* Relaxed: a count of handlers that ran, which the sender only waits on; no data is
	 * published through it. */
	__atomic_fetch_add(&sig_sections, 1, __ATOMIC_RELAXED);
}

TEST(signal_handler_sections_while_synchronize_sleeps_for_an_answer)
{
	struct sigaction sa, old;
	pthread_t r, u;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_section;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
	sig_sections = 0;
	fsl_start(&r, &u);
	for (int i = 0; i < 40; i++) { /* 1 ms apart: inside the sleep, then after it */
		usleep(1000);
		REQUIRE(pthread_kill(r, SIGUSR1) == 0);
		/* one at a time: a second SIGUSR1 pending beside the first would be lost */
		while (__atomic_load_n(&sig_sections, __ATOMIC_RELAXED) <= i)
			usleep(50);
	}
	bool early = fsl_finish(r, u);
	REQUIRE(sigaction(SIGUSR1, &old, NULL) == 0);
	CHECK_MSG(!early, "synchronize_rcu() returned while a reader's section that began before "
			  "it was still running (signal handlers ran nested sections in it)");
	CHECK(__atomic_load_n(&fsl_done, __ATOMIC_ACQUIRE) == 1);
}

/* exit() from inside a section whose thread's steps left a grace period STEPPED (it records
 * this very section), and from a callback while other threads step: the process exits, within
 * the engine's exit bound, with the status given. */
static void cb_exit(struct rcu_head *h)
{
	(void)h;
	exit(7);
}

static int run_child(int which)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30); /* a hang is a failure (SIGALRM), not a stuck test */
		if (which == 0) {
			rcu_read_lock();
			for (int i = 0; i < 1000; i++)
				rcu_retire_fn(bury, node_new());
			exit(5); /* inside the section */
		}
		pthread_t t[2];
		static struct rcu_head h;
		stop_all = 0;
		for (int i = 0; i < 2; i++)
			REQUIRE(pthread_create(&t[i], NULL, stepper_loop, NULL) == 0);
		usleep(20000);
		call_rcu(&h, cb_exit);
		for (;;)
			pause();
	}
	int st = 0;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return st;
}

TEST(exit_inside_a_section_or_a_callback_while_threads_step)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan cannot start threads in the child of a multi-threaded process ("dup thread with
	 * used id"), and the child's library starts its worker; the other configurations run
	 * this case. */
	printf("  skipped under TSan\n");
	return;
#endif
	int st = run_child(0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 5,
		  "exit(5) inside a section with a stepped grace period: status %#x", st);
	st = run_child(1);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 7,
		  "exit(7) from a callback while threads step: status %#x", st);
}

GT_MAIN()
