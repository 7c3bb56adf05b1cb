/* SPDX-License-Identifier: MIT */
/*
 * grace QSBR flavor, deferred free by free_qsbr(): the QSBR read side (empty sections, one
 * quiescent state every HB_BATCH operations) with the updater's own later free_qsbr() calls
 * freeing the elements whose grace period has ended, as d_grace_free.c does for the default
 * flavor (issue 13; engine/free.c).
 */
#include <grace/qsbr.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() qsbr_read_lock()
#define RD_UNLOCK() qsbr_read_unlock()
#define RD_RETIRE(el) free_qsbr(el, rh)
#define RD_THREAD_START(th) qsbr_register_thread()
#define RD_THREAD_STOP(th) qsbr_unregister_thread()
#define RD_BATCH_END(th) qsbr_quiescent_state()
#define RD_SETTLE() \
	free_qsbr_barrier() /* every queued free has run: nothing leaks into the next run */

#define HB_SYM qsbr_free
#define HB_NAME "grace-qsbr-free"
#define HB_LABEL "grace qsbr (free_qsbr)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
