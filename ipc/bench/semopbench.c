/* SPDX-License-Identifier: MIT */
/*
 * semopbench: System V semaphore throughput, global lock (Linux 2.5.42) against RCU (ipc-rcu),
 * after seed 000 section 4.7 (Table 5: 515.3 s vs 46.7 s on 8 CPUs, 11.0x).
 *
 * Modes (every operation is one grace_ipc_semop() call; a worker alternates +1 and -1 on its
 * semaphore, which never blocks):
 *   own     each worker operates on a set of its own: the paper's case, where only the global
 *           lock makes the workers contend;
 *   shared  every worker operates on one shared set (semaphore i for worker i): the per-set lock
 *           serialises RCU too, so only the lock-free lookup differs;
 *   churn   as own, plus one extra thread that creates and removes sets without pause (a FIFO
 *           window of 8192 live sets, so the ID array grows under the workers' lookups while it
 *           fills, then slots are reused under them), reported separately.
 * Both implementations run in one process, interleaved (global, rcu, rcu, global, ...).
 *
 * Usage:
 *   semopbench [--impl global|rcu|both] [--mode own|shared|churn|all] [--threads 1,2,4,8]
 *              [--ms 250] [--runs 5] [--no-pin] [--header]
 *       Worker i is pinned to CPU i mod (CPUs of the affinity mask), so 2 workers on 2 CPUs run
 *       in parallel whenever they run; the churn thread is not pinned.
 *       CSV rows (bench,design,threads,run,metric,value,unit) on stdout. Metrics: ops_per_s
 *       (the workers' semop calls per second of wall clock), cpu_ns_per_op (the workers' CPU
 *       time per call: time spent asleep on a contended lock is not in it); churn mode also
 *       churn_per_s (creations + removals per second), grows and ary_size (the ID array).
 *   semopbench --count N --impl global|rcu
 *       N semop calls on one thread in semop_count_loop(), for callgrind's --toggle-collect.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace_ipc.h>
#include "bench.h"

#define MAX_THREADS 64
#define CHURN_WINDOW 8192
#define BATCH 64 /* semop pairs between two looks at the stop flag */

/* Workers are pinned round-robin to the CPUs of the process's affinity mask (--no-pin: not). */
static int g_cpus[BENCH_MAX_CPUS];
static int g_ncpus;
static bool g_pin = true;

enum mode { M_OWN, M_SHARED, M_CHURN };
static const char *const mode_name[] = { "semop-own", "semop-shared", "semop-churn" };

struct worker {
	struct run *r;
	struct grace_ipc_proc *p; /* each worker is a process of its own, as in the paper */
	int cpu;                  /* pinned to this CPU, or -1 */
	int semid;
	unsigned short semnum;
	uint64_t ops;
	uint64_t cpu_ns;
	int err;
} __attribute__((aligned(64)));

struct run {
	struct grace_ipc_ns *ns;
	struct grace_ipc_proc *setup; /* creates the sets; also the churn thread's process */
	struct bench_start start;
	int stop;
	int nthreads;
	/* churn thread */
	uint64_t churn_ops;
	int churn_err;
	struct worker w[MAX_THREADS];
};

static bool stopped(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* The measured loop: nothing but semop calls and the stop check every BATCH pairs. */
static BENCH_NOINLINE uint64_t semop_loop(struct run *r, struct grace_ipc_proc *p, int semid,
					  unsigned short num, int *err)
{
	struct grace_ipc_sembuf up = { num, 1, 0 }, down = { num, -1, 0 };
	uint64_t n = 0;

	while (!stopped(r)) {
		for (int k = 0; k < BATCH; k++) {
			int e = grace_ipc_semop(p, semid, &up, 1);

			e |= grace_ipc_semop(p, semid, &down, 1);
			if (e) {
				*err = e;
				return n;
			}
		}
		n += 2 * BATCH;
	}
	return n;
}

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	uint64_t c0;

	if (w->cpu >= 0)
		(void)bench_pin_cpu(w->cpu);
	bench_start_wait(&w->r->start);
	c0 = bench_thread_cpu_ns();
	w->ops = semop_loop(w->r, w->p, w->semid, w->semnum, &w->err);
	w->cpu_ns = bench_thread_cpu_ns() - c0;
	return NULL;
}

/* Create and remove sets without pause: a FIFO window of CHURN_WINDOW live sets. */
static void *churn_main(void *arg)
{
	struct run *r = (struct run *)arg;
	static int ring[CHURN_WINDOW];
	unsigned head = 0, live = 0;
	uint64_t n = 0;

	bench_start_wait(&r->start);
	while (!stopped(r)) {
		if (live == CHURN_WINDOW) {
			int e = grace_ipc_sem_rmid(r->setup, ring[head % CHURN_WINDOW]);

			if (e) {
				r->churn_err = e;
				break;
			}
			head++;
			live--;
			n++;
		}
		int id = grace_ipc_semget(r->setup, GRACE_IPC_PRIVATE, 1, 0600);

		if (id < 0) {
			r->churn_err = id;
			break;
		}
		ring[(head + live) % CHURN_WINDOW] = id;
		live++;
		n++;
	}
	r->churn_ops = n;
	return NULL; /* the namespace's destroy removes what is left */
}

static void emit(const char *bench, const char *design, int threads, int run, const char *metric,
		 double v, const char *unit)
{
	bench_csv_row(stdout, bench, design, threads, run, metric, v, unit);
}

static int one_run(enum mode m, enum grace_ipc_impl impl, int nthreads, unsigned ms, int run_no)
{
	static struct run r;
	pthread_t th[MAX_THREADS + 1];
	struct grace_ipc_ns_info info;
	const char *d = grace_ipc_impl_name(impl);
	int shared = -1, err = 0, nth = nthreads + (m == M_CHURN);
	uint64_t t0, t1, ops = 0, cpu = 0;

	memset(&r, 0, sizeof(r));
	r.nthreads = nthreads;
	if (grace_ipc_ns_create(impl, NULL, &r.ns) ||
	    grace_ipc_proc_open(r.ns, NULL, 0, &r.setup)) {
		fprintf(stderr, "semopbench: ns_create or proc_open failed\n");
		return 1;
	}
	if (m == M_SHARED)
		shared = grace_ipc_semget(r.setup, GRACE_IPC_PRIVATE, nthreads, 0600);
	for (int i = 0; i < nthreads; i++) {
		r.w[i].r = &r;
		if (grace_ipc_proc_open(r.ns, NULL, 0, &r.w[i].p)) {
			fprintf(stderr, "semopbench: proc_open failed\n");
			return 1;
		}
		r.w[i].cpu = g_pin ? g_cpus[i % g_ncpus] : -1;
		r.w[i].semid = m == M_SHARED
				       ? shared
				       : grace_ipc_semget(r.setup, GRACE_IPC_PRIVATE, 1, 0600);
		r.w[i].semnum = m == M_SHARED ? (unsigned short)i : 0;
		if (r.w[i].semid < 0) {
			fprintf(stderr, "semopbench: semget: %s\n", strerror(-r.w[i].semid));
			return 1;
		}
	}
	bench_start_init(&r.start, (unsigned)nth + 1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker_main, &r.w[i]);
	if (m == M_CHURN)
		pthread_create(&th[nthreads], NULL, churn_main, &r);
	bench_start_wait(&r.start);
	t0 = bench_now_ns();
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	t1 = bench_now_ns();
	for (int i = 0; i < nthreads; i++) {
		ops += r.w[i].ops;
		cpu += r.w[i].cpu_ns;
		if (r.w[i].err)
			err = r.w[i].err;
	}
	if (r.churn_err)
		err = r.churn_err;
	grace_ipc_info(r.ns, &info);
	grace_ipc_ns_destroy(r.ns); /* closes the handles */
	if (err) {
		fprintf(stderr, "semopbench: %s %s %d threads: error %s\n", mode_name[m], d,
			nthreads, strerror(-err));
		return 1;
	}
	double secs = (double)(t1 - t0) / 1e9;
	emit(mode_name[m], d, nthreads, run_no, "ops_per_s", (double)ops / secs, "op/s");
	emit(mode_name[m], d, nthreads, run_no, "cpu_ns_per_op",
	     ops ? (double)cpu / (double)ops : 0, "ns");
	if (m == M_CHURN) {
		emit(mode_name[m], d, nthreads, run_no, "churn_per_s", (double)r.churn_ops / secs,
		     "create+rmid/s");
		emit(mode_name[m], d, nthreads, run_no, "grows", (double)info.sem.grows, "count");
		emit(mode_name[m], d, nthreads, run_no, "ary_size", (double)info.sem.ary_size,
		     "slots");
	}
	fflush(stdout);
	return 0;
}

/* --count: a fixed number of semop calls on one thread, for instruction counts. */
static BENCH_NOINLINE int semop_count_loop(struct grace_ipc_proc *p, int semid, uint64_t n)
{
	struct grace_ipc_sembuf up = { 0, 1, 0 }, down = { 0, -1, 0 };
	int e = 0;

	for (uint64_t i = 0; i < n / 2; i++) {
		e |= grace_ipc_semop(p, semid, &up, 1);
		e |= grace_ipc_semop(p, semid, &down, 1);
	}
	return e;
}

static enum grace_ipc_impl parse_impl(const char *s)
{
	if (strcmp(s, "global") == 0)
		return GRACE_IPC_GLOBAL_LOCK;
	if (strcmp(s, "rcu") == 0)
		return GRACE_IPC_RCU;
	fprintf(stderr, "semopbench: --impl global|rcu|both\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *impl_s = bench_arg_str(argc, argv, "--impl");
	const char *mode_s = bench_arg_str(argc, argv, "--mode");
	const char *thr_s = bench_arg_str(argc, argv, "--threads");
	unsigned ms = (unsigned)bench_arg_u64(argc, argv, "--ms", 250);
	int runs = (int)bench_arg_u64(argc, argv, "--runs", 5);
	uint64_t count = bench_arg_u64(argc, argv, "--count", 0);
	int threads[16], nthr = 0;
	enum grace_ipc_impl impls[2] = { GRACE_IPC_GLOBAL_LOCK, GRACE_IPC_RCU };
	int nimpl = 2;
	bool modes[3] = { true, true, true };

	if (bench_arg_flag(argc, argv, "-h") || bench_arg_flag(argc, argv, "--help")) {
		printf("usage: semopbench [--impl global|rcu|both] [--mode own|shared|churn|all]\n"
		       "                  [--threads 1,2,4,8] [--ms 250] [--runs 5] [--no-pin] [--header]\n"
		       "       semopbench --count N --impl global|rcu\n");
		return 0;
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

		if (grace_ipc_ns_create(impls[0], NULL, &ns) ||
		    grace_ipc_proc_open(ns, NULL, 0, &p))
			return 1;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0600);
		int e = semop_count_loop(p, id, count);

		grace_ipc_ns_destroy(ns);
		return e ? 1 : 0;
	}
	if (mode_s && strcmp(mode_s, "all") != 0) {
		modes[0] = strcmp(mode_s, "own") == 0;
		modes[1] = strcmp(mode_s, "shared") == 0;
		modes[2] = strcmp(mode_s, "churn") == 0;
		if (!modes[0] && !modes[1] && !modes[2]) {
			fprintf(stderr, "semopbench: --mode own|shared|churn|all\n");
			return 2;
		}
	}
	for (const char *p = thr_s ? thr_s : "1,2,4,8"; *p && nthr < 16;) {
		int t = atoi(p);

		if (t < 1 || t > MAX_THREADS) {
			fprintf(stderr, "semopbench: threads must be 1..%d\n", MAX_THREADS);
			return 2;
		}
		threads[nthr++] = t;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	if (bench_arg_flag(argc, argv, "--header"))
		bench_csv_header(stdout);
	for (int run = 1; run <= runs; run++) {
		for (int m = 0; m < 3; m++) {
			if (!modes[m])
				continue;
			for (int t = 0; t < nthr; t++) {
				for (int k = 0; k < nimpl; k++) {
					/* Alternate which implementation goes first. */
					int i = (run + t) % 2 ? k : nimpl - 1 - k;

					if (one_run((enum mode)m, impls[i], threads[t], ms, run))
						return 1;
				}
			}
		}
	}
	return 0;
}
