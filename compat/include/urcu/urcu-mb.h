/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/urcu-mb.h>: the memory-barrier flavor: served by grace's default flavor
 * (membarrier on the update side, or full fences where membarrier(2) is missing); readers and
 * grace periods are shared with memb, signal and bp.
 *
 * Declares the flavor-prefixed API (urcu_mb_read_lock(), urcu_mb_synchronize_rcu(), ...). The
 * unprefixed names (rcu_read_lock(), synchronize_rcu(), ...) come with <urcu.h> compiled with
 * -DRCU_MB (or <urcu-mb.h>), which defines URCU_API_MAP before including this header (liburcu's
 * scheme).
 */
#ifndef GRACE_URCU_URCU_MB_H
#define GRACE_URCU_URCU_MB_H

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

#define GRACE_URCU_FLAVOR_PREFIX urcu_mb
#define GRACE_URCU_FLAVOR_ID GRACE_URCU_MB
#define GRACE_URCU_FLAVOR_QSBR 0
#define GRACE_URCU_FLAVOR_BP 0
#define GRACE_URCU_FLAVOR_SIGNAL 0
#include <urcu/grace/flavor-api.h>
#undef GRACE_URCU_FLAVOR_SIGNAL
#undef GRACE_URCU_FLAVOR_BP
#undef GRACE_URCU_FLAVOR_QSBR
#undef GRACE_URCU_FLAVOR_ID
#undef GRACE_URCU_FLAVOR_PREFIX

/* _LGPL_SOURCE: the read side inline, as liburcu maps it. */
#if GRACE_URCU__LGPL
#define urcu_mb_read_lock _urcu_mb_read_lock
#define urcu_mb_read_unlock _urcu_mb_read_unlock
#define urcu_mb_read_ongoing _urcu_mb_read_ongoing
#endif

/* The pointer operations under the flavor's names. */
#define urcu_mb_dereference(p) rcu_dereference(p)
#define urcu_mb_cmpxchg_pointer(p, old, new_) rcu_cmpxchg_pointer(p, old, new_)
#define urcu_mb_xchg_pointer(p, v) rcu_xchg_pointer(p, v)
#define urcu_mb_set_pointer(p, v) rcu_set_pointer(p, v)

/* The first generation's names (liburcu <= 0.10: rcu_read_lock_mb(), ...), unless
 * URCU_NO_COMPAT_IDENTIFIERS. The functions among them are also symbols of libgrace-urcu. */
#ifndef URCU_NO_COMPAT_IDENTIFIERS
#define rcu_dereference_mb urcu_mb_dereference
#define rcu_cmpxchg_pointer_mb urcu_mb_cmpxchg_pointer
#define rcu_xchg_pointer_mb urcu_mb_xchg_pointer
#define rcu_set_pointer_mb urcu_mb_set_pointer
#define rcu_mb_before_fork urcu_mb_before_fork
#define rcu_mb_after_fork_parent urcu_mb_after_fork_parent
#define rcu_mb_after_fork_child urcu_mb_after_fork_child
#define rcu_read_lock_mb urcu_mb_read_lock
#define _rcu_read_lock_mb _urcu_mb_read_lock
#define rcu_read_unlock_mb urcu_mb_read_unlock
#define _rcu_read_unlock_mb _urcu_mb_read_unlock
#define rcu_read_ongoing_mb urcu_mb_read_ongoing
#define _rcu_read_ongoing_mb _urcu_mb_read_ongoing
#define rcu_register_thread_mb urcu_mb_register_thread
#define rcu_unregister_thread_mb urcu_mb_unregister_thread
#define rcu_init_mb urcu_mb_init
#define rcu_exit_mb urcu_mb_exit
#define synchronize_rcu_mb urcu_mb_synchronize_rcu
#define get_cpu_call_rcu_data_mb urcu_mb_get_cpu_call_rcu_data
#define get_call_rcu_thread_mb urcu_mb_get_call_rcu_thread
#define create_call_rcu_data_mb urcu_mb_create_call_rcu_data
#define set_cpu_call_rcu_data_mb urcu_mb_set_cpu_call_rcu_data
#define get_default_call_rcu_data_mb urcu_mb_get_default_call_rcu_data
#define get_call_rcu_data_mb urcu_mb_get_call_rcu_data
#define get_thread_call_rcu_data_mb urcu_mb_get_thread_call_rcu_data
#define set_thread_call_rcu_data_mb urcu_mb_set_thread_call_rcu_data
#define create_all_cpu_call_rcu_data_mb urcu_mb_create_all_cpu_call_rcu_data
#define free_all_cpu_call_rcu_data_mb urcu_mb_free_all_cpu_call_rcu_data
#define call_rcu_mb urcu_mb_call_rcu
#define call_rcu_data_free_mb urcu_mb_call_rcu_data_free
#define call_rcu_before_fork_mb urcu_mb_call_rcu_before_fork
#define call_rcu_after_fork_parent_mb urcu_mb_call_rcu_after_fork_parent
#define call_rcu_after_fork_child_mb urcu_mb_call_rcu_after_fork_child
#define rcu_barrier_mb urcu_mb_barrier
#define defer_rcu_mb urcu_mb_defer_rcu
#define rcu_defer_register_thread_mb urcu_mb_defer_register_thread
#define rcu_defer_unregister_thread_mb urcu_mb_defer_unregister_thread
#define rcu_defer_barrier_mb urcu_mb_defer_barrier
#define rcu_defer_barrier_thread_mb urcu_mb_defer_barrier_thread
#define rcu_defer_exit_mb urcu_mb_defer_exit
#define rcu_flavor_mb urcu_mb_flavor
#define urcu_register_rculfhash_atfork_mb urcu_mb_register_rculfhash_atfork
#define urcu_unregister_rculfhash_atfork_mb urcu_mb_unregister_rculfhash_atfork
#endif

#endif /* GRACE_URCU_URCU_MB_H */

/* <urcu.h> and the other main headers define URCU_API_MAP: the unprefixed names are this
 * flavor's. */
#ifdef URCU_API_MAP
#include <urcu/map/urcu-mb.h>
#endif
