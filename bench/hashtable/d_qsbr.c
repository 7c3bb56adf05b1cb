/* SPDX-License-Identifier: MIT */
/*
 * grace QSBR flavor, deferred free by call_qsbr(). Read-side sections are empty; each thread
 * registers and reports a quiescent state once every HB_BATCH operations (the N of the issue).
 */
#include <grace/qsbr.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() qsbr_read_lock()
#define RD_UNLOCK() qsbr_read_unlock()
#define RD_RETIRE(el) call_qsbr(&(el)->rh, rd_free_cb)
#define RD_THREAD_START(th) qsbr_register_thread()
#define RD_THREAD_STOP(th) qsbr_unregister_thread()
#define RD_BATCH_END(th) qsbr_quiescent_state()
#define RD_SETTLE() qsbr_barrier()

#define HB_SYM qsbr_call
#define HB_NAME "grace-qsbr"
#define HB_LABEL "grace qsbr (call_qsbr)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
