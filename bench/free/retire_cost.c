/* SPDX-License-Identifier: MIT */
/*
 * retire_cost: what one headless deferred free costs the thread that makes it, counted by
 * callgrind (bench/free/retire_cost.sh runs it). Each design is one noinline function that
 * hands one pointer over; the driver allocates N objects, hands them all over, N times R,
 * then waits until all are freed:
 *   grace-retire     rcu_retire(p)             (inline fast path; the library frees on this
 *                                               thread, a few per later call)
 *   grace-retire-fn  rcu_retire_fn(fn, p)      (the same, with a function of the caller's)
 *   grace-free-ms    free_rcu_mightsleep(p)    (out of line, the same per-thread blocks)
 *   urcu-defer       defer_rcu(free, p)        (liburcu: per-thread queue, a defer thread frees)
 *   free             free(p) at once            (the floor: no grace period)
 * The script reads the callgrind counts of the measured function (self: the inline code;
 * inclusive: with everything it calls, the frees included) and of the whole process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/rcu.h>

#include "retire_cost.h"

static void free_fn(void *p)
{
	free(p);
}

static __attribute__((noinline)) void rc_grace_retire(void *p)
{
	rcu_retire(p);
}
static __attribute__((noinline)) void rc_grace_retire_fn(void *p)
{
	rcu_retire_fn(free_fn, p);
}
static __attribute__((noinline)) void rc_grace_free_ms(void *p)
{
	free_rcu_mightsleep(p);
}
static __attribute__((noinline)) void rc_free(void *p)
{
	free(p);
}

static void g_done(void)
{
	free_rcu_barrier();
}

int main(int argc, char **argv)
{
	const char *d = argc > 1 ? argv[1] : "grace-retire";
	int n = argc > 2 ? atoi(argv[2]) : 100000, reps = argc > 3 ? atoi(argv[3]) : 5;
	void (*fn)(void *) = NULL;
	void (*start)(void) = NULL, (*done)(void) = g_done;

	if (!strcmp(d, "grace-retire"))
		fn = rc_grace_retire;
	else if (!strcmp(d, "grace-retire-fn"))
		fn = rc_grace_retire_fn;
	else if (!strcmp(d, "grace-free-ms"))
		fn = rc_grace_free_ms;
	else if (!strcmp(d, "free"))
		fn = rc_free;
#ifdef RC_HAVE_URCU
	else if (!strcmp(d, "urcu-defer")) {
		fn = rc_urcu_defer;
		start = rc_urcu_start;
		done = rc_urcu_done;
	}
#endif
	if (!fn || n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: retire_cost DESIGN [N [REPS]]\n");
		return 2;
	}
	void **v = (void **)malloc((size_t)n * sizeof(*v));
	if (!v)
		return 1;
	if (start)
		start();
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < n; i++)
			v[i] = malloc(48);
		for (int i = 0; i < n; i++)
			fn(v[i]);
	}
	done();
	free(v);
	printf("%s %d\n", d, n * reps);
	return 0;
}
