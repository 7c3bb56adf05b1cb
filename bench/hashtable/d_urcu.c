/* SPDX-License-Identifier: MIT */
/*
 * The peer: liburcu's memb flavor (Debian's liburcu-dev), as a program uses it by default
 * (without _LGPL_SOURCE): rcu_read_lock, rcu_read_unlock and rcu_dereference are calls into
 * the shared library. Deferred free by call_rcu() (liburcu's default worker thread). Readers
 * must register with liburcu. Its own translation unit: liburcu's struct rcu_head and rcu_*
 * macros clash with grace's. d_urcu_lgpl.c is the same with the read side inlined: it defines
 * _LGPL_SOURCE and the design's names, then includes this file.
 */
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

#ifndef HB_SYM
#define HB_SYM urcu
#define HB_NAME "urcu-memb"
#define HB_LABEL "liburcu memb"
#endif
#define HB_KIND "peer"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
