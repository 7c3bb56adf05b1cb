/* SPDX-License-Identifier: MIT */
/*
 * grace QSBR flavor, deferred free by synchronize_qsbr() (the caller is put offline for the
 * wait). Readers as in d_qsbr.c.
 */
#include <grace/qsbr.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() qsbr_read_lock()
#define RD_UNLOCK() qsbr_read_unlock()
#define RD_RETIRE(el)                 \
	do {                          \
		synchronize_qsbr();   \
		hb_el_free(&(el)->e); \
	} while (0)
#define RD_THREAD_START(th) qsbr_register_thread()
#define RD_THREAD_STOP(th) qsbr_unregister_thread()
#define RD_BATCH_END(th) qsbr_quiescent_state()
#define RD_SETTLE() ((void)0)

#define HB_SYM qsbr_sync
#define HB_NAME "grace-qsbr-sync"
#define HB_LABEL "grace qsbr (synchronize_qsbr)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
