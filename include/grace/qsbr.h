/* SPDX-License-Identifier: MIT */
/*
 * grace QSBR flavor: quiescent-state-based reclamation. Read-side sections cost nothing (in
 * release builds qsbr_read_lock/unlock compile to no instruction); in exchange every reading
 * thread registers, reports quiescent states regularly (qsbr_quiescent_state(): "I hold no
 * RCU-protected pointer now"), and goes offline around anything that blocks for long.
 *
 * Contract: an online thread that never reports a quiescent state blocks every grace period.
 * grace names such a thread on stderr after the stall timeout (see grace_set_stall_timeout_ms).
 * Offline threads never delay a grace period.
 *
 * Names: exported functions are grace_qsbr_*; the short aliases are qsbr_* and synchronize_qsbr.
 * Algorithm and correctness argument: src/flavor/qsbr.c.
 */
#ifndef GRACE_QSBR_H
#define GRACE_QSBR_H

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

GRACE_API extern __thread struct grace__reader grace__qsbr_reader GRACE_TLS_IE;
/* The QSBR grace-period counter; never 0 (0 means "offline" in a reader's ctr). */
GRACE_API extern struct grace__shared_ctr grace__qsbr_gp_ctr;
GRACE_API void grace__qsbr_qs_slow(void);
GRACE_API GRACE_NORETURN void grace__qsbr_misuse(const char *call, const char *what);

/**
 * grace_qsbr_register_thread() / qsbr_register_thread() - register the calling thread; it is
 * online on return. Registering twice is a misuse (message; abort in debug builds).
 * Context: may block briefly on the registry lock.
 */
GRACE_API void grace_qsbr_register_thread(void);
/** Unregister the calling thread (implies offline). Harmless on an unregistered thread. */
GRACE_API void grace_qsbr_unregister_thread(void);

/**
 * grace_qsbr_quiescent_state() / qsbr_quiescent_state() - report that the calling thread holds
 * no QSBR-protected pointer. Pointers read before the call must not be used after it.
 * Cost: two loads and a store to the thread's own cache line; no fence, no atomic RMW.
 * Calling it while offline or unregistered is a misuse: message naming the call, then abort.
 */
GRACE_INLINE void grace_qsbr_quiescent_state(void)
{
	struct grace__reader *r = &grace__qsbr_reader;
	/* Acquire: accesses after this quiescent state see everything the updater published
	 * before advancing the counter (pairs with the release store of the counter in
	 * qsbr_wait_readers(), src/flavor/qsbr.c). */
	uint64_t g = grace_load_acquire(&grace__qsbr_gp_ctr.v);
	uint64_t c = grace_load_relaxed(&r->ctr);

#if GRACE__DEBUG
	if (GRACE_UNLIKELY(r->dbg_nest))
		grace__qsbr_misuse("qsbr_quiescent_state", "called inside qsbr_read_lock()");
#endif
	/* Already reported for this grace period: nothing to publish, and no updater waits for
	 * this thread (it flags only readers whose ctr differs from the current counter, and
	 * re-reads ctr after barrier W). The next grace period waits for the next store, whose
	 * release covers everything before it. g is never 0, so c == g also means online. */
	if (GRACE_LIKELY(c == g))
		return;
	if (GRACE_UNLIKELY(c == 0))
		grace__qsbr_misuse("qsbr_quiescent_state", "thread is offline or not registered");
	/* Release: every access of the thread before this point is complete before an updater
	 * sees the new counter (pairs with the acquire loads of ctr in the registry's scan,
	 * src/core/registry.c). */
	GRACE__ANN_RELEASE(&r->ctr); /* -DGRACE_VALGRIND only (internal/annotate.h) */
	grace_store_release(&r->ctr, g);
	/* Compiler barrier: the waiter load stays after the store (store->load order: the updater
	 * uses membarrier between setting waiter and re-reading ctr, see src/core/registry.c). */
	grace_barrier();
	if (GRACE_UNLIKELY(grace_load_relaxed(&r->waiter)))
		grace__qsbr_qs_slow();
}

/**
 * grace_qsbr_thread_offline() / qsbr_thread_offline() - the thread stops reading (for example
 * before blocking): it no longer delays grace periods. It must not use QSBR-protected pointers
 * until grace_qsbr_thread_online(). Context: never blocks.
 */
GRACE_API void grace_qsbr_thread_offline(void);
/** grace_qsbr_thread_online() / qsbr_thread_online() - the thread reads again. One fence. */
GRACE_API void grace_qsbr_thread_online(void);
/** Is the calling thread registered and online? */
GRACE_INLINE bool grace_qsbr_thread_is_online(void)
{
	return grace_load_relaxed(&grace__qsbr_reader.ctr) != 0;
}

/**
 * grace_qsbr_read_lock() / qsbr_read_lock(), grace_qsbr_read_unlock() / qsbr_read_unlock():
 * mark a read-side section. In release builds they compile to nothing: an online thread is
 * always a reader between quiescent states. Debug builds check that the thread is online and
 * that no quiescent state is reported inside the section.
 */
GRACE_INLINE void grace_qsbr_read_lock(void)
{
#if GRACE__DEBUG
	struct grace__reader *r = &grace__qsbr_reader;
	if (grace_load_relaxed(&r->ctr) == 0)
		grace__qsbr_misuse("qsbr_read_lock", "thread is offline or not registered");
	r->dbg_nest++;
#endif
}
GRACE_INLINE void grace_qsbr_read_unlock(void)
{
#if GRACE__DEBUG
	struct grace__reader *r = &grace__qsbr_reader;
	if (r->dbg_nest == 0)
		grace__qsbr_misuse("qsbr_read_unlock", "unlock without qsbr_read_lock()");
	r->dbg_nest--;
#endif
}

/**
 * grace_qsbr_synchronize() / synchronize_qsbr() - wait until every online thread has reported a
 * quiescent state (or gone offline) after the call. Called from an online registered thread,
 * that thread is put offline for the wait and back online after (its own quiescent state);
 * inside qsbr_read_lock() that is a misuse (debug builds report it).
 * Context: blocks. An online thread that never reports blocks it: see the stall warning.
 */
GRACE_API void grace_qsbr_synchronize(void);

/** synchronize_qsbr() that starts its grace period at once and spins longer before sleeping. */
GRACE_API void grace_qsbr_synchronize_expedited(void);
/** call_rcu() for QSBR: func(head) runs after a QSBR grace period. Same context rules. */
GRACE_API void grace_qsbr_call(struct rcu_head *head, rcu_callback_t func);
/** call_rcu_hurry() for QSBR: the grace period starts without pacing. */
GRACE_API void grace_qsbr_call_hurry(struct rcu_head *head, rcu_callback_t func);
/** rcu_barrier() for QSBR callbacks. An online caller is put offline for the wait. */
GRACE_API void grace_qsbr_barrier(void);
/**
 * grace_qsbr_free() / free_qsbr(ptr, field) - free_rcu() for QSBR: free(ptr) after a QSBR grace
 * period. Same semantics, context rules, bound, misuse reports and cost as free_rcu() (rcu.h);
 * the frees run in the calling thread, a few per later free_qsbr() call. A thread that stops
 * calling reports quiescent states all the same: its cache is handed to the engine.
 */
GRACE_API void grace_qsbr_free(void *ptr, struct rcu_head *head);
#define free_qsbr(ptr, field)                                              \
	do {                                                               \
		__typeof__(ptr) grace__fq_p = (ptr);                       \
		if (grace__fq_p)                                           \
			grace_qsbr_free(grace__fq_p, &grace__fq_p->field); \
	} while (0)
/**
 * grace_qsbr_free_ptr() / free_qsbr_mightsleep(ptr) - free_rcu_mightsleep() for QSBR: no
 * rcu_head; with no memory left it waits for a grace period itself (an online caller is put
 * offline for the wait, as by synchronize_qsbr()). Not inside qsbr_read_lock() nor from a
 * callback (debug builds check it at every call).
 */
GRACE_API void grace_qsbr_free_ptr(void *ptr);
/** grace_qsbr_free_barrier() / free_qsbr_barrier() - free_rcu_barrier() for QSBR. An online
 * caller is put offline for the wait. */
GRACE_API void grace_qsbr_free_barrier(void);
/**
 * grace_qsbr_retire() / qsbr_retire(ptr), grace_qsbr_retire_fn() / qsbr_retire_fn(fn, ptr),
 * grace_qsbr_set_free_hook(fn) - rcu_retire(), rcu_retire_fn() and grace_rcu_set_free_hook()
 * for QSBR (rcu.h): inline, legal online and inside qsbr_read_lock(), where they never wait.
 */
GRACE_INLINE void grace_qsbr_retire(void *ptr)
{
	if (GRACE_UNLIKELY(!grace__retire_fast(grace__qsbr_retire, (void (*)(void *))0, ptr)))
		grace__qsbr_retire_slow((void (*)(void *))0, ptr);
}
GRACE_INLINE void grace_qsbr_retire_fn(void (*fn)(void *), void *ptr)
{
	if (GRACE_UNLIKELY(!grace__retire_fast(grace__qsbr_retire, fn, ptr)))
		grace__qsbr_retire_slow(fn, ptr);
}
GRACE_API int grace_qsbr_set_free_hook(void (*fn)(void *));
/** Polled QSBR grace periods: same semantics as the default flavor's. */
GRACE_API unsigned long grace_qsbr_get_state(void);
GRACE_API unsigned long grace_qsbr_start_poll(void);
GRACE_API bool grace_qsbr_poll_state(unsigned long cookie);
GRACE_API void grace_qsbr_cond_synchronize(unsigned long cookie);

/** Policy, limits and statistics of the QSBR callback engine: as grace_rcu_set_policy() etc. */
GRACE_API int grace_qsbr_set_policy(enum grace_gp_policy policy, unsigned int period_us);
GRACE_API int grace_qsbr_set_callback_limits(size_t soft, size_t hard);
GRACE_API void grace_qsbr_callback_stats(struct grace_cb_stats *stats);

/* Short names. */
GRACE_INLINE void qsbr_register_thread(void)
{
	grace_qsbr_register_thread();
}
GRACE_INLINE void qsbr_unregister_thread(void)
{
	grace_qsbr_unregister_thread();
}
GRACE_INLINE void qsbr_quiescent_state(void)
{
	grace_qsbr_quiescent_state();
}
GRACE_INLINE void qsbr_thread_offline(void)
{
	grace_qsbr_thread_offline();
}
GRACE_INLINE void qsbr_thread_online(void)
{
	grace_qsbr_thread_online();
}
GRACE_INLINE void qsbr_read_lock(void)
{
	grace_qsbr_read_lock();
}
GRACE_INLINE void qsbr_read_unlock(void)
{
	grace_qsbr_read_unlock();
}
GRACE_INLINE void synchronize_qsbr(void)
{
	grace_qsbr_synchronize();
}
GRACE_INLINE void synchronize_qsbr_expedited(void)
{
	grace_qsbr_synchronize_expedited();
}
GRACE_INLINE void call_qsbr_hurry(struct rcu_head *head, rcu_callback_t func)
{
	grace_qsbr_call_hurry(head, func);
}
GRACE_INLINE void call_qsbr(struct rcu_head *head, rcu_callback_t func)
{
	grace_qsbr_call(head, func);
}
GRACE_INLINE void qsbr_barrier(void)
{
	grace_qsbr_barrier();
}
GRACE_INLINE void free_qsbr_mightsleep(void *ptr)
{
	grace_qsbr_free_ptr(ptr);
}
GRACE_INLINE void free_qsbr_barrier(void)
{
	grace_qsbr_free_barrier();
}
GRACE_INLINE void qsbr_retire(void *ptr)
{
	grace_qsbr_retire(ptr);
}
GRACE_INLINE void qsbr_retire_fn(void (*fn)(void *), void *ptr)
{
	grace_qsbr_retire_fn(fn, ptr);
}
GRACE_INLINE unsigned long get_state_synchronize_qsbr(void)
{
	return grace_qsbr_get_state();
}
GRACE_INLINE unsigned long start_poll_synchronize_qsbr(void)
{
	return grace_qsbr_start_poll();
}
GRACE_INLINE bool poll_state_synchronize_qsbr(unsigned long c)
{
	return grace_qsbr_poll_state(c);
}
GRACE_INLINE void cond_synchronize_qsbr(unsigned long c)
{
	grace_qsbr_cond_synchronize(c);
}

GRACE_END_DECLS

#endif /* GRACE_QSBR_H */
