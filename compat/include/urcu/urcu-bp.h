/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/urcu-bp.h>: the bulletproof flavor: no registration needed, as grace's
 * default flavor, which serves it.
 *
 * Declares the flavor-prefixed API (urcu_bp_read_lock(), urcu_bp_synchronize_rcu(), ...). The
 * unprefixed names (rcu_read_lock(), synchronize_rcu(), ...) come with <urcu-bp.h>, which
 * defines URCU_API_MAP before including this header (liburcu's scheme).
 */
#ifndef GRACE_URCU_URCU_BP_H
#define GRACE_URCU_URCU_BP_H

#include <urcu/grace/base.h>
#include <urcu/pointer.h>
#include <urcu/urcu-poll.h>
#include <urcu/call-rcu.h>
#include <urcu/defer.h>
#include <urcu/flavor.h>

#define GRACE_URCU_FLAVOR_PREFIX urcu_bp
#define GRACE_URCU_FLAVOR_ID GRACE_URCU_BP
#define GRACE_URCU_FLAVOR_QSBR 0
#define GRACE_URCU_FLAVOR_BP 1
#include <urcu/grace/flavor-api.h>
#undef GRACE_URCU_FLAVOR_BP
#undef GRACE_URCU_FLAVOR_QSBR
#undef GRACE_URCU_FLAVOR_ID
#undef GRACE_URCU_FLAVOR_PREFIX

/* The flavor's table (struct rcu_flavor_struct) and its pointer helpers. */
#define urcu_bp_flavor grace_urcu_flavor_bp
#define urcu_bp_dereference(p) rcu_dereference(p)
#define urcu_bp_cmpxchg_pointer(p, old, new_) rcu_cmpxchg_pointer(p, old, new_)
#define urcu_bp_xchg_pointer(p, v) rcu_xchg_pointer(p, v)
#define urcu_bp_set_pointer(p, v) rcu_set_pointer(p, v)
/* liburcu's inline (_LGPL_SOURCE) names: the same functions here. */
#define _urcu_bp_read_lock urcu_bp_read_lock
#define _urcu_bp_read_unlock urcu_bp_read_unlock
#define _urcu_bp_read_ongoing urcu_bp_read_ongoing
#define _urcu_bp_quiescent_state urcu_bp_quiescent_state
#define _urcu_bp_thread_offline urcu_bp_thread_offline
#define _urcu_bp_thread_online urcu_bp_thread_online

/* The first generation's names (rcu_read_lock_bp(), ...), unless URCU_NO_COMPAT_IDENTIFIERS. */
#ifndef URCU_NO_COMPAT_IDENTIFIERS
#define rcu_dereference_bp urcu_bp_dereference
#define rcu_cmpxchg_pointer_bp urcu_bp_cmpxchg_pointer
#define rcu_xchg_pointer_bp urcu_bp_xchg_pointer
#define rcu_set_pointer_bp urcu_bp_set_pointer
#define rcu_bp_before_fork urcu_bp_before_fork
#define rcu_bp_after_fork_parent urcu_bp_after_fork_parent
#define rcu_bp_after_fork_child urcu_bp_after_fork_child
#define rcu_read_lock_bp urcu_bp_read_lock
#define _rcu_read_lock_bp urcu_bp_read_lock
#define rcu_read_unlock_bp urcu_bp_read_unlock
#define _rcu_read_unlock_bp urcu_bp_read_unlock
#define rcu_read_ongoing_bp urcu_bp_read_ongoing
#define _rcu_read_ongoing_bp urcu_bp_read_ongoing
#define rcu_register_thread_bp urcu_bp_register_thread
#define rcu_unregister_thread_bp urcu_bp_unregister_thread
#define rcu_init_bp urcu_bp_init
#define rcu_exit_bp urcu_bp_exit
#define synchronize_rcu_bp urcu_bp_synchronize_rcu
#define get_cpu_call_rcu_data_bp urcu_bp_get_cpu_call_rcu_data
#define get_call_rcu_thread_bp urcu_bp_get_call_rcu_thread
#define create_call_rcu_data_bp urcu_bp_create_call_rcu_data
#define set_cpu_call_rcu_data_bp urcu_bp_set_cpu_call_rcu_data
#define get_default_call_rcu_data_bp urcu_bp_get_default_call_rcu_data
#define get_call_rcu_data_bp urcu_bp_get_call_rcu_data
#define get_thread_call_rcu_data_bp urcu_bp_get_thread_call_rcu_data
#define set_thread_call_rcu_data_bp urcu_bp_set_thread_call_rcu_data
#define create_all_cpu_call_rcu_data_bp urcu_bp_create_all_cpu_call_rcu_data
#define free_all_cpu_call_rcu_data_bp urcu_bp_free_all_cpu_call_rcu_data
#define call_rcu_bp urcu_bp_call_rcu
#define call_rcu_data_free_bp urcu_bp_call_rcu_data_free
#define call_rcu_before_fork_bp urcu_bp_call_rcu_before_fork
#define call_rcu_after_fork_parent_bp urcu_bp_call_rcu_after_fork_parent
#define call_rcu_after_fork_child_bp urcu_bp_call_rcu_after_fork_child
#define rcu_barrier_bp urcu_bp_barrier
#define defer_rcu_bp urcu_bp_defer_rcu
#define rcu_defer_register_thread_bp urcu_bp_defer_register_thread
#define rcu_defer_unregister_thread_bp urcu_bp_defer_unregister_thread
#define rcu_defer_barrier_bp urcu_bp_defer_barrier
#define rcu_defer_barrier_thread_bp urcu_bp_defer_barrier_thread
#define rcu_defer_exit_bp urcu_bp_defer_exit
#define rcu_flavor_bp urcu_bp_flavor
#define urcu_register_rculfhash_atfork_bp urcu_bp_register_rculfhash_atfork
#define urcu_unregister_rculfhash_atfork_bp urcu_bp_unregister_rculfhash_atfork
#endif

#endif /* GRACE_URCU_URCU_BP_H */

/* <urcu-bp.h> (URCU_API_MAP): the unprefixed names are this flavor's. */
#ifdef URCU_API_MAP
#include <urcu/map/urcu-bp.h>
#endif
