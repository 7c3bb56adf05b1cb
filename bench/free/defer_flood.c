/* SPDX-License-Identifier: MIT */
/*
 * defer_flood: what defer_rcu() costs, built twice from this one file, against grace-urcu and
 * against liburcu (bench/free/defer_flood.sh runs both, interleaved). T threads register, each
 * calls defer_rcu(fn, p) N times (sleeping GAP microseconds between two calls when GAP > 0),
 * then unregisters, which runs what the thread left (liburcu's contract). fn counts the calls.
 *
 *   defer_flood THREADS N [GAP_US [none]]
 *
 * Prints one CSV line: threads,n,gap_us,wall_s,cpu_s,ran,mdefer_per_s,cpu_ns_per_defer. cpu_s
 * is the process's user + system time over the run (every thread: the library's workers,
 * liburcu's defer thread), so cpu_ns_per_defer is what a deferral costs the machine. Exits 1
 * if a deferral did not run. "none": the same threads and loop, sleeps included, with no
 * deferral: the baseline that a paced run's CPU is compared with (its sleeps and wake-ups cost
 * tens of microseconds per call on a VM, more than the deferral itself).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <urcu.h>
#include <urcu/defer.h>

static long n_per_thread, gap_us;
static int none; /* the baseline: no deferral */
static unsigned long ran;

static void fn(void *p)
{
	(void)p;
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

static void *deferrer(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_defer_register_thread();
	for (long i = 0; i < n_per_thread; i++) {
		if (!none)
			defer_rcu(fn, (void *)i);
		if (gap_us) {
			struct timespec ts = { gap_us / 1000000, (gap_us % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	rcu_defer_unregister_thread();
	rcu_unregister_thread();
	return NULL;
}

static double cpu_s(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)r.ru_utime.tv_sec + (double)r.ru_stime.tv_sec +
	       ((double)r.ru_utime.tv_usec + (double)r.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: defer_flood THREADS N [GAP_US [none]]\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	n_per_thread = atol(argv[2]);
	gap_us = argc > 3 ? atol(argv[3]) : 0;
	none = argc > 4 && strcmp(argv[4], "none") == 0;
	if (threads < 1 || threads > 256 || n_per_thread < 1 || gap_us < 0 || (argc > 4 && !none)) {
		fprintf(stderr, "defer_flood: bad arguments\n");
		return 2;
	}
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	struct timespec a, b;

	if (!t)
		return 2;
	double c0 = cpu_s();
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, deferrer, NULL) != 0)
			return 2;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double c1 = cpu_s();
	double wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	unsigned long done = __atomic_load_n(&ran, __ATOMIC_RELAXED);
	double total = (double)threads * (double)n_per_thread;
	double expect = none ? 0 : total;

	printf("%d,%ld,%ld,%.4f,%.4f,%lu,%.3f,%.1f\n", threads, n_per_thread, gap_us, wall, c1 - c0,
	       done, total / wall / 1e6, (c1 - c0) * 1e9 / total);
	free(t);
	return done == (unsigned long)expect ? 0 : 1;
}
