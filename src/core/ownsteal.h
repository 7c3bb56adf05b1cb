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

/* A call of the owner's thread found busy set: it comes from a signal handler that interrupted
 * a call on the same cache. Reports it, naming call and what the cache is, and aborts. */
GRACE_NORETURN void grace__own_busy_fatal(const char *call, const char *what);

/* Enter a call on the owner's cache: true, lock-free; false, holding `lock` (a stealer marked
 * the cache). call names the public call, what the cache, in the debug message. */
static inline bool grace__own_enter(struct grace__retire *rt, uint32_t *lock, const char *call,
				    const char *what)
{
	/* Only a signal handler that interrupted the owner's lock-free call (its inline append
	 * or its out-of-line work) can find busy set: every build reports it, rather than work
	 * on the cache beside that call. A nested call made by a function the call runs (a
	 * deleter) never gets here (put_nested(), engine/free.c). Relaxed: the owner's own word. */
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
	grace_store_release(&rt->busy, 0u); /* a stealer may be waiting for it */
	grace__spin_lock(lock);
	return false;
}

/* Release: the call's accesses happen before a stealer's (pairs with its acquire of busy). */
static inline void grace__own_exit(struct grace__retire *rt, uint32_t *lock, bool fast)
{
	if (GRACE_LIKELY(fast))
		grace_store_release(&rt->busy, 0u);
	else
		grace__spin_unlock(lock);
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
 * to it). */
static inline void grace__steal_wait_owner(struct grace__retire *rt)
{
	/* seq_cst (acquire): pairs with the owner's release of busy; the Dekker load. */
	for (unsigned int i = 0; __atomic_load_n(&rt->busy, __ATOMIC_SEQ_CST); i++) {
		if (i < 128)
			grace_cpu_relax();
		else
			sched_yield();
	}
}

/* Wait for the owner, then take the lock. */
static inline void grace__steal_take(struct grace__retire *rt, uint32_t *lock)
{
	grace__steal_wait_owner(rt);
	grace__spin_lock(lock);
}

/* The same, giving up if another stealer or the owner's slow path holds the lock. */
static inline bool grace__steal_trytake(struct grace__retire *rt, uint32_t *lock)
{
	grace__steal_wait_owner(rt);
	return grace__spin_trylock(lock);
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

#endif /* GRACE_SRC_CORE_OWNSTEAL_H */
