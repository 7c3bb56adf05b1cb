/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/call-rcu.h>: call_rcu() and its worker control, under liburcu's names.
 *
 * call_rcu(head, func) queues func(head) on grace's callback engine (per-CPU queues, per-CPU
 * workers, bounded backlog): the call_rcu_data functions below keep their liburcu contracts as
 * handles, but every callback runs on grace's workers whichever handle a thread uses. What each
 * one does exactly is listed in docs/compat.md; in short:
 *  create_call_rcu_data(flags, cpu)   a new handle (URCU_CALL_RCU_RT: not supported, NULL with
 *                                     errno ENOTSUP: grace's workers sleep on futexes)
 *  call_rcu_data_free(crdp)           frees a handle (callbacks queued meanwhile still run)
 *  get_default_call_rcu_data()        the default handle (never freed)
 *  get_cpu_call_rcu_data(cpu)         the handle set for a CPU, or NULL
 *  set_cpu_call_rcu_data(cpu, crdp)   0, -EINVAL (CPU out of range), -EEXIST (already set)
 *  create_all_cpu_call_rcu_data(fl)   a handle per CPU: 0, -EINVAL, -ENOMEM, -ENOTSUP (RT)
 *  free_all_cpu_call_rcu_data()       clears and frees the per-CPU handles
 *  get_thread_call_rcu_data(), set_thread_call_rcu_data(crdp)   the calling thread's handle
 *  get_call_rcu_data()                thread's, else this CPU's, else the default handle
 *  get_call_rcu_thread(crdp)          not supported: grace's workers are not addressable;
 *                                     returns 0 with errno ENOTSUP
 *  call_rcu_before_fork(), call_rcu_after_fork_parent(), call_rcu_after_fork_child()
 *                                     run the hooks registered with
 *                                     urcu_register_rculfhash_atfork() and keep the handle
 *                                     tables consistent across fork(); grace handles its own
 *                                     workers across fork (they are restarted in the child)
 *  rcu_barrier()                      waits for every callback queued before the call
 */
#ifndef GRACE_URCU_CALL_RCU_H
#define GRACE_URCU_CALL_RCU_H

#include <urcu/grace/base.h>
/* As liburcu's: assert(), <urcu/compiler.h>, <urcu/arch.h>; with _LGPL_SOURCE also poll() and
 * the atomics (programs rely on these). */
#include <assert.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#if GRACE_URCU__LGPL
#include <poll.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#endif

GRACE_BEGIN_DECLS

struct call_rcu_data;

#define URCU_CALL_RCU_RT (1U << 0)
#define URCU_CALL_RCU_RUNNING (1U << 1)
#define URCU_CALL_RCU_STOP (1U << 2)
#define URCU_CALL_RCU_STOPPED (1U << 3)
#define URCU_CALL_RCU_PAUSE (1U << 4)
#define URCU_CALL_RCU_PAUSED (1U << 5)

/* struct rcu_head is grace's (<grace/pointer.h>): { next, func }. */

GRACE_API struct call_rcu_data *grace_urcu_create_call_rcu_data(int flavor, unsigned long flags,
								int cpu_affinity);
GRACE_API void grace_urcu_call_rcu_data_free(int flavor, struct call_rcu_data *crdp);
GRACE_API struct call_rcu_data *grace_urcu_get_default_call_rcu_data(int flavor);
GRACE_API struct call_rcu_data *grace_urcu_get_cpu_call_rcu_data(int flavor, int cpu);
GRACE_API struct call_rcu_data *grace_urcu_get_thread_call_rcu_data(int flavor);
GRACE_API struct call_rcu_data *grace_urcu_get_call_rcu_data(int flavor);
GRACE_API pthread_t grace_urcu_get_call_rcu_thread(struct call_rcu_data *crdp);
GRACE_API void grace_urcu_set_thread_call_rcu_data(int flavor, struct call_rcu_data *crdp);
GRACE_API int grace_urcu_set_cpu_call_rcu_data(int flavor, int cpu, struct call_rcu_data *crdp);
GRACE_API int grace_urcu_create_all_cpu_call_rcu_data(int flavor, unsigned long flags);
GRACE_API void grace_urcu_free_all_cpu_call_rcu_data(int flavor);
GRACE_API void grace_urcu_call_rcu_before_fork(int flavor);
GRACE_API void grace_urcu_call_rcu_after_fork_parent(int flavor);
GRACE_API void grace_urcu_call_rcu_after_fork_child(int flavor);

GRACE_END_DECLS

#endif
