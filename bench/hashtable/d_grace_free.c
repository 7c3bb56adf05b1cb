/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor (membarrier), deferred free by free_rcu(): no callback function; the
 * updater's own later free_rcu() calls free the elements whose grace period has ended, a few
 * per call, so each free lands in the allocator's cache of the thread that allocates next
 * (issue 13; engine/free.c). GRACE_FREE_WORKER=1 in the environment makes the library's worker
 * free them instead, which bench/hashtable/free_where.sh compares.
 */
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el) free_rcu(el, rh)
#define RD_THREAD_START(th) ((void)(th))
#define RD_THREAD_STOP(th) ((void)(th))
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() \
	free_rcu_barrier() /* every queued free has run: nothing leaks into the next run */

#define HB_SYM grace_free
#define HB_NAME "grace-free"
#define HB_LABEL "grace default (free_rcu)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
