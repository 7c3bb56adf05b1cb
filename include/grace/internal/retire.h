/* SPDX-License-Identifier: MIT */
/*
 * The inline retire (rcu_retire(), qsbr_retire() and their _fn forms): the fast path and the
 * per-thread state it reads. Not a public API: include <grace/rcu.h> or <grace/qsbr.h>. The
 * layout is part of the ABI (inline code of programs reads it), as struct grace__reader's is
 * (docs/abi.md).
 *
 * A retired pointer goes into the block that the calling thread's cache is filling (src/engine/
 * free.c), where free_rcu() puts its pointers too. The fast path appends it with plain stores,
 * no call and no atomic read-modify-write, while the cache lets it (n + k <= lim); the library
 * sets lim a few slots past n at each slow call, so that every few calls, and whenever the
 * block fills or another thread wants the cache, the slow path runs instead: it seals the block
 * with a grace-period cookie and frees the pointers whose grace period has ended, on this
 * thread, a few per call.
 *
 * Who else touches the state: another thread that takes the cache (the monitor of an idle
 * thread, a barrier, fork, process exit) increments `steal`, runs membarrier and waits until
 * `busy` is 0 (src/core/ownsteal.h: an asymmetric Dekker pair, as the default
 * flavor's readers). So the owner's fast path stores busy, then (compiler barrier: the
 * stealer's membarrier is the other half) loads steal, and appends only if no one steals and
 * no call of its own on the cache was under way (a signal handler's append inside the thread's
 * own: the slow path reports it).
 * Without membarrier the library leaves lim at 0, and every call takes the slow path; so do
 * TSan builds and debug builds of the program (which check, with a debug library, that a
 * pointer is not retired twice).
 */
#ifndef GRACE_INTERNAL_RETIRE_H
#define GRACE_INTERNAL_RETIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include <grace/compiler.h>

GRACE_BEGIN_DECLS

/* The head of a per-thread cache of engine/free.c, on the cache's own line. */
struct grace__retire {
	uint32_t busy;  /* the owner is in a call on the cache, without its lock */
	uint32_t steal; /* threads taking the cache: the owner takes the slow path */
	uint32_t n;     /* slots used in the block being filled */
	/* The fast path appends while n + k <= lim (0: every call is slow). The library stores n
	 * and lim with relaxed atomic stores (engine/fcache.h, cur_close()): the owner and a taker
	 * are ordered by busy/steal, but the monitor (n) and tests (both) look from outside. */
	uint32_t lim;
	void **slot; /* that block's slots */
};

/* The calling thread's cache of the default flavor and of QSBR (NULL until its first call of
 * free_rcu(), rcu_retire(), ..., and again once its exit began). */
GRACE_API extern __thread struct grace__retire *grace__memb_retire GRACE_TLS_IE;
GRACE_API extern __thread struct grace__retire *grace__qsbr_retire GRACE_TLS_IE;
/* Out of line: the rest (fn NULL: free with the flavor's free function). */
GRACE_API void grace__memb_retire_slow(void (*fn)(void *), void *ptr);
GRACE_API void grace__qsbr_retire_slow(void (*fn)(void *), void *ptr);

/* grace-urcu's defer_rcu() (compat/src/defer.c) on the same caches, of a deferred kind whose
 * entries run on a callback of the domain, never on the thread that deferred
 * (src/engine/defer.c). dom: 0 the default flavor's domain, 1 QSBR's. The TLS pointers are the
 * caches' heads as grace__retire_fast() appends to them (NULL until the thread's first
 * deferral); the rest is out of line. */
GRACE_API extern __thread struct grace__retire *grace__memb_defer GRACE_TLS_IE;
GRACE_API extern __thread struct grace__retire *grace__qsbr_defer GRACE_TLS_IE;
/* Append (fn, p) past the fast path: false, no memory (nothing queued). */
GRACE_API bool grace__defer_slow(int dom, void (*fn)(void *), void *p);
/* Create the calling thread's deferred cache of dom: 0, or -ENOMEM. */
GRACE_API int grace__defer_register(int dom);
/* Run the calling thread's deferrals (on the caller) and give its cache up. */
GRACE_API void grace__defer_unregister(int dom);
/* Wait until every deferral of dom (self: of the calling thread) made before the call has run. */
GRACE_API void grace__defer_barrier(int dom, bool self);
/* Is the calling thread running deferred functions? */
GRACE_API bool grace__defer_running(void);
/* 1 where the library has no membarrier: defer_rcu()'s inline append then takes the full
 * barrier of grace__retire_fast_as() (set before a thread's first deferred cache opens). */
GRACE_API extern uint32_t grace__defer_fenced;

/* The mark of a slot that starts a function entry: FN_MARK, the function, its argument. No
 * object lies at address 1. */
#define GRACE__RETIRE_FN_MARK ((void *)1)

/* Append ptr (fn NULL) or the entry (fn, ptr) to t's block: false if the slow path must run.
 * fenced: the library has no membarrier (grace__defer_fenced), so barrier O is a full one. */
GRACE_INLINE bool grace__retire_fast_as(struct grace__retire *t, void (*fn)(void *), void *ptr,
					bool fenced)
{
#if !GRACE__DEBUG && !GRACE__TSAN_MODE
	bool done = false;
	uint32_t was;

	if (GRACE_UNLIKELY(t == NULL))
		return false;
	/* Non-zero while the owner is in a call: a retire made by a function that call runs (a
	 * deleter) nests, and must leave busy as it found it. */
	if (GRACE_UNLIKELY(fenced)) {
		/* Barrier O without membarrier: the seq_cst increment is a full barrier between
		 * the store of busy and the load of steal; pairs with the stealer's seq_cst
		 * increment of steal and its full fence (barrier S, core/ownsteal.h). */
		was = grace_fetch_add(&t->busy, 1u, __ATOMIC_SEQ_CST);
	} else {
		was = grace_load_relaxed(&t->busy);
		grace_store_relaxed(&t->busy, was + 1u);
		/* Barrier O of engine/free.c: compiler only; pairs with the stealer's
		 * membarrier (barrier S), which orders its increment of steal before its load
		 * of busy. */
		grace_barrier();
	}
	/* seq_cst: the Dekker load (plain on x86-64, ldar on arm64); it also acquires what a
	 * finished stealer did (its release decrement of steal). was != 0: a call of this thread
	 * on the cache is under way, and the slow path takes over: a deleter that call runs nests
	 * there (put_nested(), engine/free.c; the call closed the window anyway), and a signal
	 * handler that interrupted the call, even this very append, is reported there
	 * (grace__own_enter(), src/core/ownsteal.h), never appends beside it. */
	if (GRACE_LIKELY((__atomic_load_n(&t->steal, __ATOMIC_SEQ_CST) | was) == 0)) {
		uint32_t n = t->n; /* only the owner stores it while steal is 0 */
		if (fn == NULL) {
			if (GRACE_LIKELY(n < t->lim)) {
				t->slot[n] = ptr;
				/* relaxed: the monitor's look at n (engine/free.c, activity()) */
				grace_store_relaxed(&t->n, n + 1);
				done = true;
			}
		} else if (GRACE_LIKELY(n + 3 <= t->lim)) {
			t->slot[n] = GRACE__RETIRE_FN_MARK;
			t->slot[n + 1] = (void *)(uintptr_t)fn;
			t->slot[n + 2] = ptr;
			grace_store_relaxed(&t->n, n + 3);
			done = true;
		}
	}
	/* Release: the appends happen before a stealer's accesses (pairs with its acquire load
	 * of busy). */
	grace_store_release(&t->busy, was);
	return done;
#else
	(void)t;
	(void)fn;
	(void)ptr;
	(void)fenced;
	return false;
#endif
}

/* rcu_retire()'s inline append: the library opens it only with membarrier. */
GRACE_INLINE bool grace__retire_fast(struct grace__retire *t, void (*fn)(void *), void *ptr)
{
	return grace__retire_fast_as(t, fn, ptr, false);
}

GRACE_END_DECLS

#endif
