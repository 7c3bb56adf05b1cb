/* SPDX-License-Identifier: MIT */
/*
 * readside_bench: read-side lock+unlock cost and synchronize latency, one design per run.
 *
 *   readside_bench list
 *       designs, one per line: name, measured function, has-update-side, label
 *   readside_bench pair  --design D [--threads T] [--ms M] [--run K] [--no-pin] [--as NAME] [--x8]
 *       T threads run lock+unlock pairs with an empty body for M ms; prints ns per pair (wall
 *       clock and thread CPU time, mean over threads) as CSV rows; --x8 then measures again
 *       with eight pairs per loop iteration (rows "pair_x8")
 *   readside_bench count --design D [--iters N]
 *       N pairs in the calling thread, nothing else: run it under
 *       valgrind --tool=callgrind --toggle-collect=<measured function> for instructions per pair
 *   readside_bench sync  --design D [--readers R] [--ms M] [--max N] [--run K] [--no-pin]
 *       back-to-back synchronize calls for M ms (at most N) while R reader threads run
 *       back-to-back short sections; prints latency percentiles in microseconds; --raw FILE
 *       appends every sample (us, one per line) to FILE, for percentiles pooled over runs
 *   --header prints the CSV header first. Rows: bench,design,threads,run,metric,value,unit.
 *
 * Pinning: thread i runs on the i-th CPU of the affinity mask (updater on the first, readers
 * after it) unless there are more threads than CPUs, or --no-pin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readside.h"

static const struct rs_design *const designs[] = {
	&rs_design_empty,       &rs_design_grace,
	&rs_design_grace_qsbr,  &rs_design_grace_qsbr_qs,
#ifdef RS_HAVE_URCU
	&rs_design_urcu_memb,   &rs_design_urcu_memb_so,
	&rs_design_urcu_qsbr,   &rs_design_urcu_qsbr_qs,
#endif
#ifdef RS_HAVE_URCU_SIGNAL
	&rs_design_urcu_signal,
#endif
	&rs_design_rwlock,
};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

/* The CPUs this process may use, read once at start-up before any thread pins itself; each
 * command sets cpus.pin (off with --no-pin or more threads than CPUs). */
static struct bench_cpus cpus;

static void usage(void)
{
	fprintf(stderr,
		"usage: readside_bench list\n"
		"       readside_bench pair  --design D [--threads T] [--ms M] [--run K] [--no-pin]\n"
		"                            [--as NAME] [--x8]\n"
		"       readside_bench count --design D [--iters N]\n"
		"       readside_bench sync  --design D [--readers R] [--ms M] [--max N] [--run K] [--no-pin]\n"
		"                            [--as NAME] [--raw FILE]\n"
		"       (--header: print the CSV header first)\n");
	exit(2);
}

/* ---- pair: ns per lock+unlock pair ---------------------------------------------------------- */

struct pair_ctx {
	const struct rs_design *d;
	uint64_t (*loop)(uint64_t n); /* d->loop or d->loop8 */
	struct bench_start start;
	/* Read by the measuring threads in their loop: a cache line of its own, so no write to a
	 * neighbour (the updater's stack, the start line) disturbs them. */
	int stop __attribute__((aligned(64)));
	char pad_[60];
};

struct pair_thread {
	struct pair_ctx *c;
	pthread_t th;
	int idx;
	uint64_t pairs, wall_ns, cpu_ns;
};

static void *pair_worker(void *arg)
{
	struct pair_thread *t = (struct pair_thread *)arg;
	const struct rs_design *d = t->c->d;
	uint64_t chunk = 256, n = 0, w0, c0;

	bench_cpus_pin(&cpus, t->idx);
	d->thread_init();
	/* Warm up and size a chunk to about 1 ms, so the stop flag is checked (outside the
	 * measured function) about once a millisecond. */
	for (;;) {
		uint64_t s = bench_now_ns();
		t->c->loop(chunk);
		if (bench_now_ns() - s >= 1000000 || chunk >= (1ull << 32))
			break;
		chunk *= 2;
	}
	bench_start_wait(&t->c->start);
	w0 = bench_now_ns();
	c0 = bench_thread_cpu_ns();
	do
		n += t->c->loop(chunk);
	while (!__atomic_load_n(&t->c->stop, __ATOMIC_RELAXED));
	t->cpu_ns = bench_thread_cpu_ns() - c0;
	t->wall_ns = bench_now_ns() - w0;
	t->pairs = n;
	d->thread_fini();
	return NULL;
}

/* One measurement: nthreads threads run c->loop for ms milliseconds; one set of CSV rows. */
static void pair_round(struct pair_ctx *c, const char *bench, const char *as, int nthreads,
		       uint64_t ms, int run)
{
	struct pair_thread *t;
	double wall = 0, cpu = 0;
	uint64_t pairs = 0;

	t = (struct pair_thread *)bench_xalloc((size_t)nthreads * sizeof(*t));
	c->stop = 0;
	bench_start_init(&c->start, (unsigned int)nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		t[i].c = c;
		t[i].idx = i;
		bench_thread_create(&t[i].th, pair_worker, &t[i], i, nthreads);
	}
	bench_start_wait(&c->start);
	bench_sleep_ms(ms);
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i].th, NULL);
		wall += (double)t[i].wall_ns / (double)t[i].pairs;
		cpu += (double)t[i].cpu_ns / (double)t[i].pairs;
		pairs += t[i].pairs;
	}
	bench_csv_row(stdout, bench, as, nthreads, run, "ns_wall", wall / nthreads, "ns");
	bench_csv_row(stdout, bench, as, nthreads, run, "ns_cpu", cpu / nthreads, "ns");
	bench_csv_row(stdout, bench, as, nthreads, run, "pairs", (double)pairs, "count");
	free(t);
}

static int cmd_pair(const struct rs_design *d, const char *as, int argc, char **argv)
{
	int nthreads = (int)bench_arg_u64(argc, argv, "--threads", 1);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 100);
	int run = (int)bench_arg_u64(argc, argv, "--run", 0);
	static struct pair_ctx c;

	if (nthreads < 1)
		usage();
	c.d = d;
	cpus.pin = !bench_arg_flag(argc, argv, "--no-pin") && nthreads <= cpus.n;
	c.loop = d->loop;
	pair_round(&c, "pair", as, nthreads, ms, run);
	if (bench_arg_flag(argc, argv, "--x8")) {
		c.loop = d->loop8;
		pair_round(&c, "pair_x8", as, nthreads, ms, run);
	}
	return 0;
}

/* ---- count: a fixed number of pairs in this thread (for callgrind) -------------------------- */

static int cmd_count(const struct rs_design *d, const char *as, int argc, char **argv)
{
	uint64_t iters = bench_arg_u64(argc, argv, "--iters", 1000000);

	d->thread_init();
	uint64_t n = d->loop(iters);
	d->thread_fini();
	bench_csv_row(stdout, "count", as, 1, 0, "pairs", (double)n, "count");
	return 0;
}

/* ---- sync: synchronize latency with R busy readers ------------------------------------------ */

struct sync_ctx {
	const struct rs_design *d;
	struct bench_start start;
	/* Read by the measuring threads in their loop: a cache line of its own, so no write to a
	 * neighbour (the updater's stack, the start line) disturbs them. */
	int stop __attribute__((aligned(64)));
	char pad_[60];
};

struct sync_reader {
	struct sync_ctx *c;
	pthread_t th;
	int idx;
	uint64_t sections, ns;
};

static void *sync_reader_fn(void *arg)
{
	struct sync_reader *r = (struct sync_reader *)arg;
	const struct rs_design *d = r->c->d;

	bench_cpus_pin(&cpus, 1 + r->idx);
	d->thread_init();
	bench_start_wait(&r->c->start);
	uint64_t t0 = bench_now_ns();
	r->sections = d->reader(&r->c->stop);
	r->ns = bench_now_ns() - t0;
	d->thread_fini();
	return NULL;
}

static int cmd_sync(const struct rs_design *d, const char *as, int argc, char **argv)
{
	int nreaders = (int)bench_arg_u64(argc, argv, "--readers", 0);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 1000);
	uint64_t max = bench_arg_u64(argc, argv, "--max", 100000);
	int run = (int)bench_arg_u64(argc, argv, "--run", 0);
	const char *raw = bench_arg_str(argc, argv, "--raw");
	static struct sync_ctx c;
	struct sync_reader *r;
	double *lat;
	uint64_t n = 0, t_start, t_end;
	double mops = 0;

	if (!d->synchronize || !d->reader) {
		fprintf(stderr, "readside_bench: design %s has no update side\n", d->name);
		return 2;
	}
	if (nreaders < 0 || max < 1)
		usage();
	c.d = d;
	cpus.pin = !bench_arg_flag(argc, argv, "--no-pin") && nreaders + 1 <= cpus.n;
	r = (struct sync_reader *)bench_xalloc(((size_t)nreaders + 1) * sizeof(*r));
	lat = (double *)bench_xalloc(max * sizeof(*lat));
	bench_cpus_pin(&cpus, 0);
	bench_start_init(&c.start, (unsigned int)nreaders + 1);
	for (int i = 0; i < nreaders; i++) {
		r[i].c = &c;
		r[i].idx = i;
		bench_thread_create(&r[i].th, sync_reader_fn, &r[i], i, nreaders);
	}
	bench_start_wait(&c.start);
	/* Warm-up (first grace periods, page faults): 20 grace periods, or a tenth of the run
	 * when grace periods are slow (oversubscribed readers). */
	t_start = bench_now_ns();
	for (int i = 0; i < 20 && bench_now_ns() - t_start < ms * 100000ull; i++)
		d->synchronize();
	/* Cost of the two clock reads around each sample (in every sample: matters below 1 us). */
	for (int i = 0; i < 1000 && (uint64_t)i < max; i++) {
		uint64_t t0 = bench_now_ns();
		lat[i] = (double)(bench_now_ns() - t0) / 1000.0;
	}
	double clock_us = bench_median(lat, max < 1000 ? max : 1000);
	t_start = bench_now_ns();
	t_end = t_start + ms * 1000000ull;
	do {
		uint64_t t0 = bench_now_ns();
		d->synchronize();
		uint64_t t1 = bench_now_ns();
		lat[n++] = (double)(t1 - t0) / 1000.0;
		if (t1 >= t_end)
			break;
	} while (n < max);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nreaders; i++) {
		pthread_join(r[i].th, NULL);
		mops += (double)r[i].sections * 1e3 / (double)r[i].ns / nreaders;
	}
	if (raw)
		bench_append_samples(raw, lat, n);
	bench_csv_latency(stdout, "sync", as, nreaders, run, lat, n);
	bench_csv_row(stdout, "sync", as, nreaders, run, "clock_us", clock_us, "us");
	/* Reader progress (million sections per second, mean over readers): the readers ran. */
	bench_csv_row(stdout, "sync", as, nreaders, run, "reader_mops", mops, "Mops/s");
	bench_csv_row(stdout, "sync", as, nreaders, run, "pinned",
		      cpus.pin && !cpus.pin_failed ? 1 : 0, "bool");
	free(lat);
	free(r);
	return 0;
}

int main(int argc, char **argv)
{
	const struct rs_design *d;
	const char *as;

	if (argc < 2)
		usage();
	bench_cpus_init(&cpus);
	if (strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NDESIGNS; i++)
			printf("%s\t%s\t%d\t%s\n", designs[i]->name, designs[i]->loop_symbol,
			       designs[i]->synchronize != NULL, designs[i]->label);
		return 0;
	}
	d = BENCH_DESIGN_ARG(designs, NDESIGNS, argc, argv);
	as = bench_arg_str(argc, argv, "--as");
	if (!as)
		as = d->name;
	if (bench_arg_flag(argc, argv, "--header"))
		bench_csv_header(stdout);
	if (strcmp(argv[1], "pair") == 0)
		return cmd_pair(d, as, argc, argv);
	if (strcmp(argv[1], "count") == 0)
		return cmd_count(d, as, argc, argv);
	if (strcmp(argv[1], "sync") == 0)
		return cmd_sync(d, as, argc, argv);
	usage();
	return 2;
}
