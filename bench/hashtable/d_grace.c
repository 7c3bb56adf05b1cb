/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor (membarrier), deferred free by synchronize_rcu(): the updater waits for
 * a grace period after every update, then frees. The simplest way to use RCU; its update cost
 * is a whole grace period.
 */
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el)                 \
	do {                          \
		synchronize_rcu();    \
		hb_el_free(&(el)->e); \
	} while (0)
#define RD_THREAD_START(th) ((void)(th)) /* no registration: the first rcu_read_lock() does it */
#define RD_THREAD_STOP(th) ((void)(th))
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() ((void)0)

#define HB_SYM grace_sync
#define HB_NAME "grace-sync"
#define HB_LABEL "grace default (synchronize_rcu)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
