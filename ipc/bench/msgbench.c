/* SPDX-License-Identifier: MIT */
/*
 * msgbench: System V message queues, global lock (Linux 2.5.42) against RCU (ipc-rcu), the
 * message-queue counterpart of semopbench (seed 000 section 4: "analogous changes were made to
 * message queues and shared memory").
 *
 * Modes (every operation is one grace_ipc_msgsnd() or grace_ipc_msgrcv() call):
 *   pingpong  thread pairs, each pair on a queue of its own: the client sends a request (type
 *             1) and sleeps in msgrcv for the reply (type 2); the server sleeps in msgrcv for
 *             the request and sends the reply. A round trip is two sends, two receives and
 *             two wake-ups. Only the global lock makes the pairs contend.
 *   own       each thread sends to and receives from a queue of its own, never sleeping (the
 *             lookup path alone, like semopbench's own sets).
 * Both implementations run in one process, interleaved (global, rcu, rcu, global, ...), each
 * run in a fresh namespace; every thread is a process of its own (a client handle).
 *
 * Usage:
 *   msgbench [--impl global|rcu|both] [--mode pingpong|own|all] [--pairs 1,2,4]
 *            [--threads 1,2,4,8] [--ms 250] [--runs 5] [--size 64] [--no-pin] [--header]
 *       Thread i is pinned to CPU i mod (CPUs of the affinity mask): a pair's client and server
 *       sit on different CPUs when there are two. CSV rows (bench,design,threads,run,metric,
 *       value,unit) on stdout; threads is the number of threads (2 per pair). Metrics:
 *       pingpong: roundtrips_per_s, cpu_ns_per_rt (the threads' CPU time per round trip);
 *       own: msgs_per_s (messages sent and received per second), cpu_ns_per_msg.
 *   msgbench --count N --impl global|rcu
 *       N send+receive pairs on one thread in msg_count_loop(), for callgrind's
 *       --toggle-collect.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>
#include <grace_ipc.h>
#include "bench.h"

#define MAX_THREADS 64
#define MAX_SIZE 8192
#define BATCH 32 /* operations between two looks at the stop flag (own mode) */

static int g_cpus[BENCH_MAX_CPUS];
static int g_ncpus;
static bool g_pin = true;
static size_t g_size = 64;

enum mode { M_PINGPONG, M_OWN };
static const char *const mode_name[] = { "msg-pingpong", "msg-own" };

struct msgb {
	long mtype;
	char text[MAX_SIZE];
};

struct worker {
	struct run *r;
	struct grace_ipc_proc *p;
	int cpu;
	int qid;
	bool server; /* pingpong: the pair's server */
	uint64_t ops;
	uint64_t cpu_ns;
	long err;
} __attribute__((aligned(64)));

struct run {
	struct grace_ipc_ns *ns;
	struct bench_start start;
	int stop;
	struct worker w[MAX_THREADS];
};

static bool stopped(struct run *r)
{
	return grace_load_acquire(&r->stop); /* pairs with the store-release in one_run() */
}

/* The measured loops: nothing but the calls and a look at the stop flag. */
static BENCH_NOINLINE uint64_t client_loop(struct run *r, struct grace_ipc_proc *p, int qid,
					   struct msgb *m, long *err)
{
	uint64_t n = 0;
	long e;

	while (!stopped(r)) {
		m->mtype = 1;
		e = grace_ipc_msgsnd(p, qid, m, g_size, 0);
		if (!e)
			e = grace_ipc_msgrcv(p, qid, m, g_size, 2, 0);
		if (e < 0) {
			*err = e;
			return n;
		}
		n++;
	}
	return n;
}

static BENCH_NOINLINE uint64_t server_loop(struct run *r, struct grace_ipc_proc *p, int qid,
					   struct msgb *m, long *err)
{
	uint64_t n = 0;
	long e;

	for (;;) {
		e = grace_ipc_msgrcv(p, qid, m, g_size, 1, 0);
		if (e == -EIDRM && stopped(r))
			return n; /* the queue was removed to end the run */
		if (e >= 0) {
			m->mtype = 2;
			e = grace_ipc_msgsnd(p, qid, m, g_size, 0);
		}
		if (e < 0) {
			*err = e;
			return n;
		}
		n++;
	}
}

static BENCH_NOINLINE uint64_t own_loop(struct run *r, struct grace_ipc_proc *p, int qid,
					struct msgb *m, long *err)
{
	uint64_t n = 0;

	while (!stopped(r)) {
		for (int k = 0; k < BATCH; k++) {
			long e;

			m->mtype = 1;
			e = grace_ipc_msgsnd(p, qid, m, g_size, GRACE_IPC_NOWAIT);
			if (!e)
				e = grace_ipc_msgrcv(p, qid, m, g_size, 0, GRACE_IPC_NOWAIT);
			if (e < 0) {
				*err = e;
				return n;
			}
		}
		n += 2 * BATCH;
	}
	return n;
}

static enum mode g_mode;

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct msgb *m = (struct msgb *)calloc(1, sizeof(*m));
	uint64_t c0;

	if (!m) {
		w->err = -ENOMEM;
		return NULL;
	}
	if (w->cpu >= 0)
		(void)bench_pin_cpu(w->cpu);
	bench_start_wait(&w->r->start);
	c0 = bench_thread_cpu_ns();
	if (g_mode == M_OWN)
		w->ops = own_loop(w->r, w->p, w->qid, m, &w->err);
	else if (w->server)
		w->ops = server_loop(w->r, w->p, w->qid, m, &w->err);
	else
		w->ops = client_loop(w->r, w->p, w->qid, m, &w->err);
	w->cpu_ns = bench_thread_cpu_ns() - c0;
	free(m);
	return NULL;
}

static void emit(const char *bench, const char *design, int threads, int run, const char *metric,
		 double v, const char *unit)
{
	bench_csv_row(stdout, bench, design, threads, run, metric, v, unit);
}

static int one_run(enum mode m, enum grace_ipc_impl impl, int nthreads, unsigned ms, int run_no)
{
	static struct run r;
	pthread_t th[MAX_THREADS];
	struct grace_ipc_proc *setup;
	const char *d = grace_ipc_impl_name(impl);
	uint64_t t0, t1, ops = 0, cpu = 0;
	long err = 0;

	memset(&r, 0, sizeof(r));
	g_mode = m;
	if (grace_ipc_ns_create(impl, NULL, &r.ns) || grace_ipc_proc_open(r.ns, NULL, 0, &setup)) {
		fprintf(stderr, "msgbench: ns_create or proc_open failed\n");
		return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		struct worker *w = &r.w[i];

		w->r = &r;
		w->cpu = g_pin ? g_cpus[i % g_ncpus] : -1;
		w->server = m == M_PINGPONG && (i & 1);
		/* pingpong: threads 2k and 2k + 1 share queue k; own: a queue each. */
		if (m == M_OWN || !w->server)
			w->qid = grace_ipc_msgget(setup, GRACE_IPC_PRIVATE, 0600);
		else
			w->qid = r.w[i - 1].qid;
		if (w->qid < 0 || grace_ipc_proc_open(r.ns, NULL, 0, &w->p)) {
			fprintf(stderr, "msgbench: msgget or proc_open failed\n");
			return 1;
		}
	}
	bench_start_init(&r.start, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker_main, &r.w[i]);
	bench_start_wait(&r.start);
	t0 = bench_now_ns();
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
	grace_store_release(&r.stop, 1);
	if (m == M_PINGPONG) {
		/* Clients stop after their current round trip; then removing the queues wakes
		 * the servers, which sleep for the next request. */
		for (int i = 0; i < nthreads; i += 2)
			pthread_join(th[i], NULL);
		t1 = bench_now_ns();
		for (int i = 0; i < nthreads; i += 2)
			grace_ipc_msgctl(setup, r.w[i].qid, GRACE_IPC_RMID, NULL);
		for (int i = 1; i < nthreads; i += 2)
			pthread_join(th[i], NULL);
	} else {
		for (int i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		t1 = bench_now_ns();
	}
	for (int i = 0; i < nthreads; i++) {
		if (m == M_OWN || !r.w[i].server)
			ops += r.w[i].ops;
		cpu += r.w[i].cpu_ns;
		if (r.w[i].err)
			err = r.w[i].err;
	}
	grace_ipc_ns_destroy(r.ns); /* closes the handles */
	if (err) {
		fprintf(stderr, "msgbench: %s %s %d threads: error %s\n", mode_name[m], d, nthreads,
			strerror((int)-err));
		return 1;
	}
	double secs = (double)(t1 - t0) / 1e9;
	if (m == M_PINGPONG) {
		emit(mode_name[m], d, nthreads, run_no, "roundtrips_per_s", (double)ops / secs,
		     "rt/s");
		emit(mode_name[m], d, nthreads, run_no, "cpu_ns_per_rt",
		     ops ? (double)cpu / (double)ops : 0, "ns");
	} else {
		emit(mode_name[m], d, nthreads, run_no, "msgs_per_s", (double)ops / secs, "msg/s");
		emit(mode_name[m], d, nthreads, run_no, "cpu_ns_per_msg",
		     ops ? (double)cpu / (double)ops : 0, "ns");
	}
	fflush(stdout);
	return 0;
}

/* --count: a fixed number of send+receive pairs on one thread, for instruction counts. */
static BENCH_NOINLINE long msg_count_loop(struct grace_ipc_proc *p, int qid, struct msgb *m,
					  uint64_t n)
{
	long e = 0;

	for (uint64_t i = 0; i < n && e >= 0; i++) {
		m->mtype = 1;
		e = grace_ipc_msgsnd(p, qid, m, g_size, GRACE_IPC_NOWAIT);
		if (!e)
			e = grace_ipc_msgrcv(p, qid, m, g_size, 0, GRACE_IPC_NOWAIT);
	}
	return e < 0 ? e : 0;
}

static enum grace_ipc_impl parse_impl(const char *s)
{
	if (strcmp(s, "global") == 0)
		return GRACE_IPC_GLOBAL_LOCK;
	if (strcmp(s, "rcu") == 0)
		return GRACE_IPC_RCU;
	fprintf(stderr, "msgbench: --impl global|rcu|both\n");
	exit(2);
}

static int parse_list(const char *s, int *out, int max, int lo, int hi, const char *what)
{
	int n = 0;

	for (const char *p = s; *p && n < max;) {
		int v = atoi(p);

		if (v < lo || v > hi) {
			fprintf(stderr, "msgbench: %s must be %d..%d\n", what, lo, hi);
			exit(2);
		}
		out[n++] = v;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *impl_s = bench_arg_str(argc, argv, "--impl");
	const char *mode_s = bench_arg_str(argc, argv, "--mode");
	const char *pairs_s = bench_arg_str(argc, argv, "--pairs");
	const char *thr_s = bench_arg_str(argc, argv, "--threads");
	unsigned ms = (unsigned)bench_arg_u64(argc, argv, "--ms", 250);
	int runs = (int)bench_arg_u64(argc, argv, "--runs", 5);
	uint64_t count = bench_arg_u64(argc, argv, "--count", 0);
	int pairs[16], threads[16], npairs, nthr;
	enum grace_ipc_impl impls[2] = { GRACE_IPC_GLOBAL_LOCK, GRACE_IPC_RCU };
	int nimpl = 2;
	bool modes[2] = { true, true };

	if (bench_arg_flag(argc, argv, "-h") || bench_arg_flag(argc, argv, "--help")) {
		printf("usage: msgbench [--impl global|rcu|both] [--mode pingpong|own|all]\n"
		       "                [--pairs 1,2,4] [--threads 1,2,4,8] [--ms 250] [--runs 5]\n"
		       "                [--size 64] [--no-pin] [--header]\n"
		       "       msgbench --count N --impl global|rcu\n");
		return 0;
	}
	g_size = (size_t)bench_arg_u64(argc, argv, "--size", 64);
	if (g_size > MAX_SIZE) {
		fprintf(stderr, "msgbench: --size at most %d\n", MAX_SIZE);
		return 2;
	}
	g_ncpus = bench_affinity_cpus(g_cpus, BENCH_MAX_CPUS);
	g_pin = !bench_arg_flag(argc, argv, "--no-pin");
	if (impl_s && strcmp(impl_s, "both") != 0) {
		impls[0] = parse_impl(impl_s);
		nimpl = 1;
	}
	if (count) {
		struct grace_ipc_ns *ns;
		struct grace_ipc_proc *p;
		struct msgb *m = (struct msgb *)calloc(1, sizeof(*m));

		if (!m || grace_ipc_ns_create(impls[0], NULL, &ns) ||
		    grace_ipc_proc_open(ns, NULL, 0, &p))
			return 1;
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		long e = msg_count_loop(p, id, m, count);

		grace_ipc_ns_destroy(ns);
		free(m);
		return e ? 1 : 0;
	}
	if (mode_s && strcmp(mode_s, "all") != 0) {
		modes[0] = strcmp(mode_s, "pingpong") == 0;
		modes[1] = strcmp(mode_s, "own") == 0;
		if (!modes[0] && !modes[1]) {
			fprintf(stderr, "msgbench: --mode pingpong|own|all\n");
			return 2;
		}
	}
	npairs = parse_list(pairs_s ? pairs_s : "1,2,4", pairs, 16, 1, MAX_THREADS / 2, "pairs");
	nthr = parse_list(thr_s ? thr_s : "1,2,4,8", threads, 16, 1, MAX_THREADS, "threads");
	if (bench_arg_flag(argc, argv, "--header"))
		bench_csv_header(stdout);
	for (int run = 1; run <= runs; run++) {
		for (int m = 0; m < 2; m++) {
			int n = m == M_PINGPONG ? npairs : nthr;

			if (!modes[m])
				continue;
			for (int t = 0; t < n; t++) {
				int nt = m == M_PINGPONG ? 2 * pairs[t] : threads[t];

				for (int k = 0; k < nimpl; k++) {
					/* Alternate which implementation goes first. */
					int i = (run + t) % 2 ? k : nimpl - 1 - k;

					if (one_run((enum mode)m, impls[i], nt, ms, run))
						return 1;
				}
			}
		}
	}
	return 0;
}
