/* SPDX-License-Identifier: MIT */
/*
 * grace srcu flavor (one domain for the table), deferred free by call_srcu(). Readers run an
 * rseq increment of a per-CPU counter at lock and at unlock: no registration, no atomic, no
 * fence; updaters flip the domain's index and wait for the old one to drain.
 */
#include <grace/srcu.h>

DEFINE_STATIC_SRCU(hb_srcu);

#define HB_DEREF(p) srcu_dereference(p, &hb_srcu)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() int rd_idx_ = srcu_read_lock(&hb_srcu)
#define RD_UNLOCK() srcu_read_unlock(&hb_srcu, rd_idx_)
#define RD_RETIRE(el) call_srcu(&hb_srcu, &(el)->rh, rd_free_cb)
#define RD_THREAD_START(th) ((void)(th))
#define RD_THREAD_STOP(th) ((void)(th))
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() srcu_barrier(&hb_srcu)

#define HB_SYM srcu
#define HB_NAME "grace-srcu"
#define HB_LABEL "grace srcu (call_srcu)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
