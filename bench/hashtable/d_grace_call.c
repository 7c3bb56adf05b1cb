/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor (membarrier), deferred free by call_rcu(): the updater queues the old
 * element and goes on; the library's callback engine frees it after a grace period that serves
 * many updates at once (LJ Table 3: "line 10 ... is replaced with a call_rcu()").
 */
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el) call_rcu(&(el)->rh, rd_free_cb)
#define RD_THREAD_START(th) ((void)(th))
#define RD_THREAD_STOP(th) ((void)(th))
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() rcu_barrier() /* every queued free has run: nothing leaks into the next run */

#define HB_SYM grace_call
#define HB_NAME "grace-call"
#define HB_LABEL "grace default (call_rcu)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
