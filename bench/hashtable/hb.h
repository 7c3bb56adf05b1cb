/* SPDX-License-Identifier: MIT */
/*
 * hashbench: the seeds' hash-table mini-benchmark (Linux Journal 2003, Fig. 1, 4, 5; McKenney's
 * "RCU vs. Locking Performance on Different Types of CPUs" slides).
 *
 * The table: a dense array of buckets (1024 by default), each a doubly linked circular chain
 * with a sentinel head, one element per chain, integer keys 0..nbuckets-1 hashed by key & mask.
 * An operation picks a random key and is either a search or, with probability "update
 * fraction", a delete of that key's element followed by the insertion of a fresh element with
 * the same key (the table keeps its loading). Each design (locking scheme or RCU flavor) lives
 * in its own translation unit and instantiates the measured loop from loop.h with its own
 * inline lookup and update: no indirect call per operation.
 *
 * This header holds what every design shares: the element, the chain operations (RCU-safe
 * publication and traversal, as the FREENIX 2003 paper's Fig. 5 list API), the per-thread
 * random generator, the run descriptor the driver hands to a design, and the check mode.
 *
 * A design's translation unit may define, before including this header:
 *   HB_DEREF(p)        load of a pointer a reader dereferences (default: relaxed atomic load,
 *                      acquire under TSan); RCU designs use their library's rcu_dereference().
 *   HB_PUBLISH(p, v)   store that publishes an initialised element (default: store-release);
 *                      RCU designs use their library's rcu_assign_pointer().
 */
#ifndef HB_H
#define HB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef HB_CHECK
#define HB_CHECK 0 /* check mode: poison on free, validate every element a reader touches */
#endif

#define HB_MAX_THREADS 1024 /* brlock keeps one lock per thread: a static array */
#define HB_LINE 64
#define HB_ALIGNED __attribute__((aligned(HB_LINE)))
#define HB_INLINE static inline __attribute__((always_inline))
#define HB_LIKELY(x) __builtin_expect(!!(x), 1)
#define HB_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Operations between two looks at the stop flag; the QSBR designs report a quiescent state
 * once per batch (the "every N operations" of the issue: N = HB_BATCH). */
#define HB_BATCH 256

#if defined(__SANITIZE_THREAD__)
#define HB_LOAD_ORDER __ATOMIC_ACQUIRE
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HB_LOAD_ORDER __ATOMIC_ACQUIRE
#endif
#endif
#ifndef HB_LOAD_ORDER
#define HB_LOAD_ORDER __ATOMIC_RELAXED
#endif

/*
 * Default reader load: a single load whose result is dereferenced; the address dependency
 * orders the loads through it on every CPU but Alpha (OLS 2002, Appendix B). It pairs with the
 * store-release of HB_PUBLISH. Lock designs read under their lock; the load is then plain.
 */
#ifndef HB_DEREF
#define HB_DEREF(p) __atomic_load_n(&(p), HB_LOAD_ORDER)
#endif
/* Publication: store-release, so the element's initialisation is visible before the pointer
 * to it. Pairs with HB_DEREF in readers. */
#ifndef HB_PUBLISH
#define HB_PUBLISH(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#endif
/* Update-side loads and stores of links, under the bucket's updater lock. The stores readers
 * may race with are single atomic stores, so a reader never sees a torn pointer. */
#define HB_LOAD_UPD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define HB_STORE_UPD(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

struct hb_node {
	struct hb_node *next, *prev;
};

#define HB_MAGIC_LIVE 0x4c495645u /* "LIVE" */
#define HB_MAGIC_DEAD 0xdeadbeefu
#define HB_POISON_PTR ((struct hb_node *)(uintptr_t)0xdead000000000100ull)
/* The data an element of key k carries; a reader that finds key k checks it in check mode,
 * which catches a reader seeing an element before its initialisation. */
#define HB_DATA(k) ((unsigned long)(k)*0x9e3779b97f4a7c15ul + 1)

/* The part of an element every design shares; designs embed it first in their own element
 * type and add what they need (struct rcu_head, ...). */
struct hb_el {
	struct hb_node node; /* first: a node pointer is an element pointer */
	unsigned long key;
	unsigned long data;
	unsigned int refcnt; /* refcnt design only */
	unsigned int magic;  /* HB_MAGIC_LIVE while the element may be reached */
};

HB_INLINE struct hb_el *hb_el_of(struct hb_node *n)
{
	return (struct hb_el *)(void *)n;
}

HB_INLINE void hb_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- fatal errors and check mode ------------------------------------------------------- */

__attribute__((noreturn, format(printf, 1, 2), cold)) void hb_fatal(const char *fmt, ...);

/* A reader reached element e: in check mode it must be live and consistent. */
HB_INLINE void hb_check_el(const struct hb_el *e)
{
#if HB_CHECK
	unsigned int m = __atomic_load_n(&e->magic, __ATOMIC_RELAXED);
	if (HB_UNLIKELY(m != HB_MAGIC_LIVE))
		hb_fatal("check: a reader reached a freed element (key %lu, magic %#x): "
			 "it was freed before a grace period ended",
			 e->key, m);
#else
	(void)e;
#endif
}

/* A reader found e for key: in check mode its data must match, and it must stay live while
 * the reader dwells on it a little (which widens the window in which an element freed before
 * the end of a grace period is caught). */
HB_INLINE void hb_check_found(const struct hb_el *e, unsigned long key)
{
#if HB_CHECK
	if (HB_UNLIKELY(e->data != HB_DATA(key)))
		hb_fatal("check: key %lu found with data %#lx: element seen before its "
			 "initialisation was published",
			 key, e->data);
	for (int i = 0; i < 32; i++)
		hb_relax();
	hb_check_el(e);
#else
	(void)e;
	(void)key;
#endif
}

/* Allocate and initialise an element of `size` bytes (the design's element type). */
struct hb_el *hb_el_new(size_t size, unsigned long key);
/* Free an element no reader can reach any more. Check mode: poison it and keep it in a
 * quarantine for a while, so a late reader finds the poison rather than reused memory. */
void hb_el_free(struct hb_el *e);
/* Free what the quarantine still holds (end of a run). */
void hb_quarantine_drain(void);

/* ---- chains --------------------------------------------------------------------------- */

HB_INLINE void hb_chain_init(struct hb_node *h)
{
	h->next = h;
	h->prev = h;
}

/*
 * Insert n at the head of the chain (list_add_rcu). n is initialised first; the store-release
 * of head->next publishes it (pairs with HB_DEREF in readers). The back link is not followed
 * by readers and is written after.
 */
HB_INLINE void hb_chain_add(struct hb_node *n, struct hb_node *head)
{
	struct hb_node *first = HB_LOAD_UPD(head->next);

	n->next = first;
	n->prev = head;
	HB_PUBLISH(head->next, n);
	first->prev = n;
}

/*
 * Unlink n (list_del_rcu). n->next is left intact: a reader standing on n still reaches the
 * rest of the chain and the sentinel. n->prev is poisoned: readers never walk backwards.
 * The store that skips n is a single relaxed atomic store: it publishes nothing new (the
 * successor was published when it was inserted).
 */
HB_INLINE void hb_chain_del(struct hb_node *n)
{
	struct hb_node *next = n->next, *prev = n->prev;

	HB_STORE_UPD(prev->next, next);
	next->prev = prev;
	n->prev = HB_POISON_PTR;
}

/* Reader-side search: dependency-ordered loads only. */
HB_INLINE struct hb_el *hb_chain_find(struct hb_node *head, unsigned long key)
{
	for (struct hb_node *p = HB_DEREF(head->next); p != head; p = HB_DEREF(p->next)) {
		struct hb_el *e = hb_el_of(p);

		hb_check_el(e);
		if (e->key == key)
			return e;
	}
	return NULL;
}

/* Update-side search, with the bucket's updater lock held. */
HB_INLINE struct hb_el *hb_chain_find_upd(struct hb_node *head, unsigned long key)
{
	for (struct hb_node *p = HB_LOAD_UPD(head->next); p != head; p = HB_LOAD_UPD(p->next)) {
		if (hb_el_of(p)->key == key)
			return hb_el_of(p);
	}
	return NULL;
}

/* ---- random numbers: xorshift64, one per thread ---------------------------------------- */

HB_INLINE uint64_t hb_rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* ---- a run: what the driver asks a design to do ---------------------------------------- */

struct hb_run;

struct hb_thread {
	struct hb_run *run;
	unsigned int id;
	uint64_t seed;
	void *dstate; /* design's per-thread state */
	/* results, written by the thread once at the end */
	unsigned long lookups, updates, misses, sum;
	pthread_t tid;
} HB_ALIGNED;

struct hb_run {
	/* parameters */
	unsigned int nthreads;  /* threads actually started */
	unsigned long nbuckets; /* power of two */
	unsigned long mask;
	uint64_t upd_thresh; /* an op is an update when (rng >> 32) < upd_thresh */
	double duration;     /* seconds */
	uint64_t seed;
	/* control, each on its own line: read by every thread in the loop */
	int ready HB_ALIGNED;
	int go HB_ALIGNED;
	int stop HB_ALIGNED;
	/* results */
	double seconds HB_ALIGNED;
	unsigned long lookups, updates, misses;
	double cpu_seconds;    /* process CPU time during the run: threads, workers, all */
	double settle_seconds; /* time the design needed after the run (barrier, frees) */
	struct hb_thread *threads;
};

HB_INLINE bool hb_stopped(struct hb_run *run)
{
	return __atomic_load_n(&run->stop, __ATOMIC_RELAXED) != 0;
}

/* Called by each thread once it is ready; returns when the driver says go. */
void hb_wait_go(struct hb_thread *th);
/* Start run->nthreads threads running fn, time them for run->duration, join them, sum their
 * counters into run. */
void hb_run_threads(struct hb_run *run, void *(*fn)(void *));
double hb_now(void);
double hb_process_cpu(void); /* CPU time of the whole process, seconds */

/* A design, as the driver sees it. */
struct hb_design {
	const char *name;        /* CSV id */
	const char *label;       /* for humans */
	const char *kind;        /* "ideal", "lock", "rcu" (grace), "peer" (liburcu) */
	const char *loop_symbol; /* the measured loop's function, for callgrind --toggle-collect */
	bool single_thread;      /* ideal: always run with one thread, scaled by the thread count */
	bool hidden;             /* only run when named (the deliberately broken design) */
	const char *(*unavailable)(void); /* NULL, or returns NULL when available, else why not */
	void (*run)(struct hb_run *run);
};

/* d_table_init()/d_table_fini() (loop.h) for a design whose struct hb_bucket has a
 * pthread_spinlock_t `lock` taken by updaters only: rcudesign.h, d_refcnt.c, d_hazptr.c. */
#define HB_SPIN_BUCKETS()                                                                         \
	static inline void d_table_init(struct hb_bucket *b, unsigned long n, struct hb_run *run) \
	{                                                                                         \
		(void)run;                                                                        \
		for (unsigned long i = 0; i < n; i++)                                             \
			if (pthread_spin_init(&b[i].lock, PTHREAD_PROCESS_PRIVATE))               \
				hb_fatal("pthread_spin_init failed");                             \
	}                                                                                         \
	static inline void d_table_fini(struct hb_bucket *b, unsigned long n)                     \
	{                                                                                         \
		for (unsigned long i = 0; i < n; i++)                                             \
			pthread_spin_destroy(&b[i].lock);                                         \
	}

#endif /* HB_H */
