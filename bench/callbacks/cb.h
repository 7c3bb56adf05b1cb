/* SPDX-License-Identifier: MIT */
/*
 * Callback-engine benchmark: one design per translation unit. This header includes no RCU
 * header, so grace's and liburcu's (both define call_rcu, rcu_barrier and struct rcu_head) never
 * meet in one translation unit.
 *
 * Each design exports a struct cb_design. The driver (main.c) reaches a design through
 * pointers, but only around measured loops: every loop (enqueue, flood, paced producer, reader)
 * is instantiated in the design's unit from the macros below and calls that design's call_rcu
 * directly, so nothing indirect is measured except the engine's own callback invocation.
 *
 * The callback object is the same for every design: the flavor's struct rcu_head at offset 0
 * (16 bytes in grace and in liburcu; each unit checks it fits), then what the callbacks touch.
 */
#ifndef GRACE_BENCH_CALLBACKS_H
#define GRACE_BENCH_CALLBACKS_H

#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "bench.h"

#define CB_HEAD_BYTES 16

struct cb_obj {
	void *head_[CB_HEAD_BYTES / sizeof(void *)]; /* the design's struct rcu_head */
	uint64_t t0;                                 /* enqueue time in ns (latency samples only) */
	uint32_t busy; /* 1 from enqueue until the callback ran (pool objects; futex word) */
	uint32_t slot; /* index of the latency sample in cb_lat_ns */
};

/* Latency samples, written by callbacks (each sample by one callback, into its own slot) and read
 * by the driver after rcu_barrier(), which orders the callbacks before its return. */
extern uint64_t *cb_lat_ns;

/* ---- what the callbacks do (each design wraps these in its rcu_head callback) ---------------- */

/* Release the pool slot: the acquire load of busy by the producer that reuses the object pairs
 * with this release, so the callback is done with the object before it is queued again. */
static inline void cb_done_flag(struct cb_obj *o)
{
	__atomic_store_n(&o->busy, 0u, __ATOMIC_RELEASE);
}

/* A latency sample: enqueue-to-invoke time, then release the slot. */
static inline void cb_done_lat(struct cb_obj *o)
{
	cb_lat_ns[o->slot] = bench_now_ns() - o->t0;
	__atomic_store_n(&o->busy, 0u, __ATOMIC_RELEASE);
}

/* A latency sample whose queuer sleeps on busy (futex) until the callback ran. The object is
 * static in the driver, so waking after the store is safe even if the waiter already went on. */
static inline void cb_done_lat_wake(struct cb_obj *o)
{
	cb_done_lat(o);
	syscall(SYS_futex, &o->busy, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void cb_done_free(struct cb_obj *o)
{
	free(o);
}

/* ---- producers ----------------------------------------------------------------------------- */

struct cb_prod {
	struct cb_obj *pool; /* ring of preallocated objects (flood, paced) */
	size_t npool;
	size_t next;           /* next pool index */
	const int *stop;       /* the loop returns once it reads non-zero */
	uint64_t rate;         /* paced: offered callbacks per second */
	uint64_t t_start;      /* paced: time of call 0 (ns, monotonic) */
	uint64_t sample_every; /* paced: every k-th callback is a latency sample */
	uint64_t tick_ns;      /* paced: least time between two wake-ups of the producer */
	uint32_t nsamples, max_samples;
	uint64_t stalls; /* times the next pool object was still queued */
};

/* The pool ran out (every object still waits for its callback): sleep briefly rather than spin,
 * the worker that must run the callbacks may share this CPU. Outside the measured loops. */
BENCH_NOINLINE void cb_pool_wait(struct cb_prod *p, struct cb_obj *o);
/* Sleep until the absolute monotonic time t (ns). */
void cb_sleep_until(uint64_t t);

static inline struct cb_obj *cb_pool_get(struct cb_prod *p, size_t *i)
{
	struct cb_obj *o = &p->pool[*i];

	/* Acquire: pairs with the release in cb_done_*(). */
	if (__builtin_expect(__atomic_load_n(&o->busy, __ATOMIC_ACQUIRE) != 0, 0))
		cb_pool_wait(p, o);
	__atomic_store_n(&o->busy, 1u, __ATOMIC_RELAXED); /* published by call_rcu's release */
	if (++*i == p->npool)
		*i = 0;
	return o;
}

/*
 * The measured enqueue loop: CALL(o) on objs[0..n), nothing else. Objects come preallocated and
 * are not reused before rcu_barrier() (the driver's job), so the loop is call_rcu alone.
 */
#define CB_DEFINE_ENQUEUE(sym, CALL)                                 \
	uint64_t sym(struct cb_obj *objs, uint64_t n);               \
	BENCH_NOINLINE uint64_t sym(struct cb_obj *objs, uint64_t n) \
	{                                                            \
		for (uint64_t i = 0; i < n; i++)                     \
			CALL(&objs[i]);                              \
		return n;                                            \
	}

/* Flood from a pool: CALL(o) as fast as possible until *stop, reusing each object once its
 * callback has run; returns the number of calls. */
#define CB_DEFINE_FLOOD(sym, CALL)                                     \
	uint64_t sym(struct cb_prod *p);                               \
	BENCH_NOINLINE uint64_t sym(struct cb_prod *p)                 \
	{                                                              \
		uint64_t n = 0;                                        \
		size_t i = p->next;                                    \
		while (!__atomic_load_n(p->stop, __ATOMIC_RELAXED)) {  \
			for (int k = 0; k < 64; k++) {                 \
				struct cb_obj *o = cb_pool_get(p, &i); \
				CALL(o);                               \
			}                                              \
			n += 64;                                       \
		}                                                      \
		p->next = i;                                           \
		return n;                                              \
	}

/* Flood with malloc'd objects whose callback frees them. */
#define CB_DEFINE_FLOOD_FREE(sym, CALL)                                                 \
	uint64_t sym(struct cb_prod *p);                                                \
	BENCH_NOINLINE uint64_t sym(struct cb_prod *p)                                  \
	{                                                                               \
		uint64_t n = 0;                                                         \
		while (!__atomic_load_n(p->stop, __ATOMIC_RELAXED)) {                   \
			for (int k = 0; k < 64; k++) {                                  \
				struct cb_obj *o = (struct cb_obj *)malloc(sizeof(*o)); \
				if (!o)                                                 \
					abort();                                        \
				CALL(o);                                                \
			}                                                               \
			n += 64;                                                        \
		}                                                                       \
		return n;                                                               \
	}

/*
 * Paced producer: call k is due at t_start + k / rate. The loop queues every call that is due
 * (at most 1024 before looking at the clock and the stop flag again), then sleeps until the next
 * one is due, but at least tick_ns after its last wake-up: above 1 / tick_ns calls per second
 * they come in bursts of rate x tick_ns. Without the tick a producer woke for every call and
 * that alone cost it 35-42 us of CPU per call at 10^4/s on the 2-CPU VM, varying by +-3 us
 * from run to run: more than the whole cost of the callbacks it was there to measure. Every
 * sample_every-th call (up to max_samples) is a latency sample (CALL_LAT), the others CALL.
 */
#define CB_DEFINE_PACED(sym, CALL, CALL_LAT)                                                \
	uint64_t sym(struct cb_prod *p);                                                    \
	BENCH_NOINLINE uint64_t sym(struct cb_prod *p)                                      \
	{                                                                                   \
		uint64_t n = 0, countdown = 0, woke = p->t_start;                           \
		size_t i = p->next;                                                         \
		const double ns_per = 1e9 / (double)p->rate;                                \
		while (!__atomic_load_n(p->stop, __ATOMIC_RELAXED)) {                       \
			uint64_t now = bench_now_ns();                                      \
			uint64_t due = (uint64_t)((double)(now - p->t_start) / ns_per) + 1; \
			if (n >= due) {                                                     \
				uint64_t t = p->t_start + (uint64_t)((double)n * ns_per);   \
				if (t < woke + p->tick_ns)                                  \
					t = woke + p->tick_ns;                              \
				cb_sleep_until(t);                                          \
				woke = t;                                                   \
				continue;                                                   \
			}                                                                   \
			uint64_t burst = due - n > 1024 ? 1024 : due - n;                   \
			for (uint64_t b = 0; b < burst; b++) {                              \
				struct cb_obj *o = cb_pool_get(p, &i);                      \
				if (countdown == 0 && p->nsamples < p->max_samples) {       \
					countdown = p->sample_every;                        \
					o->slot = p->nsamples++;                            \
					o->t0 = bench_now_ns();                             \
					CALL_LAT(o);                                        \
				} else {                                                    \
					CALL(o);                                            \
				}                                                           \
				countdown--;                                                \
			}                                                                   \
			n += burst;                                                         \
		}                                                                           \
		p->next = i;                                                                \
		return n;                                                                   \
	}

/*
 * Busy reader: short sections that dereference *pp and load a word, each followed by
 * CB_READER_OUTSIDE iterations of an empty loop (tens of nanoseconds) outside any section, until
 * *stop. The reader spends most of its time outside sections, as readers of real programs do: a
 * reader that never leaves its section holds every grace period for as long as the scheduler
 * keeps it off the CPU (tens of milliseconds on a loaded machine), whatever the RCU.
 */
#define CB_READER_OUTSIDE 64
#define CB_DEFINE_READER(sym, LOCK, UNLOCK, DEREF, pp)    \
	BENCH_DEFINE_READER(sym, LOCK, UNLOCK, DEREF, pp, \
			    for (int k = 0; k < CB_READER_OUTSIDE; k++) BENCH_CLOBBER())

/* ---- designs ------------------------------------------------------------------------------- */

enum cb_policy {
	CB_POLICY_DEFAULT,
	CB_POLICY_POLL,
	CB_POLICY_BATCH,
	CB_POLICY_ADAPTIVE,
	CB_POLICY_LAZY
};

#define CB_STATS_GP 1u     /* grace_periods and waits are valid */
#define CB_STATS_WORKER 2u /* worker_cpu_ns is valid */

struct cb_engine_stats {
	unsigned int have; /* CB_STATS_* */
	uint64_t grace_periods, worker_cpu_ns, waits;
};

struct cb_setup {
	enum cb_policy policy;
	unsigned int period_us;
	size_t soft, hard; /* per-CPU callback limits; 0: the engine's defaults */
};

struct cb_design {
	const char *name;           /* command-line name */
	const char *enqueue_symbol; /* the measured enqueue loop, for valgrind --toggle-collect */
	const char *label;          /* one line for the report */
	/* Once per process, before any call: choose the policy (period in us for BATCH and LAZY;
	 * 0 for LAZY: its default) and, if soft is not 0, the engine's per-CPU callback limits.
	 * Returns 0, or -1 if the design has no such policy or no such setting. */
	int (*setup)(const struct cb_setup *s);
	void (*teardown)(void);    /* after the last barrier */
	void (*thread_init)(void); /* every thread that queues, waits or reads */
	void (*thread_fini)(void);
	uint64_t (*enqueue)(struct cb_obj *objs, uint64_t n);
	uint64_t (*flood)(struct cb_prod *p);
	uint64_t (*flood_free)(struct cb_prod *p);
	uint64_t (*paced)(struct cb_prod *p);
	/* The hurried twin of paced (call_rcu_hurry()); NULL where the design has none. */
	uint64_t (*paced_hurry)(struct cb_prod *p);
	void (*call_lat_wake)(struct cb_obj *o); /* one call whose callback is cb_done_lat_wake */
	void (*barrier)(void);
	uint64_t (*reader)(const int *stop);
	/* The engine's counters that the design can read (see have). */
	void (*stats)(struct cb_engine_stats *s);
};

extern const struct cb_design cb_design_grace;
#ifdef CB_HAVE_URCU
extern const struct cb_design cb_design_urcu_memb;
extern const struct cb_design cb_design_urcu_memb_percpu;
#endif

#endif /* GRACE_BENCH_CALLBACKS_H */
