/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/urcu-signal.h>: the signal flavor (removed from liburcu in 0.14): served by
 * grace's default flavor, which sends no signals.
 *
 * Declares the flavor-prefixed API (urcu_signal_read_lock(), urcu_signal_synchronize_rcu(),
 * ...). The unprefixed names (rcu_read_lock(), synchronize_rcu(), ...) come with <urcu.h>
 * compiled with -DRCU_SIGNAL, which defines URCU_API_MAP before including this header (liburcu's
 * scheme).
 */
#ifndef GRACE_URCU_URCU_SIGNAL_H
#define GRACE_URCU_URCU_SIGNAL_H

#include <urcu/grace/base.h>
/* As liburcu's flavor headers, in both modes: assert() (with <unistd.h> and <syscall.h>
 * through <urcu/arch.h>). */
#include <assert.h>
#include <urcu/config.h>
#include <urcu/pointer.h>
#include <urcu/urcu-poll.h>
#include <urcu/call-rcu.h>
#include <urcu/defer.h>
#include <urcu/flavor.h>
#include <urcu/grace/link.h>
/* What liburcu's flavor header brings with _LGPL_SOURCE (its inline read side includes them);
 * programs rely on it (struct cds_list_head, poll(), the futex wrappers, urcu_assert()). */
#if GRACE_URCU__LGPL
#include <poll.h>
#include <unistd.h>
#include <urcu/debug.h>
#include <urcu/futex.h>
#include <urcu/list.h>
#include <urcu/tls-compat.h>
#endif

#define GRACE_URCU_FLAVOR_PREFIX urcu_signal
#define GRACE_URCU_FLAVOR_ID GRACE_URCU_SIGNAL
#define GRACE_URCU_FLAVOR_QSBR 0
#define GRACE_URCU_FLAVOR_BP 0
#define GRACE_URCU_FLAVOR_SIGNAL 1
#include <urcu/grace/flavor-api.h>
#undef GRACE_URCU_FLAVOR_SIGNAL
#undef GRACE_URCU_FLAVOR_BP
#undef GRACE_URCU_FLAVOR_QSBR
#undef GRACE_URCU_FLAVOR_ID
#undef GRACE_URCU_FLAVOR_PREFIX

/* _LGPL_SOURCE: the read side inline, as liburcu maps it. */
#if GRACE_URCU__LGPL
#define urcu_signal_read_lock _urcu_signal_read_lock
#define urcu_signal_read_unlock _urcu_signal_read_unlock
#define urcu_signal_read_ongoing _urcu_signal_read_ongoing
#endif

/* The pointer operations under the flavor's names. */
#define urcu_signal_dereference(p) rcu_dereference(p)
#define urcu_signal_cmpxchg_pointer(p, old, new_) rcu_cmpxchg_pointer(p, old, new_)
#define urcu_signal_xchg_pointer(p, v) rcu_xchg_pointer(p, v)
#define urcu_signal_set_pointer(p, v) rcu_set_pointer(p, v)

/* The first generation's names (liburcu <= 0.10: rcu_read_lock_sig(), ...), unless
 * URCU_NO_COMPAT_IDENTIFIERS. The functions among them are also symbols of libgrace-urcu. */
#ifndef URCU_NO_COMPAT_IDENTIFIERS
#define rcu_dereference_sig urcu_signal_dereference
#define rcu_cmpxchg_pointer_sig urcu_signal_cmpxchg_pointer
#define rcu_xchg_pointer_sig urcu_signal_xchg_pointer
#define rcu_set_pointer_sig urcu_signal_set_pointer
#define rcu_sig_before_fork urcu_signal_before_fork
#define rcu_sig_after_fork_parent urcu_signal_after_fork_parent
#define rcu_sig_after_fork_child urcu_signal_after_fork_child
#define rcu_read_lock_sig urcu_signal_read_lock
#define _rcu_read_lock_sig _urcu_signal_read_lock
#define rcu_read_unlock_sig urcu_signal_read_unlock
#define _rcu_read_unlock_sig _urcu_signal_read_unlock
#define rcu_read_ongoing_sig urcu_signal_read_ongoing
#define _rcu_read_ongoing_sig _urcu_signal_read_ongoing
#define rcu_register_thread_sig urcu_signal_register_thread
#define rcu_unregister_thread_sig urcu_signal_unregister_thread
#define rcu_init_sig urcu_signal_init
#define rcu_exit_sig urcu_signal_exit
#define synchronize_rcu_sig urcu_signal_synchronize_rcu
#define get_cpu_call_rcu_data_sig urcu_signal_get_cpu_call_rcu_data
#define get_call_rcu_thread_sig urcu_signal_get_call_rcu_thread
#define create_call_rcu_data_sig urcu_signal_create_call_rcu_data
#define set_cpu_call_rcu_data_sig urcu_signal_set_cpu_call_rcu_data
#define get_default_call_rcu_data_sig urcu_signal_get_default_call_rcu_data
#define get_call_rcu_data_sig urcu_signal_get_call_rcu_data
#define get_thread_call_rcu_data_sig urcu_signal_get_thread_call_rcu_data
#define set_thread_call_rcu_data_sig urcu_signal_set_thread_call_rcu_data
#define create_all_cpu_call_rcu_data_sig urcu_signal_create_all_cpu_call_rcu_data
#define free_all_cpu_call_rcu_data_sig urcu_signal_free_all_cpu_call_rcu_data
#define call_rcu_sig urcu_signal_call_rcu
#define call_rcu_data_free_sig urcu_signal_call_rcu_data_free
#define call_rcu_before_fork_sig urcu_signal_call_rcu_before_fork
#define call_rcu_after_fork_parent_sig urcu_signal_call_rcu_after_fork_parent
#define call_rcu_after_fork_child_sig urcu_signal_call_rcu_after_fork_child
#define rcu_barrier_sig urcu_signal_barrier
#define defer_rcu_sig urcu_signal_defer_rcu
#define rcu_defer_register_thread_sig urcu_signal_defer_register_thread
#define rcu_defer_unregister_thread_sig urcu_signal_defer_unregister_thread
#define rcu_defer_barrier_sig urcu_signal_defer_barrier
#define rcu_defer_barrier_thread_sig urcu_signal_defer_barrier_thread
#define rcu_defer_exit_sig urcu_signal_defer_exit
#define rcu_flavor_sig urcu_signal_flavor
#define urcu_register_rculfhash_atfork_sig urcu_signal_register_rculfhash_atfork
#define urcu_unregister_rculfhash_atfork_sig urcu_signal_unregister_rculfhash_atfork
#endif

#endif /* GRACE_URCU_URCU_SIGNAL_H */

/* <urcu.h> and the other main headers define URCU_API_MAP: the unprefixed names are this
 * flavor's. */
#ifdef URCU_API_MAP
#include <urcu/map/urcu-signal.h>
#endif
