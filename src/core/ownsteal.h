/* SPDX-License-Identifier: MIT */
/*
 * A per-thread cache that its owner touches at every call and other threads rarely: the owner
 * pays no atomic read-modify-write, the others pay a membarrier. The free_rcu()/rcu_retire()
 * caches (engine/free.c) and the hazard pointers' retire caches (hazptr/hazptr.c) use it, on the
 * words of struct grace__retire (busy, steal) that the inline retire of internal/retire.h also
 * reads, beside a spin lock of the cache's own.
 *
 * The asymmetric Dekker pair, as the default flavor's readers against its updaters (memb.c):
 *
 *   owner (grace__own_enter/_exit)        other thread (grace__steal_mark, barrier S, _take)
 *   busy = 1                              steal += 1
 *   barrier O: compiler only              barrier S: membarrier (a full barrier on every
 *   if steal == 0: the call, lock-free        running thread of the process)
 *   busy = 0 (release)                    wait until busy == 0 (acquire); take `lock`
 *   else: busy = 0; take `lock` (slow)    ... grace__steal_release: steal -= 1 (release),
 *                                             drop `lock`
 *
 * Barrier S orders the stealer's increment before its load of busy, and puts a full barrier on
 * the owner's CPU between the owner's store of busy and its load of steal if the owner runs
 * then; an owner that does not run is past a context switch, a full barrier too. So either the
 * stealer sees busy == 1 and waits for the owner's release store (which orders the whole call
 * before the stealer's accesses), or the owner's load of steal follows barrier S and sees the
 * increment, and the owner takes the lock instead, which the stealer holds. A stealer's
 * accesses precede its release decrement of steal, so an owner that later reads 0 (acquire)
 * sees them. Without membarrier (the fallback, TSan builds) both sides use seq_cst operations
 * and a fence. Several caches are stolen with one barrier: mark each, one
 * grace__heavy_barrier(), then take each.
 *
 * While the owner holds the lock itself (the slow path above, and the spans in which a call of
 * the owner locks its own cache: a barrier's, the per-thread bound's), busy holds
 * GRACE__BUSY_HELD. Only the owner's own signal handlers need it: the inline append then leaves
 * to the out-of-line path, whose check of busy in grace__own_enter() reports the handler, in
 * every build, rather than work on the cache beside the interrupted call or wait for the lock
 * its own thread holds. A stealer waits for busy == 0 as it would for the lock; the monitor's
 * try gives up.
 *
 * Why not a lock on the owner's side: an exchange waits for every store before it to reach the
 * cache, in an updater the stores of the update it just made to lines the readers share.
 * bench/hashtable (2 threads, 25% updates) spent 17% of the process there; the pair costs two
 * plain stores and a load.
 */
#ifndef GRACE_SRC_CORE_OWNSTEAL_H
#define GRACE_SRC_CORE_OWNSTEAL_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include <grace/internal/retire.h>

#include "core/diag.h"
#include "core/wait.h" /* grace__use_membarrier, grace__heavy_barrier */

/* ---- the cache's spin lock: the stealers, and the owner's slow path ---- */

void grace__spin_lock_slow(uint32_t *lock);

/* Acquire: everything the previous holder did to the cache happens before what the new holder
 * does (pairs with the release in grace__spin_unlock()). */
static inline void grace__spin_lock(uint32_t *lock)
{
	if (GRACE_LIKELY(grace_xchg(lock, 1u, __ATOMIC_ACQUIRE) == 0))
		return;
	grace__spin_lock_slow(lock);
}

static inline bool grace__spin_trylock(uint32_t *lock)
{
	return grace_load_relaxed(lock) == 0 && grace_xchg(lock, 1u, __ATOMIC_ACQUIRE) == 0;
}

/* Release: pairs with the acquire exchange of the next holder. */
static inline void grace__spin_unlock(uint32_t *lock)
{
	grace_store_release(lock, 0u);
}

/* ---- the owner ---- */

/* busy's value while the owner holds the cache's lock: above any count of nested appends (a
 * deleter's inline retire inside such a span adds 1 and restores it). */
#define GRACE__BUSY_HELD 0x10000u

/* The owner is about to take its cache's lock, and holds busy from here to
 * grace__own_unhold(): set before the lock is taken and cleared after it is dropped, so that
 * no instruction of the span finds the lock taken and busy clear. Relaxed, with a signal
 * fence: only this thread's signal handlers read it as more than "wait" (a stealer waits for 0
 * either way, and takes the lock after it, whose acquire orders the rest); the signal fence
 * keeps the store before the lock's acquire (which would let it sink below), so that a handler
 * of this thread that finds the lock taken by the span finds busy held too: it pairs with that
 * handler's relaxed load of busy (grace__own_enter(), the inline append's). */
static inline void grace__own_hold(struct grace__retire *rt)
{
	grace_store_relaxed(&rt->busy, GRACE__BUSY_HELD);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The end of the span, after the unlock: the signal fence keeps the clear after the unlock's
 * release store (which would let it rise above); it pairs with the same handler loads. */
static inline void grace__own_unhold(struct grace__retire *rt)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	grace_store_relaxed(&rt->busy, 0u);
}

/* The owner takes its own cache's lock (the slow path of grace__own_enter(), the bound's
 * spans, a lazy post): busy held around it. */
static inline void grace__own_lock(struct grace__retire *rt, uint32_t *lock)
{
	grace__own_hold(rt);
	grace__spin_lock(lock);
}

static inline void grace__own_unlock(struct grace__retire *rt, uint32_t *lock)
{
	grace__spin_unlock(lock);
	grace__own_unhold(rt);
}

/* A call of the owner's thread found busy set: it comes from a signal handler that interrupted
 * a call on the same cache. Reports it, naming call and what the cache is, and aborts. */
GRACE_NORETURN void grace__own_busy_fatal(const char *call, const char *what);
/* A call that takes every cache (a barrier, fork's prepare handler) found the calling thread's
 * own busy: it comes from inside a call of this thread on the cache (a signal handler's, or a
 * function's that the call runs), which it would wait for forever. Reports it and aborts. */
GRACE_NORETURN void grace__own_take_fatal(const char *call, const char *what);

/* Enter a call on the owner's cache: true, lock-free; false, holding `lock` (a stealer marked
 * the cache). call names the public call, what the cache, in the debug message. */
static inline bool grace__own_enter(struct grace__retire *rt, uint32_t *lock, const char *call,
				    const char *what)
{
	/* Only a signal handler that interrupted a call of the owner on the cache (its inline
	 * append, its out-of-line work, or a span in which it holds the cache's lock:
	 * GRACE__BUSY_HELD) can find busy set: every build reports it, rather than work on the
	 * cache beside that call or wait for the lock its own thread holds. A nested call made by
	 * a function the call runs (a deleter) never gets here (put_nested(), engine/free.c).
	 * Relaxed: the owner's own word. */
	if (GRACE_UNLIKELY(grace_load_relaxed(&rt->busy)))
		grace__own_busy_fatal(call, what);
	if (GRACE_LIKELY(grace__use_membarrier)) {
		grace_store_relaxed(&rt->busy, 1u);
		grace_barrier(); /* barrier O: pairs with barrier S (membarrier) in the stealer */
	} else {
		/* Fallback: a full barrier between the store and the load (pairs with the
		 * stealer's seq_cst increment and fence). */
		(void)grace_xchg(&rt->busy, 1u, __ATOMIC_SEQ_CST);
	}
	/* seq_cst: the Dekker load (a plain load on x86, ldar on arm64); it also acquires a
	 * finished stealer's accesses (its release decrement). */
	if (GRACE_LIKELY(__atomic_load_n(&rt->steal, __ATOMIC_SEQ_CST) == 0))
		return true;
	/* A stealer marked the cache: the call takes the lock, busy held from 1 straight to
	 * GRACE__BUSY_HELD (a stealer that waits for busy == 0 waits for the call's end, then
	 * takes the lock; one that holds it lets it go without waiting for busy). */
	grace__own_lock(rt, lock);
	return false;
}

/* Release: the call's accesses happen before a stealer's (pairs with its acquire of busy). */
static inline void grace__own_exit(struct grace__retire *rt, uint32_t *lock, bool fast)
{
	if (GRACE_LIKELY(fast))
		grace_store_release(&rt->busy, 0u);
	else
		grace__own_unlock(rt, lock);
}

/*
 * The owner's call runs an entry's function or the free hook (engine/freeblk.c,
 * hazptr/hazptr.c): *nest (the cache's `releasing`) is set around that function alone, so that
 * a retire made there (by the function, or by a signal handler that interrupts it: nothing
 * tells the two apart) only appends, while a handler's retire anywhere else in the call's
 * frees finds the call busy and is reported (docs/api.md, rcu_retire(), "Signals"). Only this
 * thread reads it, in its own code or a handler: the fences pair with nothing but those reads
 * (engine/free.c's cache_put() and grace__free_flush(), hazptr/hazptr.c's cache_put()), and
 * keep the compiler from moving the store across the call or merging it with the next entry's
 * (the loop's own work between two functions would then count as nested). No CPU order is
 * needed: a signal handler sees its own thread's stores in program order.
 */
static inline void grace__nest_set(uint32_t *nest, uint32_t v)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*nest = v;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* ---- other threads ---- */

static inline void grace__steal_mark(struct grace__retire *rt)
{
	(void)grace_fetch_add(&rt->steal, 1u, __ATOMIC_SEQ_CST);
}

/* Barrier S: after the marks, before the takes. */
static inline void grace__steal_barrier(void)
{
	grace__heavy_barrier();
}

/* Wait until the owner is out of its call. A marked cache's owner finishes its call and takes
 * the slow path at its next one, so the wait is one call long (or the owner's preemption: yield
 * to it). give_up_held: return false at once if the owner holds the cache's lock instead (busy
 * GRACE__BUSY_HELD: a lock-free call is one call long, a locked span may wait for a grace
 * period); else true once busy is 0. */
static inline bool grace__steal_wait_owner(struct grace__retire *rt, bool give_up_held)
{
	for (unsigned int i = 0;; i++) {
		/* seq_cst (acquire): pairs with the owner's release of busy (grace__own_exit(),
		 * the inline append); the Dekker load against its barrier O. */
		uint32_t b = __atomic_load_n(&rt->busy, __ATOMIC_SEQ_CST);
		if (!b)
			return true;
		if (give_up_held && b >= GRACE__BUSY_HELD)
			return false;
		if (i < 128)
			grace_cpu_relax();
		else
			sched_yield();
	}
}

/* Wait for the owner, then take the lock. */
static inline void grace__steal_take(struct grace__retire *rt, uint32_t *lock)
{
	(void)grace__steal_wait_owner(rt, false);
	grace__spin_lock(lock);
}

/* The same, giving up if another stealer or the owner holds the lock. */
static inline bool grace__steal_trytake(struct grace__retire *rt, uint32_t *lock)
{
	return grace__steal_wait_owner(rt, true) && grace__spin_trylock(lock);
}

/* A thread that takes its own cache as a stealer (a barrier's pass over every cache, marked
 * with the others): busy held before the lock, as grace__own_lock(); not the wait for the
 * owner, which is this thread. busy set: the barrier or fork (call) comes from inside a call
 * of this thread on the cache, a signal handler's or a function's that the call runs: reported
 * (grace__own_take_fatal()), where the wait would never end. */
static inline void grace__steal_take_own(struct grace__retire *rt, uint32_t *lock, const char *call,
					 const char *what)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&rt->busy)))
		grace__own_take_fatal(call, what);
	grace__own_hold(rt);
	grace__spin_lock(lock);
}

/* A mark given up without taking the cache: release, as grace__steal_release(), though nothing
 * was touched; the owner's next call sees 0 or the others'. */
static inline void grace__steal_unmark(struct grace__retire *rt)
{
	(void)grace_fetch_sub(&rt->steal, 1u, __ATOMIC_RELEASE);
}

/* Release: what the stealer did happens before the owner's next lock-free call (pairs with the
 * owner's seq_cst load of steal). The count drops first and the lock last: an owner that frees
 * its cache once it holds the lock (thread exit) must find nothing touching the cache after the
 * unlock. The owner's lock-free call does not touch `lock`, so it may start in between. */
static inline void grace__steal_release(struct grace__retire *rt, uint32_t *lock)
{
	grace__steal_unmark(rt);
	grace__spin_unlock(lock);
}

/* Let go of the thread's own cache that grace__steal_take_own() took: busy cleared last. */
static inline void grace__steal_release_own(struct grace__retire *rt, uint32_t *lock)
{
	grace__steal_release(rt, lock);
	grace__own_unhold(rt);
}

#endif /* GRACE_SRC_CORE_OWNSTEAL_H */
