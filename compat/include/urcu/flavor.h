/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/flavor.h>: the runtime flavor table. Each flavor's table (rcu_flavor after
 * <urcu.h>, urcu_memb_flavor, urcu_qsbr_flavor, ...) is one object in libgrace-urcu whose
 * functions call grace's: generic code (cds_lfht_new_flavor(), your own) takes a pointer to it.
 * The liburcu 0.14+ polling members are filled in too.
 */
#ifndef GRACE_URCU_FLAVOR_H
#define GRACE_URCU_FLAVOR_H

#include <stdbool.h>
#include <urcu/grace/base.h>
#include <urcu/urcu-poll.h>

GRACE_BEGIN_DECLS

struct urcu_atfork {
	void (*before_fork)(void *priv);
	void (*after_fork_parent)(void *priv);
	void (*after_fork_child)(void *priv);
	void *priv;
};

struct rcu_flavor_struct {
	void (*read_lock)(void);
	void (*read_unlock)(void);
	int (*read_ongoing)(void);
	void (*read_quiescent_state)(void);
	void (*update_call_rcu)(struct rcu_head *head, void (*func)(struct rcu_head *head));
	void (*update_synchronize_rcu)(void);
	void (*update_defer_rcu)(void (*fct)(void *p), void *p);
	void (*thread_offline)(void);
	void (*thread_online)(void);
	void (*register_thread)(void);
	void (*unregister_thread)(void);
	void (*barrier)(void);
	void (*register_rculfhash_atfork)(struct urcu_atfork *atfork);
	void (*unregister_rculfhash_atfork)(struct urcu_atfork *atfork);
	struct urcu_gp_poll_state (*update_start_poll_synchronize_rcu)(void);
	bool (*update_poll_state_synchronize_rcu)(struct urcu_gp_poll_state state);
};

/* The tables, one per liburcu flavor (memb, mb, signal and bp are grace's default flavor). */
GRACE_API extern const struct rcu_flavor_struct urcu_memb_flavor;
GRACE_URCU__BIND(urcu_memb_flavor);
GRACE_API extern const struct rcu_flavor_struct urcu_mb_flavor;
GRACE_URCU__BIND(urcu_mb_flavor);
GRACE_API extern const struct rcu_flavor_struct urcu_signal_flavor;
GRACE_URCU__BIND(urcu_signal_flavor);
GRACE_API extern const struct rcu_flavor_struct urcu_bp_flavor;
GRACE_URCU__BIND(urcu_bp_flavor);
GRACE_API extern const struct rcu_flavor_struct urcu_qsbr_flavor;
GRACE_URCU__BIND(urcu_qsbr_flavor);

/* Hooks run by the flavor's call_rcu_before_fork() and call_rcu_after_fork_*() (one set per
 * flavor, reference-counted, as liburcu keeps them). */
GRACE_API void grace_urcu_register_rculfhash_atfork(int flavor, struct urcu_atfork *atfork);
GRACE_API void grace_urcu_unregister_rculfhash_atfork(int flavor, struct urcu_atfork *atfork);

GRACE_END_DECLS

/* A flavor table of your own, from the unprefixed names of the flavor included (liburcu). */
#define DEFINE_RCU_FLAVOR(x)                      \
	const struct rcu_flavor_struct x = {      \
		rcu_read_lock,                    \
		rcu_read_unlock,                  \
		rcu_read_ongoing,                 \
		rcu_quiescent_state,              \
		call_rcu,                         \
		synchronize_rcu,                  \
		defer_rcu,                        \
		rcu_thread_offline,               \
		rcu_thread_online,                \
		rcu_register_thread,              \
		rcu_unregister_thread,            \
		rcu_barrier,                      \
		urcu_register_rculfhash_atfork,   \
		urcu_unregister_rculfhash_atfork, \
		start_poll_synchronize_rcu,       \
		poll_state_synchronize_rcu,       \
	}

#endif
