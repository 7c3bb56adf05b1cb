/* SPDX-License-Identifier: MIT */
/*
 * Shared benchmark helpers, header only: clocks, CPU pinning, a start barrier, order statistics
 * over repeated runs, CSV rows and a minimal "--key value" argument parser.
 *
 * Every benchmark family includes this file read-only (target grace_bench_common). Nothing here
 * sits inside a measured loop: keep measured loops in their own functions, one per design.
 *
 * CSV convention (long format, one measurement per row, so families can share one reader):
 *     bench,design,threads,run,metric,value,unit
 * bench_csv_row() writes one such row; bench_csv_header() writes the header line.
 */
#ifndef GRACE_BENCH_COMMON_H
#define GRACE_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Keep the compiler from deleting or merging work: a memory clobber, no instruction. */
#define BENCH_CLOBBER() __asm__ __volatile__("" ::: "memory")
/* Make the compiler believe v is used (and may have changed), without emitting a store. */
#define BENCH_USE(v) __asm__ __volatile__("" : "+r"(v))
#define BENCH_NOINLINE __attribute__((noinline))

/* ---- clocks ---------------------------------------------------------------------------------- */

static inline uint64_t bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* Wall clock (monotonic). */
static inline uint64_t bench_now_ns(void)
{
	return bench_clock_ns(CLOCK_MONOTONIC);
}
/* CPU time of the calling thread: excludes the time other processes ran on its CPU, which is
 * the steadier figure on a shared machine. */
static inline uint64_t bench_thread_cpu_ns(void)
{
	return bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* ---- CPUs and pinning ------------------------------------------------------------------------ */

#define BENCH_MAX_CPUS 1024

/* The CPUs of the calling thread's affinity mask, ascending, into cpus[0..max); returns how many
 * (at least 1: CPU 0 if the mask cannot be read). Call it once at start-up, before any thread
 * pins itself: threads inherit the mask of the thread that creates them. */
static inline int bench_affinity_cpus(int *cpus, int max)
{
	cpu_set_t avail;
	int n = 0;

	if (sched_getaffinity(0, sizeof(avail), &avail) == 0)
		for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
			if (CPU_ISSET(cpu, &avail))
				cpus[n++] = cpu;
	if (n == 0)
		cpus[n++] = 0;
	return n;
}

/* Pin the calling thread to one CPU. Returns 0 or -errno. */
static inline int bench_pin_cpu(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return -pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

/* ---- start barrier --------------------------------------------------------------------------- */

/* A spinning start line: every thread leaves it within a few hundred nanoseconds of the others
 * (pthread_barrier_wait wakes threads one by one through the kernel). */
struct bench_start {
	unsigned int expected;
	unsigned int arrived;
	unsigned int go;
};

static inline void bench_start_init(struct bench_start *s, unsigned int nthreads)
{
	s->expected = nthreads;
	s->arrived = 0;
	s->go = 0;
}
/* Called by each of the nthreads participants; the last one to arrive releases them all. */
static inline void bench_start_wait(struct bench_start *s)
{
	if (__atomic_add_fetch(&s->arrived, 1, __ATOMIC_ACQ_REL) == s->expected)
		__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		sched_yield(); /* the machine may be oversubscribed: yield, do not burn the CPU */
}

/* ---- order statistics ------------------------------------------------------------------------ */

static inline int bench__cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort v[0..n) in place (ascending). */
static inline void bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench__cmp_double);
}

/* Percentile p in [0, 100] of a sorted array, linear interpolation between closest ranks. */
static inline double bench_percentile_sorted(const double *v, size_t n, double p)
{
	if (n == 0)
		return 0.0;
	if (p <= 0)
		return v[0];
	if (p >= 100)
		return v[n - 1];
	double rank = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)rank;
	double frac = rank - (double)lo;

	return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

struct bench_stats {
	size_t n;
	double min, max, mean, p50, p90, p99;
};

/* Summary of v[0..n); sorts v in place. */
static inline struct bench_stats bench_stats_of(double *v, size_t n)
{
	struct bench_stats s;
	double sum = 0;

	memset(&s, 0, sizeof(s));
	s.n = n;
	if (n == 0)
		return s;
	bench_sort(v, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.min = v[0];
	s.max = v[n - 1];
	s.mean = sum / (double)n;
	s.p50 = bench_percentile_sorted(v, n, 50);
	s.p90 = bench_percentile_sorted(v, n, 90);
	s.p99 = bench_percentile_sorted(v, n, 99);
	return s;
}

/* Median of v[0..n) (sorts v in place). */
static inline double bench_median(double *v, size_t n)
{
	bench_sort(v, n);
	return bench_percentile_sorted(v, n, 50);
}

/* ---- CSV ------------------------------------------------------------------------------------- */

#define BENCH_CSV_HEADER "bench,design,threads,run,metric,value,unit"

static inline void bench_csv_header(FILE *f)
{
	fprintf(f, "%s\n", BENCH_CSV_HEADER);
}

/* One row: bench,design,threads,run,metric,value,unit. Names must not contain commas. */
static inline void bench_csv_row(FILE *f, const char *bench, const char *design, int threads,
				 int run, const char *metric, double value, const char *unit)
{
	fprintf(f, "%s,%s,%d,%d,%s,%.6g,%s\n", bench, design, threads, run, metric, value, unit);
}

/* ---- arguments ------------------------------------------------------------------------------- */

/* Minimal parser for "--key value" and "--flag" arguments: bench_arg_str(argc, argv, "--iters")
 * returns the word after "--iters", or NULL. */
static inline const char *bench_arg_str(int argc, char **argv, const char *key)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
	return NULL;
}

static inline bool bench_arg_flag(int argc, char **argv, const char *key)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return true;
	return false;
}

/* Unsigned value of "--key N" (accepts 0x.., k/M suffixes), or def when absent; exits with a
 * message on a malformed number. */
static inline uint64_t bench_arg_u64(int argc, char **argv, const char *key, uint64_t def)
{
	const char *s = bench_arg_str(argc, argv, key);
	char *end;
	unsigned long long v;

	if (!s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'k')
		v *= 1000ull, end++;
	else if (*end == 'M')
		v *= 1000000ull, end++;
	if (errno || end == s || *end) {
		fprintf(stderr, "bad number for %s: '%s'\n", key, s);
		exit(2);
	}
	return v;
}

#ifdef __cplusplus
}
#endif

#endif /* GRACE_BENCH_COMMON_H */
