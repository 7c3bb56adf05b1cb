/* SPDX-License-Identifier: MIT */
/*
 * retire_idle: what the library's own threads spend while one thread frees objects after a
 * grace period at a moderate, steady rate (bench/free/retire_idle.sh runs it). The main thread
 * registers, then for --seconds frees --rate objects a second, each malloc(32)'d and handed
 * over at once, sleeping between: grace's rcu_retire(p) (RI_URCU undefined), or liburcu's
 * defer_rcu(free, p) (RI_URCU defined, built against liburcu-memb). Printed: the CPU time and
 * the voluntary context switches (wake-ups) of every thread but the main one, per second:
 * getrusage(RUSAGE_SELF) less getrusage(RUSAGE_THREAD) of the main thread, which sees its
 * own sleeps only. So the figure is the helpers' cost: grace's callback workers, liburcu's
 * defer thread. grace also prints its default flavor's callbacks and grace periods per second.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef RI_URCU
#include <urcu.h>
#include <urcu/defer.h>
#define RI_NAME "urcu-defer"
#else
#include <grace/grace.h>
#define RI_NAME "grace-retire"
#endif

static double cpu_s(const struct rusage *r)
{
	return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec / 1e6 +
	       (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void hand_over(void *p)
{
#ifdef RI_URCU
	defer_rcu(free, p);
#else
	rcu_retire(p);
#endif
}

int main(int argc, char **argv)
{
	long rate = 1000;
	double seconds = 2.0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rate"))
			rate = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else {
			fprintf(stderr, "usage: %s [--rate N] [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	if (rate < 1 || rate > 1000000 || !(seconds > 0)) {
		fprintf(stderr, "retire_idle: --rate 1..1000000, --seconds > 0\n");
		return 2;
	}
#ifdef RI_URCU
	rcu_register_thread();
	rcu_defer_register_thread();
#endif
	hand_over(malloc(32)); /* the per-thread queue, and whatever watches it, exist */
	usleep(200000);

	struct rusage p0, p1, t0, t1;
#ifndef RI_URCU
	struct grace_cb_stats s0, s1;
	grace_rcu_callback_stats(&s0);
#endif
	getrusage(RUSAGE_SELF, &p0);
	getrusage(RUSAGE_THREAD, &t0);
	double start = now_s(), period = 1.0 / (double)rate;
	long n = (long)(seconds * (double)rate);
	for (long i = 0; i < n; i++) {
		void *p = malloc(32);
		if (!p)
			abort();
		hand_over(p);
		/* Paced on the clock, not on the sleeps: a late wake-up is caught up. */
		double next = start + (double)(i + 1) * period, t = now_s();
		if (next > t)
			usleep((useconds_t)((next - t) * 1e6));
	}
	double el = now_s() - start;
	getrusage(RUSAGE_THREAD, &t1);
	getrusage(RUSAGE_SELF, &p1);
#ifndef RI_URCU
	grace_rcu_callback_stats(&s1);
#endif
	double helper_cpu = (cpu_s(&p1) - cpu_s(&p0)) - (cpu_s(&t1) - cpu_s(&t0));
	long helper_wakes = (p1.ru_nvcsw - p0.ru_nvcsw) - (t1.ru_nvcsw - t0.ru_nvcsw);
	printf("%s,%ld,%.4f,%.1f", RI_NAME, rate, helper_cpu * 1e3 / el, (double)helper_wakes / el);
#ifndef RI_URCU
	printf(",%.1f,%.1f", (double)(s1.invoked - s0.invoked) / el,
	       (double)(s1.grace_periods - s0.grace_periods) / el);
#else
	printf(",,");
#endif
	printf("\n");
#ifdef RI_URCU
	rcu_defer_unregister_thread();
	rcu_unregister_thread();
#endif
	return 0;
}
