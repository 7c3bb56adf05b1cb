/* SPDX-License-Identifier: MIT */
/*
 * The peer at its fastest: liburcu's memb flavor (Debian's liburcu-dev) built with
 * _LGPL_SOURCE, so its read side and rcu_dereference are inlined into the loop (what liburcu
 * recommends when speed matters). Deferred free by call_rcu() (liburcu's default worker
 * thread). Readers must register with liburcu. Its own translation unit: liburcu's struct
 * rcu_head and rcu_* macros clash with grace's.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() urcu_memb_read_lock()
#define RD_UNLOCK() urcu_memb_read_unlock()
#define RD_RETIRE(el) urcu_memb_call_rcu(&(el)->rh, rd_free_cb)
#define RD_THREAD_START(th) urcu_memb_register_thread()
#define RD_THREAD_STOP(th) urcu_memb_unregister_thread()
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() urcu_memb_barrier()

#define HB_SYM urcu_lgpl
#define HB_NAME "urcu-memb-lgpl"
#define HB_LABEL "liburcu memb (_LGPL_SOURCE, inlined)"
#define HB_KIND "peer"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
