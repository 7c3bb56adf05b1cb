/* SPDX-License-Identifier: MIT */
/*
 * What the callback engine's fault regressions share (regress_engine.c, regress_lazy.c,
 * regress_policy.c): callbacks that count themselves and free their rcu_head, and pinning to
 * one CPU. Needs _GNU_SOURCE before any include (sched_setaffinity, CPU_SET).
 */
#ifndef GRACE_TEST_FAULT_ENGINE_HELPERS_H
#define GRACE_TEST_FAULT_ENGINE_HELPERS_H

#include <grace/grace.h>
#include <sched.h>
#include <stdlib.h>

/* Callbacks run (count_free()): each test case runs in a child, so it starts at 0. */
static unsigned long ran;

static inline void count_free(struct rcu_head *h)
{
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
	free(h);
}

static inline struct rcu_head *head_new(void)
{
	struct rcu_head *h = (struct rcu_head *)calloc(1, sizeof(struct rcu_head));
	if (!h)
		abort();
	return h;
}

/* Pin the calling thread (and the threads it starts later, the callback workers included) to
 * the first CPU it may run on: one queue and one worker then serve everything it queues. */
static inline void fault_pin_to_first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		exit(2);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &set)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			break;
		}
	}
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		exit(2);
}

#endif /* GRACE_TEST_FAULT_ENGINE_HELPERS_H */
