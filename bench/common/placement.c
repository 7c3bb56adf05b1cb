/* SPDX-License-Identifier: MIT */
/*
 * bench_placement: how far apart the machine's first two CPUs are right now, as the round trip
 * of a cache line between two threads pinned to them, sampled for a few seconds.
 *
 *   bench_placement [--seconds S] [--every-ms M] [--trips N] [--series FILE]
 *
 * Every M ms (default 50) it times N round trips (default 2000) of one line: the first thread
 * increments the word to an odd value and spins until the second has made it even. It prints
 * one line: the samples' 10th percentile, median and 90th percentile in ns, and how many samples
 * took more than SLOW_FACTOR times the 10th percentile ("slow"). --series writes each sample
 * (seconds since the start, ns per round trip) to FILE.
 *
 * Why it exists: on a virtual machine the host decides where the two vCPUs run, and it changes
 * its mind. On the project's 2-CPU VM the round trip is about 55 ns most of the time (the two
 * vCPUs share a cache) and about 315 ns in phases of about half a second (they do not), 0-25% of
 * the time. A benchmark whose two threads share cache lines (a two-thread smr point, a reader
 * beside synchronize_rcu()) runs at up to twice the speed in the first mode, so a run that
 * straddles a phase moves its cell while the load average says nothing. scripts/figures.sh
 * prints this tool's line before and after each family, beside the load average. Nothing here
 * runs while a benchmark is measured.
 */
#include "bench.h"

#define SLOW_FACTOR 2.5

static unsigned long ball __attribute__((aligned(64)));
static int stop;

static void *partner(void *arg)
{
	if (bench_pin_cpu(*(int *)arg) != 0)
		bench_fatal("cannot pin the partner thread");
	for (;;) {
		/* Relaxed loads and stores of one line: only its transfers are timed. The odd value
		 * is the serve, the even one the return. */
		unsigned long b = grace_load_relaxed(&ball);
		if (grace_load_relaxed(&stop))
			break;
		if (b & 1)
			grace_store_relaxed(&ball, b + 1);
	}
	return NULL;
}

static double sample(unsigned int trips)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned int i = 0; i < trips; i++) {
		unsigned long b = grace_load_relaxed(&ball);
		grace_store_relaxed(&ball, b + 1);
		while (grace_load_relaxed(&ball) == b + 1)
			grace_cpu_relax();
	}
	return (double)(bench_now_ns() - t0) / trips;
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
	int cpus[2];

	if (seconds <= 0 || every_ms == 0 || trips == 0)
		bench_fatal("--seconds, --every-ms and --trips must be positive");
	if (bench_affinity_cpus(cpus, 2) < 2) {
		printf("placement: one CPU, no round trip to measure\n");
		return 0;
	}
	size_t max = (size_t)(seconds * 1000 / (double)every_ms) + 1, n = 0;
	double *v = bench_xalloc(max * sizeof(double)), *at = bench_xalloc(max * sizeof(double));
	pthread_t th;
	if (bench_pin_cpu(cpus[0]) != 0)
		bench_fatal("cannot pin to CPU %d", cpus[0]);
	bench_thread_create(&th, partner, &cpus[1], 1, 2);
	uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9);
	for (uint64_t next = start; n < max && bench_now_ns() < end; next += every_ms * 1000000) {
		bench_sleep_until_ns(next);
		at[n] = (double)(bench_now_ns() - start) / 1e9;
		v[n++] = sample(trips);
	}
	grace_store_relaxed(&stop, 1);
	pthread_join(th, NULL);
	if (series) {
		FILE *f = fopen(series, "w");
		if (!f)
			bench_fatal("cannot write %s: %s", series, strerror(errno));
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%.3f,%.1f\n", at[i], v[i]);
		fclose(f);
	}
	double *sorted = bench_xalloc(n * sizeof(double));
	memcpy(sorted, v, n * sizeof(double));
	bench_sort(sorted, n);
	double p10 = bench_percentile_sorted(sorted, n, 10);
	size_t slow = 0;
	for (size_t i = 0; i < n; i++)
		slow += v[i] > SLOW_FACTOR * p10;
	printf("placement: CPUs %d and %d, cache-line round trip %.0f ns (p10), %.0f (median), %.0f "
	       "(p90); slow (over %.1fx p10) in %zu of %zu samples over %.0f s\n",
	       cpus[0], cpus[1], p10, bench_percentile_sorted(sorted, n, 50),
	       bench_percentile_sorted(sorted, n, 90), SLOW_FACTOR, slow, n, seconds);
	free(sorted);
	free(v);
	free(at);
	return 0;
}
