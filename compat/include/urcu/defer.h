/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/defer.h>: defer_rcu(fct, p) runs fct(p) after a grace period.
 *
 * Implemented on grace's callback engine (one small allocation and call_rcu per deferral,
 * grace_urcu_defer_rcu()); if memory runs out it waits for a grace period and calls fct(p)
 * itself, as liburcu's defer_rcu() does when its queue is full, which is why it must not be
 * called inside a read-side section. rcu_defer_register_thread() is kept (liburcu requires it
 * before defer_rcu(); debug builds report a defer_rcu() from a thread that did not register),
 * rcu_defer_barrier() and rcu_defer_barrier_thread() wait until every deferral queued before
 * them has run.
 */
#ifndef GRACE_URCU_DEFER_H
#define GRACE_URCU_DEFER_H

#include <urcu/grace/base.h>

GRACE_BEGIN_DECLS

GRACE_API void grace_urcu_defer_rcu(int flavor, void (*fct)(void *p), void *p);
GRACE_API int grace_urcu_defer_register_thread(int flavor);
GRACE_API void grace_urcu_defer_unregister_thread(int flavor);
GRACE_API void grace_urcu_defer_barrier(int flavor);

GRACE_END_DECLS

#endif
