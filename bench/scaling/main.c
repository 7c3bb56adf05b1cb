/* SPDX-License-Identifier: MIT */
/*
 * scalebench: what the scaling family measures itself (bench/scaling/run.sh also runs the
 * read-side, hash-table, callback and semop benchmarks at every thread count).
 *
 *   scalebench list
 *       designs, one per line: name, label
 *   scalebench sweep --design D --threads N [--samples S] [--budget-s B] [--run K] [--raw FILE]
 *       The registered-thread sweep: N threads each run one read-side section (which registers
 *       them; QSBR designs then go offline) and sleep; the main thread, registered nowhere,
 *       times S back-to-back synchronize calls (after 20 untimed ones). Rows: p50_us, p90_us,
 *       p99_us, max_us, mean_us, samples, and setup_ms (creating and registering the N
 *       threads); --raw appends every sample (us) for percentiles pooled over runs.
 *   scalebench lifecycle --design D [--iters N] [--budget-s B] [--run K] [--raw FILE]
 *       The cost of a short-lived thread: create it, let it run its first read-side section
 *       (registration included) and unregister, join it; N times. Rows as sweep (in us);
 *       design none is the bare thread.
 *   scalebench memory --design D --threads N [--run K]
 *       Memory per registered thread: N threads are created and sleep unregistered; the heap
 *       in use (mallinfo2) and the resident set are read; the threads then register (one
 *       section each) and sleep again; read again. Rows: heap_bytes_per_thread,
 *       rss_bytes_per_thread, and tls_bytes (the library's static TLS block, which every
 *       thread carries whether it registers or not).
 *   scalebench membarrier --spinners K [--sleepers M] [--samples S] [--budget-s B] [--run K]
 *                         [--no-pin] [--raw FILE]
 *       The cost of one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) against the number of CPUs
 *       running threads of the process: K threads spin, each pinned to its own CPU (the i-th
 *       spinner on the (i+1)-th CPU of the affinity mask), M more threads of the process sleep,
 *       and the main thread, pinned to the first CPU, times S calls. When K + 1 exceeds the
 *       CPUs, nothing is pinned (oversubscribed: every CPU runs a thread of the process).
 *       Rows: the latency rows, busy_cpus (CPUs running a thread of the process), pinned.
 *   --header prints the CSV header first. Rows: bench,design,threads,run,metric,value,unit.
 *
 * Bad input: a thread count the machine cannot create is reported (a message on stderr and a
 * row "created" with the count it reached, then "failed" = 1), not crashed on; a run that would
 * pass --budget-s stops there, says so on stderr and writes "stopped_at_budget" = 1 with the
 * samples it took.
 */
#include <link.h>
#include <linux/membarrier.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scaling.h"

static const struct sc_design *const designs[] = {
	&sc_design_none,      &sc_design_grace,     &sc_design_grace_qsbr, &sc_design_grace_nopark,
#ifdef SC_HAVE_URCU
	&sc_design_urcu_memb, &sc_design_urcu_qsbr,
#endif
};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

/* Idle threads do nothing but wait: a small stack keeps thousands of them cheap. */
#define SC_IDLE_STACK (128u << 10)
#define SC_WARMUP 20

static struct bench_cpus cpus;

static void usage(void)
{
	fprintf(stderr,
		"usage: scalebench list\n"
		"       scalebench sweep      --design D --threads N [--samples S] [--budget-s B]\n"
		"       scalebench lifecycle  --design D [--iters N] [--budget-s B]\n"
		"       scalebench memory     --design D --threads N\n"
		"       scalebench membarrier --spinners K [--sleepers M] [--samples S] [--no-pin]\n"
		"       common: [--run K] [--raw FILE] [--header]\n");
	exit(2);
}

/* ---- a crowd of idle threads ---------------------------------------------------------------- */

/*
 * Phases of a crowd, in crowd.phase: 0 created (unregistered, asleep), 1 register and sleep,
 * 2 unregister and exit. Each thread counts itself in `arrived` after each step; the main thread
 * waits for the count, then moves the phase on (bench_flag_set wakes the sleepers).
 */
struct crowd {
	const struct sc_design *d;
	int phase;
	int arrived;
	int n;       /* threads asked for */
	int created; /* threads the machine created */
	int err;     /* -errno of the first failed pthread_create, or 0 */
	bool lazy;   /* threads register in phase 1 (memory), not at once (sweep) */
	pthread_t *th;
};

static void *crowd_thread(void *arg)
{
	struct crowd *c = (struct crowd *)arg;

	if (c->lazy) {
		grace_fetch_add(&c->arrived, 1, __ATOMIC_RELEASE); /* pairs with crowd_wait() */
		bench_flag_wait_while(&c->phase, 0);
	}
	c->d->reader_enter();
	/* Release: the registration is complete before the main thread counts this thread (pairs
	 * with the acquire load in crowd_wait()). */
	grace_fetch_add(&c->arrived, 1, __ATOMIC_RELEASE);
	bench_flag_wait_while(&c->phase, 1);
	c->d->reader_exit();
	return NULL;
}

/* Wait (sleeping 1 ms at a time) until `want` arrivals were counted. */
static void crowd_wait(struct crowd *c, int want)
{
	while (grace_load_acquire(&c->arrived) < want)
		bench_sleep_ns(1000000);
}

/* Start n threads; on failure keep what was created, record the error, and say so. */
static void crowd_start(struct crowd *c, const struct sc_design *d, int n, bool lazy)
{
	memset(c, 0, sizeof(*c));
	c->d = d;
	c->n = n;
	c->lazy = lazy;
	c->phase = lazy ? 0 : 1;
	c->th = (pthread_t *)bench_xalloc((size_t)n * sizeof(*c->th));
	for (int i = 0; i < n; i++) {
		int e = bench_thread_try_create(&c->th[i], SC_IDLE_STACK, crowd_thread, c);

		if (e) {
			c->err = e;
			fprintf(stderr,
				"scalebench: the machine created %d of the %d threads asked "
				"for: %s\n",
				i, n, strerror(-e));
			break;
		}
		c->created++;
	}
}

static void crowd_finish(struct crowd *c)
{
	if (grace_load_relaxed(&c->phase) == 0) /* lazy crowd never registered: register now */
		bench_flag_set(&c->phase, 1);
	bench_flag_set(&c->phase, 2);
	for (int i = 0; i < c->created; i++)
		pthread_join(c->th[i], NULL);
	free(c->th);
}

/* The rows that say a crowd could not be created; returns true when that is the case. */
static bool crowd_failed(struct crowd *c, const char *bench, const char *as, int run)
{
	if (!c->err)
		return false;
	bench_csv_row(stdout, bench, as, c->n, run, "created", c->created, "count");
	bench_csv_row(stdout, bench, as, c->n, run, "failed", 1, "bool");
	return true;
}

/* ---- timing a call S times within a budget -------------------------------------------------- */

/*
 * Time fn S times (after `warm` untimed calls), into lat[] in microseconds; stops early when the
 * budget (ns from now, 0: none) is spent. Returns the samples taken; *stopped says whether the
 * budget cut the run short.
 */
static size_t time_calls(void (*fn)(void *), void *arg, size_t s, int warm, uint64_t budget_ns,
			 double *lat, bool *stopped)
{
	uint64_t t_end = budget_ns ? bench_now_ns() + budget_ns : UINT64_MAX;
	size_t n = 0;

	*stopped = false;
	for (int i = 0; i < warm; i++)
		fn(arg);
	while (n < s) {
		uint64_t t0 = bench_now_ns();

		fn(arg);
		uint64_t t1 = bench_now_ns();

		lat[n++] = (double)(t1 - t0) / 1000.0;
		if (t1 >= t_end && n < s) {
			*stopped = true;
			break;
		}
	}
	return n;
}

static void emit_samples(const char *bench, const char *as, int threads, int run, double *lat,
			 size_t n, size_t asked, bool stopped, const char *raw)
{
	if (stopped)
		fprintf(stderr,
			"scalebench: %s %s %d: stopped at its time budget after %zu of %zu "
			"samples\n",
			bench, as, threads, n, asked);
	if (raw && n)
		bench_append_samples(raw, lat, n);
	bench_csv_latency(stdout, bench, as, threads, run, lat, n);
	bench_csv_row(stdout, bench, as, threads, run, "stopped_at_budget", stopped ? 1 : 0,
		      "bool");
}

static uint64_t budget_ns_of(int argc, char **argv)
{
	return bench_arg_u64(argc, argv, "--budget-s", 0) * 1000000000ull;
}

/* ---- sweep: synchronize with N registered idle threads -------------------------------------- */

static void call_sync(void *arg)
{
	((const struct sc_design *)arg)->synchronize();
}

static int cmd_sweep(const struct sc_design *d, int run, int argc, char **argv)
{
	int n = (int)bench_arg_u64(argc, argv, "--threads", 1);
	size_t s = bench_arg_u64(argc, argv, "--samples", 2000);
	uint64_t budget = budget_ns_of(argc, argv);
	const char *raw = bench_arg_str(argc, argv, "--raw");
	struct crowd c;
	double *lat;
	bool stopped;

	if (!d->synchronize || n < 0 || s < 1)
		usage();
	lat = (double *)bench_xalloc(s * sizeof(*lat));
	uint64_t t0 = bench_now_ns();

	crowd_start(&c, d, n, false);
	crowd_wait(&c, c.created);
	uint64_t setup = bench_now_ns() - t0;

	if (!crowd_failed(&c, "sweep", d->name, run)) {
		size_t got = time_calls(call_sync, (void *)d, s, SC_WARMUP, budget, lat, &stopped);

		emit_samples("sweep", d->name, n, run, lat, got, s, stopped, raw);
		bench_csv_row(stdout, "sweep", d->name, n, run, "setup_ms", (double)setup / 1e6,
			      "ms");
	}
	crowd_finish(&c);
	free(lat);
	return 0;
}

/* ---- lifecycle: create + first read + exit --------------------------------------------------- */

static void *lifecycle_thread(void *arg)
{
	const struct sc_design *d = (const struct sc_design *)arg;

	d->reader_enter();
	d->reader_exit();
	return NULL;
}

static int lifecycle_err;

static void one_lifecycle(void *arg)
{
	pthread_t th;
	int e = bench_thread_try_create(&th, 0, lifecycle_thread, arg);

	if (e) {
		lifecycle_err = e;
		return;
	}
	pthread_join(th, NULL);
}

static int cmd_lifecycle(const struct sc_design *d, int run, int argc, char **argv)
{
	size_t iters = bench_arg_u64(argc, argv, "--iters", 2000);
	uint64_t budget = budget_ns_of(argc, argv);
	const char *raw = bench_arg_str(argc, argv, "--raw");
	double *lat;
	bool stopped;

	if (iters < 1)
		usage();
	lat = (double *)bench_xalloc(iters * sizeof(*lat));
	size_t got = time_calls(one_lifecycle, (void *)d, iters, 10, budget, lat, &stopped);

	if (lifecycle_err) {
		fprintf(stderr, "scalebench: lifecycle: could not create a thread: %s\n",
			strerror(-lifecycle_err));
		bench_csv_row(stdout, "lifecycle", d->name, 1, run, "failed", 1, "bool");
	} else {
		emit_samples("lifecycle", d->name, 1, run, lat, got, iters, stopped, raw);
	}
	free(lat);
	return 0;
}

/* ---- memory per registered thread ------------------------------------------------------------ */

static uint64_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

struct tls_sum {
	const char *lib;
	uint64_t bytes;
};

static int tls_of_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct tls_sum *t = (struct tls_sum *)arg;

	if (!info->dlpi_name || !strstr(info->dlpi_name, t->lib))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			t->bytes += info->dlpi_phdr[i].p_memsz;
	return 0;
}

static int cmd_memory(const struct sc_design *d, int run, int argc, char **argv)
{
	int n = (int)bench_arg_u64(argc, argv, "--threads", 256);
	struct tls_sum tls = { d->tls_lib, 0 };
	struct crowd c;

	if (n < 1)
		usage();
	if (d->tls_lib)
		dl_iterate_phdr(tls_of_object, &tls);
	crowd_start(&c, d, n, true);
	if (!crowd_failed(&c, "memory", d->name, run)) {
		crowd_wait(&c, n); /* every thread created and asleep, unregistered */
		uint64_t heap0 = heap_in_use(), rss0 = bench_rss_bytes();

		bench_flag_set(&c.phase, 1);
		crowd_wait(&c, 2 * n); /* every thread registered and asleep again */
		uint64_t heap1 = heap_in_use(), rss1 = bench_rss_bytes();

		bench_csv_row(stdout, "memory", d->name, n, run, "heap_bytes_per_thread",
			      ((double)heap1 - (double)heap0) / n, "B");
		bench_csv_row(stdout, "memory", d->name, n, run, "rss_bytes_per_thread",
			      ((double)rss1 - (double)rss0) / n, "B");
		bench_csv_row(stdout, "memory", d->name, n, run, "tls_bytes", (double)tls.bytes,
			      "B");
	}
	crowd_finish(&c);
	return 0;
}

/* ---- membarrier against the CPUs running threads of the process ------------------------------ */

/* Relaxed accesses only: neither flag publishes data. `running` counts spinners that reached
 * their CPU; `stop` ends them. */
struct spin_ctx {
	int stop;
	int running;
};

struct spin_thread {
	struct spin_ctx *s;
	int idx;
	pthread_t th;
};

static void *spin_main(void *arg)
{
	struct spin_thread *t = (struct spin_thread *)arg;

	bench_cpus_pin(&cpus, 1 + t->idx);
	grace_fetch_add(&t->s->running, 1, __ATOMIC_RELAXED);
	/* Spin on this CPU (no system call, no sleep) until told to stop: the CPU runs a thread
	 * of the process, so an expedited membarrier must interrupt it. */
	while (!grace_load_relaxed(&t->s->stop))
		grace_cpu_relax();
	return NULL;
}

static void *sleeper_main(void *arg)
{
	bench_flag_wait_while((int *)arg, 0);
	return NULL;
}

static void call_membarrier(void *arg)
{
	(void)arg;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		bench_fatal("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): %s", strerror(errno));
}

static int cmd_membarrier(int run, int argc, char **argv)
{
	int k = (int)bench_arg_u64(argc, argv, "--spinners", 0);
	int m = (int)bench_arg_u64(argc, argv, "--sleepers", 0);
	size_t s = bench_arg_u64(argc, argv, "--samples", 2000);
	uint64_t budget = budget_ns_of(argc, argv);
	const char *raw = bench_arg_str(argc, argv, "--raw");
	const char *bench = m ? "membarrier-sleepers" : "membarrier";
	int threads = m ? m : k + 1; /* x axis: CPUs running the process, or sleeping threads */
	static struct spin_ctx sc;
	static int wake;
	struct spin_thread *sp;
	pthread_t *sl;
	double *lat;
	bool stopped;
	int made_k = 0, made_m = 0, err = 0;

	if (k < 0 || m < 0 || s < 1)
		usage();
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)) {
		fprintf(stderr, "scalebench: membarrier private expedited is not available: %s\n",
			strerror(errno));
		bench_csv_row(stdout, bench, "private-expedited", threads, run, "unsupported", 1,
			      "bool");
		return 0;
	}
	cpus.pin = !bench_arg_flag(argc, argv, "--no-pin") && k + 1 <= cpus.n;
	bench_cpus_pin(&cpus, 0);
	sp = (struct spin_thread *)bench_xalloc(((size_t)k + 1) * sizeof(*sp));
	sl = (pthread_t *)bench_xalloc(((size_t)m + 1) * sizeof(*sl));
	lat = (double *)bench_xalloc(s * sizeof(*lat));
	for (; made_k < k && !err; made_k++) {
		sp[made_k].s = &sc;
		sp[made_k].idx = made_k;
		err = bench_thread_try_create(&sp[made_k].th, SC_IDLE_STACK, spin_main,
					      &sp[made_k]);
		if (err)
			break;
	}
	for (; made_m < m && !err; made_m++)
		if ((err = bench_thread_try_create(&sl[made_m], SC_IDLE_STACK, sleeper_main,
						   &wake)))
			break;
	if (err) {
		fprintf(stderr,
			"scalebench: membarrier: the machine created %d of %d threads: %s\n",
			made_k + made_m, k + m, strerror(-err));
		bench_csv_row(stdout, bench, "private-expedited", threads, run, "created",
			      made_k + made_m, "count");
		bench_csv_row(stdout, bench, "private-expedited", threads, run, "failed", 1,
			      "bool");
	} else {
		while (grace_load_relaxed(&sc.running) < k)
			bench_sleep_ns(100000);
		bench_sleep_ns(10000000); /* let the sleepers reach their futex */
		size_t got = time_calls(call_membarrier, NULL, s, SC_WARMUP, budget, lat, &stopped);

		emit_samples(bench, "private-expedited", threads, run, lat, got, s, stopped, raw);
		bench_csv_row(stdout, bench, "private-expedited", threads, run, "busy_cpus",
			      k + 1 < cpus.n ? k + 1 : cpus.n, "count");
		bench_csv_row(stdout, bench, "private-expedited", threads, run, "pinned",
			      cpus.pin && !cpus.pin_failed, "bool");
	}
	grace_store_relaxed(&sc.stop, 1);
	for (int i = 0; i < made_k; i++)
		pthread_join(sp[i].th, NULL);
	bench_flag_set(&wake, 1);
	for (int i = 0; i < made_m; i++)
		pthread_join(sl[i], NULL);
	free(sp);
	free(sl);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	const struct sc_design *d = NULL;
	int run;

	if (argc < 2)
		usage();
	bench_cpus_init(&cpus);
	if (strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NDESIGNS; i++)
			printf("%s\t%s\n", designs[i]->name, designs[i]->label);
		return 0;
	}
	run = (int)bench_arg_u64(argc, argv, "--run", 0);
	if (bench_arg_flag(argc, argv, "--header"))
		bench_csv_header(stdout);
	if (strcmp(argv[1], "membarrier") == 0)
		return cmd_membarrier(run, argc, argv);
	d = BENCH_DESIGN_ARG(designs, NDESIGNS, argc, argv);
	if (d == &sc_design_grace_nopark) {
		const char *np = getenv("GRACE_NO_PARK");
		if (!np || strcmp(np, "1") != 0) {
			fprintf(stderr,
				"scalebench: design grace-nopark needs GRACE_NO_PARK=1 in the "
				"environment (the library reads it at start-up)\n");
			return 2;
		}
	}
	if (strcmp(argv[1], "sweep") == 0)
		return cmd_sweep(d, run, argc, argv);
	if (strcmp(argv[1], "lifecycle") == 0)
		return cmd_lifecycle(d, run, argc, argv);
	if (strcmp(argv[1], "memory") == 0)
		return cmd_memory(d, run, argc, argv);
	usage();
	return 2;
}
