/* SPDX-License-Identifier: MIT */
/*
 * bench_placement: how far apart the machine's first two CPUs are right now, as the round trip
 * of a cache line between two threads pinned to them, sampled for a few seconds.
 *
 *   bench_placement [--seconds S] [--every-ms M] [--trips N] [--alu I] [--series FILE]
 *
 * Every M ms (default 50) it takes two samples. The round trip: N round trips (default 2000) of
 * one line, the first thread incrementing the word to an odd value and spinning until a thread
 * on the second CPU has made it even. The parallel slowdown: how much longer a chain of I
 * dependent multiplies (default 300000) takes on the first CPU while the second runs it too than
 * alone: about 1 on two cores, well above on two hardware threads of one core. It prints one
 * line: the round trip's 10th percentile, median and 90th percentile in ns, how many samples
 * took more than SLOW_FACTOR times the 10th percentile ("slow"), and the slowdown's median and
 * 90th percentile with the samples above SHARED_CORE. --series writes each sample (seconds since
 * the start, ns per round trip, slowdown) to FILE.
 *
 * Why it exists: on a virtual machine the host decides where the vCPUs run, and it changes its
 * mind. On the project's 2-CPU VM a two-thread benchmark whose threads share cache lines (a
 * two-thread smr point, a reader beside synchronize_rcu()) runs at one of two speeds, about a
 * factor of two apart, for stretches of under a second to over ten seconds, with the load
 * average at 0 (bench/smr/about.md). The round trip shows one cause: about 60 ns most of the
 * time, 305-335 ns while the host runs the vCPUs apart. It does not show every slow stretch,
 * and the parallel slowdown has read 1.00 in every sample so far (the vCPUs were never two
 * hardware threads of one core): this is context for a page's figures, not a filter of runs.
 * scripts/figures.sh and scripts/report.sh print this tool's line before and after the runs,
 * beside the load average. Nothing here runs while a benchmark is measured.
 */
#include "bench.h"

#define SLOW_FACTOR 2.5
#define SHARED_CORE 1.3

static unsigned long ball __attribute__((aligned(64)));
static int stop, go;

struct partner_arg {
	int cpu;
	bool alu; /* run alu() once go is set, instead of serving the ball */
	unsigned int iters;
};

/* A fixed chain of dependent multiplies: what one core does alone in a given time, and less
 * when the other thread runs on the same core's other hardware thread. */
static uint64_t alu(unsigned int iters)
{
	uint64_t y = 1;

	for (unsigned int i = 0; i < iters; i++)
		y = y * 6364136223846793005ull + 1442695040888963407ull;
	return y;
}

static void *partner(void *p)
{
	struct partner_arg *a = p;
	volatile uint64_t sink;

	if (bench_pin_cpu(a->cpu) != 0)
		bench_fatal("cannot pin the partner thread");
	if (a->alu) {
		/* Relaxed: go carries no data, only the start (pthread_create() and pthread_join()
		 * order everything else between the two threads). */
		while (!grace_load_relaxed(&go))
			grace_cpu_relax();
		sink = alu(a->iters);
		(void)sink;
		return NULL;
	}
	for (;;) {
		/* Relaxed loads and stores of one line: only its transfers are timed. The odd value
		 * is the serve, the even one the return. */
		unsigned long b = grace_load_relaxed(&ball);
		/* Relaxed: stop carries no data; pthread_join() follows it. */
		if (grace_load_relaxed(&stop))
			break;
		if (b & 1)
			grace_store_relaxed(&ball, b + 1);
	}
	return NULL;
}

/* ns per round trip of the ball between this thread and one on cpu */
static double round_trip(int cpu, unsigned int trips)
{
	struct partner_arg a = { cpu, false, 0 };
	pthread_t th;

	grace_store_relaxed(&stop, 0);
	bench_thread_create(&th, partner, &a, 1, 2);
	/* one serve returned: the partner runs */
	unsigned long b0 = grace_load_relaxed(&ball);
	grace_store_relaxed(&ball, b0 + 1);
	while (grace_load_relaxed(&ball) == b0 + 1)
		grace_cpu_relax();
	uint64_t t0 = bench_now_ns();
	for (unsigned int i = 0; i < trips; i++) {
		unsigned long b = grace_load_relaxed(&ball);
		grace_store_relaxed(&ball, b + 1);
		while (grace_load_relaxed(&ball) == b + 1)
			grace_cpu_relax();
	}
	double ns = (double)(bench_now_ns() - t0) / trips;
	grace_store_relaxed(&stop, 1);
	pthread_join(th, NULL);
	return ns;
}

/* How much slower alu() runs on this CPU while a thread on cpu runs it too: about 1 on two
 * cores, well above 1 on two hardware threads of one core. */
static double parallel_slowdown(int cpu, unsigned int iters)
{
	struct partner_arg a = { cpu, true, iters + iters / 2 };
	volatile uint64_t sink;
	pthread_t th;

	uint64_t t0 = bench_now_ns();
	sink = alu(iters);
	double alone = (double)(bench_now_ns() - t0);
	grace_store_relaxed(&go, 0);
	bench_thread_create(&th, partner, &a, 1, 2);
	bench_sleep_ns(200000); /* the partner is pinned and spinning on go */
	grace_store_relaxed(&go, 1);
	t0 = bench_now_ns();
	sink = alu(iters);
	double both = (double)(bench_now_ns() - t0);
	(void)sink;
	pthread_join(th, NULL);
	return both / alone;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	const char *s = bench_arg_str(argc, argv, "--seconds");
	if (s)
		seconds = atof(s);
	uint64_t every_ms = bench_arg_u64(argc, argv, "--every-ms", 50);
	unsigned int trips = (unsigned int)bench_arg_u64(argc, argv, "--trips", 2000);
	const char *series = bench_arg_str(argc, argv, "--series");
	unsigned int iters = (unsigned int)bench_arg_u64(argc, argv, "--alu", 300000);
	int cpus[2];

	if (seconds <= 0 || every_ms == 0 || trips == 0 || iters == 0)
		bench_fatal("--seconds, --every-ms, --trips and --alu must be positive");
	if (bench_affinity_cpus(cpus, 2) < 2) {
		printf("placement: one CPU, no round trip to measure\n");
		return 0;
	}
	size_t max = (size_t)(seconds * 1000 / (double)every_ms) + 1, n = 0;
	double *v = bench_xalloc(max * sizeof(double)), *at = bench_xalloc(max * sizeof(double));
	double *par = bench_xalloc(max * sizeof(double));
	if (bench_pin_cpu(cpus[0]) != 0)
		bench_fatal("cannot pin to CPU %d", cpus[0]);
	uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9);
	for (uint64_t next = start; n < max && bench_now_ns() < end; next += every_ms * 1000000) {
		bench_sleep_until_ns(next);
		at[n] = (double)(bench_now_ns() - start) / 1e9;
		v[n] = round_trip(cpus[1], trips);
		par[n++] = parallel_slowdown(cpus[1], iters);
	}
	if (series) {
		FILE *f = fopen(series, "w");
		if (!f)
			bench_fatal("cannot write %s: %s", series, strerror(errno));
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%.3f,%.1f,%.3f\n", at[i], v[i], par[i]);
		fclose(f);
	}
	double *sorted = bench_xalloc(n * sizeof(double));
	memcpy(sorted, v, n * sizeof(double));
	bench_sort(sorted, n);
	double p10 = bench_percentile_sorted(sorted, n, 10);
	size_t slow = 0, shared = 0;
	for (size_t i = 0; i < n; i++) {
		slow += v[i] > SLOW_FACTOR * p10;
		shared += par[i] > SHARED_CORE;
	}
	double rt50 = bench_percentile_sorted(sorted, n, 50),
	       rt90 = bench_percentile_sorted(sorted, n, 90);
	memcpy(sorted, par, n * sizeof(double));
	bench_sort(sorted, n);
	/* One line: the scripts put it in a page's header and a report's table. */
	printf("placement: CPUs %d and %d, cache-line round trip %.0f ns (p10), %.0f (median), %.0f "
	       "(p90); slow (over %.1fx p10) in %zu of %zu samples over %.0f s; both CPUs at once "
	       "%.2fx (median), %.2fx (p90) of one alone; over %.2fx in %zu\n",
	       cpus[0], cpus[1], p10, rt50, rt90, SLOW_FACTOR, slow, n, seconds,
	       bench_percentile_sorted(sorted, n, 50), bench_percentile_sorted(sorted, n, 90),
	       SHARED_CORE, shared);
	free(sorted);
	free(par);
	free(v);
	free(at);
	return 0;
}
