/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: the API of one liburcu flavor, urcu_<flavor>_*, as static inline functions over
 * grace. Included once by each <urcu/urcu-FLAVOR.h> (no include guard) with:
 *   GRACE_URCU_FLAVOR_PREFIX   urcu_memb, urcu_mb, urcu_signal, urcu_bp or urcu_qsbr
 *   GRACE_URCU_FLAVOR_ID       its enum grace_urcu_flavor_id
 *   GRACE_URCU_FLAVOR_QSBR     1 for QSBR (grace's QSBR flavor), 0 otherwise (grace's default)
 *   GRACE_URCU_FLAVOR_BP       1 for bp (registration optional and idempotent)
 * Bodies name only grace_* functions and GRACE_URCU__F() names: the unprefixed liburcu names
 * may already be macros of another flavor when this is parsed.
 *
 * Debug builds (GRACE_DEBUG) report, naming the call, the misuse liburcu leaves silent: a QSBR
 * reader that is not registered or is offline, synchronize_rcu() and rcu_quiescent_state()
 * inside a read-side section, unbalanced unlocks (see docs/compat.md).
 */
#define GRACE_URCU__CAT2(a, b) a##b
#define GRACE_URCU__CAT(a, b) GRACE_URCU__CAT2(a, b)
#define GRACE_URCU__F(name) GRACE_URCU__CAT(GRACE_URCU_FLAVOR_PREFIX, _##name)
#define GRACE_URCU__STR2(x) #x
#define GRACE_URCU__STR(x) GRACE_URCU__STR2(x)
/* "rcu_read_lock (urcu_qsbr_read_lock)": both names a program may have used. */
#define GRACE_URCU__CALL(generic, name) \
	generic " (" GRACE_URCU__STR(GRACE_URCU_FLAVOR_PREFIX) "_" #name ")"

GRACE_BEGIN_DECLS

/* ---- read side ---- */

GRACE_INLINE void GRACE_URCU__F(read_lock)(void)
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

GRACE_INLINE void GRACE_URCU__F(read_unlock)(void)
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
GRACE_INLINE int GRACE_URCU__F(read_ongoing)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	return grace_qsbr_thread_is_online();
#else
	return grace_rcu_read_ongoing();
#endif
}

/* QSBR: the thread holds no RCU-protected pointer. Other flavors: nothing to do. */
GRACE_INLINE void GRACE_URCU__F(quiescent_state)(void)
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

GRACE_INLINE void GRACE_URCU__F(thread_offline)(void)
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

GRACE_INLINE void GRACE_URCU__F(thread_online)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	grace_qsbr_thread_online();
#endif
}

/* ---- registration ---- */

/*
 * memb, mb, signal: grace registers a thread on its first read-side section anyway; an
 * explicit registration is kept, per liburcu flavor (registering twice with one flavor is
 * reported, as liburcu asserts; with two flavors is allowed, as liburcu's registries are one
 * per flavor). bp: its
 * registration is optional and idempotent in liburcu: an empty section registers the thread if
 * it is not yet. QSBR: required, as in liburcu.
 */
GRACE_INLINE void GRACE_URCU__F(register_thread)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	grace_urcu__qsbr_register();
#elif GRACE_URCU_FLAVOR_BP
	grace_rcu_read_lock();
	grace_rcu_read_unlock();
#else
	grace_urcu__register(GRACE_URCU_FLAVOR_ID,
			     GRACE_URCU__CALL("rcu_register_thread", register_thread));
#endif
}

GRACE_INLINE void GRACE_URCU__F(unregister_thread)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(GRACE_URCU__CALL("rcu_unregister_thread", unregister_thread),
				   "called inside rcu_read_lock()");
#endif
	grace_urcu__qsbr_unregister();
#elif GRACE_URCU_FLAVOR_BP
	/* liburcu-bp: nothing (the thread is unregistered when it exits). */
#else
	grace_urcu__unregister(GRACE_URCU_FLAVOR_ID);
#endif
}

/* Library set-up and tear-down: grace initialises itself on first use and at exit. */
GRACE_INLINE void GRACE_URCU__F(init)(void) {}
GRACE_INLINE void GRACE_URCU__F(exit)(void) {}

/* liburcu-bp's fork hooks: grace handles fork itself (nothing to do around it). */
GRACE_INLINE void GRACE_URCU__F(before_fork)(void) {}
GRACE_INLINE void GRACE_URCU__F(after_fork_parent)(void) {}
GRACE_INLINE void GRACE_URCU__F(after_fork_child)(void) {}

/* ---- grace periods ---- */

GRACE_INLINE void GRACE_URCU__F(synchronize_rcu)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(
			GRACE_URCU__CALL("synchronize_rcu", synchronize_rcu),
			"called inside rcu_read_lock(): the grace period would free what "
			"this section still uses (liburcu puts the thread offline "
			"silently)");
#endif
	grace_qsbr_synchronize();
#else
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_rcu_read_ongoing()))
		grace_urcu__misuse(GRACE_URCU__CALL("synchronize_rcu", synchronize_rcu),
				   "called inside rcu_read_lock(): it would wait for this thread's "
				   "own section (deadlock)");
#endif
	grace_rcu_synchronize();
#endif
}

/* Polled grace periods (liburcu 0.14+): a cookie, and whether its grace period completed. */
GRACE_INLINE struct urcu_gp_poll_state GRACE_URCU__F(start_poll_synchronize_rcu)(void)
{
	struct urcu_gp_poll_state s;
#if GRACE_URCU_FLAVOR_QSBR
	s.grace_period_id = grace_qsbr_start_poll();
#else
	s.grace_period_id = grace_rcu_start_poll();
#endif
	return s;
}

GRACE_INLINE bool GRACE_URCU__F(poll_state_synchronize_rcu)(struct urcu_gp_poll_state state)
{
#if GRACE_URCU_FLAVOR_QSBR
	return grace_qsbr_poll_state(state.grace_period_id);
#else
	return grace_rcu_poll_state(state.grace_period_id);
#endif
}

/* ---- callbacks ---- */

/* func(head) after a grace period, on grace's per-CPU callback workers. */
GRACE_INLINE void GRACE_URCU__F(call_rcu)(struct rcu_head *head,
					  void (*func)(struct rcu_head *head))
{
#if GRACE_URCU_FLAVOR_QSBR
	grace_qsbr_call(head, func);
#else
	grace_rcu_call(head, func);
#endif
}

/* Wait for every callback queued before the call (an online QSBR caller goes offline meanwhile). */
GRACE_INLINE void GRACE_URCU__F(barrier)(void)
{
#if GRACE_URCU_FLAVOR_QSBR
	grace_qsbr_barrier();
#else
	grace_rcu_barrier();
#endif
}

GRACE_INLINE struct call_rcu_data *GRACE_URCU__F(create_call_rcu_data)(unsigned long flags,
								       int cpu_affinity)
{
	return grace_urcu_create_call_rcu_data(GRACE_URCU_FLAVOR_ID, flags, cpu_affinity);
}
GRACE_INLINE void GRACE_URCU__F(call_rcu_data_free)(struct call_rcu_data *crdp)
{
	grace_urcu_call_rcu_data_free(GRACE_URCU_FLAVOR_ID, crdp);
}
GRACE_INLINE struct call_rcu_data *GRACE_URCU__F(get_default_call_rcu_data)(void)
{
	return grace_urcu_get_default_call_rcu_data(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE struct call_rcu_data *GRACE_URCU__F(get_cpu_call_rcu_data)(int cpu)
{
	return grace_urcu_get_cpu_call_rcu_data(GRACE_URCU_FLAVOR_ID, cpu);
}
GRACE_INLINE struct call_rcu_data *GRACE_URCU__F(get_thread_call_rcu_data)(void)
{
	return grace_urcu_get_thread_call_rcu_data(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE struct call_rcu_data *GRACE_URCU__F(get_call_rcu_data)(void)
{
	return grace_urcu_get_call_rcu_data(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE pthread_t GRACE_URCU__F(get_call_rcu_thread)(struct call_rcu_data *crdp)
{
	return grace_urcu_get_call_rcu_thread(crdp);
}
GRACE_INLINE void GRACE_URCU__F(set_thread_call_rcu_data)(struct call_rcu_data *crdp)
{
	grace_urcu_set_thread_call_rcu_data(GRACE_URCU_FLAVOR_ID, crdp);
}
GRACE_INLINE int GRACE_URCU__F(set_cpu_call_rcu_data)(int cpu, struct call_rcu_data *crdp)
{
	return grace_urcu_set_cpu_call_rcu_data(GRACE_URCU_FLAVOR_ID, cpu, crdp);
}
GRACE_INLINE int GRACE_URCU__F(create_all_cpu_call_rcu_data)(unsigned long flags)
{
	return grace_urcu_create_all_cpu_call_rcu_data(GRACE_URCU_FLAVOR_ID, flags);
}
GRACE_INLINE void GRACE_URCU__F(free_all_cpu_call_rcu_data)(void)
{
	grace_urcu_free_all_cpu_call_rcu_data(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(call_rcu_before_fork)(void)
{
	grace_urcu_call_rcu_before_fork(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(call_rcu_after_fork_parent)(void)
{
	grace_urcu_call_rcu_after_fork_parent(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(call_rcu_after_fork_child)(void)
{
	grace_urcu_call_rcu_after_fork_child(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(register_rculfhash_atfork)(struct urcu_atfork *atfork)
{
	grace_urcu_register_rculfhash_atfork(GRACE_URCU_FLAVOR_ID, atfork);
}
GRACE_INLINE void GRACE_URCU__F(unregister_rculfhash_atfork)(struct urcu_atfork *atfork)
{
	grace_urcu_unregister_rculfhash_atfork(GRACE_URCU_FLAVOR_ID, atfork);
}

/* ---- defer_rcu ---- */

GRACE_INLINE void GRACE_URCU__F(defer_rcu)(void (*fct)(void *p), void *p)
{
	grace_urcu_defer_rcu(GRACE_URCU_FLAVOR_ID, fct, p);
}
GRACE_INLINE int GRACE_URCU__F(defer_register_thread)(void)
{
	return grace_urcu_defer_register_thread(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(defer_unregister_thread)(void)
{
	grace_urcu_defer_unregister_thread(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(defer_barrier)(void)
{
	grace_urcu_defer_barrier(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(defer_barrier_thread)(void)
{
	grace_urcu_defer_barrier_thread(GRACE_URCU_FLAVOR_ID);
}
GRACE_INLINE void GRACE_URCU__F(defer_exit)(void) {}

GRACE_END_DECLS

#undef GRACE_URCU__CALL
#undef GRACE_URCU__STR
#undef GRACE_URCU__STR2
#undef GRACE_URCU__F
#undef GRACE_URCU__CAT
#undef GRACE_URCU__CAT2
