/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: the API of one liburcu flavor, urcu_<flavor>_*, over grace. Included once by each
 * <urcu/urcu-FLAVOR.h> (no include guard) with:
 *   GRACE_URCU_FLAVOR_PREFIX   urcu_memb, urcu_mb, urcu_signal, urcu_bp or urcu_qsbr
 *   GRACE_URCU_FLAVOR_ID       its enum grace_urcu_flavor_id
 *   GRACE_URCU_FLAVOR_QSBR     1 for QSBR (grace's QSBR flavor), 0 otherwise (grace's default)
 *   GRACE_URCU_FLAVOR_BP       1 for bp (registration optional and idempotent)
 *
 * As liburcu's headers have it:
 *  - _urcu_memb_read_lock() (each flavor's) and the rest of the read side are inline (always
 *    here; liburcu has them with _LGPL_SOURCE only); <urcu/urcu-FLAVOR.h> maps
 *    urcu_<flavor>_read_lock to them when the program defines _LGPL_SOURCE;
 *  - without _LGPL_SOURCE the read side is a function of libgrace-urcu, declared here (QSBR's
 *    read_lock/read_unlock stay inline unless DEBUG_RCU, as liburcu's do);
 *  - every other liburcu function of the flavor is a function of libgrace-urcu in both modes
 *    (registration, grace periods, call_rcu and its handles, defer_rcu, the fork hooks), so a
 *    program may define one of its own (multipath-tools defines rcu_register_thread_memb()),
 *    interpose one, or find one with dlsym(); compat/src/names.c defines them;
 *  - what liburcu keeps static inline in both modes stays so (the no-op quiescent-state calls of
 *    memb, mb, signal and bp; bp's unregister and init).
 * Bodies name only grace_* functions and GRACE_URCU__F() names: the unprefixed liburcu names
 * may already be macros of another flavor when this is parsed.
 *
 * Debug builds (GRACE_DEBUG) report, naming the call, the misuse liburcu leaves silent: a QSBR
 * reader that is not registered or is offline, unbalanced QSBR unlocks, rcu_quiescent_state()
 * inside a read-side section (here, inline); synchronize_rcu() inside one (in the library).
 */
#define GRACE_URCU__CAT2(a, b) a##b
#define GRACE_URCU__CAT(a, b) GRACE_URCU__CAT2(a, b)
#define GRACE_URCU__F(name) GRACE_URCU__CAT(GRACE_URCU_FLAVOR_PREFIX, _##name)
/* liburcu's inline name of a function: _urcu_memb_read_lock. */
#define GRACE_URCU__FI(name) GRACE_URCU__CAT(_, GRACE_URCU__F(name))
#define GRACE_URCU__STR2(x) #x
#define GRACE_URCU__STR(x) GRACE_URCU__STR2(x)
/* "rcu_read_lock (urcu_qsbr_read_lock)": both names a program may have used. */
#define GRACE_URCU__CALL(generic, name) \
	generic " (" GRACE_URCU__STR(GRACE_URCU_FLAVOR_PREFIX) "_" #name ")"

GRACE_BEGIN_DECLS

/* ---- read side: inline ---- */

GRACE_INLINE void GRACE_URCU__FI(read_lock)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(!grace_qsbr_thread_is_online()))
		grace_urcu__qsbr_bad_reader(GRACE_URCU__CALL("rcu_read_lock", read_lock));
	grace_urcu__qsbr_nest++;
#endif
	grace_qsbr_read_lock();
#else
	grace_rcu_read_lock();
#endif
}

GRACE_INLINE void GRACE_URCU__FI(read_unlock)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest == 0))
		grace_urcu__misuse(GRACE_URCU__CALL("rcu_read_unlock", read_unlock),
				   "without a matching rcu_read_lock()");
	grace_urcu__qsbr_nest--;
#endif
	grace_qsbr_read_unlock();
#else
	grace_rcu_read_unlock();
#endif
}

/* Default flavor: inside a section? QSBR: online (liburcu's meaning)? */
GRACE_INLINE int GRACE_URCU__FI(read_ongoing)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	return grace_qsbr_thread_is_online();
#else
	return grace_rcu_read_ongoing();
#endif
}

/* QSBR: the thread holds no RCU-protected pointer. Other flavors: nothing to do. */
GRACE_INLINE void GRACE_URCU__FI(quiescent_state)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(GRACE_URCU__CALL("rcu_quiescent_state", quiescent_state),
				   "called inside rcu_read_lock(): the section's pointers would be "
				   "freed under it");
	if (GRACE_UNLIKELY(!grace_qsbr_thread_is_online()))
		grace_urcu__qsbr_bad_reader(
			GRACE_URCU__CALL("rcu_quiescent_state", quiescent_state));
#endif
	grace_qsbr_quiescent_state();
#endif
}

GRACE_INLINE void GRACE_URCU__FI(thread_offline)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(GRACE_URCU__CALL("rcu_thread_offline", thread_offline),
				   "called inside rcu_read_lock()");
#endif
	grace_qsbr_thread_offline();
#endif
}

GRACE_INLINE void GRACE_URCU__FI(thread_online)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	grace_qsbr_thread_online();
#endif
}

/* ---- read side: functions, without _LGPL_SOURCE ---- */

#if !GRACE_URCU__LGPL
#if GRACE_URCU_FLAVOR_QSBR && !defined(DEBUG_RCU) && !defined(CONFIG_RCU_DEBUG) && \
	!defined(GRACE_URCU__BUILD_LIB)
/* liburcu: QSBR's lock and unlock are inline for every program (they are empty), unless the
 * program asks for the checked ones with DEBUG_RCU. */
GRACE_INLINE void GRACE_URCU__F(read_lock)(void)
{
	GRACE_URCU__FI(read_lock)();
}
GRACE_INLINE void GRACE_URCU__F(read_unlock)(void)
{
	GRACE_URCU__FI(read_unlock)();
}
#else
GRACE_API void GRACE_URCU__F(read_lock)(void);
GRACE_URCU__BIND(GRACE_URCU__F(read_lock));
GRACE_API void GRACE_URCU__F(read_unlock)(void);
GRACE_URCU__BIND(GRACE_URCU__F(read_unlock));
#endif
GRACE_API int GRACE_URCU__F(read_ongoing)(void);
GRACE_URCU__BIND(GRACE_URCU__F(read_ongoing));
#if GRACE_URCU_FLAVOR_QSBR
GRACE_API void GRACE_URCU__F(quiescent_state)(void);
GRACE_URCU__BIND(GRACE_URCU__F(quiescent_state));
GRACE_API void GRACE_URCU__F(thread_offline)(void);
GRACE_URCU__BIND(GRACE_URCU__F(thread_offline));
GRACE_API void GRACE_URCU__F(thread_online)(void);
GRACE_URCU__BIND(GRACE_URCU__F(thread_online));
#endif
#endif /* !GRACE_URCU__LGPL */

/* memb, mb, signal and bp: quiescent states are no-ops, inline in both modes (liburcu's too). */
#if !GRACE_URCU_FLAVOR_QSBR
GRACE_INLINE void GRACE_URCU__F(quiescent_state)(void) {}
GRACE_INLINE void GRACE_URCU__F(thread_offline)(void) {}
GRACE_INLINE void GRACE_URCU__F(thread_online)(void) {}
#endif

/* ---- registration, set-up ---- */

/*
 * memb, mb, signal: grace registers a thread on its first read-side section anyway; an
 * explicit registration is kept, per liburcu flavor (registering twice with one flavor is
 * reported, as liburcu asserts; with two flavors is allowed, as liburcu's registries are one
 * per flavor). bp: optional and idempotent (an empty section registers the thread if it is not
 * yet); unregistering does nothing (the thread is unregistered when it exits). QSBR: required,
 * as in liburcu.
 */
GRACE_API void GRACE_URCU__F(register_thread)(void);
GRACE_URCU__BIND(GRACE_URCU__F(register_thread));
#if GRACE_URCU_FLAVOR_BP
GRACE_INLINE void GRACE_URCU__F(unregister_thread)(void) {}
#else
GRACE_API void GRACE_URCU__F(unregister_thread)(void);
GRACE_URCU__BIND(GRACE_URCU__F(unregister_thread));
#endif

/* Library set-up and tear-down: grace initialises itself on first use and cleans up at exit.
 * Functions where liburcu has them (init: memb, mb, signal; exit: signal, qsbr), inline no-ops
 * where it has none or inline ones. */
#if GRACE_URCU_FLAVOR_BP || GRACE_URCU_FLAVOR_QSBR
GRACE_INLINE void GRACE_URCU__F(init)(void) {}
#else
GRACE_API void GRACE_URCU__F(init)(void);
GRACE_URCU__BIND(GRACE_URCU__F(init));
#endif
#if GRACE_URCU_FLAVOR_QSBR || GRACE_URCU_FLAVOR_SIGNAL
GRACE_API void GRACE_URCU__F(exit)(void);
GRACE_URCU__BIND(GRACE_URCU__F(exit));
#else
GRACE_INLINE void GRACE_URCU__F(exit)(void) {}
#endif

/* Fork hooks of liburcu-bp (functions of the library there, and here); the other flavors have
 * none in liburcu: inline no-ops. grace handles fork itself. */
#if GRACE_URCU_FLAVOR_BP
GRACE_API void GRACE_URCU__F(before_fork)(void);
GRACE_URCU__BIND(GRACE_URCU__F(before_fork));
GRACE_API void GRACE_URCU__F(after_fork_parent)(void);
GRACE_URCU__BIND(GRACE_URCU__F(after_fork_parent));
GRACE_API void GRACE_URCU__F(after_fork_child)(void);
GRACE_URCU__BIND(GRACE_URCU__F(after_fork_child));
#else
GRACE_INLINE void GRACE_URCU__F(before_fork)(void) {}
GRACE_INLINE void GRACE_URCU__F(after_fork_parent)(void) {}
GRACE_INLINE void GRACE_URCU__F(after_fork_child)(void) {}
#endif

/* ---- grace periods ---- */

/* Wait for every read-side section of the flavor that began before the call. Debug builds
 * report a call from inside one (deadlock, or for QSBR a section freed under itself). */
GRACE_API void GRACE_URCU__F(synchronize_rcu)(void);
GRACE_URCU__BIND(GRACE_URCU__F(synchronize_rcu));
/* Polled grace periods (liburcu 0.14+): a cookie, and whether its grace period completed. */
GRACE_API struct urcu_gp_poll_state GRACE_URCU__F(start_poll_synchronize_rcu)(void);
GRACE_URCU__BIND(GRACE_URCU__F(start_poll_synchronize_rcu));
GRACE_API bool GRACE_URCU__F(poll_state_synchronize_rcu)(struct urcu_gp_poll_state state);
GRACE_URCU__BIND(GRACE_URCU__F(poll_state_synchronize_rcu));

/* ---- callbacks (<urcu/call-rcu.h> has what each does) ---- */

GRACE_API void GRACE_URCU__F(call_rcu)(struct rcu_head *head, void (*func)(struct rcu_head *head));
GRACE_URCU__BIND(GRACE_URCU__F(call_rcu));
GRACE_API void GRACE_URCU__F(barrier)(void);
GRACE_URCU__BIND(GRACE_URCU__F(barrier));
GRACE_API struct call_rcu_data *GRACE_URCU__F(create_call_rcu_data)(unsigned long flags,
								    int cpu_affinity);
GRACE_URCU__BIND(GRACE_URCU__F(create_call_rcu_data));
GRACE_API void GRACE_URCU__F(call_rcu_data_free)(struct call_rcu_data *crdp);
GRACE_URCU__BIND(GRACE_URCU__F(call_rcu_data_free));
GRACE_API struct call_rcu_data *GRACE_URCU__F(get_default_call_rcu_data)(void);
GRACE_URCU__BIND(GRACE_URCU__F(get_default_call_rcu_data));
GRACE_API struct call_rcu_data *GRACE_URCU__F(get_cpu_call_rcu_data)(int cpu);
GRACE_URCU__BIND(GRACE_URCU__F(get_cpu_call_rcu_data));
GRACE_API struct call_rcu_data *GRACE_URCU__F(get_thread_call_rcu_data)(void);
GRACE_URCU__BIND(GRACE_URCU__F(get_thread_call_rcu_data));
GRACE_API struct call_rcu_data *GRACE_URCU__F(get_call_rcu_data)(void);
GRACE_URCU__BIND(GRACE_URCU__F(get_call_rcu_data));
GRACE_API pthread_t GRACE_URCU__F(get_call_rcu_thread)(struct call_rcu_data *crdp);
GRACE_URCU__BIND(GRACE_URCU__F(get_call_rcu_thread));
GRACE_API void GRACE_URCU__F(set_thread_call_rcu_data)(struct call_rcu_data *crdp);
GRACE_URCU__BIND(GRACE_URCU__F(set_thread_call_rcu_data));
GRACE_API int GRACE_URCU__F(set_cpu_call_rcu_data)(int cpu, struct call_rcu_data *crdp);
GRACE_URCU__BIND(GRACE_URCU__F(set_cpu_call_rcu_data));
GRACE_API int GRACE_URCU__F(create_all_cpu_call_rcu_data)(unsigned long flags);
GRACE_URCU__BIND(GRACE_URCU__F(create_all_cpu_call_rcu_data));
GRACE_API void GRACE_URCU__F(free_all_cpu_call_rcu_data)(void);
GRACE_URCU__BIND(GRACE_URCU__F(free_all_cpu_call_rcu_data));
GRACE_API void GRACE_URCU__F(call_rcu_before_fork)(void);
GRACE_URCU__BIND(GRACE_URCU__F(call_rcu_before_fork));
GRACE_API void GRACE_URCU__F(call_rcu_after_fork_parent)(void);
GRACE_URCU__BIND(GRACE_URCU__F(call_rcu_after_fork_parent));
GRACE_API void GRACE_URCU__F(call_rcu_after_fork_child)(void);
GRACE_URCU__BIND(GRACE_URCU__F(call_rcu_after_fork_child));
GRACE_API void GRACE_URCU__F(register_rculfhash_atfork)(struct urcu_atfork *atfork);
GRACE_URCU__BIND(GRACE_URCU__F(register_rculfhash_atfork));
GRACE_API void GRACE_URCU__F(unregister_rculfhash_atfork)(struct urcu_atfork *atfork);
GRACE_URCU__BIND(GRACE_URCU__F(unregister_rculfhash_atfork));

/* ---- defer_rcu (<urcu/defer.h> has what each does) ---- */

GRACE_API void GRACE_URCU__F(defer_rcu)(void (*fct)(void *p), void *p);
GRACE_URCU__BIND(GRACE_URCU__F(defer_rcu));
GRACE_API int GRACE_URCU__F(defer_register_thread)(void);
GRACE_URCU__BIND(GRACE_URCU__F(defer_register_thread));
GRACE_API void GRACE_URCU__F(defer_unregister_thread)(void);
GRACE_URCU__BIND(GRACE_URCU__F(defer_unregister_thread));
GRACE_API void GRACE_URCU__F(defer_barrier)(void);
GRACE_URCU__BIND(GRACE_URCU__F(defer_barrier));
GRACE_API void GRACE_URCU__F(defer_barrier_thread)(void);
GRACE_URCU__BIND(GRACE_URCU__F(defer_barrier_thread));
GRACE_API void GRACE_URCU__F(defer_exit)(void);
GRACE_URCU__BIND(GRACE_URCU__F(defer_exit));

/* The flavor's table, urcu_<flavor>_flavor, is declared by <urcu/flavor.h>. */

/* ---- bp's own pointer functions (liburcu-bp exports them; non-LGPL urcu_bp_dereference()
 * and the others call them) ---- */
#if GRACE_URCU_FLAVOR_BP
GRACE_API void *GRACE_URCU__F(dereference_sym)(void *p);
GRACE_URCU__BIND(GRACE_URCU__F(dereference_sym));
GRACE_API void *GRACE_URCU__F(set_pointer_sym)(void **p, void *v);
GRACE_URCU__BIND(GRACE_URCU__F(set_pointer_sym));
GRACE_API void *GRACE_URCU__F(xchg_pointer_sym)(void **p, void *v);
GRACE_URCU__BIND(GRACE_URCU__F(xchg_pointer_sym));
GRACE_API void *GRACE_URCU__F(cmpxchg_pointer_sym)(void **p, void *old, void *new_);
GRACE_URCU__BIND(GRACE_URCU__F(cmpxchg_pointer_sym));
#endif

GRACE_END_DECLS

#undef GRACE_URCU__CALL
#undef GRACE_URCU__STR
#undef GRACE_URCU__STR2
#undef GRACE_URCU__FI
#undef GRACE_URCU__F
#undef GRACE_URCU__CAT
#undef GRACE_URCU__CAT2
