/* SPDX-License-Identifier: MIT */
/* Debug-build bookkeeping shared between flavors (core/debug.c). */
#ifndef GRACE_SRC_DEBUG_H
#define GRACE_SRC_DEBUG_H

#include <grace/compiler.h>

#include "core/diag.h" /* GRACE__LIB_DEBUG */

/* Open read-side sections of flavors other than rcu and qsbr (srcu), counted in debug builds
 * so that grace_debug_in_read_section() sees them. */
extern __thread unsigned int grace__dbg_extra_sections GRACE_TLS_IE;

#if GRACE__LIB_DEBUG
/*
 * Debug libraries: this thread is inside a span of a call that a signal handler's call on the
 * same thread must not interrupt (a debug set's lock, the creation of a cache, a barrier's or a
 * fork's hold on the caches). A span checked before its call takes any lock: a handler's call
 * that enters one while its thread is in one is reported, naming the call, and aborts, instead
 * of waiting for a lock its own thread holds (docs/api.md, rcu_retire() and hazptr_retire(),
 * "Signals"). `what` names what is not async-signal-safe in the message. Not nested: spans
 * end before a call runs an entry's function, which may retire (the owner's own call on its
 * cache keeps none: its busy word reports a handler, core/ownsteal.h). One flag for every module
 * (engine/freeblk.c, hazptr/, src/init.c's fork span).
 */
void grace__dbg_span_enter(const char *call, const char *what);
void grace__dbg_span_leave(void);
#endif

/*
 * Test hook, debug builds only: with GRACE_TEST_PAUSE=<site>:<microseconds>[,<site>:<us>...]
 * in the environment (read once; up to 4 sites), each pass through GRACE__TEST_PAUSE(<site>)
 * sleeps that long. Tests use it to widen a race window that is a few instructions wide
 * otherwise, so that a fault in it shows in milliseconds (docs/torture.md, mutation audit).
 * Sites: "collect" (engine/callback.c, between a worker's harvest of a queue and its look at
 * the queue's barrier requests), "srcu_lock" (flavor/srcu.c, a reader between loading the
 * index and counting itself; debug builds take that path for every srcu_read_lock()),
 * "srcu_balance" (flavor/srcu.c, a balance check between its sum of unlocks and its sum of
 * locks), "defer_disarm" (engine/defer.c, a deferred cache's pass before it takes the
 * cache, and may disarm it), "defer_repost" (engine/defer.c, the pass posting itself again,
 * between clearing in_pass and the post, the cache's lock held), "defer_arm" (engine/defer.c,
 * the owner arming its cache after a call, the cache's lock held, before the post), "rcu_lock" (include/grace/rcu.h, in a program compiled with GRACE_DEBUG:
 * an outermost rcu_read_lock() right before its store, where a preemption is what parking's
 * post-store check of the waiter word is for), "unpark" (flavor/memb.c, a parked thread's
 * hand-back between clearing its PARK bit and pushing itself, with its signals blocked),
 * "advance" (engine/callback.c, a worker that found its callbacks' grace period pending, before
 * it asks the policy whether to sleep), "cache_new" (engine/free.c, a thread's first
 * free_rcu() or retire creating its cache, before it is linked), "flush" (engine/free.c, an
 * rcu_barrier() or free_rcu_barrier() that holds the flavor's caches), "over_limit"
 * (engine/free.c, a call past the per-thread bound, its cache locked), "release_ready"
 * (engine/free.c, a call's frees, before the first entry of a ready block runs), "fork" (src/init.c,
 * the last of the library's fork prepare handlers, every lock of the library taken),
 * "hazptr_barrier" (hazptr/hazptr.c, a barrier holding a thread's retire cache).
 * One entry is a length, not a site: "patience" (engine/callback.c, how long a worker leaves
 * patient callbacks alone, 100 ms otherwise), read with grace__test_pause_us(), so that a test
 * can tell a wait that a push ends from one that merely runs out.
 * Release builds compile the sites to nothing.
 */
/* Exported in every build (a no-op in release builds): grace-urcu and the inline read side of
 * programs compiled with GRACE_DEBUG have sites too; declared by <grace/rcu.h>. */
#include <grace/rcu.h>
#ifdef GRACE_DEBUG
/* Start-up: does GRACE_TEST_PAUSE name "rcu_lock"? (grace__test_pause_on, before any section;
 * the list itself is parsed at the first pass through any site.) */
void grace__test_pause_init(void);
#define GRACE__TEST_PAUSE(site) grace__test_pause(site)
/* The microseconds GRACE_TEST_PAUSE gives site (0: none). */
long grace__test_pause_us(const char *site);
#else
#define GRACE__TEST_PAUSE(site) ((void)0)
#endif

#endif
