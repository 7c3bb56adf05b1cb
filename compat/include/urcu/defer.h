/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/defer.h>: defer_rcu(fct, p) runs fct(p) after a grace period.
 *
 * Each thread queues its deferrals in blocks of its own (a few plain stores per call, no lock,
 * no atomic read-modify-write); a callback of the flavor runs a thread's queue after a grace
 * period, once per grace period for everything queued since, on grace's callback workers. When
 * a thread has 16320 deferrals pending (checked per block of 168) it waits for a grace period, as liburcu's defer_rcu()
 * does when its queue is full, which is why it must not be called inside a read-side section,
 * then (at most 100 ms without progress) for the callback to run them. rcu_defer_register_thread() is kept (liburcu requires it before
 * defer_rcu(); debug builds report a defer_rcu() from a thread that did not register), and
 * rcu_defer_unregister_thread() runs the thread's deferrals, as liburcu's does. A thread that
 * exits without unregistering leaves its queue to the callbacks, which free it when it is empty.
 * rcu_defer_barrier() waits until every deferral queued by any thread before it has run;
 * rcu_defer_barrier_thread() the calling thread's.
 */
#ifndef GRACE_URCU_DEFER_H
#define GRACE_URCU_DEFER_H

#include <urcu/grace/base.h>

GRACE_BEGIN_DECLS

GRACE_API void grace_urcu_defer_rcu(int flavor, void (*fct)(void *p), void *p);
GRACE_API int grace_urcu_defer_register_thread(int flavor);
GRACE_API void grace_urcu_defer_unregister_thread(int flavor);
GRACE_API void grace_urcu_defer_barrier(int flavor);
GRACE_API void grace_urcu_defer_barrier_thread(int flavor);

GRACE_END_DECLS

#endif
