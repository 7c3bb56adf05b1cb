/* SPDX-License-Identifier: MIT */
/*
 * Shared by the reference-model tests (tests/api/test_*_model.c, tests/hazptr/test_hazptr_model.c,
 * compat/tests/test_compat_*_model.c): a seeded xorshift64* generator, so that one seed gives
 * the same calls in every run and build; the work settings (GRACE_MODEL_SEEDS, GRACE_MODEL_OPS,
 * GRACE_MODEL_FIRST_SEED, GRACE_MODEL_THREADS); the mismatch report, which names the seed, the
 * thread and the call and stops printing after ten; the loop over seeds; a run on N threads;
 * a multiset of pointers by key, the model of a table with duplicates; a 64-bit mixer for hash
 * values (api_hash uses it too). Include after gtest_lite.h.
 */
#ifndef GRACE_TEST_MODEL_H
#define GRACE_TEST_MODEL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct gt_model_rng {
	uint64_t s;
};

static inline void gt_model_seed(struct gt_model_rng *r, unsigned long long seed, uint64_t salt)
{
	r->s = seed * 0x9e3779b97f4a7c15ull + salt;
	if (!r->s)
		r->s = 1;
}

static inline uint64_t gt_model_next(struct gt_model_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ull;
}

static inline unsigned gt_model_below(struct gt_model_rng *r, unsigned n)
{
	return (unsigned)(gt_model_next(r) % n);
}

/* A 64-bit finalizer (murmur3's): well-mixed hash values from dense integer keys. */
static inline uint64_t gt_model_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline unsigned long gt_model_env(const char *name, unsigned long def)
{
	const char *e = getenv(name);
	return e && *e ? strtoul(e, NULL, 10) : def;
}

/* A multiset of pointers by small integer key: the model of a table that allows duplicates. */
struct gt_model_bag {
	unsigned nkeys;
	void ***in;        /* in[key]: the pointers held under that key, in no order */
	unsigned *n, *cap; /* their number and room, by key */
	size_t count;      /* all of them */
};

static inline void gt_bag_init(struct gt_model_bag *b, unsigned nkeys)
{
	b->nkeys = nkeys;
	b->in = (void ***)calloc(nkeys, sizeof(*b->in));
	b->n = (unsigned *)calloc(nkeys, sizeof(*b->n));
	b->cap = (unsigned *)calloc(nkeys, sizeof(*b->cap));
	b->count = 0;
	REQUIRE(b->in && b->n && b->cap);
}

static inline void gt_bag_free(struct gt_model_bag *b)
{
	for (unsigned k = 0; k < b->nkeys; k++)
		free(b->in[k]);
	free(b->in);
	free(b->n);
	free(b->cap);
}

static inline void gt_bag_add(struct gt_model_bag *b, unsigned k, void *p)
{
	if (b->n[k] == b->cap[k]) {
		b->cap[k] = b->cap[k] ? 2 * b->cap[k] : 4;
		b->in[k] = (void **)realloc(b->in[k], b->cap[k] * sizeof(**b->in));
		REQUIRE(b->in[k]);
	}
	b->in[k][b->n[k]++] = p;
	b->count++;
}

/* Where p is among key k's pointers, or -1. */
static inline int gt_bag_find(const struct gt_model_bag *b, unsigned k, const void *p)
{
	for (unsigned i = 0; i < b->n[k]; i++)
		if (b->in[k][i] == p)
			return (int)i;
	return -1;
}

static inline void gt_bag_del(struct gt_model_bag *b, unsigned k, const void *p)
{
	int i = gt_bag_find(b, k, p);
	REQUIRE(i >= 0);
	b->in[k][i] = b->in[k][--b->n[k]];
	b->count--;
}

/* Where a check runs: the seed, the thread (runner) and the call number. */
struct gt_model_where {
	unsigned long long seed;
	unsigned thread;
	unsigned long op;
};

/* Mismatches of the whole binary (any thread); a run stops at its first. Relaxed atomics: a
 * count that only stops loops and is read for the verdict after the threads are joined. */
static unsigned long gt_model_failures __attribute__((unused));
static unsigned long long gt_model_failed_seed __attribute__((unused));

#define GT_MODEL_CHECK(w, cond, ...)                                                         \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			unsigned long gt_n_ = __atomic_fetch_add(&gt_model_failures, 1,      \
								 __ATOMIC_RELAXED);          \
			if (gt_n_ == 0)                                                      \
				gt_model_failed_seed = (w)->seed;                            \
			if (gt_n_ < 10) {                                                    \
				fprintf(stderr, "  seed %llu thread %u op %lu: ", (w)->seed, \
					(w)->thread, (w)->op);                               \
				fprintf(stderr, __VA_ARGS__);                                \
				fprintf(stderr, "\n");                                       \
			}                                                                    \
		}                                                                            \
	} while (0)

static inline bool gt_model_failed(void)
{
	return __atomic_load_n(&gt_model_failures, __ATOMIC_RELAXED) != 0;
}

/* Run seeds GRACE_MODEL_FIRST_SEED (1) on, GRACE_MODEL_SEEDS of them (default @seeds, divided
 * by @div), with GRACE_MODEL_OPS calls each (default @ops), until the first mismatch; then
 * fail the test, naming the first seed that failed. @offset separates the cases' seeds. */
static inline void gt_model_run_seeds(void (*run)(unsigned long long seed, unsigned long nops),
				      unsigned long seeds, unsigned long ops, unsigned div,
				      unsigned long long offset)
{
	unsigned long n = gt_model_env("GRACE_MODEL_SEEDS", seeds) / div;
	unsigned long nops = gt_model_env("GRACE_MODEL_OPS", ops);
	unsigned long first = gt_model_env("GRACE_MODEL_FIRST_SEED", 1);

	for (unsigned long s = first; s < first + (n ? n : 1) && !gt_model_failed(); s++)
		run(s + offset, nops);
	CHECK_MSG(!gt_model_failed(),
		  "%lu mismatches (first seed that failed: %llu; GRACE_MODEL_FIRST_SEED=%llu "
		  "GRACE_MODEL_SEEDS=%u repeats it)",
		  gt_model_failures, gt_model_failed_seed, gt_model_failed_seed - offset, div);
}

/* Run @fn on @n threads, the i-th with @args + i * @size; alone, on the calling thread. */
static inline void gt_model_threads(unsigned n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t th[64];

	REQUIRE(n >= 1 && n <= 64);
	if (n == 1) {
		fn(args);
		return;
	}
	for (unsigned t = 0; t < n; t++)
		REQUIRE(pthread_create(&th[t], NULL, fn, (char *)args + t * size) == 0);
	for (unsigned t = 0; t < n; t++)
		pthread_join(th[t], NULL);
}

/* The two cases of a model test that runs threads on one structure: one thread owning every key,
 * then GRACE_MODEL_THREADS (2 by default, at least 2) each on its own share, half the seeds.
 * @run reads gt_model_nthreads. */
static unsigned gt_model_nthreads __attribute__((unused)) = 1;

#define GT_MODEL_CASES(run)                                                           \
	TEST(random_calls_match_the_model)                                            \
	{                                                                             \
		gt_model_nthreads = 1;                                                \
		gt_model_run_seeds(run, 24, 6000, 1, 0);                              \
	}                                                                             \
	TEST(concurrent_calls_match_each_threads_model)                               \
	{                                                                             \
		gt_model_nthreads = (unsigned)gt_model_env("GRACE_MODEL_THREADS", 2); \
		if (gt_model_nthreads < 2)                                            \
			gt_model_nthreads = 2;                                        \
		gt_model_run_seeds(run, 24, 6000, 2, 1000000);                        \
	}

#endif
