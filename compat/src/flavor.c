/* SPDX-License-Identifier: MIT */
/*
 * The runtime flavor tables (struct rcu_flavor_struct), one object per liburcu flavor, filled
 * with functions that call grace's: memb, mb, signal and bp call the default flavor, qsbr the
 * QSBR flavor. Generic code compares and calls through them (cds_lfht_new_flavor()); the hash
 * table adapter recognises them and uses grace's own flavor operations directly.
 */
#include <pthread.h>

#include "compat.h"

/* ---- the default flavor ---- */

static void d_read_lock(void)
{
	grace_rcu_read_lock();
}
static void d_read_unlock(void)
{
	grace_rcu_read_unlock();
}
static int d_read_ongoing(void)
{
	return grace_rcu_read_ongoing();
}
static void d_nothing(void) {}
static void d_call(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	grace_rcu_call(head, func);
}
static void d_sync(void)
{
	grace_rcu_synchronize();
}
static void d_register(void)
{
	grace_rcu_register_thread();
}
static void d_unregister(void)
{
	grace_rcu_unregister_thread();
}
static void bp_register(void)
{
	/* liburcu-bp: optional and idempotent; a section registers the thread if needed. */
	grace_rcu_read_lock();
	grace_rcu_read_unlock();
}
static void d_barrier(void)
{
	grace_rcu_barrier();
}
static struct urcu_gp_poll_state d_start_poll(void)
{
	struct urcu_gp_poll_state s;

	s.grace_period_id = grace_rcu_start_poll();
	return s;
}
static bool d_poll(struct urcu_gp_poll_state s)
{
	return grace_rcu_poll_state(s.grace_period_id);
}

/* ---- QSBR ---- */

static void q_read_lock(void)
{
	grace_qsbr_read_lock();
}
static void q_read_unlock(void)
{
	grace_qsbr_read_unlock();
}
static int q_read_ongoing(void)
{
	return grace_qsbr_thread_is_online();
}
static void q_qs(void)
{
	grace_qsbr_quiescent_state();
}
static void q_call(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	grace_qsbr_call(head, func);
}
static void q_sync(void)
{
	grace_qsbr_synchronize();
}
static void q_offline(void)
{
	grace_qsbr_thread_offline();
}
static void q_online(void)
{
	grace_qsbr_thread_online();
}
static void q_register(void)
{
	grace_urcu__qsbr_register();
}
static void q_unregister(void)
{
	grace_urcu__qsbr_unregister();
}
static void q_barrier(void)
{
	grace_qsbr_barrier();
}
static struct urcu_gp_poll_state q_start_poll(void)
{
	struct urcu_gp_poll_state s;

	s.grace_period_id = grace_qsbr_start_poll();
	return s;
}
static bool q_poll(struct urcu_gp_poll_state s)
{
	return grace_qsbr_poll_state(s.grace_period_id);
}

/* Per-flavor wrappers: the table's function pointers carry no flavor argument. */
#define FLAVOR_FNS(f, id)                                      \
	static void f##_defer(void (*fct)(void *p), void *p)   \
	{                                                      \
		grace_urcu_defer_rcu(id, fct, p);              \
	}                                                      \
	static void f##_reg_atfork(struct urcu_atfork *a)      \
	{                                                      \
		grace_urcu_register_rculfhash_atfork(id, a);   \
	}                                                      \
	static void f##_unreg_atfork(struct urcu_atfork *a)    \
	{                                                      \
		grace_urcu_unregister_rculfhash_atfork(id, a); \
	}
FLAVOR_FNS(memb, GRACE_URCU_MEMB)
FLAVOR_FNS(mb, GRACE_URCU_MB)
FLAVOR_FNS(signal, GRACE_URCU_SIGNAL)
FLAVOR_FNS(bp, GRACE_URCU_BP)
FLAVOR_FNS(qsbr, GRACE_URCU_QSBR)

#define DEFAULT_FLAVOR(f, reg, unreg)                                                           \
	GRACE_API const struct rcu_flavor_struct urcu_##f##_flavor = {                          \
		d_read_lock,    d_read_unlock,    d_read_ongoing, d_nothing, d_call, d_sync,    \
		f##_defer,      d_nothing,        d_nothing,      reg,       unreg,  d_barrier, \
		f##_reg_atfork, f##_unreg_atfork, d_start_poll,   d_poll,                       \
	}
DEFAULT_FLAVOR(memb, d_register, d_unregister);
DEFAULT_FLAVOR(mb, d_register, d_unregister);
DEFAULT_FLAVOR(signal, d_register, d_unregister);
DEFAULT_FLAVOR(bp, bp_register, d_nothing);

GRACE_API const struct rcu_flavor_struct urcu_qsbr_flavor = {
	q_read_lock,     q_read_unlock,     q_read_ongoing, q_qs,       q_call,       q_sync,
	qsbr_defer,      q_offline,         q_online,       q_register, q_unregister, q_barrier,
	qsbr_reg_atfork, qsbr_unreg_atfork, q_start_poll,   q_poll,
};
