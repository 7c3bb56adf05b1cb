/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor ("memb"): read-side sections that cost a thread-local load and store and
 * a compiler barrier; the updater pays with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).
 *
 * Readers need not register: the first rcu_read_lock() of a thread registers it and its exit
 * unregisters it. The kernel-style names (rcu_read_lock, synchronize_rcu, ...) are static inline
 * aliases of the exported grace_rcu_* functions.
 *
 * The algorithm and its correctness argument: src/flavor/memb.c and docs/design.md.
 */
#ifndef GRACE_RCU_H
#define GRACE_RCU_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>
#include <grace/engine.h>
#include <grace/internal/reader.h>
#include <grace/internal/retire.h>
#include <grace/internal/annotate.h>

GRACE_BEGIN_DECLS

/* Internal state the inline fast path reads (exported only for it). */
GRACE_API extern __thread struct grace__reader grace__memb_reader GRACE_TLS_IE;
GRACE_API void grace__memb_lock_slow(void);
GRACE_API void grace__memb_lock_flagged(void);
GRACE_API void grace__memb_unlock_flagged(void);
/* Test hook of debug builds (src/core/debug.h, GRACE_TEST_PAUSE site "rcu_lock"); exported in
 * every build, unused by release builds of programs. */
GRACE_API extern int grace__test_pause_on;
GRACE_API void grace__test_pause(const char *site);

/*
 * Is any waiter bit set (GRACE__W_*: an updater waits for this thread, parked it, or the
 * thread is in the fence fallback or exiting)? A relaxed load, compiled on x86-64 as one
 * compare of the word in memory with zero (GCC does not fold an atomic load into the compare:
 * that would be a load and a test); the word is 32-bit aligned, so the compare is one atomic
 * load there too.
 */
GRACE_INLINE bool grace__memb_flagged(const struct grace__reader *r)
{
#if defined(__x86_64__) && !GRACE__TSAN_MODE
	__asm__ goto("cmpl $0, %0\n\tjne %l1" : : "m"(r->waiter) : : flagged);
	return false;
	/* The asm goto's target (cppcheck does not read asm operands). */
	// cppcheck-suppress unusedLabelConfiguration
flagged:
	return true;
#else
	return grace_load_relaxed(&r->waiter) != 0;
#endif
}

/**
 * grace_rcu_read_lock() / rcu_read_lock() - enter a read-side section.
 *
 * Sections nest (to a depth of 32767). Inside one, pointers loaded with rcu_dereference() stay
 * valid: no grace period that starts after this call can end before the matching unlock.
 * Thread-safety: any thread; an unregistered thread is registered here on its first section.
 * Context: never blocks (the first call in a thread takes a lock to register it); the section
 *   may block or sleep, at the price of delaying grace periods.
 * Cost: see docs/api.md ("Measured costs").
 */
GRACE_INLINE void grace_rcu_read_lock(void)
{
	struct grace__reader *r = &grace__memb_reader;
	uint64_t c = grace_load_relaxed(&r->ctr);

	if (GRACE_LIKELY((c & GRACE__R_LOW) == 0)) {
		/* Outermost section of a registered thread: the next section number, nesting 1.
		 * Computed from the thread's own word: no shared line is read. */
		uint64_t next = c + GRACE__R_SEQ_UNIT + 1;
#if GRACE__DEBUG
		/* Tests stop here (GRACE_TEST_PAUSE=rcu_lock:US) as a preemption would. */
		if (GRACE_UNLIKELY(grace_load_relaxed(&grace__test_pause_on)))
			grace__test_pause("rcu_lock");
#endif
		grace_store_relaxed(&r->ctr, next);
		/*
		 * Compiler barrier: the section's loads, and the load of waiter, are not hoisted
		 * above the store. The CPU order is supplied by the updater's membarrier (barrier A,
		 * and for a parked thread the membarrier after its PARK bit was set: see
		 * src/flavor/memb.c), which pairs with this point.
		 */
		grace_barrier();
		/* After the store, never before it: a thread the updater stopped scanning (PARK)
		 * must see that before its section reads anything (src/core/registry.c, Parking). */
		if (GRACE_UNLIKELY(grace__memb_flagged(r)))
			grace__memb_lock_flagged();
	} else if (GRACE_LIKELY((((c & GRACE__R_LOW) + 1) & ~(GRACE__R_NEST_HIGH - 1)) == 0)) {
		/* Nested: the outer section already orders everything. Tested on the low bits after
		 * the increment, so the depth stays below GRACE__R_NEST_HIGH (the 32768th nested
		 * lock takes the slow path, which reports it, in every mode; the fallback's locks
		 * all go there) and the nesting bits an unlock without a lock leaves (0xffff) do
		 * not carry into the section number. */
		grace_store_relaxed(&r->ctr, c + 1);
		/*
		 * Then waiter, as the outermost lock does: a signal handler's section may nest in an
		 * outermost lock that has stored but not yet handed a parked thread back (between
		 * its store and its test, found by the Promela model, tests/model/memb.pml), and
		 * must hand it back itself before it reads anything. Compiler barrier: the load
		 * stays after the store.
		 */
		grace_barrier();
		if (GRACE_UNLIKELY(grace__memb_flagged(r)))
			grace__memb_lock_flagged();
	} else {
		grace__memb_lock_slow(); /* unregistered, fallback, exiting, nesting overflow, or
					  * an earlier unlock without a lock */
	}
}

/**
 * grace_rcu_read_unlock() / rcu_read_unlock() - leave a read-side section.
 *
 * The outermost unlock wakes an updater that sleeps waiting for this thread.
 * Unlock without a matching lock is reported (message naming the call) and aborts: at the call
 * in debug builds, in release builds at the thread's next rcu_read_lock() or the next grace
 * period, whichever comes first.
 * Thread-safety: the thread that locked. Context: never blocks.
 */
GRACE_INLINE void grace_rcu_read_unlock(void)
{
	struct grace__reader *r = &grace__memb_reader;

	/*
	 * Nested or outermost, one decrement: the nesting depth is in the low bits, and only this
	 * thread writes ctr (updaters write waiter). The store is a release: at the outermost
	 * unlock, the section's accesses are complete before an updater can see the thread
	 * quiescent. Pairs with the acquire load of ctr in the updater's scan (count_holders() in
	 * src/core/registry.c). Elsewhere than x86 nested unlocks pay the release too, for one
	 * store and no branch on the depth.
	 */
	GRACE__ANN_RELEASE(&r->ctr); /* -DGRACE_VALGRIND only (internal/annotate.h) */
#if defined(__x86_64__) && !GRACE__TSAN_MODE && !GRACE__DEBUG
	/* One instruction, a read-modify-write of the thread's own word that no other thread
	 * writes, so it needs no lock prefix; every x86 store is a release. */
	__asm__ __volatile__("subq $1, %0" : "+m"(r->ctr) : : "memory");
#else
	uint64_t c = grace_load_relaxed(&r->ctr) - 1;
	grace_store_release(&r->ctr, c);
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(c & GRACE__R_NEST_HIGH))
		grace__memb_unlock_flagged(); /* unlock without lock: reported there */
#endif
#endif
	/*
	 * Compiler barrier: the waiter load stays after the store. Store->load order on the CPU
	 * comes from the updater's membarrier between setting waiter and re-reading ctr (barrier
	 * W in src/core/registry.c); the fallback and an exiting thread find their own bit in
	 * waiter and fence out of line.
	 */
	grace_barrier();
	if (GRACE_UNLIKELY(grace__memb_flagged(r)))
		grace__memb_unlock_flagged();
}

/** Is the calling thread inside a default-flavor read-side section? */
GRACE_INLINE bool grace_rcu_read_ongoing(void)
{
	return (grace_load_relaxed(&grace__memb_reader.ctr) & GRACE__R_NEST_MASK) != 0;
}

/**
 * grace_rcu_register_thread() / rcu_register_thread() - register the calling thread as a reader.
 *
 * Optional: the first rcu_read_lock() registers a thread implicitly. Registering explicitly
 * twice is a misuse (message; abort in debug builds).
 * Context: may block briefly on the registry lock; not inside a read-side section.
 */
GRACE_API void grace_rcu_register_thread(void);

/**
 * grace_rcu_unregister_thread() / rcu_unregister_thread() - unregister the calling thread.
 *
 * Optional: a thread is unregistered when it exits. Inside a read-side section it is a misuse:
 * message naming the call, then abort. Unregistering an unregistered thread does nothing.
 */
GRACE_API void grace_rcu_unregister_thread(void);

/**
 * grace_rcu_synchronize() / synchronize_rcu() - wait for a full grace period.
 *
 * Returns once every read-side section that began before the call has ended. Concurrent callers
 * share grace periods. Memory ordering: everything the caller did before the call happens
 * before the end of every pre-existing reader's section, and everything those readers did
 * happens before the return.
 * Context: blocks (spins briefly, then sleeps on a futex). Inside a read-side section it would
 *   deadlock: reported with a message naming the call, then abort. Legal from any thread,
 *   registered or not.
 */
GRACE_API void grace_rcu_synchronize(void);

/**
 * grace_rcu_synchronize_expedited() / synchronize_rcu_expedited() - synchronize_rcu() that
 * starts its grace period at once, whatever the policy, and spins longer before sleeping.
 * Context: as synchronize_rcu().
 */
GRACE_API void grace_rcu_synchronize_expedited(void);

/**
 * grace_rcu_call() / call_rcu() - invoke func(head) after a grace period.
 *
 * Does not block in the common case (past the hard bound on pending callbacks it waits for the
 * workers instead of growing memory, at most the stall timeout and at least 1 s: see
 * grace_rcu_set_callback_limits() and <grace/engine.h>). Callable from any thread, registered
 * or not, with locks held (even a lock that readers take inside their sections: no path waits
 * longer than that bound), inside a read-side section and from a callback. Callbacks run on
 * worker threads of the library, each in no read-side section; a callback may call call_rcu()
 * and free memory, but must not call rcu_barrier() or wait for a grace period of the same
 * flavor.
 */
GRACE_API void grace_rcu_call(struct rcu_head *head, rcu_callback_t func);

/**
 * grace_rcu_call_hurry() / call_rcu_hurry() - call_rcu() for a caller that needs the callback
 * soon (Linux's name): the grace period it needs starts at once, without the adaptive policy's
 * pacing (GRACE_POLICY_ADAPTIVE in <grace/engine.h>); under POLL and BATCH it starts it at once
 * too. Same context rules as call_rcu(). Costs call_rcu() plus an atomic exchange, and a
 * wake-up of the CPU's callback worker if it naps.
 */
GRACE_API void grace_rcu_call_hurry(struct rcu_head *head, rcu_callback_t func);

/**
 * grace_rcu_barrier() / rcu_barrier() - wait until every callback queued (by any thread) before
 * the call has been invoked, and every object and function given to free_rcu(), rcu_retire()
 * and their twins before it freed or run (the threads' caches are emptied first). Inside a
 * read-side section or from a default-flavor callback it is a misuse: message naming the call,
 * then abort (a callback of another flavor or srcu domain may call it). Context: blocks.
 */
GRACE_API void grace_rcu_barrier(void);

/**
 * grace_rcu_free() / free_rcu(ptr, field) - free(ptr) after a grace period, with no callback
 * function to write (the kernel's kfree_rcu()).
 *
 * ptr: an object from malloc() (calloc, realloc, aligned_alloc, posix_memalign) that no new
 *   reader can reach any more; free_rcu() names its struct rcu_head member, grace_rcu_free()
 *   takes the member's address, which must lie within the object's first 4096 bytes. A NULL
 *   ptr does nothing. Every reader section that might hold ptr ends before free(ptr) runs.
 * Where and when: the calling thread keeps the pointer in a per-thread block tagged with a
 *   grace-period cookie and frees a few ready ones at each of its later free_rcu() calls, so
 *   the allocator's thread cache stays warm (no bulk frees on another thread). A thread that
 *   stops calling for a grace period, or exits, hands its blocks to the callback engine; at
 *   process exit everything is freed. GRACE_FREE_WORKER=1 makes the engine's worker free every
 *   object instead (as call_rcu() with a free() callback). The rcu_head is written only when
 *   no block can be allocated: then it is queued on the engine, which never fails.
 * Context: as call_rcu(): any thread, with locks held, inside a read-side section, from a
 *   callback; never blocks in the common case. Past 65536 objects waiting in one thread, the
 *   call waits for the oldest grace period (at most the stall timeout; not inside a read-side
 *   section or a callback), as call_rcu() waits at its hard limit.
 * Misuse: a pointer queued twice while it waits is reported in debug builds (message naming
 *   free_rcu, then abort); debug builds also poison each object (0x6b bytes) before freeing
 *   it. An rcu_head outside the first 4096 bytes: message and abort.
 * Cost: a few tens of instructions, no atomic read-modify-write, plus the frees it performs
 *   (see docs/api.md, "Measured costs").
 */
GRACE_API void grace_rcu_free(void *ptr, struct rcu_head *head);
#define free_rcu(ptr, field)                                              \
	do {                                                              \
		__typeof__(ptr) grace__fr_p = (ptr);                      \
		if (grace__fr_p)                                          \
			grace_rcu_free(grace__fr_p, &grace__fr_p->field); \
	} while (0)

/**
 * grace_rcu_free_ptr() / free_rcu_mightsleep(ptr) - free(ptr) after a grace period, for an
 * object with no struct rcu_head (the kernel's kfree_rcu_mightsleep()).
 *
 * As free_rcu(), but when no memory is left to queue the pointer it waits for a grace period
 * itself and frees at once: so it must not be called inside a read-side section, from a
 * callback, or with a lock held that a reader needs to finish its section. Debug builds check
 * the first two at every call (message naming free_rcu_mightsleep, abort). A NULL ptr does
 * nothing. The function liburcu's defer_rcu(free, p) maps onto.
 */
GRACE_API void grace_rcu_free_ptr(void *ptr);

/**
 * grace_rcu_free_barrier() / free_rcu_barrier() - wait until every object given to free_rcu(),
 * free_rcu_mightsleep() or rcu_retire() (by any thread) before the call has been freed, then
 * for every callback queued before it: rcu_barrier(), which empties the caches too.
 * Context: blocks; inside a read-side section or from a callback it is a misuse: message naming
 * the call, then abort.
 */
GRACE_API void grace_rcu_free_barrier(void);

/**
 * grace_rcu_retire() / rcu_retire(ptr) - free(ptr) after a grace period, for an object with no
 * struct rcu_head, inline and legal inside a read-side section: a lock-free data structure
 * retires the node it unlinked in the operation that unlinked it.
 *
 * ptr: an object that no new reader can reach any more, from malloc() (or from the pool of the
 *   flavor's free hook, grace_rcu_set_free_hook()). NULL does nothing. Every reader section
 *   that might hold ptr ends before it is freed.
 * Where and when: as free_rcu(), in the same per-thread blocks: the pointer is appended to the
 *   block this thread is filling (on the fast path: plain stores, no call, no atomic
 *   read-modify-write); every few calls the call goes out of line, seals a full block with a
 *   grace-period cookie and frees the objects whose grace period has ended, a few per call,
 *   on this thread. free_rcu_barrier() waits for them.
 * Context: any thread, with locks held, inside a read-side section, from a callback. Never
 *   waits for a grace period inside a section or a callback: when no memory is left to queue
 *   the pointer there, it is dropped (never freed) and the first loss is reported. Outside
 *   both, past 65536 objects waiting in one thread, the call waits as free_rcu() does. Not
 *   async-signal-safe: a signal handler that interrupts a call of the same thread must not
 *   call it (a debug library reports it, naming the call, then aborts).
 * Misuse: a pointer retired twice while it waits is reported by a debug library (message
 *   naming rcu_retire, abort); debug builds of the program take the out-of-line path at every
 *   call so that the library can check.
 * Cost: 19 instructions on the fast path (x86-64; docs/api.md).
 */
GRACE_INLINE void grace_rcu_retire(void *ptr)
{
	if (GRACE_UNLIKELY(!grace__retire_fast(grace__memb_retire, (void (*)(void *))0, ptr)))
		grace__memb_retire_slow((void (*)(void *))0, ptr);
}

/**
 * grace_rcu_retire_fn() / rcu_retire_fn(fn, ptr) - fn(ptr) after a grace period: rcu_retire()
 * with a function of the caller's in place of free(), per call (a sized free, a pool, a C++
 * deleter). fn NULL: the flavor's free function. ptr NULL: nothing.
 * fn runs on the retiring thread, inside one of its later calls of rcu_retire(), free_rcu(),
 * ... (which may be inside a read-side section), or on a callback worker when the thread goes
 * idle or exits; so it must not wait for a grace period (synchronize_rcu, rcu_barrier). It
 * may retire or free more: those calls only queue.
 * Context, misuse: as rcu_retire(). Cost: a few instructions more than rcu_retire().
 */
GRACE_INLINE void grace_rcu_retire_fn(void (*fn)(void *), void *ptr)
{
	if (GRACE_UNLIKELY(!grace__retire_fast(grace__memb_retire, fn, ptr)))
		grace__memb_retire_slow(fn, ptr);
}

/**
 * grace_rcu_set_free_hook(fn) - the function that frees the objects of free_rcu(),
 * free_rcu_mightsleep() and rcu_retire() once their grace period has ended, in place of free()
 * (fn NULL: free() again). It runs where free() would (mostly on the thread that queued the
 * object, a few per later call), under the rules of rcu_retire_fn()'s fn.
 * Returns 0, or -EBUSY once an object of the flavor was queued with another function: set it
 * at start-up, before the first of those calls, so that no object reaches a function that did
 * not allocate it. A pool the hook frees into must outlive the objects: free_rcu_barrier()
 * before destroying it. Thread-safety: any thread.
 */
GRACE_API int grace_rcu_set_free_hook(void (*fn)(void *));

/**
 * Polled grace periods (Linux semantics). A cookie names a grace period:
 *  get_state_synchronize_rcu()   cookie of a grace period that must still start; starts nothing.
 *  start_poll_synchronize_rcu()  the same cookie, and makes sure that grace period will run.
 *  poll_state_synchronize_rcu(c) true once grace period c has completed (then a full barrier).
 *  cond_synchronize_rcu(c)       waits only if grace period c has not completed.
 * Cookies taken inside a read-side section do not complete while that section runs.
 * Context: none of them blocks except cond_synchronize_rcu().
 */
GRACE_API unsigned long grace_rcu_get_state(void);
GRACE_API unsigned long grace_rcu_start_poll(void);
GRACE_API bool grace_rcu_poll_state(unsigned long cookie);
GRACE_API void grace_rcu_cond_synchronize(unsigned long cookie);

/**
 * grace_rcu_set_policy() - how the callback engine drives grace periods for call_rcu() and
 * start_poll_synchronize_rcu(): GRACE_POLICY_POLL (default) or GRACE_POLICY_BATCH with a period
 * in microseconds (1..10000000). See <grace/engine.h>. Returns 0 or -EINVAL.
 * The environment variables GRACE_POLICY_BATCH=1 and GRACE_BATCH_PERIOD_US set the start-up
 * policy. synchronize_rcu() never waits for the batch period.
 */
GRACE_API int grace_rcu_set_policy(enum grace_gp_policy policy, unsigned int period_us);
/**
 * grace_rcu_set_callback_limits() - per-CPU soft and hard limits on callbacks queued and not
 * yet invoked (see <grace/engine.h>). Returns 0, or -EINVAL if 0 or soft > hard.
 */
GRACE_API int grace_rcu_set_callback_limits(size_t soft, size_t hard);
/** grace_rcu_callback_stats() - counters of the default flavor's callback engine. */
GRACE_API void grace_rcu_callback_stats(struct grace_cb_stats *stats);

/**
 * grace_rcu_reader_stats() - the default flavor's registered threads: how many are registered,
 * how many of those grace periods scan (the others are parked: idle for several grace periods,
 * so the scans skip them until their next rcu_read_lock()), and how many times threads were
 * parked and came back since start-up. Any pointer may be NULL. A snapshot: threads register,
 * read and exit meanwhile. Context: any thread; takes the registry lock briefly.
 */
GRACE_API void grace_rcu_reader_stats(unsigned long *registered, unsigned long *scanned,
				      unsigned long *parks, unsigned long *unparks);

/* Kernel-style names. */
GRACE_INLINE void rcu_read_lock(void)
{
	grace_rcu_read_lock();
}
GRACE_INLINE void rcu_read_unlock(void)
{
	grace_rcu_read_unlock();
}
GRACE_INLINE bool rcu_read_ongoing(void)
{
	return grace_rcu_read_ongoing();
}
GRACE_INLINE void rcu_register_thread(void)
{
	grace_rcu_register_thread();
}
GRACE_INLINE void rcu_unregister_thread(void)
{
	grace_rcu_unregister_thread();
}
GRACE_INLINE void synchronize_rcu(void)
{
	grace_rcu_synchronize();
}
GRACE_INLINE void synchronize_rcu_expedited(void)
{
	grace_rcu_synchronize_expedited();
}
GRACE_INLINE void call_rcu_hurry(struct rcu_head *head, rcu_callback_t func)
{
	grace_rcu_call_hurry(head, func);
}
GRACE_INLINE void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	grace_rcu_call(head, func);
}
GRACE_INLINE void rcu_barrier(void)
{
	grace_rcu_barrier();
}
GRACE_INLINE void free_rcu_mightsleep(void *ptr)
{
	grace_rcu_free_ptr(ptr);
}
GRACE_INLINE void free_rcu_barrier(void)
{
	grace_rcu_free_barrier();
}
GRACE_INLINE void rcu_retire(void *ptr)
{
	grace_rcu_retire(ptr);
}
GRACE_INLINE void rcu_retire_fn(void (*fn)(void *), void *ptr)
{
	grace_rcu_retire_fn(fn, ptr);
}
GRACE_INLINE unsigned long get_state_synchronize_rcu(void)
{
	return grace_rcu_get_state();
}
GRACE_INLINE unsigned long start_poll_synchronize_rcu(void)
{
	return grace_rcu_start_poll();
}
GRACE_INLINE bool poll_state_synchronize_rcu(unsigned long c)
{
	return grace_rcu_poll_state(c);
}
GRACE_INLINE void cond_synchronize_rcu(unsigned long c)
{
	grace_rcu_cond_synchronize(c);
}

GRACE_END_DECLS

#endif /* GRACE_RCU_H */
