/* SPDX-License-Identifier: MIT */
/*
 * smr_bench: lock-free data structures under a safe-memory-reclamation scheme, the benchmark of
 * the reclamation literature (DEBRA, Brown, PODC 2015; "Are Your Epochs Too Epic?", PPoPP 2024),
 * written here from the papers' descriptions.
 *
 * What every part shares: the node header, the per-thread state, the run descriptor, the garbage
 * counters, the check mode (poisoned, quarantined frees; readers that validate every node they
 * reach) and the design registry.
 *
 * The parts:
 *   ds_list.h   Harris-Michael sorted linked list (Michael, SPAA 2002)
 *   ds_hash.h   a fixed array of buckets, each a Harris-Michael list
 *   ds_bst.h    Natarajan-Mittal external binary search tree (PPoPP 2014)
 *   design.h    the measured loops and the registration of one design, instantiated by each
 *               reclaimer file for its own inline begin/end/retire (no indirect call per
 *               operation)
 *   rec_*.c     one reclaimer each (the interface is described in design.h)
 *   main.c      the driver: one design, one structure, one point per process
 *
 * Every rec_*.c is compiled twice into the one program: once plain, once with SMR_CHECK=1 (the
 * check mode that --check selects). The layout of a node is the same in both, so the memory
 * figures do not depend on the mode.
 */
#ifndef SMR_H
#define SMR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SMR_CHECK
#define SMR_CHECK 0
#endif

/* ThreadSanitizer: it does not model standalone fences (GCC warns, -Wtsan), so the code that
 * needs one (rec_ebr.c) uses seq_cst accesses instead under it. */
#if defined(__SANITIZE_THREAD__)
#define SMR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SMR_TSAN 1
#endif
#endif
#ifndef SMR_TSAN
#define SMR_TSAN 0
#endif

#define SMR_LINE 64
#define SMR_ALIGNED __attribute__((aligned(SMR_LINE)))
#define SMR_INLINE static inline __attribute__((always_inline))
#define SMR_LIKELY(x) __builtin_expect(!!(x), 1)
#define SMR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Operations between two looks at the stop flag. */
#define SMR_BATCH 64

/* ---- nodes ----------------------------------------------------------------------------------- */

/*
 * The reclaimer's part of a node, at offset 0: room for a struct rcu_head (grace's and
 * liburcu's are two pointers each; every reclaimer file asserts that its own fits) or the
 * link of a limbo bag. Readers never touch it, so a reclaimer may write it as soon as the node
 * is retired.
 */
struct smr_rhead {
	void *w[2];
};

/* Every node of every structure starts with this. */
struct smr_node {
	struct smr_rhead rh; /* offset 0: a node pointer is an rcu_head pointer */
	uint32_t magic;      /* SMR_LIVE, SMR_RETIRED or SMR_DEAD (checked in check mode only) */
	uint32_t pad_;
	uint64_t key; /* immutable once the node is published */
};

#define SMR_LIVE 0x4c495645u    /* "LIVE": allocated, maybe reachable */
#define SMR_RETIRED 0x52455449u /* "RETI": unlinked and retired, not yet freed */
#define SMR_DEAD 0xdeadbeefu    /* freed (check mode: poisoned, in quarantine) */
/* What a freed node's links hold in check mode: a reader that loads it stops at once. The low
 * bits are clear, so masking the structures' mark bits leaves it intact. */
#define SMR_POISON ((uintptr_t)0xdead000000000100ull)

/* ---- random numbers: xorshift64*, one per thread --------------------------------------------- */

SMR_INLINE uint64_t smr_rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

SMR_INLINE void smr_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- garbage counters ------------------------------------------------------------------------ */

/*
 * Retired and freed nodes, per thread: every thread that retires or frees (the benchmark's
 * workers, and the libraries' callback threads, which free in callbacks) claims a slot of its
 * own on first use and is its only writer; the sampler sums the slots. Garbage outstanding is
 * the sum of retired minus the sum of freed. Relaxed: the counters publish nothing, and the
 * sampler tolerates a sum taken over a few microseconds.
 */
struct smr_ctr {
	uint64_t retired;
	uint64_t freed;
} SMR_ALIGNED;

#define SMR_MAX_CTRS 4096
extern struct smr_ctr smr_ctrs[SMR_MAX_CTRS];
extern __thread struct smr_ctr *smr_my_ctr;
struct smr_ctr *smr_ctr_claim(void);
/* Sums over every slot claimed so far. */
void smr_ctr_sum(uint64_t *retired, uint64_t *freed);

SMR_INLINE struct smr_ctr *smr_ctr(void)
{
	struct smr_ctr *c = smr_my_ctr;

	if (SMR_UNLIKELY(!c))
		c = smr_ctr_claim();
	return c;
}

/* Single writer: a relaxed load and store, no read-modify-write. */
SMR_INLINE void smr_ctr_add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* ---- check mode ------------------------------------------------------------------------------ */

/* A check failed: the message on stderr, then exit status 1 (the whole process at once). */
__attribute__((noreturn, format(printf, 1, 2), cold)) void smr_fail(const char *fmt, ...);
/* Check mode's free: poison the node and keep it in a quarantine for a while, so that a late
 * reader finds the poison, not reused memory. */
void smr_check_free(struct smr_node *n);

/* A node pointer a thread is about to dereference: in check mode, it must not be the poison a
 * freed node's links hold, and the node must not be freed (it may be retired: a reader that
 * started before the unlink may still stand on it). */
SMR_INLINE void smr_check_node(const struct smr_node *n)
{
#if SMR_CHECK
	if (SMR_UNLIKELY((uintptr_t)n == SMR_POISON))
		smr_fail("check: a thread reached a freed node (followed a link of a freed node): "
			 "it was freed before every reader that could reach it had finished");
	/* Relaxed: a check, which orders nothing; a poisoned node is caught whenever the poison
	 * store is seen, and the quarantine keeps the memory from being reused meanwhile. */
	uint32_t m = __atomic_load_n(&n->magic, __ATOMIC_RELAXED);
	if (SMR_UNLIKELY(m != SMR_LIVE && m != SMR_RETIRED))
		smr_fail("check: a thread reached a freed node (key %llu, magic %#x): it was freed "
			 "before every reader that could reach it had finished",
			 (unsigned long long)n->key, m);
#else
	(void)n;
#endif
}

/* A reader found node n: in check mode it dwells on it a little, then checks it again, which
 * widens the window in which a node freed too early is caught. */
SMR_INLINE void smr_check_dwell(const struct smr_node *n)
{
#if SMR_CHECK
	for (int i = 0; i < 16; i++)
		smr_relax();
	smr_check_node(n);
#else
	(void)n;
#endif
}

/* ---- allocation ------------------------------------------------------------------------------ */

SMR_INLINE void *smr_node_alloc(size_t size, uint64_t key)
{
	struct smr_node *n = (struct smr_node *)malloc(size);

	if (SMR_UNLIKELY(!n)) {
		fputs("smr_bench: out of memory\n", stderr);
		exit(1);
	}
	n->magic = SMR_LIVE;
	n->key = key;
	return n;
}

/* A node that was never published (an insert that lost, or found its key): plain free. */
SMR_INLINE void smr_node_discard(struct smr_node *n)
{
	free(n);
}

/* Free a retired node once no reader can reach it: what reclaimers and their callbacks call.
 * Counted in the calling thread's slot. */
SMR_INLINE void smr_node_free(struct smr_node *n)
{
	smr_ctr_add(&smr_ctr()->freed, 1);
#if SMR_CHECK
	smr_check_free(n);
#else
	free(n);
#endif
}

/* ---- threads and runs ------------------------------------------------------------------------ */

/* A growable array of nodes retired inside an operation and handed to the library after it,
 * outside the read-side section (free_rcu_mightsleep, defer_rcu, free_qsbr). */
struct smr_stash {
	struct smr_node **v;
	size_t n, cap;
};

SMR_INLINE void smr_stash_push(struct smr_stash *s, struct smr_node *n)
{
	if (SMR_UNLIKELY(s->n == s->cap)) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = (struct smr_node **)realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			fputs("smr_bench: out of memory\n", stderr);
			exit(1);
		}
	}
	s->v[s->n++] = n;
}

struct smr_run;

/* Room for a reclaimer's per-thread state (struct rec_thread of each rec_*.c, asserted). */
#define SMR_REC_BYTES 256

struct smr_thread {
	struct smr_run *run;
	unsigned int id; /* workers 0..nthreads-1; the prefill thread is nthreads */
	uint64_t rng;
	/* results, written by the thread itself */
	uint64_t ops, lookups, found, inserts, deletes; /* inserts, deletes: those that succeeded */
	uint64_t t_end_ns;                              /* when its loop saw the stop flag */
	int32_t *delta; /* check mode: per key, successful inserts minus successful deletes */
	struct smr_stash stash;
	pthread_t tid;
	unsigned char rec[SMR_REC_BYTES] SMR_ALIGNED; /* the reclaimer's */
} SMR_ALIGNED;

/* The reclaimer's per-thread state (its struct rec_thread, in smr_thread.rec). */
#define rec_of(t) ((struct rec_thread *)(void *)(t)->rec)

struct smr_run {
	/* parameters */
	uint64_t range;      /* keys in [0, range) */
	uint32_t upd_thresh; /* an operation is an update when its 32-bit dice is below this */
	unsigned int nthreads;
	int ds;                     /* SMR_LIST, SMR_HASH or SMR_BST */
	bool check;                 /* check mode */
	struct smr_thread *threads; /* nthreads + 1: the prefill thread last */
	/* control, each on its own line: read by every thread */
	int ready SMR_ALIGNED;
	int go SMR_ALIGNED;
	int stop SMR_ALIGNED;
};

SMR_INLINE bool smr_stopped(const struct smr_run *run)
{
	/* Relaxed: the flag publishes nothing; the join that follows orders the results. */
	return __atomic_load_n(&run->stop, __ATOMIC_RELAXED) != 0;
}

/* ---- designs --------------------------------------------------------------------------------- */

enum { SMR_LIST, SMR_HASH, SMR_BST, SMR_NDS };

/* One structure, instantiated for one design (design.h). */
struct smr_ds_ops {
	void *(*create)(struct smr_run *run);
	/* Insert random keys until n are present (the calling thread's begin/end around each). */
	void (*prefill)(void *ds, struct smr_thread *t, uint64_t n);
	/* The measured loop, until the run's stop flag. */
	void (*loop)(void *ds, struct smr_thread *t);
	/* Single-threaded, after the run: the structure's invariants hold, every reachable node is
	 * live (not retired, not freed); fills present[key]. Returns the number of keys, or calls
	 * smr_fail(). */
	uint64_t (*verify)(void *ds, struct smr_run *run, uint8_t *present);
	/* Single-threaded: free every reachable node and the structure. */
	void (*destroy)(void *ds);
	/* The stalled reader (--stall): begin an operation, look a key up, then, still inside
	 * the operation, call wait(arg) (which returns at the run's end); then end it. */
	void (*stall)(void *ds, struct smr_thread *t, void (*wait)(void *arg), void *arg);
};

#define SMR_F_CHECK 1u        /* compiled in check mode */
#define SMR_F_HIDDEN 2u       /* a check-mode self-test (broken on purpose): run only by name */
#define SMR_F_FREES 4u        /* every free goes through smr_node_free(): garbage is counted */
#define SMR_F_GPS 8u          /* gps() counts grace periods (or epochs) */
#define SMR_F_NEVER_FREES 16u /* the baseline that leaks */

struct smr_design {
	const char *name;  /* CSV id */
	const char *label; /* for humans */
	int order;         /* place in `smr_bench list` and in the report */
	unsigned int flags;
	/* Process-wide, before any thread of the run (run->nthreads is set). */
	void (*init)(struct smr_run *run);
	/* After every thread's thread_fini: free whatever is still retired (check mode only; a
	 * benchmark process just exits). */
	void (*fini)(struct smr_run *run);
	void (*thread_init)(struct smr_thread *t);
	void (*thread_fini)(struct smr_thread *t);
	/* Grace periods (or epoch advances) completed so far, when SMR_F_GPS. */
	uint64_t (*gps)(void);
	/* NULL, or the most retired nodes that may wait unfreed now, whatever readers do (the
	 * hazard pointers' H*T + one batch per thread), to print beside the measured garbage. */
	uint64_t (*bound)(void);
	struct smr_ds_ops ds[SMR_NDS];
	/* A structure the design does not run on (its ds[] entry is empty): why, for the output.
	 * NULL where it runs. */
	const char *skip[SMR_NDS];
};

/* Called by every design's constructor (design.h). */
void smr_register(const struct smr_design *d);

#endif /* SMR_H */
