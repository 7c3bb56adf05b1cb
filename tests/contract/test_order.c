/* SPDX-License-Identifier: MIT */
/*
 * Callback order (docs/api.md, call_rcu(): "in FIFO order per CPU queue"): callbacks queued by
 * a thread that stays on one CPU run in the order they were queued, for every flavor and call:
 * call_rcu, call_rcu_hurry, call_qsbr, call_qsbr_hurry, call_srcu, call_srcu_hurry. Programs
 * rely on it: the callbacks that still use a shared object are queued first and the one that
 * releases it last (the "users then release" case below). Checked within one harvest, across
 * harvests (bursts queued while grace periods run), across the remote take of a queue by a
 * worker that runs on another CPU (an srcu domain has one unpinned worker), across threads
 * that hand a CPU's queue to one another (one exits, the next queues), and in a fork child,
 * which inherits the queue and runs it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <pthread.h>
#include <grace/grace.h>

#include "gt_cpu.h"
#include "gtest_lite.h"

enum kind { K_RCU, K_RCU_HURRY, K_QSBR, K_QSBR_HURRY, K_SRCU, K_SRCU_HURRY, K_N };
static const char *const kind_name[K_N] = {
	"call_rcu", "call_rcu_hurry", "call_qsbr", "call_qsbr_hurry", "call_srcu", "call_srcu_hurry"
};

static struct srcu_struct ss;

#define MAXREC 40000
struct rec {
	struct rcu_head h;
	int thread; /* who queued it */
	int seq;    /* its place in that thread's order */
	int *dead;  /* "users then release": the object the callback uses or releases */
	int release;
};

/* What the callbacks ran, in the order they ran (several workers may log at once). */
static int log_thread[MAXREC], log_seq[MAXREC];
static unsigned int nlog;
static int used_after_release;

static void on_cb(struct rcu_head *h)
{
	struct rec *r = grace_container_of(h, struct rec, h);
	unsigned int i = __atomic_fetch_add(&nlog, 1u, __ATOMIC_RELAXED);

	if (i < MAXREC) {
		log_thread[i] = r->thread;
		log_seq[i] = r->seq;
	}
	if (r->dead) {
		if (r->release)
			__atomic_store_n(r->dead, 1, __ATOMIC_RELAXED);
		else if (__atomic_load_n(r->dead, __ATOMIC_RELAXED))
			__atomic_store_n(&used_after_release, 1, __ATOMIC_RELAXED);
	}
	free(r);
}

static void queue(enum kind k, int thread, int seq, int *dead, int release)
{
	struct rec *r = (struct rec *)calloc(1, sizeof(*r));

	REQUIRE(r);
	r->thread = thread;
	r->seq = seq;
	r->dead = dead;
	r->release = release;
	switch (k) {
	case K_RCU:
		call_rcu(&r->h, on_cb);
		break;
	case K_RCU_HURRY:
		call_rcu_hurry(&r->h, on_cb);
		break;
	case K_QSBR:
		call_qsbr(&r->h, on_cb);
		break;
	case K_QSBR_HURRY:
		call_qsbr_hurry(&r->h, on_cb);
		break;
	case K_SRCU:
		call_srcu(&ss, &r->h, on_cb);
		break;
	default:
		call_srcu_hurry(&ss, &r->h, on_cb);
		break;
	}
}

static void barrier(enum kind k)
{
	if (k == K_RCU || k == K_RCU_HURRY)
		rcu_barrier();
	else if (k == K_QSBR || k == K_QSBR_HURRY)
		qsbr_barrier();
	else
		srcu_barrier(&ss);
}

static void log_reset(void)
{
	__atomic_store_n(&nlog, 0u, __ATOMIC_RELAXED);
	used_after_release = 0;
}

/*
 * Every thread's callbacks ran in its order: for each thread, the seq numbers logged are
 * 0, 1, 2, ... n_per_thread - 1. Returns the first offending log index, or -1.
 */
static int check_per_thread(int nthreads, int n_per_thread, int *got, int *want)
{
	int next[64] = { 0 };

	REQUIRE(nthreads <= 64);
	unsigned int n = __atomic_load_n(&nlog, __ATOMIC_ACQUIRE);
	REQUIRE(n <= MAXREC);
	for (unsigned int i = 0; i < n; i++) {
		int t = log_thread[i];
		if (log_seq[i] != next[t]) {
			*got = log_seq[i];
			*want = next[t];
			return (int)i;
		}
		next[t]++;
	}
	for (int t = 0; t < nthreads; t++)
		if (next[t] != n_per_thread) {
			*got = next[t];
			*want = n_per_thread;
			return (int)n;
		}
	return -1;
}

static void setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	REQUIRE(init_srcu_struct(&ss) == 0);
	qsbr_register_thread(); /* call_qsbr from this thread; it reports nothing but goes offline */
	qsbr_thread_offline();
}

#define REPORT_ORDER(k, bad, got, want)                                                        \
	CHECK_MSG((bad) < 0, "%s: callback %d ran with seq %d where %d was due (FIFO broken)", \
		  kind_name[k], bad, got, want)

/* One burst, one harvest (or a few): the order within a harvest. */
TEST(fifo_within_one_harvest)
{
	setup();
	REQUIRE(gt_pin(pthread_self(), -1) >= 0);
	for (int k = 0; k < K_N; k++) {
		int got = 0, want = 0;
		log_reset();
		for (int i = 0; i < 1000; i++)
			queue((enum kind)k, 0, i, NULL, 0);
		barrier((enum kind)k);
		int bad = check_per_thread(1, 1000, &got, &want);
		REPORT_ORDER(k, bad, got, want);
	}
	gt_unpin();
}

/* The program: 8 callbacks use an object, the 9th releases it; 200 rounds. */
TEST(users_then_release)
{
	static int dead[200];

	setup();
	REQUIRE(gt_pin(pthread_self(), -1) >= 0);
	for (int k = 0; k < K_N; k++) {
		log_reset();
		memset(dead, 0, sizeof(dead));
		for (int r = 0; r < 200; r++)
			for (int i = 0; i < 9; i++)
				queue((enum kind)k, 0, r * 9 + i, &dead[r], i == 8);
		barrier((enum kind)k);
		CHECK_MSG(!used_after_release,
			  "%s: a callback used its object after the release queued after it ran",
			  kind_name[k]);
	}
	gt_unpin();
}

/* Bursts with pauses between them, while another thread keeps grace periods running: the
 * callbacks wait in several segments and chains; the order holds across them. */
static int gp_stop;
static void *gp_driver(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&gp_stop, __ATOMIC_RELAXED)) {
		synchronize_rcu();
		synchronize_srcu(&ss);
		qsbr_register_thread();
		synchronize_qsbr();
		qsbr_unregister_thread();
	}
	return NULL;
}

TEST(fifo_across_harvests)
{
	pthread_t drv;
	unsigned int seed = 12345;

	setup();
	gp_stop = 0;
	REQUIRE(pthread_create(&drv, NULL, gp_driver, NULL) == 0);
	REQUIRE(gt_pin(pthread_self(), -1) >= 0);
	for (int k = 0; k < K_N; k++) {
		int got = 0, want = 0, seq = 0;
		log_reset();
		while (seq < 3000) {
			int burst = 1 + (int)(rand_r(&seed) % 64);
			for (int i = 0; i < burst; i++)
				queue((enum kind)k, 0, seq++, NULL, 0);
			if (rand_r(&seed) % 4 == 0)
				usleep(rand_r(&seed) % 300);
		}
		barrier((enum kind)k);
		int bad = check_per_thread(1, seq, &got, &want);
		REPORT_ORDER(k, bad, got, want);
	}
	gt_unpin();
	__atomic_store_n(&gp_stop, 1, __ATOMIC_RELAXED);
	pthread_join(drv, NULL);
}

/* Several threads, each pinned to a CPU, queue at once: each one's order holds. With one
 * srcu worker for every CPU, its queues are taken remotely while they are pushed. */
struct pusher_arg {
	enum kind k;
	int thread, n;
};

static void *pusher(void *arg)
{
	struct pusher_arg *a = (struct pusher_arg *)arg;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	(void)gt_pin(pthread_self(), (int)(a->thread % (ncpu > 0 ? ncpu : 1)));
	if (a->k == K_QSBR || a->k == K_QSBR_HURRY) {
		qsbr_register_thread();
		qsbr_thread_offline();
	}
	for (int i = 0; i < a->n; i++) {
		queue(a->k, a->thread, i, NULL, 0);
		if ((i & 255) == 255)
			sched_yield();
	}
	if (a->k == K_QSBR || a->k == K_QSBR_HURRY)
		qsbr_unregister_thread();
	return NULL;
}

TEST(fifo_per_thread_concurrent)
{
	enum { T = 4, N = 8000 };
	setup();
	for (int k = 0; k < K_N; k++) {
		pthread_t t[T];
		struct pusher_arg a[T];
		int got = 0, want = 0;
		log_reset();
		for (int i = 0; i < T; i++) {
			a[i].k = (enum kind)k;
			a[i].thread = i;
			a[i].n = N;
			REQUIRE(pthread_create(&t[i], NULL, pusher, &a[i]) == 0);
		}
		for (int i = 0; i < T; i++)
			pthread_join(t[i], NULL);
		barrier((enum kind)k);
		int bad = check_per_thread(T, N, &got, &want);
		REPORT_ORDER(k, bad, got, want);
	}
}

/* One CPU's queue handed from a thread that exits to the next one: the second thread's
 * callbacks, queued after the first thread was joined, run after the first's. */
static void *half(void *arg)
{
	struct pusher_arg *a = (struct pusher_arg *)arg;

	(void)gt_pin(pthread_self(), 0);
	for (int i = 0; i < a->n; i++)
		queue(a->k, 0, a->thread * a->n + i, NULL, 0);
	return NULL; /* exits with its callbacks queued */
}

TEST(fifo_across_thread_exit)
{
	setup();
	for (int k = 0; k < K_N; k++) {
		int got = 0, want = 0;
		log_reset();
		for (int th = 0; th < 4; th++) {
			pthread_t t;
			struct pusher_arg a = { (enum kind)k, th, 500 };
			REQUIRE(pthread_create(&t, NULL, half, &a) == 0);
			pthread_join(t, NULL);
		}
		barrier((enum kind)k);
		int bad = check_per_thread(1, 2000, &got, &want);
		REPORT_ORDER(k, bad, got, want);
	}
}

/* A fork child inherits the queue, with the callbacks that a section of the forking thread
 * keeps waiting (the child ends it; another thread's srcu section would never end there:
 * docs/guide.md, fork), and runs them in order. */
static int hold(enum kind k)
{
	if (k == K_RCU || k == K_RCU_HURRY)
		rcu_read_lock();
	else if (k == K_QSBR || k == K_QSBR_HURRY)
		qsbr_thread_online(); /* online and reporting nothing: holds the grace period */
	else
		return srcu_read_lock(&ss);
	return 0;
}

static void unhold(enum kind k, int idx)
{
	if (k == K_RCU || k == K_RCU_HURRY)
		rcu_read_unlock();
	else if (k == K_QSBR || k == K_QSBR_HURRY)
		qsbr_thread_offline();
	else
		srcu_read_unlock(&ss, idx);
}

TEST(fifo_in_fork_child)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan cannot start threads in the child of a multi-threaded process ("dup thread with
	 * used id"); the other configurations run this case. */
	printf("  skipped under TSan\n");
	return;
#endif
	setup();
	REQUIRE(gt_pin(pthread_self(), -1) >= 0);
	for (int k = 0; k < K_N; k++) {
		log_reset();
		int idx = hold((enum kind)k);
		for (int i = 0; i < 600; i++)
			queue((enum kind)k, 0, i, NULL, 0);
		usleep(20000); /* harvested: they wait for the held grace period */
		fflush(NULL);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			int got = 0, want = 0;
			unhold((enum kind)k, idx);
			barrier((enum kind)k);
			int bad = check_per_thread(1, 600, &got, &want);
			if (bad >= 0)
				fprintf(stderr, "  child: %s: callback %d ran seq %d, %d was due\n",
					kind_name[k], bad, got, want);
			_exit(bad >= 0 ? 1 : 0);
		}
		int st;
		REQUIRE(waitpid(pid, &st, 0) == pid);
		unhold((enum kind)k, idx);
		barrier((enum kind)k);
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "%s: the fork child ran the inherited callbacks out of order",
			  kind_name[k]);
		int got = 0, want = 0;
		int bad = check_per_thread(1, 600, &got, &want);
		REPORT_ORDER(k, bad, got, want);
	}
	gt_unpin();
}

GT_MAIN()
