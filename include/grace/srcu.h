/* SPDX-License-Identifier: MIT */
/*
 * grace srcu flavor: sleepable RCU with independent domains.
 *
 * Each struct srcu_struct is a domain of its own: a grace period of one domain waits only for
 * the readers of that domain, so a reader that sleeps for a long time (inside a section it may
 * block, take locks, do I/O) delays nobody but the updaters of its domain. Readers need no
 * registration, run on any thread, and may be migrated between lock and unlock.
 *
 * Read side: srcu_read_lock() increments a per-CPU lock counter of the domain's current index on
 * the CPU it runs on, inside a restartable sequence (rseq: no atomic instruction, no fence), and
 * returns the index; srcu_read_unlock() increments the unlock counter of that index on the CPU it
 * runs on then. A grace period flips the index and waits until the unlock sum equals the lock sum
 * on the old one. Without rseq (old kernels, GRACE_NO_RSEQ=1, TSan mode, other architectures)
 * separate per-CPU counters are incremented with atomics; without membarrier(2) readers add full
 * fences (both chosen at start-up, see grace_srcu_mode()).
 *
 * The algorithm and its correctness argument: src/flavor/srcu.c.
 *
 * Names: the exported functions are grace_srcu_*; the kernel names (init_srcu_struct,
 * srcu_read_lock, synchronize_srcu, call_srcu, ...) are static inline aliases.
 */
#ifndef GRACE_SRCU_H
#define GRACE_SRCU_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/engine.h>
#include <grace/pointer.h>
#include <grace/internal/rseq.h>
#include <grace/internal/annotate.h>

GRACE_BEGIN_DECLS

/* Per-CPU counters of one domain: one cache line per possible CPU. */
struct grace__srcu_cpu {
	uint64_t lock[2]; /* rseq increments by threads running on this CPU only */
	uint64_t unlock[2];
	uint64_t alock[2]; /* atomic increments (threads without rseq), from any CPU */
	uint64_t aunlock[2];
} GRACE_ALIGNED_CACHE;

struct grace__srcu_state; /* src/flavor/srcu.c */

/*
 * A domain's wake slot: bit i of `waiting` is set while the domain's updater sleeps until index
 * i drains, and the updater's futex word lives next to it (src/flavor/srcu.c). Slots are library
 * memory that is never freed: a domain gets one when its state is set up and gives it back at
 * cleanup_srcu_struct(), for another domain to use. So srcu_read_unlock(), which loads the
 * slot's address from the domain BEFORE its unlock increment (while its section still keeps the
 * domain alive), touches only the slot after it: the increment may let synchronize_srcu()
 * return, and the program may then clean up and free the domain.
 */
struct grace__srcu_wake {
	uint32_t waiting;
};

/*
 * A domain. Treat as opaque. One cache line, read by every reader; written at set-up, once per
 * grace period (cur, idx) and while an updater sleeps (waiting). The inline read side loads
 * three words of it: cur (lock), or fast and pad_[0] (unlock), and rseq. pad_[0] holds the
 * address of the domain's wake slot (struct grace__srcu_wake): the field keeps its 0.2.0 name
 * and type (docs/abi.md). `waiting` is still set, for programs built against 0.2.0's header,
 * whose inline srcu_read_unlock() reads it after its increment.
 */
struct srcu_struct {
	uint64_t *cur;                /* &fast[0].lock[idx & 1]: what srcu_read_lock increments;
				       * NULL when the inline fast path is off (fallback modes) */
	struct grace__srcu_cpu *fast; /* per-CPU counters, when the inline fast path is on */
	struct grace__rseq_ref rseq;  /* the rseq area's thread-pointer offset and the slot count */
	uint32_t idx;                 /* bit 0: the index new readers use */
	uint32_t waiting;             /* bit i: an updater sleeps until index i drains (for
				       * 0.2.0's inline unlock; the library reads the slot's) */
	struct grace__srcu_state *state;
	uint32_t magic;
	uint32_t ncpus;   /* per-CPU slots in `fast` */
	uint64_t pad_[2]; /* [0]: the wake slot's address, set with `fast` (see above) */
} GRACE_ALIGNED_CACHE;

/* The domain's wake slot (pad_[0]); valid once `fast` or `state` is seen non-NULL. */
#define GRACE__SRCU_WAKE(ssp) \
	((struct grace__srcu_wake *)(uintptr_t)grace_load_relaxed(&(ssp)->pad_[0]))

#define GRACE__SRCU_MAGIC_STATIC 0x53524353u /* DEFINE_SRCU: set up on first use */
#define GRACE__SRCU_MAGIC_LIVE 0x5352434cu   /* init_srcu_struct() done */
#define GRACE__SRCU_MAGIC_DEAD 0x53524344u   /* cleanup_srcu_struct() done */

/* Static initialiser (C and C++): the domain allocates its counters on first use. */
#define GRACE_SRCU_INITIALIZER                                        \
	{                                                             \
		0, 0, { 0, 0 }, 0, 0, 0, GRACE__SRCU_MAGIC_STATIC, 0, \
		{                                                     \
			0, 0                                          \
		}                                                     \
	}
/* Define a domain with static storage duration: no init_srcu_struct() needed. */
#define DEFINE_SRCU(name) struct srcu_struct name = GRACE_SRCU_INITIALIZER
#define DEFINE_STATIC_SRCU(name) static struct srcu_struct name = GRACE_SRCU_INITIALIZER

/* Out-of-line parts of the read side (exported only for the inline functions below). */
GRACE_API int grace__srcu_read_lock_slow(struct srcu_struct *ssp);
GRACE_API void grace__srcu_read_unlock_slow(struct srcu_struct *ssp, int idx);
GRACE_API void grace__srcu_unlock_wake(struct srcu_struct *ssp); /* 0.2.0's inline unlock */
GRACE_API void grace__srcu_wake_slot(struct grace__srcu_wake *w);
/* Debug builds: the same, plus per-thread tracking of open sections (misuse checks). */
GRACE_API int grace__srcu_read_lock_dbg(struct srcu_struct *ssp);
GRACE_API void grace__srcu_read_unlock_dbg(struct srcu_struct *ssp, int idx);
GRACE_API int grace__srcu_dbg_held(const struct srcu_struct *ssp);
GRACE_API GRACE_NORETURN void grace__srcu_deref_outside(const char *file, int line);

/*
 * Loads of `cur` and `fast` for the inline paths. Once either is non-NULL, `rseq` is valid: the
 * domain stores it before them with release. On x86 loads are not reordered, so plain loads
 * suffice; elsewhere acquire loads order the reads of `rseq` after them (a wrong offset would
 * make the critical section store into another thread-local word).
 */
#if GRACE_ARCH_TSO
#define GRACE__SRCU_LOAD(p) grace_load_relaxed(p)
#else
#define GRACE__SRCU_LOAD(p) grace_load_acquire(p)
#endif

/**
 * grace_srcu_init() / init_srcu_struct() - initialise a domain.
 * Returns 0, -EINVAL (ssp NULL) or -ENOMEM. A domain from DEFINE_SRCU() needs no call.
 * Thread-safety: nobody may use the domain during the call. Context: allocates; may block.
 */
GRACE_API int grace_srcu_init(struct srcu_struct *ssp);

/**
 * grace_srcu_cleanup() / cleanup_srcu_struct() - free a domain's resources.
 * With readers inside a section of the domain, callbacks queued by call_srcu() not yet invoked,
 * or a grace period under way, nothing is freed and the misuse is reported with a message naming
 * the call (in debug builds it then aborts). Call srcu_barrier() first if callbacks were queued.
 * A DEFINE_SRCU() domain may be used again afterwards (it sets itself up anew); a domain from
 * init_srcu_struct() must be initialised again.
 * Context: may block (joins the domain's callback worker).
 */
GRACE_API void grace_srcu_cleanup(struct srcu_struct *ssp);

/**
 * grace_srcu_read_lock() / srcu_read_lock() - enter a read-side section of domain ssp.
 * Returns the index to pass to srcu_read_unlock(). Sections nest and may overlap across domains.
 * Inside, pointers loaded with srcu_dereference() stay valid until the matching unlock.
 * Thread-safety: any thread, no registration. Context: never blocks; async-signal-safe once
 *   the domain is set up. The section itself may block or sleep (it then delays only the grace
 *   periods of ssp).
 * Cost: one rseq increment of a per-CPU counter, no atomic, no fence. A lock+unlock pair took
 *   1.33 ns on the reference machine (AMD EPYC, x86-64): 1.3x-1.8x the default flavor depending on
 *   code placement, 8.3x faster than the same algorithm with lock xadd (docs/figures/srcu.md).
 * Unloading: the restartable sequence is inlined into the caller's object, and the kernel reads
 *   its descriptor there at the thread's next preemption unless the sequence cleared the thread's
 *   pointer to it, which every grace sequence does (rule 6 of internal/rseq.h). So an object that
 *   calls srcu_read_lock()/srcu_read_unlock() may be dlclose()d once no thread executes its code.
 */
GRACE_INLINE int grace_srcu_read_lock(struct srcu_struct *ssp)
{
#if GRACE__DEBUG
	return grace__srcu_read_lock_dbg(ssp);
#else
#if GRACE__RSEQ_OPS
	uint64_t *cur = GRACE__SRCU_LOAD(&ssp->cur);

	/* One rseq critical section: lock[idx] of the current CPU += 1. cur points at lock[idx]
	 * of CPU 0's line (16-byte aligned), so bit 3 of its address is idx. */
	if (GRACE_LIKELY(cur != NULL) &&
	    GRACE_LIKELY(grace__rseq_inc_line(&ssp->rseq, cur, 0) == 0)) {
		/*
		 * Compiler barrier (the asm above is one too): the section's accesses stay after
		 * the increment. The CPU order comes from the updater's membarrier (barrier M in
		 * src/flavor/srcu.c), which pairs with this point.
		 */
		grace_barrier();
		return (int)(((uintptr_t)cur >> 3) & 1u);
	}
#endif
	return grace__srcu_read_lock_slow(ssp);
#endif
}

/**
 * grace_srcu_read_unlock() / srcu_read_unlock() - leave the section entered with idx.
 * idx must be the value srcu_read_lock() returned for this section; anything but 0 or 1 is
 * reported (message naming the call) and aborts. The unlock may run on another CPU than the
 * lock (the thread may have been migrated, or slept).
 * Thread-safety: the thread that locked (debug builds check it). Context: never blocks.
 */
GRACE_INLINE void grace_srcu_read_unlock(struct srcu_struct *ssp, int idx)
{
#if GRACE__DEBUG
	grace__srcu_read_unlock_dbg(ssp, idx);
#else
	GRACE__ANN_RELEASE(ssp); /* -DGRACE_VALGRIND only (internal/annotate.h) */
#if GRACE__RSEQ_OPS
	struct grace__srcu_cpu *pc = GRACE__SRCU_LOAD(&ssp->fast);

	if (GRACE_LIKELY(pc != NULL && (unsigned int)idx < 2u)) {
		/*
		 * The wake slot, loaded before the increment: after it the domain may be freed
		 * (the increment can let synchronize_srcu() return). Ordered after the load of
		 * `fast` (TSO, or acquire), which pairs with the release store of `fast` that
		 * follows the slot's in srcu_publish(); ordered before the increment by its
		 * release (stlr on aarch64; every store is a release on x86).
		 */
		struct grace__srcu_wake *w = GRACE__SRCU_WAKE(ssp);

		/*
		 * Release increment of unlock[idx] on the current CPU: the section's accesses
		 * complete before it (pairs with the updater's acquire loads of the unlock
		 * counters). Nothing of *ssp is touched after it.
		 */
		if (GRACE_LIKELY(grace__rseq_inc_line(&ssp->rseq, &pc->unlock[idx], 1) == 0)) {
			/*
			 * Compiler barrier: the load of the slot's `waiting` stays after the
			 * increment. The CPU's store->load order comes from the updater's
			 * membarrier between setting `waiting` and re-reading the counters
			 * (barrier W in srcu.c).
			 */
			grace_barrier();
			if (GRACE_UNLIKELY(grace_load_relaxed(&w->waiting) & (1u << idx)))
				grace__srcu_wake_slot(w);
			return;
		}
	}
#endif
	grace__srcu_read_unlock_slow(ssp, idx);
#endif
}

/**
 * grace_srcu_synchronize() / synchronize_srcu() - wait until every section of ssp that began
 * before the call has ended. Concurrent callers share grace periods.
 * Memory ordering: as synchronize_rcu(), for the readers of ssp.
 * Context: blocks (spins briefly, then sleeps until the last old reader wakes it). Inside a
 *   section of the same domain it would deadlock: debug builds report it and abort. Legal
 *   inside sections of other domains and of the other flavors.
 */
GRACE_API void grace_srcu_synchronize(struct srcu_struct *ssp);
/** synchronize_srcu() that spins longer before sleeping (for latency-critical updaters). */
GRACE_API void grace_srcu_synchronize_expedited(struct srcu_struct *ssp);

/**
 * grace_srcu_call() / call_srcu() - invoke func(head) after a grace period of ssp.
 * Does not block in the common case. Past the domain's hard limit on pending callbacks it waits
 * for them to drain, 100 ms at most (the caller may be inside a section of ssp, which the grace
 * period needs); if none has run by then it says so once (a warning naming the srcu_struct)
 * and later calls queue without waiting until callbacks run again. Callbacks run on a worker
 * thread of the domain (started on the first call), in no read-side section; they may call
 * call_srcu() but not srcu_barrier() or synchronize_srcu() of the same domain.
 * Thread-safety: any thread, also inside sections of ssp, with locks held.
 */
GRACE_API void grace_srcu_call(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func);
/** call_rcu_hurry() for srcu: the grace period starts without pacing. */
GRACE_API void grace_srcu_call_hurry(struct srcu_struct *ssp, struct rcu_head *head,
				     rcu_callback_t func);
/**
 * grace_srcu_barrier() / srcu_barrier() - wait until every callback queued on ssp before the
 * call has been invoked. Context: blocks; not from a callback of ssp (reported, abort); a
 * callback of another domain or flavor may call it.
 */
GRACE_API void grace_srcu_barrier(struct srcu_struct *ssp);

/**
 * grace_srcu_free() / free_srcu(ssp, ptr, field) - free(ptr) after a grace period of ssp, with
 * no callback function (free_rcu() for a domain, see rcu.h for the rules on ptr and field).
 * Unlike free_rcu(), the free runs on the domain's callback worker: the object's rcu_head is
 * queued with its offset in place of a function (domains come and go, and a per-thread cache
 * would have to be emptied by cleanup_srcu_struct()). So it counts as a pending callback:
 * srcu_barrier() waits for it and cleanup_srcu_struct() refuses to free a domain that has one.
 * Context: as call_srcu(): never blocks, any thread, also inside sections of ssp. NULL ptr:
 * nothing (ssp is not even looked at). Misuse reports: as free_rcu().
 */
GRACE_API void grace_srcu_free(struct srcu_struct *ssp, void *ptr, struct rcu_head *head);
#define free_srcu(ssp, ptr, field)                                                \
	do {                                                                      \
		__typeof__(ptr) grace__fs_p = (ptr);                              \
		if (grace__fs_p)                                                  \
			grace_srcu_free((ssp), grace__fs_p, &grace__fs_p->field); \
	} while (0)
/**
 * grace_srcu_free_ptr() / free_srcu_mightsleep(ssp, ptr) - the same for an object with no
 * rcu_head: the pointer rides in a small block of its own (one malloc); with no memory for it,
 * the call waits for a grace period of ssp itself, so not inside a section of ssp nor from a
 * callback (debug builds check it at every call).
 */
GRACE_API void grace_srcu_free_ptr(struct srcu_struct *ssp, void *ptr);
/** grace_srcu_free_barrier() / free_srcu_barrier(ssp) - every object given to free_srcu() or
 * free_srcu_mightsleep() on ssp before the call has been freed (srcu_barrier() does as much). */
GRACE_API void grace_srcu_free_barrier(struct srcu_struct *ssp);
/**
 * grace_srcu_retire() / srcu_retire(ssp, ptr), grace_srcu_retire_fn() / srcu_retire_fn(ssp, fn,
 * ptr) - free(ptr) (or fn(ptr)) after a grace period of ssp, for an object with no rcu_head:
 * rcu_retire() for a domain, out of line, on the domain's callback worker as free_srcu()'s
 * objects. Context: never waits, also inside sections of ssp: with no memory left there the
 * object is dropped and the first loss reported (as rcu_retire()). NULL ptr: nothing.
 * grace_srcu_set_free_hook(ssp, fn) - grace_rcu_set_free_hook() for the domain: 0, or -EBUSY
 * once an object of ssp was queued. srcu_barrier() waits for all of them.
 */
GRACE_API void grace_srcu_retire(struct srcu_struct *ssp, void *ptr);
GRACE_API void grace_srcu_retire_fn(struct srcu_struct *ssp, void (*fn)(void *), void *ptr);
GRACE_API int grace_srcu_set_free_hook(struct srcu_struct *ssp, void (*fn)(void *));

/**
 * Polled grace periods of ssp (as the default flavor's, see rcu.h):
 *  get_state_synchronize_srcu()    cookie of a grace period that must still start; starts none.
 *  start_poll_synchronize_srcu()   the same, and makes sure that grace period runs.
 *  poll_state_synchronize_srcu(c)  true once grace period c has completed (then a full barrier).
 *  cond_synchronize_srcu(c)        waits only if c has not completed.
 * Context: none blocks except cond_synchronize_srcu().
 */
GRACE_API unsigned long grace_srcu_get_state(struct srcu_struct *ssp);
GRACE_API unsigned long grace_srcu_start_poll(struct srcu_struct *ssp);
GRACE_API bool grace_srcu_poll_state(struct srcu_struct *ssp, unsigned long cookie);
GRACE_API void grace_srcu_cond_synchronize(struct srcu_struct *ssp, unsigned long cookie);

/**
 * grace_srcu_readers_active() - sections of ssp open right now (a snapshot: lock sum minus
 * unlock sum over both indexes). For diagnostics and tests. Context: never blocks.
 */
GRACE_API unsigned long grace_srcu_readers_active(struct srcu_struct *ssp);
/** Callback statistics of the domain (zeros before its first call_srcu()). */
GRACE_API void grace_srcu_callback_stats(struct srcu_struct *ssp, struct grace_cb_stats *st);
/** Policy and limits of the domain's callback engine: as grace_rcu_set_policy() and
 * grace_rcu_set_callback_limits() (<grace/rcu.h>). Returns 0 or -EINVAL. */
GRACE_API int grace_srcu_set_policy(struct srcu_struct *ssp, enum grace_gp_policy policy,
				    unsigned int period_us);
GRACE_API int grace_srcu_set_callback_limits(struct srcu_struct *ssp, size_t soft, size_t hard);
/**
 * How srcu readers run in this process: "rseq+membarrier" (the fast path), "rseq+fence",
 * "atomic+membarrier" or "atomic+fence". Chosen once at start-up.
 */
GRACE_API const char *grace_srcu_mode(void);

#if GRACE__DEBUG
#define GRACE__SRCU_DEREF_CHECK(ssp)                                   \
	do {                                                           \
		if (!grace__srcu_dbg_held(ssp))                        \
			grace__srcu_deref_outside(__FILE__, __LINE__); \
	} while (0)
#else
#define GRACE__SRCU_DEREF_CHECK(ssp) ((void)sizeof(ssp))
#endif

/*
 * srcu_dereference(p, ssp) - load an RCU-protected pointer inside a section of domain ssp (same
 * ordering as rcu_dereference()). Debug builds check that the calling thread holds a section of
 * ssp. srcu_dereference_check(p, ssp, c): also accepts c (another protection) being true.
 */
#define srcu_dereference(p, ssp)                                                   \
	__extension__({                                                            \
		__typeof__(p) grace__sp = grace_load_mo(&(p), GRACE__DEREF_ORDER); \
		GRACE__ANN_ACQUIRE(&(p));                                          \
		GRACE__SRCU_DEREF_CHECK(ssp);                                      \
		grace__sp;                                                         \
	})
#if GRACE__DEBUG
#define srcu_dereference_check(p, ssp, c)                                          \
	__extension__({                                                            \
		__typeof__(p) grace__sp = grace_load_mo(&(p), GRACE__DEREF_ORDER); \
		GRACE__ANN_ACQUIRE(&(p));                                          \
		if (!(c))                                                          \
			GRACE__SRCU_DEREF_CHECK(ssp);                              \
		grace__sp;                                                         \
	})
#else
#define srcu_dereference_check(p, ssp, c) ((void)sizeof(c), srcu_dereference(p, ssp))
#endif

/* Kernel-style names. */
GRACE_INLINE int init_srcu_struct(struct srcu_struct *ssp)
{
	return grace_srcu_init(ssp);
}
GRACE_INLINE void cleanup_srcu_struct(struct srcu_struct *ssp)
{
	grace_srcu_cleanup(ssp);
}
GRACE_INLINE int srcu_read_lock(struct srcu_struct *ssp)
{
	return grace_srcu_read_lock(ssp);
}
GRACE_INLINE void srcu_read_unlock(struct srcu_struct *ssp, int idx)
{
	grace_srcu_read_unlock(ssp, idx);
}
GRACE_INLINE void synchronize_srcu(struct srcu_struct *ssp)
{
	grace_srcu_synchronize(ssp);
}
GRACE_INLINE void synchronize_srcu_expedited(struct srcu_struct *ssp)
{
	grace_srcu_synchronize_expedited(ssp);
}
GRACE_INLINE void call_srcu_hurry(struct srcu_struct *ssp, struct rcu_head *head,
				  rcu_callback_t func)
{
	grace_srcu_call_hurry(ssp, head, func);
}
GRACE_INLINE void call_srcu(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func)
{
	grace_srcu_call(ssp, head, func);
}
GRACE_INLINE void srcu_barrier(struct srcu_struct *ssp)
{
	grace_srcu_barrier(ssp);
}
GRACE_INLINE void free_srcu_mightsleep(struct srcu_struct *ssp, void *ptr)
{
	grace_srcu_free_ptr(ssp, ptr);
}
GRACE_INLINE void free_srcu_barrier(struct srcu_struct *ssp)
{
	grace_srcu_free_barrier(ssp);
}
GRACE_INLINE void srcu_retire(struct srcu_struct *ssp, void *ptr)
{
	grace_srcu_retire(ssp, ptr);
}
GRACE_INLINE void srcu_retire_fn(struct srcu_struct *ssp, void (*fn)(void *), void *ptr)
{
	grace_srcu_retire_fn(ssp, fn, ptr);
}
GRACE_INLINE unsigned long get_state_synchronize_srcu(struct srcu_struct *ssp)
{
	return grace_srcu_get_state(ssp);
}
GRACE_INLINE unsigned long start_poll_synchronize_srcu(struct srcu_struct *ssp)
{
	return grace_srcu_start_poll(ssp);
}
GRACE_INLINE bool poll_state_synchronize_srcu(struct srcu_struct *ssp, unsigned long c)
{
	return grace_srcu_poll_state(ssp, c);
}
GRACE_INLINE void cond_synchronize_srcu(struct srcu_struct *ssp, unsigned long c)
{
	grace_srcu_cond_synchronize(ssp, c);
}

GRACE_END_DECLS

#endif /* GRACE_SRCU_H */
