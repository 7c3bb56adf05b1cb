/* SPDX-License-Identifier: MIT */
/*
 * freeflood: a flood of deferred frees from several threads for a fixed time, with the peak
 * resident memory of the process as the figure (issue 13: memory stays bounded under a 60-second
 * flood of free_rcu from 2 threads). One design per translation unit, as in the other families:
 * grace's and liburcu's headers both define call_rcu and struct rcu_head, so they never meet.
 *
 * Every flood thread allocates an object of --size bytes (the design's struct rcu_head at
 * offset 0, then a word it writes) and hands it to the design's deferred free, in a loop
 * instantiated in the design's unit (FF_DEFINE_FLOOD), so no indirect call is measured.
 */
#ifndef GRACE_BENCH_FREEFLOOD_H
#define GRACE_BENCH_FREEFLOOD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"

#define FF_HEAD_BYTES 16

struct ff_obj {
	void *head_[FF_HEAD_BYTES / sizeof(void *)]; /* the design's struct rcu_head */
	uint64_t v;                                  /* written once: the object is used */
};

struct ff_design {
	const char *name;  /* CSV id */
	const char *label; /* for humans */
	bool peer;         /* liburcu */
	void (*thread_start)(void);
	void (*thread_stop)(void);
	/* Allocate and retire objects of `size` bytes until *stop; returns how many. */
	uint64_t (*flood)(const int *stop, size_t size);
	/* A read-side section of the flavor the frees wait for (the stalling reader). */
	void (*read_lock)(void);
	void (*read_unlock)(void);
	/* Every object retired so far has been freed. */
	void (*barrier)(void);
	/* Times a caller waited at the library's bound (NULL: not counted). */
	uint64_t (*bound_waits)(void);
};

/* The flood loop of one design: RETIRE(o) hands the object to its deferred free. */
#define FF_DEFINE_FLOOD(fn, RETIRE)                                                    \
	static uint64_t fn(const int *stop, size_t size)                               \
	{                                                                              \
		uint64_t n = 0;                                                        \
		while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {                     \
			for (int i = 0; i < 256; i++) {                                \
				struct ff_obj *o = (struct ff_obj *)malloc(size);      \
				if (!o)                                                \
					bench_fatal("out of memory after %" PRIu64 " " \
						    "objects",                         \
						    n);                                \
				o->v = n++;                                            \
				RETIRE(o);                                             \
			}                                                              \
		}                                                                      \
		return n;                                                              \
	}

#endif
