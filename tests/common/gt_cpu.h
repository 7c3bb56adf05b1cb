/* SPDX-License-Identifier: MIT */
/*
 * Pinning helpers shared by the tests that place threads on CPUs (tests/contract/test_order.c,
 * test_step.c, tests/unit/test_wait_blocked.c): which CPUs the process may run on, pinning a
 * thread to one of them, and letting the calling thread go again. Include with _GNU_SOURCE
 * defined before the first system header (CPU_SET, pthread_setaffinity_np, sched_getcpu).
 */
#ifndef GT_CPU_H
#define GT_CPU_H

#ifndef _GNU_SOURCE
#error "gt_cpu.h needs _GNU_SOURCE, defined before the first system header"
#endif
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

/* The process's affinity mask when it started (before any test pinned a thread): gt_unpin()
 * goes back to it, so a run under taskset keeps its restriction. */
static cpu_set_t gt_cpu_start_mask;
static int gt_cpu_start_ok;

__attribute__((constructor)) static void gt_cpu_start(void)
{
	gt_cpu_start_ok = sched_getaffinity(0, sizeof(gt_cpu_start_mask), &gt_cpu_start_mask) == 0;
}

/* The k-th CPU (from 0) the process may run on, or -1 when it has fewer than k + 1. */
static inline int gt_cpu_nth(int k)
{
	if (!gt_cpu_start_ok)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &gt_cpu_start_mask) && k-- == 0)
			return c;
	return -1;
}

/* Pin thread t to CPU cpu (cpu < 0: the CPU the caller runs on now). Returns the CPU, or -1. */
static inline int gt_pin(pthread_t t, int cpu)
{
	cpu_set_t one;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_setaffinity_np(t, sizeof(one), &one) == 0 ? cpu : -1;
}

/* Let the calling thread run on every CPU it could run on at start-up again. */
static inline void gt_unpin(void)
{
	cpu_set_t all;

	if (gt_cpu_start_ok) {
		(void)pthread_setaffinity_np(pthread_self(), sizeof(gt_cpu_start_mask),
					     &gt_cpu_start_mask);
		return;
	}
	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
}

#endif
