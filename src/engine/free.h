/* SPDX-License-Identifier: MIT */
/*
 * free_rcu() and its twins, internal interface (engine/free.c): free() after a grace period of
 * a flavor, with no callback function. Written once over the flavor descriptor (core/flavor.h);
 * the exported functions of each flavor (grace_rcu_free, grace_qsbr_free_ptr, grace_srcu_free,
 * ...) are one-line calls of these.
 *
 * Two ways to reach the free (engine/free.c explains the choice and the measurements):
 *  - the calling thread's cache (default flavor and QSBR): pointers go into per-thread blocks
 *    tagged with a grace-period cookie, and the same thread frees a few ready ones at each
 *    later call, so the allocator's thread cache stays warm;
 *  - the callback engine (srcu domains, callbacks, exiting threads, GRACE_FREE_WORKER=1): the
 *    object's rcu_head is queued with, in place of a function, the offset of the head in the
 *    object plus one (1..GRACE__FREE_OFFSET_LIMIT); invoke() in engine/callback.c recognises
 *    such a head with grace__free_is_offset() and calls grace__free_head().
 */
#ifndef GRACE_SRC_FREE_H
#define GRACE_SRC_FREE_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/pointer.h>

struct grace__flavor;

/* The rcu_head of an object given to free_rcu() must lie within its first 4096 bytes: no
 * function lives at an address that low, so an encoded offset never looks like a callback. */
#define GRACE__FREE_OFFSET_LIMIT 4096u

/* Is this "callback function" an encoded free_rcu() offset (see the top of this file)? */
static inline bool grace__free_is_offset(rcu_callback_t func)
{
	return (uintptr_t)func <= GRACE__FREE_OFFSET_LIMIT;
}

/* The engine of f invokes a free_rcu() head: free the object the head lies in. */
void grace__free_head(struct grace__flavor *f, struct rcu_head *head);

/* free_rcu(ptr, field): head is &ptr->field. NULL ptr: nothing. Never blocks in the common
 * case (as call_rcu: it may wait at the per-thread bound, see engine/free.c). */
void grace__free(struct grace__flavor *f, void *ptr, struct rcu_head *head);
/* free_rcu_mightsleep(ptr): no rcu_head; waits for a grace period itself when no memory is
 * left to queue the pointer. */
void grace__free_ptr(struct grace__flavor *f, void *ptr);
/* rcu_retire(ptr) (fn NULL) and rcu_retire_fn(fn, ptr) past the inline fast path, and
 * srcu_retire(): as free_rcu_mightsleep(), but never waits inside a read-side section or a
 * callback, even with no memory left (engine/free.c, ptr_engine()). NULL ptr: nothing. */
void grace__retire(struct grace__flavor *f, void (*fn)(void *), void *ptr);
/* grace_rcu_set_free_hook(): 0, or -EBUSY once an object of f was queued. */
int grace__free_hook(struct grace__flavor *f, void (*fn)(void *));
/* The pass of free_rcu_barrier() and rcu_barrier() over the per-thread caches of f: every
 * entry queued before it is freed or handed to the engine (whose barrier then waits for it).
 * call names the barrier in the report of a call made where the pass would wait for the
 * calling thread's own cache (from an entry's function that the cache's call runs). */
void grace__free_flush(struct grace__flavor *f, const char *call);
/* free_rcu_barrier(): every pointer queued (by any thread) before the call has been freed. */
void grace__free_barrier(struct grace__flavor *f);
/* fork(): called by src/init.c's handlers, prepare after the engine paused its workers. */
void grace__free_atfork_prepare(void);
void grace__free_atfork_parent(void);
void grace__free_atfork_child(void);

/* Test hook (unit tests reach it through the static library): the function that frees an
 * object once its grace period has ended; free() unless a test replaces it before the first
 * free_rcu(). */
extern void (*grace__free_fn)(void *ptr);

#endif
