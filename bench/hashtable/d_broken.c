/* SPDX-License-Identifier: MIT */
/*
 * broken-rcu: a deliberately wrong RCU design for the check mode's own test. Readers use the
 * grace default flavor, but an update frees the old element at once, without waiting for a
 * grace period. hashbench-check must catch it (a reader reaches a poisoned element); if it
 * does not, the check mode proves nothing. Built into hashbench-check only, run only by name.
 */
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el) hb_el_free(&(el)->e) /* the bug: no grace period */
#define RD_THREAD_START(th) ((void)(th))
#define RD_THREAD_STOP(th) ((void)(th))
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() ((void)0)

#define HB_SYM broken
#define HB_NAME "broken-rcu"
#define HB_LABEL "broken RCU (frees without a grace period; check-mode self-test)"
#define HB_KIND "rcu"
#define HB_HIDDEN 1
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"
