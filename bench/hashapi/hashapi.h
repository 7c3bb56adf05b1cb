/* SPDX-License-Identifier: MIT */
/*
 * hashapi: a library's own hash table against another library's (issue 14, item 4): grace's
 * grace_hash_* and liburcu's cds_lfht, plus cds_lfht on grace (grace-urcu's adapter). One
 * translation unit per design (grace's and liburcu's headers both define rcu_read_lock, so they
 * never meet); each design's measured loop lives in its own unit, so the table calls in it are
 * direct calls, never through a pointer.
 */
#ifndef HASHAPI_H
#define HASHAPI_H

#include <stddef.h>
#include <stdint.h>

/* What one worker thread does during a timed run. */
struct ha_work {
	uint64_t nkeys;     /* keys 0..nkeys-1 are in the table */
	unsigned update_pm; /* updates per 1000 operations (0: lookups only) */
	unsigned thread;    /* index of this thread, and ... */
	unsigned nthreads;  /* ... how many: thread i updates keys i mod nthreads only */
	volatile int *stop; /* set by the driver when the duration is over */
	volatile int *go;   /* set by the driver when every thread is ready */
	int *ready;         /* incremented by each thread before it waits for go */
	uint64_t seed;
	uint64_t ops, hits; /* results */
};

struct ha_design {
	const char *name;
	const char *loop_symbol; /* the measured loop, for callgrind --toggle-collect */
	size_t node_bytes;       /* the per-node structure the user embeds */
	size_t obj_bytes;        /* the benchmark's whole object (key, node, rcu_head if any) */
	void *(*create)(uint64_t nkeys, uint64_t buckets, int auto_resize);
	void (*destroy)(void *t);
	void (*run)(void *t, struct ha_work *w); /* register, the measured loop, unregister */
	void (*resize)(void *t, uint64_t buckets);
	void (*insert)(void *t, uint64_t from, uint64_t to); /* add keys [from, to) */
};

extern const struct ha_design ha_grace, ha_grace_inline, ha_urcu, ha_grace_urcu;

/* xorshift64*: the operation stream (the same for every design). */
static inline uint64_t ha_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* The hash of a key: the same function for every design. */
static inline uint64_t ha_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* The key of the next operation, and whether it is an update. An update touches a key the
 * thread owns (key mod nthreads == thread), so updaters never race on one key; lookups go to
 * any key. */
/* In each design's run(), after registering: report ready, then wait for the driver's go.
 * Release: the thread's registration before the driver's acquire load of the count (main.c,
 * crew_start), which starts the clock only once every thread is ready. */
static inline void ha_ready_wait(struct ha_work *w)
{
	__atomic_fetch_add(w->ready, 1, __ATOMIC_RELEASE);
	while (!*w->go)
		;
}

static inline uint64_t ha_next(struct ha_work *w, uint64_t *s, int *update)
{
	uint64_t r = ha_rand(s);
	uint64_t k = (r >> 16) % w->nkeys;

	*update = w->update_pm && (r & 1023) < (uint64_t)w->update_pm * 1024 / 1000;
	if (*update) {
		k = k / w->nthreads * w->nthreads + w->thread;
		if (k >= w->nkeys)
			k = w->thread;
	}
	return k;
}

#endif
