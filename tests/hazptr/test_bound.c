/* SPDX-License-Identifier: MIT */
/*
 * The bound of hazard pointers (src/hazptr/hazptr.c, Claim 2): with H hazard pointers and T
 * batches (threads that hold retired objects, plus the orphan list), at most H*T + BATCH*T
 * retired objects are not freed, whatever the readers do. A reader protects objects and never
 * lets go for the whole test while writers flood retires; at pause points (every writer stopped
 * between two retires, so the counts are exact) the test compares the objects not freed with
 * the bound, taking H and T from grace_hazptr_get_stats(). Nothing here depends on timing: the
 * duration only sets how long the flood lasts.
 *
 *   stuck_reader_flood   the default domain (inline retire), 3 writers, a reader holding 4
 *   srcu_stall           issue 34, item 3: an srcu reader converted to a hazard pointer
 *                        (grace_hazptr_hold_srcu()) holds its object while writers replace and
 *                        retire with grace_hazptr_retire_srcu(); at each pause srcu_barrier()
 *                        completes (no reader is stuck inside a section) and what is left is
 *                        checked against the bound. HP_BOUND_MS sets the flood's length (ctest:
 *                        hazptr_srcu_stall_quick, 3 s; hazptr_srcu_stall_60s, label long).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <grace/hazptr.h>
#include <grace/srcu.h>

#include "gtest_lite.h"

#define WRITERS 3
#define HELD 4     /* protections the stuck reader holds */
#define ROUND 1000 /* retires per writer between two pause points */

struct obj {
	uint64_t magic;
	uint64_t v;
};
#define LIVE 0x6c6976656f626a31ull
#define DEAD 0xdeaddeaddeaddeadull

static uint64_t n_freed, n_retired;

static void counting_free(void *p)
{
	struct obj *o = (struct obj *)p;

	REQUIRE(o->magic == LIVE); /* freed once, never while protected (checked below) */
	o->magic = DEAD;
	free(o);
	__atomic_fetch_add(&n_freed, 1, __ATOMIC_RELEASE);
}

static struct obj *obj_new(uint64_t v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));

	REQUIRE(o);
	o->magic = LIVE;
	o->v = v;
	return o;
}

static uint64_t env_ms(uint64_t dflt)
{
	const char *s = getenv("HP_BOUND_MS");

	return s ? strtoull(s, NULL, 10) : dflt;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* ---- shared by both tests ---- */

static struct obj *slots[HELD]; /* what the reader protects (then retired by the main thread) */
static struct grace_hazptr *held[HELD];
static pthread_barrier_t pause_bar;
static int stop;
static struct srcu_struct ss;
static struct obj *cur; /* srcu_stall: the object readers find */
static int use_srcu;

/* The stuck reader: protects HELD objects, then waits for the end of the test (not on time). */
static int reader_ready, reader_go;
static void *stuck_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < HELD; i++) {
		held[i] = hazptr_alloc();
		REQUIRE(held[i]);
		if (use_srcu) {
			int idx = srcu_read_lock(&ss);
			struct obj *o = (struct obj *)srcu_dereference(cur, &ss);
			grace_hazptr_hold_srcu(held[i], o, &ss, idx);
			slots[i] = o;
		} else {
			struct obj *o = hazptr_protect(held[i], &slots[i]);
			REQUIRE(o == slots[i]);
		}
	}
	__atomic_store_n(&reader_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&reader_go, __ATOMIC_ACQUIRE)) {
		/* Stuck: it holds its objects; they stay alive whatever the writers do. */
		for (int i = 0; i < HELD; i++)
			REQUIRE(slots[i]->magic == LIVE);
		struct timespec t = { 0, 1000000 };
		nanosleep(&t, NULL);
	}
	for (int i = 0; i < HELD; i++)
		hazptr_free(held[i]);
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t v = (uint64_t)(uintptr_t)arg << 40;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < ROUND; i++) {
			struct obj *o = obj_new(v++);
			__atomic_fetch_add(&n_retired, 1, __ATOMIC_RELAXED);
			if (use_srcu) {
				struct obj *old = __atomic_exchange_n(&cur, o, __ATOMIC_ACQ_REL);
				grace_hazptr_retire_srcu(NULL, &ss, old);
			} else {
				hazptr_retire(NULL, o);
			}
		}
		pthread_barrier_wait(&pause_bar); /* pause: main checks */
		pthread_barrier_wait(&pause_bar); /* resume */
	}
	return NULL;
}

struct figures {
	uint64_t samples, max_out, bound, records, batches, retired;
};

/* Run the flood for ms with the stuck reader; check the bound at every pause. */
static int flood(uint64_t ms, struct figures *f)
{
	pthread_t r, w[WRITERS];
	uint64_t t0 = now_ms();
	int bad = 0;

	__atomic_store_n(&n_freed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n_retired, 0, __ATOMIC_RELAXED);
	stop = reader_ready = reader_go = 0;
	REQUIRE(pthread_create(&r, NULL, stuck_reader, NULL) == 0);
	while (!__atomic_load_n(&reader_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	if (!use_srcu) {
		/* The reader's objects are retired now: they stay unreclaimed for the whole run. */
		for (int i = 0; i < HELD; i++) {
			__atomic_fetch_add(&n_retired, 1, __ATOMIC_RELAXED);
			hazptr_retire(NULL, slots[i]);
		}
	}
	REQUIRE(pthread_barrier_init(&pause_bar, NULL, WRITERS + 1) == 0);
	for (uintptr_t i = 0; i < WRITERS; i++)
		REQUIRE(pthread_create(&w[i], NULL, writer, (void *)(i + 1)) == 0);
	for (;;) {
		pthread_barrier_wait(&pause_bar); /* every writer stopped between two retires */
		if (use_srcu)
			srcu_barrier(&ss); /* completes: no reader is inside a section */
		struct grace_hazptr_stats st;
		grace_hazptr_get_stats(&st);
		uint64_t out = __atomic_load_n(&n_retired, __ATOMIC_RELAXED) -
			       __atomic_load_n(&n_freed, __ATOMIC_ACQUIRE);
		uint64_t bound = st.records * st.batches +
				 (uint64_t)GRACE_HAZPTR_BATCH * st.batches;
		f->samples++;
		if (out > f->max_out)
			f->max_out = out;
		f->bound = bound;
		f->records = st.records;
		f->batches = st.batches;
		if (out > bound) {
			fprintf(stderr,
				"  bound exceeded: %llu objects not freed > H*T + BATCH*T = %llu "
				"(H %llu, T %llu)\n",
				(unsigned long long)out, (unsigned long long)bound,
				(unsigned long long)st.records, (unsigned long long)st.batches);
			bad = 1;
		}
		bool end = bad || now_ms() - t0 >= ms;
		if (end)
			__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		pthread_barrier_wait(&pause_bar);
		if (end)
			break;
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	f->retired = __atomic_load_n(&n_retired, __ATOMIC_RELAXED);
	/* The reader's objects were never freed (its loop checks them): now let go. */
	__atomic_store_n(&reader_go, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	pthread_barrier_destroy(&pause_bar);
	return bad;
}

static void report(const char *name, const struct figures *f)
{
	printf("  %s: %llu objects retired, %llu samples, at most %llu not freed; bound "
	       "H*T + BATCH*T = %llu (H %llu, T %llu, BATCH %d)\n",
	       name, (unsigned long long)f->retired, (unsigned long long)f->samples,
	       (unsigned long long)f->max_out, (unsigned long long)f->bound,
	       (unsigned long long)f->records, (unsigned long long)f->batches, GRACE_HAZPTR_BATCH);
}

TEST(stuck_reader_flood)
{
	struct figures f = { 0, 0, 0, 0, 0, 0 };

	use_srcu = 0;
	for (int i = 0; i < HELD; i++)
		slots[i] = obj_new((uint64_t)i);
	CHECK(flood(env_ms(2000), &f) == 0);
	report("stuck_reader_flood", &f);
	/* The flood went far past the bound: the test shows reclamation went on around the
	 * stuck reader (and the reader's objects stayed, checked by the reader). */
	CHECK(f.retired > 2 * f.bound);
	CHECK(f.max_out >= HELD);
	hazptr_barrier(NULL);
	CHECK(__atomic_load_n(&n_freed, __ATOMIC_ACQUIRE) == f.retired);
}

TEST(srcu_stall)
{
	struct figures f = { 0, 0, 0, 0, 0, 0 };

	use_srcu = 1;
	CHECK(init_srcu_struct(&ss) == 0);
	cur = obj_new(0);
	CHECK(flood(env_ms(2000), &f) == 0);
	report("srcu_stall", &f);
	CHECK(f.retired > 2 * f.bound);
	/* The last object is still linked: retire it too, then everything is freed. */
	__atomic_fetch_add(&n_retired, 1, __ATOMIC_RELAXED);
	grace_hazptr_retire_srcu(NULL, &ss, cur);
	srcu_barrier(&ss);
	hazptr_barrier(NULL);
	CHECK(__atomic_load_n(&n_freed, __ATOMIC_ACQUIRE) ==
	      __atomic_load_n(&n_retired, __ATOMIC_RELAXED));
	cleanup_srcu_struct(&ss);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
	/* Before any retire: the default domain's objects go through the counting hook. */
	REQUIRE(grace_hazptr_set_free_hook(NULL, counting_free) == 0);
}

GT_MAIN()
