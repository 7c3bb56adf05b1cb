/* SPDX-License-Identifier: MIT */
/*
 * liburcu's functions of one flavor, defined under liburcu's names (urcu_<flavor>_*), and the
 * first generation's names (rcu_read_lock_memb, synchronize_rcu_qsbr, ...) as aliases of them.
 * Included once per flavor by names.c (no include guard) with:
 *   F_PREFIX  urcu_memb, urcu_mb, urcu_signal, urcu_bp or urcu_qsbr
 *   F_SUFFIX  the first generation's suffix: memb, mb, sig, bp, qsbr
 *   F_ID      the enum grace_urcu_flavor_id
 *   F_QSBR, F_BP, F_SIGNAL  1 for that flavor, else 0
 * The bodies are grace's calls: the inline read side of <urcu/grace/flavor-api.h>
 * (_urcu_memb_read_lock() and its like) and libgrace-urcu's grace_urcu_* functions.
 */
#define N_CAT2(a, b) a##b
#define N_CAT(a, b) N_CAT2(a, b)
#define N_STR2(x) #x
#define N_STR(x) N_STR2(x)
#define F(name) N_CAT(F_PREFIX, _##name)
#define FI(name) N_CAT(_, F(name))
/* The first generation's name: OLD(call_rcu) is call_rcu_memb. */
#define OLD(name) N_CAT(name, N_CAT(_, F_SUFFIX))
/* The name the program used, for misuse reports: "synchronize_rcu (urcu_qsbr_synchronize_rcu)". */
#define CALL(generic, name) generic " (" N_STR(F(name)) ")"
/* oldname: another exported name of F(name), the same function. */
#define ALIAS(oldname, name) \
	GRACE_API extern __typeof__(F(name)) oldname __attribute__((alias(N_STR(F(name)))))

/* ---- read side (programs without _LGPL_SOURCE call these) ---- */

void F(read_lock)(void)
{
	FI(read_lock)();
}
void F(read_unlock)(void)
{
	FI(read_unlock)();
}
int F(read_ongoing)(void)
{
	return FI(read_ongoing)();
}
ALIAS(OLD(rcu_read_lock), read_lock);
ALIAS(OLD(rcu_read_unlock), read_unlock);
ALIAS(OLD(rcu_read_ongoing), read_ongoing);

#if F_QSBR
void F(quiescent_state)(void)
{
	FI(quiescent_state)();
}
void F(thread_offline)(void)
{
	FI(thread_offline)();
}
void F(thread_online)(void)
{
	FI(thread_online)();
}
ALIAS(OLD(rcu_quiescent_state), quiescent_state);
ALIAS(OLD(rcu_thread_offline), thread_offline);
ALIAS(OLD(rcu_thread_online), thread_online);
#endif

/* ---- registration, set-up (<urcu/grace/flavor-api.h> says what each flavor does) ---- */

void F(register_thread)(void)
{
#if F_QSBR
	grace_urcu__qsbr_register();
#elif F_BP
	grace_rcu_read_lock();
	grace_rcu_read_unlock();
#else
	grace_urcu__register(F_ID, CALL("rcu_register_thread", register_thread));
#endif
}
ALIAS(OLD(rcu_register_thread), register_thread);

#if !F_BP
void F(unregister_thread)(void)
{
#if F_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(CALL("rcu_unregister_thread", unregister_thread),
				   "called inside rcu_read_lock()");
#endif
	grace_urcu__qsbr_unregister();
#else
	grace_urcu__unregister(F_ID);
#endif
}
ALIAS(OLD(rcu_unregister_thread), unregister_thread);
#endif

#if !F_BP && !F_QSBR
/* grace initialises itself on first use. */
void F(init)(void) {}
ALIAS(OLD(rcu_init), init);
#endif
#if F_QSBR || F_SIGNAL
/* grace cleans up at exit. */
void F(exit)(void) {}
ALIAS(OLD(rcu_exit), exit);
#endif

#if F_BP
/* grace handles fork() itself: nothing to do around it. */
void F(before_fork)(void) {}
void F(after_fork_parent)(void) {}
void F(after_fork_child)(void) {}
GRACE_API extern __typeof__(F(before_fork)) rcu_bp_before_fork
	__attribute__((alias(N_STR(F(before_fork)))));
GRACE_API extern __typeof__(F(after_fork_parent)) rcu_bp_after_fork_parent
	__attribute__((alias(N_STR(F(after_fork_parent)))));
GRACE_API extern __typeof__(F(after_fork_child)) rcu_bp_after_fork_child
	__attribute__((alias(N_STR(F(after_fork_child)))));

/* liburcu-bp's own pointer functions: the same as rcu_*_sym() (names.c). */
void *F(dereference_sym)(void *p)
{
	return rcu_dereference_sym(p);
}
void *F(set_pointer_sym)(void **p, void *v)
{
	return rcu_set_pointer_sym(p, v);
}
void *F(xchg_pointer_sym)(void **p, void *v)
{
	return rcu_xchg_pointer_sym(p, v);
}
void *F(cmpxchg_pointer_sym)(void **p, void *old, void *new_)
{
	return rcu_cmpxchg_pointer_sym(p, old, new_);
}
#endif

/* ---- grace periods ---- */

void F(synchronize_rcu)(void)
{
#if F_QSBR
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_urcu__qsbr_nest != 0))
		grace_urcu__misuse(
			CALL("synchronize_rcu", synchronize_rcu),
			"called inside rcu_read_lock(): the grace period would free what "
			"this section still uses (liburcu puts the thread offline "
			"silently)");
#endif
	grace_qsbr_synchronize();
#else
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(grace_rcu_read_ongoing()))
		grace_urcu__misuse(CALL("synchronize_rcu", synchronize_rcu),
				   "called inside rcu_read_lock(): it would wait for this thread's "
				   "own section (deadlock)");
#endif
	grace_rcu_synchronize();
#endif
}
ALIAS(OLD(synchronize_rcu), synchronize_rcu);

struct urcu_gp_poll_state F(start_poll_synchronize_rcu)(void)
{
	struct urcu_gp_poll_state s;

#if F_QSBR
	s.grace_period_id = grace_qsbr_start_poll();
#else
	s.grace_period_id = grace_rcu_start_poll();
#endif
	return s;
}
bool F(poll_state_synchronize_rcu)(struct urcu_gp_poll_state state)
{
#if F_QSBR
	return grace_qsbr_poll_state(state.grace_period_id);
#else
	return grace_rcu_poll_state(state.grace_period_id);
#endif
}

/* ---- callbacks ---- */

void F(call_rcu)(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
#if F_QSBR
	grace_qsbr_call(head, func);
#else
	grace_rcu_call(head, func);
#endif
}
void F(barrier)(void)
{
#if F_QSBR
	grace_qsbr_barrier();
#else
	grace_rcu_barrier();
#endif
}
struct call_rcu_data *F(create_call_rcu_data)(unsigned long flags, int cpu_affinity)
{
	return grace_urcu_create_call_rcu_data(F_ID, flags, cpu_affinity);
}
void F(call_rcu_data_free)(struct call_rcu_data *crdp)
{
	grace_urcu_call_rcu_data_free(F_ID, crdp);
}
struct call_rcu_data *F(get_default_call_rcu_data)(void)
{
	return grace_urcu_get_default_call_rcu_data(F_ID);
}
struct call_rcu_data *F(get_cpu_call_rcu_data)(int cpu)
{
	return grace_urcu_get_cpu_call_rcu_data(F_ID, cpu);
}
struct call_rcu_data *F(get_thread_call_rcu_data)(void)
{
	return grace_urcu_get_thread_call_rcu_data(F_ID);
}
struct call_rcu_data *F(get_call_rcu_data)(void)
{
	return grace_urcu_get_call_rcu_data(F_ID);
}
pthread_t F(get_call_rcu_thread)(struct call_rcu_data *crdp)
{
	return grace_urcu_get_call_rcu_thread(crdp);
}
void F(set_thread_call_rcu_data)(struct call_rcu_data *crdp)
{
	grace_urcu_set_thread_call_rcu_data(F_ID, crdp);
}
int F(set_cpu_call_rcu_data)(int cpu, struct call_rcu_data *crdp)
{
	return grace_urcu_set_cpu_call_rcu_data(F_ID, cpu, crdp);
}
int F(create_all_cpu_call_rcu_data)(unsigned long flags)
{
	return grace_urcu_create_all_cpu_call_rcu_data(F_ID, flags);
}
void F(free_all_cpu_call_rcu_data)(void)
{
	grace_urcu_free_all_cpu_call_rcu_data(F_ID);
}
void F(call_rcu_before_fork)(void)
{
	grace_urcu_call_rcu_before_fork(F_ID);
}
void F(call_rcu_after_fork_parent)(void)
{
	grace_urcu_call_rcu_after_fork_parent(F_ID);
}
void F(call_rcu_after_fork_child)(void)
{
	grace_urcu_call_rcu_after_fork_child(F_ID);
}
void F(register_rculfhash_atfork)(struct urcu_atfork *atfork)
{
	grace_urcu_register_rculfhash_atfork(F_ID, atfork);
}
void F(unregister_rculfhash_atfork)(struct urcu_atfork *atfork)
{
	grace_urcu_unregister_rculfhash_atfork(F_ID, atfork);
}
ALIAS(OLD(call_rcu), call_rcu);
ALIAS(OLD(rcu_barrier), barrier);
ALIAS(OLD(create_call_rcu_data), create_call_rcu_data);
ALIAS(OLD(call_rcu_data_free), call_rcu_data_free);
ALIAS(OLD(get_default_call_rcu_data), get_default_call_rcu_data);
ALIAS(OLD(get_cpu_call_rcu_data), get_cpu_call_rcu_data);
ALIAS(OLD(get_thread_call_rcu_data), get_thread_call_rcu_data);
ALIAS(OLD(get_call_rcu_data), get_call_rcu_data);
ALIAS(OLD(get_call_rcu_thread), get_call_rcu_thread);
ALIAS(OLD(set_thread_call_rcu_data), set_thread_call_rcu_data);
ALIAS(OLD(set_cpu_call_rcu_data), set_cpu_call_rcu_data);
ALIAS(OLD(create_all_cpu_call_rcu_data), create_all_cpu_call_rcu_data);
ALIAS(OLD(free_all_cpu_call_rcu_data), free_all_cpu_call_rcu_data);
ALIAS(OLD(call_rcu_before_fork), call_rcu_before_fork);
ALIAS(OLD(call_rcu_after_fork_parent), call_rcu_after_fork_parent);
ALIAS(OLD(call_rcu_after_fork_child), call_rcu_after_fork_child);
ALIAS(OLD(urcu_register_rculfhash_atfork), register_rculfhash_atfork);
ALIAS(OLD(urcu_unregister_rculfhash_atfork), unregister_rculfhash_atfork);

/* ---- defer_rcu ---- */

void F(defer_rcu)(void (*fct)(void *p), void *p)
{
	grace_urcu_defer_rcu(F_ID, fct, p);
}
int F(defer_register_thread)(void)
{
	return grace_urcu_defer_register_thread(F_ID);
}
void F(defer_unregister_thread)(void)
{
	grace_urcu_defer_unregister_thread(F_ID);
}
void F(defer_barrier)(void)
{
	grace_urcu_defer_barrier(F_ID);
}
void F(defer_barrier_thread)(void)
{
	grace_urcu_defer_barrier_thread(F_ID);
}
/* Nothing to release: the queues go with their threads. */
void F(defer_exit)(void) {}
ALIAS(OLD(defer_rcu), defer_rcu);
ALIAS(OLD(rcu_defer_register_thread), defer_register_thread);
ALIAS(OLD(rcu_defer_unregister_thread), defer_unregister_thread);
ALIAS(OLD(rcu_defer_barrier), defer_barrier);
ALIAS(OLD(rcu_defer_barrier_thread), defer_barrier_thread);
ALIAS(OLD(rcu_defer_exit), defer_exit);

#undef ALIAS
#undef CALL
#undef OLD
#undef FI
#undef F
#undef N_STR
#undef N_STR2
#undef N_CAT
#undef N_CAT2
