/* SPDX-License-Identifier: MIT */
/*
 * callbacks_bench: the callback engine against liburcu, one design and one measurement per run.
 *
 *   callbacks_bench list
 *       designs, one per line: name, measured enqueue function, label
 *   callbacks_bench enqueue --design D [--ms M] [--batch K]
 *       one pinned thread queues batches of K preallocated objects (callbacks only release the
 *       object), an rcu_barrier() after each batch (not timed); ns per call_rcu, from the
 *       thread's CPU time and from the wall clock
 *   callbacks_bench count   --design D [--iters N] [--batch K]
 *       the same, N calls in all, nothing else: run it under valgrind --tool=callgrind
 *       --toggle-collect=<measured enqueue function> for instructions per call_rcu
 *   callbacks_bench tput    --design D [--producers P] [--ms M] [--cb flag|free] [--pool N]
 *       P threads queue as fast as they can for M ms (flag: from a pool of N objects each,
 *       reused once their callback ran; free: malloc'd objects freed by the callback), then
 *       rcu_barrier(); callbacks per second = calls / (time to the end of the barrier)
 *   callbacks_bench lat     --design D [--ms M] [--gap-us G] [--load] [--raw FILE]
 *       one call_rcu, wait (futex) for its callback, sleep G us, repeat, for M ms;
 *       enqueue-to-invoke latency percentiles; --load adds a thread that floods call_rcu
 *   callbacks_bench sweep   --design D --rate R [--ms M] [--readers 0|1] [--tick-us T]
 *                           [--raw FILE]
 *       a producer offers R callbacks per second (paced, waking at most once per T us,
 *       default 1000) for M ms while a reader runs
 *       back-to-back sections; latency percentiles of sampled callbacks, achieved rate, CPU
 *       time of the engine per callback (process CPU minus the producer's, the reader's and
 *       the driver's), worker CPU and grace periods per callback (grace's own counters)
 *   callbacks_bench floor   [--ms M]
 *       what the machine charges for the two things every grace-period cycle of a sleeping
 *       worker pays, with a second thread spinning on another CPU (the sweep's reader): the
 *       CPU time of one timed futex wait that runs out after D us (the wake-up), for D = 50,
 *       200, 1000, 2000 and 5000, and of one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).
 *       No library is involved (bench "floor", design "machine")
 *   Every command: [--policy default|poll|batch|adaptive|lazy] [--period-us U] [--run K] [--as NAME]
 *   [--soft N [--hard N]] (grace: per-CPU callback limits, hard default 10 x soft) [--no-pin]
 *   [--header]. Rows: bench,design,threads,run,metric,value,unit (sweep rows have
 *   bench "sweep@R").
 *
 * Pinning: the measuring (or producing) thread runs on the first CPU of the affinity mask, the
 * second producer, load producer or reader on the second, unless --no-pin or there are fewer
 * CPUs than threads.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cb.h"

static const struct cb_design *const designs[] = {
	&cb_design_grace,
#ifdef CB_HAVE_URCU
	&cb_design_urcu_memb,
	&cb_design_urcu_memb_percpu,
#endif
};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

uint64_t *cb_lat_ns;

/* The CPUs of the affinity mask, read at start-up; pinning off with --no-pin or when the
 * command's threads outnumber them. */
static struct bench_cpus cpus;

static void pin_to(int idx)
{
	bench_cpus_pin(&cpus, idx);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: callbacks_bench list\n"
		"       callbacks_bench enqueue --design D [--ms M] [--batch K]\n"
		"       callbacks_bench count   --design D [--iters N] [--batch K]\n"
		"       callbacks_bench tput    --design D [--producers P] [--ms M]\n"
		"                               [--cb flag|free] [--pool N]\n"
		"       callbacks_bench lat     --design D [--ms M] [--gap-us G] [--load]\n"
		"                               [--raw FILE]\n"
		"       callbacks_bench sweep   --design D --rate R [--ms M] [--readers 0|1] [--tick-us T]\n"
		"                               [--raw FILE] [--hurry] [--no-calls]\n"
		"       callbacks_bench floor   [--ms M]   (no design: the machine's wake-up and\n"
		"                               membarrier costs)\n"
		"       common: [--policy default|poll|batch|adaptive|lazy] [--period-us U] [--run K]\n"
		"               [--soft N [--hard N]] [--as NAME] [--no-pin] [--header]\n");
	exit(2);
}

void cb_sleep_until(uint64_t t)
{
	bench_sleep_until_ns(t);
}

BENCH_NOINLINE void cb_pool_wait(struct cb_prod *p, struct cb_obj *o)
{
	p->stalls++;
	/* Acquire: pairs with the release in cb_done_*(), as in cb_pool_get(). */
	while (__atomic_load_n(&o->busy, __ATOMIC_ACQUIRE))
		bench_sleep_ns(20000);
}

/* CPU time of the whole process: producers, workers, the barrier. */
static double proc_cpu_ns(void)
{
	return (double)bench_process_cpu_ns();
}

static double thread_cpu_ns(pthread_t th)
{
	clockid_t cid;

	if (pthread_getcpuclockid(th, &cid))
		return 0;
	return (double)bench_clock_ns(cid);
}

static void engine_stats(const struct cb_design *d, struct cb_engine_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (d->stats)
		d->stats(s);
}

static void emit_lat(const char *bench, const char *as, int threads, int run, uint64_t *ns,
		     size_t n, const char *raw)
{
	double *us = (double *)bench_xalloc((n ? n : 1) * sizeof(*us));

	for (size_t i = 0; i < n; i++)
		us[i] = (double)ns[i] / 1000.0;
	if (raw)
		bench_append_samples(raw, us, n);
	bench_csv_latency(stdout, bench, as, threads, run, us, n);
	free(us);
}

/* ---- enqueue: ns per call_rcu ---------------------------------------------------------------- */

static int cmd_enqueue(const struct cb_design *d, const char *as, int run, int argc, char **argv)
{
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 200);
	uint64_t k = bench_arg_u64(argc, argv, "--batch", 4096);
	struct cb_obj *objs;
	uint64_t calls = 0, batches = 0, cpu = 0, wall = 0, t_end;

	if (k < 1)
		usage();
	objs = (struct cb_obj *)bench_xalloc(k * sizeof(*objs));
	pin_to(0);
	d->thread_init();
	/* Warm-up: the workers start, the queues' and objects' lines are touched once. */
	d->enqueue(objs, k);
	d->barrier();
	t_end = bench_now_ns() + ms * 1000000ull;
	do {
		uint64_t w0 = bench_now_ns(), c0 = bench_thread_cpu_ns();

		calls += d->enqueue(objs, k);
		cpu += bench_thread_cpu_ns() - c0;
		wall += bench_now_ns() - w0;
		batches++;
		d->barrier(); /* not timed: the objects are reused by the next batch */
	} while (bench_now_ns() < t_end);
	bench_csv_row(stdout, "enqueue", as, 1, run, "ns_cpu", (double)cpu / (double)calls, "ns");
	bench_csv_row(stdout, "enqueue", as, 1, run, "ns_wall", (double)wall / (double)calls, "ns");
	bench_csv_row(stdout, "enqueue", as, 1, run, "calls", (double)calls, "count");
	bench_csv_row(stdout, "enqueue", as, 1, run, "batches", (double)batches, "count");
	d->thread_fini();
	d->teardown();
	free(objs);
	return 0;
}

/* ---- count: a fixed number of calls (for callgrind) ------------------------------------------ */

static int cmd_count(const struct cb_design *d, const char *as, int run, int argc, char **argv)
{
	uint64_t iters = bench_arg_u64(argc, argv, "--iters", 100000);
	uint64_t k = bench_arg_u64(argc, argv, "--batch", 4096);
	struct cb_obj *objs;
	uint64_t n = 0;

	if (k < 1)
		usage();
	objs = (struct cb_obj *)bench_xalloc(k * sizeof(*objs));
	d->thread_init();
	while (n < iters) {
		uint64_t b = iters - n < k ? iters - n : k;

		n += d->enqueue(objs, b);
		d->barrier();
	}
	bench_csv_row(stdout, "count", as, 1, run, "calls", (double)n, "count");
	d->thread_fini();
	d->teardown();
	free(objs);
	return 0;
}

/* ---- tput: callbacks per second with P producers --------------------------------------------- */

struct tput_ctx {
	const struct cb_design *d;
	struct bench_start start;
	bool free_mode;
	size_t npool;
	/* Read by the producers in their loop: a cache line of its own. */
	int stop __attribute__((aligned(64)));
	char pad_[60];
};

struct tput_thread {
	struct tput_ctx *c;
	pthread_t th;
	int idx;
	struct cb_prod p;
	uint64_t calls, cpu_ns;
};

static void *tput_producer(void *arg)
{
	struct tput_thread *t = (struct tput_thread *)arg;
	const struct cb_design *d = t->c->d;

	pin_to(t->idx);
	d->thread_init();
	t->p.stop = &t->c->stop;
	if (!t->c->free_mode) {
		t->p.npool = t->c->npool;
		t->p.pool = (struct cb_obj *)bench_xalloc(t->p.npool * sizeof(struct cb_obj));
	}
	bench_start_wait(&t->c->start);
	uint64_t c0 = bench_thread_cpu_ns();

	t->calls = t->c->free_mode ? d->flood_free(&t->p) : d->flood(&t->p);
	t->cpu_ns = bench_thread_cpu_ns() - c0;
	d->thread_fini();
	return NULL;
}

static int cmd_tput(const struct cb_design *d, const char *as, int run, int argc, char **argv)
{
	int np = (int)bench_arg_u64(argc, argv, "--producers", 1);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 300);
	const char *cb = bench_arg_str(argc, argv, "--cb");
	static struct tput_ctx c;
	struct tput_thread *t;
	struct cb_engine_stats s0, s1;
	uint64_t calls = 0, stalls = 0;
	double cpu = 0;

	if (np < 1)
		usage();
	if (cb && strcmp(cb, "flag") && strcmp(cb, "free"))
		usage();
	c.d = d;
	c.free_mode = cb && strcmp(cb, "free") == 0;
	c.npool = bench_arg_u64(argc, argv, "--pool", 1u << 20);
	if (np > cpus.n)
		cpus.pin = false;
	t = (struct tput_thread *)calloc((size_t)np, sizeof(*t));
	if (!t || c.npool < 64)
		usage();
	d->thread_init();
	bench_start_init(&c.start, (unsigned int)np + 1);
	for (int i = 0; i < np; i++) {
		t[i].c = &c;
		t[i].idx = i;
		bench_thread_create(&t[i].th, tput_producer, &t[i], i, np);
	}
	engine_stats(d, &s0);
	bench_start_wait(&c.start);
	uint64_t t0 = bench_now_ns();
	double cs0 = bench_ctx_switches(), pc0 = proc_cpu_ns();

	bench_sleep_ms(ms);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < np; i++) {
		pthread_join(t[i].th, NULL);
		calls += t[i].calls;
		stalls += t[i].p.stalls;
		cpu += (double)t[i].cpu_ns;
	}
	uint64_t t_stop = bench_now_ns();

	d->barrier();
	uint64_t t1 = bench_now_ns();
	double cs1 = bench_ctx_switches(), pc1 = proc_cpu_ns();

	engine_stats(d, &s1);
	const char *b = c.free_mode ? "tput-free" : "tput";

	bench_csv_row(stdout, b, as, np, run, "mcb_per_s", (double)calls * 1e3 / (double)(t1 - t0),
		      "Mcb/s");
	bench_csv_row(stdout, b, as, np, run, "queue_mcb_per_s",
		      (double)calls * 1e3 / (double)(t_stop - t0), "Mcb/s");
	bench_csv_row(stdout, b, as, np, run, "producer_ns_cpu", cpu / (double)calls, "ns");
	/* CPU time of the whole process per callback (producers, workers, barrier): the figure
	 * other processes on a shared machine disturb least. */
	bench_csv_row(stdout, b, as, np, run, "process_ns_cpu", (pc1 - pc0) / (double)calls, "ns");
	bench_csv_row(stdout, b, as, np, run, "barrier_ms", (double)(t1 - t_stop) / 1e6, "ms");
	bench_csv_row(stdout, b, as, np, run, "calls", (double)calls, "count");
	bench_csv_row(stdout, b, as, np, run, "pool_stalls", (double)stalls, "count");
	bench_csv_row(stdout, b, as, np, run, "maxrss_mb", bench_maxrss_mb(), "MB");
	bench_csv_row(stdout, b, as, np, run, "ctxsw_per_kcb", (cs1 - cs0) * 1e3 / (double)calls,
		      "count");
	if (s1.have & CB_STATS_WORKER)
		bench_csv_row(stdout, b, as, np, run, "worker_ns_cpu",
			      (double)(s1.worker_cpu_ns - s0.worker_cpu_ns) / (double)calls, "ns");
	if (s1.have & CB_STATS_GP) {
		bench_csv_row(stdout, b, as, np, run, "hard_waits", (double)(s1.waits - s0.waits),
			      "count");
		bench_csv_row(stdout, b, as, np, run, "gp_per_kcb",
			      (double)(s1.grace_periods - s0.grace_periods) * 1e3 / (double)calls,
			      "count");
	}
	d->thread_fini();
	d->teardown();
	for (int i = 0; i < np; i++)
		free(t[i].p.pool);
	free(t);
	return 0;
}

/* ---- lat: enqueue-to-invoke latency of a lone callback --------------------------------------- */

struct load_ctx {
	const struct cb_design *d;
	struct cb_prod p;
	struct bench_start *start;
	uint64_t calls, ns;
	int stop __attribute__((aligned(64)));
	char pad_[60];
};

static void *load_producer(void *arg)
{
	struct load_ctx *l = (struct load_ctx *)arg;

	pin_to(1);
	l->d->thread_init();
	l->p.stop = &l->stop;
	bench_start_wait(l->start);
	uint64_t t0 = bench_now_ns();

	l->calls = l->d->flood(&l->p);
	l->ns = bench_now_ns() - t0;
	l->d->thread_fini();
	return NULL;
}

static struct cb_obj lone_obj __attribute__((aligned(64)));

static int cmd_lat(const struct cb_design *d, const char *as, int run, int argc, char **argv)
{
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 1000);
	uint64_t gap_us = bench_arg_u64(argc, argv, "--gap-us", 200);
	uint64_t max = bench_arg_u64(argc, argv, "--max", 100000);
	bool load = bench_arg_flag(argc, argv, "--load");
	const char *raw = bench_arg_str(argc, argv, "--raw");
	static struct load_ctx l;
	static struct bench_start start;
	pthread_t lth;
	uint64_t n = 0;

	if (max < 1)
		usage();
	cb_lat_ns = (uint64_t *)bench_xalloc(max * sizeof(*cb_lat_ns));
	if (load && cpus.n < 2)
		cpus.pin = false;
	pin_to(0);
	d->thread_init();
	bench_start_init(&start, load ? 2 : 1);
	if (load) {
		l.d = d;
		l.start = &start;
		l.p.npool = bench_arg_u64(argc, argv, "--pool", 1u << 20);
		l.p.pool = (struct cb_obj *)bench_xalloc(l.p.npool * sizeof(struct cb_obj));
		bench_thread_create(&lth, load_producer, &l, 0, 1);
	}
	bench_start_wait(&start);
	/* Warm-up: workers started, first grace periods; then the measured samples. */
	for (uint64_t warm = 0, t_end = 0; n < max;) {
		lone_obj.slot = (uint32_t)n;
		__atomic_store_n(&lone_obj.busy, 1u, __ATOMIC_RELAXED);
		lone_obj.t0 = bench_now_ns();
		d->call_lat_wake(&lone_obj);
		/* Acquire: pairs with the callback's release of busy (cb_done_lat). */
		while (__atomic_load_n(&lone_obj.busy, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &lone_obj.busy, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
		if (warm < 5) {
			if (++warm == 5)
				t_end = bench_now_ns() + ms * 1000000ull;
		} else {
			n++;
			if (bench_now_ns() >= t_end)
				break;
		}
		if (gap_us)
			bench_sleep_ns(gap_us * 1000);
	}
	double load_mcbps = 0;

	if (load) {
		__atomic_store_n(&l.stop, 1, __ATOMIC_RELAXED);
		pthread_join(lth, NULL);
		load_mcbps = (double)l.calls * 1e3 / (double)l.ns;
	}
	d->barrier();
	emit_lat("lat", as, load ? 1 : 0, run, cb_lat_ns, n, raw);
	if (load)
		bench_csv_row(stdout, "lat", as, 1, run, "load_mcb_per_s", load_mcbps, "Mcb/s");
	d->thread_fini();
	d->teardown();
	free(l.p.pool);
	free(cb_lat_ns);
	return 0;
}

/* ---- sweep: latency and CPU overhead against offered load ------------------------------------ */

struct sweep_ctx {
	const struct cb_design *d;
	uint64_t (*paced)(struct cb_prod *p);
	struct bench_start start;
	struct cb_prod p;
	uint64_t calls, cpu0, cpu1, t_stop;
	struct cb_engine_stats s0, s1;
	double proc0, proc1, reader0, reader1, main0, main1;
	pthread_t reader_th;
	bool has_reader;
	pid_t own[3]; /* the benchmark's own threads: main, producer, reader (0: none) */
	double wake0, wake1;
	uint64_t sections, reader_ns, reader_cpu_ns;
	int stop __attribute__((aligned(64)));
	char pad_[60];
	int stop_reader __attribute__((aligned(64)));
	char pad2_[60];
};

/* The producer loop with no call: --no-calls. */
#define CB_NO_CALL(o) cb_done_flag(o) /* released at once: the pool never waits */
CB_DEFINE_PACED(cb_paced_none, CB_NO_CALL, CB_NO_CALL)

/*
 * Wake-ups of the library's threads (call_rcu workers, grace-period threads): the voluntary
 * context switches of every thread of the process but the benchmark's own (main, producer,
 * reader), from /proc/self/task/<tid>/status. Each is a block (futex wait, timed wait) that a
 * wake-up ended: the figure Linux's lazy RCU is measured by. A thread created inside the window
 * counts from 0; one that exited in it is lost (none does here).
 */
static double lib_wakeups(const pid_t own[3])
{
	char path[64], line[128];
	double sum = 0;
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;

	if (!dir)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0 || tid == own[0] || tid == own[1] || tid == own[2])
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				sum += strtod(line + 24, NULL);
		fclose(f);
	}
	closedir(dir);
	return sum;
}

static void *sweep_reader(void *arg)
{
	struct sweep_ctx *c = (struct sweep_ctx *)arg;

	pin_to(1);
	c->own[2] = (pid_t)syscall(SYS_gettid);
	c->d->thread_init();
	bench_start_wait(&c->start);
	uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();

	c->sections = c->d->reader(&c->stop_reader);
	c->reader_ns = bench_now_ns() - t0;
	c->reader_cpu_ns = bench_thread_cpu_ns() - c0;
	c->d->thread_fini();
	return NULL;
}

static void *sweep_producer(void *arg)
{
	struct sweep_ctx *c = (struct sweep_ctx *)arg;

	pin_to(0);
	c->own[1] = (pid_t)syscall(SYS_gettid);
	c->d->thread_init();
	bench_start_wait(&c->start);
	/* The window of the CPU figures opens here and closes when the producer stops. */
	c->wake0 = lib_wakeups(c->own);
	engine_stats(c->d, &c->s0);
	c->proc0 = proc_cpu_ns();
	c->reader0 = c->has_reader ? thread_cpu_ns(c->reader_th) : 0;
	c->cpu0 = bench_thread_cpu_ns();
	c->p.t_start = bench_now_ns();
	c->calls = c->paced(&c->p);
	c->t_stop = bench_now_ns();
	c->cpu1 = bench_thread_cpu_ns();
	c->reader1 = c->has_reader ? thread_cpu_ns(c->reader_th) : 0;
	c->proc1 = proc_cpu_ns();
	engine_stats(c->d, &c->s1);
	c->wake1 = lib_wakeups(c->own);
	c->d->thread_fini();
	return NULL;
}

static int cmd_sweep(const struct cb_design *d, const char *as, int run, int argc, char **argv)
{
	uint64_t rate = bench_arg_u64(argc, argv, "--rate", 0);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 500);
	int readers = (int)bench_arg_u64(argc, argv, "--readers", 1);
	bool hurry = bench_arg_flag(argc, argv, "--hurry");
	bool no_calls = bench_arg_flag(argc, argv, "--no-calls");
	uint64_t max = bench_arg_u64(argc, argv, "--max", 20000);
	uint64_t tick_us = bench_arg_u64(argc, argv, "--tick-us", 1000);
	const char *raw = bench_arg_str(argc, argv, "--raw");
	static struct sweep_ctx c;
	pthread_t pth;
	char bench[64];

	if (rate < 1 || readers < 0 || readers > 1 || max < 1)
		usage();
	snprintf(bench, sizeof(bench), "sweep@%llu", (unsigned long long)rate);
	cb_lat_ns = (uint64_t *)bench_xalloc(max * sizeof(*cb_lat_ns));
	if (cpus.n < 2)
		cpus.pin = false;
	c.d = d;
	/* --no-calls: the same producer loop and pacing with no call at all, and the same reader:
	 * the baseline the cost of callbacks is measured against. --hurry: call_rcu_hurry(). */
	c.paced = no_calls ? cb_paced_none : hurry ? d->paced_hurry : d->paced;
	if (!c.paced) {
		fprintf(stderr, "callbacks_bench: design %s has no hurried call\n", d->name);
		return 2;
	}
	c.has_reader = readers == 1;
	c.own[0] = (pid_t)syscall(SYS_gettid);
	c.p.stop = &c.stop;
	c.p.rate = rate;
	c.p.tick_ns = tick_us * 1000;
	c.p.max_samples = (uint32_t)max;
	/* Pool: 200 ms of calls (the peer's latency is about 10 ms), 4096 to 2^20 objects. */
	uint64_t np = rate / 5;

	c.p.npool = np < 4096 ? 4096 : np > (1u << 20) ? (1u << 20) : np;
	c.p.pool = (struct cb_obj *)bench_xalloc(c.p.npool * sizeof(struct cb_obj));
	uint64_t expect = rate * ms / 1000;

	c.p.sample_every = expect / max + 1;
	d->thread_init();
	bench_start_init(&c.start, c.has_reader ? 3 : 2);
	if (c.has_reader)
		bench_thread_create(&c.reader_th, sweep_reader, &c, 0, 2);
	bench_thread_create(&pth, sweep_producer, &c, 1, 2);
	double main0 = bench_thread_cpu_ns();

	bench_start_wait(&c.start);
	bench_sleep_ms(ms);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	pthread_join(pth, NULL);
	double main1 = bench_thread_cpu_ns();

	d->barrier();
	__atomic_store_n(&c.stop_reader, 1, __ATOMIC_RELAXED);
	if (c.has_reader)
		pthread_join(c.reader_th, NULL);

	double wall = (double)(c.t_stop - c.p.t_start);
	double calls = (double)c.calls;
	double proc = c.proc1 - c.proc0, prod = (double)(c.cpu1 - c.cpu0);
	double rdr = c.reader1 - c.reader0;
	/* The engine's CPU: its worker threads' clocks (grace's own counter; liburcu's call_rcu
	 * threads). The rest of the process beyond producer, reader, driver and workers is a
	 * cross-check that should stay near 0 (the process and thread clocks are read a few
	 * microseconds apart). */
	double workers = (double)(c.s1.worker_cpu_ns - c.s0.worker_cpu_ns);
	double rest = proc - prod - rdr - (main1 - main0) - workers;

	bench_csv_row(stdout, bench, as, readers, run, "offered_cb_per_s", (double)rate, "cb/s");
	bench_csv_row(stdout, bench, as, readers, run, "achieved_cb_per_s", calls * 1e9 / wall,
		      "cb/s");
	if (!no_calls)
		emit_lat(bench, as, readers, run, cb_lat_ns, c.p.nsamples, raw);
	/* What the process spent per call beyond the reader and the driver thread: compared with
	 * the same run under --no-calls (the pacing loop alone), it is what the callbacks cost
	 * the whole process, the queuing thread's call_rcu included (report.py subtracts). */
	bench_csv_row(stdout, bench, as, readers, run, "nonreader_ns_per_cb",
		      (proc - rdr - (main1 - main0)) / calls, "ns");
	if (c.s1.have & CB_STATS_WORKER) {
		bench_csv_row(stdout, bench, as, readers, run, "engine_ns_per_cb", workers / calls,
			      "ns");
		bench_csv_row(stdout, bench, as, readers, run, "engine_cpu_pct",
			      workers * 100 / wall, "%");
		bench_csv_row(stdout, bench, as, readers, run, "rest_ns_per_cb", rest / calls,
			      "ns");
	}
	bench_csv_row(stdout, bench, as, readers, run, "producer_ns_per_cb", prod / calls, "ns");
	bench_csv_row(stdout, bench, as, readers, run, "process_cpu_pct", proc * 100 / wall, "%");
	if (c.has_reader) {
		bench_csv_row(stdout, bench, as, readers, run, "reader_mops",
			      (double)c.sections * 1e3 / (double)c.reader_ns, "Mops/s");
		/* The reader's own CPU time per section (its section, its work outside, and what
		 * grace periods cost it: IPIs, wake-ups): steadier than sections per second, which
		 * also measure how much CPU the scheduler granted. */
		bench_csv_row(stdout, bench, as, readers, run, "reader_ns_per_section",
			      (double)c.reader_cpu_ns / (double)c.sections, "ns");
	}
	if (c.s1.have & CB_STATS_GP) {
		double gps = (double)(c.s1.grace_periods - c.s0.grace_periods);

		bench_csv_row(stdout, bench, as, readers, run, "gp_per_kcb", gps * 1e3 / calls,
			      "count");
		bench_csv_row(stdout, bench, as, readers, run, "gp_per_s", gps * 1e9 / wall, "1/s");
		bench_csv_row(stdout, bench, as, readers, run, "hard_waits",
			      (double)(c.s1.waits - c.s0.waits), "count");
	}
	if (c.wake0 >= 0 && c.wake1 >= c.wake0)
		bench_csv_row(stdout, bench, as, readers, run, "lib_wakeups_per_s",
			      (c.wake1 - c.wake0) * 1e9 / wall, "1/s");
	bench_csv_row(stdout, bench, as, readers, run, "pool_stalls", (double)c.p.stalls, "count");
	d->thread_fini();
	d->teardown();
	free(c.p.pool);
	free(cb_lat_ns);
	return 0;
}

/* ---- floor ---- */

static int floor_stop;

static void *floor_spinner(void *arg)
{
	(void)arg;
	pin_to(1);
	while (!grace_load_relaxed(&floor_stop))
		grace_cpu_relax();
	return NULL;
}

static int cmd_floor(int run, int argc, char **argv)
{
	static const unsigned int wake_us[] = { 50, 200, 1000, 2000, 5000 };
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 300);
	pthread_t sp;
	int word = 0;
	char metric[32];

	pin_to(0);
	if (pthread_create(&sp, NULL, floor_spinner, NULL) != 0) {
		fprintf(stderr, "callbacks_bench floor: cannot create a thread\n");
		return 1;
	}
	bench_sleep_ns(20 * 1000000ull); /* the spinner reaches its CPU */
	for (size_t i = 0; i < sizeof(wake_us) / sizeof(wake_us[0]); i++) {
		uint64_t n = ms * 1000 / wake_us[i];
		if (n < 20)
			n = 20;
		uint64_t c0 = bench_thread_cpu_ns();
		for (uint64_t k = 0; k < n; k++) {
			struct timespec ts = { 0, (long)wake_us[i] * 1000 };
			/* *word stays 0: every wait runs out (ETIMEDOUT) and the thread wakes. */
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		}
		snprintf(metric, sizeof(metric), "wake_cpu_ns@%u", wake_us[i]);
		bench_csv_row(stdout, "floor", "machine", 2, run, metric,
			      (double)(bench_thread_cpu_ns() - c0) / (double)n, "ns");
	}
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0) {
		uint64_t n = 0, t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
		while (bench_now_ns() - t0 < ms * 1000000ull / 4) {
			syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
			n++;
		}
		bench_csv_row(stdout, "floor", "machine", 2, run, "membarrier_cpu_ns",
			      (double)(bench_thread_cpu_ns() - c0) / (double)n, "ns");
	} else {
		fprintf(stderr, "callbacks_bench floor: no membarrier(PRIVATE_EXPEDITED): %s\n",
			strerror(errno));
	}
	grace_store_relaxed(&floor_stop, 1);
	pthread_join(sp, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const struct cb_design *d = NULL;
	const char *name, *as, *pol;
	enum cb_policy policy = CB_POLICY_DEFAULT;

	if (argc < 2)
		usage();
	bench_cpus_init(&cpus);
	/* Timer slack 1 ns: the paced producer and the latency loop sleep to the microsecond. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NDESIGNS; i++)
			printf("%s\t%s\t%s\n", designs[i]->name, designs[i]->enqueue_symbol,
			       designs[i]->label);
		return 0;
	}
	if (strcmp(argv[1], "floor") == 0) {
		if (bench_arg_flag(argc, argv, "--header"))
			bench_csv_header(stdout);
		return cmd_floor((int)bench_arg_u64(argc, argv, "--run", 0), argc, argv);
	}
	name = bench_arg_str(argc, argv, "--design");
	if (!name)
		usage();
	for (size_t i = 0; i < NDESIGNS; i++)
		if (strcmp(designs[i]->name, name) == 0)
			d = designs[i];
	if (!d) {
		fprintf(stderr, "callbacks_bench: unknown design '%s' (see: %s list)\n", name,
			argv[0]);
		return 2;
	}
	as = bench_arg_str(argc, argv, "--as");
	if (!as)
		as = d->name;
	pol = bench_arg_str(argc, argv, "--policy");
	if (pol && strcmp(pol, "poll") == 0)
		policy = CB_POLICY_POLL;
	else if (pol && strcmp(pol, "batch") == 0)
		policy = CB_POLICY_BATCH;
	else if (pol && strcmp(pol, "adaptive") == 0)
		policy = CB_POLICY_ADAPTIVE;
	else if (pol && strcmp(pol, "lazy") == 0)
		policy = CB_POLICY_LAZY;
	else if (pol && strcmp(pol, "default") != 0)
		usage();
	struct cb_setup cs = {
		.policy = policy,
		.period_us = (unsigned int)bench_arg_u64(argc, argv, "--period-us", 10000),
		.soft = (size_t)bench_arg_u64(argc, argv, "--soft", 0),
		.hard = (size_t)bench_arg_u64(argc, argv, "--hard", 0),
	};

	if (cs.hard && !cs.soft)
		usage();
	if (cs.soft && !cs.hard)
		cs.hard = 10 * cs.soft;
	if (d->setup(&cs)) {
		fprintf(stderr, "callbacks_bench: design %s has no policy '%s'%s\n", d->name, pol,
			cs.soft ? " or no callback limits" : "");
		return 2;
	}
	cpus.pin = !bench_arg_flag(argc, argv, "--no-pin");
	int run = (int)bench_arg_u64(argc, argv, "--run", 0);

	if (bench_arg_flag(argc, argv, "--header"))
		bench_csv_header(stdout);
	if (strcmp(argv[1], "enqueue") == 0)
		return cmd_enqueue(d, as, run, argc, argv);
	if (strcmp(argv[1], "count") == 0)
		return cmd_count(d, as, run, argc, argv);
	if (strcmp(argv[1], "tput") == 0)
		return cmd_tput(d, as, run, argc, argv);
	if (strcmp(argv[1], "lat") == 0)
		return cmd_lat(d, as, run, argc, argv);
	if (strcmp(argv[1], "sweep") == 0)
		return cmd_sweep(d, as, run, argc, argv);
	usage();
	return 2;
}
